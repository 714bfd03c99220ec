import AssetServer
import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// The walkthrough of deploy/kubernetes/ without a cluster: a Job's pods, each its own process in the
/// image's file system (scripts/image --rootfs, chroot with its own /proc and the /dev/null a container
/// runtime provides) running the container's command through the image's /bin/sh with its Job index and
/// the run's values, then the merge Job's container on the shared reports folder. The target stands in
/// for the CDN: the embedded server, its CA added to the image's bundle as a real CDN's is already
/// there. Skipped, with the reason, where the machine allows no chroot.
@Suite(.serialized) struct KubernetesRunTests {
    /// Every container of the manifests: file, Job or Pod name, container, command, args, completions.
    static func containers() throws -> [[String: Any]] {
        let result = try ChildProcess.runBlocking(
            "/usr/bin/python3", [Fixtures.root + "/deploy/check-manifests.py", "--commands"])
        let listing = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return listing?["commands"] as? [[String: Any]] ?? []
    }

    /// The script a container's `/bin/sh -c` runs.
    static func script(_ container: [String: Any]) -> String {
        ((container["args"] as? [String]) ?? []).joined(separator: " ")
    }

    /// The image's file system laid out in `folder`/rootfs, the test CA added to its bundle, and a file
    /// for /dev/null to be mounted on; returns the rootfs.
    static func layOut(in folder: String) async throws -> String {
        let root = folder + "/rootfs"
        let laid = try await ImageScriptTests.run(["--binary", RichPushBinary.path, "--rootfs", root, "--no-check"])
        try #require(laid.status == 0, "\(laid.output)")
        let bundle = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/etc/ssl/certs/ca-certificates.crt"))
        try bundle.seekToEnd()
        try bundle.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: Fixtures.caFile)))
        try bundle.close()
        _ = FileManager.default.createFile(atPath: root + "/dev/null", contents: nil)
        return root
    }

    /// `script` run by the image's /bin/sh as the pods' user, in `root` with its own /proc and this
    /// machine's /dev/null mounted there (dash opens it for a command run with `&`), as PID 1 of its
    /// namespace, as a container's command is.
    static func start(_ script: String, in root: String, environment: [String: String]) throws -> ChildProcess {
        let pod =
            "mount --bind /dev/null \"$0/dev/null\" && "
            + "exec /usr/sbin/chroot --userspec=65532:65532 \"$0\" /bin/sh -c \"$1\""
        return try ChildProcess.start(
            "/usr/bin/unshare",
            ["--mount", "--pid", "--fork", "--mount-proc=\(root)/proc", "/bin/sh", "-c", pod, root, script],
            environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp"].merging(environment) { $1 })
    }

    /// The Job's `count` pods of `container`, started at once as the Job starts them (each with its
    /// `JOB_COMPLETION_INDEX` and `environment(index)`), and each one's exit status once all have ended.
    static func runPods(
        _ container: [String: Any], count: Int, in root: String, environment: (Int) -> [String: String]
    ) async throws -> [Int32] {
        var running: [ChildProcess] = []
        for index in 0..<count {
            running.append(
                try start(
                    script(container), in: root,
                    environment: environment(index).merging(["JOB_COMPLETION_INDEX": "\(index)"]) { $1 }))
        }
        var statuses: [Int32] = []
        for process in running { statuses.append(await process.wait().0) }
        return statuses
    }

    /// What each run needs: the image's file system (nil, with the reason printed, where no chroot is
    /// allowed), the embedded server standing in for the CDN, and the manifests' containers.
    struct Rig {
        let folder: String
        let root: String
        let server: AssetServer
        let containers: [[String: Any]]

        static func make() async throws -> Rig? {
            if let reason = ImageScriptTests.chrootUnavailable {
                print("KubernetesRunTests: skipped: \(reason)")
                return nil
            }
            let folder = try Fixtures.temporaryFolder()
            do {
                let root = try await KubernetesRunTests.layOut(in: folder)
                let containers = try KubernetesRunTests.containers()
                return Rig(folder: folder, root: root, server: try Fixtures.startServer(), containers: containers)
            } catch {
                try? FileManager.default.removeItem(atPath: folder)
                throw error
            }
        }

        func cleanUp() {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    @Test func twentyBenchPodsAndTheMergeRunInTheImage() async throws {
        guard let rig = try await Rig.make() else { return }
        defer { rig.cleanUp() }
        let (root, server, containers) = (rig.root, rig.server, rig.containers)
        let bench = try #require(containers.first { $0["name"] as? String == "richpush-bench" })
        let merge = try #require(containers.first { $0["container"] as? String == "merge-bench" })
        let pods = try #require(bench["completions"] as? Int)
        // Ahead by enough for 20 processes to start on two cores and each make its trial download.
        let start = try WallTime(
            parsing: String(format: "%.0f", (WallClock.read().time + TimeScale.scaled(.seconds(12))).epochSeconds))
        let statuses = try await Self.runPods(bench, count: pods, in: root) { _ in
            [
                "START_AT": start.rfc3339, "DEVICES": "60",
                "TARGET_URL": "https://127.0.0.1:\(server.httpsPort ?? 0)/hero.jpg",
            ]
        }
        for (index, status) in statuses.enumerated() { #expect(status == 0, "pod \(index) exited \(status)") }
        let (merged, _) = try await Self.start(Self.script(merge), in: root, environment: [:]).wait()
        #expect(merged == 0, "the merge exited \(merged)")
        let report = try BenchReport.read(try Data(contentsOf: URL(fileURLWithPath: root + "/reports/merged.json")))
        #expect(report.devices == 60 && report.attached == 60 && report.shards == Array(1...pods))
        #expect(report.start?.at == start.rfc3339 && report.start?.shards.count == pods)
        #expect(FileManager.default.fileExists(atPath: root + "/reports/merged.html"))
    }

    /// A failed gate is a result, not a crash: the batch Job's pods over payloads one of which would not
    /// show (its asset answers 404) all exit 0, so the Job completes, with every shard's summary and
    /// JUnit file on the volume; the merge exits 1, its merged summary written all the same.
    @Test func aFailedGateCompletesTheShardsAndFailsTheMerge() async throws {
        guard let rig = try await Rig.make() else { return }
        defer { rig.cleanUp() }
        let (root, server, containers) = (rig.root, rig.server, rig.containers)
        let batch = try #require(containers.first { $0["name"] as? String == "richpush-batch" })
        let merge = try #require(containers.first { $0["container"] as? String == "merge-batch" })
        let pods = try #require(batch["completions"] as? Int)
        // One payload a pod (shard I of N runs every N-th payload from the I-th); the last one's asset fails.
        try FileManager.default.createDirectory(atPath: root + "/payloads", withIntermediateDirectories: true)
        for index in 1...pods {
            let url = "https://127.0.0.1:\(server.httpsPort ?? 0)/hero.jpg" + (index == pods ? "?status=404" : "")
            let payload = """
                {"aps": {"alert": {"title": "Sale"}, "mutable-content": 1},
                 "ab": {"att": {"url": "\(url)", "type": "jpg"}}}
                """
            try payload.write(toFile: root + "/payloads/payload-\(index).json", atomically: false, encoding: .utf8)
        }
        let statuses = try await Self.runPods(batch, count: pods, in: root) { _ in [:] }
        for (index, status) in statuses.enumerated() {
            #expect(status == 0, "pod \(index) exited \(status)")
            let shard = root + "/reports/batch-shard-\(index + 1)"
            #expect(FileManager.default.fileExists(atPath: shard + "/summary.json"), "no summary from pod \(index)")
            #expect(FileManager.default.fileExists(atPath: shard + ".xml"), "no JUnit file from pod \(index)")
        }
        let (merged, _) = try await Self.start(Self.script(merge), in: root, environment: [:]).wait()
        #expect(merged == 1, "the merge exited \(merged)")
        let summary =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: root + "/reports/batch-summary.json"))) as? [String: Any]
        #expect(summary?["attached"] as? Int == pods - 1, "\(summary ?? [:])")
    }
}
