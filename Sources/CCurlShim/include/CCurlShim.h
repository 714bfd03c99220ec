#ifndef RICHPUSH_CCURLSHIM_H
#define RICHPUSH_CCURLSHIM_H

#include <CMediaScan.h>
#include <curl/curl.h>
#include <stdint.h>

// Typed, non-variadic wrappers: Swift cannot call curl's variadic setopt/getinfo.
CURLcode rp_easy_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode rp_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value);
CURLcode rp_easy_setopt_string(CURL *easy, CURLoption option, const char *value);
CURLcode rp_easy_setopt_pointer(CURL *easy, CURLoption option, void *value);
CURLcode rp_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
CURLcode rp_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value);
CURLcode rp_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value);
CURLcode rp_easy_getinfo_pointer(CURL *easy, CURLINFO info, void **value);
CURLMcode rp_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// Where a transfer's body goes, and what is learned from it as it arrives.
///
/// The write callback is C so the hot path never crosses into Swift. It refuses the chunk that would
/// pass `cap`, which makes libcurl abort with CURLE_WRITE_ERROR (`cap_exceeded` then says why); it
/// writes every byte to `fd` when one is given (retrying short writes and EINTR); and it keeps what
/// a verdict needs so nobody reads the download back: the first `head_limit` bytes for the sniffer,
/// an incremental SHA-256, the 16 KiB after a leading ID3v2 tag that ends within the first
/// `scan_limit` bytes (an MP3 behind long tags), and whether an MPEG-4 track handler says `vide`
/// within them. The media rules are CMediaScan's, the same code the sniffer runs on a file.
/// What the TLS handshake of a transfer showed, kept by the verify and info callbacks the trust
/// store installs, so a failure can be told exactly (libcurl keeps only the first verify error).
typedef struct rp_tls_report {
    int verify_error;    // the first X509_V_ERR_* the chain met (0: none)
    int error_depth;     // where in the chain (0: the server's own certificate)
    void *leaf;          // X509 *, the server's certificate (a reference the sink owns), or NULL
    void *failed;        // X509 *, the certificate at error_depth (a reference the sink owns), or NULL
    int alert_read;      // the last TLS alert received during the handshake (-1: none)
    int alert_written;   // the last TLS alert sent during the handshake (-1: none)
} rp_tls_report;

/// What a traced transfer told libcurl's debug callback: records of [kind (1 byte), length (4 bytes,
/// little-endian), bytes], kind 0 for libcurl's own text, 1 for a header received, 2 for a header
/// sent; bodies and raw TLS records are left out. At most `limit` bytes are kept, then `truncated`.
typedef struct rp_trace {
    unsigned char *bytes;
    size_t length;
    size_t limit;
    int truncated;
} rp_trace;

typedef struct rp_sink {
    int fd;              // -1 discards the body (bytes are still counted, kept and hashed)
    int64_t cap;         // < 0: no cap
    int64_t bytes;       // bytes accepted so far
    int cap_exceeded;    // set when a chunk would pass the cap
    int write_errno;     // set when write(2) failed
    int requests_sent;   // requests about to be sent on an established connection (one per hop)
    // The streaming verdict; set up with rp_sink_init, released with rp_sink_release.
    unsigned char *head;       // the first bytes of the body
    size_t head_length;
    size_t head_limit;
    unsigned char *after_tag;  // the bytes after a leading ID3v2 tag (NULL when there is none)
    size_t after_tag_length;
    rp_media_scan media;       // the media structure seen so far (CMediaScan): media.tag_end, where a
                               // leading ID3v2 tag ends; media.video_handler, an MPEG-4 'vide' handler
    void *digest;              // EVP_MD_CTX, NULL when hashing is off or failed
    void *trust;               // rp_trust_store * the handshake verifies against (not owned)
    rp_tls_report tls;         // what the handshake showed
    rp_trace trace;            // the transfer's trace, when asked for (rp_easy_trace)
} rp_sink;

/// Prepares a sink: `head_limit` bytes kept, hashing on or off.
void rp_sink_init(rp_sink *sink, int fd, int64_t cap, size_t head_limit, int64_t scan_limit, int hash);
/// Frees what the sink holds (the buffers and the digest); the struct itself stays the caller's.
void rp_sink_release(rp_sink *sink);
/// Writes the SHA-256 of everything accepted into `out` (32 bytes); returns 0 when hashing was off or failed.
int rp_sink_digest(rp_sink *sink, unsigned char *out);
/// Passes `count` body bytes through the sink as libcurl's write callback would; returns the bytes
/// accepted (`count`, or 0 when the cap was passed or a write failed). For tests of the sink alone.
size_t rp_sink_feed(rp_sink *sink, const char *data, size_t count);

/// Points the handle's WRITEFUNCTION/WRITEDATA at `sink`, and its PREREQFUNCTION, which counts the
/// hops whose connection (TCP and TLS) was established, so a timeout can be told apart from a stall.
CURLcode rp_easy_attach_sink(CURL *easy, rp_sink *sink);

/// A certificate store built once per process from PEM files and shared by every TLS connection of every loop.
///
/// libcurl 7.88 caches its store only when the trust comes from a CA file alone; with a CA path
/// (Debian's default) it parses the whole system bundle again for every connection. A handle
/// given this store gets no CA file or path of its own: the SSL_CTX callback hands it the store.
typedef struct rp_trust_store rp_trust_store;

