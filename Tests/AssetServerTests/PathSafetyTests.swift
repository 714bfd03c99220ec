import Foundation
import Synchronization
import TestSupport
import Testing

@testable import AssetServer

/// The server never serves outside its folder, whatever the path or the folder's links do meanwhile.
@Suite struct PathSafetyTests {
    /// A served folder and, beside it, a folder that must never be served.
    final class Rig: @unchecked Sendable {
        let base: String
        let root: String
        let outside: String
        let server: AssetServer
        static let secret = "OUTSIDE-SECRET-must-never-be-served"

        init() throws {
            base = try Fixtures.temporaryFolder("richpush-paths")
            root = base + "/root"
            outside = base + "/outside"
            for folder in [root, outside, root + "/swap-dir"] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            try Data(Self.secret.utf8).write(to: URL(fileURLWithPath: outside + "/asset.jpg"))
            try Data("inside".utf8).write(to: URL(fileURLWithPath: root + "/swap-dir/asset.jpg"))
            try Data("inside".utf8).write(to: URL(fileURLWithPath: root + "/plain.jpg"))
            server = try AssetServer(root: root)
        }

        deinit {
            server.stop()
            try? FileManager.default.removeItem(atPath: base)
        }

        func get(_ target: String) throws -> RawResponse? { try RawHTTP.get(target, port: server.httpPort) }
    }

    @Test func neverFollowsALinkedFolderOutOfTheRoot() async throws {
        let rig = try Rig()
        try FileManager.default.createSymbolicLink(atPath: rig.root + "/linked", withDestinationPath: rig.outside)
        try FileManager.default.createSymbolicLink(
            atPath: rig.root + "/inner", withDestinationPath: rig.root + "/swap-dir")
        let outside = try await offThePool { try rig.get("/linked/asset.jpg") }
        #expect(outside?.status == 404)
        #expect(outside?.text.contains(Rig.secret) == false)
        // No link is followed at all, even one that stays inside the folder: nothing to race on.
        #expect(try await offThePool { try rig.get("/inner/asset.jpg") }?.status == 404)
        #expect(try await offThePool { try rig.get("/swap-dir/asset.jpg") }?.status == 200)
    }

