#!/usr/bin/env bash
# burst-vs-h2load.sh: what bench/ratios.sh does not measure: `richpush bench` (emulated devices, each
# running the whole extension pipeline) against h2load (downloads only) when every device arrives at once,
# over HTTPS from a private nginx on 127.0.0.1, and richpush's peak memory for a 300 KB image and a 5 MB
# movie. The ratios with fresh and reused connections are bench/ratios.sh's.
#
# Usage: bench/burst-vs-h2load.sh          (from anywhere; paths are found relative to this script)
#
# Environment (defaults in parentheses):
#   BENCH_BURST=2000              devices arriving at once in "burst" (richpush --devices = --concurrency,
#                                 h2load -n = -c)
#   BENCH_MEMORY_DEVICES=10000    devices in "memory" (richpush only)
#   BENCH_MEMORY_CONCURRENCY=1000 richpush --concurrency in "memory"
#   BENCH_THREADS=2               h2load -t (capped at the connections)
#   BENCH_RUNS=2                  runs per tool and workload, alternating which goes first; the median run
#                                 is reported (for 2 runs, the better one)
#   BENCH_BUDGET=                 richpush --budget SECONDS (default: richpush's own, 30 s)
#   BENCH_TMPDIR=                 TMPDIR for richpush, where bench keeps the stored attachments while it runs
#                                 (default: unset, so /tmp); e.g. /dev/shm takes the disk out of the comparison
#   BENCH_IMAGE_SIZE=300000       bytes of the JPEG (hero.jpg padded with comment segments)
#   BENCH_MOVIE_SIZE=5000000      bytes of the MPEG-4 movie (clip.mp4 followed by a "free" box)
#   BENCH_WORKLOADS="burst memory"   the workloads to run
#   BENCH_TIMEOUT=120             seconds allowed for any single run before it is killed
#   BENCH_SKIP_BUILD=1            use the existing .build/release/richpush instead of building
#
# What it does:
#   1. installs nginx-light, nghttp2-client (h2load), time and file if missing (apt-get), builds
#      richpush in release mode;
#   2. makes two real assets in bench/work/burst-vs-h2load/www/ and checks them with `file --mime-type`:
#        hero-300k.jpg  Samples/assets/hero.jpg with JPEG comment (COM) segments before its EOI marker
#                       (a valid JPEG that decodes to the same 600x300 image): image/jpeg
#        clip-5m.mp4    Samples/assets/clip.mp4 followed by a top-level "free" box: video/mp4
#   3. starts nginx as the current user on 127.0.0.1 only, on two free ports:
#        status: plain HTTP, stub_status (connection counter) and the assets;
#        fresh:  HTTPS, keepalive_timeout 0: nginx answers "Connection: close" and closes after every
#                response, so a client must open (and handshake) one connection per download;
#      HTTPS with the test certificate (Samples/certs/server.pem, server-key.pem; CA Samples/certs/ca.pem),
#      TLS 1.3 only with one cipher suite (TLS_AES_128_GCM_SHA256) and no session cache or tickets, so
#      every connection of every tool is a full handshake with the same cipher; listen backlog 4096, so a
#      burst of SYNs measures the clients rather than nginx's default accept queue of 511. The HTTPS
#      server writes one access-log line per request (port, protocol, cipher, session reused, status,
#      bytes), which every run is checked against;
#   4. runs, BENCH_RUNS times each, alternating which tool goes first, under /usr/bin/time and timeout:
#        burst   B devices arriving at once, a fresh connection each:
#                  richpush bench --url https://cdn.example.com/hero-300k.jpg --devices B --concurrency B
#                      --cacert Samples/certs/ca.pem --connect-to cdn.example.com:443:127.0.0.1:FRESH
#                      --json FILE --no-progress --no-preflight --fail-under 100  (arrival: burst, the
#                      default; no trial download, so nginx's log holds exactly one request per device)
#                  h2load -n B -c B -t T --h1 https://127.0.0.1:FRESH/hero-300k.jpg
#        memory  richpush bench ... --devices M --concurrency MC, once for the image and once for the
#                movie (--type mp4), fresh port; peak RSS from /usr/bin/time %M and RSS sampled every
#                0.05 s (bench/work/burst-vs-h2load/runs/*.rss);
#      and checks every run: exit status, richpush display_rate 1 (not required in "memory", where expiries
#      are reported), h2load every request 2xx with the right byte count; nginx accepted one connection per
#      download in burst; the access log shows TLSv1.3, no resumed session, status 200 and full bodies;
#   5. prints a table per workload, the goals (memory: <= 200 MB and no growth with the asset's size), one machine-readable "BENCH {json}" line
#      per workload (also in bench/work/burst-vs-h2load/results.jsonl), the exact commands and the machine.
#
# Measurement notes:
#   - Rates exclude process start-up for every tool: richpush's devices_per_second (devices / its
#     duration_seconds, from the first arrival to the last verdict); h2load's succeeded requests / its
#     "finished in". richpush does per device what the extension does: download, sniff with libmagic,
#     validate, store (in a temporary folder); h2load only downloads.
#   - Latency. richpush end_to_end runs from the device's scheduled arrival (the burst's start) to its
#     verdict; its "download" phase from the transfer's start (connect, TLS, request, body). h2load's
#     --log-file has each request's start (wall clock) and duration from sending the request (after
#     connect and TLS) to the end of the response: "h2 req" below. For the burst, h2load's end-to-end is
#     (request start + duration) - the moment the script launched h2load (bash EPOCHREALTIME, the same
#     clock), so it includes h2load's start-up (a few ms) and every connect and handshake.
#   - Everything shares 2 cores (on the reference machine) with nginx; nginx's CPU seconds per run are
#     reported.
set -euo pipefail