/// A store of the certificates in `count` PEM files (each may hold many), read when first needed: by
/// rp_trust_store_build, or by the first TLS connection that uses it (an http transfer redirected to
/// https builds it then, and fails with CURLE_SSL_CACERT_BADFILE if it cannot). NULL when out of memory.
rp_trust_store *rp_trust_store_create(const char *const *files, int count);
/// Reads the files now unless done before: 1, or 0 with the index of the file that failed in
/// `failed_index` and OpenSSL's reason in `error` (NUL-terminated). A failure is not kept.
int rp_trust_store_build(rp_trust_store *store, int *failed_index, char *error, size_t error_size);
/// How many times the files were read (0 or 1).
int rp_trust_store_builds(rp_trust_store *store);
/// Releases the caller's reference; connections that use the store keep theirs.
void rp_trust_store_release(rp_trust_store *store);
/// Makes `easy` verify peers against `store` only (CAINFO and CAPATH unset), and keeps what the
/// handshake shows (the server's certificate, the first verify error, alerts) in `sink->tls`.
CURLcode rp_easy_use_trust_store(CURL *easy, rp_trust_store *store, rp_sink *sink);

/// Turns on libcurl's verbose output for `easy` and keeps it in `sink->trace`, at most `limit` bytes.
CURLcode rp_easy_trace(CURL *easy, rp_sink *sink, size_t limit);

/// Facts of a certificate kept in an rp_tls_report, as text the caller frees (NULL when absent).
typedef enum rp_cert_fact {
    rp_cert_subject = 0,     // the subject name, one line (RFC 2253)
    rp_cert_issuer = 1,      // the issuer name, one line (RFC 2253)
    rp_cert_not_before = 2,  // "Jan  1 00:00:00 2020 GMT"
    rp_cert_not_after = 3,
    rp_cert_names = 4,       // the subjectAltName DNS names and IP addresses, one per line
    rp_cert_ca_issuers = 5,  // the Authority Information Access "CA Issuers" URL, where the issuer can be fetched
} rp_cert_fact;
char *rp_cert_text(void *certificate, rp_cert_fact fact);
/// Whether the certificate holds `host` (a DNS name, with wildcards as TLS clients match them, or an IP address).
int rp_cert_matches_host(void *certificate, const char *host);
/// OpenSSL's text for an X509_V_ERR_* number.
const char *rp_verify_error_text(long code);
/// Counts the PEM certificates in `bytes` (a CA file's content). Returns the count, or -1 when a block
/// that starts like a certificate does not decode (OpenSSL's reason in `error`, NUL-terminated).
int rp_count_pem_certificates(const unsigned char *bytes, size_t length, char *error, size_t error_size);

/// An event loop for one multi handle: epoll plus curl's socket interface (curl_multi_socket_action).
///
/// curl tells the loop which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when its next timeout
/// is due (CURLMOPT_TIMERFUNCTION); the loop waits on epoll and tells curl exactly which socket is
/// ready. Unlike curl_multi_perform, curl then never polls every socket itself before reading.
/// An eventfd in the same epoll set lets other threads wake the loop.
typedef struct rp_loop rp_loop;

/// Creates a loop for `multi` (installs the socket and timer callbacks); NULL on failure.
rp_loop *rp_loop_create(CURLM *multi);
/// Frees the loop; call it before curl_multi_cleanup (the multi handle stays the caller's).
void rp_loop_destroy(rp_loop *loop);
/// Wakes the loop from another thread. Async-signal-safe.
void rp_loop_wakeup(rp_loop *loop);

/* Names the calling thread (at most 15 bytes are kept), as ps, top and perf show it; a thread
 * otherwise keeps the name of the thread that created it. */
void rp_name_this_thread(const char *name);
/// Waits for socket events, curl's timeout or a wakeup (at most `max_wait_ms`), then lets curl act.
/// Returns the number of transfers still running, or -1 (errno set) when the epoll descriptor is
/// unusable: the call then waited `max_wait_ms` (10 ms at least) instead of spinning, and still
/// acted on curl's timer, so every transfer ends by its own deadline.
int rp_loop_step(rp_loop *loop, int max_wait_ms);
/// The loop's epoll descriptor, for tests that break it on purpose.
int rp_loop_epoll_descriptor(rp_loop *loop);
/// How many times epoll refused to watch one of curl's sockets (ENOMEM, ENOSPC). Such a socket is
/// polled (every 10 ms at most, retried each step) instead of waiting until its transfer's deadline.
int64_t rp_loop_watch_failures(rp_loop *loop);
/// Sockets polled now because epoll refused them.
int rp_loop_unwatched_count(rp_loop *loop);
/// Test hook: the next `count` watches of curl's sockets fail as if epoll were out of watches.
void rp_loop_fail_watches(rp_loop *loop, int count);

/// Reads the next finished transfer from the multi handle; returns 0 when there is none.
int rp_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result);

/// The CA bundle libcurl was built to use by default, as a string the caller frees; NULL when none.
char *rp_default_ca_file(void);

/// Reads one response header of the latest response that has it ("" when none has).
const char *rp_easy_last_header(CURL *easy, const char *name);

/// Reads one response header of the last request ("" when absent); the pointer lives until the next call.
const char *rp_easy_header(CURL *easy, const char *name);

#endif
