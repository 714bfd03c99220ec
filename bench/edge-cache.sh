#!/usr/bin/env bash
# edge-cache.sh: a campaign's burst through a CDN-like edge: nginx with proxy_cache in front of
# `richpush serve` (the origin), hits against misses, as richpush bench reads them from X-Cache.
#
# Usage: bench/edge-cache.sh        (from anywhere; nginx and the origin on 127.0.0.1 free ports only)
#
# Environment (defaults in parentheses):
#   BENCH_DEVICES=2000        devices per workload
#   BENCH_CONCURRENCY=64      richpush --concurrency
#   BENCH_ORIGIN_DELAY=50     milliseconds the origin waits before each answer (delay=MS), so a miss costs
#                             what a trip to a distant origin does
#   BENCH_IMAGE_SIZE=300000   bytes of the JPEG (Samples/assets/hero.jpg grown with comment segments)
#   BENCH_VARIANTS=20         URLs in the "variants" workload's list
#   BENCH_RATE=1000           arrivals per second (--rate): an open-loop send the client keeps up with, so
#                             latency is the edge's and the origin's, not the client's queue
#   BENCH_SKIP_BUILD=1        use the existing .build/release/richpush instead of building
#
# The workloads, each against a cold cache (nginx restarted on an empty cache folder):
#   hits      one URL, warmed with one request first: every device a hit (origin: 1 request)
#   variants  a --urls list of BENCH_VARIANTS URLs: each URL's first device misses, the rest hit
#             (proxy_cache_lock collapses the misses of one URL into one origin request)
#   misses    a cache-busting template (?_u={random}): every device its own object, every one a miss
#             (the origin takes the whole burst)
# For each: the hit ratio, end-to-end p50/p99 of hits and of misses (richpush's report), the requests
# the origin served (its access log), nginx's CPU seconds. The table and a "EDGE {json}" line per
# workload go to stdout; the commands and logs stay in bench/work/edge-cache/.
set -euo pipefail

BENCH_NAME=edge-cache
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

DEVICES=${BENCH_DEVICES:-2000}
CONCURRENCY=${BENCH_CONCURRENCY:-64}
ORIGIN_DELAY=${BENCH_ORIGIN_DELAY:-50}
IMAGE_SIZE=${BENCH_IMAGE_SIZE:-300000}
VARIANTS=${BENCH_VARIANTS:-20}
RATE=${BENCH_RATE:-1000}
require_positive BENCH_DEVICES:"$DEVICES" BENCH_CONCURRENCY:"$CONCURRENCY" BENCH_IMAGE_SIZE:"$IMAGE_SIZE" \
    BENCH_VARIANTS:"$VARIANTS" BENCH_RATE:"$RATE"
[[ $ORIGIN_DELAY =~ ^[0-9]+$ ]] || die "BENCH_ORIGIN_DELAY must be a whole number of milliseconds"

ensure_packages nginx-light curl
require_tools nginx curl python3
build_richpush

EW=$WORK/edge-cache
rm -rf "$EW"
mkdir -p "$EW/assets"
pad_asset jpeg "$ROOT/Samples/assets/hero.jpg" "$EW/assets/hero-300k.jpg" "$IMAGE_SIZE"

# The origin: richpush serve on plain HTTP, one access-log line per request it answers.
ORIGIN_PID=
stop_origin() {
    if [[ -n $ORIGIN_PID ]] && kill -0 "$ORIGIN_PID" 2>/dev/null; then
        kill -INT "$ORIGIN_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$ORIGIN_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$ORIGIN_PID" 2>/dev/null || true
        wait "$ORIGIN_PID" 2>/dev/null || true
    fi
    ORIGIN_PID=
}
bench_cleanup() { stop_run; stop_nginx; stop_origin; }
start_origin() { # LOG
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    rm -f "$EW/origin.urls"
    "$RICHPUSH" serve "$EW/assets" --no-tls --host 127.0.0.1 --port 0 --access-log >"$EW/origin.urls" 2>"$1" &
    ORIGIN_PID=$!
    # A busy machine can take seconds to start it: wait up to 30 s for its URL line.
    for _ in $(seq 600); do grep -q '^http://' "$EW/origin.urls" 2>/dev/null && break; sleep 0.05; done
    ORIGIN_PORT=$(sed -n 's#^http://127.0.0.1:\([0-9]*\)/$#\1#p' "$EW/origin.urls" | head -1)
    [[ -n $ORIGIN_PORT ]] || die "the origin did not start; see $1"
}

