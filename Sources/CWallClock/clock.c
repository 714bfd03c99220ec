#include "CWallClock.h"

#include <sys/timex.h>
#include <time.h>

int richpush_wall_clock_read(richpush_wall_clock_reading *reading) {
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) {
        return -1;
    }
    reading->seconds = (int64_t)now.tv_sec;
    reading->nanoseconds = (int64_t)now.tv_nsec;
    struct timex state = {0};
    // modes 0: a read of the kernel's state, which changes nothing.
    int result = ntp_adjtime(&state);
    if (result == -1) {
        reading->synchronized = -1;
        reading->max_error_microseconds = -1;
        reading->estimated_error_microseconds = -1;
        return 0;
    }
    reading->synchronized = (result == TIME_ERROR || (state.status & STA_UNSYNC)) ? 0 : 1;
    reading->max_error_microseconds = (int64_t)state.maxerror;
    reading->estimated_error_microseconds = (int64_t)state.esterror;
    return 0;
}