BENCH_NAME=burst-vs-h2load
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

BW=$WORK/burst-vs-h2load
B=${BENCH_BURST:-2000}
M=${BENCH_MEMORY_DEVICES:-10000}
MC=${BENCH_MEMORY_CONCURRENCY:-1000}
THREADS=${BENCH_THREADS:-2}
RUNS=${BENCH_RUNS:-2}
BUDGET=${BENCH_BUDGET:-}
IMAGE_SIZE=${BENCH_IMAGE_SIZE:-300000}
MOVIE_SIZE=${BENCH_MOVIE_SIZE:-5000000}
RUN_TIMEOUT=${BENCH_TIMEOUT:-120}
RP_TMPDIR=${BENCH_TMPDIR:-}
read -r -a WORKLOADS <<<"${BENCH_WORKLOADS:-burst memory}"

require_positive "BENCH_BURST:$B" "BENCH_MEMORY_DEVICES:$M" "BENCH_MEMORY_CONCURRENCY:$MC" \
    "BENCH_THREADS:$THREADS" "BENCH_RUNS:$RUNS" "BENCH_IMAGE_SIZE:$IMAGE_SIZE" "BENCH_MOVIE_SIZE:$MOVIE_SIZE" \
    "BENCH_TIMEOUT:$RUN_TIMEOUT"
[[ -z $BUDGET || $BUDGET =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "BENCH_BUDGET must be a number of seconds (got '$BUDGET')"
for w in "${WORKLOADS[@]}"; do
    case $w in
    burst | memory) ;;
    fresh | reuse) die "workload '$w' is bench/ratios.sh's now (http-fresh, http-reuse, https-store)" ;;
    *) die "unknown workload '$w' in BENCH_WORKLOADS (burst memory)" ;;
    esac
