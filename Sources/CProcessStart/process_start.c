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
