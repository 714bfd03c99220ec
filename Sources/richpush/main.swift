import CProcessStart
import RichPushCLI

// Descriptors 0-2 were occupied before the runtime started (CProcessStart); everything else is in
// RichPushCLI: the command table, parsing, help and the exit status.
_ = richpush_standard_descriptors_occupied()
await RichPushCommand.main()