write_edge_conf() { # PORT STATUS_PORT
    STATUS_PORT=$2
    nginx_conf <<CONF
    proxy_cache_path $NGINX_DIR/cache levels=1:2 keys_zone=edge:32m max_size=2g inactive=10m use_temp_path=off;
    upstream origin { server 127.0.0.1:$ORIGIN_PORT; keepalive 64; }
    server {
        listen 127.0.0.1:$1 backlog=4096;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache edge;
            proxy_cache_key \$uri\$is_args\$args;
            # The origin says no-store (it is a test server); an edge caches by its own rules.
            proxy_ignore_headers Cache-Control Expires Set-Cookie;
            proxy_cache_valid 200 10m;
            proxy_cache_lock on;
            proxy_cache_lock_timeout 30s;
            add_header X-Cache \$upstream_cache_status always;
        }
    }
    server { listen 127.0.0.1:$2; location /nginx_status { stub_status; } }
CONF
}

RESULTS=$EW/results.jsonl
: >"$RESULTS"
run_workload() { # NAME URL_ARGS...
    local name=$1
    shift
    stop_nginx
    stop_origin
    start_origin "$EW/$name.origin.log"
    NGINX_DIR=$EW/nginx-$name
    rm -rf "$NGINX_DIR"
    mkdir -p "$NGINX_DIR/cache"
    start_nginx 2 write_edge_conf
    local port=${PORTS[0]} base=$EW/$name
    if [[ $name == hits ]]; then
        curl -sf -o /dev/null "http://127.0.0.1:$port/hero-300k.jpg?delay=$ORIGIN_DELAY" || die "the warm-up failed"
    fi
    local before after
    before=$(snapshot)
    ARGV=("$RICHPUSH" bench "$@" --allow-http --connect-to "cdn.example.com:80:127.0.0.1:$port"
        --devices "$DEVICES" --rate "$RATE" --concurrency "$CONCURRENCY" --json "$base.json" --no-progress --fail-under 100)
    quoted >"$base.cmd"
    log "$name: $(cat "$base.cmd")"
    run_timed "$base" 600 "${ARGV[@]}"
    after=$(snapshot)
    ((RUN_STATUS == 0)) || die "$name: richpush bench exited $RUN_STATUS (see $base.err)"
    stop_origin
    bench_python "$name" "$base.json" "$EW/$name.origin.log" "$before" "$after" "$RESULTS" <<'PY'
import json, sys
name, report_path, origin_log, before, after, results = sys.argv[1:7]
report = json.load(open(report_path))
cache = report["cache"]
origin = sum(1 for line in open(origin_log) if " GET " in line)
cpu = float(after.split()[1]) - float(before.split()[1])
row = {
    "workload": name, "devices": report["devices"], "display_rate": report["display_rate"],
    "hits": cache["results"].get("hit", 0), "misses": cache["results"].get("miss", 0),
    "hit_ratio": cache["hit_ratio"],
    "hit_p50_ms": cache["hit_latency_milliseconds"].get("p50"), "hit_p99_ms": cache["hit_latency_milliseconds"].get("p99"),
    "miss_p50_ms": cache["miss_latency_milliseconds"].get("p50"),
    "miss_p99_ms": cache["miss_latency_milliseconds"].get("p99"),
    "origin_requests": origin, "nginx_cpu_seconds": round(cpu, 2), "duration_seconds": report["duration_seconds"],
    "peak_mb_per_second": round(report["burst_timeline"]["peak_bytes_per_second"] / 1e6, 1),
    "bucket_ms": report["burst_timeline"]["bucket_milliseconds"],
}
print("EDGE " + json.dumps(row))
with open(results, "a") as f:
    f.write(json.dumps(row) + "\n")
PY
}

URL="http://cdn.example.com/hero-300k.jpg?delay=$ORIGIN_DELAY"
LIST=$EW/variants.txt
for i in $(seq "$VARIANTS"); do echo "$URL&v=$i"; done >"$LIST"

print_machine
run_workload hits --url "$URL"
run_workload variants --urls "$LIST"
run_workload misses --url "$URL&_u={random}"

bench_python "$RESULTS" "$DEVICES" "$CONCURRENCY" "$ORIGIN_DELAY" "$RATE" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"\n{sys.argv[2]} devices at {sys.argv[5]}/s, concurrency {sys.argv[3]}, origin delay {sys.argv[4]} ms, "
      "nginx proxy_cache in front")
head = ["workload", "hit ratio", "hits", "misses", "origin req", "hit p50/p99 ms", "miss p50/p99 ms", "nginx cpu s",
        "wall s", "peak MB/s"]
print(" | ".join(head))
for r in rows:
    def pair(a, b):
        return "-" if a is None else f"{a:.1f}/{b:.1f}"
    print(" | ".join([r["workload"], f"{r['hit_ratio'] * 100:.1f}%", str(r["hits"]), str(r["misses"]),
                      str(r["origin_requests"]), pair(r["hit_p50_ms"], r["hit_p99_ms"]),
                      pair(r["miss_p50_ms"], r["miss_p99_ms"]), f"{r['nginx_cpu_seconds']:.2f}",
                      f"{r['duration_seconds']:.2f}", f"{r['peak_mb_per_second']:.1f}"]))
PY
