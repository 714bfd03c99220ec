# bench/lib.sh: the pieces the bench/ scripts share. Not a script: each one sources it.
#
#   BENCH_NAME=ratios                              # used in messages and in the nginx.conf header
#   source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
#
# Sourcing it sets BENCH_DIR (bench/), ROOT (the package), WORK (bench/work/, gitignored) and installs
# the EXIT/INT/TERM traps that stop the run in progress and the script's nginx. Then, in order of use:
#
#   log MSG / die MSG                  progress on stderr / "NAME: MSG" on stderr and exit 1
#   require_positive NAME:VALUE ...    die unless every VALUE is a positive integer
#   ensure_packages PKG ...            apt-get install the Debian packages that are not installed (via sudo
#                                      when not root; apt-get update only then), never starting services
#   require_tools TOOL ...             die unless every TOOL is on PATH
#   pad_asset jpeg|mp4 SRC DST SIZE   a real JPEG or MPEG-4 grown to SIZE bytes that decodes the same
#   build_richpush                     swift build -c release --static-swift-stdlib --product richpush (unless BENCH_SKIP_BUILD=1);
#                                      sets RICHPUSH
#   nginx_conf <<EOF ... EOF           writes $NGINX_DIR/nginx.conf: the common part (current user, daemon,
#                                      pid, logs and temporary files inside $NGINX_DIR), then stdin (the rest
#                                      of the http block) and the closing brace
#   nginx_full_handshakes              prints the TLS lines of an HTTPS server: the test certificate, TLS 1.3,
#                                      one cipher suite, no session resumption (a full handshake every time)
#   start_nginx COUNT WRITE_CONF       picks COUNT free ports on 127.0.0.1 (PORTS), runs WRITE_CONF PORT...
#                                      and starts nginx on $NGINX_DIR/nginx.conf, up to 5 attempts; sets
#                                      NGINX_PID. stop_nginx stops it (the traps do too).
#   snapshot                           prints "accepts nginx_cpu_seconds": stub_status's accepted connections
#                                      (http://127.0.0.1:$STATUS_PORT/nginx_status; -1 if unavailable) and
#                                      the CPU time of nginx's master and workers so far
#   run_timed [--sample] BASE SECONDS COMMAND...
#                                      runs COMMAND under "${TIME[@]}" BASE.time (if TIME is set) and
#                                      timeout SECONDS, stdout to BASE.out, stderr to BASE.err; sets
#                                      RUN_STATUS, RUN_T0 and RUN_T1 (epoch seconds around the process);
#                                      --sample also records richpush's RSS and threads in BASE.rss
#   quoted                             prints "${ARGV[@]}" shell-quoted
#   bench_python ARGS... <<'EOF'       runs the Python program on stdin after a prelude with read(),
#                                      percentile(), median_run() and f() (see BENCH_PY below)
#   print_machine                      "machine:" and the nproc, cpu and mem lines
#
# Everything here only ever uses 127.0.0.1.

[[ -n ${BENCH_NAME:-} ]] || { echo "lib.sh: set BENCH_NAME before sourcing" >&2; exit 1; }

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
WORK=$BENCH_DIR/work

log() { printf '==> %s\n' "$*" >&2; }
die() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; exit 1; }

