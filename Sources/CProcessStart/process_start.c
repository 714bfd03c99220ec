// Runs before main and before the Swift runtime opens anything: a descriptor among 0, 1 and 2 that
// the parent left closed is opened on /dev/null, read-only, so the runtime's own descriptors (its
// event fds, the files it reads at start) never take the number of stdout or stderr, and a write
// to a closed stdout fails with EBADF instead of landing in one of them.
//
// It also catches SIGINT and SIGTERM from the first moment: a Ctrl-C that comes before richpush
// installs its own handler is counted here (the handler only counts, which is async-signal-safe)
// instead of killing a process that may already be writing, and richpush's handler takes it over as
// soon as it is installed (richpush_early_termination_signals). Blocking the signals instead would
// not do: threads the runtime's libraries start before this constructor runs keep them unblocked.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "CProcessStart.h"

static int occupied = 0;
static volatile sig_atomic_t early_signals = 0;

static void richpush_count_early_signal(int number) {
    (void)number;
    early_signals = early_signals + 1;
}

__attribute__((constructor)) static void richpush_start_process(void) {
    for (int descriptor = 0; descriptor <= 2; descriptor++) {
        if (fcntl(descriptor, F_GETFD) >= 0 || errno != EBADF) continue;
        int opened = open("/dev/null", O_RDONLY);
        if (opened < 0) continue;
        if (opened != descriptor) {
            dup2(opened, descriptor);
            close(opened);
        }
        occupied++;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = richpush_count_early_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    // A signal the parent set to be ignored (a background job of a non-interactive shell) stays ignored.
    struct sigaction previous;
    if (sigaction(SIGINT, NULL, &previous) == 0 && previous.sa_handler != SIG_IGN) sigaction(SIGINT, &action, NULL);
    if (sigaction(SIGTERM, NULL, &previous) == 0 && previous.sa_handler != SIG_IGN) sigaction(SIGTERM, &action, NULL);
}

int richpush_standard_descriptors_occupied(void) { return occupied; }

int richpush_early_termination_signals(void) { return early_signals; }

// libdispatch makes the main queue's wake-up eventfd the first time it is needed, and one moment it
// is needed is when the main thread leaves for dispatch_main (Swift's async main): if the process
// has no descriptor left then (a tight `ulimit -n`, descriptors a parent leaked), eventfd fails and
// libdispatch traps (SIGILL) instead of richpush saying "too-many-open-files". Made here, at start,
// while descriptors are free; without one free even now, it is left to libdispatch.
extern int _dispatch_get_main_queue_handle_4CF(void);

void richpush_prepare_main_queue(void) {
    int probe = dup(2);
    if (probe < 0) return;
    close(probe);
    (void)_dispatch_get_main_queue_handle_4CF();
}
