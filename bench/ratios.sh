#!/usr/bin/env bash
# ratios.sh: one command, one table: richpush against its peer tool for each workload of the
# performance goals (bench/RESULTS.md, "Ratios"), whole-process wall time, median of interleaved runs;
# and, for the two HTTP bench workloads, richpush's CPU per device against curl's per transfer.
#
# Usage: bench/ratios.sh            (from anywhere; paths are found relative to this script)
#
# Environment (defaults in parentheses):
#   BENCH_RUNS=3                runs per tool and workload; round r runs every tool of a workload once,
#                               in an order that rotates each round, so drift hits every tool alike
#   BENCH_CONCURRENCY=64        in flight for every tool (richpush --concurrency / --parallel, h2load -c,
#                               curl --parallel-max)
#   BENCH_FRESH_DEVICES=4000    devices in http-fresh (h2load -n, curl transfers)
#   BENCH_REUSE_DEVICES=12000   devices in http-reuse (the same)
#   BENCH_TLS_DEVICES=2000      devices in https-store and downloads in fetch-store
#   BENCH_PAYLOADS=10000        payloads in batch (curl downloads)
#   BENCH_IMAGE_SIZE=300000     bytes of the JPEG of the bench and fetch workloads
#   BENCH_THREADS=2             h2load -t
#   BENCH_STARTUP_RUNS=50       sequential runs per tool and round in the start-up workloads
#   BENCH_WORKLOADS="http-fresh http-reuse https-store batch fetch-store startup-process startup-sniff"
#   BENCH_OUT_ROOT=/dev/shm     where batch and curl write their outputs (bench/work when /dev/shm is not a
#                               writable tmpfs). On ext4, creating files in a folder emptied by the previous
#                               run costs whichever tool runs next a scan of recently deleted inodes (40% of
#                               batch's CPU in a profile), which measures the file system's allocator, not
#                               the tools; set BENCH_OUT_ROOT=bench/work to include it anyway
#   BENCH_TIMEOUT=300           seconds allowed for any single run before it is killed
#   BENCH_SKIP_BUILD=1          use the existing .build/release/richpush instead of building
#
# The workloads (nginx on 127.0.0.1 only, as the current user; the JPEG is Samples/assets/hero.jpg grown
# with comment segments; "fresh" ports close after every response, so each download is a new connection):
#   http-fresh   richpush bench --url http://cdn.example.com/hero-300k.jpg --allow-http --connect-to ...
#                    --devices N --concurrency C        vs  h2load --h1 -n N -c C -t T (fresh port)
#                and vs  curl --parallel --parallel-max C --parallel-immediate --connect-to ... -K CONFIG: the
#                same N GETs of the same URL (CONFIG: N times url = ..., output = "/dev/null"), one
#                -w '%{http_code} %{size_download}' line each; its row compares CPU (user + system) per
#                transfer, richpush's per device against curl's (goal: at most curl's), not wall time
#   http-reuse   the same with --reuse and the keep-alive port   vs  h2load --h1 (keep-alive), and vs curl
#                on the keep-alive port (curl keeps its connections open between transfers by itself)
#   https-store  richpush bench over HTTPS with --cacert STORE, where STORE is a copy of the system bundle
#                with the test CA inside it (a production-sized trust store, about 140 certificates);
#                the peers: h2load (it verifies nothing) and the same richpush run with --cacert of the
#                one-certificate test CA. nginx: TLS 1.3, one cipher suite, no session cache or tickets,
#                so every connection of every tool is a full handshake
#   batch        richpush batch DIR --allow-http (10,000 payloads, one file each, pointing at five real
#                sample assets on the fresh port)   vs  curl --parallel downloading the same URLs to files
#   fetch-store  richpush fetch --repeat over HTTPS with --cacert STORE  vs  the same with the test CA
#   startup-process  richpush process PAYLOAD --allow-http (one payload, Samples/assets/hero.jpg on the fresh
#                port), one process at a time  vs  curl fetching the same URL to a file; whole-process wall
#                time of each, the median of all runs; /bin/true under the same wrappers shows their cost
#   startup-sniff    richpush sniff FILE  vs  file -b --mime-type FILE (the same JPEG)
#
# Every richpush bench run has --fail-under 100. Every run is checked (exit status; richpush bench: its
# report's --fail-under 100 threshold passed, every device shown; batch and process: every payload attached;
# fetch: every download succeeded; h2load: every request succeeded with 2xx; curl: every file there with the
# right size, and in http-fresh and http-reuse N lines on stdout, each "200 SIZE"; sniff and file:
# image/jpeg) and a run that fails a check is reported and not counted (the script then exits 1). The table
# (the goals in its last column; ratios above 1 favour richpush in every row), CPU per item, wall time and
# nginx's accepted connections per tool, a "RATIO {json}" line per row (also in
# bench/work/ratios/results.jsonl) and the exact commands go to stdout. This script runs the tools; its
# Python (inputs, checks, the report) is bench/ratios.py, tested by bench/test_ratios.py (lib.sh's free
# ports, nginx snapshots and JPEG padding keep their own small Python).
set -euo pipefail

