#include "CCurlShim.h"

#include <sys/prctl.h>

#include <errno.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <string.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

void rp_name_this_thread(const char *name) {
    /* PR_SET_NAME copies at most 15 bytes and a NUL: what ps, top and perf show for the thread. */
    (void)prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

CURLcode rp_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode rp_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode rp_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode rp_easy_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode rp_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLcode rp_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLcode rp_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLcode rp_easy_getinfo_pointer(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}
CURLMcode rp_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

void rp_sink_init(rp_sink *sink, int fd, int64_t cap, size_t head_limit, int64_t scan_limit, int hash) {
    memset(sink, 0, sizeof *sink);
    sink->fd = fd;
    sink->cap = cap;
    sink->head_limit = head_limit;
    rp_media_scan_init(&sink->media, scan_limit);
    sink->tls.alert_read = -1;
    sink->tls.alert_written = -1;
    if (hash) {
        EVP_MD_CTX *digest = EVP_MD_CTX_new();
        if (digest != NULL && EVP_DigestInit_ex(digest, EVP_sha256(), NULL) != 1) {
            EVP_MD_CTX_free(digest);
            digest = NULL;
        }
        sink->digest = digest;
    }
}

void rp_sink_release(rp_sink *sink) {
    free(sink->head);
    free(sink->after_tag);
    EVP_MD_CTX_free((EVP_MD_CTX *)sink->digest);
    X509_free((X509 *)sink->tls.leaf);
    X509_free((X509 *)sink->tls.failed);
    free(sink->trace.bytes);
    sink->head = NULL;
    sink->after_tag = NULL;
    sink->digest = NULL;
    sink->tls.leaf = NULL;
    sink->tls.failed = NULL;
    sink->trace.bytes = NULL;
}

int rp_sink_digest(rp_sink *sink, unsigned char *out) {
    if (sink->digest == NULL) return 0;
    unsigned int length = 0;
    int ok = EVP_DigestFinal_ex((EVP_MD_CTX *)sink->digest, out, &length) == 1 && length == 32;
    EVP_MD_CTX_free((EVP_MD_CTX *)sink->digest);
    sink->digest = NULL;
    return ok;
}

// The allocation that holds `length` kept bytes: a power of two from 4 KiB, at most `limit`. It is a
// function of the length alone, so the sink needs no capacity field; growing doubles it.
static size_t rp_capacity(size_t length, size_t limit) {
    if (length == 0) return 0;
    size_t capacity = 4096;
    while (capacity < length) capacity *= 2;
    return capacity < limit ? capacity : limit;
}

// Appends bytes [from, from + count) of the body at body offset `offset` to a buffer that keeps body
// bytes [start, start + limit); grows the buffer as needed. Returns 0 when memory ran out.
static int rp_keep(unsigned char **buffer, size_t *length, int64_t start, size_t limit, int64_t offset,
                   const char *data, size_t count) {
    int64_t end = offset + (int64_t)count;
    int64_t want_from = start + (int64_t)*length;
    int64_t want_to = start + (int64_t)limit;
    if (end <= want_from || offset >= want_to || want_from >= want_to) return 1;
    int64_t from = offset > want_from ? offset : want_from;
    int64_t to = end < want_to ? end : want_to;
    if (from != want_from) return 1;  // a gap: nothing is kept past it
    size_t needed = (size_t)(to - start);
    size_t had = rp_capacity(*length, limit);
    if (*buffer == NULL || needed > had) {
        unsigned char *grown = realloc(*buffer, rp_capacity(needed, limit));
        if (grown == NULL) return 0;
        *buffer = grown;
    }
    memcpy(*buffer + *length, data + (from - offset), (size_t)(to - from));
    *length = needed;
    return 1;
}

static size_t rp_sink_write(char *data, size_t size, size_t count, void *userdata) {
    rp_sink *sink = (rp_sink *)userdata;
    size_t total = size * count;
    if (sink->cap >= 0 && sink->bytes + (int64_t)total > sink->cap) {
        sink->cap_exceeded = 1;
        return 0;
    }
    if (sink->fd >= 0) {
        size_t done = 0;
        while (done < total) {
            ssize_t n = write(sink->fd, data + done, total - done);
            if (n < 0) {
                if (errno == EINTR) continue;
                sink->write_errno = errno;
                return 0;
            }
            done += (size_t)n;
        }
    }
    int64_t offset = sink->bytes;
    if (sink->head_limit > 0 &&
        !rp_keep(&sink->head, &sink->head_length, 0, sink->head_limit, offset, data, total)) {
        sink->write_errno = ENOMEM;
        return 0;
    }
    // What the sniffer needs of the media structure (CMediaScan): where a leading ID3v2 tag ends, whose
    // next bytes are kept, and whether an MPEG-4 video handler lies within the scan limit.
    rp_media_scan_feed(&sink->media, (const unsigned char *)data, total);
    if (sink->media.tag_end >= 0 && sink->media.tag_end < sink->media.limit &&
        !rp_keep(&sink->after_tag, &sink->after_tag_length, sink->media.tag_end, rp_media_after_tag_window, offset, data,
                 total)) {
        sink->write_errno = ENOMEM;
        return 0;
    }
    if (sink->digest != NULL && EVP_DigestUpdate((EVP_MD_CTX *)sink->digest, data, total) != 1) {
        EVP_MD_CTX_free((EVP_MD_CTX *)sink->digest);
        sink->digest = NULL;
    }
    sink->bytes += (int64_t)total;
    return total;
}

size_t rp_sink_feed(rp_sink *sink, const char *data, size_t count) {
    return rp_sink_write((char *)data, 1, count, sink);
}

static int rp_sink_prereq(void *userdata, char *primary_ip, char *local_ip, int primary_port, int local_port) {
    (void)primary_ip;
    (void)local_ip;
    (void)primary_port;
    (void)local_port;
    ((rp_sink *)userdata)->requests_sent += 1;
    return CURL_PREREQFUNC_OK;
}

CURLcode rp_easy_attach_sink(CURL *easy, rp_sink *sink) {
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, rp_sink_write);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_WRITEDATA, (void *)sink);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, rp_sink_prereq);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_PREREQDATA, (void *)sink);
    return rc;
}

