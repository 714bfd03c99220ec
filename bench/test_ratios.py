"""Tests of bench/ratios.py: python3 -m unittest discover -s bench -p 'test_*.py' (stdlib only, no network)."""

import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ratios  # noqa: E402


def bench_report(devices, display_rate=1, fail_under=100, passed=True):
    thresholds = [{"option": "default", "name": "would_crash", "limit": 0, "passed": True}]
    if fail_under is not None:
        thresholds.insert(0, {"option": "--fail-under", "name": "display_rate", "limit": fail_under,
                              "passed": passed, "message": f"display {display_rate * 100:.1f}% vs {fail_under}%"})
    return {"devices": devices, "display_rate": display_rate, "thresholds": thresholds,
            "client": {"bound": False}}


H2LOAD_OUT = """finished in 1.00s, 100.00 req/s, 30.00MB/s
requests: {n} total, {n} started, {n} done, {ok} succeeded, 0 failed, 0 errored, 0 timeout
status codes: {ok} 2xx, 0 3xx, 0 4xx, 0 5xx
"""

IMAGE_SIZE = 300000


def curl_out(transfers, size=IMAGE_SIZE, status=200):
    """What curl -w '%{http_code} %{size_download}\\n' prints for TRANSFERS transfers alike."""
    return f"{status} {size}\n" * transfers


# The keys of a rate row's RATIO line, which other tooling reads: the CPU rows must not change them.
RATE_KEYS = {"workload", "tool", "peer", "what", "goal", "goal_text", "ratio", "met", "rate", "peer_rate", "runs",
             "peer_runs", "not_counted", "peer_not_counted"}


class Rig:
    """A fake bench/work/ratios folder: runs written as ratios.sh writes them."""

    def __init__(self, test):
        self.dir = tempfile.TemporaryDirectory()
        test.addCleanup(self.dir.cleanup)
        self.rw = self.dir.name
        os.makedirs(os.path.join(self.rw, "runs"))

    def run(self, name, seconds, status=0, out="", cpu=(0.5, 0.25), peak_kb=51200, connections=10, **extra):
        base = os.path.join(self.rw, "runs", name)
        with open(base + ".meta", "w") as f:
            f.write(f"{status} {connections} 0 0 1000.0 {1000.0 + seconds}\n")
        with open(base + ".out", "w") as f:
            f.write(out)
        with open(base + ".err", "w") as f:
            f.write("")
        with open(base + ".time", "w") as f:
            f.write(f"{seconds:.2f} {peak_kb} {cpu[0]} {cpu[1]}\n")
        for suffix, text in extra.items():
            with open(base + "." + suffix.replace("_", "."), "w") as f:
                f.write(text)
        return base

    def bench(self, name, seconds, devices, cpu=(0.5, 0.25), **report):
        return self.run(name, seconds, cpu=cpu, json=json.dumps(bench_report(devices, **report)))

    def curl(self, name, seconds, transfers, cpu=(0.5, 0.25), **run):
        """A curl run of the bench workloads: one '200 SIZE' line per transfer."""
        return self.run(name, seconds, out=curl_out(transfers), cpu=cpu, **run)


class MedianAndRatioTests(unittest.TestCase):
    def test_median_of_odd_even_and_empty(self):
        self.assertEqual(ratios.median([3, 1, 2]), 2)
        self.assertEqual(ratios.median([4, 1, 3, 2]), 2.5)
        self.assertIsNone(ratios.median([]))

    def test_ratio_is_richpush_over_peer_so_above_one_is_richpush_faster(self):
        self.assertEqual(ratios.ratio(300.0, 600.0), 0.5)
        self.assertEqual(ratios.ratio(600.0, 300.0), 2.0)

    def test_cpu_ratio_is_the_peers_cpu_over_richpushs_so_above_one_is_richpush_spending_less(self):
        self.assertEqual(ratios.cpu_ratio(200.0, 100.0), 0.5)
        self.assertEqual(ratios.cpu_ratio(100.0, 200.0), 2.0)
        self.assertIsNone(ratios.cpu_ratio(None, 100.0))
        self.assertIsNone(ratios.cpu_ratio(100.0, 0.0))

    def test_no_ratio_without_two_positive_rates(self):
        self.assertIsNone(ratios.ratio(None, 600.0))
        self.assertIsNone(ratios.ratio(300.0, None))
        self.assertIsNone(ratios.ratio(300.0, 0.0))
        self.assertIsNone(ratios.ratio(0.0, 300.0))


