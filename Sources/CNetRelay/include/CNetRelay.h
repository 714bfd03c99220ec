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
};

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