struct rp_trust_store {
    pthread_mutex_t lock;
    X509_STORE *store;  // NULL until the first connection (or rp_trust_store_build) needs it
    int builds;
    int count;
    char **files;
};

rp_trust_store *rp_trust_store_create(const char *const *files, int count) {
    rp_trust_store *trust = calloc(1, sizeof *trust);
    char **copies = calloc(count > 0 ? (size_t)count : 1, sizeof(char *));
    if (trust == NULL || copies == NULL || pthread_mutex_init(&trust->lock, NULL) != 0) {
        free(trust);
        free(copies);
        return NULL;
    }
    trust->files = copies;
    for (int i = 0; i < count; i++) {
        copies[i] = strdup(files[i]);
        if (copies[i] == NULL) {
            trust->count = i;
            rp_trust_store_release(trust);
            return NULL;
        }
    }
    trust->count = count;
    return trust;
}

// Builds the store under the lock if it is not built yet; the store, or NULL with the failure in
// `failed_index` and `error`. A failure is not kept: the next call tries again (the file may be fixed).
static X509_STORE *rp_trust_store_get(rp_trust_store *trust, int *failed_index, char *error, size_t error_size) {
    *failed_index = -1;
    if (error_size > 0) error[0] = 0;
    pthread_mutex_lock(&trust->lock);
    X509_STORE *built = trust->store;
    if (built == NULL) {
        X509_STORE *store = X509_STORE_new();
        if (store == NULL && error_size > 0) snprintf(error, error_size, "out of memory");
        ERR_clear_error();
        for (int i = 0; store != NULL && i < trust->count; i++) {
            if (X509_STORE_load_file(store, trust->files[i]) != 1) {
                *failed_index = i;
                unsigned long code = ERR_get_error();
                if (error_size > 0) {
                    if (code != 0) {
                        ERR_error_string_n(code, error, error_size);
                    } else {
                        snprintf(error, error_size, "no certificate could be read");
                    }
                }
                ERR_clear_error();
                X509_STORE_free(store);
                store = NULL;
            }
        }
        if (store != NULL) {
            trust->store = store;
            trust->builds++;
            built = store;
        }
    }
    pthread_mutex_unlock(&trust->lock);
    return built;
}

