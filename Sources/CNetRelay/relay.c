// The shaping relay: one thread, one epoll set, non-blocking sockets, one timerfd over a timer heap.
//
// Every accepted connection is paired with a connection to its listener's upstream, opened when the
// client's emulated handshake would reach the server (see accept_all). Bytes read
// from one side go into that direction's queue of fixed-size chunks (the only copy: the kernel's
// into ours, ours into the kernel's) and are cut into segments, each stamped with the instant it may
// be written: after the link has serialised it at its rate (a token bucket of one segment, drained
// at the link's rate), plus the one-way delay, plus jitter, plus a retransmission stall for a lost
// one. Segments leave in order. A full direction stops reading, so the sender sees TCP's
// back-pressure.
//
// Memory: a direction holds at most its link's delay-bandwidth product, and all directions together
// at most the configured budget. Chunks are allocated as bytes arrive and freed as they leave, so
// what the relay holds follows what is in flight on the emulated links, not the connection count. A
// direction that may not grow (the budget is spent, or it holds its share of it) leaves the epoll
// set's read interest and waits in a FIFO; freed chunks wake the waiters in order. Each direction may
// hold one chunk whatever the budget: its progress then depends only on its own peers, never on
// another connection, so a spent budget slows connections but cannot deadlock them.

#define _GNU_SOURCE
#include "CNetRelay.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

enum kind { KIND_WAKE, KIND_TIMER, KIND_LISTENER, KIND_CLIENT, KIND_UPSTREAM };

struct handle {
    enum kind kind;
};

struct listener {
    struct handle handle;
    int fd;
    struct sockaddr_storage target;
    socklen_t target_length;
    struct listener *next;
};

struct conn;

struct endpoint {
    struct handle handle;
    int fd;
    uint32_t registered; // events currently in the epoll set; 0 = not in it
    struct conn *conn;
};

struct segment {
    uint32_t length;
    int64_t due;
};

// One piece of a direction's queue; the data of a direction is contiguous across its chunks.
struct chunk {
    struct chunk *next;
    uint8_t data[CNR_CHUNK_BYTES];
};

// At most this many chunks are filled by one read and emptied by one write.
enum { READ_CHUNKS = 8, WRITE_CHUNKS = 16 };

struct direction {
    const struct cnr_link *link;
    struct endpoint *from;
    struct endpoint *to;
    uint32_t capacity;   // the most bytes held, fixed per direction (the link's delay-bandwidth product)
    struct chunk *first; // chunks exist only while they hold bytes
    struct chunk *last;
    uint32_t chunks;
    uint32_t head;  // offset of the first unwritten byte in first
    uint32_t count; // bytes held
    struct segment *segments; // a ring that grows as needed, freed when the direction is empty
    uint32_t segment_allocated;
    uint32_t segment_limit; // the most segments held, fixed per direction
    uint32_t segment_head;
    uint32_t segment_count;
    uint32_t head_written; // bytes of the head segment already written
    int64_t link_free;     // when the link finishes serialising what it has
    int64_t last_due;      // segments never overtake each other
    int64_t not_before;    // the handshake: nothing leaves before
    int eof_read;
    int64_t eof_due;
    int shut;
    int write_blocked;
    int waiting; // in the relay's FIFO of directions waiting for the budget
    struct direction *wait_previous;
    struct direction *wait_next;
    size_t heap_index; // SIZE_MAX when not in the heap
    int64_t timer_due;
    uint64_t random;
};

struct conn {
    struct endpoint client;
    struct endpoint upstream;
    struct direction up;
    struct direction down;
    int connected;
    int connecting;         // connect() called on the upstream socket
    int64_t connect_due;    // when it is called: the client's handshake reaches the server then
    const struct sockaddr_storage *upstream_target; // the listener's, which outlives its connections
    socklen_t upstream_target_length;
    int dead;
    struct conn *previous;
    struct conn *next;
};

struct cnr_relay {
    struct cnr_config config;
    int epoll_fd;
    int wake_fd;
    int timer_fd;
    struct handle wake_handle;
    struct handle timer_handle;
    pthread_t thread;
    pthread_mutex_t lock; // guards listeners (added from other threads)
    struct listener *listeners;
    int accepting_paused;
    int64_t accept_retry; // when a paused accept is tried again; 0 = not paused
    uint64_t held;        // buffer bytes held now (chunks and segment rings); the loop's own copy
    uint64_t holding;     // directions holding at least one chunk
    struct direction *waiters_first;
    struct direction *waiters_last;
    struct conn *conns;
    struct conn *dead;
    struct direction **heap;
    size_t heap_count;
    size_t heap_capacity;
    int64_t armed;
    uint64_t next_id;
    _Atomic uint64_t accepted;
    _Atomic uint64_t active;
    _Atomic uint64_t upstream_failures;
    _Atomic uint64_t bytes_up;
    _Atomic uint64_t bytes_down;
    _Atomic uint64_t lost_segments;
    _Atomic uint64_t buffer_bytes;
    _Atomic uint64_t peak_buffer_bytes;
    _Atomic uint64_t budget_waits;
    _Atomic uint64_t descriptor_failures;
    _Atomic uint64_t descriptors;
};

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// SplitMix64: a small, seedable generator, one state per direction.
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// MARK: - Timer heap (earliest due first)