done
((${#WORKLOADS[@]})) || die "BENCH_WORKLOADS is empty"
for limit in "BENCH_BURST:$B" "BENCH_MEMORY_DEVICES:$M"; do
    ((${limit#*:} <= 100000)) || die "${limit%%:*} (${limit#*:}) is capped at 100000"
done
((B <= 4000 && MC <= 4000)) || die "BENCH_BURST and BENCH_MEMORY_CONCURRENCY are capped at 4000 (connections at once)"
if [[ -n $RP_TMPDIR ]]; then
    [[ -d $RP_TMPDIR && -w $RP_TMPDIR ]] || die "BENCH_TMPDIR ($RP_TMPDIR) is not a writable folder"
    RP_TMPDIR=$(cd "$RP_TMPDIR" && pwd)/
fi
# One thread per connection at most.
T_BURST=$((THREADS < B ? THREADS : B))

# --- 0. tools --------------------------------------------------------------------------------------
ensure_packages nginx-light nghttp2-client time file
require_tools nginx h2load python3 timeout file
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (package time)"
NGINX=$(command -v nginx)
H2LOAD=$(command -v h2load)
TIME=(/usr/bin/time -f '%e %M %U %S' -o)
CA=$ROOT/Samples/certs/ca.pem
for f in "$CA" "$ROOT/Samples/certs/server.pem" "$ROOT/Samples/certs/server-key.pem" \
    "$ROOT/Samples/assets/hero.jpg" "$ROOT/Samples/assets/clip.mp4"; do
    [[ -s $f ]] || die "missing $f"
done

# --- 1. build --------------------------------------------------------------------------------------
build_richpush

# --- 2. work dir, assets, nginx --------------------------------------------------------------------
rm -rf "$BW"
mkdir -p "$BW/runs" "$BW/tmp" "$BW/www"
IMAGE=hero-300k.jpg
MOVIE=clip-5m.mp4
pad_asset jpeg "$ROOT/Samples/assets/hero.jpg" "$BW/www/$IMAGE" "$IMAGE_SIZE"
pad_asset mp4 "$ROOT/Samples/assets/clip.mp4" "$BW/www/$MOVIE" "$MOVIE_SIZE"
for pair in "$IMAGE:image/jpeg" "$MOVIE:video/mp4"; do
    mime=$(file -b --mime-type "$BW/www/${pair%%:*}")
    [[ $mime == "${pair#*:}" ]] || die "${pair%%:*}: file --mime-type says $mime, expected ${pair#*:}"
done

NGINX_DIR=$BW
write_conf() { # status-port fresh-port
    local status=$1 fresh=$2
    nginx_conf <<EOF
    types {
        image/jpeg jpg;
        video/mp4 mp4;
    }
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    # Full TLS 1.3 handshakes with one cipher suite for every client: no session cache, no tickets.
$(nginx_full_handshakes)
    log_format bench '\$server_port \$ssl_protocol \$ssl_cipher \$ssl_session_reused \$status \$body_bytes_sent';
    # Status: the connection counter (plain HTTP; nginx counts the connections of every port).
    server {
        listen 127.0.0.1:$status;
        root $BW/www;
        location / { }
        location = /nginx_status { stub_status; }
    }
    # Fresh: "Connection: close" and a close after every response, so each download is a new connection.
    server {
        listen 127.0.0.1:$fresh ssl backlog=4096;
        root $BW/www;
        access_log $BW/access.log bench;
        keepalive_timeout 0;
        location / { }
    }
EOF
}
start_nginx 2 write_conf
STATUS_PORT=${PORTS[0]}
FRESH_PORT=${PORTS[1]}
read -r probe _ < <(snapshot)
((probe >= 0)) || die "nginx on 127.0.0.1:$STATUS_PORT does not answer /nginx_status"
log "nginx pid $NGINX_PID on 127.0.0.1: $STATUS_PORT (status), $FRESH_PORT (HTTPS fresh)"

# --- 3. workloads ----------------------------------------------------------------------------------
# Fill the global array ARGV with one run's command line.
richpush_argv() { # port devices concurrency asset json [extra...]
    local port=$1 devices=$2 concurrency=$3 asset=$4 json=$5
    shift 5
    ARGV=()
    if [[ -n $RP_TMPDIR ]]; then ARGV=(env "TMPDIR=$RP_TMPDIR"); fi
    ARGV+=("$RICHPUSH" bench --url "https://cdn.example.com/$asset" --devices "$devices" --concurrency "$concurrency"
        --cacert "$CA" --connect-to "cdn.example.com:443:127.0.0.1:$port" --json "$json" --no-progress --no-preflight "$@")
    if [[ -n $BUDGET ]]; then ARGV+=(--budget "$BUDGET"); fi
}
run_argv() { # workload tool base
    local workload=$1 tool=$2 base=$3
    case $workload/$tool in
    burst/richpush) richpush_argv "$FRESH_PORT" "$B" "$B" "$IMAGE" "$base.json" --fail-under 100 ;;
    burst/h2load) ARGV=("$H2LOAD" -n "$B" -c "$B" -t "$T_BURST" --h1 --log-file="$base.log" "https://127.0.0.1:$FRESH_PORT/$IMAGE") ;;
    memory/image) richpush_argv "$FRESH_PORT" "$M" "$MC" "$IMAGE" "$base.json" ;;
    memory/movie) richpush_argv "$FRESH_PORT" "$M" "$MC" "$MOVIE" "$base.json" --type mp4 ;;
    *) die "no command for $workload/$tool" ;;
    esac
}
tools_of() { # workload
    case $1 in
    burst) echo richpush h2load ;;
    memory) echo image movie ;;
    esac
}

log_size() { stat -c %s "$BW/access.log" 2>/dev/null || echo 0; }

