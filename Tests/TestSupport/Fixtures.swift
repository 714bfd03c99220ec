import AssetServer
import Digest
import Foundation

/// Paths to the repository's samples, and helpers every test target shares.
package enum Fixtures {
    /// The package root, found from this file's location.
    package static let root: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    package static let assets = root + "/Samples/assets"
    package static let certs = root + "/Samples/certs"
    package static let caFile = certs + "/ca.pem"

    /// The test server identity from Samples/certs.
    package static func tlsIdentity() throws -> TLSIdentity {
        try TLSIdentity.load(certificate: certs + "/server.pem", key: certs + "/server-key.pem")
    }

    /// Starts the asset server on 127.0.0.1, ports chosen by the system, HTTP and HTTPS.
    package static func startServer(root: String = assets) throws -> AssetServer {
        try AssetServer(root: root, tls: try tlsIdentity())
    }

    /// The arguments that send the sample host (`cdn.example.com:443`, as the sample payloads name it)
    /// to `server`'s HTTPS port and trust its test CA: `--cacert` and `--connect-to`.
    package static func sampleHost(_ server: AssetServer) -> [String] {
        ["--cacert", caFile, "--connect-to", "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)"]
    }

    /// The bytes of a sample asset.
    package static func bytes(ofAsset name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: assets + "/" + name)))
    }

    /// A new empty folder under the system's temporary folder, removed by `cleanup`.
    /// SHA-256 of a file's bytes, read whole, through the Digest module (checked against the FIPS 180-2
    /// examples in its own tests): independent of the streaming sink it is compared with.
    package static func sha256(ofFile path: String) throws -> String {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        return SHA256Digest.hex(of: bytes) ?? ""
    }

    package static func temporaryFolder(_ label: String = "richpush-test") throws -> String {
        let path = NSTemporaryDirectory() + "\(label)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Polls `condition` every 20 ms until it holds or `seconds` pass; says whether it held.
    package static func waitUntil(seconds: Int, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// The files below `folder`, relative paths, sorted.
    package static func files(in folder: String) -> [String] {
        ((FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? []).filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder + "/" + $0, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }.sorted()
    }

    /// The process's resident memory in bytes (VmRSS), from /proc.
    package static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes * 1024
    }
}