static void heap_swap(struct cnr_relay *relay, size_t a, size_t b) {
    struct direction *t = relay->heap[a];
    relay->heap[a] = relay->heap[b];
    relay->heap[b] = t;
    relay->heap[a]->heap_index = a;
    relay->heap[b]->heap_index = b;
}

static void heap_up(struct cnr_relay *relay, size_t i) {
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (relay->heap[parent]->timer_due <= relay->heap[i]->timer_due) break;
        heap_swap(relay, i, parent);
        i = parent;
    }
}

static void heap_down(struct cnr_relay *relay, size_t i) {
    for (;;) {
        size_t left = 2 * i + 1, right = left + 1, least = i;
        if (left < relay->heap_count && relay->heap[left]->timer_due < relay->heap[least]->timer_due) least = left;
        if (right < relay->heap_count && relay->heap[right]->timer_due < relay->heap[least]->timer_due) least = right;
        if (least == i) break;
        heap_swap(relay, i, least);
        i = least;
    }
}

static void heap_remove(struct cnr_relay *relay, struct direction *d) {
    size_t i = d->heap_index;
    if (i == SIZE_MAX) return;
    size_t last = relay->heap_count - 1;
    if (i != last) {
        heap_swap(relay, i, last);
    }
    relay->heap_count--;
    d->heap_index = SIZE_MAX;
    if (i < relay->heap_count) {
        heap_down(relay, i);
        heap_up(relay, i);
    }
}

static int heap_set(struct cnr_relay *relay, struct direction *d, int64_t due) {
    if (d->heap_index != SIZE_MAX) {
        d->timer_due = due;
        heap_down(relay, d->heap_index);
        heap_up(relay, d->heap_index);
        return 0;
    }
    if (relay->heap_count == relay->heap_capacity) {
        size_t capacity = relay->heap_capacity ? relay->heap_capacity * 2 : 256;
        struct direction **grown = realloc(relay->heap, capacity * sizeof *grown);
        if (!grown) return ENOMEM;
        relay->heap = grown;
        relay->heap_capacity = capacity;
    }
    d->timer_due = due;
    d->heap_index = relay->heap_count;
    relay->heap[relay->heap_count++] = d;
    heap_up(relay, d->heap_index);
    return 0;
}

static void arm_timer(struct cnr_relay *relay) {
    int64_t due = relay->heap_count ? relay->heap[0]->timer_due : 0;
    if (relay->accept_retry && (due == 0 || relay->accept_retry < due)) due = relay->accept_retry;
    if (due == relay->armed) return;
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    if (due > 0) {
        spec.it_value.tv_sec = due / 1000000000;
        spec.it_value.tv_nsec = due % 1000000000;
    }
    timerfd_settime(relay->timer_fd, TFD_TIMER_ABSTIME, &spec, NULL);
    relay->armed = due;
}

// MARK: - Connections

static uint32_t segment_size(const struct cnr_relay *relay) {
    return relay->config.segment_bytes ? relay->config.segment_bytes : 1448;
}

// Enough to keep the link busy through its delay, jitter and one stall, with a margin; never
// less than 16 KiB nor more than 8 MiB. An unpaced direction holds 256 KiB.
static uint32_t direction_capacity(const struct cnr_link *link) {
    if (link->bits_per_second == 0) return 256 * 1024;
    double seconds = (double)(link->delay_ns + link->jitter_ns + (link->loss_ppm ? link->stall_ns : 0)) / 1e9;
    double bytes = (double)link->bits_per_second / 8.0 * seconds * 1.25 + 16 * 1024;
    if (bytes > 8.0 * 1024 * 1024) bytes = 8.0 * 1024 * 1024;
    return (uint32_t)bytes;
}

static void update_interest(struct cnr_relay *relay, struct endpoint *endpoint);

// MARK: - Buffer memory and the budget

static void account(struct cnr_relay *relay, int64_t delta) {
    relay->held += (uint64_t)delta;
    atomic_store_explicit(&relay->buffer_bytes, relay->held, memory_order_relaxed);
    if (delta > 0 && relay->held > atomic_load_explicit(&relay->peak_buffer_bytes, memory_order_relaxed)) {
        atomic_store_explicit(&relay->peak_buffer_bytes, relay->held, memory_order_relaxed);
    }
}

