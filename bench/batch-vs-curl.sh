#!/usr/bin/env bash
# batch-vs-curl.sh: compares `richpush batch` (the whole pipeline per payload) with `curl --parallel`
# (downloads only) on the same URLs, and checks that batch's peak memory does not grow with payload count.
#
# Usage: bench/batch-vs-curl.sh          (from anywhere; paths are found relative to this script)
#
# Environment:
#   BENCH_PAYLOADS=10000       payloads (N): richpush batch payloads, curl downloads
#   BENCH_SMALL=N/10           payloads in the memory-comparison run (richpush batch only)
#   BENCH_CONCURRENCY=32       in flight (C): richpush batch --concurrency, curl --parallel-max (curl allows <= 300)
#   BENCH_RUNS=3               runs per workload, alternating the order; the median run is reported
#   BENCH_TIMEOUT=300          seconds allowed for any single run before it is killed
#   BENCH_SKIP_BUILD=1         use the existing .build/release/richpush instead of building
#   BENCH_OUT_ROOT=bench/work  an existing folder for what the tools write (batch-out, batch-out-small,
#                              batch-vs-curl-curl-out); e.g. /dev/shm takes the disk out of the comparison.
#                              Only those three subfolders are ever created or removed in it.
#
# What it does:
#   1. installs nginx-light, curl and time if missing (apt-get), builds richpush in release mode;
#   2. copies five real sample assets (Samples/assets: hero.jpg, hero.png, banner.gif, chime.mp3,
#      clip.mp4) into bench/work/batch-vs-curl/www/ and starts nginx as the current user on 127.0.0.1
#      only, with two plain-HTTP server blocks on free ports serving them:
#        fresh port: keepalive_timeout 0, so nginx answers "Connection: close" and closes after each
#                    response; every client has to open one connection per download;
#        reuse port: keep-alive (the usual case for curl);
#   3. writes N payloads to bench/work/batch-in/ (and the first N/10 to bench/work/batch-in-small/),
#      cycling through the five assets with the matching ab.att.type, each URL unique (?n=I):
#        {"aps":{"alert":{"title":"t","body":"b"},"mutable-content":1},
#         "ab":{"att":{"url":"http://127.0.0.1:FRESH/hero.jpg?n=1","type":"jpg"}}}
#      and the same URLs as curl config files (url = "..." / output = "..."), one for each port;
#   4. runs four workloads BENCH_RUNS times, alternating their order, each under
#      /usr/bin/time -f '%e %M %U %S' (wall seconds, peak RSS KB, user and sys CPU seconds) and timeout:
#        batch        richpush batch batch-in --out batch-out --allow-http --concurrency C --no-progress --force
#        batch-small  the same on batch-in-small (memory comparison)
#        curl-fresh   curl --parallel --parallel-max C --parallel-immediate -K urls-fresh.cfg (fresh port)
#        curl-reuse   the same with urls-reuse.cfg (reuse port: keep-alive connections)
#      and checks every run: batch's summary.json must say total = recorded = attached = N (display
#      rate 1); curl must exit 0 with N "200" lines from -w and N files of the right sizes; nginx's
#      stub_status "accepts" counter must show one connection per download for batch and curl-fresh;
#   5. prints a table (payloads or downloads/s, peak RSS, CPU, connections), the ratio batch/curl,
#      batch's peak RSS for N vs N/10 payloads, one machine-readable "BENCH {json}" line per workload
#      (also written to bench/work/batch-vs-curl/results.jsonl), the exact commands and the machine.
#
# Measurement notes:
#   - Rates are N / the wall time around the process (bash's EPOCHREALTIME before and after
#     /usr/bin/time, which only has 10 ms resolution), for both tools, so both include process start-up
#     and exit. richpush batch's own "elapsed_seconds" (summary.json, which
#     leaves out start-up and argument parsing) is reported next to it.
#   - richpush batch does per payload: read and parse the JSON, policy checks, download (a fresh
#     connection, as each payload is its own device), sniff with libmagic, validate, store the
#     attachment (hashed, linked by content), write the mutated payload and a record, then
#     results.ndjson and summary.json at the end. curl only downloads each URL to a file.
#   - Peak RSS is the largest resident set of the process tree /usr/bin/time waited for (timeout and
#     the tool; timeout itself is under 1 MB).
#   - Outputs are removed before every run (not timed), so no run finds an earlier run's files.
set -euo pipefail

