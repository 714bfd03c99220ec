#include "CMediaScan.h"

#include <string.h>

int64_t rp_id3_tag_end(const unsigned char *bytes, size_t length) {
    if (length < 10 || memcmp(bytes, "ID3", 3) != 0) return -1;
    // Four 7-bit bytes: at most 2^28 - 1, so the sum cannot overflow.
    int64_t size = 0;
    for (int i = 6; i < 10; i++) size = (size << 7) | (bytes[i] & 0x7f);
    return 10 + size + ((bytes[5] & 0x10) ? 10 : 0);
}

static uint64_t rp_big_endian(const unsigned char *bytes, int count) {
    uint64_t value = 0;
    for (int i = 0; i < count; i++) value = (value << 8) | bytes[i];
    return value;
}

int rp_mpeg4_brands_of(const unsigned char *bytes, size_t length, rp_mpeg4_brands *brands) {
    if (length < 8 || memcmp(bytes + 4, "ftyp", 4) != 0) return 0;
    uint64_t size = rp_big_endian(bytes, 4);
    size_t header = 8;
    if (size == 1) {
        if (length < 16) return 0;
        size = rp_big_endian(bytes + 8, 8);
        header = 16;
    } else if (size == 0) {
        size = length;
    }
    size_t brands_start = header + 8;  // the major brand and the minor version
    if (length < brands_start) return 0;
    size_t end = size < (uint64_t)length ? (size_t)size : length;
    if (end < brands_start) end = brands_start;
    memcpy(brands->major, bytes + header, 4);
    brands->compatible_offset = brands_start;
    brands->compatible_count = (end - brands_start) / 4;
    return 1;
}

void rp_media_scan_init(rp_media_scan *scan, int64_t limit) {
    memset(scan, 0, sizeof *scan);
    scan->limit = limit;
    scan->tag_end = -1;
}

// 'hdlr', then version/flags (4) and pre_defined (4), then the handler type: 16 bytes in a row.
static int rp_is_video_handler(const unsigned char *at) {
    return memcmp(at, "hdlr", 4) == 0 && memcmp(at + 12, "vide", 4) == 0;
}

// Looks for a video handler in body bytes [offset, offset + count) below the limit. The last 15 bytes
// searched are kept in `window` so that a handler split across chunks is found; within a chunk the
// search starts from memchr (a per-byte loop here cost more CPU than the rest of a download).
static void rp_media_scan_handler(rp_media_scan *scan, int64_t offset, const unsigned char *bytes, size_t count) {
    if (offset >= scan->limit || scan->video_handler || scan->not_mpeg4) return;
    size_t limit = count;
    if (offset + (int64_t)limit > scan->limit) limit = (size_t)(scan->limit - offset);
    if (limit == 0) return;
    // Handlers that start in the previous chunks' last 15 bytes: search the window and this chunk's
    // first 15 bytes, side by side.
    size_t carried = offset < 15 ? (size_t)offset : 15;
    if (carried > 0) {
        unsigned char joined[30];
        size_t head = limit < 15 ? limit : 15;
        memcpy(joined, scan->window + 15 - carried, carried);
        memcpy(joined + carried, bytes, head);
        for (size_t i = 0; i < carried && i + 16 <= carried + head; i++) {
            if (rp_is_video_handler(joined + i)) {
                scan->video_handler = 1;
                return;
            }
        }
    }
    // Handlers that start in this chunk (one running past its end is found with the next chunk).
    const unsigned char *from = bytes;
    size_t left = limit;
    while (left >= 16) {
        // memchr is vectorised and 'h' is rare in compressed media (memmem took ten times its CPU here).
        const unsigned char *found = memchr(from, 'h', left - 15);
        if (found == NULL) break;
        if (rp_is_video_handler(found)) {
            scan->video_handler = 1;
            return;
        }
        left -= (size_t)(found - from) + 1;
        from = found + 1;
    }
    // Keep the last 15 bytes searched (window[0..15)).
    if (limit >= 15) {
        memcpy(scan->window, bytes + limit - 15, 15);
    } else {
        memmove(scan->window, scan->window + limit, 15 - limit);
        memcpy(scan->window + 15 - limit, bytes, limit);
    }
}

void rp_media_scan_feed(rp_media_scan *scan, const unsigned char *data, size_t count) {
    if (count == 0) return;
    int64_t offset = scan->seen;
    if (offset < (int64_t)sizeof scan->start) {
        size_t take = sizeof scan->start - (size_t)offset;
        if (take > count) take = count;
        memcpy(scan->start + offset, data, take);
        size_t known = (size_t)offset + take;
        // The tag's end is known with its 10-byte header; the first box's type with 8 bytes.
        if (known == sizeof scan->start) scan->tag_end = rp_id3_tag_end(scan->start, known);
        if (known >= 8 && offset < 8 && memcmp(scan->start + 4, "ftyp", 4) != 0) scan->not_mpeg4 = 1;
    }
    rp_media_scan_handler(scan, offset, data, count);
    scan->seen = offset + (int64_t)count;
}

void rp_media_scan_buffer(rp_media_scan *scan, const unsigned char *bytes, size_t length, int64_t limit) {
    rp_media_scan_init(scan, limit);
    rp_media_scan_feed(scan, bytes, length);
}