run_one() { # workload tool run
    local workload=$1 tool=$2 run=$3 base="$BW/runs/$1-$2-$3" before after cpu_before cpu_after log0 log1
    run_argv "$workload" "$tool" "$base"
    local sample=()
    if [[ $workload == memory ]]; then sample=(--sample); fi
    read -r before cpu_before < <(snapshot)
    log0=$(log_size)
    run_timed "${sample[@]}" "$base" "$RUN_TIMEOUT" "${ARGV[@]}"
    read -r after cpu_after < <(snapshot)
    log1=$(log_size)
    # The "after" status request is itself one accepted connection.
    echo "$RUN_STATUS $((after - before - 1)) $cpu_before $cpu_after $RUN_T0 $RUN_T1 $log0 $log1" >"$base.meta"
    printf '    %-6s %-8s run %d: exit %d, %d connections, wall/s peakKB user/s sys/s: %s\n' "$workload" "$tool" \
        "$run" "$RUN_STATUS" "$((after - before - 1))" "$(tail -n 1 "$base.time" 2>/dev/null || true)" >&2
}

log "warm-up"
richpush_argv "$FRESH_PORT" 100 16 "$IMAGE" "$BW/warm.json"
timeout 60 "${ARGV[@]}" >/dev/null 2>&1 </dev/null || true
timeout 60 "$H2LOAD" -n 100 -c 16 -t "$T_BURST" --h1 "https://127.0.0.1:$FRESH_PORT/$IMAGE" >/dev/null 2>&1 </dev/null || true
rm -f "$BW/warm.json"

for workload in "${WORKLOADS[@]}"; do
    read -r -a tools < <(tools_of "$workload")
    log "workload $workload, $RUNS runs per tool"
    for run in $(seq "$RUNS"); do
        if ((run % 2)); then order=("${tools[0]}" "${tools[1]}"); else order=("${tools[1]}" "${tools[0]}"); fi
        for tool in "${order[@]}"; do run_one "$workload" "$tool" "$run"; done
    done
done

# --- 4. report -------------------------------------------------------------------------------------
summary_status=0
bench_python "$BW" "$RUNS" "$B" "$M" "$MC" "$THREADS" "$IMAGE_SIZE" "$MOVIE_SIZE" "$FRESH_PORT" \
    "${WORKLOADS[*]}" <<'EOF' || summary_status=$?
import json, re, sys

bw = sys.argv[1]
runs, burst, m, mc, threads, image_size, movie_size, fresh_port = map(int, sys.argv[2:10])
workloads = sys.argv[10].split()
problems, notes = [], []
TOOLS = {"burst": ("richpush", "h2load"), "memory": ("image", "movie")}
SIZE = {"image": image_size, "movie": movie_size}

def expected(workload, tool):
    """(downloads, port, body size) a run should show in the access log."""
    if workload == "burst":
        return burst, fresh_port, image_size
    return m, fresh_port, SIZE[tool]

def unit_seconds(value, unit):
    return float(value) / {"us": 1e6, "ms": 1e3, "s": 1, "m": 1 / 60}[unit]

def common(workload, tool, run):
    base = f"{bw}/runs/{workload}-{tool}-{run}"
    status, conns, cpu0, cpu1, t0, t1, log0, log1 = read(base + ".meta", "-1 -1 0 0 0 0 0 0").split()
    r = {"workload": workload, "tool": tool, "run": run, "exit": int(status), "connections": int(conns),
         "nginx_cpu_s": round(float(cpu1) - float(cpu0), 2), "t0": float(t0), "wall_s": float(t1) - float(t0),
         "problems": []}
    t = read(base + ".time").strip().splitlines()
    t = t[-1].split() if t else []
    if len(t) >= 4:
        wall = float(t[0]) or r["wall_s"]
        r.update(peak_rss_kb=int(t[1]), cpu_s=float(t[2]) + float(t[3]),
                 cpu_percent=round((float(t[2]) + float(t[3])) / max(r["wall_s"], wall, 0.01) * 100))
    # This run's lines of the access log.
    with open(f"{bw}/access.log", "rb") as f:
        f.seek(int(log0))
        lines = f.read(int(log1) - int(log0)).decode(errors="replace").splitlines()
    want, port, size = expected(workload, tool)
    tls, bad, short = {}, 0, 0
    for line in lines:
        cols = line.split()
        if len(cols) != 6:
            bad += 1
            continue
        p, proto, cipher, reused, code, sent = cols
        tls[f"{proto} {cipher}"] = tls.get(f"{proto} {cipher}", 0) + 1
        if p != str(port) or proto != "TLSv1.3" or reused != ".":
            bad += 1
        elif code != "200" or int(sent) != size:
            short += 1  # an error status, or a body cut short (the client closed: an expired device)
    r["requests_logged"], r["requests_incomplete"], r["tls"] = len(lines), short, tls
    if bad:
        r["problems"].append(f"{bad} of {len(lines)} requests in nginx's log were not TLSv1.3 on a new session on port {port}")
    # Complete answers: exactly one per download, except where the client may stop early (checked by the caller).
    if workload != "memory" and (len(lines) != want or short):
        r["problems"].append(f"nginx logged {len(lines)} requests ({short} incomplete), expected {want} complete ones")
    if r["exit"] != 0:
        r["problems"].append(f"exit status {r['exit']}: {read(base + '.err').strip()[-300:]}")
    conns = r["connections"]
    if conns >= 0 and workload == "burst" and conns < want:
        what = "did not reconnect per request: the comparison is invalid" if tool == "h2load" else "fewer connections than devices"
        r["problems"].append(f"{conns} connections for {want} downloads ({what})")
    return r, base