BENCH_NAME=batch-vs-curl
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
BW=$WORK/batch-vs-curl            # nginx, logs, curl configs and raw run outputs of this script
IN=$WORK/batch-in
IN_SMALL=$WORK/batch-in-small
OUT_ROOT=${BENCH_OUT_ROOT:-$WORK}

N=${BENCH_PAYLOADS:-10000}
C=${BENCH_CONCURRENCY:-32}
RUNS=${BENCH_RUNS:-3}
RUN_TIMEOUT=${BENCH_TIMEOUT:-300}
SMALL=${BENCH_SMALL:-$(( N / 10 > 0 ? N / 10 : 1 ))}

require_positive "BENCH_PAYLOADS:$N" "BENCH_CONCURRENCY:$C" "BENCH_RUNS:$RUNS" "BENCH_TIMEOUT:$RUN_TIMEOUT" \
    "BENCH_SMALL:$SMALL"
((C <= 300)) || die "BENCH_CONCURRENCY ($C) must be at most 300 (curl's --parallel-max limit)"
((SMALL <= N)) || die "BENCH_SMALL ($SMALL) must not exceed BENCH_PAYLOADS ($N)"
((N <= 1000000)) || die "BENCH_PAYLOADS ($N) is capped at 1000000"
mkdir -p "$WORK"
[[ -d $OUT_ROOT ]] || die "BENCH_OUT_ROOT ($OUT_ROOT) is not an existing folder"
OUT_ROOT=$(cd "$OUT_ROOT" && pwd)
OUT=$OUT_ROOT/batch-out
OUT_SMALL=$OUT_ROOT/batch-out-small
CURL_OUT=$OUT_ROOT/batch-vs-curl-curl-out

# --- 0. tools --------------------------------------------------------------------------------------
ensure_packages nginx-light curl time
require_tools nginx curl python3 timeout
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (package time)"
NGINX=$(command -v nginx)
CURL=$(command -v curl)
TIME=(/usr/bin/time -f '%e %M %U %S' -o)

# --- 1. build --------------------------------------------------------------------------------------
build_richpush

# --- 2. work dir, assets, nginx --------------------------------------------------------------------
ASSETS=(hero.jpg hero.png banner.gif chime.mp3 clip.mp4)
rm -rf "$BW" "$IN" "$IN_SMALL" "$OUT" "$OUT_SMALL" "$CURL_OUT"
mkdir -p "$BW/runs" "$BW/tmp" "$BW/www"
for asset in "${ASSETS[@]}"; do
    [[ -s $ROOT/Samples/assets/$asset ]] || die "missing sample asset Samples/assets/$asset"
    cp "$ROOT/Samples/assets/$asset" "$BW/www/$asset"
done

NGINX_DIR=$BW
write_conf() { # fresh-port reuse-port
    local fresh=$1 reuse=$2
    nginx_conf <<EOF
    types {
        image/jpeg jpg;
        image/png png;
        image/gif gif;
        audio/mpeg mp3;
        video/mp4 mp4;
    }
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    # Fresh: "Connection: close" and a close after every response, so each download is a new connection.
    server {
        listen 127.0.0.1:$fresh;
        root $BW/www;
        keepalive_timeout 0;
        location / { }
    }
    # Reuse: keep-alive connections shared between downloads. Also serves the connection counter.
    server {
        listen 127.0.0.1:$reuse;
        root $BW/www;
        keepalive_requests 1000000;
        keepalive_timeout 60s;
        location / { }
        location = /nginx_status { stub_status; }
    }
EOF
}

