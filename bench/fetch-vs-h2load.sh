#!/usr/bin/env bash
# fetch-vs-h2load.sh: compares richpush's fetch engine with h2load on one ~300 KB file from nginx.
#
# Usage: bench/fetch-vs-h2load.sh          (from anywhere; paths are found relative to this script)
#
# Environment:
#   BENCH_DOWNLOADS=3000       downloads per run (N)
#   BENCH_CONCURRENCY=64       downloads in flight (C): richpush --parallel, h2load -c
#   BENCH_RUNS=5               runs per tool and workload; the median run is reported (the better one for 2)
#   BENCH_SIZE=300000          asset size in bytes
#   BENCH_H2LOAD_THREADS=nproc h2load -t (capped at C); richpush uses one fetch loop per core by default
#   BENCH_TIMEOUT=120          seconds allowed for any single run before it is killed
#   BENCH_SKIP_BUILD=1         use the existing .build/release/richpush instead of building
#
# What it does:
#   1. installs nginx-light and nghttp2-client if missing (apt-get), builds richpush in release mode;
#   2. creates bench/work/ (gitignored) with asset.bin (random bytes) and an nginx.conf that runs nginx
#      as the current user, listening on 127.0.0.1 only, on a free port, every path inside bench/work/;
#   3. runs two workloads, each BENCH_RUNS times, alternating which tool goes first:
#      fresh: a new TCP connection for every download
#         richpush fetch URL --allow-http --repeat N --parallel C            (fresh connections are its default)
#         h2load --h1 -n N -c C -t T -H 'Connection: close' URL
#      reuse: keep-alive connections shared between downloads
#         richpush fetch URL --allow-http --repeat N --parallel C --reuse
#         h2load --h1 -n N -c C -t T URL
#   4. prints a table (downloads/s of each, ratio richpush/h2load), one machine-readable "BENCH {json}" line
#      per workload (also written to bench/work/results.jsonl), the exact commands and the machine.
#
# How h2load makes a fresh connection per request: with --h1 and the request header "Connection: close",
# nginx answers "Connection: close" and closes the connection after each response; h2load's HTTP/1.1
# client then reconnects and sends the next request on a new connection (nghttp2 1.52 does this). This is
# not taken on trust: nginx's stub_status "accepts" counter is read before and after every run, and the
# script fails if h2load's fresh run did not open one connection per request. The same count is reported
# for richpush, so both tools are held to the same check.
#
# Measurement notes:
#   - downloads/s = successful downloads / the tool's own measured wall time (richpush: "seconds" in its
#     JSON; h2load: "finished in"). Neither includes process start-up.
#   - Latency: richpush's p50/p99 are whole downloads (connect + request + body). h2load's come from
#     its --log-file and run from sending the request to the end of the response, so they leave out
#     the TCP connect (a few microseconds to ~1 ms on loopback).
#   - cpu% is (user+sys)/elapsed of the whole client process as /usr/bin/time reports it (if installed);
#     200% = both cores of a 2-core machine. nginx runs on the same cores, so nginx's CPU seconds per run
#     are reported too (from /proc, its worker processes).
set -euo pipefail

BENCH_NAME=fetch-vs-h2load
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

N=${BENCH_DOWNLOADS:-3000}
C=${BENCH_CONCURRENCY:-64}
RUNS=${BENCH_RUNS:-5}
SIZE=${BENCH_SIZE:-300000}
THREADS=${BENCH_H2LOAD_THREADS:-$(nproc)}
RUN_TIMEOUT=${BENCH_TIMEOUT:-120}

require_positive "BENCH_DOWNLOADS:$N" "BENCH_CONCURRENCY:$C" "BENCH_RUNS:$RUNS" "BENCH_SIZE:$SIZE" \
    "BENCH_H2LOAD_THREADS:$THREADS" "BENCH_TIMEOUT:$RUN_TIMEOUT"
((C <= N)) || die "BENCH_CONCURRENCY ($C) must not exceed BENCH_DOWNLOADS ($N): h2load needs -n >= -c"
((THREADS <= C)) || THREADS=$C

