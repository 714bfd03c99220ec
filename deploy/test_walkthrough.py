"""The README's Kubernetes walkthrough, checked without a cluster.

The commands of the README's "Kubernetes: deploy/kubernetes/" code block are taken from the README
itself and walked in order over a copy of deploy/kubernetes: a step that edits a file runs there (with a
stand-in `date`), `kubectl apply -k` renders the folder with `kubectl kustomize` and applies the objects
as the API server would (keyed by kind, namespace and name; a later apply replaces), and the commands
that only read (get, wait, logs, port-forward) must name objects and containers that exist by then.
At the end, the START_AT the bench pods read, through their configMapKeyRef, must be the one the user
set. Then each Job container's shell runs with /bin/sh against a stand-in `richpush` that exits with a
chosen status (or dies of a signal) and writes its report or not: a failed gate with its report written
completes a shard, anything else fails it, and the merge fails on a failed gate while the pod that
serves the reports does not depend on it. Every rendered pod carries its hardening (security contexts,
an emptyDir at /tmp, CPU and memory requests and limits, a deadline on each Job), and
deploy/check-manifests.py refuses a copy without it.

    python3 -m unittest discover -s deploy -p 'test_*.py'     (from the repository root)
"""
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(REPO, "README.md")
MANIFESTS = os.path.join(REPO, "deploy", "kubernetes")
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
SECTION = "### Kubernetes: `deploy/kubernetes/`"
# What the stand-in `date` prints: the START_AT the user sets in the walkthrough.
USER_START = "2031-05-06T07:08:09Z"
# Steps that build and push the image: not part of what is checked here.
IMAGE_STEPS = {"scripts/image", "podman", "buildah", "skopeo"}
# Steps that edit files, run in the copy.
EDIT_STEPS = {"sed", "printf", "echo", "cat", "cp", "tee"}
# kubectl verbs that only read.
READ_VERBS = {"get", "wait", "logs", "port-forward", "describe"}
KINDS = {"job": "Job", "jobs": "Job", "pod": "Pod", "pods": "Pod", "configmap": "ConfigMap", "cm": "ConfigMap"}
TIMEOUT = 60

# Stands in for richpush: records its arguments, writes the report files its options name (STUB_REPORT:
# "full", "empty" or unset), prints STUB_STDOUT, waits for SIGTERM with STUB_WAIT=1 (then exits 130),
# dies of signal STUB_SIGNAL, or exits STUB_STATUS.
STUB = r"""#!/bin/sh
printf '%s\n' "$*" >> "$STUB_LOG"
write() {
    case "$STUB_REPORT" in
        full) printf '{"passed": false}\n' > "$1" ;;
        empty) : > "$1" ;;
    esac
}
while [ $# -gt 0 ]; do
    case "$1" in
        --json|--html|--junit) write "$2"; shift ;;
        --out) mkdir -p "$2" && write "$2/summary.json"; shift ;;
    esac
    shift
done
if [ -n "$STUB_STDOUT" ]; then printf '%s\n' "$STUB_STDOUT"; fi
if [ "$STUB_WAIT" = 1 ]; then
    trap 'kill $sleeper; : > "$STUB_LOG.term"; exit 130' TERM
    sleep 30 & sleeper=$!
    : > "$STUB_LOG.ready"
    wait $sleeper
fi
if [ -n "$STUB_SIGNAL" ]; then ulimit -c 0; kill -s "$STUB_SIGNAL" $$; fi
exit "${STUB_STATUS:-0}"
"""

# Stands in for date: the user's START_AT, whatever is asked.
DATE = "#!/bin/sh\nprintf '%s\\n' '" + USER_START + "'\n"


def environment(extra=None):
    """An environment without a cluster: no kubeconfig to reach one through."""
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "KUBECONFIG": "/nonexistent/kubeconfig",
           "LC_ALL": "C.UTF-8"}
    env.update(extra or {})
    return env


def render(folder):
    """The objects `kubectl apply -k folder` would send."""
    if not os.access(KUBECTL, os.X_OK):
        raise AssertionError("these tests need kubectl (its kustomize renders the manifests, offline)")
    result = subprocess.run([KUBECTL, "kustomize", folder], capture_output=True, text=True,
                            timeout=TIMEOUT, env=environment())
    if result.returncode != 0:
        raise AssertionError(f"kubectl kustomize {folder}: {result.stderr}")
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def key(document):
    metadata = document.get("metadata", {})
    return (document["kind"], metadata.get("namespace", "default"), metadata["name"])


