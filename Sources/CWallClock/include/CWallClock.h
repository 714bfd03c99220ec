#ifndef CWALLCLOCK_H
#define CWALLCLOCK_H

#include <stdint.h>

/// The wall clock and what the kernel knows of its synchronization, read together.
typedef struct {
    /// CLOCK_REALTIME: seconds and nanoseconds since the Unix epoch.
    int64_t seconds;
    int64_t nanoseconds;
    /// 1 when the kernel's NTP state says the clock is synchronized, 0 when it says it is not,
    /// -1 when the state could not be read (ntp_adjtime failed, as under some sandboxes).
    int synchronized;
    /// The kernel's maximum and estimated error of the clock, in microseconds; -1 when unknown.
    int64_t max_error_microseconds;
    int64_t estimated_error_microseconds;
} richpush_wall_clock_reading;

/// Reads CLOCK_REALTIME and, read-only (modes 0, no privilege needed), the kernel's NTP state.
/// Returns 0, or -1 when the clock itself cannot be read.
int richpush_wall_clock_read(richpush_wall_clock_reading *reading);

#endif