static void set_waiting(struct cnr_relay *relay, struct direction *d, int waiting) {
    if (d->waiting == waiting) return;
    d->waiting = waiting;
    if (waiting) {
        d->wait_next = NULL;
        d->wait_previous = relay->waiters_last;
        if (relay->waiters_last) relay->waiters_last->wait_next = d;
        else relay->waiters_first = d;
        relay->waiters_last = d;
        atomic_fetch_add_explicit(&relay->budget_waits, 1, memory_order_relaxed);
    } else {
        if (d->wait_previous) d->wait_previous->wait_next = d->wait_next;
        else relay->waiters_first = d->wait_next;
        if (d->wait_next) d->wait_next->wait_previous = d->wait_previous;
        else relay->waiters_last = d->wait_previous;
        d->wait_previous = d->wait_next = NULL;
    }
}

// Whether d may take one more chunk, having already claimed `claimed` chunks for the read at hand.
static int may_grow(const struct cnr_relay *relay, const struct direction *d, uint32_t claimed) {
    uint64_t chunks = (uint64_t)d->chunks + claimed;
    if (chunks == 0) return 1; // the floor: one chunk each, whatever the budget
    uint64_t budget = relay->config.buffer_budget;
    if (budget == 0) return 1;
    if (relay->held + (uint64_t)(claimed + 1) * sizeof(struct chunk) > budget) return 0;
    uint64_t holding = relay->holding + (d->chunks == 0 ? 1 : 0);
    return (chunks + 1) * sizeof(struct chunk) <= budget / holding;
}

// Free bytes at the end of the last chunk.
static uint32_t tail_room(const struct direction *d) {
    return (uint32_t)((uint64_t)d->chunks * CNR_CHUNK_BYTES - d->head - d->count);
}

static void append_chunk(struct cnr_relay *relay, struct direction *d, struct chunk *chunk) {
    chunk->next = NULL;
    if (d->last) d->last->next = chunk;
    else d->first = chunk;
    d->last = chunk;
    if (d->chunks++ == 0) relay->holding++;
    account(relay, (int64_t)sizeof *chunk);
}

static void free_first_chunk(struct cnr_relay *relay, struct direction *d) {
    struct chunk *chunk = d->first;
    d->first = chunk->next;
    if (!d->first) d->last = NULL;
    free(chunk);
    if (--d->chunks == 0) relay->holding--;
    account(relay, -(int64_t)sizeof *chunk);
}

// Drops the first n held bytes (written), freeing every chunk they emptied.
static void consume(struct cnr_relay *relay, struct direction *d, uint32_t n) {
    d->head += n;
    d->count -= n;
    while (d->first && d->head >= CNR_CHUNK_BYTES) {
        free_first_chunk(relay, d);
        d->head -= CNR_CHUNK_BYTES;
    }
    if (d->count == 0) {
        while (d->first) free_first_chunk(relay, d);
        d->head = 0;
    }
}

// Makes room for at least `wanted` segments (at most the direction's limit). Returns 0 or ENOMEM.
static int grow_segments(struct cnr_relay *relay, struct direction *d, uint32_t wanted) {
    if (wanted > d->segment_limit) wanted = d->segment_limit;
    if (d->segment_allocated >= wanted) return 0;
    uint32_t size = d->segment_allocated ? d->segment_allocated : 32;
    while (size < wanted) size *= 2;
    if (size > d->segment_limit) size = d->segment_limit;
    struct segment *grown = malloc((size_t)size * sizeof *grown);
    if (!grown) return ENOMEM;
    for (uint32_t i = 0; i < d->segment_count; i++) {
        grown[i] = d->segments[(d->segment_head + i) % d->segment_allocated];
    }
    free(d->segments);
    account(relay, ((int64_t)size - (int64_t)d->segment_allocated) * (int64_t)sizeof *grown);
    d->segments = grown;
    d->segment_allocated = size;
    d->segment_head = 0;
    return 0;
}

static void free_buffers(struct cnr_relay *relay, struct direction *d) {
    while (d->first) free_first_chunk(relay, d);
    d->head = 0;
    d->count = 0;
    if (d->segments) {
        free(d->segments);
        account(relay, -(int64_t)d->segment_allocated * (int64_t)sizeof *d->segments);
        d->segments = NULL;
    }
    d->segment_allocated = 0;
    d->segment_head = 0;
    d->segment_count = 0;
}

// Wakes directions waiting for the budget, first come first served, while the budget has room.
static void wake_waiters(struct cnr_relay *relay) {
    uint64_t budget = relay->config.buffer_budget;
    if (!relay->waiters_first || relay->held + sizeof(struct chunk) > budget) return;
    // Wake about as many as the free chunks can serve, so a freed chunk does not stir every waiter.
    uint64_t room = (budget - relay->held) / sizeof(struct chunk);
    struct direction *last = relay->waiters_last;
    for (;;) {
        struct direction *d = relay->waiters_first;
        if (!d || room == 0) break;
        set_waiting(relay, d, 0);
        update_interest(relay, d->from); // back to the end of the line when still held by its share
        if (d->waiting) atomic_fetch_sub_explicit(&relay->budget_waits, 1, memory_order_relaxed); // the same wait
        else room--;
        if (d == last) break;
    }
}

enum read_state { READ_NO, READ_YES, READ_BUDGET };