# --- 0. tools --------------------------------------------------------------------------------------
ensure_packages nginx-light nghttp2-client
require_tools nginx h2load python3 timeout
NGINX=$(command -v nginx)
H2LOAD=$(command -v h2load)
[[ -x /usr/bin/time ]] && TIME=(/usr/bin/time -f '%e %U %S' -o)

# --- 1. build --------------------------------------------------------------------------------------
build_richpush

# --- 2. work dir, asset, nginx ---------------------------------------------------------------------
mkdir -p "$WORK"
rm -rf "$WORK/runs" "$WORK/tmp" "$WORK/results.jsonl" "$WORK/nginx.pid"
mkdir -p "$WORK/runs" "$WORK/tmp"
head -c "$SIZE" /dev/urandom >"$WORK/asset.bin"

NGINX_DIR=$WORK
write_conf() { # port
    nginx_conf <<EOF
    types { application/octet-stream bin; }
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    keepalive_timeout 60s;
    server {
        listen 127.0.0.1:$1;
        root $WORK;
        location = /asset.bin { }
        # Connection counter used to check how many connections each run opened.
        location = /nginx_status { stub_status; }
        location / { return 404; }
    }
EOF
}
start_nginx 1 write_conf
PORT=${PORTS[0]}
STATUS_PORT=$PORT
URL=http://127.0.0.1:$PORT/asset.bin
read -r probe _ < <(snapshot)
((probe >= 0)) || die "nginx on 127.0.0.1:$PORT does not answer /nginx_status"
log "nginx pid $NGINX_PID on 127.0.0.1:$PORT, asset $SIZE bytes"

# --- 3. workloads ----------------------------------------------------------------------------------
# Fill the global array ARGV with one tool's command line.
richpush_argv() { # mode
    ARGV=("$RICHPUSH" fetch "$URL" --allow-http --repeat "$N" --parallel "$C")
    if [[ $1 == reuse ]]; then ARGV+=(--reuse); fi
}
h2load_argv() { # mode [log-file]
    ARGV=("$H2LOAD" --h1 -n "$N" -c "$C" -t "$THREADS")
    if [[ $1 == fresh ]]; then ARGV+=(-H 'Connection: close'); fi
    if [[ -n ${2:-} ]]; then ARGV+=(--log-file="$2"); fi
    ARGV+=("$URL")
}

run_one() { # tool mode run
    local tool=$1 mode=$2 run=$3 base="$WORK/runs/$1-$2-$3" before after cpu_before cpu_after
    if [[ $tool == richpush ]]; then richpush_argv "$mode"; else h2load_argv "$mode" "$base.log"; fi
    read -r before cpu_before < <(snapshot)
    run_timed "$base" "$RUN_TIMEOUT" "${ARGV[@]}"
    read -r after cpu_after < <(snapshot)
    # The "after" status request is itself one accepted connection.
    echo "$RUN_STATUS $((after - before - 1)) $cpu_before $cpu_after" >"$base.meta"
    printf '    %-8s %-5s run %d: exit %d, %d connections\n' "$tool" "$mode" "$run" "$RUN_STATUS" \
        "$((after - before - 1))" >&2
}

log "warm-up"
timeout 30 "$H2LOAD" --h1 -n 200 -c 8 "$URL" >/dev/null 2>&1 || true
timeout 30 "$RICHPUSH" fetch "$URL" --allow-http --repeat 200 --parallel 8 >/dev/null 2>&1 || true

for mode in fresh reuse; do
    log "workload $mode: N=$N C=$C, $RUNS runs per tool"
    for run in $(seq "$RUNS"); do
        if ((run % 2)); then
            run_one richpush "$mode" "$run"; run_one h2load "$mode" "$run"
        else
            run_one h2load "$mode" "$run"; run_one richpush "$mode" "$run"
        fi
    done
done

# --- 4. report -------------------------------------------------------------------------------------
summary_status=0
bench_python "$WORK" "$N" "$C" "$RUNS" "$THREADS" "$SIZE" <<'EOF' || summary_status=$?
import json, os, re, sys

