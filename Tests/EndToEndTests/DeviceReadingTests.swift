import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// The payload and its URL as the device reads them, through the built binary: `ab.att.url` as
/// `URL(string:)` parses it (requested byte for byte), push types that never run the extension, and
/// the payload warnings a sender can act on.
@Suite struct DeviceReadingTests {
    /// The request targets the server saw, in order.
    final class Targets: @unchecked Sendable {
        private let lock = NSLock()
        private var targets: [String] = []
        func add(_ target: String) { lock.withLock { targets.append(target) } }
        var all: [String] { lock.withLock { targets } }
    }

    let server: AssetServer
    let folder: String
    let targets = Targets()

    /// A server over a folder with `hero.jpg` and `my héro.jpg` (the same bytes): a file name with a
    /// space and a non-ASCII character, served where the device's percent-encoded request points.
    init() throws {
        folder = try Fixtures.temporaryFolder()
        let assets = folder + "/assets"
        try FileManager.default.createDirectory(atPath: assets, withIntermediateDirectories: true)
        let hero = try Data(contentsOf: URL(fileURLWithPath: Fixtures.assets + "/hero.jpg"))
        try hero.write(to: URL(fileURLWithPath: assets + "/hero.jpg"))
        try hero.write(to: URL(fileURLWithPath: assets + "/my héro.jpg"))
        let targets = targets
        server = try AssetServer(root: assets, tls: try Fixtures.tlsIdentity(), accessLog: { targets.add($0.target) })
    }

