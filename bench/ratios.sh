#!/usr/bin/env bash
# ratios.sh: one command, one table: richpush against its peer tool for each workload of the
# performance goals (bench/RESULTS.md, "Ratios"), whole-process wall time, median of interleaved runs.
#
# Usage: bench/ratios.sh            (from anywhere; paths are found relative to this script)
#
# Environment (defaults in parentheses):
#   BENCH_RUNS=3                runs per tool and workload; round r runs every tool of a workload once,
#                               in an order that rotates each round, so drift hits every tool alike
#   BENCH_CONCURRENCY=64        in flight for every tool (richpush --concurrency / --parallel, h2load -c,
#                               curl --parallel-max)
#   BENCH_FRESH_DEVICES=4000    devices in http-fresh (h2load -n)
#   BENCH_REUSE_DEVICES=12000   devices in http-reuse
#   BENCH_TLS_DEVICES=2000      devices in https-store and downloads in fetch-store
#   BENCH_PAYLOADS=10000        payloads in batch (curl downloads)
#   BENCH_IMAGE_SIZE=300000     bytes of the JPEG of the bench and fetch workloads
#   BENCH_THREADS=2             h2load -t
#   BENCH_WORKLOADS="http-fresh http-reuse https-store batch fetch-store"
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
#   http-reuse   the same with --reuse and the keep-alive port   vs  h2load --h1 (keep-alive)
#   https-store  richpush bench over HTTPS with --cacert STORE, where STORE is a copy of the system bundle
#                with the test CA inside it (a production-sized trust store, about 140 certificates);
#                the peers: h2load (it verifies nothing) and the same richpush run with --cacert of the
#                one-certificate test CA. nginx: TLS 1.3, one cipher suite, no session cache or tickets,
#                so every connection of every tool is a full handshake
#   batch        richpush batch DIR --allow-http (10,000 payloads, one file each, pointing at five real
#                sample assets on the fresh port)   vs  curl --parallel downloading the same URLs to files
#   fetch-store  richpush fetch --repeat over HTTPS with --cacert STORE  vs  the same with the test CA
#
# Every run is checked (exit status; richpush: every device or payload attached, every download 200 with
# the right size; h2load: every request succeeded; curl: every file there with the right size) and a run
# that fails a check is reported and not counted. The table, a "RATIO {json}" line per workload (also in
# bench/work/ratios/results.jsonl) and the exact commands go to stdout.
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
if [[ -z ${BENCH_OUT_ROOT:-} && -d /dev/shm && -w /dev/shm && $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]]; then
    OUT_ROOT=/dev/shm
else
    OUT_ROOT=${BENCH_OUT_ROOT:-$WORK}
fi
read -r -a WORKLOADS <<<"${BENCH_WORKLOADS:-http-fresh http-reuse https-store batch fetch-store}"

require_positive "BENCH_RUNS:$RUNS" "BENCH_CONCURRENCY:$C" "BENCH_FRESH_DEVICES:$N_FRESH" \
    "BENCH_REUSE_DEVICES:$N_REUSE" "BENCH_TLS_DEVICES:$N_TLS" "BENCH_PAYLOADS:$N_BATCH" \
    "BENCH_IMAGE_SIZE:$IMAGE_SIZE" "BENCH_THREADS:$THREADS" "BENCH_TIMEOUT:$RUN_TIMEOUT"
((C <= 300)) || die "BENCH_CONCURRENCY ($C) must be at most 300 (curl's --parallel-max limit)"
for count in "$N_FRESH" "$N_REUSE" "$N_TLS" "$N_BATCH"; do
    ((C <= count)) || die "BENCH_CONCURRENCY ($C) must not exceed any device or payload count (h2load needs -n >= -c)"
    ((count <= 100000)) || die "device and payload counts are capped at 100000"