static enum read_state read_state(const struct cnr_relay *relay, const struct direction *d) {
    if (d->eof_read || d->count >= d->capacity || d->segment_count >= d->segment_limit) return READ_NO;
    if (tail_room(d) > 0 || may_grow(relay, d, 0)) return READ_YES;
    return READ_BUDGET;
}

// MARK: - Accepting and closing

static void kill_conn(struct cnr_relay *relay, struct conn *conn, int reset_client);

static void resume_accepting(struct cnr_relay *relay) {
    if (!relay->accepting_paused) return;
    // Written under the lock: cnr_relay_add_route reads it from another thread.
    pthread_mutex_lock(&relay->lock);
    relay->accepting_paused = 0;
    relay->accept_retry = 0;
    for (struct listener *l = relay->listeners; l; l = l->next) {
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = &l->handle};
        epoll_ctl(relay->epoll_fd, EPOLL_CTL_MOD, l->fd, &event);
    }
    pthread_mutex_unlock(&relay->lock);
}

// Out of descriptors (or memory): stop listening rather than spin, until a connection closes or
// 100 ms have passed (the descriptors may belong to the rest of the process, which closes them too).
static void pause_accepting(struct cnr_relay *relay) {
    pthread_mutex_lock(&relay->lock);
    relay->accepting_paused = 1;
    relay->accept_retry = now_ns() + 100 * 1000000LL;
    for (struct listener *l = relay->listeners; l; l = l->next) {
        struct epoll_event event = {.events = 0, .data.ptr = &l->handle};
        epoll_ctl(relay->epoll_fd, EPOLL_CTL_MOD, l->fd, &event);
    }
    pthread_mutex_unlock(&relay->lock);
}

static void kill_conn(struct cnr_relay *relay, struct conn *conn, int reset_client) {
    if (conn->dead) return;
    conn->dead = 1;
    heap_remove(relay, &conn->up);
    heap_remove(relay, &conn->down);
    set_waiting(relay, &conn->up, 0);
    set_waiting(relay, &conn->down, 0);
    if (reset_client) {
        // The client sees what it would see if the far end reset the connection.
        struct linger linger = {.l_onoff = 1, .l_linger = 0};
        setsockopt(conn->client.fd, SOL_SOCKET, SO_LINGER, &linger, sizeof linger);
    }
    close(conn->client.fd);
    close(conn->upstream.fd);
    atomic_fetch_sub_explicit(&relay->descriptors, CNR_DESCRIPTORS_PER_CONNECTION, memory_order_relaxed);
    conn->client.registered = 0;
    conn->upstream.registered = 0;
    free_buffers(relay, &conn->up);
    free_buffers(relay, &conn->down);
    if (conn->previous) conn->previous->next = conn->next;
    else relay->conns = conn->next;
    if (conn->next) conn->next->previous = conn->previous;
    // Freed after the current batch of events, which may still name it.
    conn->next = relay->dead;
    conn->previous = NULL;
    relay->dead = conn;
    atomic_fetch_sub_explicit(&relay->active, 1, memory_order_relaxed);
    resume_accepting(relay);
}

// Stamps n newly read bytes: cut into segments, each with the instant it may leave.
static void schedule(struct cnr_relay *relay, struct direction *d, uint32_t n, int64_t now) {
    const struct cnr_link *link = d->link;
    uint32_t size = segment_size(relay);
    while (n > 0) {
        uint32_t length = n < size ? n : size;
        n -= length;
        int64_t start = now;
        if (d->link_free > start) start = d->link_free;
        if (d->not_before > start) start = d->not_before;
        int64_t serialised = start;
        if (link->bits_per_second) {
            serialised += (int64_t)((double)length * 8.0 * 1e9 / (double)link->bits_per_second);
        }
        d->link_free = serialised;
        int64_t due = serialised + (int64_t)link->delay_ns;
        if (link->jitter_ns) due += (int64_t)(next_random(&d->random) % (link->jitter_ns + 1));
        if (link->loss_ppm && next_random(&d->random) % 1000000 < link->loss_ppm) {
            due += (int64_t)link->stall_ns;
            atomic_fetch_add_explicit(&relay->lost_segments, 1, memory_order_relaxed);
        }
        if (due < d->last_due) due = d->last_due;
        d->last_due = due;
        uint32_t tail = (d->segment_head + d->segment_count) % d->segment_allocated;
        d->segments[tail].length = length;
        d->segments[tail].due = due;
        d->segment_count++;
    }
}

static void flush(struct cnr_relay *relay, struct direction *d);
static void start_upstream(struct cnr_relay *relay, struct conn *conn);