class GoalTests(unittest.TestCase):
    def test_at_least(self):
        goal = ratios.Goal.at_least(0.9)
        self.assertTrue(goal.met(0.9))
        self.assertTrue(goal.met(1.2))
        self.assertFalse(goal.met(0.89))
        self.assertIs(goal.met(None), False)  # no counted run: not met
        self.assertEqual(goal.text(), "0.9x")
        self.assertEqual(goal.threshold(), 0.9)

    def test_within_ten_percent_is_at_most_ten_percent_slower(self):
        goal = ratios.Goal.within(0.1)
        self.assertTrue(goal.met(0.9))
        self.assertTrue(goal.met(1.04))
        self.assertTrue(goal.met(1.5))
        self.assertFalse(goal.met(0.89))
        self.assertEqual(goal.text(), "within 10%")

    def test_report_is_never_met_or_missed(self):
        goal = ratios.Goal.report()
        self.assertIsNone(goal.met(0.1))
        self.assertIsNone(goal.threshold())
        self.assertEqual(goal.text(), "report")

    def test_the_goals_are_issue_19s(self):
        goals = {(w, peer): g.text() for w, _, peer, g, _ in ratios.ROWS}
        self.assertEqual(goals, {
            ("http-fresh", "h2load"): "0.9x",
            ("http-reuse", "h2load"): "0.8x",
            ("https-store", "h2load"): "0.9x",
            ("https-store", "richpush-1ca"): "within 10%",
            ("batch", "curl"): "0.8x",
            ("fetch-store", "richpush-1ca"): "within 10%",
            ("startup-process", "curl"): "report",
            ("startup-sniff", "file"): "report",
        })

    def test_the_cpu_rows_ask_richpush_for_at_most_curls_cpu_per_transfer(self):
        goals = {(w, tool, peer): g.text() for w, tool, peer, g, _ in ratios.CPU_ROWS}
        self.assertEqual(goals, {("http-fresh", "richpush", "curl"): "1.0x",
                                 ("http-reuse", "richpush", "curl"): "1.0x"})
        for _, _, _, goal, _ in ratios.CPU_ROWS:
            self.assertTrue(goal.met(1.0))  # the same CPU per transfer as curl meets the goal
            self.assertFalse(goal.met(0.99))

    def test_the_bench_workloads_run_curl_after_h2load(self):
        self.assertEqual(ratios.TOOLS["http-fresh"], ["richpush", "h2load", "curl"])
        self.assertEqual(ratios.TOOLS["http-reuse"], ["richpush", "h2load", "curl"])

    def test_every_row_compares_tools_of_its_workload(self):
        for w, tool, peer, _, _ in ratios.ROWS + ratios.CPU_ROWS:
            self.assertIn(w, ratios.WORKLOADS)
            self.assertEqual(ratios.TOOLS[w][0], "richpush")
            self.assertIn(tool, ratios.TOOLS[w])
            self.assertIn(peer, ratios.TOOLS[w])


