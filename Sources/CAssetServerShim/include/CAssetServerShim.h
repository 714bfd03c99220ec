#ifndef RICHPUSH_CASSETSERVERSHIM_H
#define RICHPUSH_CASSETSERVERSHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <microhttpd.h>

/// Starts a libmicrohttpd daemon bound to `ipv4:port` (port 0 picks a free one), with a thread per
/// connection so a handler may sleep to emulate a slow server. TLS when key and certificate are
/// given (PEM text). Returns NULL on failure. (MHD_start_daemon is variadic: Swift cannot call it.)
struct MHD_Daemon *rp_mhd_start(const char *ipv4, uint16_t port, MHD_AccessHandlerCallback handler, void *context,
                                const char *key_pem, const char *cert_pem, unsigned int connection_limit);

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

/// gzip-compresses `input`; returns a malloc'ed buffer (free with rp_free) or NULL.
uint8_t *rp_gzip(const uint8_t *input, size_t length, size_t *out_length);
void rp_free(void *pointer);

// Content-reader results and the unknown size, as values Swift can import (the macros are casts).
static const ssize_t RP_READER_END_OF_STREAM = MHD_CONTENT_READER_END_OF_STREAM;
static const ssize_t RP_READER_END_WITH_ERROR = MHD_CONTENT_READER_END_WITH_ERROR;
static const uint64_t RP_SIZE_UNKNOWN = MHD_SIZE_UNKNOWN;

#endif