def richpush(workload, tool, run):
    r, base = common(workload, tool, run)
    try:
        j = json.loads(read(base + ".json"))
    except ValueError:
        r["problems"].append(f"no JSON report: {read(base + '.err').strip()[-300:]}")
        return r
    pct = j.get("percentiles_milliseconds", {})
    r.update(ok=j["attached"], devices=j["devices"], rate=j["devices_per_second"], display_rate=j["display_rate"],
             seconds=j["duration_seconds"], mbps=j["megabytes_per_second"], verdicts=j["verdicts"],
             reasons=j["reasons"], not_started=j["not_started"], client_delayed=j["client_delayed"],
             e2e=pct.get("end_to_end", {}), download=pct.get("download", {}), tls_ms=pct.get("tls", {}))
    want = expected(workload, tool)[0]
    if j["devices"] != want:
        r["problems"].append(f"report has {j['devices']} devices, expected {want}")
    if workload != "memory" and j["display_rate"] != 1:
        r["problems"].append(f"display_rate {j['display_rate']} (verdicts {j['verdicts']}, reasons {j['reasons']})")
    if workload == "memory" and r["requests_logged"] - r["requests_incomplete"] < j["attached"]:
        r["problems"].append(f"nginx logged {r['requests_logged'] - r['requests_incomplete']} complete answers"
                             f" for {j['attached']} attached devices")
    samples = []
    for line in read(base + ".rss").splitlines():
        try:
            t_, kb, th = line.split()
            samples.append((float(t_), int(kb), int(th)))
        except ValueError:
            pass
    if samples:
        q = lambda p: samples[min(len(samples) - 1, int(p * len(samples)))][1]
        top = max(samples, key=lambda s: s[1])
        r["rss_samples_kb"] = {"n": len(samples), "q25": q(0.25), "q50": q(0.5), "q75": q(0.75), "max": top[1],
                               "max_at_percent": round(top[0] / max(samples[-1][0], 0.01) * 100),
                               "last": samples[-1][1], "threads_max": max(s[2] for s in samples)}
    return r

def h2load(workload, tool, run):
    r, base = common(workload, tool, run)
    out = read(base + ".out")
    fin = re.search(r"finished in ([\d.]+)(us|ms|s),", out)
    q = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", out)
    codes = re.search(r"status codes: (\d+) 2xx", out)
    data = re.search(r"\((\d+)\) data", out)
    if not (fin and q):
        r["problems"].append(f"unreadable h2load output: {(out + read(base + '.err')).strip()[-300:]}")
        return r
    want = expected(workload, tool)[0]
    seconds = unit_seconds(fin.group(1), fin.group(2))
    ok = int(codes.group(1)) if codes else 0
    r.update(ok=ok, seconds=seconds, rate=int(q.group(4)) / seconds)
    if int(q.group(4)) != want or ok != want:
        r["problems"].append(f"{q.group(4)} of {want} requests succeeded, {ok} answered 2xx")
    if data and int(data.group(1)) != want * image_size:
        r["problems"].append(f"{data.group(1)} bytes of data, expected {want * image_size}")
    req, e2e = [], []
    for line in read(base + ".log").splitlines():
        cols = line.split("\t")
        if len(cols) >= 3 and cols[1] != "-1":
            start_us, dur_us = int(cols[0]), int(cols[2])
            req.append(dur_us / 1000)
            e2e.append((start_us + dur_us) / 1000 - r["t0"] * 1000)
    pick = lambda v: {"p50": percentile(v, 0.5), "p90": percentile(v, 0.9), "p99": percentile(v, 0.99),
                      "max": max(v) if v else None}
    r["req"], r["e2e"] = pick(req), pick(e2e)
    return r