start_nginx 2 write_conf
FRESH_PORT=${PORTS[0]}
REUSE_PORT=${PORTS[1]}
STATUS_PORT=$REUSE_PORT
read -r probe _ < <(snapshot)
((probe >= 0)) || die "nginx on 127.0.0.1:$REUSE_PORT does not answer /nginx_status"
log "nginx pid $NGINX_PID on 127.0.0.1:$FRESH_PORT (fresh) and 127.0.0.1:$REUSE_PORT (reuse)"

# --- 3. payloads and curl configs ------------------------------------------------------------------
log "writing $N payloads to $IN ($SMALL to $IN_SMALL) and the curl configs"
python3 - "$BW" "$IN" "$IN_SMALL" "$N" "$SMALL" "$FRESH_PORT" "$REUSE_PORT" "${ASSETS[@]}" <<'EOF'
import json, os, sys
bw, inp, small_dir, n, small, fresh, reuse, *assets = sys.argv[1:]
n, small = int(n), int(small)
os.makedirs(inp)
os.makedirs(small_dir)
width = len(str(n))
sizes = {a: os.path.getsize(os.path.join(bw, "www", a)) for a in assets}
expected = {}  # output file name -> size
with open(os.path.join(bw, "urls-fresh.cfg"), "w") as fc, open(os.path.join(bw, "urls-reuse.cfg"), "w") as rc:
    for i in range(1, n + 1):
        asset = assets[(i - 1) % len(assets)]
        ext = asset.rsplit(".", 1)[1]
        name = f"p{i:0{width}d}"
        path = f"/{asset}?n={i}"
        payload = {"aps": {"alert": {"title": "t", "body": "b"}, "mutable-content": 1},
                   "ab": {"att": {"url": f"http://127.0.0.1:{fresh}{path}", "type": ext}}}
        text = json.dumps(payload, separators=(",", ":")) + "\n"
        with open(os.path.join(inp, name + ".json"), "w") as f:
            f.write(text)
        if i <= small:
            with open(os.path.join(small_dir, name + ".json"), "w") as f:
                f.write(text)
        out = f"{name}.{ext}"
        fc.write(f'url = "http://127.0.0.1:{fresh}{path}"\noutput = "{out}"\n')
        rc.write(f'url = "http://127.0.0.1:{reuse}{path}"\noutput = "{out}"\n')
        expected[out] = sizes[asset]
with open(os.path.join(bw, "expected.json"), "w") as f:
    json.dump(expected, f)
EOF

# --- 4. workloads ----------------------------------------------------------------------------------
WORKLOADS=(batch curl-fresh curl-reuse batch-small)