class CheckTests(unittest.TestCase):
    def setUp(self):
        self.rig = Rig(self)

    def test_a_run_that_exited_non_zero_does_not_count(self):
        base = self.rig.bench("http-fresh-richpush-1", 1.0, 100)
        self.assertIsNone(ratios.check("http-fresh", "richpush", base, 100))
        base = self.rig.run("http-fresh-richpush-2", 1.0, status=1, json=json.dumps(bench_report(100)))
        self.assertEqual(ratios.check("http-fresh", "richpush", base, 100), "exit 1")

    def test_a_run_without_its_meta_file_does_not_count(self):
        self.assertEqual(ratios.check("http-fresh", "h2load", os.path.join(self.rig.rw, "missing"), 10), "exit -1")

    def test_a_bench_run_must_carry_fail_under_100(self):
        base = self.rig.bench("b1", 1.0, 100, fail_under=None)
        self.assertEqual(ratios.check("http-reuse", "richpush", base, 100), "bench: not run with --fail-under 100")
        base = self.rig.bench("b2", 1.0, 100, fail_under=99)
        self.assertEqual(ratios.check("http-reuse", "richpush", base, 100), "bench: not run with --fail-under 100")

    def test_a_bench_run_whose_threshold_failed_does_not_count_even_with_exit_zero(self):
        base = self.rig.bench("b", 1.0, 100, display_rate=0.5, passed=False)
        self.assertIn("display 50.0%", ratios.check("https-store", "richpush-1ca", base, 100))

    def test_a_bench_run_with_other_devices_or_a_lower_display_rate_does_not_count(self):
        base = self.rig.bench("b1", 1.0, 99)
        self.assertIn("over 99 devices", ratios.check("http-fresh", "richpush", base, 100))
        base = self.rig.bench("b2", 1.0, 100, display_rate=0.99)
        self.assertIn("display rate 0.99", ratios.check("http-fresh", "richpush", base, 100))
        base = self.rig.run("b3", 1.0, json="{not json")
        self.assertEqual(ratios.check("http-fresh", "richpush", base, 100), "bench: the JSON report is not JSON")

    def test_h2load_must_succeed_with_2xx_for_every_request(self):
        base = self.rig.run("h1", 1.0, out=H2LOAD_OUT.format(n=100, ok=100))
        self.assertIsNone(ratios.check("http-fresh", "h2load", base, 100))
        base = self.rig.run("h2", 1.0, out=H2LOAD_OUT.format(n=100, ok=99))
        self.assertEqual(ratios.check("http-fresh", "h2load", base, 100), "h2load: not every request succeeded")
        base = self.rig.run("h3", 1.0, out="requests: 100 total, 100 started, 100 done, 100 succeeded\n")
        self.assertEqual(ratios.check("http-fresh", "h2load", base, 100), "h2load: not every status was 2xx")

    def test_curl_needs_every_file_with_its_size(self):
        base = self.rig.run("c1", 1.0, files="10 0\n")
        self.assertIsNone(ratios.check("batch", "curl", base, 10))
        base = self.rig.run("c2", 1.0, files="9 1\n")
        self.assertIn("1 of 10 files", ratios.check("batch", "curl", base, 10))
        base = self.rig.run("c3", 1.0)
        self.assertIsNotNone(ratios.check("startup-process", "curl", base, 1))

    def test_curl_in_the_bench_workloads_needs_a_200_of_the_image_size_for_every_transfer(self):
        for w in ("http-fresh", "http-reuse"):
            base = self.rig.curl(f"{w}-ok", 1.0, 100)
            self.assertIsNone(ratios.check(w, "curl", base, 100, IMAGE_SIZE))
        base = self.rig.run("short", 1.0, out=curl_out(99))
        self.assertEqual(ratios.check("http-fresh", "curl", base, 100, IMAGE_SIZE),
                         "curl: 99 transfer lines for 100 transfers")
        base = self.rig.run("extra", 1.0, out=curl_out(101))
        self.assertEqual(ratios.check("http-reuse", "curl", base, 100, IMAGE_SIZE),
                         "curl: 101 transfer lines for 100 transfers")
        base = self.rig.run("404", 1.0, out=curl_out(98) + "404 153\n" + "000 0\n")
        self.assertEqual(ratios.check("http-fresh", "curl", base, 100, IMAGE_SIZE),
                         "curl: 2 of 100 transfers not a 200 of 300000 bytes")
        base = self.rig.run("cut", 1.0, out=curl_out(99) + f"200 {IMAGE_SIZE - 1}\n")
        self.assertEqual(ratios.check("http-reuse", "curl", base, 100, IMAGE_SIZE),
                         "curl: 1 of 100 transfers not a 200 of 300000 bytes")
        base = self.rig.run("other-size", 1.0, out=curl_out(100, size=1000))
        self.assertIsNotNone(ratios.check("http-fresh", "curl", base, 100, IMAGE_SIZE))

    def test_curl_in_the_bench_workloads_must_exit_zero_even_with_every_line_right(self):
        base = self.rig.curl("c", 1.0, 100, status=22)  # --fail: an HTTP error somewhere
        self.assertEqual(ratios.check("http-fresh", "curl", base, 100, IMAGE_SIZE), "exit 22")

    def test_curl_in_the_bench_workloads_needs_the_expected_size(self):
        base = self.rig.curl("c", 1.0, 100)
        self.assertEqual(ratios.check("http-fresh", "curl", base, 100),
                         "curl: no expected size to check its transfers against")

    def test_curl_in_batch_still_counts_files_not_lines(self):
        base = self.rig.run("b", 1.0, out=curl_out(10, size=5), files="10 0\n")
        self.assertIsNone(ratios.check("batch", "curl", base, 10, IMAGE_SIZE))

    def test_batch_needs_every_payload_attached(self):
        base = self.rig.run("r1", 1.0, summary_json=json.dumps({"verdicts": {"attached": 10}}))
        self.assertIsNone(ratios.check("batch", "richpush", base, 10))
        base = self.rig.run("r2", 1.0, summary_json=json.dumps({"verdicts": {"attached": 9, "fallback": 1}}))
        self.assertEqual(ratios.check("batch", "richpush", base, 10), "batch: 9 of 10 attached")
        base = self.rig.run("r3", 1.0)
        self.assertEqual(ratios.check("batch", "richpush", base, 10), "batch: None of 10 attached")

    def test_fetch_needs_every_download(self):
        base = self.rig.run("f1", 1.0, out='{"repeat": 10, "succeeded": 10}')
        self.assertIsNone(ratios.check("fetch-store", "richpush-1ca", base, 10))
        base = self.rig.run("f2", 1.0, out='{"repeat": 10, "succeeded": 9}')
        self.assertEqual(ratios.check("fetch-store", "richpush", base, 10), "fetch: not every download succeeded")

    def test_process_needs_the_attached_verdict(self):
        base = self.rig.run("p1", 0.02, out=json.dumps({"aps": {}, "richpush": {"verdict": "attached"}}))
        self.assertIsNone(ratios.check("startup-process", "richpush", base, 1))
        base = self.rig.run("p2", 0.02, out=json.dumps({"aps": {}, "richpush": {"verdict": "fallback"}}))
        self.assertEqual(ratios.check("startup-process", "richpush", base, 1), "process: verdict fallback")
        base = self.rig.run("p3", 0.02, out="")
        self.assertEqual(ratios.check("startup-process", "richpush", base, 1),
                         "process: stdout is not the payload JSON")

    def test_sniff_and_file_must_name_the_jpeg(self):
        base = self.rig.run("s1", 0.02, out="hero.jpg: image/jpeg public.jpeg image JPEG image data\n")
        self.assertIsNone(ratios.check("startup-sniff", "richpush", base, 1))
        base = self.rig.run("s2", 0.02, out="hero.jpg: text/plain unsupported\n")
        self.assertIsNotNone(ratios.check("startup-sniff", "richpush", base, 1))
        base = self.rig.run("s3", 0.002, out="image/jpeg\n")
        self.assertIsNone(ratios.check("startup-sniff", "file", base, 1))
        base = self.rig.run("s4", 0.002, out="image/png\n")
        self.assertIsNotNone(ratios.check("startup-sniff", "file", base, 1))


