#include "CCurlShim.h"

#include <errno.h>
#include <unistd.h>

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
    sink->bytes += (int64_t)total;
    return total;
}

CURLcode rp_easy_attach_sink(CURL *easy, rp_sink *sink) {
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, rp_sink_write);
    if (rc != CURLE_OK) return rc;
    return curl_easy_setopt(easy, CURLOPT_WRITEDATA, (void *)sink);
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