static void read_side(struct cnr_relay *relay, struct direction *d) {
    if (read_state(relay, d) != READ_YES) return;
    uint32_t size = segment_size(relay);
    uint32_t tail = tail_room(d);
    uint32_t room = d->capacity - d->count;
    if (room > tail + READ_CHUNKS * CNR_CHUNK_BYTES) room = tail + READ_CHUNKS * CNR_CHUNK_BYTES;
    // Segments are never split across a read, so the segment ring needs room for this read's pieces.
    if (grow_segments(relay, d, d->segment_count + (room + size - 1) / size) != 0) {
        kill_conn(relay, d->from->conn, 1);
        return;
    }
    uint64_t segment_room = (uint64_t)(d->segment_allocated - d->segment_count) * size;
    if (room > segment_room) room = (uint32_t)segment_room;
    struct iovec parts[1 + READ_CHUNKS];
    struct chunk *fresh[READ_CHUNKS];
    int count = 0;
    uint32_t made = 0, asked = 0;
    if (tail > 0) {
        uint32_t length = tail < room ? tail : room;
        parts[count++] = (struct iovec){d->last->data + CNR_CHUNK_BYTES - tail, length};
        asked = length;
    }
    int out_of_memory = 0;
    while (asked < room && made < READ_CHUNKS && may_grow(relay, d, made)) {
        fresh[made] = malloc(sizeof(struct chunk));
        if (!fresh[made]) {
            out_of_memory = 1;
            break;
        }
        uint32_t length = room - asked < CNR_CHUNK_BYTES ? room - asked : CNR_CHUNK_BYTES;
        parts[count++] = (struct iovec){fresh[made]->data, length};
        asked += length;
        made++;
    }
    if (asked == 0) {
        // Out of memory, the connection cannot be carried. Otherwise the segment ring grown above
        // spent the last of the budget (read_state allowed a chunk before it grew): the direction
        // holds a chunk already, so it waits for the budget like any other, as update_interest
        // now finds it (READ_BUDGET).
        if (out_of_memory) kill_conn(relay, d->from->conn, 1);
        return;
    }
    ssize_t n = readv(d->from->fd, parts, count);
    int64_t now = now_ns();
    // Keep the fresh chunks the read reached; the others were never counted.
    uint32_t in_tail = tail < room ? tail : room;
    uint32_t beyond = n > 0 && (uint32_t)n > in_tail ? (uint32_t)n - in_tail : 0;
    uint32_t used = (beyond + CNR_CHUNK_BYTES - 1) / CNR_CHUNK_BYTES;
    for (uint32_t i = 0; i < made; i++) {
        if (i < used) append_chunk(relay, d, fresh[i]);
        else free(fresh[i]);
    }
    if (n > 0) {
        d->count += (uint32_t)n;
        atomic_fetch_add_explicit(d == &d->from->conn->up ? &relay->bytes_up : &relay->bytes_down, (uint64_t)n,
                                  memory_order_relaxed);
        schedule(relay, d, (uint32_t)n, now);
        flush(relay, d);
    } else if (n == 0) {
        d->eof_read = 1;
        int64_t due = now + (int64_t)d->link->delay_ns;
        if (d->not_before > due) due = d->not_before;
        d->eof_due = due > d->last_due ? due : d->last_due;
        flush(relay, d);
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        kill_conn(relay, d->from->conn, 1);
    }
}

// Writes every segment that is due; sets a timer for the next one, or ends the direction.
static void flush(struct cnr_relay *relay, struct direction *d) {
    struct conn *conn = d->from->conn;
    if (conn->dead || d->shut) return;
    int64_t now = now_ns();
    if (d->to == &conn->upstream && !conn->connected) {
        if (conn->connecting) return;
        if (now < conn->connect_due) {
            // Without its timer the connection would never be opened: out of memory, it is dropped.
            if (heap_set(relay, d, conn->connect_due) != 0) kill_conn(relay, conn, 1);
            return;
        }
        heap_remove(relay, d);
        start_upstream(relay, conn);
        if (conn->dead || !conn->connected) return;
    }
    // One write covers at most WRITE_CHUNKS chunks; the loop goes on with the rest.
    const uint32_t most = (WRITE_CHUNKS - 1) * CNR_CHUNK_BYTES;
    while (d->segment_count > 0 && !d->write_blocked) {
        uint32_t bytes = 0;
        for (uint32_t i = 0; i < d->segment_count && bytes < most + d->head_written; i++) {
            const struct segment *s = &d->segments[(d->segment_head + i) % d->segment_allocated];
            if (s->due > now) break;
            bytes += s->length;
        }
        bytes -= d->head_written;
        if (bytes == 0) break;
        if (bytes > most) bytes = most;
        struct iovec parts[WRITE_CHUNKS];
        int count = 0;
        uint32_t offset = d->head, left = bytes;
        for (struct chunk *c = d->first; c && left > 0; c = c->next) {
            uint32_t length = CNR_CHUNK_BYTES - offset < left ? CNR_CHUNK_BYTES - offset : left;
            parts[count++] = (struct iovec){c->data + offset, length};
            left -= length;
            offset = 0;
        }
        // sendmsg, not writev: a peer that closed must not raise SIGPIPE in the host process.
        struct msghdr message = {.msg_iov = parts, .msg_iovlen = (size_t)count};
        ssize_t n = sendmsg(d->to->fd, &message, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                d->write_blocked = 1;
                break;
            }
            if (errno == EINTR) continue;
            kill_conn(relay, conn, 1);
            return;
        }
        consume(relay, d, (uint32_t)n);
        uint32_t written = d->head_written + (uint32_t)n;
        while (d->segment_count > 0 && written >= d->segments[d->segment_head].length) {
            written -= d->segments[d->segment_head].length;
            d->segment_head = (d->segment_head + 1) % d->segment_allocated;
            d->segment_count--;
        }
        d->head_written = written;
        if ((uint32_t)n < bytes) {
            d->write_blocked = 1;
            break;
        }
    }
    if (d->segment_count == 0 && d->count == 0) {
        free_buffers(relay, d);
        d->head_written = 0;
    }
    if (d->write_blocked) {
        heap_remove(relay, d);
    } else if (d->segment_count > 0) {
        heap_set(relay, d, d->segments[d->segment_head].due);
    } else if (d->eof_read) {
        if (now >= d->eof_due) {
            heap_remove(relay, d);
            shutdown(d->to->fd, SHUT_WR);
            d->shut = 1;
        } else {
            heap_set(relay, d, d->eof_due);
        }
    } else {
        heap_remove(relay, d);
    }
    if (conn->up.shut && conn->down.shut) {
        kill_conn(relay, conn, 0);
        return;
    }
    update_interest(relay, d->from);
    update_interest(relay, d->to);
}

