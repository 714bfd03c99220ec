import Foundation
import RichPush
import TestSupport
import Testing

/// `richpush sniff` through the binary: the same answer `process` gives for the same bytes, and an
/// exit status that says whether iOS would attach every file.
@Suite struct SniffCommandTests {
    let folder: String

    init() throws {
        folder = try Fixtures.temporaryFolder()
    }

    func cleanUp() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Writes `bytes` to `name` in the test folder and returns its path.
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = folder + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A JPEG padded with zero bytes to `size` bytes: libmagic still calls it image/jpeg.
    func jpeg(size: Int) throws -> [UInt8] {
        let hero = try Fixtures.bytes(ofAsset: "hero.jpg")
        return hero + [UInt8](repeating: 0, count: size - hero.count)
    }

    func lines(_ run: BinaryRun) -> [JSONValue] {
        run.stdout.split(separator: "\n").compactMap { try? JSONValue.parse(Array($0.utf8)) }
    }

    @Test func refusesAnImageOverTheImageCapAsProcessDoes() async throws {
        defer { cleanUp() }
        let large = try write("large.jpg", try jpeg(size: 12_000_000))
        let run = try await RichPushBinary.run(["sniff", "--json", large])
        #expect(run.status == 1, "\(run.stderr)")
        let line = try #require(lines(run).first)
        #expect(line["format"] == .string("jpeg"))
        #expect(line["attachable"] == .bool(false))
        #expect(line["reason"] == .string("file-too-large"))
        #expect(line["bytes"] == .number("12000000"))
        #expect(run.stderr.contains("over Apple's 10 MB cap for image"), "\(run.stderr)")
        let text = try await RichPushBinary.run(["sniff", large])
        #expect(text.status == 1)
        #expect(text.stdout.contains("\tfile-too-large\t"), "\(text.stdout)")
    }

    /// 10.2 MB is over 10^6-byte megabytes and under 2^20-byte ones: `--binary-mb` decides, as for `process`.
    @Test func countsMegabytesAsTheOptionSays() async throws {
        defer { cleanUp() }
        let between = try write("between.jpg", try jpeg(size: 10_200_000))
        #expect(try await RichPushBinary.run(["sniff", between]).status == 1)
        let binary = try await RichPushBinary.run(["sniff", "--binary-mb", between])
        #expect(binary.status == 0, "\(binary.stderr)")
        #expect(binary.stdout.contains("\tattachable\t"), "\(binary.stdout)")
    }

    /// An MPEG-4 file with no video track is MPEG-4 audio: its class is audio, with audio's 5 MB cap.
    @Test func callsAnMPEG4FileWithoutVideoAudio() async throws {
        defer { cleanUp() }
        let audio = try write("chime.mp4", try Fixtures.bytes(ofAsset: "chime-mp42.m4a"))
        let run = try await RichPushBinary.run(["sniff", "--json", audio, Fixtures.assets + "/clip.mp4"])
        #expect(run.status == 0, "\(run.stderr)")
        let sniffed = lines(run)
        #expect(sniffed.count == 2)
        #expect(sniffed.first?["mime"] == .string("video/mp4"))
        #expect(sniffed.first?["format"] == .string("m4a"))
        #expect(sniffed.first?["attachment_class"] == .string("audio"), "\(run.stdout)")
        #expect(sniffed.first?["uti"] == .string("public.mpeg-4-audio"))
        #expect(sniffed.last?["attachment_class"] == .string("movie"), "a file with a video track stays a movie")
        // Audio's cap, not a movie's: 6 MB of MPEG-4 audio is refused.
        let large = try write(
            "large-audio.mp4",
            try Fixtures.bytes(ofAsset: "chime-mp42.m4a") + [UInt8](repeating: 0, count: 6_000_000))
        let over = try await RichPushBinary.run(["sniff", "--json", large])
        #expect(over.status == 1, "\(over.stdout)")
        #expect(lines(over).first?["reason"] == .string("file-too-large"))
        #expect(over.stderr.contains("5 MB cap for audio"), "\(over.stderr)")
    }

    @Test func exitsZeroOnlyWhenEveryFileWouldAttach() async throws {
        defer { cleanUp() }
        let supported = ["hero.jpg", "hero.png", "banner.gif", "chime.mp3", "chime.m4a", "clip.mp4"]
        let good = try await RichPushBinary.run(["sniff"] + supported.map { Fixtures.assets + "/" + $0 })
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.split(separator: "\n").allSatisfy { $0.contains("\tattachable\t") }, "\(good.stdout)")
        let mixed = try await RichPushBinary.run([
            "sniff", Fixtures.assets + "/hero.jpg", Fixtures.assets + "/hero.webp",
        ])
        #expect(mixed.status == 1)
        #expect(mixed.stdout.contains("\tcontent-unrecognized\t"), "\(mixed.stdout)")
        #expect(mixed.stderr.contains("hero.webp: the file is image/webp"), "\(mixed.stderr)")
    }
}