# Fill the global array ARGV with one workload's command line.
workload_argv() { # workload
    case $1 in
    batch) ARGV=("$RICHPUSH" batch "$IN" --out "$OUT" --allow-http --concurrency "$C" --no-progress --force) ;;
    batch-small) ARGV=("$RICHPUSH" batch "$IN_SMALL" --out "$OUT_SMALL" --allow-http --concurrency "$C" --no-progress --force) ;;
    curl-fresh | curl-reuse)
        # -q: ignore ~/.curlrc; --noproxy: talk to 127.0.0.1 directly (richpush ignores proxy variables too);
        # --fail: an HTTP error is a failed transfer; -w: one "status bytes" line per transfer, for the check.
        ARGV=("$CURL" -q --parallel --parallel-max "$C" --parallel-immediate --noproxy '*' --fail -sS
            --output-dir "$CURL_OUT" -w '%{http_code} %{size_download}\n' -K "$BW/urls-${1#curl-}.cfg") ;;
    esac
}
# Checks one finished run; writes a JSON verdict to $base.check.
check_run() { # workload base status
    python3 - "$1" "$2" "$3" "$N" "$SMALL" "$OUT" "$OUT_SMALL" "$CURL_OUT" "$BW/expected.json" <<'EOF'
import json, os, sys
workload, base, status, n, small, out, out_small, curl_out, expected_path = sys.argv[1:]
status, n, small = int(status), int(n), int(small)
r = {"exit": status, "problems": []}
if workload.startswith("batch"):
    want = small if workload == "batch-small" else n
    folder = out_small if workload == "batch-small" else out
    try:
        with open(os.path.join(folder, "summary.json")) as f:
            s = json.load(f)
    except (OSError, ValueError) as e:
        s = None
        r["problems"].append(f"no summary.json ({e})")
    if s is not None:
        with open(base + ".summary.json", "w") as f:
            json.dump(s, f)
        r["ok"] = s.get("attached")
        r["internal_seconds"] = s.get("elapsed_seconds")
        r["download_ms"] = s.get("download_ms")
        for key in ("total", "recorded", "attached"):
            if s.get(key) != want:
                r["problems"].append(f"summary.json {key} = {s.get(key)}, expected {want}")
        if s.get("display_rate") != 1:
            r["problems"].append(f"display_rate = {s.get('display_rate')} (reasons {s.get('reasons')})")
        if s.get("interrupted"):
            r["problems"].append("interrupted")
    # Per-payload time through the whole pipeline (results.ndjson "elapsed_ms"), next to the download's.
    elapsed = []
    try:
        with open(os.path.join(folder, "results.ndjson")) as f:
            for line in f:
                try:
                    elapsed.append(float(json.loads(line)["elapsed_ms"]))
                except (ValueError, KeyError, TypeError):
                    pass
    except OSError:
        pass
    if elapsed:
        elapsed.sort()
        pick = lambda p: round(elapsed[min(len(elapsed) - 1, int(p * len(elapsed)))], 2)
        r["payload_ms"] = {"p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99), "max": elapsed[-1]}
    try:
        payloads = len(os.listdir(os.path.join(folder, "payloads")))
    except OSError:
        payloads = 0
    if payloads != want:
        r["problems"].append(f"{payloads} mutated payloads written, expected {want}")
else:
    with open(expected_path) as f:
        expected = json.load(f)
    lines = open(base + ".out").read().split("\n")
    ok = sum(1 for line in lines if line.split()[:1] == ["200"])
    r["ok"] = ok
    if ok != n:
        r["problems"].append(f"{ok}/{n} transfers answered 200")
    wrong = 0
    present = 0
    for entry in os.scandir(curl_out):
        present += 1
        if expected.get(entry.name) != entry.stat().st_size:
            wrong += 1
    if present != n or wrong:
        r["problems"].append(f"{present} files downloaded (expected {n}), {wrong} of the wrong size or name")
if status != 0:
    r["problems"].append(f"exit status {status}")
with open(base + ".check", "w") as f:
    json.dump(r, f)
EOF
}

run_one() { # workload run
    local workload=$1 run=$2 base="$BW/runs/$1-$2" before after cpu_before cpu_after
    workload_argv "$workload"
    case $workload in
    batch) rm -rf "$OUT" ;;
    batch-small) rm -rf "$OUT_SMALL" ;;
    curl-*) rm -rf "$CURL_OUT"; mkdir -p "$CURL_OUT" ;;
    esac
    sync
    read -r before cpu_before < <(snapshot)
    local sample=()
    if [[ $workload == batch* ]]; then sample=(--sample); fi
    run_timed "${sample[@]}" "$base" "$RUN_TIMEOUT" "${ARGV[@]}"
    read -r after cpu_after < <(snapshot)
    # The "after" status request is itself one accepted connection.
    echo "$RUN_STATUS $((after - before - 1)) $cpu_before $cpu_after $RUN_T0 $RUN_T1" >"$base.meta"
    check_run "$workload" "$base" "$RUN_STATUS"
    local time_line
    time_line=$(tail -n 1 "$base.time" 2>/dev/null || true)
    printf '    %-11s run %d: exit %d, %d connections, wall/s peakKB user/s sys/s: %s\n' "$workload" "$run" \
        "$RUN_STATUS" "$((after - before - 1))" "$time_line" >&2
    if [[ $workload == curl-* ]]; then rm -rf "$CURL_OUT"; fi
}

