#!/usr/bin/env python3
"""The Python half of bench/ratios.sh: inputs before the runs, checks after each, the table at the end.

ratios.sh does the shell's job (tools, nginx, running every command under /usr/bin/time and timeout) and
calls one subcommand of this file for everything else:

    ratios.py trust-store BUNDLE CA OUT          the production-sized store: BUNDLE with CA in its middle
    ratios.py payloads RW DIR N PORT ASSET...    N batch payloads in DIR, RW/urls.cfg, RW/expected.json
    ratios.py payload URL TYPE OUT               the one payload of the start-up row
    ratios.py curl-config OUT URL N              a curl -K config: N times URL, each body to /dev/null
    ratios.py expect OUT NAME=FILE...            a file of expected sizes (for count-files)
    ratios.py count-files DIR EXPECTED           "present bad": files of EXPECTED in DIR with the right size
    ratios.py report RW [settings]               the table, one RATIO line per row, results.jsonl

Conventions (the ones bench/RESULTS.md uses): a rate is items over the whole process's wall time, start-up
included; a row's value is the median of its counted runs; its ratio is richpush's rate over the peer's, so
above 1 richpush is faster (for the start-up rows, where one process is one item: the peer's time over
richpush's). The CPU rows (CPU_ROWS: bench against curl doing the same transfers) keep that direction: their
ratio is the peer's CPU per transfer (user + system) over richpush's CPU per device, so above 1 richpush
spends less. A run that fails a check (exit status, verdicts, sizes, and for richpush bench the
--fail-under 100 threshold in its own report) is listed as a problem and not counted; any problem makes
report exit 1.

Tests: python3 -m unittest discover -s bench -p 'test_*.py'
"""

import argparse
import json
import os
import re
import statistics
import sys

WORKLOADS = ["http-fresh", "http-reuse", "https-store", "batch", "fetch-store", "startup-process",
             "startup-sniff"]
STARTUP = ("startup-process", "startup-sniff")

# Every tool of a workload, richpush's first. "true" is /bin/true under the same wrappers as the start-up
# runs: what /usr/bin/time, timeout and an exec cost, inside both sides of a start-up row.
TOOLS = {
    "http-fresh": ["richpush", "h2load", "curl"],
    "http-reuse": ["richpush", "h2load", "curl"],
    "https-store": ["richpush", "richpush-1ca", "h2load"],
    "batch": ["richpush", "curl"],
    "fetch-store": ["richpush", "richpush-1ca"],
    "startup-process": ["richpush", "curl", "true"],
    "startup-sniff": ["richpush", "file"],
}


class Goal:
    """What a row's ratio must reach: at least a ratio, within a share of the peer, or only reported."""

    def __init__(self, kind, value=None):
        self.kind, self.value = kind, value

    @classmethod
    def at_least(cls, ratio):
        return cls("at-least", ratio)

    @classmethod
    def within(cls, share):
        return cls("within", share)

    @classmethod
    def report(cls):
        return cls("report")

    def threshold(self):
        """The least ratio that meets the goal, None for a reported row."""
        if self.kind == "at-least":
            return self.value
        if self.kind == "within":
            # Within 10% of the peer: at most 10% slower. Faster is never a miss.
            return 1 - self.value
        return None

    def met(self, ratio):
        """True or False; None for a reported row. Without a ratio (no counted run) a goal is not met."""
        least = self.threshold()
        if least is None:
            return None
        return ratio is not None and ratio >= least - 1e-9

    def text(self):
        if self.kind == "at-least":
            return f"{self.value:.1f}x"
        if self.kind == "within":
            return f"within {self.value * 100:.0f}%"
        return "report"


# The rows of the table, in issue 19's order: (workload, tool, peer, goal, what).
ROWS = [
    ("http-fresh", "richpush", "h2load", Goal.at_least(0.9), "bench, fresh connections, HTTP"),
    ("http-reuse", "richpush", "h2load", Goal.at_least(0.8), "bench --reuse, HTTP"),
    ("https-store", "richpush", "h2load", Goal.at_least(0.9), "bench, fresh, HTTPS, production-sized store"),
    ("https-store", "richpush", "richpush-1ca", Goal.within(0.1), "the same, against the one-certificate CA"),
    ("batch", "richpush", "curl", Goal.at_least(0.8), "batch vs curl --parallel, fresh connections"),
    ("fetch-store", "richpush", "richpush-1ca", Goal.within(0.1), "fetch, HTTPS, production store vs test CA"),
    ("startup-process", "richpush", "curl", Goal.report(), "start-up: process, one local payload"),
    ("startup-sniff", "richpush", "file", Goal.report(), "start-up: sniff FILE vs file --mime-type"),
]

