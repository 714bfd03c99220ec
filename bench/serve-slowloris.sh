#!/usr/bin/env bash
# bench/serve-slowloris.sh: does `richpush serve` still answer while slowloris clients hold connections?
#
# Starts `richpush serve Samples/assets` (HTTP and HTTPS on 127.0.0.1, ports chosen by the system, its
# default limits unless SERVE_ARGS says otherwise) and, from one Python process on 127.0.0.1, keeps
# SLOWLORIS connections open to its HTTP port for DURATION seconds. Each sends a request line and a Host
# line, then one more header line every INTERVAL seconds, never ending its head (MODE=silent: sends
# nothing at all). A connection the server closes is opened again RETRY_MS later, as an attacker would.
# Meanwhile a probe thread sends `GET /hero.jpg` every PROBE_MS, alternately from 127.0.0.2 (another
# client) and from 127.0.0.1 (the attacker's own address), each given 5 s, and records status and time.
# Then it closes everything and stops the server (SIGINT). Only loopback addresses are used.
#
#   bench/serve-slowloris.sh                                  # 4300 trickling connections for 30 s
#   SLOWLORIS=1000 DURATION=15 MODE=silent bench/serve-slowloris.sh
#   SERVE_ARGS='--per-ip-limit 1000 --head-timeout 2' bench/serve-slowloris.sh
#
# Prints one line: `serve-slowloris {json}` with, per probe source, how many probes were answered 200
# and their p50/p99/max time in ms; how many slowloris connections were opened, refused at once (closed
# within 0.5 s of connecting, the per-address limit) or closed later (the head deadline, with the median
# lifetime); and the most connections the server held at once (its open descriptors).
set -euo pipefail

NAME=serve-slowloris
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve-lib.sh"
SLOWLORIS=${SLOWLORIS:-4300}
DURATION=${DURATION:-30}
INTERVAL=${INTERVAL:-5}
MODE=${MODE:-trickle}
RETRY_MS=${RETRY_MS:-1000}
PROBE_MS=${PROBE_MS:-500}
for value in "$SLOWLORIS" "$DURATION" "$INTERVAL" "$RETRY_MS" "$PROBE_MS"; do
    [[ $value =~ ^[1-9][0-9]*$ ]] || { echo "$NAME: SLOWLORIS, DURATION, INTERVAL, RETRY_MS and PROBE_MS must be positive integers" >&2; exit 1; }
done
[[ $MODE == trickle || $MODE == silent ]] || { echo "$NAME: MODE is trickle or silent" >&2; exit 1; }
(( DURATION <= 600 && SLOWLORIS <= 15000 )) || { echo "$NAME: at most 600 s and 15000 connections" >&2; exit 1; }

# shellcheck disable=SC2086
start_serve ${SERVE_ARGS:-}
for _ in $(seq 100); do [[ -s $SCRATCH/urls ]] && break; sleep 0.1; done
URL=$(head -n 1 "$SCRATCH/urls")
[[ $URL =~ ^http://127\.0\.0\.1:([0-9]+)/$ ]] || { echo "$NAME: server did not start" >&2; cat "$SCRATCH/stderr" >&2; exit 1; }
PORT=${BASH_REMATCH[1]}

python3 - "$SERVER_PID" "$PORT" "$SLOWLORIS" "$DURATION" "$INTERVAL" "$MODE" "$RETRY_MS" "$PROBE_MS" "$RICHPUSH" \
    "${SERVE_ARGS:-}" <<'PY'
import errno, json, os, resource, selectors, socket, statistics, sys, threading, time

pid, port, count, duration, interval = (int(v) for v in sys.argv[1:6])
mode, retry, probe_every, binary, serve_args = sys.argv[6], int(sys.argv[7]) / 1000, int(sys.argv[8]) / 1000, sys.argv[9], sys.argv[10]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, count + 512)), hard))

def descriptors():
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0