    /// A folder inside the root swapped for a link to the outside, over and over, while requests run:
    /// with a check-then-open, some requests land in the window and serve the outside file.
    @Test func aFolderSwappedForALinkNeverServesTheOutside() async throws {
        let rig = try Rig()
        let done = StopFlag()
        let root = rig.root, outside = rig.outside
        let swapperEnded = DispatchSemaphore(value: 0)
        let swapper = Thread {
            defer { swapperEnded.signal() }
            let folder = root + "/swap-dir", parked = root + "/swap-parked"
            while !done.isSet {
                rename(folder, parked)
                symlink(outside, folder)
                usleep(100)
                unlink(folder)
                rename(parked, folder)
                usleep(100)
            }
        }
        swapper.start()
        defer { done.set() }
        let (statuses, leaks) = try await offThePool {
            var statuses: [Int] = []
            var leaks = 0
            for _ in 0..<2000 {
                let response = try rig.get("/swap-dir/asset.jpg")
                if response?.text.contains(Rig.secret) == true { leaks += 1 }
                statuses.append(response?.status ?? -1)
            }
            return (statuses, leaks)
        }
        done.set()
        _ = swapperEnded.wait(timeout: .now() + 10)
        #expect(leaks == 0, "served the file outside the root \(leaks) times in 2000")
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 404 })
        #expect(try await offThePool { try rig.get("/swap-dir/asset.jpg") }?.text == "inside", "served once left alone")
    }

    @Test(arguments: ["/plain.jpg%00.png", "/plain.jpg%00", "/%00/plain.jpg"])
    func refusesANulInThePath(target: String) async throws {
        let rig = try Rig()
        let response = try await offThePool { try rig.get(target) }
        #expect(response?.status == 400)
        #expect(response?.text.contains("NUL") == true)
        #expect(try await offThePool { try rig.get("/plain.jpg") }?.status == 200)
    }

    @Test(arguments: ["/.hidden.jpg", "/.git/config", "/.git/../plain.jpg", "/%2ehidden.jpg", "/swap-dir/.hidden.jpg"])
    func neverServesDotfiles(target: String) async throws {
        let rig = try Rig()
        try FileManager.default.createDirectory(atPath: rig.root + "/.git", withIntermediateDirectories: true)
        for path in ["/.hidden.jpg", "/.git/config", "/swap-dir/.hidden.jpg"] {
            try Data("private".utf8).write(to: URL(fileURLWithPath: rig.root + path))
        }
        let response = try await offThePool { try rig.get(target) }
        #expect(response?.status == 404)
        #expect(response?.text.contains("private") == false)
        let index = try await offThePool { try rig.get("/") }
        #expect(index?.text.contains("/plain.jpg") == true)
        #expect(index?.text.contains(".hidden") == false && index?.text.contains(".git") == false)
    }

    /// A file name followed by a slash, typed or percent-encoded, names a folder that does not exist:
    /// 404, as a static file server answers (the slash was dropped and the file served).
    @Test(arguments: [
        "/plain.jpg/", "/plain.jpg%2f", "/plain.jpg%2F", "/swap-dir/asset.jpg/", "/swap-dir%2fasset.jpg/",
    ])
    func answersAFileNameWithATrailingSlashWith404(target: String) async throws {
        let rig = try Rig()
        let response = try await offThePool { try rig.get(target) }
        #expect(response?.status == 404)
        #expect(response?.text.contains("inside") == false)
        #expect(try await offThePool { try rig.get("/plain.jpg") }?.status == 200)
        #expect(try await offThePool { try rig.get("/swap-dir%2fasset.jpg") }?.status == 200, "%2f between names")
    }

    /// A server that opened the FIFO for reading would block until a writer came: the client's 10 s
    /// read timeout would end the request without an answer, so the 404 is the proof (no wall-clock
    /// bound, which the suite's start-up load can exceed).
    @Test func answersAFIFOWith404WithoutBlocking() async throws {
        let rig = try Rig()
        #expect(mkfifo(rig.root + "/pipe.jpg", 0o600) == 0)
        #expect(try await offThePool { try rig.get("/pipe.jpg") }?.status == 404)
        #expect(try await offThePool { try rig.get("/plain.jpg") }?.status == 200, "the server still answers")
    }

    /// Both ways of opening beneath the root (openat2, and the walk for kernels without it) refuse
    /// links, `..` and absolute paths, and open plain files.
    @Test(arguments: [false, true])
    func opensOnlyBeneathTheRootWithoutLinks(walk: Bool) throws {
        let rig = try Rig()
        try FileManager.default.createSymbolicLink(atPath: rig.root + "/linked", withDestinationPath: rig.outside)
        try FileManager.default.createSymbolicLink(atPath: rig.root + "/link.jpg", withDestinationPath: "plain.jpg")
        let root = open(rig.root, O_RDONLY | O_DIRECTORY)
        defer { close(root) }
        for path in ["plain.jpg", "swap-dir/asset.jpg"] {
            let descriptor = openBeneath(root, path: path, walk: walk)
            #expect(descriptor >= 0, "\(path)")
            if descriptor >= 0 { close(descriptor) }
        }
        for path in [
            "linked/asset.jpg", "link.jpg", "../outside/asset.jpg", "swap-dir/../../outside/asset.jpg",
            rig.outside + "/asset.jpg", "", "missing.jpg",
        ] {
            let descriptor = openBeneath(root, path: path, walk: walk)
            #expect(descriptor < 0, "\(path) must not open")
            if descriptor >= 0 { close(descriptor) }
        }
    }

    @Test func mapsURLPathsToRelativePaths() {
        #expect(relativeAssetPath("/a/b.jpg") == "a/b.jpg")
        #expect(relativeAssetPath("//a///b.jpg") == "a/b.jpg")
        #expect(relativeAssetPath("/") == nil)
        #expect(relativeAssetPath("/a/../b.jpg") == nil)
        #expect(relativeAssetPath("/a/./b.jpg") == nil)
        #expect(relativeAssetPath("/.env") == nil)
        #expect(relativeAssetPath("/a/b.jpg/") == nil)
        #expect(relativeAssetPath("//") == nil)
    }
}

/// A flag one thread sets and another polls.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