int rp_trust_store_build(rp_trust_store *trust, int *failed_index, char *error, size_t error_size) {
    return rp_trust_store_get(trust, failed_index, error, error_size) != NULL;
}

int rp_trust_store_builds(rp_trust_store *trust) {
    pthread_mutex_lock(&trust->lock);
    int builds = trust->builds;
    pthread_mutex_unlock(&trust->lock);
    return builds;
}

void rp_trust_store_release(rp_trust_store *trust) {
    if (trust == NULL) return;
    X509_STORE_free(trust->store);
    for (int i = 0; i < trust->count; i++) free(trust->files[i]);
    free(trust->files);
    pthread_mutex_destroy(&trust->lock);
    free(trust);
}

// The SSL_CTX ex_data slot that points a connection's callbacks at the sink of the transfer that
// opened it. libcurl 7.88 makes one SSL_CTX per connection, and the callbacks read the slot only while
// the handshake runs (renegotiation is off), which always happens inside that transfer.
static int rp_sink_index = -1;
static pthread_once_t rp_sink_index_once = PTHREAD_ONCE_INIT;
static void rp_make_sink_index(void) { rp_sink_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL); }

static rp_sink *rp_handshake_sink(const SSL *ssl) {
    if (ssl == NULL || rp_sink_index < 0 || SSL_is_init_finished(ssl)) return NULL;
    return (rp_sink *)SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), rp_sink_index);
}

// Records what the chain showed and returns OpenSSL's own answer unchanged: verification is not ours.
static int rp_verify_callback(int ok, X509_STORE_CTX *store) {
    SSL *ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx());
    rp_sink *sink = rp_handshake_sink(ssl);
    if (sink == NULL) return ok;
    X509 *leaf = X509_STORE_CTX_get0_cert(store);
    if (sink->tls.leaf == NULL && leaf != NULL && X509_up_ref(leaf) == 1) sink->tls.leaf = leaf;
    if (!ok && sink->tls.verify_error == 0) {
        sink->tls.verify_error = X509_STORE_CTX_get_error(store);
        sink->tls.error_depth = X509_STORE_CTX_get_error_depth(store);
        X509 *current = X509_STORE_CTX_get_current_cert(store);
        if (current != NULL && X509_up_ref(current) == 1) sink->tls.failed = current;
    }
    return ok;
}

// Keeps the alerts of the handshake: protocol_version (70) or handshake_failure (40) say which side
// refused what. After the handshake the sink may be gone (a kept connection outlives its transfer).
static void rp_info_callback(const SSL *ssl, int where, int value) {
    if ((where & SSL_CB_ALERT) == 0) return;
    rp_sink *sink = rp_handshake_sink(ssl);
    if (sink == NULL) return;
    if (where & SSL_CB_READ) {
        sink->tls.alert_read = value & 0xff;
    } else {
        sink->tls.alert_written = value & 0xff;
    }
}

static CURLcode rp_trust_store_ctx(CURL *easy, void *ssl_ctx, void *userdata) {
    (void)easy;
    rp_sink *sink = (rp_sink *)userdata;
    rp_trust_store *trust = (rp_trust_store *)sink->trust;
    SSL_CTX *ctx = (SSL_CTX *)ssl_ctx;
    // Built here when the transfer did not need it up front (an http URL redirected to https).
    int failed_index;
    char error[256];
    X509_STORE *store = rp_trust_store_get(trust, &failed_index, error, sizeof error);
    if (store == NULL) return CURLE_SSL_CACERT_BADFILE;
    // set1 takes its own reference: the SSL_CTX may outlive the transfer on a kept connection.
    SSL_CTX_set1_cert_store(ctx, store);
    // Give back a connection's 17 KB TLS read and write buffers whenever they are empty: with
    // thousands of transfers in flight most of them wait for bytes (the write buffer, after the
    // request, for the whole download).
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    // No second handshake on a kept connection: the callbacks below belong to the first one's transfer.
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    pthread_once(&rp_sink_index_once, rp_make_sink_index);
    if (rp_sink_index >= 0 && SSL_CTX_set_ex_data(ctx, rp_sink_index, sink) == 1) {
        SSL_CTX_set_verify(ctx, SSL_CTX_get_verify_mode(ctx), rp_verify_callback);
        SSL_CTX_set_info_callback(ctx, rp_info_callback);
    }
    return CURLE_OK;
}