work, n, c, runs, threads, size = sys.argv[1], *map(int, sys.argv[2:])
problems = []

def common(base, run):
    status, conns, cpu0, cpu1 = read(base + ".meta", "-1 -1 0 0").split()
    r = {"run": run, "exit": int(status), "connections": int(conns), "nginx_cpu_s": round(float(cpu1) - float(cpu0), 2)}
    t = read(base + ".time").split()
    if len(t) >= 3 and float(t[0]) > 0:
        r["cpu_percent"] = round((float(t[1]) + float(t[2])) / float(t[0]) * 100)
        r["cpu_seconds"] = float(t[1]) + float(t[2])
    return r

def richpush(mode, run):
    base = f"{work}/runs/richpush-{mode}-{run}"
    r = common(base, run)
    try:
        j = json.loads(read(base + ".out").strip().splitlines()[-1])
    except (IndexError, ValueError):
        problems.append(f"richpush {mode} run {run}: no JSON (exit {r['exit']}): {read(base + '.err').strip()[-300:]}")
        return None
    r.update(downloads=j["downloads"], succeeded=j["succeeded"], seconds=j["seconds"],
             dps=j["succeeded"] / j["seconds"], mbps=j["megabytes_per_second"],
             p50=j["latency_ms"].get("p50"), p99=j["latency_ms"].get("p99"),
             failures=j.get("failures", {}))
    return finish(r)

def finish(r):
    if "cpu_seconds" in r and r.get("succeeded"):
        r["cpu_us_per_download"] = round(r["cpu_seconds"] / r["succeeded"] * 1e6)
    return r

def h2load(mode, run):
    base = f"{work}/runs/h2load-{mode}-{run}"
    r = common(base, run)
    out = read(base + ".out")
    m = re.search(r"finished in ([\d.]+)(us|ms|s),", out)
    q = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", out)
    d = re.search(r"\((\d+)\) data", out)
    if not (m and q):
        problems.append(f"h2load {mode} run {run}: unreadable output (exit {r['exit']}): {(out + read(base + '.err')).strip()[-300:]}")
        return None
    seconds = float(m.group(1)) / {"us": 1e6, "ms": 1e3, "s": 1}[m.group(2)]
    succeeded = int(q.group(4))
    lat = []
    for line in read(base + ".log").splitlines():
        cols = line.split("\t")
        if len(cols) >= 3 and cols[1] != "-1":
            lat.append(int(cols[2]) / 1000)
    r.update(downloads=int(q.group(1)), succeeded=succeeded, seconds=seconds, dps=succeeded / seconds,
             mbps=(int(d.group(1)) if d else 0) / 1e6 / seconds, p50=percentile(lat, 0.5), p99=percentile(lat, 0.99))
    return finish(r)

rows = []
for mode in ("fresh", "reuse"):
    per = {"richpush": [richpush(mode, i) for i in range(1, runs + 1)],
           "h2load": [h2load(mode, i) for i in range(1, runs + 1)]}
    for tool, results in per.items():
        for r in results:
            if not r:
                continue
            if r["succeeded"] != n:
                problems.append(f"{tool} {mode} run {r['run']}: {r['succeeded']}/{n} downloads succeeded {r.get('failures') or ''}")
            conns = r["connections"]
            if conns >= 0 and mode == "fresh" and conns < n:
                what = "h2load did not reconnect per request: the fresh comparison is invalid" if tool == "h2load" else "fewer connections than downloads"
                problems.append(f"{tool} fresh run {r['run']}: {conns} connections for {n} downloads ({what})")
            if conns >= 0 and mode == "reuse" and conns > c * 2:
                problems.append(f"{tool} reuse run {r['run']}: {conns} connections for C={c} (little reuse)")
    best = {tool: median_run(results, "dps") for tool, results in per.items()}
    rows.append((mode, per, best))