# The CPU rows, after ROWS in the table and in the RATIO lines: richpush bench against curl --parallel doing
# the same transfers (the same URL, count and concurrency, each body to /dev/null). The goal: richpush spends
# at most curl's CPU per transfer on a device, that is a ratio (curl's CPU over richpush's) of at least 1.
CPU_ROWS = [
    ("http-fresh", "richpush", "curl", Goal.at_least(1.0), "bench, fresh, HTTP: CPU per transfer"),
    ("http-reuse", "richpush", "curl", Goal.at_least(1.0), "bench --reuse, HTTP: CPU per transfer"),
]

# The workloads where curl does richpush bench's transfers and writes one -w line per transfer.
CURL_TRANSFERS = ("http-fresh", "http-reuse")


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def median(values):
    """The median of a list (the mean of the two middle values for an even count), None if it is empty."""
    return statistics.median(values) if values else None


def ratio(rate, peer_rate):
    """richpush's rate over the peer's (above 1: richpush is faster), None unless both are positive."""
    if not rate or not peer_rate or rate <= 0 or peer_rate <= 0:
        return None
    return rate / peer_rate


def cpu_ratio(cpu, peer_cpu):
    """The peer's CPU per item over richpush's (above 1: richpush spends less), None unless both are positive."""
    return ratio(peer_cpu, cpu)


def fmt(value, spec="{:.0f}"):
    return "-" if value is None else spec.format(value)


# --- inputs --------------------------------------------------------------------------------------

