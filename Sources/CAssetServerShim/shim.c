#define _GNU_SOURCE  // POLLRDHUP
#include "CAssetServerShim.h"

#include <arpa/inet.h>
#include <poll.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <zlib.h>

struct MHD_Daemon *rp_mhd_start(const char *ipv4, uint16_t port, MHD_AccessHandlerCallback handler, void *context,
                                const char *key_pem, const char *cert_pem, unsigned int connection_limit) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    if (inet_pton(AF_INET, ipv4, &address.sin_addr) != 1) return NULL;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;
    if (key_pem != NULL && cert_pem != NULL) {
        flags |= MHD_USE_TLS;
        return MHD_start_daemon(flags, port, NULL, NULL, handler, context,
                                MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                                MHD_OPTION_HTTPS_MEM_KEY, key_pem,
                                MHD_OPTION_HTTPS_MEM_CERT, cert_pem,
                                MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096u,
                                MHD_OPTION_CONNECTION_TIMEOUT, 120u,
                                MHD_OPTION_END);
    }
    return MHD_start_daemon(flags, port, NULL, NULL, handler, context,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096u,
                            MHD_OPTION_CONNECTION_TIMEOUT, 120u,
                            MHD_OPTION_END);
}

struct MHD_Response *rp_mhd_response_copy(const void *bytes, size_t length) {
    return MHD_create_response_from_buffer(length, (void *)bytes, MHD_RESPMEM_MUST_COPY);
}

uint16_t rp_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

int rp_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

int rp_socket_reset(int fd) {
    struct linger linger = {1, 0};
    int rc = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, sizeof linger);
    // On Linux, connecting a TCP socket to AF_UNSPEC disconnects it with a reset at once, before
    // libmicrohttpd gets to shut it down gracefully (which would send a FIN instead).
    struct sockaddr unspecified;
    memset(&unspecified, 0, sizeof unspecified);
    unspecified.sa_family = AF_UNSPEC;
    (void)connect(fd, &unspecified, sizeof unspecified);
    return rc;
}

int rp_socket_peer_gone(int fd) {
    if (fd < 0) return 0;
    struct pollfd entry = {fd, POLLRDHUP, 0};
    if (poll(&entry, 1, 0) <= 0) return 0;
    return (entry.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

struct rp_visit {
    void (*visit)(void *, const char *, const char *);
    void *context;
};

static enum MHD_Result rp_visit_argument(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    (void)kind;
    struct rp_visit *visit = (struct rp_visit *)cls;
    visit->visit(visit->context, key, value == NULL ? "" : value);
    return MHD_YES;
}

void rp_mhd_query_arguments(struct MHD_Connection *connection,
                            void (*visit)(void *context, const char *key, const char *value), void *context) {
    struct rp_visit state = {visit, context};
    MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, rp_visit_argument, &state);
}

uint8_t *rp_gzip(const uint8_t *input, size_t length, size_t *out_length) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK) return NULL;
    size_t capacity = deflateBound(&stream, (uLong)length) + 32;
    uint8_t *output = malloc(capacity);
    if (output == NULL) {
        deflateEnd(&stream);
        return NULL;
    }
    stream.next_in = (Bytef *)input;
    stream.avail_in = (uInt)length;
    stream.next_out = output;
    stream.avail_out = (uInt)capacity;
    int rc = deflate(&stream, Z_FINISH);
    *out_length = stream.total_out;
    deflateEnd(&stream);
    if (rc != Z_STREAM_END) {
        free(output);
        return NULL;
    }
    return output;
}

void rp_free(void *pointer) { free(pointer); }