class CollectTests(unittest.TestCase):
    def setUp(self):
        self.rig = Rig(self)

    def test_a_failed_run_is_not_counted_and_is_a_problem(self):
        self.rig.bench("http-fresh-richpush-1", 2.0, 100)
        self.rig.bench("http-fresh-richpush-2", 0.01, 100, display_rate=0.0, passed=False)  # fast but broken
        self.rig.bench("http-fresh-richpush-3", 4.0, 100)
        for r, seconds in enumerate([1.0, 1.0, 1.0], 1):
            self.rig.run(f"http-fresh-h2load-{r}", seconds, out=H2LOAD_OUT.format(n=100, ok=100))
            self.rig.curl(f"http-fresh-curl-{r}", seconds, 100)
        rows, problems = ratios.collect(self.rig.rw, ["http-fresh"], 3, 1, {"http-fresh": 100}, IMAGE_SIZE)
        row = rows[("http-fresh", "richpush")]
        self.assertEqual(row["rates"], [50.0, 25.0])
        self.assertEqual(row["median"], 37.5)
        self.assertEqual(row["failed"], 1)
        self.assertEqual(len(problems), 1)
        self.assertIn("http-fresh-richpush-2", problems[0])
        self.assertIn("not counted", problems[0])
        self.assertEqual(rows[("http-fresh", "h2load")]["median"], 100.0)

    def test_cpu_per_item_and_peak_rss(self):
        self.rig.bench("http-fresh-richpush-1", 1.0, 100)
        self.rig.run("http-fresh-h2load-1", 1.0, out=H2LOAD_OUT.format(n=100, ok=100), cpu=(0.01, 0.01),
                     peak_kb=10240)
        self.rig.curl("http-fresh-curl-1", 1.0, 100, cpu=(0.02, 0.01))
        rows, _ = ratios.collect(self.rig.rw, ["http-fresh"], 1, 1, {"http-fresh": 100}, IMAGE_SIZE)
        self.assertAlmostEqual(rows[("http-fresh", "richpush")]["cpu_us"], 7500.0)
        self.assertAlmostEqual(rows[("http-fresh", "h2load")]["cpu_us"], 200.0)
        self.assertAlmostEqual(rows[("http-fresh", "curl")]["cpu_us"], 300.0)
        self.assertEqual(rows[("http-fresh", "h2load")]["rss_mb"], 10.0)

    def test_the_cpu_row_is_curls_cpu_per_transfer_over_richpushs_per_device(self):
        # richpush: 400 us per device (user 0.3 s + sys 0.1 s over 1000); curl: 200, 250 and 300 us per transfer.
        for r, curl_cpu in enumerate([(0.15, 0.05), (0.2, 0.05), (0.2, 0.1)], 1):
            self.rig.bench(f"http-reuse-richpush-{r}", 1.0, 1000, cpu=(0.3, 0.1))
            self.rig.run(f"http-reuse-h2load-{r}", 0.5, out=H2LOAD_OUT.format(n=1000, ok=1000))
            self.rig.curl(f"http-reuse-curl-{r}", 0.8, 1000, cpu=curl_cpu, connections=64)
        rows, problems = ratios.collect(self.rig.rw, ["http-reuse"], 3, 1, {"http-reuse": 1000}, IMAGE_SIZE)
        self.assertEqual(problems, [])
        self.assertAlmostEqual(rows[("http-reuse", "curl")]["cpu_us"], 250.0)
        self.assertEqual(rows[("http-reuse", "curl")]["connections"], 64)
        self.assertAlmostEqual(rows[("http-reuse", "curl")]["median_seconds"], 0.8)
        by_peer = {r["peer"]: r for r in ratios.results(rows, ["http-reuse"])}
        self.assertAlmostEqual(by_peer["h2load"]["ratio"], 0.5)  # the rate row is unchanged
        cpu = by_peer["curl"]
        self.assertEqual(cpu["metric"], "cpu_per_item")
        self.assertAlmostEqual(cpu["cpu_us"], 400.0)
        self.assertAlmostEqual(cpu["peer_cpu_us"], 250.0)
        self.assertAlmostEqual(cpu["ratio"], 0.625)  # richpush spends 1.6 times curl's CPU: under 1, a miss
        self.assertIs(cpu["met"], False)
        self.assertEqual((cpu["goal"], cpu["goal_text"]), (1.0, "1.0x"))
        self.assertAlmostEqual(cpu["seconds"], 1.0)
        self.assertAlmostEqual(cpu["peer_seconds"], 0.8)
        self.assertEqual(len(cpu["peer_cpu_runs"]), 3)

    def test_richpush_spending_at_most_curls_cpu_meets_the_cpu_goal(self):
        self.rig.bench("http-fresh-richpush-1", 1.0, 100, cpu=(0.01, 0.01))
        self.rig.run("http-fresh-h2load-1", 1.0, out=H2LOAD_OUT.format(n=100, ok=100))
        self.rig.curl("http-fresh-curl-1", 1.0, 100, cpu=(0.02, 0.02))
        rows, _ = ratios.collect(self.rig.rw, ["http-fresh"], 1, 1, {"http-fresh": 100}, IMAGE_SIZE)
        cpu = next(r for r in ratios.results(rows, ["http-fresh"]) if r["peer"] == "curl")
        self.assertAlmostEqual(cpu["ratio"], 2.0)
        self.assertIs(cpu["met"], True)

    def test_a_failed_curl_run_is_not_counted_and_is_a_problem(self):
        for r in (1, 2, 3):
            self.rig.bench(f"http-fresh-richpush-{r}", 1.0, 100)
            self.rig.run(f"http-fresh-h2load-{r}", 1.0, out=H2LOAD_OUT.format(n=100, ok=100))
        self.rig.curl("http-fresh-curl-1", 1.0, 100, cpu=(0.01, 0.01))
        self.rig.run("http-fresh-curl-2", 0.1, out=curl_out(100, status=503), cpu=(0.0, 0.0))  # fast, wrong
        self.rig.curl("http-fresh-curl-3", 1.0, 100, cpu=(0.02, 0.02))
        rows, problems = ratios.collect(self.rig.rw, ["http-fresh"], 3, 1, {"http-fresh": 100}, IMAGE_SIZE)
        self.assertEqual(len(problems), 1)
        self.assertIn("http-fresh curl http-fresh-curl-2: curl: 100 of 100 transfers not a 200", problems[0])
        self.assertIn("not counted", problems[0])
        row = rows[("http-fresh", "curl")]
        self.assertEqual(row["failed"], 1)
        self.assertEqual(row["rates"], [100.0, 100.0])
        self.assertAlmostEqual(row["cpu_us"], 300.0)  # the median of 200 and 400: the failed run is not in it
        cpu = next(r for r in ratios.results(rows, ["http-fresh"]) if r["peer"] == "curl")
        self.assertEqual(cpu["peer_not_counted"], 1)

    def test_a_cpu_row_without_any_counted_curl_run_is_not_met(self):
        self.rig.bench("http-fresh-richpush-1", 1.0, 100)
        self.rig.run("http-fresh-h2load-1", 1.0, out=H2LOAD_OUT.format(n=100, ok=100))
        self.rig.curl("http-fresh-curl-1", 1.0, 100, status=7)
        rows, problems = ratios.collect(self.rig.rw, ["http-fresh"], 1, 1, {"http-fresh": 100}, IMAGE_SIZE)
        self.assertEqual(len(problems), 1)
        cpu = next(r for r in ratios.results(rows, ["http-fresh"]) if r["peer"] == "curl")
        self.assertIsNone(cpu["ratio"])
        self.assertIsNone(cpu["peer_cpu_us"])
        self.assertIs(cpu["met"], False)

    def test_startup_rows_take_the_median_of_every_sequential_run(self):
        attached = json.dumps({"richpush": {"verdict": "attached"}})
        for r in (1, 2):
            for i, seconds in enumerate([0.010, 0.020, 0.030], 1):
                self.rig.run(f"startup-process-richpush-{r}-{i}", seconds + r / 1000, out=attached)
                self.rig.run(f"startup-process-curl-{r}-{i}", seconds / 2, files="1 0\n")
                self.rig.run(f"startup-process-true-{r}-{i}", 0.001)
        rows, problems = ratios.collect(self.rig.rw, ["startup-process"], 2, 3, {})
        self.assertEqual(problems, [])
        self.assertEqual(len(rows[("startup-process", "richpush")]["seconds"]), 6)
        self.assertAlmostEqual(rows[("startup-process", "richpush")]["median_seconds"], 0.0215)
        self.assertAlmostEqual(rows[("startup-process", "curl")]["median_seconds"], 0.010)
        [result] = ratios.results(rows, ["startup-process"])
        # richpush takes twice curl's time (a bit more): the ratio is under 1, as for throughput.
        self.assertLess(result["ratio"], 0.5)
        self.assertGreater(result["ratio"], 0.4)
        self.assertIsNone(result["met"])
        self.assertAlmostEqual(result["seconds"], 0.0215)

    def test_startup_cpu_is_the_mean_of_gnu_times_10_ms_steps(self):
        for i, cpu in enumerate([(0.0, 0.0), (0.01, 0.0), (0.0, 0.0), (0.0, 0.0)], 1):
            self.rig.run(f"startup-sniff-file-1-{i}", 0.003, out="image/jpeg\n", cpu=cpu)
        rows, _ = ratios.collect(self.rig.rw, ["startup-sniff"], 1, 4, {})
        self.assertAlmostEqual(rows[("startup-sniff", "file")]["cpu_us"], 2500.0)

    def test_a_run_without_wall_time_does_not_count(self):
        base = self.rig.run("startup-sniff-file-1-1", 0.0, out="image/jpeg\n")
        self.assertTrue(os.path.exists(base + ".meta"))
        rows, problems = ratios.collect(self.rig.rw, ["startup-sniff"], 1, 1, {})
        self.assertEqual(rows[("startup-sniff", "file")]["rates"], [])
        self.assertTrue(any("no wall time" in p for p in problems))