static void update_interest(struct cnr_relay *relay, struct endpoint *endpoint) {
    struct conn *conn = endpoint->conn;
    if (conn->dead) return;
    int is_client = endpoint == &conn->client;
    struct direction *outgoing = is_client ? &conn->up : &conn->down;
    struct direction *incoming = is_client ? &conn->down : &conn->up;
    uint32_t events = 0;
    if (!is_client && !conn->connected) {
        // A socket not yet connecting would report EPOLLHUP at once: it waits outside the set.
        events = conn->connecting ? EPOLLOUT : 0;
    } else {
        enum read_state state = read_state(relay, outgoing);
        if (state == READ_YES) events |= EPOLLIN;
        // Stopped by the budget alone: wait in line for chunks others free.
        set_waiting(relay, outgoing, state == READ_BUDGET);
        if (incoming->write_blocked) events |= EPOLLOUT;
    }
    if (events == endpoint->registered) return;
    // An endpoint with nothing to wait for leaves the set, so a hung-up peer cannot spin the loop.
    struct epoll_event event = {.events = events, .data.ptr = &endpoint->handle};
    if (events == 0) {
        epoll_ctl(relay->epoll_fd, EPOLL_CTL_DEL, endpoint->fd, NULL);
    } else if (endpoint->registered == 0) {
        epoll_ctl(relay->epoll_fd, EPOLL_CTL_ADD, endpoint->fd, &event);
    } else {
        epoll_ctl(relay->epoll_fd, EPOLL_CTL_MOD, endpoint->fd, &event);
    }
    endpoint->registered = events;
}

static void init_direction(struct cnr_relay *relay, struct direction *d, const struct cnr_link *link,
                           struct endpoint *from, struct endpoint *to, uint64_t salt) {
    memset(d, 0, sizeof *d);
    d->link = link;
    d->from = from;
    d->to = to;
    d->capacity = direction_capacity(link);
    d->segment_limit = d->capacity / 512 + 16;
    d->heap_index = SIZE_MAX;
    d->random = relay->config.seed ^ (salt * 0xD1B54A32D192ED03ULL);
}

static void accept_all(struct cnr_relay *relay, struct listener *listener) {
    for (int round = 0; round < 64; round++) {
        int fd = accept4(listener->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                atomic_fetch_add_explicit(&relay->descriptor_failures, 1, memory_order_relaxed);
            }
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) pause_accepting(relay);
            return;
        }
        int upstream = socket(listener->target.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (upstream < 0 && (errno == EMFILE || errno == ENFILE)) {
            atomic_fetch_add_explicit(&relay->descriptor_failures, 1, memory_order_relaxed);
        }
        struct conn *conn = upstream >= 0 ? calloc(1, sizeof *conn) : NULL;
        if (!conn) {
            if (upstream >= 0) close(upstream);
            close(fd);
            continue;
        }
        atomic_fetch_add_explicit(&relay->descriptors, CNR_DESCRIPTORS_PER_CONNECTION, memory_order_relaxed);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(upstream, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn->client = (struct endpoint){.handle = {KIND_CLIENT}, .fd = fd, .conn = conn};
        conn->upstream = (struct endpoint){.handle = {KIND_UPSTREAM}, .fd = upstream, .conn = conn};
        uint64_t id = ++relay->next_id;
        init_direction(relay, &conn->up, &relay->config.up, &conn->client, &conn->upstream, 2 * id);
        init_direction(relay, &conn->down, &relay->config.down, &conn->upstream, &conn->client, 2 * id + 1);
        int64_t now = now_ns();
        conn->up.not_before = now + (int64_t)relay->config.handshake_ns;
        conn->next = relay->conns;
        if (relay->conns) relay->conns->previous = conn;
        relay->conns = conn;
        atomic_fetch_add_explicit(&relay->accepted, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&relay->active, 1, memory_order_relaxed);
        // The server sees the connection when the client's handshake would reach it: one round trip
        // (SYN, SYN-ACK) and the last ACK's one-way delay after the accept, with the first bytes
        // right behind it, as accept() returns on a real network. Connected at once, the server
        // would see a silent connection for that long and could close it for want of a request.
        conn->connect_due = now + (int64_t)relay->config.handshake_ns + (int64_t)relay->config.up.delay_ns;
        conn->upstream_target = &listener->target;
        conn->upstream_target_length = listener->target_length;
        update_interest(relay, &conn->client);
        flush(relay, &conn->up);
    }
}

