#ifndef RICHPUSH_CASSETSERVERSHIM_H
#define RICHPUSH_CASSETSERVERSHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <microhttpd.h>

/// How to start one libmicrohttpd daemon (a struct, because MHD_start_daemon is variadic).
struct rp_mhd_config {
    /// IPv4 address to bind, and port (0 picks a free one).
    const char *ipv4;
    uint16_t port;
    MHD_AccessHandlerCallback handler;
    /// Called with the raw request target (before percent-decoding); its result becomes the request's context.
    void *(*uri_logger)(void *context, const char *uri, struct MHD_Connection *connection);
    /// Called once per request when it ends, with the request's context.
    MHD_RequestCompletedCallback completed;
    void *context;
    /// PEM text; TLS when both are given.
    const char *key_pem;
    const char *cert_pem;
    /// GnuTLS priority string for the TLS listener (NULL: libmicrohttpd's default), e.g. to offer only
    /// TLS 1.1 the way an old server would.
    const char *tls_priorities;
    unsigned int connection_limit;
    /// The most connections from one IPv4 address (0: no limit of its own); more are closed on accept.
    unsigned int per_ip_limit;
    /// Called when a connection is accepted and when it is closed (before its socket is closed); NULL: not called.
    MHD_NotifyConnectionCallback notify_connection;
    /// Event-loop threads (epoll each); 1 runs a single loop thread.
    unsigned int threads;
    /// Seconds of inactivity after which a connection is closed.
    unsigned int timeout_seconds;
};

/// Starts a daemon: epoll event loops on a fixed pool of threads, connections suspended (not
/// slept on) while a fault waits. Returns NULL on failure.
struct MHD_Daemon *rp_mhd_start(const struct rp_mhd_config *config);

/// A response holding a copy of `length` bytes.
struct MHD_Response *rp_mhd_response_copy(const void *bytes, size_t length);

/// The port the daemon listens on.
uint16_t rp_mhd_port(struct MHD_Daemon *daemon);

/// The socket of a connection, or -1.
int rp_mhd_connection_fd(struct MHD_Connection *connection);

/// Resets the TCP connection on `fd` now (a RST, not a FIN); the socket is left for its owner to close.
int rp_socket_reset(int fd);

/// Whether the peer of `fd` has closed or reset the connection (poll with no wait).
int rp_socket_peer_gone(int fd);

/// Calls `visit(context, key, value)` for every query argument of the request.
void rp_mhd_query_arguments(struct MHD_Connection *connection,
                            void (*visit)(void *context, const char *key, const char *value), void *context);

/// The first request header named `key` (any case), as received, for the request whose access
/// handler got `method` and `version`: sets `*value` and `*length` and returns 1 when that is the whole
/// value, 0 when the value held a NUL byte (libmicrohttpd ends it there: `*length` stops before the
/// NUL and more bytes followed), and -1 when the request has no such header.
int rp_mhd_header_value(struct MHD_Connection *connection, const char *method, const char *version, const char *key,
                        const char **value, size_t *length);

/// Opens `path` (relative, '/'-separated) for reading strictly beneath the directory `root_fd`,
/// following no symbolic link anywhere: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), or, where
/// the kernel lacks openat2 (or `walk` is nonzero), one openat(O_NOFOLLOW) per component. Never
/// blocks on a FIFO. Returns a descriptor or -1 with errno set.
int rp_open_beneath(int root_fd, const char *path, int walk);

/// A streaming gzip compressor (zlib deflate with a gzip header).
struct rp_deflate;

/// A new compressor, or NULL when zlib cannot allocate one.
struct rp_deflate *rp_deflate_create(int level);

/// Compresses up to `in_length` bytes into `out` (at most `out_capacity`); `finish` says no more
/// input follows. Sets `*consumed` to the input bytes used and `*finished` once the stream's end
/// was written. Returns the output bytes written, or -1 on a zlib error.
ssize_t rp_deflate_step(struct rp_deflate *stream, const uint8_t *in, size_t in_length, int finish, uint8_t *out,
                        size_t out_capacity, size_t *consumed, int *finished);

void rp_deflate_destroy(struct rp_deflate *stream);

// Content-reader results and the unknown size, as values Swift can import (the macros are casts).
static const ssize_t RP_READER_END_OF_STREAM = MHD_CONTENT_READER_END_OF_STREAM;
static const ssize_t RP_READER_END_WITH_ERROR = MHD_CONTENT_READER_END_WITH_ERROR;
static const uint64_t RP_SIZE_UNKNOWN = MHD_SIZE_UNKNOWN;
/// The connection notifications, as plain numbers (Swift does not import the enum's cases).
static const unsigned int RP_CONNECTION_STARTED = MHD_CONNECTION_NOTIFY_STARTED;
static const unsigned int RP_CONNECTION_CLOSED = MHD_CONNECTION_NOTIFY_CLOSED;
/// POLLRDHUP (poll.h defines it only with _GNU_SOURCE): the peer closed its end.
static const short RP_POLLRDHUP = 0x2000;

#endif
