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

/// Where a transfer's body goes: a file descriptor, with a byte cap counted as bytes arrive.
///
/// The write callback is C so the hot path never crosses into Swift. It writes every byte it is
/// given (retrying short writes and EINTR) and refuses the chunk that would pass `cap`, which
/// makes libcurl abort with CURLE_WRITE_ERROR; `cap_exceeded` then says why.
typedef struct rp_sink {
    int fd;              // -1 discards the body (bytes are still counted)
    int64_t cap;         // < 0: no cap
    int64_t bytes;       // bytes accepted so far
    int cap_exceeded;    // set when a chunk would pass the cap
    int write_errno;     // set when write(2) failed
} rp_sink;

/// Points the handle's WRITEFUNCTION/WRITEDATA at `sink`.
CURLcode rp_easy_attach_sink(CURL *easy, rp_sink *sink);

/// Reads the next finished transfer from the multi handle; returns 0 when there is none.
int rp_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result);

/// Reads one response header of the last request ("" when absent); the pointer lives until the next call.
const char *rp_easy_header(CURL *easy, const char *name);

#endif
