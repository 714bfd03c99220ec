import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// The walkthrough of deploy/kubernetes/ without a cluster: the bench Job's 20 pods, each its own
/// process in the image's file system (scripts/image --rootfs, chroot with its own /proc) running the
/// container's command through the image's /bin/sh with its Job index and the run ConfigMap's values,
/// then the merge pod's first step on the shared reports folder. The target stands in for the CDN:
/// the embedded server, its CA added to the image's bundle as a real CDN's is already there, and
/// DEVICES set to 60. Skipped, with the reason, where the machine allows no chroot.
@Suite(.serialized) struct KubernetesRunTests {
    /// Every container of the manifests: file, Job or Pod name, container, command, args, completions.
    static func containers() throws -> [[String: Any]] {
        let result = try ChildProcess.runBlocking(
            "/usr/bin/python3", [Fixtures.root + "/deploy/check-manifests.py", "--commands"])
        let listing = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return listing?["commands"] as? [[String: Any]] ?? []
    }

    /// `script` run by the image's /bin/sh as the pods' user, in `root` with its own /proc.
    static func start(_ script: String, in root: String, environment: [String: String]) throws -> ChildProcess {
        try ChildProcess.start(
            "/usr/bin/unshare",
            [
                "--mount", "--pid", "--fork", "--mount-proc=\(root)/proc", "/usr/sbin/chroot", "--userspec=65532:65532",
                root, "/bin/sh", "-c", script,
            ], environment: ["PATH": "/usr/bin:/bin", "HOME": "/tmp"].merging(environment) { $1 })
    }

    @Test func twentyBenchPodsAndTheMergeRunInTheImage() async throws {
        if let reason = ImageScriptTests.chrootUnavailable {
            print("KubernetesRunTests: skipped: \(reason)")
            return
        }
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let root = folder + "/rootfs"
        let laid = try await ImageScriptTests.run(["--binary", RichPushBinary.path, "--rootfs", root, "--no-check"])
        try #require(laid.status == 0, "\(laid.output)")
        let bundle = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/etc/ssl/certs/ca-certificates.crt"))
        try bundle.seekToEnd()
        try bundle.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: Fixtures.caFile)))
        try bundle.close()
        let server = try Fixtures.startServer()
        defer { server.stop() }
        let containers = try Self.containers()
        let bench = try #require(containers.first { $0["name"] as? String == "richpush-bench" })
        let merge = try #require(containers.first { $0["container"] as? String == "merge-bench" })
        let pods = try #require(bench["completions"] as? Int)
        func script(_ container: [String: Any]) -> String {
            ((container["args"] as? [String]) ?? []).joined(separator: " ")
        }
        // Ahead by enough for 20 processes to start on two cores and each make its trial download.
        let start = try WallTime(
            parsing: String(format: "%.0f", (WallClock.read().time + Sanitizer.scaled(.seconds(12))).epochSeconds))
        var running: [ChildProcess] = []
        for index in 0..<pods {
            running.append(
                try Self.start(
                    script(bench), in: root,
                    environment: [
                        "JOB_COMPLETION_INDEX": "\(index)", "START_AT": start.rfc3339, "DEVICES": "60",
                        "TARGET_URL": "https://127.0.0.1:\(server.httpsPort ?? 0)/hero.jpg",
                    ]))
        }
        for (index, process) in running.enumerated() {
            let (status, _) = await process.wait()
            #expect(status == 0, "pod \(index) exited \(status)")
        }
        let (merged, _) = try await Self.start(script(merge), in: root, environment: [:]).wait()
        #expect(merged == 0, "the merge exited \(merged)")
        let report = try BenchReport.read(try Data(contentsOf: URL(fileURLWithPath: root + "/reports/merged.json")))
        #expect(report.devices == 60 && report.attached == 60 && report.shards == Array(1...pods))
        #expect(report.start?.at == start.rfc3339 && report.start?.shards.count == pods)
        #expect(FileManager.default.fileExists(atPath: root + "/reports/merged.html"))
    }
}
