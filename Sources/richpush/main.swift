import CProcessStart
import RichPushCLI

// Descriptors 0-2 were occupied and an early Ctrl-C caught before the runtime started (CProcessStart);
// everything else is in RichPushCLI: the command table, parsing, help and the exit status.
_ = richpush_standard_descriptors_occupied()
// Before the first await: the main queue's eventfd, which libdispatch would otherwise make as the
// main thread leaves for dispatch_main, when a tight descriptor limit may have none left.
richpush_prepare_main_queue()
await richpushMain()