class ReportTests(unittest.TestCase):
    def setUp(self):
        self.rig = Rig(self)
        for r in (1, 2, 3):
            self.rig.bench(f"http-reuse-richpush-{r}", 2.0, 1000, cpu=(0.3, 0.1))
            self.rig.run(f"http-reuse-h2load-{r}", 1.0, out=H2LOAD_OUT.format(n=1000, ok=1000), connections=64)
            self.rig.curl(f"http-reuse-curl-{r}", 1.25, 1000, cpu=(0.15, 0.05), connections=64)
            for i in (1, 2):
                self.rig.run(f"startup-sniff-richpush-{r}-{i}", 0.015, out="x: image/jpeg public.jpeg\n")
                self.rig.run(f"startup-sniff-file-{r}-{i}", 0.003, out="image/jpeg\n")

    def report(self, workloads):
        out = io.StringIO()
        status = ratios.report(self.rig.rw, 3, 2, workloads, {"http-reuse": 1000}, out=out, image_size=IMAGE_SIZE)
        return status, out.getvalue().splitlines()

    def test_table_rows_end_with_their_goal(self):
        status, lines = self.report(["http-reuse", "startup-sniff"])
        self.assertEqual(status, 0)
        header = next(line for line in lines if line.startswith("workload "))
        self.assertTrue(header.rstrip().endswith("goal"))
        rows = [line for line in lines if "(vs " in line]
        self.assertEqual(len(rows), 3)
        for row in rows:
            self.assertEqual(len(row), len(header), row)  # the columns line up
        reuse = next(line for line in lines if line.startswith("bench --reuse, HTTP (vs h2load)"))
        self.assertTrue(reuse.rstrip().endswith("0.8x"))
        self.assertIn(" 500 ", reuse)
        self.assertIn(" 1000 ", reuse)
        self.assertIn("0.50x", reuse)
        self.assertIn(" NO ", reuse)
        sniff = next(line for line in lines if line.startswith("start-up: sniff"))
        self.assertTrue(sniff.rstrip().endswith("report"))
        self.assertIn("15.0 ms", sniff)
        self.assertIn("3.0 ms", sniff)
        self.assertIn("0.20x", sniff)
        self.assertIn("6 runs", sniff)

    def test_the_cpu_row_comes_after_the_rate_rows_and_says_which_way_is_better(self):
        _, lines = self.report(["http-reuse", "startup-sniff"])
        rows = [line for line in lines if "(vs " in line]
        self.assertTrue(rows[0].startswith("bench --reuse, HTTP (vs h2load)"))
        self.assertTrue(rows[1].startswith("start-up: sniff"))
        cpu = rows[2]
        self.assertTrue(cpu.startswith("bench --reuse, HTTP: CPU per transfer (vs curl)"))
        self.assertTrue(cpu.rstrip().endswith("1.0x"))
        self.assertIn(" 400 us ", cpu)  # richpush per device
        self.assertIn(" 200 us ", cpu)  # curl per transfer
        self.assertIn("0.50x", cpu)
        self.assertIn(" NO ", cpu)
        self.assertIn("400 400 400 | 200 200 200", cpu)
        self.assertTrue(any(line.startswith("ratio: above 1 richpush is better") for line in lines))
        self.assertTrue(any(line.startswith("CPU per transfer rows: the peer's CPU") for line in lines))

    def test_cpu_wall_time_and_connections_of_richpush_h2load_and_curl(self):
        _, lines = self.report(["http-reuse"])
        header = next(line for line in lines if line.startswith("workload/tool "))
        self.assertIn("CPU us/item", header)
        self.assertIn("wall s", header)
        self.assertIn("conns/run", header)
        per_tool = {line.split()[1]: line.split()[2:5] for line in lines if line.startswith("http-reuse ")}
        self.assertEqual(per_tool, {"richpush": ["400", "2.000", "10"], "h2load": ["750", "1.000", "64"],
                                    "curl": ["200", "1.250", "64"]})

    def test_without_a_cpu_row_no_cpu_note(self):
        _, lines = self.report(["startup-sniff"])
        self.assertFalse(any("CPU per transfer" in line for line in lines))

    def test_ratio_lines_are_json_and_match_results_jsonl(self):
        _, lines = self.report(["http-reuse", "startup-sniff"])
        ratio_lines = [line for line in lines if line.startswith("RATIO ")]
        self.assertEqual(len(ratio_lines), 3)
        parsed = [json.loads(line[len("RATIO "):]) for line in ratio_lines]
        self.assertEqual([(p["workload"], p["peer"]) for p in parsed],
                         [("http-reuse", "h2load"), ("startup-sniff", "file"), ("http-reuse", "curl")])
        reuse = parsed[0]
        self.assertEqual(set(reuse), RATE_KEYS)
        self.assertEqual((reuse["tool"], reuse["peer"], reuse["goal"], reuse["goal_text"]),
                         ("richpush", "h2load", 0.8, "0.8x"))
        self.assertAlmostEqual(reuse["ratio"], 0.5)
        self.assertIs(reuse["met"], False)
        self.assertEqual(reuse["runs"], [500.0, 500.0, 500.0])
        self.assertIsNone(parsed[1]["goal"])
        self.assertIsNone(parsed[1]["met"])
        self.assertEqual(set(parsed[1]), RATE_KEYS | {"seconds", "peer_seconds"})
        cpu = parsed[2]
        self.assertTrue(RATE_KEYS <= set(cpu))
        self.assertEqual((cpu["tool"], cpu["metric"], cpu["goal"], cpu["goal_text"]),
                         ("richpush", "cpu_per_item", 1.0, "1.0x"))
        self.assertAlmostEqual(cpu["ratio"], 0.5)
        self.assertIs(cpu["met"], False)
        self.assertAlmostEqual(cpu["cpu_us"], 400.0)
        self.assertAlmostEqual(cpu["peer_cpu_us"], 200.0)
        self.assertEqual(cpu["peer_runs"], [800.0, 800.0, 800.0])  # transfers per second of wall time
        with open(os.path.join(self.rig.rw, "results.jsonl")) as f:
            self.assertEqual([json.loads(line) for line in f], parsed)

    def test_only_the_rows_of_the_workloads_that_ran(self):
        _, lines = self.report(["startup-sniff"])
        self.assertEqual(len([line for line in lines if line.startswith("RATIO ")]), 1)
        self.assertFalse(any("h2load" in line or "curl" in line for line in lines))

    def test_a_curl_run_not_counted_makes_the_report_fail(self):
        self.rig.run("http-reuse-curl-3", 1.0, out=curl_out(999))
        status, lines = self.report(["http-reuse"])
        self.assertEqual(status, 1)
        [problem] = [line for line in lines if line.startswith("problem: ")]
        self.assertIn("http-reuse-curl-3: curl: 999 transfer lines for 1000 transfers", problem)

    def test_a_run_not_counted_makes_the_report_fail(self):
        self.rig.run("http-reuse-h2load-2", 1.0, status=124, out=H2LOAD_OUT.format(n=1000, ok=1000))
        status, lines = self.report(["http-reuse"])
        self.assertEqual(status, 1)
        problems = [line for line in lines if line.startswith("problem: ")]
        self.assertEqual(len(problems), 1)
        self.assertIn("http-reuse-h2load-2: exit 124", problems[0])

    def test_a_goal_with_every_run_failed_is_not_met(self):
        for r in (1, 2, 3):
            self.rig.bench(f"http-reuse-richpush-{r}", 0.001, 1000, display_rate=0.1, passed=False)
        status, lines = self.report(["http-reuse"])
        self.assertEqual(status, 1)
        [line, cpu] = [json.loads(x[len("RATIO "):]) for x in lines if x.startswith("RATIO ")]
        self.assertEqual((cpu["peer"], cpu["ratio"], cpu["met"]), ("curl", None, False))
        self.assertIsNone(line["ratio"])
        self.assertIs(line["met"], False)
        self.assertEqual(line["not_counted"], 3)

    def test_the_command_line_report(self):
        argv = ["report", self.rig.rw, "--runs", "3", "--startup-runs", "2", "--workloads", "http-reuse",
                "--http-fresh", "1", "--http-reuse", "1000", "--https-store", "1", "--batch", "1",
                "--fetch-store", "1", "--image-size", str(IMAGE_SIZE)]
        stdout = sys.stdout
        sys.stdout = io.StringIO()
        try:
            status = ratios.main(argv)
            printed = sys.stdout.getvalue()
        finally:
            sys.stdout = stdout
        self.assertEqual(status, 0)
        self.assertIn("RATIO ", printed)


class InputTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.path = self.dir.name

    def write(self, name, text):
        path = os.path.join(self.path, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_trust_store_puts_the_ca_in_the_middle_of_the_bundle(self):
        cert = "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n"
        bundle = self.write("bundle.pem", "".join(cert.format(f"C{i}") for i in range(4)))
        ca = self.write("ca.pem", cert.format("TEST-CA"))
        out = os.path.join(self.path, "store.pem")
        self.assertEqual(ratios.write_trust_store(bundle, ca, out), 5)
        with open(out) as f:
            text = f.read()
        names = [line for line in text.splitlines() if not line.startswith("-----")]
        self.assertEqual(names, ["C0", "C1", "TEST-CA", "C2", "C3"])
        self.assertEqual(text.count("-----BEGIN CERTIFICATE-----"), 5)
        self.assertEqual(text.count("-----END CERTIFICATE-----"), 5)

    def test_trust_store_refuses_an_empty_bundle(self):
        with self.assertRaises(ValueError):
            ratios.write_trust_store(self.write("empty.pem", ""), self.write("ca.pem", ""), "/dev/null")

    def test_payloads_cycle_over_the_assets_and_match_the_curl_config(self):
        os.makedirs(os.path.join(self.path, "www"))
        self.write("www/a.jpg", "x" * 3)
        self.write("www/b.mp4", "y" * 5)
        folder = os.path.join(self.path, "in")
        expected = ratios.write_payloads(self.path, folder, 3, 8080, ["a.jpg", "b.mp4"])
        self.assertEqual(expected, {"p000001.jpg": 3, "p000002.mp4": 5, "p000003.jpg": 3})
        self.assertEqual(sorted(os.listdir(folder)), ["p000001.json", "p000002.json", "p000003.json"])
        with open(os.path.join(folder, "p000002.json")) as f:
            payload = json.load(f)
        self.assertEqual(payload["aps"]["mutable-content"], 1)
        self.assertEqual(payload["ab"]["att"], {"url": "http://127.0.0.1:8080/b.mp4?n=2", "type": "mp4"})
        with open(os.path.join(self.path, "urls.cfg")) as f:
            cfg = f.read().splitlines()
        self.assertEqual(cfg[2:4], ['url = "http://127.0.0.1:8080/b.mp4?n=2"', 'output = "p000002.mp4"'])
        with open(os.path.join(self.path, "expected.json")) as f:
            self.assertEqual(json.load(f), expected)

    def test_curl_config_repeats_the_url_with_each_body_to_dev_null(self):
        out = os.path.join(self.path, "bench.cfg")
        ratios.write_curl_config(out, "http://cdn.example.com/hero-300k.jpg", 3)
        with open(out) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines, ['url = "http://cdn.example.com/hero-300k.jpg"', 'output = "/dev/null"'] * 3)
        self.assertEqual(ratios.main(["curl-config", out, "http://127.0.0.1:1/x.jpg", "2"]), 0)
        with open(out) as f:
            self.assertEqual(f.read().count('output = "/dev/null"'), 2)

    def test_count_files(self):
        self.write("ok.jpg", "abc")
        self.write("short.jpg", "a")
        self.assertEqual(ratios.count_files(self.path, {"ok.jpg": 3, "short.jpg": 3, "gone.jpg": 1}), (1, 2))
        self.assertEqual(ratios.count_files(self.path, {"ok.jpg": 3}), (1, 0))


if __name__ == "__main__":
    unittest.main()
