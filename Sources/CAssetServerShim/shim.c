#define _GNU_SOURCE  // POLLRDHUP
#include "CAssetServerShim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

struct MHD_Daemon *rp_mhd_start(const struct rp_mhd_config *config) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons(config->port);
    if (inet_pton(AF_INET, config->ipv4, &address.sin_addr) != 1) return NULL;
    // Suspend/resume lets a fault wait without holding one of the few loop threads. HTTPS uses poll,
    // not epoll: with libmicrohttpd 0.9.75, epoll spins while TLS handshakes wait for the client
    // (300 fresh HTTPS downloads, 100 at a time: 5.5x the server CPU and a fifth of the rate).
    int tls = config->key_pem != NULL && config->cert_pem != NULL;
    unsigned int flags = (tls ? MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_TLS : MHD_USE_EPOLL_INTERNAL_THREAD) |
                         MHD_ALLOW_SUSPEND_RESUME;
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_SOCK_ADDR, 0, &address},
        {MHD_OPTION_CONNECTION_LIMIT, config->connection_limit, NULL},
        {config->per_ip_limit > 0 ? MHD_OPTION_PER_IP_CONNECTION_LIMIT : MHD_OPTION_END, config->per_ip_limit, NULL},
        {config->notify_connection != NULL ? MHD_OPTION_NOTIFY_CONNECTION : MHD_OPTION_END,
         (intptr_t)config->notify_connection, config->context},
        {MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, config->timeout_seconds, NULL},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)config->uri_logger, config->context},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)config->completed, config->context},
        {config->threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, config->threads, NULL},
        {tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, (void *)config->key_pem},
        {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)config->cert_pem},
        {tls && config->tls_priorities != NULL ? MHD_OPTION_HTTPS_PRIORITIES : MHD_OPTION_END, 0,
         (void *)config->tls_priorities},
        {MHD_OPTION_END, 0, NULL},
    };
    // MHD_OPTION_ARRAY stops at the first MHD_OPTION_END: drop the entries switched off above.
    struct MHD_OptionItem packed[sizeof options / sizeof options[0]];
    size_t count = 0;
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        if (options[i].option != MHD_OPTION_END) packed[count++] = options[i];
    }
    packed[count] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return MHD_start_daemon(flags, config->port, NULL, NULL, config->handler, config->context, MHD_OPTION_ARRAY,
                            packed, MHD_OPTION_END);
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

struct rp_header_scan {
    const char *key;
    size_t key_length;
    const char *first_key;
    const char *value;
    size_t value_length;
    const char *next_line;
    int found;
};

static enum MHD_Result rp_scan_header(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                      const char *value, size_t value_size) {
    (void)kind;
    struct rp_header_scan *scan = (struct rp_header_scan *)cls;
    if (scan->first_key == NULL) scan->first_key = key;
    if (scan->found) {
        if (scan->next_line == NULL) scan->next_line = key;
        return MHD_YES;
    }
    if (key_size == scan->key_length && strncasecmp(key, scan->key, key_size) == 0 && value != NULL) {
        scan->found = 1;
        scan->value = value;
        scan->value_length = value_size;
    }
    return MHD_YES;
}

// libmicrohttpd 0.9.75 parses the head in place, in its read buffer: method, target, version, keys and
// values point into it, and every line end (CRLF or LF) is overwritten with NUL bytes. It measures a
// value with strlen, so a NUL the client sent ends the value early; the bytes it hides stay in the
// buffer between the value's end and the next line. A whole value is followed by its line end alone:
// as many NUL bytes as the request line's line end (twice that after the last header, whose line
// end is followed by the empty line). Anything else, or a layout this does not recognise, is "not
// whole": the caller refuses rather than trusts a value cut short.
int rp_mhd_header_value(struct MHD_Connection *connection, const char *method, const char *version, const char *key,
                        const char **value, size_t *length) {
    struct rp_header_scan scan;
    memset(&scan, 0, sizeof scan);
    scan.key = key;
    scan.key_length = strlen(key);
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, rp_scan_header, &scan);
    if (!scan.found) return -1;
    *value = scan.value;
    *length = scan.value_length;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (info == NULL || method == NULL || version == NULL || scan.first_key == NULL) return 0;
    const char *version_end = version + strlen(version);
    if (scan.first_key <= version_end) return 0;
    size_t line_end = (size_t)(scan.first_key - version_end);
    if (line_end != 1 && line_end != 2) return 0;
    const char *value_end = scan.value + scan.value_length;
    const char *next = scan.next_line != NULL ? scan.next_line : method + info->header_size;
    size_t expected = scan.next_line != NULL ? line_end : 2 * line_end;
    if (next <= value_end || (size_t)(next - value_end) != expected) return 0;
    for (const char *byte = value_end; byte < next; byte++) {
        if (*byte != '\0') return 0;
    }
    return 1;
}