print()
print(f"richpush vs h2load: {n} downloads of {size} bytes, {c} in flight, h2load -t {threads}, median of {runs} runs")
print()
print(f"{'workload':<8}  {'richpush/s':>10}  {'h2load/s':>10}  {'ratio':>6}  {'rp p50/p99 ms':>14}  {'h2 p50/p99 ms':>14}  {'rp cpu':>6}  {'h2 cpu':>6}  {'conns rp/h2':>12}  {'cpu us/dl rp/h2':>15}")
for mode, per, best in rows:
    rp, h2 = best["richpush"], best["h2load"]
    ratio = rp["dps"] / h2["dps"] if rp and h2 else None
    def lat(r):
        return "-" if not r else f"{f(r['p50'], '{:.1f}')}/{f(r['p99'], '{:.1f}')}"
    def cpu(r):
        return "-" if not r or "cpu_percent" not in r else f"{r['cpu_percent']}%"
    def conns(r):
        return "-" if not r else str(r["connections"])
    def per(r):
        return "-" if not r or "cpu_us_per_download" not in r else str(r["cpu_us_per_download"])
    print(f"{mode:<8}  {f(rp and rp['dps']):>10}  {f(h2 and h2['dps']):>10}  {f(ratio, '{:.2f}x'):>6}  {lat(rp):>14}  {lat(h2):>14}  {cpu(rp):>6}  {cpu(h2):>6}  {conns(rp) + '/' + conns(h2):>12}  {per(rp) + '/' + per(h2):>15}")
print()
print("all runs (downloads/s):")
for mode, per, best in rows:
    for tool, results in per.items():
        print(f"  {mode:<6} {tool:<9} " + "  ".join(f(r and r["dps"]) for r in results)
              + "   nginx cpu s: " + " ".join(f(r and r["nginx_cpu_s"], "{:.2f}") for r in results))
print()
with open(f"{work}/results.jsonl", "w") as out:
    for mode, per, best in rows:
        rp, h2 = best["richpush"], best["h2load"]
        line = {"workload": mode, "downloads": n, "concurrency": c, "size": size, "runs": runs, "h2load_threads": threads,
                "richpush_downloads_per_second": rp and round(rp["dps"], 1),
                "h2load_downloads_per_second": h2 and round(h2["dps"], 1),
                "ratio": round(rp["dps"] / h2["dps"], 3) if rp and h2 else None,
                "richpush_p50_ms": rp and rp["p50"], "richpush_p99_ms": rp and rp["p99"],
                "h2load_p50_ms": h2 and h2["p50"], "h2load_p99_ms": h2 and h2["p99"],
                "richpush_cpu_percent": rp and rp.get("cpu_percent"), "h2load_cpu_percent": h2 and h2.get("cpu_percent"),
                "richpush_connections": rp and rp["connections"], "h2load_connections": h2 and h2["connections"],
                "richpush_cpu_us_per_download": rp and rp.get("cpu_us_per_download"),
                "h2load_cpu_us_per_download": h2 and h2.get("cpu_us_per_download"),
                "richpush_all": [r and round(r["dps"], 1) for r in per["richpush"]],
                "h2load_all": [r and round(r["dps"], 1) for r in per["h2load"]]}
        text = json.dumps(line, separators=(",", ":"))
        out.write(text + "\n")
        print("BENCH " + text)
print()
print("notes: rp p50/p99 = whole download incl. connect; h2 p50/p99 = request sent to response end (h2load --log-file).")
print("       cpu = client process (user+sys)/elapsed, 100% = one core (10 ms resolution, includes process start-up);")
print("       cpu us/dl = client CPU time per download; conns = TCP connections nginx accepted in that run.")
if problems:
    print()
    print("PROBLEMS:")
    for p in problems:
        print("  - " + p)
    sys.exit(2)
EOF

echo
echo "commands (per run; runs alternate which tool goes first):"
for mode in fresh reuse; do
    echo "  $mode:"
    richpush_argv "$mode"; echo "    $(quoted)"
    h2load_argv "$mode" "$WORK/runs/h2load-$mode-RUN.log"; echo "    $(quoted)"
done
echo
print_machine
echo "  nginx: $("$NGINX" -v 2>&1 | sed 's/.*: //'), $("$H2LOAD" --version | head -1)"
echo "  raw outputs: $WORK/runs/, results: $WORK/results.jsonl"
exit "$summary_status"