done
((${#WORKLOADS[@]})) || die "BENCH_WORKLOADS is empty"
for w in "${WORKLOADS[@]}"; do
    [[ $w =~ ^(http-fresh|http-reuse|https-store|batch|fetch-store)$ ]] || die "unknown workload '$w' in BENCH_WORKLOADS"
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
python3 - "$SYSTEM_BUNDLE" "$CA" "$STORE" <<'EOF' || die "could not write the trust store"
import sys
bundle, ca, out = sys.argv[1:]
certs = open(bundle).read().split("-----END CERTIFICATE-----")
certs = [c + "-----END CERTIFICATE-----\n" for c in certs if "-----BEGIN CERTIFICATE-----" in c]
middle = len(certs) // 2
certs.insert(middle, open(ca).read())
open(out, "w").write("".join(certs))
print(len(certs), file=open(out + ".count", "w"))
EOF
STORE_CERTS=$(<"$STORE.count")

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
    python3 - "$RW" "$BATCH_IN" "$N_BATCH" "$FRESH_PORT" "${ASSETS[@]}" <<'EOF'
import json, os, sys
rw, inp, n, port, *assets = sys.argv[1:]
n = int(n)
os.makedirs(inp)
sizes = {a: os.path.getsize(os.path.join(rw, "www", a)) for a in assets}
expected = {}
with open(os.path.join(rw, "urls.cfg"), "w") as cfg:
    for i in range(1, n + 1):
        asset = assets[(i - 1) % len(assets)]
        ext = asset.rsplit(".", 1)[1]
        url = f"http://127.0.0.1:{port}/{asset}?n={i}"
        payload = {"aps": {"alert": {"title": "t", "body": "b"}, "mutable-content": 1},
                   "ab": {"att": {"url": url, "type": ext}}}
        with open(os.path.join(inp, f"p{i:06d}.json"), "w") as f:
            f.write(json.dumps(payload, separators=(",", ":")) + "\n")
        cfg.write(f'url = "{url}"\noutput = "p{i:06d}.{ext}"\n')
        expected[f"p{i:06d}.{ext}"] = sizes[asset]
json.dump(expected, open(os.path.join(rw, "expected.json"), "w"))
EOF
fi

# --- 2. the runs -----------------------------------------------------------------------------------
tools_of() { # workload: the tools, richpush's first
    case $1 in
    http-fresh | http-reuse) echo richpush h2load ;;
    https-store) echo richpush richpush-1ca h2load ;;
    batch) echo richpush curl ;;
    fetch-store) echo richpush richpush-1ca ;;
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
        --connect-to "cdn.example.com:$default_port:127.0.0.1:$port" --json "$json" --no-progress "$@")
}
run_argv() { # workload tool base
    local w=$1 tool=$2 base=$3
    case $w/$tool in
    http-fresh/richpush) bench_argv http "$FRESH_PORT" "$N_FRESH" "$base.json" --allow-http ;;
    http-fresh/h2load) ARGV=("$H2LOAD" --h1 -n "$N_FRESH" -c "$C" -t "$T" "http://127.0.0.1:$FRESH_PORT/$IMAGE") ;;
    http-reuse/richpush) bench_argv http "$REUSE_PORT" "$N_REUSE" "$base.json" --allow-http --reuse ;;
    http-reuse/h2load) ARGV=("$H2LOAD" --h1 -n "$N_REUSE" -c "$C" -t "$T" "http://127.0.0.1:$REUSE_PORT/$IMAGE") ;;
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
        python3 - "$CURL_OUT" "$RW/expected.json" >"$base.files" <<'EOF'
import json, os, sys
out, expected = sys.argv[1], json.load(open(sys.argv[2]))
bad = sum(1 for name, size in expected.items()
          if not os.path.isfile(os.path.join(out, name)) or os.path.getsize(os.path.join(out, name)) != size)
print(len(expected) - bad, bad)
EOF
        rm -rf "$CURL_OUT" ;;
    esac
    printf '    %-11s %-12s round %d: exit %d, %d connections, %.2f s\n' "$w" "$tool" "$round" "$RUN_STATUS" \
        "$((after - before - 1))" "$(python3 -c "print($RUN_T1 - $RUN_T0)")" >&2
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
        for tool in "${order[@]}"; do run_one "$w" "$tool" "$round"; done
    done
done

# --- 3. the table ----------------------------------------------------------------------------------
summary_status=0
bench_python "$RW" "$RUNS" "${WORKLOADS[*]}" "$N_FRESH" "$N_REUSE" "$N_TLS" "$N_BATCH" "$IMAGE_SIZE" \
    <<'EOF' || summary_status=$?
import json, re, statistics, sys

rw, runs, workloads = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
counts = dict(zip(["http-fresh", "http-reuse", "https-store", "batch"], map(int, sys.argv[4:8])))
counts["fetch-store"] = counts["https-store"]
image_size = int(sys.argv[8])
TOOLS = {"http-fresh": ["richpush", "h2load"], "http-reuse": ["richpush", "h2load"],
         "https-store": ["richpush", "richpush-1ca", "h2load"], "batch": ["richpush", "curl"],
         "fetch-store": ["richpush", "richpush-1ca"]}
# (workload, tool, peer, goal, what): the ratios the goals are set on.
GOALS = [("http-fresh", "richpush", "h2load", 0.9, "bench, fresh connections, HTTP"),
         ("http-reuse", "richpush", "h2load", 0.8, "bench --reuse, HTTP"),
         ("https-store", "richpush", "h2load", 0.4, "bench, fresh, HTTPS, production-sized store"),
         ("https-store", "richpush", "richpush-1ca", 0.9, "the same, against the one-certificate CA"),
         ("batch", "richpush", "curl", 0.8, "batch vs curl --parallel, fresh connections"),
         ("fetch-store", "richpush", "richpush-1ca", 0.9, "fetch, HTTPS, production-sized store vs test CA")]

