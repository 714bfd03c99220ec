import CProcessStart
import RichPushCLI

// Descriptors 0-2 were occupied and an early Ctrl-C caught before the runtime started (CProcessStart);
// everything else is in RichPushCLI: the command table, parsing, help and the exit status.
_ = richpush_standard_descriptors_occupied()
await RichPushCommand.main()