def pod_spec(document):
    if document["kind"] == "Job":
        return document["spec"]["template"]["spec"]
    return document["spec"] if document["kind"] == "Pod" else None


def containers(document):
    spec = pod_spec(document) or {}
    return spec.get("initContainers", []) + spec.get("containers", [])


def catches(pid, number):
    """Whether process `pid` has a handler for signal `number` (its SigCgt mask in /proc)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (number - 1)))
    return False


def readme_steps():
    """The commands of the README's Kubernetes code block, one a string, continuation lines joined."""
    with open(README, encoding="utf-8") as handle:
        text = handle.read()
    start = text.index(SECTION)
    following = re.search(r"^##+ ", text[start + len(SECTION):], re.MULTILINE)
    section = text[start:start + len(SECTION) + following.start()] if following else text[start:]
    block = re.search(r"^```sh\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    if block is None:
        raise AssertionError("the README's Kubernetes section has no ```sh block")
    steps = []
    for line in block.group(1).replace("\\\n", " ").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            steps.append(line.strip())
    return steps


class Cluster:
    """The objects applied so far, as the API server keeps them."""

    def __init__(self, root):
        self.root = root
        self.objects = {}

    def apply(self, documents):
        for document in documents:
            self.objects[key(document)] = document

    def find(self, kind, name):
        return self.objects.get((kind, "default", name))

    def run(self, step, test):
        """Walks one README step."""
        pipeline = [shlex.split(part, comments=True) for part in step.split(" | ")]
        words = pipeline[-1]
        first = pipeline[0][0]
        if first in IMAGE_STEPS:
            return
        if first in EDIT_STEPS:
            stubs = os.path.join(self.root, ".stubs")
            os.makedirs(stubs, exist_ok=True)
            with open(os.path.join(stubs, "date"), "w", encoding="utf-8") as handle:
                handle.write(DATE)
            os.chmod(os.path.join(stubs, "date"), 0o755)
            result = subprocess.run(["/bin/sh", "-c", step], cwd=self.root, capture_output=True, text=True,
                                    timeout=TIMEOUT, env=environment({"PATH": stubs + ":/usr/bin:/bin"}))
            test.assertEqual(result.returncode, 0, f"{step}: {result.stderr}")
            return
        test.assertEqual(words[0], "kubectl", f"the walkthrough has a step this test cannot emulate: {step}")
        verb = words[1]
        if verb == "apply" and "-k" in words:
            folder = words[words.index("-k") + 1]
            self.apply(render(os.path.join(self.root, folder)))
        elif verb == "apply" and words[2:4] == ["-f", "-"] and len(pipeline) == 2:
            # `kubectl create ... --dry-run=client -o yaml | kubectl apply -f -`: what the left side prints.
            left = pipeline[0]
            test.assertEqual(left[0], "kubectl", step)
            made = subprocess.run([KUBECTL] + left[1:], cwd=self.root, capture_output=True, text=True,
                                  timeout=TIMEOUT, env=environment())
            test.assertEqual(made.returncode, 0, f"{step}: {made.stderr}")
            self.apply([d for d in yaml.safe_load_all(made.stdout) if d])
        elif verb in READ_VERBS:
            self.check_reads(words, step, test)
        else:
            test.fail(f"the walkthrough has a kubectl step this test cannot emulate: {step}")

    def check_reads(self, words, step, test):
        """A reading step names objects (KIND/NAME) and containers (-c NAME) that exist by then."""
        named = [w for w in words[2:] if "/" in w and not w.startswith("-") and w.split("/")[0] in KINDS]
        for word in named:
            kind, name = word.split("/", 1)
            found = self.find(KINDS[kind], name)
            test.assertIsNotNone(found, f"{step}: no {KINDS[kind]} {name} has been applied by then")
            if "-c" in words:
                wanted = words[words.index("-c") + 1]
                test.assertIn(wanted, [c["name"] for c in containers(found)], f"{step}: no container {wanted}")
            if words[1] == "port-forward":
                ports = [w for w in words[2:] if re.fullmatch(r"\d+:\d+", w)]
                test.assertTrue(ports, step)
                target = int(ports[0].split(":")[1])
                exposed = [p.get("containerPort") for c in containers(found) for p in c.get("ports", [])]
                test.assertIn(target, exposed, f"{step}: the pod exposes {exposed}")


class WalkthroughTests(unittest.TestCase):
    """The README's commands, in order, over the rendered manifests."""

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="richpush-walkthrough-")
        self.addCleanup(shutil.rmtree, self.folder, ignore_errors=True)
        shutil.copytree(MANIFESTS, os.path.join(self.folder, "deploy", "kubernetes"))

    def walk(self):
        cluster = Cluster(self.folder)
        steps = readme_steps()
        self.assertTrue(any(s.startswith("kubectl apply -k deploy/kubernetes/merge") for s in steps), steps)
        for step in steps:
            cluster.run(step, self)
        return cluster

    def read(self, cluster, job, variable):
        """What `variable` is in every pod of `job`: the template's env, its configMapKeyRef followed."""
        found = cluster.find("Job", job)
        self.assertIsNotNone(found, f"no Job {job} was applied")
        (container,) = found["spec"]["template"]["spec"]["containers"]
        (entry,) = [e for e in container["env"] if e["name"] == variable]
        reference = entry.get("valueFrom", {}).get("configMapKeyRef")
        self.assertIsNotNone(reference, f"{variable} is not read from a ConfigMap: {entry}")
        config_map = cluster.find("ConfigMap", reference["name"])
        self.assertIsNotNone(config_map, f"{job} reads ConfigMap {reference['name']}, which was never applied")
        return config_map["data"][reference["key"]]

    def test_the_bench_pods_read_the_start_the_user_set(self):
        shipped = yaml.safe_dump_all(render(MANIFESTS))
        self.assertNotIn(USER_START, shipped, "the test's START_AT must differ from the shipped one")
        cluster = self.walk()
        self.assertEqual(self.read(cluster, "richpush-bench", "START_AT"), USER_START)
        # One template for all 20 pods, all at once: every pod reads that one value.
        spec = cluster.find("Job", "richpush-bench")["spec"]
        self.assertEqual((spec["completions"], spec["parallelism"], spec["completionMode"]), (20, 20, "Indexed"))
        self.assertTrue(self.read(cluster, "richpush-bench", "TARGET_URL").startswith("https://"))
        self.assertEqual(self.read(cluster, "richpush-bench", "DEVICES"), "200000")

    def test_the_apply_does_not_undo_the_edit(self):
        """Applying again, as a user retrying would, still gives the pods the user's START_AT."""
        cluster = self.walk()
        cluster.run("kubectl apply -k deploy/kubernetes", self)
        self.assertEqual(self.read(cluster, "richpush-bench", "START_AT"), USER_START)


