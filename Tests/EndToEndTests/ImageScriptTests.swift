import Foundation
import TestSupport
import Testing

/// scripts/image: the image's file system laid out from the built binary (its shared libraries found
/// with ldd, libmagic's database, the CA bundle, /bin/sh, the samples), and richpush run in it with
/// chroot and its own /proc: `richpush demo` gives every sample its expected verdict there, and the
/// guide's analytics walkthrough and a two-shard bench with its merge pass there. Skipped,
/// with the reason, where the machine allows no chroot; the whole image (a release build, minutes)
/// only with RICHPUSH_IMAGE_TEST=1.
@Suite(.serialized) struct ImageScriptTests {
    static let script = Fixtures.root + "/scripts/image"

    /// Why a chroot check cannot run here, or nil when it can.
    static var chrootUnavailable: String? {
        if getuid() != 0 { return "chroot needs root" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return "no unshare" }
        guard let probe = try? ChildProcess.runBlocking("/usr/bin/unshare", ["--mount", "--pid", "--fork", "true"])
        else { return "unshare cannot start" }
        return probe.status == 0 ? nil : "this machine allows no new mount and PID namespace"
    }

    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/image.log"
        let child = try ChildProcess.start(
            script, arguments, directory: Fixtures.root, stdout: .file(log), stderr: .stdout)
        let (status, _) = await child.wait()
        return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    @Test func laysOutTheFileSystemAndRunsRichPushInIt() async throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let root = folder + "/rootfs"
        let result = try await Self.run(["--binary", RichPushBinary.path, "--rootfs", root, "--no-check"])
        #expect(result.status == 0, "\(result.output)")
        for path in [
            "/usr/bin/richpush", "/bin/sh", "/usr/lib/file/magic.mgc", "/etc/ssl/certs/ca-certificates.crt",
            "/richpush/Samples/expected.tsv", "/richpush/Samples/certs/ca.pem", "/etc/passwd",
            "/lib64/ld-linux-x86-64.so.2",
        ] {
            #expect(FileManager.default.fileExists(atPath: root + path), "the image lacks \(path)")
        }
        #expect(
            !FileManager.default.fileExists(atPath: root + "/richpush/Samples/certs/ca-key.pem"),
            "the image ships the test CA's private key")
        // Every library the binary needs, where the loader looks for it.
        for library in ["libcurl.so.4", "libmagic.so.1", "libmicrohttpd.so.12", "libssl.so.3", "libc.so.6"] {
            #expect(
                FileManager.default.fileExists(atPath: root + "/lib/x86_64-linux-gnu/" + library)
                    || FileManager.default.fileExists(atPath: root + "/usr/lib/x86_64-linux-gnu/" + library),
                "the image lacks \(library)")
        }
        if let reason = Self.chrootUnavailable {
            print("ImageScriptTests: the chroot check is skipped: \(reason)")
            return
        }
        let checked = try await Self.run(["--check-rootfs", root])
        #expect(checked.status == 0, "\(checked.output)")
        #expect(checked.output.contains("check passed"), "\(checked.output)")
        #expect(checked.output.contains("Every payload got the verdict Samples/expected.tsv expects"))
        #expect(checked.output.contains("analytics walkthrough passed"), "\(checked.output)")
        #expect(checked.output.contains("two-shard bench passed"), "\(checked.output)")
    }

    /// A broken file system fails the check rather than passing it: without libmagic's database the
    /// demo's verdicts differ (or richpush cannot start).
    @Test func aFileSystemWithoutTheMagicDatabaseFailsTheCheck() async throws {
        if let reason = Self.chrootUnavailable {
            print("ImageScriptTests: the chroot check is skipped: \(reason)")
            return
        }
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let root = folder + "/rootfs"
        #expect(try await Self.run(["--binary", RichPushBinary.path, "--rootfs", root, "--no-check"]).status == 0)
        try FileManager.default.removeItem(atPath: root + "/usr/lib/file/magic.mgc")
        let checked = try await Self.run(["--check-rootfs", root])
        #expect(checked.status == 1 && checked.output.contains("check failed"), "\(checked.output)")
    }

    /// The image itself, from the binary under test (scripts/test gives the release build with the
    /// static Swift standard library), buildah or podman, and the check: demo, the analytics
    /// walkthrough and a two-shard bench with its merge, in the committed image's file system.
    /// Only when asked for (scripts/test does in CI).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["RICHPUSH_IMAGE_TEST"] == "1"))
    func buildsTheImageAndChecksIt() async throws {
        let result = try await Self.run(["--binary", RichPushBinary.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("built richpush:"), "\(result.output)")
        if Self.chrootUnavailable == nil {
            #expect(result.output.contains("check passed"), "\(result.output)")
            #expect(result.output.contains("analytics walkthrough passed"), "\(result.output)")
            #expect(result.output.contains("two-shard bench passed"), "\(result.output)")
        }
    }
}