log "warm-up"
ARGV=("$RICHPUSH" batch "$IN_SMALL" --out "$BW/warm-out" --allow-http --concurrency "$C" --no-progress --force)
timeout 60 "${ARGV[@]}" >/dev/null 2>&1 </dev/null || true
mkdir -p "$BW/warm-curl"
head -n 400 "$BW/urls-fresh.cfg" >"$BW/warm.cfg"
timeout 60 "$CURL" -q --parallel --parallel-max "$C" --noproxy '*' -sS --output-dir "$BW/warm-curl" \
    -K "$BW/warm.cfg" >/dev/null 2>&1 </dev/null || true
rm -rf "$BW/warm-out" "$BW/warm-curl" "$BW/warm.cfg"

log "N=$N (small $SMALL), C=$C, $RUNS runs per workload"
for run in $(seq "$RUNS"); do
    order=("${WORKLOADS[@]}")
    if ! ((run % 2)); then order=(batch-small curl-reuse curl-fresh batch); fi
    for workload in "${order[@]}"; do run_one "$workload" "$run"; done
done

# --- 5. report -------------------------------------------------------------------------------------
summary_status=0
bench_python "$BW" "$N" "$SMALL" "$C" "$RUNS" <<'EOF' || summary_status=$?
import json, sys

bw, n, small, c, runs = sys.argv[1], *map(int, sys.argv[2:])
problems = []
workloads = ["batch", "curl-fresh", "curl-reuse", "batch-small"]
count = {"batch": n, "batch-small": small, "curl-fresh": n, "curl-reuse": n}

def result(workload, run):
    base = f"{bw}/runs/{workload}-{run}"
    status, conns, cpu0, cpu1, t0, t1 = read(base + ".meta", "-1 -1 0 0 0 0").split()
    try:
        check = json.loads(read(base + ".check", "{}"))
    except ValueError:
        check = {}
    failed = check.get("problems", ["no check"])
    for p in failed:
        problems.append(f"{workload} run {run}: {p}")
    t = read(base + ".time").strip().splitlines()
    t = t[-1].split() if t else []
    if len(t) < 4 or float(t[0]) <= 0:
        problems.append(f"{workload} run {run}: no /usr/bin/time line: {read(base + '.err').strip()[-300:]}")
        return None
    wall, rss, user, sys_ = float(t[0]), int(t[1]), float(t[2]), float(t[3])
    # Bash's EPOCHREALTIME around the run (microseconds) is finer than /usr/bin/time's 10 ms %e.
    if float(t0) > 0 and float(t1) > float(t0):
        wall = float(t1) - float(t0)
    k = count[workload]
    conns = int(conns)
    # The rate counts only verified items (attached payloads, 200 answers), so a failed run cannot look fast.
    r = {"run": run, "exit": int(status), "failed": bool(failed), "wall_s": wall,
         "rate": (check.get("ok") or 0) / wall, "peak_rss_kb": rss,
         "cpu_percent": round((user + sys_) / wall * 100), "cpu_us_per_item": round((user + sys_) / k * 1e6),
         "connections": conns, "nginx_cpu_s": round(float(cpu1) - float(cpu0), 2), "ok": check.get("ok")}
    if check.get("internal_seconds"):
        r["internal_s"] = check["internal_seconds"]
        r["internal_rate"] = (check.get("ok") or 0) / check["internal_seconds"]
    if check.get("download_ms"):
        r["download_ms"] = check["download_ms"]
    if check.get("payload_ms"):
        r["payload_ms"] = check["payload_ms"]
    samples = []
    for line in read(base + ".rss").splitlines():
        try:
            t_, kb, threads = line.split()
            samples.append((float(t_), int(kb), int(threads)))
        except ValueError:
            pass
    if samples:
        # RSS a quarter, half and three quarters into the run, the largest sample, and the most threads seen.
        q = lambda p: samples[min(len(samples) - 1, int(p * len(samples)))][1]
        top = max(samples, key=lambda s: s[1])
        r["rss_samples_kb"] = {"n": len(samples), "q25": q(0.25), "q50": q(0.5), "q75": q(0.75),
                               "max": top[1], "max_at_percent": round(top[0] / max(samples[-1][0], 0.01) * 100),
                               "last": samples[-1][1], "threads_max": max(s[2] for s in samples)}
    if conns >= 0 and workload != "curl-reuse" and conns < k:
        problems.append(f"{workload} run {run}: {conns} connections for {k} downloads (fewer than one per download)")
    if conns >= 0 and workload == "curl-reuse" and conns > 2 * c:
        problems.append(f"curl-reuse run {run}: {conns} connections for C={c} (little reuse)")
    return r