BENCH_NAME=ratios
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

RW=$WORK/ratios
RUNS=${BENCH_RUNS:-3}
C=${BENCH_CONCURRENCY:-64}
N_FRESH=${BENCH_FRESH_DEVICES:-4000}
N_REUSE=${BENCH_REUSE_DEVICES:-12000}
N_TLS=${BENCH_TLS_DEVICES:-2000}
N_BATCH=${BENCH_PAYLOADS:-10000}
IMAGE_SIZE=${BENCH_IMAGE_SIZE:-300000}
THREADS=${BENCH_THREADS:-2}
RUN_TIMEOUT=${BENCH_TIMEOUT:-300}
N_STARTUP=${BENCH_STARTUP_RUNS:-50}
PY=(python3 "$BENCH_DIR/ratios.py")
if [[ -z ${BENCH_OUT_ROOT:-} && -d /dev/shm && -w /dev/shm && $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]]; then
    OUT_ROOT=/dev/shm
else
    OUT_ROOT=${BENCH_OUT_ROOT:-$WORK}
fi
ALL_WORKLOADS="http-fresh http-reuse https-store batch fetch-store startup-process startup-sniff"
read -r -a WORKLOADS <<<"${BENCH_WORKLOADS:-$ALL_WORKLOADS}"

require_positive "BENCH_RUNS:$RUNS" "BENCH_CONCURRENCY:$C" "BENCH_FRESH_DEVICES:$N_FRESH" \
    "BENCH_REUSE_DEVICES:$N_REUSE" "BENCH_TLS_DEVICES:$N_TLS" "BENCH_PAYLOADS:$N_BATCH" \
    "BENCH_IMAGE_SIZE:$IMAGE_SIZE" "BENCH_THREADS:$THREADS" "BENCH_TIMEOUT:$RUN_TIMEOUT" \
    "BENCH_STARTUP_RUNS:$N_STARTUP"
((C <= 300)) || die "BENCH_CONCURRENCY ($C) must be at most 300 (curl's --parallel-max limit)"
for count in "$N_FRESH" "$N_REUSE" "$N_TLS" "$N_BATCH"; do
    ((C <= count)) || die "BENCH_CONCURRENCY ($C) must not exceed any device or payload count (h2load needs -n >= -c)"
    ((count <= 100000)) || die "device and payload counts are capped at 100000"