class ContainerStatusTests(unittest.TestCase):
    """Each Job container's shell, with a stand-in richpush, for each way richpush can end."""

    @classmethod
    def setUpClass(cls):
        cls.objects = render(MANIFESTS) + render(os.path.join(MANIFESTS, "merge"))

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="richpush-containers-")
        self.addCleanup(shutil.rmtree, self.folder, ignore_errors=True)
        os.makedirs(os.path.join(self.folder, "bin"))
        os.makedirs(os.path.join(self.folder, "reports"))
        stub = os.path.join(self.folder, "bin", "richpush")
        with open(stub, "w", encoding="utf-8") as handle:
            handle.write(STUB)
        os.chmod(stub, 0o755)
        self.stub_log = os.path.join(self.folder, "stub.log")

    def object(self, kind, name):
        (found,) = [d for d in self.objects if d["kind"] == kind and d["metadata"]["name"] == name]
        return found

    def container(self, kind, name, container):
        (found,) = [c for c in containers(self.object(kind, name)) if c["name"] == container]
        return found

    def config_values(self, container):
        values = {}
        for entry in container.get("env", []):
            reference = entry.get("valueFrom", {}).get("configMapKeyRef")
            if reference:
                values[entry["name"]] = self.object("ConfigMap", reference["name"])["data"][reference["key"]]
        return values

    def words(self, container):
        """The container's command and args, its volumes' paths moved into this test's folder."""
        return [w.replace("/reports", self.folder + "/reports").replace("/payloads", self.folder + "/payloads")
                for w in container["command"] + container.get("args", [])]

    def start(self, container, **stub):
        env = environment({"PATH": self.folder + "/bin:/usr/bin:/bin", "STUB_LOG": self.stub_log,
                           "JOB_COMPLETION_INDEX": "2"})
        env.update(self.config_values(container))
        env.update({"STUB_" + k.upper(): str(v) for k, v in stub.items()})
        return subprocess.Popen(self.words(container), env=env, cwd=self.folder, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def run_container(self, container, **stub):
        process = self.start(container, **stub)
        try:
            out, err = process.communicate(timeout=TIMEOUT)
        finally:
            process.kill()
        return process.returncode, out, err

    def shard_containers(self):
        bench = self.container("Job", "richpush-bench", "bench")
        batch = self.container("Job", "richpush-batch", "batch")
        return [("bench", bench, self.folder + "/reports/bench-shard-3.json"),
                ("batch", batch, self.folder + "/reports/batch-shard-3/summary.json")]

    def test_the_shard_containers_run_the_shard_of_their_index(self):
        for label, container, _ in self.shard_containers():
            with self.subTest(label):
                status, _, err = self.run_container(container)
                self.assertEqual(status, 0, err)
                with open(self.stub_log, encoding="utf-8") as handle:
                    self.assertRegex(handle.read().splitlines()[-1], r"--shard 3/\d+ ")

    def test_a_failed_gate_with_its_report_completes_a_shard(self):
        for label, container, report in self.shard_containers():
            with self.subTest(label):
                status, _, err = self.run_container(container, status=1, report="full")
                self.assertTrue(os.path.getsize(report) > 0)
                self.assertEqual(status, 0, err)
                self.assertIn("the gate failed", err)

    def test_every_other_ending_fails_a_shard_with_richpush_status(self):
        cases = [
            ({"status": 0}, 0),
            ({"status": 1}, 1),                          # exit 1 without a report: not a recorded gate
            ({"status": 1, "report": "empty"}, 1),       # nor with an empty one
            ({"status": 64}, 64),                        # a usage error, or a start more than 60 s past
            ({"status": 65}, 65),
            ({"status": 69}, 69),
            ({"status": 70}, 70),
            ({"status": 74}, 74),
            ({"status": 130, "report": "full"}, 130),    # interrupted: its report covers what finished
            ({"signal": "KILL", "report": "full"}, 128 + signal.SIGKILL),   # the OOM killer
            ({"signal": "SEGV"}, 128 + signal.SIGSEGV),  # a crash
        ]
        for label, container, _ in self.shard_containers():
            for stub, expected in cases:
                with self.subTest(label, **stub):
                    shutil.rmtree(os.path.join(self.folder, "reports"))
                    os.makedirs(os.path.join(self.folder, "reports"))
                    status, _, err = self.run_container(container, **stub)
                    self.assertEqual(status, expected, err)

    def test_sigterm_reaches_richpush_and_fails_the_shard(self):
        """The pod's SIGTERM (a deleted pod) goes on to richpush, whose own status the pod ends with."""
        for label, container, _ in self.shard_containers():
            with self.subTest(label):
                for leftover in (self.stub_log + ".ready", self.stub_log + ".term"):
                    if os.path.exists(leftover):
                        os.remove(leftover)
                process = self.start(container, wait=1, report="full")
                try:
                    # Once the stand-in waits and the shell has its trap (SIGTERM among its caught signals).
                    deadline = time.monotonic() + TIMEOUT
                    while not (os.path.exists(self.stub_log + ".ready") and catches(process.pid, signal.SIGTERM)):
                        self.assertLess(time.monotonic(), deadline, "the stand-in never started")
                        time.sleep(0.02)
                    process.send_signal(signal.SIGTERM)
                    _, err = process.communicate(timeout=TIMEOUT)
                finally:
                    process.kill()
                self.assertTrue(os.path.exists(self.stub_log + ".term"), "richpush never saw SIGTERM")
                self.assertEqual(process.returncode, 130, err)

    def test_the_merge_fails_on_a_failed_gate_and_still_writes_the_report(self):
        outputs = {"merge-bench": "merged.json", "merge-batch": "batch-summary.json"}
        for name, output in outputs.items():
            container = self.container("Job", "richpush-merge", name)
            path = os.path.join(self.folder, "reports", output)
            # richpush writes the merged JSON itself (--json, atomically): the stand-in writes what its
            # --json names, so the file is there exactly when the command names it.
            with self.subTest(name, gate="passed"):
                status, _, err = self.run_container(container, status=0, report="full")
                self.assertEqual(status, 0, err)
                self.assertTrue(os.path.getsize(path) > 0, "the merged JSON is not where the README says")
                os.remove(path)
            with self.subTest(name, gate="failed"):
                status, _, err = self.run_container(container, status=1, report="full")
                self.assertEqual(status, 1, err)
                self.assertTrue(os.path.getsize(path) > 0, "a failed gate left no merged JSON")
                os.remove(path)
            with self.subTest(name, gate="refused"):
                status, _, err = self.run_container(container, status=65)
                self.assertEqual(status, 65, err)
                self.assertFalse(os.path.exists(path), "a refused merge left a file behind")
        self.assertTrue(os.path.getsize(os.path.join(self.folder, "reports", "merged.html")) > 0)

    def test_the_merge_is_a_job_that_runs_once_and_the_server_does_not_wait_for_it(self):
        merge = self.object("Job", "richpush-merge")
        spec = pod_spec(merge)
        self.assertEqual(merge["spec"]["backoffLimit"], 0)
        self.assertEqual(spec["restartPolicy"], "Never")
        self.assertEqual(sorted(c["name"] for c in spec["containers"]), ["merge-batch", "merge-bench"])
        self.assertNotIn("initContainers", spec, "both merges run, whatever the other's result")
        serve = self.object("Pod", "richpush-serve")
        self.assertNotIn("initContainers", serve["spec"], "the server must not wait for a merge")
        (server,) = serve["spec"]["containers"]
        self.assertEqual(server["command"][:3], ["richpush", "serve", "/reports"])
        # One claim, the reports'; every other volume is the emptyDir at /tmp.
        claims = {v["persistentVolumeClaim"]["claimName"] for d in (merge, serve)
                  for v in pod_spec(d)["volumes"] if "emptyDir" not in v}
        self.assertEqual(claims, {"richpush-reports"})
        # Nothing else in the merge step's folder: the Job and the server are all there is.
        kinds = sorted((d["kind"], d["metadata"]["name"]) for d in render(os.path.join(MANIFESTS, "merge")))
        self.assertEqual(kinds, [("Job", "richpush-merge"), ("Pod", "richpush-serve")])

    def test_the_shard_jobs_fail_only_when_a_pod_does(self):
        for name in ("richpush-bench", "richpush-batch"):
            job = self.object("Job", name)
            self.assertEqual(job["spec"]["backoffLimit"], 0, name)
            self.assertEqual(pod_spec(job)["restartPolicy"], "Never", name)


class HardeningTests(unittest.TestCase):
    """Every pod `kubectl apply -k` sends (both folders) runs hardened: no service-account token, a
    non-root user, RuntimeDefault seccomp; each container without privilege escalation or capabilities,
    on a read-only root with an emptyDir at /tmp, its CPU and memory requested and limited; each Job
    with a deadline."""

    @classmethod
    def setUpClass(cls):
        cls.objects = [d for d in render(MANIFESTS) + render(os.path.join(MANIFESTS, "merge"))
                       if pod_spec(d) is not None]

    def test_every_pod_is_hardened(self):
        names = sorted(d["metadata"]["name"] for d in self.objects)
        self.assertEqual(names, ["richpush-batch", "richpush-bench", "richpush-merge", "richpush-serve"])
        for document in self.objects:
            spec = pod_spec(document)
            with self.subTest(document["metadata"]["name"]):
                self.assertIs(spec.get("automountServiceAccountToken"), False)
                context = spec.get("securityContext", {})
                self.assertIs(context.get("runAsNonRoot"), True)
                self.assertEqual((context.get("runAsUser"), context.get("runAsGroup"), context.get("fsGroup")),
                                 (65532, 65532, 65532))
                self.assertEqual(context.get("seccompProfile"), {"type": "RuntimeDefault"})
                if document["kind"] == "Job":
                    deadline = document["spec"].get("activeDeadlineSeconds")
                    self.assertIsInstance(deadline, int)
                    self.assertGreater(deadline, 0)
                empty = {v["name"] for v in spec.get("volumes", []) if "emptyDir" in v}
                for container in containers(document):
                    with self.subTest(container=container["name"]):
                        self.assertEqual(container.get("securityContext"), {
                            "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}})
                        tmp = [m for m in container.get("volumeMounts", []) if m["mountPath"] == "/tmp"]
                        self.assertEqual(len(tmp), 1, container.get("volumeMounts"))
                        self.assertIn(tmp[0]["name"], empty, "/tmp is not an emptyDir")
                        self.assertFalse(tmp[0].get("readOnly", False))
                        for kind in ("requests", "limits"):
                            self.assertEqual(set(container.get("resources", {}).get(kind, {})), {"cpu", "memory"},
                                             f"{kind}: {container.get('resources')}")

    def test_the_bench_deadline_outlasts_the_longest_wait_for_start_at(self):
        """richpush bench accepts a START_AT up to a day ahead: the Job must not stop pods still waiting."""
        (bench,) = [d for d in self.objects if d["metadata"]["name"] == "richpush-bench"]
        self.assertGreater(bench["spec"]["activeDeadlineSeconds"], 24 * 3600)


class ManifestCheckTests(unittest.TestCase):
    """deploy/check-manifests.py reads run.env as kustomize does, and refuses what would break the run."""

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="richpush-check-")
        self.addCleanup(shutil.rmtree, self.folder, ignore_errors=True)
        shutil.copytree(MANIFESTS, os.path.join(self.folder, "kubernetes"))
        self.run_env = os.path.join(self.folder, "kubernetes", "run.env")

    def check(self):
        result = subprocess.run(["/usr/bin/python3", os.path.join(REPO, "deploy", "check-manifests.py")],
                                capture_output=True, text=True, timeout=TIMEOUT,
                                env=environment({"RICHPUSH_MANIFESTS": os.path.join(self.folder, "kubernetes")}))
        return result.returncode, result.stderr

    def edit(self, old, new, path=None):
        path = path or self.run_env
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        self.assertIn(old, text)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text.replace(old, new))

    def test_the_shipped_manifests_pass(self):
        self.assertEqual(self.check(), (0, ""))

    def test_a_quoted_start_is_refused(self):
        self.edit("START_AT=2026-12-01T18:00:00Z", 'START_AT="2026-12-01T18:00:00Z"')
        status, err = self.check()
        self.assertEqual(status, 1)
        self.assertIn("run.env:", err)
        self.assertIn("START_AT's value has spaces or quotes around it", err)

    def test_a_missing_key_is_refused(self):
        self.edit("DEVICES=200000\n", "")
        status, err = self.check()
        self.assertEqual(status, 1)
        self.assertIn("DEVICES reads richpush-run/DEVICES, defined nowhere", err)

    def test_a_pod_without_its_hardening_is_refused(self):
        bench = os.path.join(self.folder, "kubernetes", "bench-job.yaml")
        serve = os.path.join(self.folder, "kubernetes", "merge", "serve-pod.yaml")
        self.edit("  activeDeadlineSeconds: 90000\n", "", bench)
        self.edit("automountServiceAccountToken: false", "automountServiceAccountToken: true", bench)
        self.edit("readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", bench)
        self.edit("limits: {cpu: \"2\", memory: 1Gi}", "limits: {memory: 1Gi}", bench)
        self.edit("runAsNonRoot: true", "runAsNonRoot: false", serve)
        self.edit("seccompProfile: {type: RuntimeDefault}", "seccompProfile: {type: Unconfined}", serve)
        self.edit("allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true", serve)
        self.edit("capabilities: {drop: [ALL]}", "capabilities: {drop: [ALL], add: [NET_RAW]}", serve)
        self.edit("        - {name: tmp, mountPath: /tmp}\n", "", serve)
        self.edit("requests: {cpu: 100m, memory: 64Mi}", "requests: {cpu: \"1\", memory: 64Mi}", serve)
        status, err = self.check()
        self.assertEqual(status, 1)
        for expected in [
            "bench-job.yaml: Job richpush-bench has no activeDeadlineSeconds",
            "bench-job.yaml: Job richpush-bench mounts the service-account token",
            "bench-job.yaml: container bench has a writable root file system",
            "bench-job.yaml: container bench needs a cpu request and a cpu limit",
            "serve-pod.yaml: Pod richpush-serve does not enforce a non-root user",
            "serve-pod.yaml: container serve runs without a seccomp profile",
            "serve-pod.yaml: container serve allows privilege escalation",
            "serve-pod.yaml: container serve keeps capabilities",
            "serve-pod.yaml: container serve has no emptyDir at /tmp",
            "serve-pod.yaml: container serve requests more cpu (1) than its limit (500m)",
        ]:
            self.assertIn(expected, err)
        # Nothing else: the batch Job and the merge pass as they are.
        self.assertNotIn("batch-job.yaml", err)
        self.assertNotIn("merge-job.yaml", err)

    def test_a_configmap_that_the_apply_would_write_over_the_generated_one_is_refused(self):
        with open(os.path.join(self.folder, "kubernetes", "run.yaml"), "w", encoding="utf-8") as handle:
            handle.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: richpush-run\ndata:\n  START_AT: x\n")
        status, err = self.check()
        self.assertEqual(status, 1)
        self.assertIn("ConfigMap richpush-run is also a configMapGenerator's", err)


if __name__ == "__main__":
    unittest.main()
