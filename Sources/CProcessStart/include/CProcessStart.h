#ifndef CPROCESSSTART_H
#define CPROCESSSTART_H

/// How many of descriptors 0, 1 and 2 were found closed and opened on /dev/null before the Swift
/// runtime started (see process_start.c). Calling it also keeps the constructor linked in.
int richpush_standard_descriptors_occupied(void);

/// How many SIGINT or SIGTERM arrived before richpush installed its own handler.
int richpush_early_termination_signals(void);

/// Makes libdispatch's main-queue eventfd now, while descriptors are free, so the main thread's move
/// to dispatch_main cannot trap for want of one later (see process_start.c).
void richpush_prepare_main_queue(void);

#endif