done
((N_STARTUP <= 10000)) || die "BENCH_STARTUP_RUNS is capped at 10000"
((${#WORKLOADS[@]})) || die "BENCH_WORKLOADS is empty"
for w in "${WORKLOADS[@]}"; do
    [[ " $ALL_WORKLOADS " == *" $w "* ]] || die "unknown workload '$w' in BENCH_WORKLOADS (known: $ALL_WORKLOADS)"
done
[[ -d $OUT_ROOT && -w $OUT_ROOT ]] || mkdir -p "$OUT_ROOT" || die "BENCH_OUT_ROOT ($OUT_ROOT) is not a writable folder"
OUT_ROOT=$(cd "$OUT_ROOT" && pwd)
T=$((THREADS < C ? THREADS : C))

# --- 0. tools and build ----------------------------------------------------------------------------
ensure_packages nginx-light nghttp2-client curl time file ca-certificates
require_tools nginx h2load curl python3 timeout file
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (package time)"
H2LOAD=$(command -v h2load)
CURL=$(command -v curl)
FILE=$(command -v file)
TRUE=$(type -P true) || die "no true program on PATH (coreutils)"
TIME=(/usr/bin/time -f '%e %M %U %S' -o)
CA=$ROOT/Samples/certs/ca.pem
SYSTEM_BUNDLE=/etc/ssl/certs/ca-certificates.crt
ASSETS=(hero.jpg hero.png banner.gif chime.mp3 clip.mp4)
for f in "$CA" "$ROOT/Samples/certs/server.pem" "$ROOT/Samples/certs/server-key.pem" "$SYSTEM_BUNDLE" \
    "${ASSETS[@]/#/$ROOT/Samples/assets/}"; do
    [[ -s $f ]] || die "missing $f"
done
build_richpush

# --- 1. work folder, assets, trust store, payloads -------------------------------------------------
BATCH_IN=$OUT_ROOT/ratios-batch-in
BATCH_OUT=$OUT_ROOT/ratios-batch-out
CURL_OUT=$OUT_ROOT/ratios-curl-out
rm -rf "$RW" "$BATCH_IN" "$BATCH_OUT" "$CURL_OUT"
mkdir -p "$RW/runs" "$RW/tmp" "$RW/www"
IMAGE=hero-300k.jpg
pad_asset jpeg "$ROOT/Samples/assets/hero.jpg" "$RW/www/$IMAGE" "$IMAGE_SIZE"
for asset in "${ASSETS[@]}"; do cp "$ROOT/Samples/assets/$asset" "$RW/www/$asset"; done
[[ $(file -b --mime-type "$RW/www/$IMAGE") == image/jpeg ]] || die "$IMAGE is not a JPEG"
# The production-sized store: the system bundle with the test CA in the middle of it, as one file.
STORE=$RW/trust-store.pem
STORE_CERTS=$("${PY[@]}" trust-store "$SYSTEM_BUNDLE" "$CA" "$STORE") || die "could not write the trust store"

NGINX_DIR=$RW
write_conf() { # status http-fresh http-reuse https-fresh
    nginx_conf <<EOF
    types { image/jpeg jpg; image/png png; image/gif gif; audio/mpeg mp3; video/mp4 mp4; }
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    root $RW/www;
    server { listen 127.0.0.1:$1; location / { } location = /nginx_status { stub_status; } }
    server { listen 127.0.0.1:$2 backlog=4096; keepalive_timeout 0; location / { } }
    server { listen 127.0.0.1:$3 backlog=4096; keepalive_requests 1000000; keepalive_timeout 60s; location / { } }
    server {
        listen 127.0.0.1:$4 ssl backlog=4096;
        keepalive_timeout 0;
$(nginx_full_handshakes)
        location / { }
    }
EOF
}
start_nginx 4 write_conf
STATUS_PORT=${PORTS[0]} FRESH_PORT=${PORTS[1]} REUSE_PORT=${PORTS[2]} TLS_PORT=${PORTS[3]}
read -r probe _ < <(snapshot)
((probe >= 0)) || die "nginx on 127.0.0.1:$STATUS_PORT does not answer /nginx_status"
log "nginx pid $NGINX_PID on 127.0.0.1: $FRESH_PORT (HTTP fresh), $REUSE_PORT (HTTP keep-alive), $TLS_PORT (HTTPS fresh)"

if [[ " ${WORKLOADS[*]} " == *" batch "* ]]; then
    log "writing $N_BATCH payloads to $BATCH_IN and the curl config"
    "${PY[@]}" payloads "$RW" "$BATCH_IN" "$N_BATCH" "$FRESH_PORT" "${ASSETS[@]}" || die "could not write the payloads"
fi
# The bench workloads' curl configs: the URL richpush bench downloads, once per device, bodies to /dev/null.
BENCH_URL=http://cdn.example.com/$IMAGE
for w in http-fresh http-reuse; do
    [[ " ${WORKLOADS[*]} " == *" $w "* ]] || continue
    n=$N_FRESH
    [[ $w == http-reuse ]] && n=$N_REUSE
    "${PY[@]}" curl-config "$RW/$w.cfg" "$BENCH_URL" "$n" || die "could not write $RW/$w.cfg"
done
# The start-up workloads: one payload whose attachment is on the fresh port, the file curl must write.
STARTUP_URL=http://127.0.0.1:$FRESH_PORT/hero.jpg
STARTUP_PAYLOAD=$RW/startup-payload.json
STARTUP_OUT=$RW/startup-out
STARTUP_FILE=$RW/www/hero.jpg
"${PY[@]}" payload "$STARTUP_URL" jpg "$STARTUP_PAYLOAD" || die "could not write $STARTUP_PAYLOAD"
"${PY[@]}" expect "$RW/startup-expected.json" "hero.jpg=$STARTUP_FILE" || die "could not write the expected size"

# --- 2. the runs -----------------------------------------------------------------------------------
tools_of() { # workload: the tools, richpush's first
    case $1 in
    http-fresh | http-reuse) echo richpush h2load curl ;;
    https-store) echo richpush richpush-1ca h2load ;;
    batch) echo richpush curl ;;
    fetch-store) echo richpush richpush-1ca ;;
    startup-process) echo richpush curl true ;;
    startup-sniff) echo richpush file ;;
    esac
}
items_of() { # workload
    case $1 in
    http-fresh) echo "$N_FRESH" ;; http-reuse) echo "$N_REUSE" ;; batch) echo "$N_BATCH" ;; *) echo "$N_TLS" ;;
    esac
}
bench_argv() { # scheme port devices json [extra...]
    local scheme=$1 port=$2 devices=$3 json=$4 default_port=443
    shift 4
    [[ $scheme == http ]] && default_port=80
    ARGV=("$RICHPUSH" bench --url "$scheme://cdn.example.com/$IMAGE" --devices "$devices" --concurrency "$C"
        --connect-to "cdn.example.com:$default_port:127.0.0.1:$port" --json "$json" --no-progress --fail-under 100 "$@")
}
# curl doing richpush bench's HTTP transfers: the URLs of CONFIG (the same URL, Host and connection target as
# bench_argv's), C at a time, each body to /dev/null, one "status bytes" line per transfer on stdout.
curl_bench_argv() { # port config
    ARGV=("$CURL" -q --parallel --parallel-max "$C" --parallel-immediate --noproxy '*' --fail -sS
        --connect-to "cdn.example.com:80:127.0.0.1:$1" -w '%{http_code} %{size_download}\n' -K "$2")
}
run_argv() { # workload tool base
    local w=$1 tool=$2 base=$3
    case $w/$tool in
    http-fresh/richpush) bench_argv http "$FRESH_PORT" "$N_FRESH" "$base.json" --allow-http ;;
    http-fresh/h2load) ARGV=("$H2LOAD" --h1 -n "$N_FRESH" -c "$C" -t "$T" "http://127.0.0.1:$FRESH_PORT/$IMAGE") ;;
    http-fresh/curl) curl_bench_argv "$FRESH_PORT" "$RW/http-fresh.cfg" ;;
    http-reuse/richpush) bench_argv http "$REUSE_PORT" "$N_REUSE" "$base.json" --allow-http --reuse ;;
    http-reuse/h2load) ARGV=("$H2LOAD" --h1 -n "$N_REUSE" -c "$C" -t "$T" "http://127.0.0.1:$REUSE_PORT/$IMAGE") ;;
    http-reuse/curl) curl_bench_argv "$REUSE_PORT" "$RW/http-reuse.cfg" ;;
    https-store/richpush) bench_argv https "$TLS_PORT" "$N_TLS" "$base.json" --cacert "$STORE" ;;
    https-store/richpush-1ca) bench_argv https "$TLS_PORT" "$N_TLS" "$base.json" --cacert "$CA" ;;
    https-store/h2load) ARGV=("$H2LOAD" --h1 -n "$N_TLS" -c "$C" -t "$T" "https://127.0.0.1:$TLS_PORT/$IMAGE") ;;
    batch/richpush) ARGV=("$RICHPUSH" batch "$BATCH_IN" --out "$BATCH_OUT" --allow-http --concurrency "$C"
        --no-progress --force) ;;
    batch/curl) ARGV=("$CURL" -q --parallel --parallel-max "$C" --parallel-immediate --noproxy '*' --fail -sS
        --output-dir "$CURL_OUT" -w '%{http_code} %{size_download}\n' -K "$RW/urls.cfg") ;;
    fetch-store/richpush | fetch-store/richpush-1ca)
        local cacert=$STORE
        [[ $tool == richpush-1ca ]] && cacert=$CA
        ARGV=("$RICHPUSH" fetch "https://cdn.example.com/$IMAGE" --cacert "$cacert"
            --connect-to "cdn.example.com:443:127.0.0.1:$TLS_PORT" --repeat "$N_TLS" --parallel "$C") ;;
    startup-process/richpush) ARGV=("$RICHPUSH" process "$STARTUP_PAYLOAD" --allow-http --out "$STARTUP_OUT" -q) ;;
    startup-process/curl) ARGV=("$CURL" -q --noproxy '*' --fail -sS -o "$STARTUP_OUT/hero.jpg" "$STARTUP_URL") ;;
    startup-process/true) ARGV=("$TRUE") ;;
    startup-sniff/richpush) ARGV=("$RICHPUSH" sniff "$STARTUP_FILE") ;;
    startup-sniff/file) ARGV=("$FILE" -b --mime-type "$STARTUP_FILE") ;;
    *) die "no command for $w/$tool" ;;
    esac
}
run_one() { # workload tool round
    local w=$1 tool=$2 round=$3 base="$RW/runs/$1-$2-$3" before after cpu0 cpu1
    run_argv "$w" "$tool" "$base"
    quoted >"$base.cmd"
    case $w/$tool in
    batch/richpush) rm -rf "$BATCH_OUT" ;;
    batch/curl) rm -rf "$CURL_OUT" && mkdir -p "$CURL_OUT" ;;
    esac
    sync
    read -r before cpu0 < <(snapshot)
    run_timed "$base" "$RUN_TIMEOUT" "${ARGV[@]}"
    read -r after cpu1 < <(snapshot)
    # The "after" status request is itself one accepted connection.
    echo "$RUN_STATUS $((after - before - 1)) $cpu0 $cpu1 $RUN_T0 $RUN_T1" >"$base.meta"
    case $w/$tool in
    batch/richpush)
        cp "$BATCH_OUT/summary.json" "$base.summary.json" 2>/dev/null || true
        rm -rf "$BATCH_OUT" ;;
    batch/curl)
        "${PY[@]}" count-files "$CURL_OUT" "$RW/expected.json" >"$base.files" || true
        rm -rf "$CURL_OUT" ;;
    esac
    printf '    %-15s %-12s round %d: exit %d, %d connections, %s s\n' "$w" "$tool" "$round" "$RUN_STATUS" \
        "$((after - before - 1))" "$(seconds_between "$RUN_T0" "$RUN_T1")" >&2
}
seconds_between() { # T0 T1 (EPOCHREALTIME values): T1 - T0 as seconds with two decimals
    local us=$((10#${2/./} - 10#${1/./}))
    printf '%d.%02d' $((us / 1000000)) $((us % 1000000 / 10000))
}
# One round of a start-up workload: N_STARTUP runs of every tool, one process at a time, the tools taking
# turns in the round's order; nothing else (no nginx snapshot, no sync) between them.
run_startup() { # workload round tool...
    local w=$1 round=$2 tool i base
    shift 2
    local -A failed=()
    mkdir -p "$STARTUP_OUT"
    for i in $(seq "$N_STARTUP"); do
        for tool in "$@"; do
            base="$RW/runs/$w-$tool-$round-$i"
            run_argv "$w" "$tool" "$base"
            if ((i == 1)); then quoted >"$RW/runs/$w-$tool-$round.cmd"; fi
            rm -rf "$STARTUP_OUT" && mkdir -p "$STARTUP_OUT"
            run_timed "$base" "$RUN_TIMEOUT" "${ARGV[@]}"
            echo "$RUN_STATUS -1 0 0 $RUN_T0 $RUN_T1" >"$base.meta"
            if [[ $w/$tool == startup-process/curl ]]; then
                "${PY[@]}" count-files "$STARTUP_OUT" "$RW/startup-expected.json" >"$base.files" || true
            fi
            ((RUN_STATUS == 0)) || failed[$tool]=$((${failed[$tool]:-0} + 1))
        done
    done
    for tool in "$@"; do
        printf '    %-15s %-12s round %d: %d runs, %d exited non-zero\n' "$w" "$tool" "$round" "$N_STARTUP" \
            "${failed[$tool]:-0}" >&2
    done
}

log "warm-up"
ARGV=("$RICHPUSH" fetch "https://cdn.example.com/$IMAGE" --cacert "$CA"
    --connect-to "cdn.example.com:443:127.0.0.1:$TLS_PORT" --repeat 100 --parallel 16)
timeout 60 "${ARGV[@]}" >/dev/null 2>&1 </dev/null || true
timeout 60 "$H2LOAD" --h1 -n 100 -c 16 -t "$T" "http://127.0.0.1:$FRESH_PORT/$IMAGE" >/dev/null 2>&1 </dev/null || true

for round in $(seq "$RUNS"); do
    log "round $round of $RUNS"
    for w in "${WORKLOADS[@]}"; do
        read -r -a tools < <(tools_of "$w")
        # Rotate the order each round: every tool goes first once in len(tools) rounds.
        shift_by=$(((round - 1) % ${#tools[@]}))
        order=("${tools[@]:shift_by}" "${tools[@]:0:shift_by}")
        if [[ $w == startup-* ]]; then
            run_startup "$w" "$round" "${order[@]}"
        else
            for tool in "${order[@]}"; do run_one "$w" "$tool" "$round"; done
        fi
    done
done

# --- 3. the table ----------------------------------------------------------------------------------
summary_status=0
"${PY[@]}" report "$RW" --runs "$RUNS" --startup-runs "$N_STARTUP" --workloads "${WORKLOADS[*]}" \
    --http-fresh "$N_FRESH" --http-reuse "$N_REUSE" --https-store "$N_TLS" --batch "$N_BATCH" \
    --fetch-store "$N_TLS" --image-size "$IMAGE_SIZE" || summary_status=$?

[[ $OUT_ROOT == /dev/shm ]] && rm -rf "$BATCH_IN"
echo
echo "commands (round 1):"
for f in "$RW"/runs/*-1.cmd; do printf '  %s\n' "$(<"$f")"; done
for w in http-fresh http-reuse; do
    [[ -s $RW/$w.cfg ]] || continue
    echo "  $RW/$w.cfg: $(($(wc -l <"$RW/$w.cfg") / 2)) times: $(head -2 "$RW/$w.cfg" | paste -sd' ')"
done
echo "batch and curl outputs: $OUT_ROOT ($(stat -f -c %T "$OUT_ROOT" 2>/dev/null || echo "?"))"
echo "trust store: $STORE ($STORE_CERTS certificates: $SYSTEM_BUNDLE with the test CA inside)"
print_machine
echo "  richpush: $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?'), $("$H2LOAD" --version | head -1), $("$CURL" --version | head -1 | cut -d' ' -f1-2), $("$FILE" --version | head -1)"
exit "$summary_status"
