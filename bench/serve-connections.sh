#!/usr/bin/env bash
# bench/serve-connections.sh: what `richpush serve` costs with many connections open at once.
#
# Starts `richpush serve Samples/assets` (HTTP and HTTPS on 127.0.0.1, ports chosen by the system),
# opens CONNECTIONS connections to its HTTP port from one Python process (half send nothing, half
# send `GET /hero.jpg?delay=60000` and wait: slow clients and slow responses, the connections a
# server must hold), waits until the server holds them all (its open descriptors), and reads its
# /proc/PID/status: Threads, VmRSS and VmHWM. While they are open it times one fresh GET. Then it
# closes everything and stops the server (SIGINT). Only 127.0.0.1.
#
#   bench/serve-connections.sh                         # 2000 connections, .build/release/richpush (or debug)
#   CONNECTIONS=500 RICHPUSH=/path/to/richpush bench/serve-connections.sh
#
# Prints one line: `serve-connections {json}`.
set -euo pipefail

NAME=serve-connections
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve-lib.sh"
CONNECTIONS=${CONNECTIONS:-2000}
[[ $CONNECTIONS =~ ^[1-9][0-9]*$ ]] || { echo "serve-connections: CONNECTIONS must be a positive integer" >&2; exit 1; }

start_serve
for _ in $(seq 100); do [[ -s $SCRATCH/urls ]] && break; sleep 0.1; done
URL=$(head -n 1 "$SCRATCH/urls")
[[ $URL =~ ^http://127\.0\.0\.1:([0-9]+)/$ ]] || { echo "serve-connections: server did not start" >&2; cat "$SCRATCH/stderr" >&2; exit 1; }
PORT=${BASH_REMATCH[1]}

python3 - "$SERVER_PID" "$PORT" "$CONNECTIONS" "$RICHPUSH" <<'PY'
import json, resource, socket, sys, time

pid, port, count, binary = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, count + 256)), hard))

def status():
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Threads", "VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields

def descriptors():
    import os
    return len(os.listdir(f"/proc/{pid}/fd"))

before = status()
fds_before = descriptors()
held, failed = [], 0
started = time.monotonic()
for index in range(count):
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        if index % 2 == 0:
            sock.sendall(b"GET /hero.jpg?delay=60000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        held.append(sock)
    except OSError:
        failed += 1
deadline = time.monotonic() + 60
while descriptors() - fds_before < len(held) and time.monotonic() < deadline:
    time.sleep(0.05)
opened = time.monotonic() - started
time.sleep(0.5)
during = status()
held_by_server = descriptors() - fds_before
fresh_started = time.monotonic()
fresh = socket.create_connection(("127.0.0.1", port), timeout=30)
fresh.sendall(b"GET /hero.jpg HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
answer = b""
while True:
    chunk = fresh.recv(65536)
    if not chunk:
        break
    answer += chunk
fresh.close()
fresh_ms = (time.monotonic() - fresh_started) * 1000
for sock in held:
    sock.close()
print("serve-connections " + json.dumps({
    "binary": binary, "connections": count, "open": len(held), "failed": failed, "held_by_server": held_by_server,
    "seconds_to_open": round(opened, 2),
    "threads_before": before["Threads"], "threads_with_connections": during["Threads"],
    "rss_kb_before": before["VmRSS"], "rss_kb_with_connections": during["VmRSS"], "peak_rss_kb": during["VmHWM"],
    "fresh_get_status": int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else None,
    "fresh_get_ms": round(fresh_ms, 1),
}))
PY