CURLcode rp_easy_use_trust_store(CURL *easy, rp_trust_store *trust, rp_sink *sink) {
    sink->trust = trust;
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_CAINFO, (char *)NULL);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_CAPATH, (char *)NULL);
    // libcurl's own per-multi cache would keep the first connection's store (ours, for one trust
    // source) and hand it to every later connection, whatever store they were given.
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_CA_CACHE_TIMEOUT, 0L);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_SSL_CTX_FUNCTION, rp_trust_store_ctx);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_SSL_CTX_DATA, (void *)sink);
    return rc;
}

static int rp_trace_debug(CURL *easy, curl_infotype type, char *data, size_t size, void *userdata) {
    (void)easy;
    rp_trace *trace = &((rp_sink *)userdata)->trace;
    unsigned char kind;
    switch (type) {
    case CURLINFO_TEXT: kind = 0; break;
    case CURLINFO_HEADER_IN: kind = 1; break;
    case CURLINFO_HEADER_OUT: kind = 2; break;
    default: return 0;  // bodies and raw TLS records are not traced
    }
    if (trace->truncated) return 0;
    if (size > UINT32_MAX || trace->length + 5 + size > trace->limit) {
        trace->truncated = 1;
        return 0;
    }
    if (trace->bytes == NULL) {
        trace->bytes = malloc(trace->limit);
        if (trace->bytes == NULL) {
            trace->truncated = 1;
            return 0;
        }
    }
    unsigned char *at = trace->bytes + trace->length;
    uint32_t length = (uint32_t)size;
    at[0] = kind;
    for (int i = 0; i < 4; i++) at[1 + i] = (unsigned char)(length >> (8 * i));
    memcpy(at + 5, data, size);
    trace->length += 5 + size;
    return 0;
}

CURLcode rp_easy_trace(CURL *easy, rp_sink *sink, size_t limit) {
    sink->trace.limit = limit;
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, rp_trace_debug);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_DEBUGDATA, (void *)sink);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);
    return rc;
}

static char *rp_bio_text(BIO *bio) {
    char *data = NULL;
    long length = BIO_get_mem_data(bio, &data);
    char *text = NULL;
    if (length > 0 && data != NULL) {
        text = malloc((size_t)length + 1);
        if (text != NULL) {
            memcpy(text, data, (size_t)length);
            text[length] = 0;
        }
    }
    BIO_free(bio);
    return text;
}

char *rp_cert_text(void *certificate, rp_cert_fact fact) {
    X509 *cert = (X509 *)certificate;
    if (cert == NULL) return NULL;
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL) return NULL;
    switch (fact) {
    case rp_cert_subject:
        X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
        break;
    case rp_cert_issuer:
        X509_NAME_print_ex(bio, X509_get_issuer_name(cert), 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
        break;
    case rp_cert_not_before: ASN1_TIME_print(bio, X509_get0_notBefore(cert)); break;
    case rp_cert_not_after: ASN1_TIME_print(bio, X509_get0_notAfter(cert)); break;
    case rp_cert_names: {
        GENERAL_NAMES *names = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
        int count = names == NULL ? 0 : sk_GENERAL_NAME_num(names);
        for (int i = 0; i < count; i++) {
            GENERAL_NAME *name = sk_GENERAL_NAME_value(names, i);
            if (name->type == GEN_DNS) {
                const ASN1_IA5STRING *dns = name->d.dNSName;
                BIO_write(bio, ASN1_STRING_get0_data(dns), ASN1_STRING_length(dns));
                BIO_write(bio, "\n", 1);
            } else if (name->type == GEN_IPADD) {
                const unsigned char *raw = ASN1_STRING_get0_data(name->d.iPAddress);
                int length = ASN1_STRING_length(name->d.iPAddress);
                if (length == 4) {
                    BIO_printf(bio, "%d.%d.%d.%d\n", raw[0], raw[1], raw[2], raw[3]);
                } else if (length == 16) {
                    for (int j = 0; j < 16; j += 2) BIO_printf(bio, j ? ":%x" : "%x", (raw[j] << 8) | raw[j + 1]);
                    BIO_write(bio, "\n", 1);
                }
            }
        }
        GENERAL_NAMES_free(names);
        break;
    }
    case rp_cert_ca_issuers: {
        AUTHORITY_INFO_ACCESS *access = X509_get_ext_d2i(cert, NID_info_access, NULL, NULL);
        int count = access == NULL ? 0 : sk_ACCESS_DESCRIPTION_num(access);
        for (int i = 0; i < count; i++) {
            ACCESS_DESCRIPTION *entry = sk_ACCESS_DESCRIPTION_value(access, i);
            if (OBJ_obj2nid(entry->method) == NID_ad_ca_issuers && entry->location->type == GEN_URI) {
                const ASN1_IA5STRING *uri = entry->location->d.uniformResourceIdentifier;
                BIO_write(bio, ASN1_STRING_get0_data(uri), ASN1_STRING_length(uri));
                break;
            }
        }
        AUTHORITY_INFO_ACCESS_free(access);
        break;
    }
    }
    return rp_bio_text(bio);
}

