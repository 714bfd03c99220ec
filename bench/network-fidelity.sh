#!/usr/bin/env bash
# bench/network-fidelity.sh: does the shaping relay give the times a profile predicts, and what does it cost?
#
# Starts `richpush serve Samples/assets` on 127.0.0.1 (ports chosen by the system), then:
#
#  1. Fidelity: ROUNDS downloads of a 1,000,000-byte body (`hero.png?size=1000000`) with
#     `richpush fetch --network 3g`, over HTTP and over HTTPS (the sample host mapped to the server),
#     each compared with the model: round trips (2 for HTTP, 3 for HTTPS: TCP, TLS 1.3, request)
#     times the RTT, plus size / downlink rate. Prints the measured total and its ratio to the model.
#  2. Cost: CONNECTIONS downloads at once of hero.jpg (4 kB), `fetch --repeat N --parallel N`, each
#     held open about 4 s, with and without the relay: through a profile with 3G rates and a 2 s
#     round trip (`down=780kbit,up=330kbit,rtt=2s`), and without a profile against `?delay=4000` (the
#     server holds each answer 4 s, so as many transfers overlap). The difference in CPU time and in
#     peak resident memory of the richpush process is the relay's: per connection, and at CONNECTIONS.
#
#   bench/network-fidelity.sh                          # .build/release/richpush (or debug)
#   ROUNDS=5 CONNECTIONS=1000 RICHPUSH=/path/to/richpush bench/network-fidelity.sh
#
# Only 127.0.0.1.
set -euo pipefail

NAME=network-fidelity
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/serve-lib.sh"
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-1000}
for value in "$ROUNDS" "$CONNECTIONS"; do
    [[ $value =~ ^[1-9][0-9]*$ ]] || { echo "network-fidelity: ROUNDS and CONNECTIONS must be positive integers" >&2; exit 1; }
done

start_serve
for _ in $(seq 100); do [[ $(wc -l <"$SCRATCH/urls") -ge 2 ]] && break; sleep 0.1; done
HTTP=$(sed -n 1p "$SCRATCH/urls")
HTTPS=$(sed -n 2p "$SCRATCH/urls")
[[ $HTTP =~ ^http://127\.0\.0\.1:[0-9]+/$ && $HTTPS =~ ^https://127\.0\.0\.1:([0-9]+)/$ ]] || {
    echo "network-fidelity: server did not start" >&2; cat "$SCRATCH/stderr" >&2; exit 1; }
HTTPS_PORT=${BASH_REMATCH[1]}
TLS=(--cacert "$ROOT/Samples/certs/ca.pem" --connect-to "cdn.example.com:443:127.0.0.1:$HTTPS_PORT")

python3 - "$RICHPUSH" "$HTTP" "$ROUNDS" "$CONNECTIONS" "${TLS[@]}" <<'PY'
import json, os, subprocess, sys, time

richpush, http, rounds, connections = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
tls = sys.argv[5:]
size = 1_000_000
rate, rtt = 780_000, 0.200  # the 3g profile: 780 kbit/s down, 100 ms each way

print("fidelity: 1,000,000 bytes through --network 3g (model: round trips x 200 ms + size / 780 kbit/s)")
for scheme, url, extra, trips in [
    ("http", http + "hero.png?size=1000000", ["--allow-http"], 2),
    ("https", "https://cdn.example.com/hero.png?size=1000000", tls, 3),
]:
    model = trips * rtt + size * 8 / rate
    totals = []
    for _ in range(rounds):
        out = subprocess.run([richpush, "fetch", url, "--network", "3g", "--budget", "120", *extra],
                             capture_output=True, text=True)
        report = json.loads(out.stdout)
        assert report["ok"], out.stdout + out.stderr
        assert report["download"]["bytes"] == size, report
        totals.append(report["download"]["timings_ms"]["total"] / 1000)
    ratios = [t / model for t in totals]
    print(f"  {scheme:5}  model {model:6.2f} s  measured " + ", ".join(f"{t:6.2f} s" for t in totals)
          + "  ratio " + ", ".join(f"{r:.3f}" for r in ratios))

def run(arguments):
    """Runs richpush fetch; returns its summary, CPU seconds, peak RSS (sampled VmRSS) and wall time."""
    with open(os.devnull, "w") as null, open("/tmp/.network-fidelity-%d" % os.getpid(), "w+") as out:
        started = time.monotonic()
        process = subprocess.Popen([richpush, "fetch", *arguments], stdout=out, stderr=null)
        peak = 0
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            try:
                with open(f"/proc/{process.pid}/status") as status_file:
                    for line in status_file:
                        if line.startswith("VmRSS:"):
                            peak = max(peak, int(line.split()[1]) * 1024)
            except OSError:
                pass
            time.sleep(0.05)
        process.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.monotonic() - started
        out.seek(0)
        summary = json.loads(out.read())
    os.unlink("/tmp/.network-fidelity-%d" % os.getpid())
    return summary, usage.ru_utime + usage.ru_stime, peak, elapsed

common = ["--allow-http", "--repeat", str(connections), "--parallel", str(connections), "--budget", "60",
          "--connect-timeout", "60"]
print(f"cost: {connections} downloads of hero.jpg at once, each held about 4 s")
base, base_cpu, base_rss, base_elapsed = run([http + "hero.jpg?delay=4000", *common])
relayed, relay_cpu, relay_rss, relay_elapsed = run([http + "hero.jpg", "--network", "down=780kbit,up=330kbit,rtt=2s", *common])
for name, summary, cpu, rss, elapsed in [
        ("without relay (server delay 4 s)", base, base_cpu, base_rss, base_elapsed),
        ("through the relay (3G rates, rtt 2 s)", relayed, relay_cpu, relay_rss, relay_elapsed)]:
    print(f"  {name:34} {summary['succeeded']}/{summary['downloads']} ok in {elapsed:5.1f} s, "
          f"CPU {cpu:5.2f} s, peak RSS {rss / 1e6:6.1f} MB")
print(f"  relay: CPU per connection {(relay_cpu - base_cpu) / connections * 1e6:.0f} us, "
      f"memory at {connections} connections {(relay_rss - base_rss) / 1e6:.1f} MB "
      f"({(relay_rss - base_rss) / connections / 1024:.1f} KiB each)")
PY
