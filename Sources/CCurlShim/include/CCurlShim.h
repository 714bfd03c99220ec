#ifndef RICHPUSH_CCURLSHIM_H
#define RICHPUSH_CCURLSHIM_H

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
/// an incremental SHA-256, the 16 KiB after a leading ID3v2 tag (an MP3 behind long tags), and
/// whether an MPEG-4 track handler says `vide` within the first `scan_limit` bytes.
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
    int64_t tag_end;           // where the ID3v2 tag ends (-1: no tag, or not known yet)
    int video_handler;         // an MPEG-4 'hdlr' box with handler type 'vide' was seen
    int not_mpeg4;             // the body does not start with an 'ftyp' box: no handler is looked for
    int64_t scan_limit;        // how far to look for it (and for the end of an ID3 tag)
    unsigned char window[16];  // the last 15 bytes seen (window[0..15)), for patterns across chunks
    void *digest;              // EVP_MD_CTX, NULL when hashing is off or failed
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

/// A certificate store built once from PEM files and shared by every TLS connection of a loop.
///
/// libcurl 7.88 caches its store only when the trust comes from a CA file alone; with a CA path
/// (Debian's default) it parses the whole system bundle again for every connection. A handle
/// given this store gets no CA file or path of its own: the SSL_CTX callback hands it the store.
typedef struct rp_trust_store rp_trust_store;

/// Builds a store from `count` PEM files (each may hold many certificates); NULL on failure, with
/// the index of the file that failed in `failed_index` and OpenSSL's reason in `error` (NUL-terminated).
rp_trust_store *rp_trust_store_create(const char *const *files, int count, int *failed_index, char *error,
                                      size_t error_size);
/// Releases the caller's reference; connections that use the store keep theirs.
void rp_trust_store_release(rp_trust_store *store);
/// Makes `easy` verify peers against `store` only (CAINFO and CAPATH unset).
CURLcode rp_easy_use_trust_store(CURL *easy, rp_trust_store *store);

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
/// Waits for socket events, curl's timeout or a wakeup (at most `max_wait_ms`), then lets curl act.
/// Returns the number of transfers still running.
int rp_loop_step(rp_loop *loop, int max_wait_ms);

/// Reads the next finished transfer from the multi handle; returns 0 when there is none.
int rp_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result);

/// The CA bundle libcurl was built to use by default, as a string the caller frees; NULL when none.
char *rp_default_ca_file(void);

/// Reads one response header of the latest response that has it ("" when none has).
const char *rp_easy_last_header(CURL *easy, const char *name);

/// Reads one response header of the last request ("" when absent); the pointer lives until the next call.
const char *rp_easy_header(CURL *easy, const char *name);

#endif