// Calls connect() on the upstream socket (from flush, once the connection is due).
static void start_upstream(struct cnr_relay *relay, struct conn *conn) {
    conn->connecting = 1;
    int rc = connect(conn->upstream.fd, (const struct sockaddr *)conn->upstream_target, conn->upstream_target_length);
    if (rc == 0) {
        conn->connected = 1;
    } else if (errno != EINPROGRESS) {
        atomic_fetch_add_explicit(&relay->upstream_failures, 1, memory_order_relaxed);
        kill_conn(relay, conn, 1);
        return;
    }
    update_interest(relay, &conn->upstream);
}

static void on_endpoint(struct cnr_relay *relay, struct endpoint *endpoint, uint32_t events) {
    struct conn *conn = endpoint->conn;
    if (conn->dead) return;
    int is_client = endpoint == &conn->client;
    if (!is_client && !conn->connected) {
        int error = 0;
        socklen_t length = sizeof error;
        getsockopt(endpoint->fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0) {
            atomic_fetch_add_explicit(&relay->upstream_failures, 1, memory_order_relaxed);
            kill_conn(relay, conn, 1);
            return;
        }
        if (!(events & (EPOLLOUT | EPOLLHUP | EPOLLERR))) return;
        conn->connected = 1;
        update_interest(relay, &conn->upstream);
        flush(relay, &conn->up);
        return;
    }
    struct direction *outgoing = is_client ? &conn->up : &conn->down;
    struct direction *incoming = is_client ? &conn->down : &conn->up;
    if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
        incoming->write_blocked = 0;
        flush(relay, incoming);
        if (conn->dead) return;
    }
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        read_side(relay, outgoing);
        if (conn->dead) return;
    }
    update_interest(relay, &conn->client);
    update_interest(relay, &conn->upstream);
}

static void on_timer(struct cnr_relay *relay) {
    uint64_t expirations;
    ssize_t ignored = read(relay->timer_fd, &expirations, sizeof expirations);
    (void)ignored;
    relay->armed = -1; // a fired timer is disarmed
    int64_t now = now_ns();
    if (relay->accept_retry && relay->accept_retry <= now) resume_accepting(relay);
    while (relay->heap_count > 0 && relay->heap[0]->timer_due <= now) {
        struct direction *d = relay->heap[0];
        heap_remove(relay, d);
        flush(relay, d);
    }
}