PARSE = {"richpush": richpush, "image": richpush, "movie": richpush, "h2load": h2load}
per = {}
for w in workloads:
    for tool in TOOLS[w]:
        results = [PARSE[tool](w, tool, i) for i in range(1, runs + 1)]
        for r in results:
            for p in r["problems"]:
                problems.append(f"{w} {tool} run {r['run']}: {p}")
        per[(w, tool)] = results

def best(w, tool):
    return median_run([r for r in per.get((w, tool), []) if "rate" in r], "rate", failed=lambda r: bool(r["problems"]))

def ms(d, key):
    return f(d.get(key) if d else None, "{:.1f}")

def ratio(a, b):
    return a["rate"] / b["rate"] if a and b and b.get("rate") else None

def valid(*results):
    """Every result present and free of problems (a goal is only judged on runs that passed their checks)."""
    return all(r and not r["problems"] for r in results)

mib = lambda kb: None if kb is None else kb / 1024
lines = []
print()
print(f"richpush bench vs h2load over HTTPS (TLS 1.3, full handshakes) from nginx on 127.0.0.1;"
      f" median of {runs} runs; h2load -t {threads}")
if "burst" in workloads:
    print()
    print(f"{'workload':<8} {'devices':>7} {'in flight':>9} {'richpush/s':>10} {'h2load/s':>9} {'ratio':>6} {'display':>7}"
          f" {'rp dl p50/p99':>14} {'rp e2e p50/p99':>15} {'h2 req p50/p99':>15} {'h2 e2e p50/p99':>15}"
          f" {'cpu rp/h2':>10} {'RSS MB rp/h2':>13} {'conns rp/h2':>12}")
for w, count, inflight in (("burst", burst, burst),):
    if w not in workloads:
        continue
    rp, h2 = best(w, "richpush"), best(w, "h2load")
    x = ratio(rp, h2)
    def two(a, b, key, fmt="{:.0f}"):
        return f"{f(a and a.get(key), fmt)}/{f(b and b.get(key), fmt)}"
    print(f"{w:<8} {count:>7} {inflight:>9} {f(rp and rp.get('rate')):>10} {f(h2 and h2.get('rate')):>9} {f(x, '{:.2f}x'):>6}"
          f" {f(rp and rp.get('display_rate') * 100, '{:.1f}%'):>7}"
          f" {ms(rp and rp.get('download'), 'p50') + '/' + ms(rp and rp.get('download'), 'p99'):>14}"
          f" {ms(rp and rp.get('e2e'), 'p50') + '/' + ms(rp and rp.get('e2e'), 'p99'):>15}"
          f" {ms(h2 and h2.get('req'), 'p50') + '/' + ms(h2 and h2.get('req'), 'p99'):>15}"
          f" {ms(h2 and h2.get('e2e'), 'p50') + '/' + ms(h2 and h2.get('e2e'), 'p99'):>15}"
          f" {two(rp, h2, 'cpu_percent'):>10} {f(mib(rp and rp.get('peak_rss_kb')), '{:.1f}') + '/' + f(mib(h2 and h2.get('peak_rss_kb')), '{:.1f}'):>13}"
          f" {two(rp, h2, 'connections'):>12}")
    line = {"workload": w, "devices": count, "concurrency": inflight, "runs": runs, "threads": threads,
            "richpush_devices_per_second": rp and rp.get("rate") and round(rp["rate"], 1),
            "h2load_downloads_per_second": h2 and h2.get("rate") and round(h2["rate"], 1),
            "ratio": x and round(x, 3), "richpush_display_rate": rp and rp.get("display_rate"),
            "richpush_verdicts": rp and rp.get("verdicts"), "richpush_client_delayed": rp and rp.get("client_delayed"),
            "richpush_end_to_end_ms": rp and rp.get("e2e"), "richpush_download_ms": rp and rp.get("download"),
            "richpush_tls_ms": rp and rp.get("tls_ms"),
            "h2load_request_ms": h2 and h2.get("req"), "h2load_end_to_end_ms": h2 and h2.get("e2e"),
            "richpush_cpu_percent": rp and rp.get("cpu_percent"), "h2load_cpu_percent": h2 and h2.get("cpu_percent"),
            "richpush_peak_rss_kb": rp and rp.get("peak_rss_kb"), "h2load_peak_rss_kb": h2 and h2.get("peak_rss_kb"),
            "richpush_connections": rp and rp.get("connections"), "h2load_connections": h2 and h2.get("connections"),
            "nginx_cpu_seconds": [rp and rp.get("nginx_cpu_s"), h2 and h2.get("nginx_cpu_s")],
            "tls": (rp or h2 or {}).get("tls"),
            "richpush_all": [r.get("rate") and round(r["rate"], 1) for r in per[(w, "richpush")]],
            "h2load_all": [r.get("rate") and round(r["rate"], 1) for r in per[(w, "h2load")]]}
    lines.append(line)