per = {w: [result(w, i) for i in range(1, runs + 1)] for w in workloads}
best = {w: median_run(per[w], "rate", failed=lambda r: r["failed"]) for w in workloads}

def ratio(a, b, key="rate"):
    return a[key] / b[key] if a and b and b[key] else None

b, cf, cr, bs = best["batch"], best["curl-fresh"], best["curl-reuse"], best["batch-small"]
print()
print(f"richpush batch vs curl --parallel: {n} payloads/downloads of 5 sample assets (3.5-38 KB), {c} in flight,"
      f" median of {runs} runs")
print()
print(f"{'workload':<12} {'items':>7} {'per s':>8} {'wall s':>7} {'peak RSS MB':>11} {'cpu':>5} {'cpu us/item':>11} {'conns':>7} {'nginx cpu s':>11}")
for w in workloads:
    r = best[w]
    if not r:
        print(f"{w:<12} {count[w]:>7} {'-':>8}")
        continue
    print(f"{w:<12} {count[w]:>7} {f(r['rate']):>8} {f(r['wall_s'], '{:.3f}'):>7} {f(r['peak_rss_kb'] / 1024, '{:.1f}'):>11}"
          f" {str(r['cpu_percent']) + '%':>5} {r['cpu_us_per_item']:>11} {r['connections']:>7} {f(r['nginx_cpu_s'], '{:.2f}'):>11}")
print()
rf, rr = ratio(b, cf), ratio(b, cr)
print(f"batch / curl-fresh throughput: {f(rf, '{:.2f}x')}   (goal >= 0.80x: {'met' if rf and rf >= 0.8 else 'NOT met'})")
print(f"batch / curl-reuse throughput: {f(rr, '{:.2f}x')}   (curl sharing keep-alive connections; batch never does)")
if b and b.get("internal_rate"):
    print(f"batch's own elapsed_seconds (summary.json, no start-up): {b['internal_s']:.2f} s = {b['internal_rate']:.0f} payloads/s"
          f"; download p50/p99 {f(b.get('download_ms', {}).get('p50'), '{:.1f}')}/{f(b.get('download_ms', {}).get('p99'), '{:.1f}')} ms"
          f", whole payload p50/p99 {f(b.get('payload_ms', {}).get('p50'), '{:.1f}')}/{f(b.get('payload_ms', {}).get('p99'), '{:.1f}')} ms")
rss_big = max((r["peak_rss_kb"] for r in per["batch"] if r), default=None)
rss_small = max((r["peak_rss_kb"] for r in per["batch-small"] if r), default=None)
mem_ratio = rss_big / rss_small if rss_big and rss_small else None
if mem_ratio is not None:
    print(f"batch peak RSS (max over runs): {n} payloads {rss_big / 1024:.1f} MB, {small} payloads {rss_small / 1024:.1f} MB"
          f" -> {mem_ratio:.2f}x for {n / small:.0f}x the payloads, {(rss_big - rss_small) / 1024:+.1f} MB")