static int rp_open_retrying(int dir_fd, const char *name, int flags) {
    int fd;
    do fd = openat(dir_fd, name, flags); while (fd < 0 && errno == EINTR);
    return fd;
}

// One openat(O_NOFOLLOW) per component: a link anywhere on the path fails with ELOOP (or ENOTDIR
// for a folder opened with O_DIRECTORY), and ".." is refused before it reaches the kernel.
static int rp_open_walking(int root_fd, const char *path) {
    size_t length = strlen(path);
    char *copy = malloc(length + 1);
    if (copy == NULL) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(copy, path, length + 1);
    int dir_fd = root_fd;
    int result = -1;
    char *cursor = copy;
    for (;;) {
        char *slash = strchr(cursor, '/');
        if (slash != NULL) *slash = '\0';
        if (*cursor == '\0' || strcmp(cursor, ".") == 0 || strcmp(cursor, "..") == 0) {
            errno = EACCES;
            break;
        }
        if (slash == NULL) {
            result = rp_open_retrying(dir_fd, cursor, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
            break;
        }
        int next = rp_open_retrying(dir_fd, cursor, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY);
        if (next < 0) break;
        if (dir_fd != root_fd) close(dir_fd);
        dir_fd = next;
        cursor = slash + 1;
    }
    int saved = errno;
    if (dir_fd != root_fd) close(dir_fd);
    free(copy);
    errno = saved;
    return result;
}

int rp_open_beneath(int root_fd, const char *path, int walk) {
    if (path == NULL || *path == '\0' || *path == '/') {
        errno = EACCES;
        return -1;
    }
    if (!walk) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        long fd;
        do fd = syscall(SYS_openat2, root_fd, path, &how, sizeof how); while (fd < 0 && errno == EINTR);
        if (fd >= 0 || errno != ENOSYS) return (int)fd;
    }
    return rp_open_walking(root_fd, path);
}

struct rp_deflate {
    z_stream stream;
};

struct rp_deflate *rp_deflate_create(int level) {
    struct rp_deflate *deflater = calloc(1, sizeof *deflater);
    if (deflater == NULL) return NULL;
    // 15 + 16: a gzip wrapper; memory level 8 keeps the state near 256 KiB per response.
    if (deflateInit2(&deflater->stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(deflater);
        return NULL;
    }
    return deflater;
}

ssize_t rp_deflate_step(struct rp_deflate *deflater, const uint8_t *in, size_t in_length, int finish, uint8_t *out,
                        size_t out_capacity, size_t *consumed, int *finished) {
    z_stream *stream = &deflater->stream;
    uInt input = in_length > (1u << 30) ? (1u << 30) : (uInt)in_length;
    uInt capacity = out_capacity > (1u << 30) ? (1u << 30) : (uInt)out_capacity;
    stream->next_in = (Bytef *)in;
    stream->avail_in = input;
    stream->next_out = out;
    stream->avail_out = capacity;
    int rc = deflate(stream, finish && input == in_length ? Z_FINISH : Z_NO_FLUSH);
    *consumed = input - stream->avail_in;
    *finished = rc == Z_STREAM_END;
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) return -1;
    return (ssize_t)(capacity - stream->avail_out);
}

void rp_deflate_destroy(struct rp_deflate *deflater) {
    if (deflater == NULL) return;
    deflateEnd(&deflater->stream);
    free(deflater);
}
