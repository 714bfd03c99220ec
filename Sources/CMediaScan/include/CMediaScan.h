#ifndef RICHPUSH_CMEDIASCAN_H
#define RICHPUSH_CMEDIASCAN_H

#include <stddef.h>
#include <stdint.h>

// The media structure the sniffer needs beyond libmagic, written once for both of its inputs: a body
// streamed through the curl sink in chunks of any size, and a file read into one buffer.
//
// - A leading ID3v2 tag: "ID3", version (2 bytes), flags (1), a 28-bit size in four 7-bit bytes,
//   then a 10-byte footer when flag 0x10 is set. The audio starts where the tag ends; libmagic is
//   shown the bytes from there (rp_media_after_tag_window of them), since an MP3 behind a long tag
//   otherwise sniffs as data.
// - An MPEG-4 file: its first box is 'ftyp' (major brand, minor version, compatible brands), and a
//   track whose 'hdlr' box has handler type 'vide' is video; an audio-only file branded mp42 sniffs
//   as video/mp4 all the same. The handler is looked for as its 16 bytes in a row ('hdlr', version
//   and flags, pre_defined, the handler type) anywhere in the first `limit` bytes, not by walking box
//   sizes: no size (zero, 64-bit, truncated, past the end, overflowing) can hide or invent one, and a
//   body that does not start with an 'ftyp' box is not searched at all.
//
// Everything here is pure computation on the caller's bytes: no allocation, no I/O, no globals.

/// Bytes the sniffer shows libmagic after a leading ID3v2 tag (as many as of a file's start).
enum { rp_media_after_tag_window = 16 * 1024 };

/// Where a leading ID3v2 tag in `bytes` ends (header, size and footer: where the audio starts); -1 when
/// the bytes do not start with "ID3" or hold fewer than the tag header's 10 bytes.
int64_t rp_id3_tag_end(const unsigned char *bytes, size_t length);

/// The brands of an 'ftyp' box at the start of a file.
typedef struct rp_mpeg4_brands {
    unsigned char major[4];    // the major brand
    size_t compatible_offset;  // where the compatible brands start in the bytes
    size_t compatible_count;   // the whole 4-byte compatible brands within both the box and the bytes
} rp_mpeg4_brands;

/// Reads the 'ftyp' box `bytes` start with; returns 1 and fills `brands` when the bytes start with one
/// and hold its major brand and minor version, 0 otherwise. A size of 1 means a 64-bit size follows the
/// type; 0 means the box runs to the end of the bytes; a size past the bytes is cut at their end; a
/// size too small to hold the brands yields the major brand and no compatible ones.
int rp_mpeg4_brands_of(const unsigned char *bytes, size_t length, rp_mpeg4_brands *brands);

/// What the scan learned so far from the bytes fed to it, in order from the body's first byte.
typedef struct rp_media_scan {
    int64_t limit;           // how far to look for a video handler
    int64_t seen;            // bytes fed so far
    int64_t tag_end;         // where a leading ID3v2 tag ends (-1: no tag, or fewer than 10 bytes seen)
    int video_handler;       // a 'hdlr' box with handler type 'vide' lies within the limit
    int not_mpeg4;           // the body does not start with an 'ftyp' box: no handler is looked for
    unsigned char start[10]; // the body's first bytes (min(seen, 10) of them)
    unsigned char window[15];// the last 15 bytes searched, for a handler split across chunks
} rp_media_scan;

/// Starts a scan that looks for a video handler within the first `limit` bytes.
void rp_media_scan_init(rp_media_scan *scan, int64_t limit);
/// Feeds the next `count` bytes of the body (any split gives the same answers as one buffer).
void rp_media_scan_feed(rp_media_scan *scan, const unsigned char *data, size_t count);
/// Scans a whole buffer, the start of a file: rp_media_scan_init, then one rp_media_scan_feed.
void rp_media_scan_buffer(rp_media_scan *scan, const unsigned char *bytes, size_t length, int64_t limit);

#endif