    func cleanUp() {
        server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// `richpush process` of `payload` against the server, and the `richpush` member it adds.
    func process(_ payload: String, _ extra: [String] = []) async throws -> (BinaryRun, JSONValue?) {
        let run = try await RichPushBinary.run(
            [
                "process", "--out", folder + "/out", "--budget", "60", "--cacert", Fixtures.caFile, "--connect-to",
                "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
            ] + extra, stdin: Data(payload.utf8), directory: folder)
        return (run, (try? JSONValue.parse(Array(run.stdout.utf8)))?["richpush"])
    }

    static func payload(url: String) -> String {
        #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"\#(url)","type":"jpg"}}}"#
    }

    static func warningCodes(_ summary: JSONValue?) -> [String] {
        guard case .array(let items) = summary?["warnings"] else { return [] }
        return items.compactMap { if case .string(let code) = $0["code"] { code } else { nil } }
    }

    static func warning(_ summary: JSONValue?, _ code: String) -> String {
        guard case .array(let items) = summary?["warnings"] else { return "" }
        for item in items where item["code"] == .string(code) {
            if case .string(let message) = item["message"] { return message }
        }
        return ""
    }

    @Test func aPathWithASpaceAndANonASCIICharacterIsRequestedPercentEncodedAndAttaches() async throws {
        defer { cleanUp() }
        let (run, summary) = try await process(Self.payload(url: "https://cdn.example.com/my héro.jpg"))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(summary?["verdict"] == .string("attached"), "\(run.stdout)")
        #expect(targets.all == ["/my%20h%C3%A9ro.jpg"], "the request, byte for byte")
        #expect(OutputSchemas.violations(of: summary?.text ?? "", against: "outcome") == [])
        let message = Self.warning(summary, "url-encoded")
        #expect(message.contains("https://cdn.example.com/my%20h%C3%A9ro.jpg"), "\(run.stdout)")
        #expect(message.contains("spaces, 'é'"))
    }

    @Test func aTrailingSpaceIsKeptAndRequestedAsTheDeviceWould() async throws {
        defer { cleanUp() }
        let (run, summary) = try await process(Self.payload(url: "https://cdn.example.com/hero.jpg "))
        // Trimmed, it would attach hero.jpg; the device asks for "hero.jpg%20", which the server does not have.
        #expect(run.status == 1, "\(run.stderr)")
        #expect(summary?["reason"] == .string("http-status"), "\(run.stdout)")
        #expect(targets.all == ["/hero.jpg%20"])
        #expect(Self.warningCodes(summary).contains("url-trailing-whitespace"), "\(run.stdout)")
        #expect(Self.warning(summary, "url-trailing-whitespace").contains("https://cdn.example.com/hero.jpg%20"))
    }

    @Test func aLeadingSpaceIsAnInvalidURLAndNothingIsRequested() async throws {
        defer { cleanUp() }
        let (run, summary) = try await process(Self.payload(url: " https://cdn.example.com/hero.jpg"))
        #expect(run.status == 1, "\(run.stderr)")
        #expect(summary?["reason"] == .string("invalid-url"), "\(run.stdout)")
        #expect(summary?["un_error"] == .number("100"), "\(run.stdout)")
        #expect(run.stderr.contains("starts with whitespace"), "\(run.stderr)")
        #expect(targets.all.isEmpty)
    }

    @Test(arguments: ExtensionPolicy.PushType.allCases.filter { $0 != .alert }.map(\.rawValue))
    func everyPushTypeButAlertLeavesTheExtensionOut(pushType: String) async throws {
        defer { cleanUp() }
        let (run, summary) = try await process(
            Self.payload(url: "https://cdn.example.com/hero.jpg"), ["--push-type", pushType])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(summary?["verdict"] == .string("not-invoked"), "\(run.stdout)")
        #expect(summary?["reason"] == .string("no-alert"))
        #expect(run.stderr.contains("this is a \(pushType) push"), "\(run.stderr)")
        #expect(targets.all.isEmpty, "nothing is downloaded")
    }

    @Test func thePushTypeDefaultsToAlert() async throws {
        defer { cleanUp() }
        let (run, summary) = try await process(Self.payload(url: "https://cdn.example.com/hero.jpg"))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(summary?["verdict"] == .string("attached"))
    }

    @Test func aPrettyPrintedPayloadOverTheLimitOnlyByItsWhitespaceAttachesWithAWarning() async throws {
        defer { cleanUp() }
        let members = (0..<40).map { "\n                    \"k\($0)\": \"\(String(repeating: "v", count: 80))\"" }
        let payload =
            "{\n    \"aps\": {\"alert\": \"Hi\", \"mutable-content\": 1},\n"
            + "    \"ab\": {\"att\": {\"url\": \"https://cdn.example.com/hero.jpg\", \"type\": \"jpg\"}},"
            + members.joined(separator: ",") + "\n}\n"
        let compact = try JSONValue.parse(Array(payload.utf8)).utf8.count
        #expect(payload.utf8.count > 4096 && compact <= 4096, "\(payload.utf8.count) bytes, \(compact) compact")
        let (run, summary) = try await process(payload)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(summary?["verdict"] == .string("attached"), "\(run.stdout)")
        #expect(Self.warning(summary, "payload-whitespace-over-limit").contains("\(compact) as compact JSON"))
        #expect(OutputSchemas.violations(of: summary?.text ?? "", against: "outcome") == [])
    }

    @Test func aDuplicateKeyIsNamedWithTheValueTheDeviceSees() async throws {
        defer { cleanUp() }
        let (run, summary) = try await process(
            #"{"aps":{"alert":"Hi","mutable-content":1,"mutable-content":0},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#
        )
        #expect(run.status == 1, "\(run.stderr)")
        #expect(summary?["reason"] == .string("mutable-content-not-one"), "\(run.stdout)")
        let message = Self.warning(summary, "duplicate-key")
        #expect(message.contains("'aps.mutable-content' appears 2 times"), "\(run.stdout)")
        #expect(message.contains("the app sees 0"))
    }

    @Test func aByteOrderMarkAndNDJSONGetTheirOwnMessages() async throws {
        defer { cleanUp() }
        let payload = Self.payload(url: "https://cdn.example.com/hero.jpg")
        let (bom, _) = try await process("\u{FEFF}" + payload)
        #expect(bom.status == 65, "rejected: a data error")
        #expect(bom.stderr.contains("byte order mark"), "\(bom.stderr)")
        let (lines, _) = try await process(payload + "\n" + payload + "\n")
        #expect(lines.status == 65, "rejected: a data error")
        #expect(lines.stderr.contains("richpush batch"), "\(lines.stderr)")
        #expect(targets.all.isEmpty)
    }
}