int rp_cert_matches_host(void *certificate, const char *host) {
    X509 *cert = (X509 *)certificate;
    if (cert == NULL || host == NULL) return 0;
    if (X509_check_ip_asc(cert, host, 0) == 1) return 1;
    return X509_check_host(cert, host, strlen(host), 0, NULL) == 1;
}

const char *rp_verify_error_text(long code) { return X509_verify_cert_error_string(code); }

int rp_count_pem_certificates(const unsigned char *bytes, size_t length, char *error, size_t error_size) {
    if (error_size > 0) error[0] = 0;
    if (length > INT32_MAX) return -1;
    BIO *bio = BIO_new_mem_buf(bytes, (int)length);
    if (bio == NULL) return -1;
    int count = 0;
    ERR_clear_error();
    while (1) {
        X509 *cert = PEM_read_bio_X509_AUX(bio, NULL, NULL, NULL);
        if (cert == NULL) break;
        X509_free(cert);
        count++;
    }
    unsigned long code = ERR_peek_last_error();
    int result = count;
    // The end of the input reads as "no start line"; anything else is a block that does not decode.
    if (code != 0 && !(ERR_GET_LIB(code) == ERR_LIB_PEM && ERR_GET_REASON(code) == PEM_R_NO_START_LINE)) {
        if (error_size > 0) ERR_error_string_n(code, error, error_size);
        result = -1;
    }
    ERR_clear_error();
    BIO_free(bio);
    return result;
}

char *rp_default_ca_file(void) {
    CURL *easy = curl_easy_init();
    char *value = NULL;
    char *copy = NULL;
    if (easy != NULL && curl_easy_getinfo(easy, CURLINFO_CAINFO, &value) == CURLE_OK && value != NULL) {
        copy = strdup(value);
    }
    if (easy != NULL) curl_easy_cleanup(easy);
    return copy;
}

int rp_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result) {
    int queued = 0;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(multi, &queued)) != NULL) {
        if (msg->msg == CURLMSG_DONE) {
            *easy = msg->easy_handle;
            *result = msg->data.result;
            return 1;
        }
    }
    return 0;
}

const char *rp_easy_header(CURL *easy, const char *name) {
    struct curl_header *header = NULL;
    if (curl_easy_header(easy, name, 0, CURLH_HEADER, -1, &header) == CURLHE_OK && header != NULL) {
        return header->value;
    }
    return "";
}

const char *rp_easy_last_header(CURL *easy, const char *name) {
    struct curl_header *header = NULL;
    long redirects = 0;
    curl_easy_getinfo(easy, CURLINFO_REDIRECT_COUNT, &redirects);
    // A redirect curl refused to follow may leave an empty request last: look back over every hop.
    for (long request = redirects + 1; request >= 0; request--) {
        if (curl_easy_header(easy, name, 0, CURLH_HEADER, (int)request, &header) == CURLHE_OK && header != NULL) {
            return header->value;
        }
    }
    return "";
}