if "memory" in workloads:
    print()
    print(f"memory: richpush bench, {m} devices, --concurrency {mc}, fresh connections (peak RSS: the largest of {runs} runs)")
    print(f"{'asset':<8} {'bytes':>9} {'peak RSS MB':>11} {'rss 50%/last':>13} {'threads':>7} {'devices/s':>9} {'attached/s':>10} {'MB/s':>7}"
          f" {'display':>7} {'seconds':>7} {'verdicts':<40}")
    peaks = {}
    for tool in ("image", "movie"):
        rs = [r for r in per[("memory", tool)] if "rate" in r]
        peak = max((r.get("peak_rss_kb", 0) for r in per[("memory", tool)]), default=None)
        peaks[tool] = peak
        r = best("memory", tool)
        s = (r or {}).get("rss_samples_kb") or {}
        print(f"{tool:<8} {SIZE[tool]:>9} {f(mib(peak), '{:.1f}'):>11}"
              f" {f(mib(s.get('q50')), '{:.1f}') + '/' + f(mib(s.get('last')), '{:.1f}'):>13} {f(s.get('threads_max')):>7}"
              f" {f(r and r.get('rate')):>9} {f(r and r['ok'] / r['seconds']):>10} {f(r and r.get('mbps')):>7}"
              f" {f(r and r.get('display_rate') * 100, '{:.1f}%'):>7}"
              f" {f(r and r.get('seconds'), '{:.1f}'):>7} {json.dumps(r and r.get('verdicts'), separators=(',', ':')):<40}")
        if r and r.get("display_rate", 1) < 1:
            notes.append(f"memory {tool}: display rate {r['display_rate'] * 100:.1f}% (verdicts {r['verdicts']},"
                         f" reasons {r['reasons']}, not started {r['not_started']}, client-delayed {r['client_delayed']})")
        lines.append({"workload": f"memory-{tool}", "devices": m, "concurrency": mc, "size": SIZE[tool], "runs": runs,
                      "peak_rss_kb": peak, "all_peak_rss_kb": [x.get("peak_rss_kb") for x in per[("memory", tool)]],
                      "rss_samples_kb": r and r.get("rss_samples_kb"),
                      "devices_per_second": r and r.get("rate") and round(r["rate"], 1),
                      "attached_per_second": r and round(r["ok"] / r["seconds"], 1),
                      "megabytes_per_second": r and r.get("mbps") and round(r["mbps"], 1),
                      "display_rate": r and r.get("display_rate"), "verdicts": r and r.get("verdicts"),
                      "reasons": r and r.get("reasons"), "not_started": r and r.get("not_started"),
                      "client_delayed": r and r.get("client_delayed"), "duration_seconds": r and r.get("seconds"),
                      "end_to_end_ms": r and r.get("e2e"), "cpu_percent": r and r.get("cpu_percent"),
                      "goal": "<= 200 MB", "goal_met": peak is not None and peak <= 200 * 1024,
                      "valid": all(not x["problems"] for x in per[("memory", tool)])})
    if peaks.get("image") and peaks.get("movie"):
        growth = peaks["movie"] / peaks["image"]
        print(f"movie / image peak RSS: {growth:.2f}x ({(peaks['movie'] - peaks['image']) / 1024:+.1f} MB) for"
              f" {movie_size / image_size:.0f}x the asset size")
        lines[-1]["rss_ratio_movie_vs_image"] = round(growth, 3)