static void *run(void *argument) {
    struct cnr_relay *relay = argument;
    pthread_setname_np(pthread_self(), "richpush-relay");
    struct epoll_event events[256];
    for (;;) {
        arm_timer(relay);
        int n = epoll_wait(relay->epoll_fd, events, 256, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        int stopping = 0;
        for (int i = 0; i < n; i++) {
            struct handle *handle = events[i].data.ptr;
            switch (handle->kind) {
            case KIND_WAKE:
                stopping = 1;
                break;
            case KIND_TIMER:
                on_timer(relay);
                break;
            case KIND_LISTENER:
                accept_all(relay, (struct listener *)handle);
                break;
            case KIND_CLIENT:
            case KIND_UPSTREAM:
                on_endpoint(relay, (struct endpoint *)handle, events[i].events);
                break;
            }
        }
        wake_waiters(relay);
        while (relay->dead) {
            struct conn *conn = relay->dead;
            relay->dead = conn->next;
            free(conn);
        }
        if (stopping) break;
    }
    while (relay->conns) kill_conn(relay, relay->conns, 1);
    while (relay->dead) {
        struct conn *conn = relay->dead;
        relay->dead = conn->next;
        free(conn);
    }
    return NULL;
}

int cnr_relay_start(const struct cnr_config *config, struct cnr_relay **out) {
    struct cnr_relay *relay = calloc(1, sizeof *relay);
    if (!relay) return ENOMEM;
    relay->config = *config;
    relay->armed = 0;
    relay->wake_handle.kind = KIND_WAKE;
    relay->timer_handle.kind = KIND_TIMER;
    atomic_store_explicit(&relay->descriptors, CNR_FIXED_DESCRIPTORS, memory_order_relaxed);
    relay->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    relay->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    relay->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    int error = 0;
    if (relay->epoll_fd < 0 || relay->wake_fd < 0 || relay->timer_fd < 0) error = errno;
    if (!error) {
        struct epoll_event wake = {.events = EPOLLIN, .data.ptr = &relay->wake_handle};
        struct epoll_event timer = {.events = EPOLLIN, .data.ptr = &relay->timer_handle};
        if (epoll_ctl(relay->epoll_fd, EPOLL_CTL_ADD, relay->wake_fd, &wake) != 0 ||
            epoll_ctl(relay->epoll_fd, EPOLL_CTL_ADD, relay->timer_fd, &timer) != 0) {
            error = errno;
        }
    }
    if (!error) error = pthread_mutex_init(&relay->lock, NULL);
    if (!error) {
        error = pthread_create(&relay->thread, NULL, run, relay);
        if (error) pthread_mutex_destroy(&relay->lock);
    }
    if (error) {
        if (relay->epoll_fd >= 0) close(relay->epoll_fd);
        if (relay->wake_fd >= 0) close(relay->wake_fd);
        if (relay->timer_fd >= 0) close(relay->timer_fd);
        free(relay);
        return error;
    }
    *out = relay;
    return 0;
}

int cnr_relay_add_route(struct cnr_relay *relay, const char *host, uint16_t port, uint16_t *listen_port) {
    struct listener *listener = calloc(1, sizeof *listener);
    if (!listener) return ENOMEM;
    listener->handle.kind = KIND_LISTENER;
    struct addrinfo hints, *found = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    char service[8];
    snprintf(service, sizeof service, "%u", (unsigned)port);
    if (getaddrinfo(host, service, &hints, &found) != 0 || !found) {
        free(listener);
        return -1;
    }
    memcpy(&listener->target, found->ai_addr, found->ai_addrlen);
    listener->target_length = found->ai_addrlen;
    freeaddrinfo(found);
    listener->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listener->fd < 0) {
        int error = errno;
        free(listener);
        return error;
    }
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof address;
    struct epoll_event event = {.events = EPOLLIN, .data.ptr = &listener->handle};
    pthread_mutex_lock(&relay->lock);
    int error = 0;
    if (bind(listener->fd, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener->fd, 4096) != 0 ||
        getsockname(listener->fd, (struct sockaddr *)&address, &length) != 0) {
        error = errno;
    }
    if (!error) {
        if (relay->accepting_paused) event.events = 0;
        if (epoll_ctl(relay->epoll_fd, EPOLL_CTL_ADD, listener->fd, &event) != 0) error = errno;
    }
    if (error) {
        pthread_mutex_unlock(&relay->lock);
        close(listener->fd);
        free(listener);
        return error;
    }
    listener->next = relay->listeners;
    relay->listeners = listener;
    atomic_fetch_add_explicit(&relay->descriptors, CNR_DESCRIPTORS_PER_ROUTE, memory_order_relaxed);
    pthread_mutex_unlock(&relay->lock);
    *listen_port = ntohs(address.sin_port);
    return 0;
}

void cnr_relay_stats(struct cnr_relay *relay, struct cnr_stats *stats) {
    stats->accepted = atomic_load_explicit(&relay->accepted, memory_order_relaxed);
    stats->active = atomic_load_explicit(&relay->active, memory_order_relaxed);
    stats->upstream_failures = atomic_load_explicit(&relay->upstream_failures, memory_order_relaxed);
    stats->bytes_up = atomic_load_explicit(&relay->bytes_up, memory_order_relaxed);
    stats->bytes_down = atomic_load_explicit(&relay->bytes_down, memory_order_relaxed);
    stats->lost_segments = atomic_load_explicit(&relay->lost_segments, memory_order_relaxed);
    stats->buffer_bytes = atomic_load_explicit(&relay->buffer_bytes, memory_order_relaxed);
    stats->peak_buffer_bytes = atomic_load_explicit(&relay->peak_buffer_bytes, memory_order_relaxed);
    stats->budget_waits = atomic_load_explicit(&relay->budget_waits, memory_order_relaxed);
    stats->descriptor_failures = atomic_load_explicit(&relay->descriptor_failures, memory_order_relaxed);
    stats->descriptors = atomic_load_explicit(&relay->descriptors, memory_order_relaxed);
}

void cnr_relay_stop(struct cnr_relay *relay) {
    uint64_t one = 1;
    ssize_t ignored = write(relay->wake_fd, &one, sizeof one);
    (void)ignored;
    pthread_join(relay->thread, NULL);
    struct listener *listener = relay->listeners;
    while (listener) {
        struct listener *next = listener->next;
        close(listener->fd);
        free(listener);
        listener = next;
    }
    close(relay->epoll_fd);
    close(relay->wake_fd);
    close(relay->timer_fd);
    free(relay->heap);
    pthread_mutex_destroy(&relay->lock);
    free(relay);
}