def write_trust_store(bundle, ca, out):
    """Writes BUNDLE's certificates with CA's inserted in the middle to OUT; returns the count."""
    end = "-----END CERTIFICATE-----"
    certs = [c.strip() + "\n" + end + "\n" for c in read(bundle).split(end) if "-----BEGIN CERTIFICATE-----" in c]
    if not certs:
        raise ValueError(f"{bundle} holds no certificate")
    certs.insert(len(certs) // 2, read(ca))
    with open(out, "w") as f:
        f.write("".join(certs))
    return len(certs)


def attachment_payload(url, kind):
    """A Braze payload that shows an alert and asks the service extension for the attachment at URL."""
    return {"aps": {"alert": {"title": "t", "body": "b"}, "mutable-content": 1},
            "ab": {"att": {"url": url, "type": kind}}}


def write_payload(url, kind, out):
    with open(out, "w") as f:
        f.write(json.dumps(attachment_payload(url, kind), separators=(",", ":")) + "\n")


def write_curl_config(out, url, count):
    """A curl -K config of COUNT transfers of URL, each body written to /dev/null."""
    with open(out, "w") as f:
        f.write(f'url = "{url}"\noutput = "/dev/null"\n' * count)


def write_payloads(rw, folder, count, port, assets):
    """COUNT payloads in FOLDER (p000001.json ...) cycling over ASSETS (files of RW/www) on 127.0.0.1:PORT,
    the same URLs as a curl config (RW/urls.cfg), and the size every output must have (RW/expected.json)."""
    www = os.path.join(rw, "www")
    os.makedirs(folder)
    sizes = {a: os.path.getsize(os.path.join(www, a)) for a in assets}
    expected = {}
    with open(os.path.join(rw, "urls.cfg"), "w") as cfg:
        for i in range(1, count + 1):
            asset = assets[(i - 1) % len(assets)]
            ext = asset.rsplit(".", 1)[1]
            url = f"http://127.0.0.1:{port}/{asset}?n={i}"
            write_payload(url, ext, os.path.join(folder, f"p{i:06d}.json"))
            cfg.write(f'url = "{url}"\noutput = "p{i:06d}.{ext}"\n')
            expected[f"p{i:06d}.{ext}"] = sizes[asset]
    with open(os.path.join(rw, "expected.json"), "w") as f:
        json.dump(expected, f)
    return expected


def count_files(folder, expected):
    """(present with the right size, missing or of another size) for the {name: size} of EXPECTED."""
    bad = 0
    for name, size in expected.items():
        path = os.path.join(folder, name)
        if not os.path.isfile(path) or os.path.getsize(path) != size:
            bad += 1
    return len(expected) - bad, bad


# --- checks --------------------------------------------------------------------------------------

def meta(base):
    """(exit status, connections, t0, t1) of a run from BASE.meta; status -1 when the file is missing."""
    fields = (read(base + ".meta", "-1 -1 0 0 0 0").split() + ["0"] * 6)[:6]
    try:
        return int(fields[0]), int(fields[1]), float(fields[4]), float(fields[5])
    except ValueError:
        return -1, -1, 0.0, 0.0


def check_bench_report(report, items):
    """Why a richpush bench report does not count, or None."""
    thresholds = report.get("thresholds") or []
    fail_under = [t for t in thresholds if t.get("option") == "--fail-under"]
    if not fail_under or fail_under[0].get("limit") != 100:
        return "bench: not run with --fail-under 100"
    if not fail_under[0].get("passed"):
        return f"bench: {fail_under[0].get('message', 'display under 100%')}"
    if report.get("display_rate") != 1 or report.get("devices") != items:
        return f"bench: display rate {report.get('display_rate')} over {report.get('devices')} devices"
    return None


def check_transfers(out, items, size):
    """Why curl's stdout (-w '%{http_code} %{size_download}\\n': one line per transfer) does not show ITEMS
    transfers, each a 200 of SIZE bytes, or None."""
    if size is None:
        return "curl: no expected size to check its transfers against"
    lines = out.splitlines()
    if len(lines) != items:
        return f"curl: {len(lines)} transfer lines for {items} transfers"
    wrong = sum(1 for line in lines if line.split() != ["200", str(size)])
    if wrong:
        return f"curl: {wrong} of {items} transfers not a 200 of {size} bytes"
    return None


def check(workload, tool, base, items, size=None):
    """Why the run at BASE does not count, or None. SIZE: the bytes of every transfer where curl does
    richpush bench's transfers (CURL_TRANSFERS)."""
    status = meta(base)[0]
    if status != 0:
        return f"exit {status}"
    out = read(base + ".out")
    if tool == "curl" and workload in CURL_TRANSFERS:
        return check_transfers(out, items, size)
    if tool == "h2load":
        m = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded", out)
        if not m or int(m.group(1)) != items:
            return "h2load: not every request succeeded"
        m = re.search(r"status codes: (\d+) 2xx", out)
        if not m or int(m.group(1)) != items:
            return "h2load: not every status was 2xx"
    elif tool == "curl":
        try:
            present, bad = map(int, read(base + ".files", "0 -1").split())
        except ValueError:
            present, bad = 0, -1
        if present != items or bad != 0:
            return f"curl: {items - present} of {items} files missing or of the wrong size"
    elif tool == "file":
        if out.strip() != "image/jpeg":
            return f"file: {out.strip()!r}, not image/jpeg"
    elif tool == "true":
        pass
    elif workload == "batch":
        try:
            summary = json.loads(read(base + ".summary.json", "{}"))
        except ValueError:
            return "batch: summary.json is not JSON"
        attached = (summary.get("verdicts") or {}).get("attached")
        if attached != items:
            return f"batch: {attached} of {items} attached"
    elif workload == "fetch-store":
        m = re.search(r'"succeeded"\s*:\s*(\d+)', out)
        if not m or int(m.group(1)) != items:
            return "fetch: not every download succeeded"
    elif workload == "startup-process":
        try:
            verdict = (json.loads(out).get("richpush") or {}).get("verdict")
        except (ValueError, AttributeError):
            return "process: stdout is not the payload JSON"
        if verdict != "attached":
            return f"process: verdict {verdict}"
    elif workload == "startup-sniff":
        if "image/jpeg" not in out:
            return "sniff: no image/jpeg in its output"
    else:
        try:
            report = json.loads(read(base + ".json", "{}"))
        except ValueError:
            return "bench: the JSON report is not JSON"
        return check_bench_report(report, items)
    return None


# --- the table -----------------------------------------------------------------------------------

def run_bases(rw, workload, tool, runs, startup_runs):
    """The file prefix of every run of a tool: one per round, or startup_runs per round at start-up."""
    if workload in STARTUP:
        return [f"{rw}/runs/{workload}-{tool}-{r}-{i}" for r in range(1, runs + 1) for i in range(1, startup_runs + 1)]
    return [f"{rw}/runs/{workload}-{tool}-{r}" for r in range(1, runs + 1)]


def client_bound(base):
    try:
        return bool((json.loads(read(base + ".json", "{}")).get("client") or {}).get("bound"))
    except (ValueError, AttributeError):
        return False


def collect(rw, workloads, runs, startup_runs, counts, image_size=None):
    """{(workload, tool): row} over every run, and the problems (runs not counted). IMAGE_SIZE: the bytes of
    the bench workloads' JPEG, which every curl transfer of CURL_TRANSFERS must have."""
    rows, problems = {}, []
    for w in workloads:
        items = 1 if w in STARTUP else counts[w]
        for tool in TOOLS[w]:
            rates, seconds, cpus, rss, connections, bound, failed = [], [], [], [], [], False, 0
            for base in run_bases(rw, w, tool, runs, startup_runs):
                why = check(w, tool, base, items, image_size)
                _, accepted, t0, t1 = meta(base)
                if why is None and t1 <= t0:
                    why = "no wall time recorded"
                if why:
                    problems.append(f"{w} {tool} {os.path.basename(base)}: {why} (see {base}.out/.err); not counted")
                    failed += 1
                    continue
                seconds.append(t1 - t0)
                rates.append(items / (t1 - t0))
                if accepted >= 0:  # nginx's accepted connections during the run (-1: not recorded)
                    connections.append(accepted)
                lines = read(base + ".time").strip().splitlines()
                try:
                    _, peak, user, system = lines[-1].split()
                    cpus.append((float(user) + float(system)) / items * 1e6)
                    rss.append(int(peak) / 1024)
                except (IndexError, ValueError):
                    pass
                if tool.startswith("richpush") and w in ("http-fresh", "http-reuse", "https-store"):
                    bound = bound or client_bound(base)
            # GNU time counts CPU in 10 ms steps: a start-up run takes a step or none, so only the mean
            # over many runs says anything there.
            cpu_us = (sum(cpus) / len(cpus) if cpus else None) if w in STARTUP else median(cpus)
            rows[(w, tool)] = {"rates": rates, "seconds": seconds, "median": median(rates),
                               "median_seconds": median(seconds), "cpus": cpus, "cpu_us": cpu_us,
                               "rss_mb": max(rss) if rss else None, "connections": median(connections),
                               "client_bound": bound, "failed": failed}
    return rows, problems


def results(rows, workloads):
    """One result per row of ROWS whose workload ran, then one per row of CPU_ROWS whose workload ran."""
    out = []
    for w, tool, peer, goal, what in ROWS:
        if w not in workloads:
            continue
        a, b = rows[(w, tool)], rows[(w, peer)]
        r = ratio(a["median"], b["median"])
        result = {"workload": w, "tool": tool, "peer": peer, "what": what, "goal": goal.threshold(),
                  "goal_text": goal.text(), "ratio": r, "met": goal.met(r), "rate": a["median"],
                  "peer_rate": b["median"], "runs": a["rates"], "peer_runs": b["rates"],
                  "not_counted": a["failed"], "peer_not_counted": b["failed"]}
        if w in STARTUP:
            result["seconds"], result["peer_seconds"] = a["median_seconds"], b["median_seconds"]
        out.append(result)
    for w, tool, peer, goal, what in CPU_ROWS:
        if w not in workloads:
            continue
        a, b = rows[(w, tool)], rows[(w, peer)]
        r = cpu_ratio(a["cpu_us"], b["cpu_us"])
        # The keys of the rate rows keep their meaning (rate, runs: items per second of wall time); "metric"
        # and the cpu keys are these rows' own. ratio: the peer's CPU per item over richpush's.
        out.append({"workload": w, "tool": tool, "peer": peer, "what": what, "metric": "cpu_per_item",
                    "goal": goal.threshold(), "goal_text": goal.text(), "ratio": r, "met": goal.met(r),
                    "cpu_us": a["cpu_us"], "peer_cpu_us": b["cpu_us"], "cpu_runs": a["cpus"],
                    "peer_cpu_runs": b["cpus"], "seconds": a["median_seconds"],
                    "peer_seconds": b["median_seconds"], "rate": a["median"], "peer_rate": b["median"],
                    "runs": a["rates"], "peer_runs": b["rates"], "not_counted": a["failed"],
                    "peer_not_counted": b["failed"]})
    return out


def value_text(result, side):
    """A row's median for SIDE ("" for richpush, "peer_"): a rate, at start-up milliseconds per process, in a
    CPU row microseconds of CPU per item."""
    if result.get("metric") == "cpu_per_item":
        cpu = result.get(side + "cpu_us")
        return "-" if cpu is None else f"{cpu:.0f} us"
    if result["workload"] in STARTUP:
        seconds = result.get(side + "seconds")
        return "-" if seconds is None else f"{seconds * 1e3:.1f} ms"
    return fmt(result[side + "rate"])


def runs_text(result):
    if result.get("metric") == "cpu_per_item":
        return (" ".join(f"{x:.0f}" for x in result["cpu_runs"]) + " | "
                + " ".join(f"{x:.0f}" for x in result["peer_cpu_runs"]))
    if result["workload"] in STARTUP:
        def spread(values):
            return f"{len(values)} runs {min(values) * 1e3:.1f}-{max(values) * 1e3:.1f} ms" if values else "0 runs"
        return spread([1 / r for r in result["runs"]]) + " | " + spread([1 / r for r in result["peer_runs"]])
    return " ".join(f"{x:.0f}" for x in result["runs"]) + " | " + " ".join(f"{x:.0f}" for x in result["peer_runs"])


def met_text(met):
    return {True: "yes", False: "NO", None: "-"}[met]


LABEL = max(len(f"{what} (vs {peer})") for _, _, peer, _, what in ROWS + CPU_ROWS)


def table(results_list, rows):
    """The report's lines: the ratio table (goals in the last column), which way is better, then CPU, wall
    time, connections and memory per tool."""
    lines = [f"{'workload':<{LABEL}} {'richpush':>10} {'peer':>10} {'ratio':>7}  {'met':<4} "
             f"{'runs (per s; start-up: ms; CPU: us)':<44} {'goal':>11}"]
    for r in results_list:
        label = f"{r['what']} (vs {r['peer']})"
        lines.append(f"{label:<{LABEL}} {value_text(r, ''):>10} {value_text(r, 'peer_'):>10} "
                     f"{fmt(r['ratio'], '{:.2f}x'):>7}  {met_text(r['met']):<4} {runs_text(r):<44} "
                     f"{r['goal_text']:>11}")
    lines.append("ratio: above 1 richpush is better, in every row (rates: richpush's over the peer's; start-up: "
                 "the peer's time over richpush's)")
    if any(r.get("metric") == "cpu_per_item" for r in results_list):
        lines.append("CPU per transfer rows: the peer's CPU (user + system) per transfer over richpush's per device, "
                     "so 1.0x or more = richpush spends at most the peer's CPU")
    baseline = rows.get(("startup-process", "true"))
    if baseline and baseline["median_seconds"] is not None:
        lines.append(f"start-up rows include the wrappers (/usr/bin/time, timeout, exec): /bin/true takes "
                     f"{baseline['median_seconds'] * 1e3:.1f} ms the same way")
    lines.append("")
    lines.append(f"{'workload/tool':<30} {'CPU us/item':>12} {'wall s':>8} {'conns/run':>10} {'peak RSS MB':>12}  "
                 "client-bound   (medians of counted runs; start-up: CPU per process is the mean of all runs, "
                 "wall per process)")
    for (w, tool), row in rows.items():
        lines.append(f"{w + ' ' + tool:<30} {fmt(row['cpu_us']):>12} {fmt(row['median_seconds'], '{:.3f}'):>8} "
                     f"{fmt(row['connections']):>10} {fmt(row['rss_mb'], '{:.1f}'):>12}  "
                     f"{'yes' if row['client_bound'] else '-'}")
    return lines


def ratio_line(result):
    return "RATIO " + json.dumps(result, sort_keys=True)


def report(rw, runs, startup_runs, workloads, counts, out=None, image_size=None):
    """Prints the table, the RATIO lines (also written to RW/results.jsonl) and the problems on OUT (stdout);
    returns the exit status: 1 when a run was not counted, else 0."""
    out = out or sys.stdout
    rows, problems = collect(rw, workloads, runs, startup_runs, counts, image_size)
    res = results(rows, workloads)
    print("", file=out)
    for line in table(res, rows):
        print(line, file=out)
    with open(os.path.join(rw, "results.jsonl"), "w") as f:
        for r in res:
            f.write(json.dumps(r, sort_keys=True) + "\n")
            print(ratio_line(r), file=out)
    for p in problems:
        print("problem: " + p, file=out)
    return 1 if problems else 0


# --- command line --------------------------------------------------------------------------------

def main(argv):
    parser = argparse.ArgumentParser(prog="ratios.py", description="The analysis of bench/ratios.sh.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("trust-store", help="Write the production-sized trust store.")
    p.add_argument("bundle")
    p.add_argument("ca")
    p.add_argument("out")
    p = sub.add_parser("payloads", help="Write the batch payloads, the curl config and the expected sizes.")
    p.add_argument("rw")
    p.add_argument("folder")
    p.add_argument("count", type=int)
    p.add_argument("port", type=int)
    p.add_argument("assets", nargs="+")
    p = sub.add_parser("payload", help="Write one payload for URL.")
    p.add_argument("url")
    p.add_argument("type")
    p.add_argument("out")
    p = sub.add_parser("curl-config", help="Write a curl -K config of COUNT transfers of URL to /dev/null.")
    p.add_argument("out")
    p.add_argument("url")
    p.add_argument("count", type=int)
    p = sub.add_parser("expect", help="Write the expected sizes of NAME=FILE pairs.")
    p.add_argument("out")
    p.add_argument("pairs", nargs="+")
    p = sub.add_parser("count-files", help="Print 'present bad' for the expected files in DIR.")
    p.add_argument("folder")
    p.add_argument("expected")
    p = sub.add_parser("report", help="Print the table and the RATIO lines; exit 1 if a run was not counted.")
    p.add_argument("rw")
    p.add_argument("--runs", type=int, required=True)
    p.add_argument("--startup-runs", type=int, required=True)
    p.add_argument("--workloads", required=True)
    for w in ("http-fresh", "http-reuse", "https-store", "batch", "fetch-store"):
        p.add_argument("--" + w, type=int, required=True, dest=w.replace("-", "_"))
    p.add_argument("--image-size", type=int, required=True, help="bytes of every curl transfer of the bench rows")
    args = parser.parse_args(argv)

    if args.command == "trust-store":
        print(write_trust_store(args.bundle, args.ca, args.out))
    elif args.command == "payloads":
        write_payloads(args.rw, args.folder, args.count, args.port, args.assets)
    elif args.command == "payload":
        write_payload(args.url, args.type, args.out)
    elif args.command == "curl-config":
        write_curl_config(args.out, args.url, args.count)
    elif args.command == "expect":
        expected = {}
        for pair in args.pairs:
            name, _, path = pair.partition("=")
            expected[name] = os.path.getsize(path)
        with open(args.out, "w") as f:
            json.dump(expected, f)
    elif args.command == "count-files":
        with open(args.expected) as f:
            print(*count_files(args.folder, json.load(f)))
    elif args.command == "report":
        workloads = args.workloads.split()
        unknown = [w for w in workloads if w not in WORKLOADS]
        if unknown:
            parser.error(f"unknown workload(s): {' '.join(unknown)}")
        counts = {w: getattr(args, w.replace("-", "_")) for w in WORKLOADS if w not in STARTUP}
        return report(args.rw, args.runs, args.startup_runs, workloads, counts, image_size=args.image_size)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
