// Runs before main and before the Swift runtime opens anything: a descriptor among 0, 1 and 2 that
// the parent left closed is opened on /dev/null, read-only, so the runtime's own descriptors (its
// event fds, the files it reads at start) never take the number of stdout or stderr, and a write
// to a closed stdout fails with EBADF instead of landing in one of them.
//
// It also blocks SIGINT and SIGTERM before any thread exists, so every thread the runtime starts
// inherits the block: a Ctrl-C that comes before richpush installs its handler stays pending
// instead of killing a process that may already be writing, and the handler's watcher thread
// (which unblocks them) takes it as soon as it runs.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "CProcessStart.h"

static int occupied = 0;

__attribute__((constructor)) static void richpush_occupy_standard_descriptors(void) {
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
    sigset_t termination;
    sigemptyset(&termination);
    sigaddset(&termination, SIGINT);
    sigaddset(&termination, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &termination, NULL);
}

int richpush_standard_descriptors_occupied(void) { return occupied; }