for w in ("batch", "batch-small"):
    for r in per[w]:
        s = r and r.get("rss_samples_kb")
        if s:
            print(f"{w} run {r['run']} RSS sampled every 0.05 s (MB): {s['q25'] / 1024:.1f}, {s['q50'] / 1024:.1f},"
                  f" {s['q75'] / 1024:.1f} at 25/50/75% of the run, last {s['last'] / 1024:.1f}, max {s['max'] / 1024:.1f}"
                  f" at {s['max_at_percent']}%; GNU time peak {r['peak_rss_kb'] / 1024:.1f}; threads max {s['threads_max']}")
print()
print("all runs (per s | peak RSS MB; ! = the run failed its checks):")
for w in workloads:
    print(f"  {w:<12} " + "  ".join(f(r and r["rate"]) + ("!" if r and r["failed"] else "") for r in per[w])
          + "   | " + " ".join(f(r and r["peak_rss_kb"] / 1024, "{:.1f}") for r in per[w]))
print()
with open(f"{bw}/results.jsonl", "w") as out:
    for w in workloads:
        r = best[w]
        line = {"workload": w, "items": count[w], "concurrency": c, "runs": runs,
                "per_second": r and round(r["rate"], 1), "wall_seconds": r and round(r["wall_s"], 4),
                "peak_rss_kb": r and r["peak_rss_kb"], "cpu_percent": r and r["cpu_percent"],
                "cpu_us_per_item": r and r["cpu_us_per_item"], "connections": r and r["connections"],
                "nginx_cpu_seconds": r and r["nginx_cpu_s"],
                "all_per_second": [x and round(x["rate"], 1) for x in per[w]],
                "all_peak_rss_kb": [x and x["peak_rss_kb"] for x in per[w]]}
        if w.startswith("batch"):
            line["rss_samples_kb"] = r and r.get("rss_samples_kb")
        if w == "batch":
            line.update(internal_seconds=r and r.get("internal_s"),
                        internal_per_second=r and r.get("internal_rate") and round(r["internal_rate"], 1),
                        download_ms=r and r.get("download_ms"), payload_ms=r and r.get("payload_ms"),
                        ratio_vs_curl_fresh=rf and round(rf, 3), ratio_vs_curl_reuse=rr and round(rr, 3))
        if w == "batch-small":
            line.update(max_peak_rss_kb=rss_small, batch_max_peak_rss_kb=rss_big,
                        rss_ratio_big_vs_small=mem_ratio and round(mem_ratio, 3))
        text = json.dumps(line, separators=(",", ":"))
        out.write(text + "\n")
        print("BENCH " + text)
print()
print("notes: per s = verified items / wall time around the process (includes start-up and exit); cpu = (user+sys)/wall,")
print("       100% = one core; conns = TCP connections nginx accepted during the run; nginx runs on the same cores.")
if problems:
    print()
    print("PROBLEMS:")
    for p in problems:
        print("  - " + p)
    sys.exit(2)
EOF

echo
echo "commands (per run; the order alternates between runs):"
for workload in "${WORKLOADS[@]}"; do
    workload_argv "$workload"
    echo "  $workload:"
    echo "    $(printf '%q ' "${TIME[@]}" "$BW/runs/$workload-RUN.time") timeout $RUN_TIMEOUT $(quoted)"
done
echo "  payload: $(head -c 300 "$(find "$IN" -name '*.json' -print -quit)")"
echo "  curl config: $(head -n 2 "$BW/urls-fresh.cfg" | tr '\n' ' ')"
echo
print_machine
echo "  tools: $("$NGINX" -v 2>&1 | sed 's/.*: //'), $("$CURL" --version | head -1 | cut -d' ' -f1-2), $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?') (+ uncommitted changes: $(git -C "$ROOT" status --porcelain 2>/dev/null | grep -c . || true))"
echo "  outputs on: $(df -h "$OUT_ROOT" | awk 'NR == 2 {print $1}') ($(findmnt -no FSTYPE,OPTIONS -T "$OUT_ROOT" 2>/dev/null || echo '?'))"
echo "  raw outputs: $BW/runs/, results: $BW/results.jsonl, last batch output: $OUT"
exit "$summary_status"
