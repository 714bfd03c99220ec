#ifndef RICHPUSH_CNETRELAY_H
#define RICHPUSH_CNETRELAY_H

#include <stdint.h>

/// One direction of an emulated link: its rate, its delay and how often a segment is lost.
struct cnr_link {
    /// The link's rate in bits per second; 0 leaves the direction unpaced.
    uint64_t bits_per_second;
    /// One-way propagation delay in nanoseconds (half the round trip on a symmetric link).
    uint64_t delay_ns;
    /// Extra delay per segment, uniform in [0, jitter_ns]; segments never overtake each other.
    uint64_t jitter_ns;
    /// Share of segments that are lost, in parts per million.
    uint32_t loss_ppm;
    /// What a lost segment costs: the stall until its retransmission arrives (about one RTO).
    uint64_t stall_ns;
};

/// How a relay shapes every connection it carries.
struct cnr_config {
    /// Upstream (the asset server) to client (the fetch).
    struct cnr_link down;
    /// Client to upstream.
    struct cnr_link up;
    /// The TCP handshake: no client byte leaves before this long after the connection was accepted.
    uint64_t handshake_ns;
    /// Seeds loss and jitter draws; each connection derives its own stream from it and its number.
    uint64_t seed;
    /// The size of one paced segment in bytes; 0 means 1448 (a TCP segment on a 1500-byte MTU).
    uint32_t segment_bytes;
    /// The most buffer memory, in bytes, that all connections together may hold; 0 means no overall cap.
    ///
    /// Bytes wait in chunks of CNR_CHUNK_BYTES. A direction may grow while the relay holds less than the
    /// budget and the direction holds less than its share (the budget divided by the directions that
    /// hold bytes); past that it stops reading its sender (TCP back-pressure) until bytes drain. A
    /// direction may always hold one chunk, whatever the budget, so every connection makes progress:
    /// the relay holds at most the budget or one chunk per direction holding bytes, whichever is larger,
    /// plus the segment records (16 bytes per segment, counted in buffer_bytes). When the budget binds,
    /// a profile's rate may not be reached (a direction carries at most its share per one-way delay).
    uint64_t buffer_budget;
};

/// The unit of buffer memory: a direction holds whole chunks of this many bytes of data.
#define CNR_CHUNK_BYTES 16384

/// Descriptors the relay opens for each relayed connection: the accepted one and the one to the upstream.
#define CNR_DESCRIPTORS_PER_CONNECTION 2

/// Descriptors a running relay holds whatever it carries: its epoll set, wake-up eventfd and timerfd.
#define CNR_FIXED_DESCRIPTORS 3

/// Descriptors each route holds: its listener.
#define CNR_DESCRIPTORS_PER_ROUTE 1

/// Counters a relay keeps; read at any time from any thread.
struct cnr_stats {
    uint64_t accepted;
    uint64_t active;
    uint64_t upstream_failures;
    uint64_t bytes_up;
    uint64_t bytes_down;
    uint64_t lost_segments;
    uint64_t peak_buffer_bytes;
    uint64_t buffer_bytes;
    /// Times a direction stopped reading because the buffer budget was spent (it resumes as bytes drain).
    uint64_t budget_waits;
    /// accept() or socket() calls that failed with EMFILE or ENFILE: the process (or the system) ran out
    /// of descriptors. A failed accept leaves the client waiting in the backlog (accepting pauses and is
    /// retried); a failed socket() for the upstream closes the accepted client at once.
    uint64_t descriptor_failures;
    /// Descriptors the relay holds now: fixed, per route and per connection (see the constants above).
    uint64_t descriptors;
};

struct cnr_relay;

/// Starts a relay: one thread running an epoll loop. Returns 0 or an errno value.
int cnr_relay_start(const struct cnr_config *config, struct cnr_relay **relay);

/// Opens a listener on 127.0.0.1 (port picked by the kernel) whose connections are relayed to
/// host:port (host is resolved here, once). Returns 0, an errno value, or -1 when host does not resolve.
int cnr_relay_add_route(struct cnr_relay *relay, const char *host, uint16_t port, uint16_t *listen_port);

/// Copies the relay's counters.
void cnr_relay_stats(struct cnr_relay *relay, struct cnr_stats *stats);

/// Stops the loop, joins its thread, closes every socket and frees the relay.
void cnr_relay_stop(struct cnr_relay *relay);

#endif