def check(w, tool, base, items):
    """Why the run does not count, or None."""
    status, conns, *_ = read(base + ".meta", "-1 -1").split()
    if int(status) != 0:
        return f"exit {status}"
    out, err = read(base + ".out"), read(base + ".err")
    if tool == "h2load":
        m = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded", out)
        if not m or int(m.group(1)) != items:
            return "h2load: not every request succeeded"
        if not re.search(r"status codes: (\d+) 2xx", out) or int(re.search(r"status codes: (\d+) 2xx", out).group(1)) != items:
            return "h2load: not every status was 2xx"
    elif tool == "curl":
        ok, bad = map(int, read(base + ".files", "0 -1").split())
        if ok != items or bad != 0:
            return f"curl: {bad} files missing or of the wrong size"
    elif w == "batch":
        try:
            s = json.loads(read(base + ".summary.json", "{}"))
        except ValueError:
            return "batch: no summary.json"
        attached = (s.get("verdicts") or {}).get("attached")
        if attached != items:
            return f"batch: {attached} of {items} attached"
    elif w == "fetch-store":
        m = re.search(r'"succeeded"\s*:\s*(\d+)', out)
        if not m or int(m.group(1)) != items:
            return "fetch: not every download succeeded"
    else:
        try:
            r = json.loads(read(base + ".json", "{}"))
        except ValueError:
            return "bench: no JSON report"
        if r.get("display_rate") != 1 or r.get("devices") != items:
            return f"bench: display rate {r.get('display_rate')} over {r.get('devices')} devices"
    return None

def client_bound(base):
    try:
        return bool(((json.loads(read(base + ".json", "{}")).get("client") or {}).get("bound")))
    except ValueError:
        return None

rows, problems, lines = {}, [], []
for w in workloads:
    items = counts[w]
    for tool in TOOLS[w]:
        rates, cpus, rss, bound = [], [], [], []
        for r in range(1, runs + 1):
            base = f"{rw}/runs/{w}-{tool}-{r}"
            _, _, _, _, t0, t1 = (read(base + ".meta", "-1 -1 0 0 0 0").split() + ["0"] * 6)[:6]
            why = check(w, tool, base, items)
            if why:
                problems.append(f"{w} {tool} round {r}: {why} (see {base}.out/.err); not counted")
                continue
            wall = float(t1) - float(t0)
            rates.append(items / wall)
            tm = read(base + ".time").strip().splitlines()
            if tm:
                _, peak, user, system = tm[-1].split()
                cpus.append((float(user) + float(system)) / items * 1e6)
                rss.append(int(peak) / 1024)
            if tool.startswith("richpush") and w != "batch" and w != "fetch-store":
                bound.append(client_bound(base))
        rows[(w, tool)] = {"rates": rates, "median": statistics.median(rates) if rates else None,
                           "cpu_us": statistics.median(cpus) if cpus else None,
                           "rss_mb": max(rss) if rss else None, "client_bound": any(b for b in bound if b)}

print()
print(f"{'workload':<48} {'richpush/s':>11} {'peer/s':>9} {'ratio':>7} {'goal':>6}  met  runs (per s)")
results = []
for w, tool, peer, goal, what in GOALS:
    if w not in workloads:
        continue
    a, b = rows[(w, tool)], rows[(w, peer)]
    ratio = a["median"] / b["median"] if a["median"] and b["median"] else None
    met = ratio is not None and ratio >= goal
    label = f"{what} (vs {peer})"
    runs_text = " ".join(f"{x:.0f}" for x in a["rates"]) + " | " + " ".join(f"{x:.0f}" for x in b["rates"])
    print(f"{label:<48} {f(a['median']):>11} {f(b['median']):>9} {f(ratio, '{:.2f}x'):>7} {goal:>5.2f}x  "
          f"{'yes' if met else 'NO ':<4} {runs_text}")
    results.append({"workload": w, "tool": tool, "peer": peer, "goal": goal, "ratio": ratio, "met": met,
                    "rate": a["median"], "peer_rate": b["median"], "runs": a["rates"], "peer_runs": b["rates"]})
print()
print(f"{'workload/tool':<28} {'CPU us/item':>12} {'peak RSS MB':>12}  client-bound")
for (w, tool), row in rows.items():
    print(f"{w + ' ' + tool:<28} {f(row['cpu_us']):>12} {f(row['rss_mb'], '{:.1f}'):>12}  "
          f"{'yes' if row['client_bound'] else '-'}")
with open(f"{rw}/results.jsonl", "w") as out:
    for r in results:
        line = json.dumps(r)
        out.write(line + "\n")
        print("RATIO " + line)
for p in problems:
    print("problem: " + p)
sys.exit(1 if problems else 0)
EOF

[[ $OUT_ROOT == /dev/shm ]] && rm -rf "$BATCH_IN"
echo
echo "commands (round 1):"
for f in "$RW"/runs/*-1.cmd; do printf '  %s\n' "$(<"$f")"; done
echo "batch and curl outputs: $OUT_ROOT ($(stat -f -c %T "$OUT_ROOT" 2>/dev/null || echo "?"))"
echo "trust store: $STORE ($STORE_CERTS certificates: $SYSTEM_BUNDLE with the test CA inside)"
print_machine
echo "  richpush: $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?'), $("$H2LOAD" --version | head -1), $("$CURL" --version | head -1 | cut -d' ' -f1-2)"
exit "$summary_status"