// Sockets curl asked to watch that epoll refused (ENOMEM, or ENOSPC past fs.epoll.max_user_watches)
// are polled instead, at most this many per loop: each step retries adding them and tells curl to try
// them; a transfer on one is slower, never stuck until its deadline.
enum { rp_unwatched_capacity = 1024 };

struct rp_loop {
    CURLM *multi;
    int epoll_fd;
    int wake_fd;
    int64_t timer_due;  // when curl's timer fires, in CLOCK_MONOTONIC milliseconds; -1: no timer
    int running;
    int64_t watch_failures;  // epoll_ctl calls for curl's sockets that failed
    int fail_watches;        // test hook: the next this many watches fail with ENOSPC
    int unwatched_count;
    curl_socket_t unwatched[rp_unwatched_capacity];
};

static int64_t rp_now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static int rp_unwatched_index(const rp_loop *loop, curl_socket_t socket) {
    for (int i = 0; i < loop->unwatched_count; i++) {
        if (loop->unwatched[i] == socket) return i;
    }
    return -1;
}

static void rp_unwatched_remove(rp_loop *loop, curl_socket_t socket) {
    int index = rp_unwatched_index(loop, socket);
    if (index >= 0) loop->unwatched[index] = loop->unwatched[--loop->unwatched_count];
}

// Watches `socket` for `events` (modify, or add when epoll does not know it yet): 0, or -1 and errno.
static int rp_watch(rp_loop *loop, curl_socket_t socket, uint32_t events) {
    if (loop->fail_watches > 0) {
        loop->fail_watches--;
        errno = ENOSPC;
        return -1;
    }
    struct epoll_event event;
    event.events = events;
    event.data.fd = socket;
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_MOD, socket, &event) == 0) return 0;
    if (errno != ENOENT) return -1;
    return epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, socket, &event);
}

static int rp_loop_socket(CURL *easy, curl_socket_t socket, int what, void *userp, void *socketp) {
    (void)easy;
    (void)socketp;
    rp_loop *loop = (rp_loop *)userp;
    if (what == CURL_POLL_REMOVE) {
        // ENOENT for a socket epoll never held, or one the kernel dropped on close: nothing to undo.
        epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, socket, NULL);
        rp_unwatched_remove(loop, socket);
        return 0;
    }
    uint32_t events = 0;
    if (what & CURL_POLL_IN) events |= EPOLLIN;
    if (what & CURL_POLL_OUT) events |= EPOLLOUT;
    if (rp_watch(loop, socket, events) == 0) {
        rp_unwatched_remove(loop, socket);
        return 0;
    }
    loop->watch_failures++;
    if (rp_unwatched_index(loop, socket) >= 0) return 0;
    if (loop->unwatched_count == rp_unwatched_capacity) return -1;  // curl then ends the loop's transfers
    loop->unwatched[loop->unwatched_count++] = socket;
    return 0;
}

static int rp_loop_timer(CURLM *multi, long timeout_ms, void *userp) {
    (void)multi;
    ((rp_loop *)userp)->timer_due = timeout_ms < 0 ? -1 : rp_now_ms() + timeout_ms;
    return 0;
}

rp_loop *rp_loop_create(CURLM *multi) {
    rp_loop *loop = calloc(1, sizeof *loop);
    if (loop == NULL) return NULL;
    loop->multi = multi;
    loop->timer_due = -1;
    loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    loop->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (loop->epoll_fd < 0 || loop->wake_fd < 0) {
        int saved = errno;  // the caller reports why (EMFILE: the descriptor limit)
        if (loop->epoll_fd >= 0) close(loop->epoll_fd);
        if (loop->wake_fd >= 0) close(loop->wake_fd);
        free(loop);
        errno = saved;
        return NULL;
    }
    struct epoll_event event;
    event.events = EPOLLIN;
    event.data.fd = loop->wake_fd;
    // A loop that cannot be woken would sleep through every submission: fail its creation instead.
    if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, loop->wake_fd, &event) != 0) {
        int saved = errno;
        close(loop->epoll_fd);
        close(loop->wake_fd);
        free(loop);
        errno = saved;
        return NULL;
    }
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, rp_loop_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, (void *)loop);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, rp_loop_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, (void *)loop);
    return loop;
}