require_positive() { # NAME:VALUE ...
    local pair
    for pair in "$@"; do
        [[ ${pair#*:} =~ ^[1-9][0-9]*$ ]] || die "${pair%%:*} must be a positive integer (got '${pair#*:}')"
    done
}

# --- packages and tools ----------------------------------------------------------------------------
ensure_packages() { # PKG ...
    local missing=() pkg sudo=()
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$pkg")
        fi
    done
    ((${#missing[@]} == 0)) && return 0
    if ((EUID != 0)); then
        command -v sudo >/dev/null || die "not root and no sudo: cannot install ${missing[*]}"
        sudo=(sudo)
    fi
    log "installing ${missing[*]}"
    # Debian's nginx package would start the stock site on port 80 of every interface; the benchmarks must
    # only ever use 127.0.0.1, so keep services from starting during the install (policy-rc.d = 101).
    local policy=/usr/sbin/policy-rc.d added_policy=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
        "${sudo[@]}" chmod 755 "$policy"
        added_policy=1
    fi
    local status=0
    "${sudo[@]}" apt-get update || status=$?
    if ((status == 0)); then
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends "${missing[@]}" || status=$?
    fi
    ((added_policy)) && "${sudo[@]}" rm -f "$policy"
    ((status == 0)) || die "apt-get failed (status $status)"
}

require_tools() { # TOOL ...
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || die "$tool not found"
    done
}

build_richpush() {
    RICHPUSH=$ROOT/.build/release/richpush
    if [[ ${BENCH_SKIP_BUILD:-0} != 1 ]]; then
        log "building richpush (release)"
        (cd "$ROOT" && swift build -c release --static-swift-stdlib --product richpush)
    fi
    [[ -x $RICHPUSH ]] || die "$RICHPUSH not found (build failed?)"
}

# --- assets ----------------------------------------------------------------------------------------
# pad_asset jpeg|mp4 SRC DST SIZE: a real asset grown to SIZE bytes that still decodes as the original:
#   jpeg  comment (COM, FF FE) segments just before the EOI marker (the same image);
#   mp4   one top-level "free" box after the last box.
pad_asset() { # KIND SRC DST SIZE
    python3 - "$@" <<'PYEOF' || die "could not make $3"
import struct, sys
kind, src, dst, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
data = open(src, "rb").read()
if kind == "jpeg":
    assert data[:2] == b"\xff\xd8" and data[-2:] == b"\xff\xd9", f"{src} is not a JPEG ending with EOI"
    need = size - len(data)
    if need < 4:
        sys.exit(f"a JPEG of {size} bytes: must be at least {len(data) + 4}")
    segments = []
    while need > 0:
        body = min(need - 4, 65533)  # a segment holds at most 65533 bytes
        if 0 < need - (body + 4) < 4:  # leave room for a last segment (4 bytes at least)
            body -= 4
        segments.append(b"\xff\xfe" + struct.pack(">H", body + 2) + b"\x00" * body)
        need -= body + 4
    out = data[:-2] + b"".join(segments) + data[-2:]
else:
    pad = size - len(data)
    if pad < 8 or pad >= 2**32:
        sys.exit(f"an MPEG-4 of {size} bytes: must be between {len(data) + 8} and 4 GB")
    out = data + struct.pack(">I4s", pad, b"free") + b"\x00" * (pad - 8)
assert len(out) == size
open(dst, "wb").write(out)
PYEOF
}

# --- nginx -----------------------------------------------------------------------------------------
# NGINX_DIR: the script's own folder for nginx.conf, nginx.pid, error.log and tmp/ (set before use).
NGINX_DIR=
NGINX_PID=
NGINX_STARTING=0
PORTS=()
STATUS_PORT=

stop_nginx() {
    local pid=$NGINX_PID
    # Only while our nginx is starting can its pid be in the file but not yet in NGINX_PID; at any other
    # time a pid file is not ours to act on.
    if [[ -z $pid && $NGINX_STARTING == 1 && -n $NGINX_DIR && -s $NGINX_DIR/nginx.pid ]]; then
        pid=$(<"$NGINX_DIR/nginx.pid")
    fi
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    fi
    NGINX_PID=
}

free_ports() { # COUNT: prints COUNT distinct free ports on 127.0.0.1
    python3 - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
for s in socks: s.close()
EOF
}

nginx_conf() { # stdin: the rest of the http block
    local user_line=
    # As root, nginx would hand its workers to "nobody"; keep them as the current user instead.
    ((EUID == 0)) && user_line="user $(id -un) $(id -gn);"
    cat >"$NGINX_DIR/nginx.conf" <<EOF
# Generated by bench/$BENCH_NAME.sh; everything stays inside $NGINX_DIR.
$user_line
daemon on;
worker_processes auto;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $NGINX_DIR/tmp/client_body;
    proxy_temp_path $NGINX_DIR/tmp/proxy;
    fastcgi_temp_path $NGINX_DIR/tmp/fastcgi;
    uwsgi_temp_path $NGINX_DIR/tmp/uwsgi;
    scgi_temp_path $NGINX_DIR/tmp/scgi;
EOF
    cat >>"$NGINX_DIR/nginx.conf"
    echo "}" >>"$NGINX_DIR/nginx.conf"
}

# The TLS settings of the HTTPS servers (http or server block): the test certificate, TLS 1.3 with one
# cipher suite, no session cache or tickets, so every connection of every client is a full handshake.
nginx_full_handshakes() {
    cat <<EOF
    ssl_certificate $ROOT/Samples/certs/server.pem;
    ssl_certificate_key $ROOT/Samples/certs/server-key.pem;
    ssl_protocols TLSv1.3;
    ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;
    ssl_session_cache off;
    ssl_session_tickets off;
EOF
}

start_nginx() { # COUNT WRITE_CONF
    local count=$1 write=$2 attempt nginx
    nginx=$(command -v nginx) || die "nginx not found"
    mkdir -p "$NGINX_DIR/tmp"
    for attempt in 1 2 3 4 5; do
        read -r -a PORTS < <(free_ports "$count")
        "$write" "${PORTS[@]}"
        rm -f "$NGINX_DIR/nginx.pid"
        NGINX_STARTING=1
        if "$nginx" -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log" 2>>"$NGINX_DIR/error.log"; then
            for _ in $(seq 50); do [[ -s $NGINX_DIR/nginx.pid ]] && break; sleep 0.1; done
            if [[ -s $NGINX_DIR/nginx.pid ]]; then
                NGINX_PID=$(<"$NGINX_DIR/nginx.pid")
                NGINX_STARTING=0
                return 0
            fi
        fi
        NGINX_STARTING=0
        log "nginx did not start on port(s) ${PORTS[*]} (attempt $attempt); see $NGINX_DIR/error.log"
    done
    PORTS=()
    die "could not start nginx"
}

# Prints "accepts nginx_cpu_seconds" (-1 for accepts if stub_status is unavailable).
snapshot() {
    python3 - "$STATUS_PORT" "$NGINX_PID" <<'EOF'
import os, sys, urllib.request
port, master = sys.argv[1], sys.argv[2]
try:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    text = opener.open(f"http://127.0.0.1:{port}/nginx_status", timeout=5).read().decode()
    accepts = int(text.splitlines()[2].split()[0])
except Exception:
    accepts = -1
ticks = 0
pids = [master]
try:
    for task in os.listdir(f"/proc/{master}/task"):
        with open(f"/proc/{master}/task/{task}/children") as f:
            pids += f.read().split()
except OSError:
    pass
for pid in pids:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    except (OSError, IndexError, ValueError):
        pass
print(accepts, ticks / os.sysconf("SC_CLK_TCK"))
EOF
}

# --- runs ------------------------------------------------------------------------------------------
# TIME: set by the script, e.g. TIME=(/usr/bin/time -f '%e %M %U %S' -o); empty = no /usr/bin/time.
TIME=()
ARGV=()
# The run in progress, if any: the process started by run_timed (/usr/bin/time or timeout). Stopping it
# means sending TERM to timeout, which passes it on to the tool (time itself would leave the tool running).
RUN_PID=
RUN_STATUS=0
RUN_T0=0
RUN_T1=0

stop_run() {
    local pid=$RUN_PID child
    RUN_PID=
    [[ -n $pid ]] || return 0
    if ((${#TIME[@]})); then
        for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null || true); do
            kill -TERM "$child" 2>/dev/null || true
        done
    else
        kill -TERM "$pid" 2>/dev/null || true
    fi
}

bench_cleanup() { stop_run; stop_nginx; }
trap bench_cleanup EXIT
trap 'bench_cleanup; trap - EXIT; exit 130' INT
trap 'bench_cleanup; trap - EXIT; exit 143' TERM

# Samples the resident memory and thread count of the richpush process below PID (time -> timeout ->
# richpush) every 0.05 s until PID exits; one "seconds rss_kb threads" line per sample.
sample_memory() { # pid
    python3 - "$1" <<'EOF'
import os, sys, time
root, start = sys.argv[1], time.monotonic()
def children(pid):
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += f.read().split()
    except OSError:
        pass
    return out
while os.path.exists(f"/proc/{root}"):
    todo, target = [root], None
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "richpush":
                    target = pid
        except OSError:
            pass
        todo += children(pid)
    if target:
        try:
            fields = dict(line.split(":", 1) for line in open(f"/proc/{target}/status"))
            print(f"{time.monotonic() - start:.2f} {fields['VmRSS'].split()[0]} {fields['Threads'].strip()}", flush=True)
        except (OSError, KeyError, ValueError):
            pass
    time.sleep(0.05)
EOF
}

run_timed() { # [--sample] BASE SECONDS COMMAND...
    local sample=0 base seconds pid sampler= timer=()
    if [[ $1 == --sample ]]; then sample=1; shift; fi
    base=$1 seconds=$2
    shift 2
    if ((${#TIME[@]})); then timer=("${TIME[@]}" "$base.time"); fi
    RUN_STATUS=0
    RUN_T0=${EPOCHREALTIME:-0}
    "${timer[@]}" timeout "$seconds" "$@" >"$base.out" 2>"$base.err" </dev/null &
    pid=$!
    RUN_PID=$pid
    if ((sample)); then sample_memory "$pid" >"$base.rss" 2>/dev/null & sampler=$!; fi
    wait "$pid" || RUN_STATUS=$?
    RUN_T1=${EPOCHREALTIME:-0}
    RUN_PID=
    if [[ -n $sampler ]]; then wait "$sampler" 2>/dev/null || true; fi
    # Some locales write EPOCHREALTIME with a decimal comma.
    RUN_T0=${RUN_T0/,/.} RUN_T1=${RUN_T1/,/.}
}

quoted() { printf '%q ' "${ARGV[@]}"; }

# --- reports ---------------------------------------------------------------------------------------
# Python prelude of bench_python.
BENCH_PY=$(cat <<'EOF'
import math

def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default

def percentile(values, p):
    """Nearest-rank percentile (p in 0..1) of a list, None if it is empty."""
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, max(0, math.ceil(p * len(values)) - 1))]

def median_run(results, key, failed=lambda r: False):
    """The median run by results[i][key] (for an even count, the upper middle: the better of 2), ignoring
    missing runs (None), and failed runs unless every run failed."""
    present = [r for r in results if r]
    ok = sorted((r for r in present if not failed(r)), key=lambda r: r[key]) or sorted(present, key=lambda r: r[key])
    return ok[len(ok) // 2] if ok else None

def f(v, fmt="{:.0f}"):
    return "-" if v is None else fmt.format(v)
EOF
)

bench_python() { # ARGS... (program on stdin)
    { printf '%s\n' "$BENCH_PY"; cat; } | python3 - "$@"
}

print_machine() {
    echo "machine:"
    echo "  nproc: $(nproc)"
    echo "  cpu:   $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "  mem:   $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
}