base_fds = descriptors()
stop = threading.Event()
probes = {"127.0.0.2": [], "127.0.0.1": []}

def probe(source):
    started = time.monotonic()
    try:
        sock = socket.socket()
        sock.settimeout(5)
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        sock.sendall(b"GET /hero.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        sock.close()
        status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else None
    except OSError:
        status = None
    return status, (time.monotonic() - started) * 1000

def prober():
    sources = list(probes)
    turn = 0
    time.sleep(min(3, duration / 4))  # let the slowloris connections pile up first
    while not stop.is_set():
        source = sources[turn % 2]
        turn += 1
        probes[source].append(probe(source))
        stop.wait(probe_every)

selector = selectors.DefaultSelector()
slots = {}          # socket -> [opened_at, next_send, lines]
pending = []        # reopen times
opened = refused = deadline_closed = 0
lifetimes = []
peak_held = 0
head = b"GET /hero.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\n"

def open_one(now):
    global opened
    sock = socket.socket()
    sock.setblocking(False)
    try:
        sock.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    except OSError:
        sock.close()
        pending.append(now + retry)
        return
    opened += 1
    slots[sock] = [now, now, 0, False]
    selector.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE)

def closed(sock, now):
    global refused, deadline_closed
    started = slots.pop(sock)[0]
    selector.unregister(sock)
    sock.close()
    life = now - started
    if life < 0.5:
        refused += 1
    else:
        deadline_closed += 1
        lifetimes.append(life)
    pending.append(now + retry)

thread = threading.Thread(target=prober, daemon=True)
thread.start()
start = time.monotonic()
for _ in range(count):
    open_one(start)
last_sample = 0
while True:
    now = time.monotonic()
    if now - start >= duration:
        break
    for key, events in selector.select(timeout=0.05):
        sock = key.fileobj
        state = slots.get(sock)
        if state is None:
            continue
        if events & selectors.EVENT_READ:
            try:
                data = sock.recv(4096)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""
            if data == b"":
                closed(sock, now)
                continue
        if events & selectors.EVENT_WRITE and not state[3]:
            state[3] = True  # connected: from now on only reads are watched
            selector.modify(sock, selectors.EVENT_READ)
            if mode == "trickle":
                try:
                    sock.send(head)
                    state[1] = now + interval
                except OSError:
                    closed(sock, now)
    if mode == "trickle":
        for sock, state in list(slots.items()):
            if state[3] and state[1] <= now:
                try:
                    sock.send(b"X-Slow-%d: 1\r\n" % state[2])
                    state[2] += 1
                    state[1] = now + interval
                except OSError:
                    closed(sock, now)
    due = [t for t in pending if t <= now]
    pending[:] = [t for t in pending if t > now]
    for _ in due:
        open_one(now)
    if now - last_sample >= 1:
        last_sample = now
        peak_held = max(peak_held, descriptors() - base_fds)
stop.set()
thread.join(10)
for sock in list(slots):
    sock.close()

def summary(results):
    times = sorted(ms for status, ms in results if status == 200)
    def pick(q):
        return round(times[min(len(times) - 1, int(q * len(times)))], 1) if times else None
    return {"probes": len(results), "answered_200": len(times), "p50_ms": pick(0.5), "p99_ms": pick(0.99),
            "max_ms": round(times[-1], 1) if times else None,
            "within_1s": sum(1 for ms in times if ms <= 1000)}

print("serve-slowloris " + json.dumps({
    "binary": binary, "serve_args": serve_args, "mode": mode, "slowloris": count, "seconds": duration,
    "interval_s": interval, "opened": opened, "refused_at_once": refused, "closed_later": deadline_closed,
    "median_lifetime_s": round(statistics.median(lifetimes), 2) if lifetimes else None,
    "server_peak_connections": peak_held,
    "probe_other_address": summary(probes["127.0.0.2"]), "probe_same_address": summary(probes["127.0.0.1"]),
}))
PY