void rp_loop_destroy(rp_loop *loop) {
    if (loop == NULL) return;
    // Call before curl_multi_cleanup: this unhooks the callbacks from the (still live) multi handle.
    curl_multi_setopt(loop->multi, CURLMOPT_SOCKETFUNCTION, NULL);
    curl_multi_setopt(loop->multi, CURLMOPT_TIMERFUNCTION, NULL);
    close(loop->epoll_fd);
    close(loop->wake_fd);
    free(loop);
}

void rp_loop_wakeup(rp_loop *loop) {
    uint64_t one = 1;
    ssize_t ignored = write(loop->wake_fd, &one, sizeof one);
    (void)ignored;
}

int rp_loop_step(rp_loop *loop, int max_wait_ms) {
    enum { capacity = 256 };
    struct epoll_event events[capacity];
    int wait = max_wait_ms;
    if (loop->unwatched_count > 0 && wait > 10) wait = 10;  // polled sockets: look again soon
    if (loop->timer_due >= 0) {
        int64_t left = loop->timer_due - rp_now_ms();
        if (left < 0) left = 0;
        if (left < wait) wait = (int)left;
    }
    int count = epoll_wait(loop->epoll_fd, events, capacity, wait);
    int broken = 0;
    if (count < 0) {
        // EINTR: act on timeouts below. Anything else (EBADF, EINVAL: the descriptor is unusable)
        // would come back at once on every step: wait as asked instead of spinning a core.
        if (errno != EINTR) {
            broken = errno;
            int pause_ms = wait < 10 ? 10 : wait;  // never a spin, even for a caller that asks for 0
            struct timespec pause = {pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L};
            while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
            }
        }
        count = 0;
    }
    for (int i = 0; i < count; i++) {
        int fd = events[i].data.fd;
        if (fd == loop->wake_fd) {
            uint64_t value;
            ssize_t ignored = read(loop->wake_fd, &value, sizeof value);
            (void)ignored;
            continue;
        }
        int mask = 0;
        if (events[i].events & EPOLLIN) mask |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT) mask |= CURL_CSELECT_OUT;
        if (events[i].events & (EPOLLERR | EPOLLHUP)) mask |= CURL_CSELECT_ERR;
        curl_multi_socket_action(loop->multi, fd, mask, &loop->running);
    }
    // Sockets epoll refused: watch them now if it takes them, else let curl try them as if ready (a
    // socket that is not ready gives EAGAIN, which curl expects). A copy: curl may change the list.
    if (loop->unwatched_count > 0) {
        int pending = loop->unwatched_count;
        curl_socket_t polled[rp_unwatched_capacity];
        memcpy(polled, loop->unwatched, sizeof(curl_socket_t) * (size_t)pending);
        for (int i = 0; i < pending; i++) {
            if (rp_unwatched_index(loop, polled[i]) < 0) continue;
            if (rp_watch(loop, polled[i], EPOLLIN | EPOLLOUT) == 0) rp_unwatched_remove(loop, polled[i]);
            curl_multi_socket_action(loop->multi, polled[i], CURL_CSELECT_IN | CURL_CSELECT_OUT, &loop->running);
        }
    }
    // curl's timer; cleared first because acting on it may set a new one.
    if (loop->timer_due >= 0 && rp_now_ms() >= loop->timer_due) {
        loop->timer_due = -1;
        curl_multi_socket_action(loop->multi, CURL_SOCKET_TIMEOUT, 0, &loop->running);
    }
    if (broken != 0) {
        errno = broken;
        return -1;
    }
    return loop->running;
}

int rp_loop_epoll_descriptor(rp_loop *loop) { return loop->epoll_fd; }

int64_t rp_loop_watch_failures(rp_loop *loop) { return loop->watch_failures; }

int rp_loop_unwatched_count(rp_loop *loop) { return loop->unwatched_count; }

void rp_loop_fail_watches(rp_loop *loop, int count) { loop->fail_watches = count; }