print()
print("goals:")
for line in lines:
    if "goal" in line:
        value = line.get("ratio") if "ratio" in line else line.get("peak_rss_kb") and f"{line['peak_rss_kb'] / 1024:.1f} MB"
        verdict = "-" if value is None else "met" if line["goal_met"] else "NOT met" if line["valid"] else "INVALID (a run failed its checks)"
        print(f"  {line['workload']:<13} {line['goal']:<10} {f(value, '{}')!s:<10} {verdict}")
if "memory" in workloads and lines[-1].get("rss_ratio_movie_vs_image") is not None:
    g = lines[-1]["rss_ratio_movie_vs_image"]
    print(f"  {'memory':<13} {'no growth':<10} {g:<10} {'met' if g <= 1.1 else 'NOT met'} (movie/image peak RSS <= 1.1x)")
print()
print("all runs (per s; ! = the run failed its checks):")
for (w, tool), results in per.items():
    print(f"  {w:<7} {tool:<9} " + "  ".join(f(r.get("rate")) + ("!" if r["problems"] else "") for r in results)
          + "   peak RSS MB: " + " ".join(f(mib(r.get("peak_rss_kb")), "{:.1f}") for r in results)
          + "   nginx cpu s: " + " ".join(f(r.get("nginx_cpu_s"), "{:.2f}") for r in results))
tls_seen = {}
for results in per.values():
    for r in results:
        for k, v in r.get("tls", {}).items():
            tls_seen[k] = tls_seen.get(k, 0) + v
print("  TLS in nginx's log (all runs): " + ", ".join(f"{k} x{v}" for k, v in tls_seen.items()))
print()
with open(f"{bw}/results.jsonl", "w") as out:
    for line in lines:
        text = json.dumps(line, separators=(",", ":"))
        out.write(text + "\n")
        print("BENCH " + text)
print()
print("notes: richpush/s = devices_per_second (devices / duration_seconds of its JSON report; expired devices count too,")
print("       hence attached/s for memory); h2load/s = succeeded / 'finished in'. Neither includes process start-up.")
print("       display = richpush display_rate.")
print("       rp dl = richpush 'download' phase (connect + TLS + request + body); rp e2e = scheduled arrival to verdict;")
print("       h2 req = h2load request sent to response end (after connect and TLS); h2 e2e = response end - h2load launch.")
print("       cpu = (user+sys)/wall of the client process, 100% = one core; conns = connections nginx accepted.")
for note in notes:
    print("  - " + note)
if problems:
    print()
    print("PROBLEMS:")
    for p in problems:
        print("  - " + p)
    sys.exit(2)
EOF

echo
echo "commands (per run; runs alternate which tool goes first; RUN = the run's number):"
for workload in "${WORKLOADS[@]}"; do
    read -r -a tools < <(tools_of "$workload")
    echo "  $workload:"
    for tool in "${tools[@]}"; do
        run_argv "$workload" "$tool" "$BW/runs/$workload-$tool-RUN"
        echo "    $(printf '%q ' "${TIME[@]}" "$BW/runs/$workload-$tool-RUN.time") timeout $RUN_TIMEOUT $(quoted)"
    done
done
echo "  assets: $(cd "$BW/www" && for a in "$IMAGE" "$MOVIE"; do printf '%s %s bytes %s; ' "$a" "$(stat -c %s "$a")" "$(file -b --mime-type "$a")"; done)"
echo
print_machine
echo "  tools: $("$NGINX" -v 2>&1 | sed 's/.*: //') ($(openssl version 2>/dev/null | cut -d' ' -f1-2 || echo '?')), $("$H2LOAD" --version | head -1), richpush $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?') (+ uncommitted changes: $(git -C "$ROOT" status --porcelain 2>/dev/null | grep -c . || true))"
tmp=${RP_TMPDIR:-${TMPDIR:-/tmp}}
echo "  richpush TMPDIR: $tmp on $(findmnt -no SOURCE,FSTYPE,OPTIONS -T "$tmp" 2>/dev/null || echo '?')"
echo "  limits: ulimit -n $(ulimit -n), somaxconn $(cat /proc/sys/net/core/somaxconn 2>/dev/null || echo '?'), local ports $(tr '\t' '-' </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo '?')"
echo "  raw outputs: $BW/runs/, results: $BW/results.jsonl, nginx log: $BW/access.log"
exit "$summary_status"
