import AssetServer
import Foundation
import RichPush
import TestSupport
import Testing

/// Hostile files, streams and payloads through the built binary: each case checks the exit
/// status, the reason code, and that nothing changed outside `--out` except what was asked for.
///
/// Serialized: each case starts a server and a process, and 17 at once would starve the
/// machine's cores for the timing-bound tests that run beside them.
@Suite(.serialized) struct HostileInputTests {
    /// One hostile situation: files and a setup script, the command, and what must come of it.
    struct Scenario {
        var files: [String: [UInt8]] = [:]
        var setup = ""
        var command: String
        var status: Int32
        /// The reason code: from the payload on stdout, else `[reason]` on stderr; nil: not checked.
        var reason: String?
        /// Names outside `out/` the command is asked to write.
        var allowedOutside: Set<String> = []
        var check: (@Sendable (ShellRun, String) -> Void)? = nil
    }

    enum Case: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case symlinkedReportTemporary, reportIsAFolder, plantedAttachment, fifoInput, fifoInBatch, crlfInURL
        case stderrClosed, stderrFull, brokenPipe, payloadAtLimitPlusNewline, payloadOverLimit, pathTraversalType
        case deepNesting, invalidUTF8, stalePartBeforeFetch, stdoutFullAfterStore, tinyDescriptorLimit
        case sniffFIFO, sniffDevice, stdoutClosed, mergeOverflowingCounts, mergeNegativeCounts, mergeFIFO
        case plistBombServicePlist, plistBombContentPlist, plistBombVendoredInApp, plistBombTargetInApp
        case plistBombSuite, plistFifoServicePlist, plistStringBombServicePlist, plistStringBombSuite
        case thresholdControlCharacters, thresholdHuge, mergeSameSummaryTwice, mergeForeignIdentity
        case reportIsAHardLink, batchResultsIsALink, sniffLyingMediaSizes
        case gzipBomb, headerInjection
        case composeFIFO, composeDeepNesting, composeControlCharacters, brazeRequestFIFO, composeUsersFIFO
        case sdkDispositionTraversal, sdkNameNotKnown
        case urlListControlCharacters, urlListNotText, urlListHugeWeight
        case startAtControlCharacters, startAtBeyondTheClock
        var testDescription: String { rawValue }
    }

    static let noAttachment = Array(#"{"aps":{"alert":"Hi","mutable-content":1}}"#.utf8)
    static let hero = Array(
        #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"jpg"}}}"#
            .utf8)
    /// `process` with a budget a loaded machine cannot exhaust: no scenario here is about time.
    static let process = #""$RP" process --out out --cacert "$CA" --connect-to "$MAP" --budget 60"#
    /// The binary under a 2 GiB address-space cap (none under a sanitizer, which reserves terabytes)
    /// and GNU time, which writes its peak resident memory in kilobytes to `peak.txt`.
    static let capped = #"$CAP /usr/bin/time -o peak.txt -f %M "$RP""#
    /// 40 arrays that each reference the next twice, under a dictionary: 2^40 objects to Foundation.
    static let bomb = BinaryPlistBuilder.dictionaryBomb(levels: 40)

    /// One 100 KB string referenced `references` times under `{key: [...]}` (90,000: 460 KB; 400,000:
    /// 1.7 MB): within the size and object limits, gigabytes of strings to Foundation.
    static func stringBomb(key: String, references: Int) -> [UInt8] {
        BinaryPlistBuilder.sharedLeafBomb(
            BinaryPlistBuilder.string(String(repeating: "a", count: 100_000)), references: references, key: key)
    }

    /// The sample app's plists under `app/`, with `extra` added.
    static func sampleApp(_ extra: [String: [UInt8]]) -> [String: [UInt8]] {
        var files = extra
        for name in ["NotificationService", "NotificationContent", "PersonalizedContent", "RichPushDemo"] {
            let path = Fixtures.root + "/Samples/app/\(name)/Info.plist"
            files["app/\(name)/Info.plist"] = FileManager.default.contents(atPath: path).map { Array($0) } ?? []
        }
        return files
    }

    /// Checks that a bounded refusal named the file and the defect, within a small peak memory.
    static func refusedBomb(_ file: String) -> @Sendable (ShellRun, String) -> Void {
        { run, parent in
            #expect(run.stderr.contains(file), "\(run.stderr)")
            #expect(run.stderr.contains("expands to more than"), "\(run.stderr)")
            checkPeak(parent)
        }
    }

    /// The peak resident memory GNU time measured stays far below what decoding a bomb takes (gigabytes).
    static func checkPeak(_ parent: String) {
        guard !Sanitizer.isActive else { return }
        let text = (try? String(contentsOfFile: parent + "/peak.txt", encoding: .utf8)) ?? ""
        // GNU time writes "Command exited with non-zero status N" first when the command fails.
        let last = text.split(separator: "\n").last.map(String.init) ?? ""
        let kilobytes = Int(last.trimmingCharacters(in: .whitespaces)) ?? Int.max
        #expect(kilobytes < 200 * 1024, "peak \(kilobytes) KB")
    }

    /// A payload of exactly `size` bytes of JSON that asks for no attachment.
    static func payload(ofSize size: Int) -> [UInt8] {
        let head = #"{"aps":{"alert":"Hi","mutable-content":1},"pad":""#
        let tail = #""}"#
        return Array((head + String(repeating: "x", count: size - head.utf8.count - tail.utf8.count) + tail).utf8)
    }

    /// MPEG-4 and ID3v2 files whose sizes lie: a 64-bit ftyp size of 2^64 - 1, zero sizes (to the end),
    /// a box claiming 2 GB in a file of 200 bytes, a tag claiming 256 MB in a file of 14 bytes.
    static let lyingMedia: [String: [UInt8]] = {
        func box(_ type: String, _ payload: [UInt8], size: UInt32? = nil) -> [UInt8] {
            let size = size ?? UInt32(8 + payload.count)
            return [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: size >> $0) } + Array(type.utf8) + payload
        }
        let handler = box(
            "hdlr", [UInt8](repeating: 0, count: 8) + Array("vide".utf8) + [UInt8](repeating: 0, count: 13))
        let moov = box("moov", box("trak", box("mdia", box("mdhd", [UInt8](repeating: 0, count: 24)) + handler)))
        let brands = Array("mp42".utf8) + [0, 0, 0, 0] + Array("mp42isom".utf8)
        let mdat = [UInt8](repeating: 0x55, count: 40)
        return [
            "large.mp4": [0, 0, 0, 1] + Array("ftyp".utf8) + [UInt8](repeating: 0xff, count: 8) + brands
                + box("mdat", mdat, size: .max) + moov,
            "zero.mp4": box("ftyp", brands, size: 0) + box("mdat", mdat, size: 0) + moov,
            "truncated.mp4": box("ftyp", brands, size: 0x7fff_ffff) + moov.dropLast(20),
            "tag.mp3": Array("ID3".utf8) + [3, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0xfb, 0x90, 0x64],
        ]
    }()

    static func scenario(_ hostile: Case) -> Scenario {
        switch hostile {
        case .gzipBomb:
            // A pre-compressed body of about 200 KB that inflates to 200 MB: decoded as URLSession
            // decodes, counted decoded against Apple's 10 MB image cap, stopped there in little memory.
            let bomb =
                #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg?gzip=1&size=200000000","type":"jpg"}}}"#
            return Scenario(
                files: ["p.json": Array(bomb.utf8)],
                command: capped + #" process --out out --cacert "$CA" --connect-to "$MAP" --budget 60 p.json"#,
                status: 1, reason: "file-too-large", allowedOutside: ["peak.txt"],
                check: { run, parent in
                    let outcome = try? JSONValue.parse(Array(run.stdout.utf8))["richpush"]
                    if case .number(let bytes)? = outcome?["download"]?["bytes"] {
                        #expect((Int(bytes) ?? .max) <= 10_000_000, "decoded bytes stop at the cap")
                    } else {
                        Issue.record("no download bytes: \(run.stdout)")
                    }
                    checkPeak(parent)
                })
        case .urlListControlCharacters:
            // A terminal escape in a --urls line is refused by its line, and never echoed to the terminal.
            return Scenario(
                files: [
                    "urls.txt": Array(
                        "https://cdn.example.com/hero.jpg\nhttps://cdn.example.com/\u{1b}[2J{x}.jpg 2\n".utf8)
                ],
                command: #""$RP" bench --urls urls.txt --devices 2 --connect-to "$MAP" --cacert "$CA" --no-progress"#,
                status: 65, reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("urls.txt line 2"), "\(run.stderr)")
                    #expect(!run.stderr.contains("\u{1b}"), "\(run.stderr)")
                })
        case .urlListNotText:
            return Scenario(
                files: ["urls.txt": [0xFF, 0xFE, 0x00, 0x1B, 0x5B, 0x32, 0x4A, 0x0A]],
                command: #""$RP" bench --urls urls.txt --devices 2 --connect-to "$MAP" --cacert "$CA" --no-progress"#,
                status: 65, reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("not UTF-8 text"), "\(run.stderr)")
                    #expect(!run.stderr.contains("\u{1b}"), "\(run.stderr)")
                })
        case .urlListHugeWeight:
            // A weight past Int's range is refused, not wrapped into a small one.
            return Scenario(
                files: ["urls.txt": Array("https://cdn.example.com/hero.jpg 99999999999999999999999\n".utf8)],
                command: #""$RP" bench --urls urls.txt --devices 2 --connect-to "$MAP" --cacert "$CA" --no-progress"#,
                status: 65, reason: nil,
                check: { run, _ in #expect(run.stderr.contains("is not a whole number from 1 to"), "\(run.stderr)") })
        case .headerInjection:
            // CR LF in a header value would add a header (or a request) of the sender's choosing.
            return Scenario(
                files: ["p.json": hero],
                command: process + #" -H "$(printf 'X-A: 1\r\nHost: evil.example')" p.json"#, status: 64,
                reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("carriage return"), "\(run.stderr)")
                    #expect(run.stdout.isEmpty)
                })
        case .sdkDispositionTraversal:
            // A server's Content-Disposition names the file for suggestedFilename's SDKs: a path in it
            // stays one name (its last component), and the store writes under its own name inside --out.
            let url =
                "https://cdn.example.com/hero.png?disposition=attachment%3B%20filename%3D%22..%2F..%2F..%2Fescaped.png%22"
            let payload =
                #"{"aps":{"alert":"Hi","mutable-content":1},"CIO-Delivery-ID":"d","CIO-Delivery-Token":"t","CIO":{"push":{"image":"\#(url)"}}}"#
            return Scenario(
                files: ["p.json": Array(payload.utf8)], command: process + " --sdk customerio p.json", status: 0,
                reason: "ok",
                check: { run, _ in
                    let outcome = try? JSONValue.parse(Array(run.stdout.utf8))["richpush"]
                    #expect(outcome?["sdk_file"]?["rule"] == .string("content-disposition"), "\(run.stdout)")
                    guard case .string(let name)? = outcome?["sdk_file"]?["name"] else {
                        Issue.record("no sdk_file name: \(run.stdout)")
                        return
                    }
                    #expect(!name.contains("/") && name.hasSuffix("_escaped.png"), "\(name)")
                })
        case .sdkNameNotKnown:
            // An unknown --sdk is a usage error naming the choices, its control characters escaped.
            return Scenario(
                files: ["p.json": hero], command: process + #" --sdk "$(printf 'one\033[2Jsignal')" p.json"#,
                status: 64, reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("--sdk takes one of braze, onesignal"), "\(run.stderr)")
                    #expect(!run.stderr.contains("\u{1B}"), "no raw escape reaches the terminal")
                    #expect(run.stdout.isEmpty)
                })
        case .sniffLyingMediaSizes:
            // The sizes are read, never trusted: nothing is read past the file or allocated for a claim,
            // and a handler is found (or not) wherever the boxes claim to end.
            return Scenario(
                files: lyingMedia, command: capped + " sniff --json large.mp4 zero.mp4 truncated.mp4 tag.mp3",
                status: 1, reason: nil, allowedOutside: ["peak.txt"],
                check: { run, parent in
                    let lines = run.stdout.split(separator: "\n").compactMap { try? JSONValue.parse(Array($0.utf8)) }
                    #expect(lines.count == 4, "\(run.stdout) \(run.stderr)")
                    func line(_ file: String) -> JSONValue? { lines.first { $0["file"] == .string(file) } }
                    #expect(line("zero.mp4")?["format"] == .string("mp4"))
                    #expect(
                        line("zero.mp4")?["notes"] == .array([.string("MPEG-4 major brand 'mp42', has a video track")]))
                    #expect(
                        line("truncated.mp4")?["notes"]
                            == .array([.string("MPEG-4 major brand 'mp42', no video track: MPEG-4 audio")]))
                    #expect(line("large.mp4")?["format"] == nil && line("tag.mp3")?["format"] == nil)
                    checkPeak(parent)
                })
        case .symlinkedReportTemporary:
            // The temporary name the report used to get, planted as a link to a file the user owns.
            return Scenario(
                files: ["p.json": noAttachment], setup: "echo keep > victim && ln -s victim .report.json.part",
                command: process + " --report report.json p.json", status: 0, reason: "no-attachment-requested",
                allowedOutside: ["report.json"],
                check: { _, parent in
                    #expect(FileManager.default.contents(atPath: parent + "/victim") == Data("keep\n".utf8))
                    var info = stat()
                    #expect(lstat(parent + "/report.json", &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG)
                })
        case .reportIsAHardLink:
            // The report's name is a second name of a file the user owns: the new report replaces the
            // name (through an unnamed file linked in and renamed over it), never the file's content.
            return Scenario(
                files: ["p.json": noAttachment], setup: "echo keep > victim && ln victim report.json",
                command: process + " --report report.json p.json", status: 0, reason: "no-attachment-requested",
                allowedOutside: ["report.json"],
                check: { _, parent in
                    #expect(FileManager.default.contents(atPath: parent + "/victim") == Data("keep\n".utf8))
                    let report = FileManager.default.contents(atPath: parent + "/report.json") ?? Data()
                    #expect(report.first == UInt8(ascii: "{"), "the report is in place")
                    var info = stat()
                    #expect(stat(parent + "/report.json", &info) == 0 && info.st_nlink == 1)
                    #expect(!Fixtures.files(in: parent).contains { $0.hasPrefix(".richpush-") })
                })
        case .batchResultsIsALink:
            // A link planted at the batch's results.ndjson is replaced, as a rename replaces it; what it
            // leads to (outside --out) is never written.
            return Scenario(
                files: ["in/a.json": noAttachment],
                setup: "echo keep > victim && mkdir out && ln -s ../victim out/results.ndjson",
                command: #""$RP" batch in --out out --no-progress"#, status: 0, reason: nil,
                check: { _, parent in
                    #expect(FileManager.default.contents(atPath: parent + "/victim") == Data("keep\n".utf8))
                    var info = stat()
                    #expect(lstat(parent + "/out/results.ndjson", &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG)
                    let results = (try? String(contentsOfFile: parent + "/out/results.ndjson", encoding: .utf8)) ?? ""
                    #expect(results.contains(#""input":"a.json""#), "\(results)")
                })
        case .reportIsAFolder:
            return Scenario(
                files: ["p.json": noAttachment], setup: "mkdir reports",
                command: process + " --report \"$PWD/reports\" p.json", status: 74, reason: nil,
                check: { run, _ in #expect(run.stderr.contains("it is a folder")) })
        case .plantedAttachment:
            // A file of the right size and the wrong content at the attachment's final name.
            return Scenario(
                files: ["p.json": hero],
                setup: "",
                command: #"""
                    name=$(sha256sum "$ASSETS/hero.jpg" | cut -c1-32)
                    mkdir -p out && head -c "$(stat -c %s "$ASSETS/hero.jpg")" /dev/zero > "out/$name.jpg"
                    \#(process) p.json
                    """#,
                status: 1, reason: "storage-failed",
                check: { run, _ in #expect(run.stderr.contains("content differs"), "\(run.stderr)") })
        case .fifoInput:
            return Scenario(
                setup: "mkfifo p.json", command: process + " p.json", status: 65, reason: "unreadable-input",
                check: { run, _ in #expect(run.stderr.contains("not a regular file")) })
        case .fifoInBatch:
            return Scenario(
                files: ["in/b.json": noAttachment], setup: "mkfifo in/a.json",
                command: #""$RP" batch in --out out --no-progress"#, status: 1, reason: nil,
                check: { _, parent in
                    let results = (try? String(contentsOfFile: parent + "/out/results.ndjson", encoding: .utf8)) ?? ""
                    let line = results.split(separator: "\n").first { $0.contains(#""input":"a.json""#) } ?? ""
                    #expect(line.contains(#""reason":"unreadable-input""#), "\(results)")
                    #expect(line.contains("not a regular file"))
                })
        case .crlfInURL:
            return Scenario(
                files: [
                    "p.json": Array(
                        #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/a\nrichpush: attached: forged\r\u001b[2J.jpg","type":"jpg"}}}"#
                            .utf8)
                ],
                command: process + " p.json", status: 1, reason: "http-status",
                check: { run, _ in
                    // The device requests the URL percent-encoded (URL(string:)): a 404 here, the verdict line
                    // and the URL's warning, neither able to start a forged line.
                    let lines = run.stderr.split(separator: "\n")
                    #expect(lines.first?.hasPrefix("richpush: fallback [http-status]") == true, "\(run.stderr)")
                    #expect(
                        lines.dropFirst().allSatisfy {
                            $0.hasPrefix("  warning [url-encoded]") || $0.hasPrefix("  warning [url-needs-ios-17]")
                        }, "\(run.stderr)")
                    #expect(!run.stderr.contains("\r") && !run.stderr.contains("\u{1B}"))
                    #expect(!run.stderr.contains("\nrichpush: attached"))
                })
        case .stderrClosed:
            return Scenario(
                files: ["p.json": noAttachment], command: process + " p.json 2>&-", status: 0,
                reason: "no-attachment-requested")
        case .stderrFull:
            return Scenario(
                files: ["p.json": noAttachment], command: process + " p.json 2>/dev/full", status: 0,
                reason: "no-attachment-requested")
        case .brokenPipe:
            // The reader is gone before anything is written: stdout fails (74), stderr fails silently.
            return Scenario(
                files: ["p.json": noAttachment],
                command: "(sleep 0.5; cat p.json) | " + process + " - 2>&1 | head -c0; exit ${PIPESTATUS[1]}",
                status: 74, reason: nil)
        case .payloadAtLimitPlusNewline:
            return Scenario(
                files: ["p.json": payload(ofSize: 4096) + [0x0A]], command: process + " p.json", status: 0,
                reason: "no-attachment-requested")
        case .payloadOverLimit:
            return Scenario(
                files: ["p.json": payload(ofSize: 4097) + [0x0A]], command: process + " p.json", status: 65,
                reason: "payload-too-large")
        case .pathTraversalType:
            return Scenario(
                files: [
                    "p.json": Array(
                        #"{"aps":{"alert":"Hi","mutable-content":1},"ab":{"att":{"url":"https://cdn.example.com/hero.jpg","type":"../../../escape"}}}"#
                            .utf8)
                ],
                command: process + " p.json", status: 1, reason: "unsupported-type")
        case .composeFIFO:
            return Scenario(
                setup: "mkfifo r.json", command: #""$RP" compose r.json"#, status: 65, reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("not a regular file"), "\(run.stderr)")
                    #expect(run.stdout.isEmpty)
                })
        case .brazeRequestFIFO:
            return Scenario(
                setup: "mkfifo r.json", command: process + " --braze-request r.json", status: 65, reason: nil,
                check: { run, _ in #expect(run.stderr.contains("not a regular file"), "\(run.stderr)") })
        case .composeUsersFIFO:
            return Scenario(
                files: ["r.json": Array(#"{"alert":"Hi {{${first_name}}}"}"#.utf8)], setup: "mkfifo users.ndjson",
                command: #""$RP" compose --user users.ndjson r.json"#, status: 65, reason: nil,
                check: { run, _ in #expect(run.stderr.contains("not a regular file"), "\(run.stderr)") })
        case .composeDeepNesting:
            let depth = 1500
            return Scenario(
                files: [
                    "r.json": Array(
                        (#"{"broadcast":true,"messages":{"apple_push":{"alert":"x","extra":{"d":"#
                            + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}}}}").utf8
                    )
                ],
                command: #""$RP" compose --envelope r.json"#, status: 65, reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("nesting deeper than"), "\(run.stderr)")
                    #expect(run.stdout.contains(#""code":"invalid-json""#), "\(run.stdout)")
                })
        case .composeControlCharacters:
            // Terminal escapes and newlines in a request's fields stay escaped in every stderr line,
            // while stdout keeps them as JSON escapes.
            return Scenario(
                files: [
                    "r.json": Array(
                        #"{"broadcast":true,"messages":{"apple_push":{"alert":"\u001b[2J{% x %}\n","bogus\u001b]0;t\u0007":1}}}"#
                            .utf8)
                ],
                command: #""$RP" compose r.json"#, status: 0, reason: nil,
                check: { run, _ in
                    #expect(!run.stderr.contains("\u{1B}") && !run.stderr.contains("\u{07}"), "\(run.stderr)")
                    #expect(run.stderr.contains("warning [unknown-field]"), "\(run.stderr)")
                    #expect(run.stderr.contains("warning [liquid-unrendered]"), "\(run.stderr)")
                    #expect(run.stdout.contains(#""alert":"\u001b[2J{% x %}\n""#), "\(run.stdout)")
                })
        case .deepNesting:
            let depth = 1500
            return Scenario(
                files: [
                    "p.json": Array(
                        (#"{"aps":{"alert":"x","mutable-content":1},"d":"#
                            + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8)
                ],
                command: process + " p.json", status: 65, reason: "invalid-json")
        case .invalidUTF8:
            return Scenario(
                files: [
                    "p.json": Array(#"{"aps":{"alert":""#.utf8) + [0xFF, 0xFE] + Array(#"","mutable-content":1}}"#.utf8)
                ],
                command: process + " p.json", status: 65, reason: "invalid-json")
        case .stalePartBeforeFetch:
            // A stale FILE.part (the fixed name fetch -o used) must neither block nor redirect the download.
            return Scenario(
                setup: "echo stale > hero.jpg.part && echo keep > victim && ln -s victim .hero.jpg.part",
                command:
                    #""$RP" fetch https://cdn.example.com/hero.jpg --cacert "$CA" --connect-to "$MAP" -o hero.jpg"#,
                status: 0, reason: nil, allowedOutside: ["hero.jpg"],
                check: { _, parent in
                    let expected = FileManager.default.contents(atPath: Fixtures.assets + "/hero.jpg")
                    #expect(FileManager.default.contents(atPath: parent + "/hero.jpg") == expected)
                })
        case .stdoutFullAfterStore:
            // The payload cannot be delivered (exit 74): the attachment it names is taken back.
            return Scenario(
                files: ["p.json": hero], command: process + " p.json > /dev/full", status: 74, reason: nil,
                check: { run, parent in
                    #expect(Fixtures.files(in: parent + "/out").isEmpty, "\(Fixtures.files(in: parent + "/out"))")
                    #expect(run.stderr.contains("No space left on device"))
                })
        case .sniffFIFO:
            // A FIFO with no writer: opening it to read would wait forever.
            return Scenario(
                setup: "mkfifo f.jpg", command: #""$RP" sniff f.jpg"#, status: 65, reason: nil,
                check: { run, _ in #expect(run.stderr.contains("not a regular file"), "\(run.stderr)") })
        case .sniffDevice:
            // A device has no size and may never end: not "empty", not read.
            return Scenario(
                command: #""$RP" sniff /dev/zero"#, status: 65, reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("not a regular file"), "\(run.stderr)")
                    #expect(!run.stdout.contains("empty"))
                })
        case .stdoutClosed:
            // The payload asked for on stdout cannot be written: exit 74, not a silent success.
            return Scenario(
                files: ["p.json": noAttachment], command: process + " p.json >&-", status: 74, reason: nil,
                check: { run, _ in #expect(run.stderr.contains("Bad file descriptor"), "\(run.stderr)") })
        case .mergeOverflowingCounts:
            let count = String(Int.max - 5)
            return Scenario(
                files: ["a.json": summary(shard: 1, requested: count), "b.json": summary(shard: 2, requested: count)],
                command: #""$RP" report merge a.json b.json"#, status: 65, reason: nil,
                check: { run, _ in #expect(run.stderr.contains("adds up past"), "\(run.stderr)") })
        case .mergeFIFO:
            // A FIFO with no writer would block the merge forever: refused without reading.
            return Scenario(
                setup: "mkfifo a.json", command: #""$RP" report merge a.json"#, status: 65, reason: nil,
                check: { run, _ in #expect(run.stderr.contains("a.json"), "\(run.stderr)") })
        case .mergeNegativeCounts:
            return Scenario(
                files: ["a.json": summary(shard: 1, requested: "-3")], command: #""$RP" report merge a.json"#,
                status: 65, reason: nil,
                check: { run, _ in #expect(run.stderr.contains("cannot be negative"), "\(run.stderr)") })
        case .thresholdControlCharacters:
            // A terminal escape in a threshold is refused, and never echoed to the terminal.
            return Scenario(
                files: ["a.json": summary(shard: 1, requested: "3")],
                command: #""$RP" report merge a.json --threshold "$(printf 'display\033[2J>=9%')""#, status: 64,
                reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("names no metric"), "\(run.stderr)")
                    #expect(!run.stderr.contains("\u{1b}"), "\(run.stderr)")
                })
        case .startAtControlCharacters:
            // A terminal escape in --start-at is refused before any server or report, never echoed raw.
            return Scenario(
                command:
                    #""$RP" bench --url hero.jpg --devices 2 --json r.json --start-at "$(printf '1796148000\033[2J')""#,
                status: 64, reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("--start-at takes"), "\(run.stderr)")
                    #expect(!run.stderr.contains("\u{1b}"), "\(run.stderr)")
                })
        case .startAtBeyondTheClock:
            // Times past Int64 nanoseconds (the year 9999, 20 digits) are usage errors, not an overflow trap.
            return Scenario(
                command:
                    #"for t in 9999-12-31T23:59:59Z 99999999999999999999 9999999999.9; do "$RP" bench --url hero.jpg --devices 2 --start-at "$t" 2>> err.txt; echo "$?" >> status.txt; done; test "$(sort -u status.txt)" = 64"#,
                status: 0, reason: nil, allowedOutside: ["err.txt", "status.txt"],
                check: { _, parent in
                    let err = (try? String(contentsOfFile: parent + "/err.txt", encoding: .utf8)) ?? ""
                    #expect(err.components(separatedBy: "--start-at takes").count == 4, "\(err)")
                })
        case .thresholdHuge:
            return Scenario(
                files: ["a.json": summary(shard: 1, requested: "3")],
                command: #""$RP" report merge a.json --threshold "display>=$(head -c 100000 /dev/zero | tr '\0' 9)%""#,
                status: 64, reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("longer than 200"), "\(run.stderr)")
                    #expect(run.stderr.utf8.count < 2000, "the refusal does not repeat the whole text")
                })
        case .mergeSameSummaryTwice:
            // The same shard twice would double-count: refused, not merged.
            return Scenario(
                files: ["a.json": summary(shard: 1, requested: "3")], command: #""$RP" report merge a.json a.json"#,
                status: 65, reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("is shard 1 of 2 again"), "\(run.stderr)")
                    #expect(run.stdout.isEmpty)
                })
        case .mergeForeignIdentity:
            let identity = { (digest: String, shard: Int) in
                #", "identity": {"options_digest": "\#(digest)", "shard_count": 2, "runs": [{"id": "r\#(shard)", "shard": \#(shard)}]}"#
            }
            return Scenario(
                files: [
                    "a.json": summary(shard: 1, requested: "3", extra: identity("aaaa", 1)),
                    "b.json": summary(shard: 2, requested: "3", extra: identity("bbbb", 2)),
                ],
                command: #""$RP" report merge a.json b.json"#, status: 65, reason: nil,
                check: { run, _ in #expect(run.stderr.contains("comes from another run"), "\(run.stderr)") })
        case .plistBombServicePlist:
            return Scenario(
                files: ["p.json": noAttachment, "bomb.plist": bomb],
                command: capped + " process --out out --service-plist bomb.plist p.json", status: 65,
                allowedOutside: ["peak.txt"], check: refusedBomb("bomb.plist"))
        case .plistBombContentPlist:
            return Scenario(
                files: ["p.json": noAttachment, "bomb.plist": bomb],
                command: capped + " process --out out --content-plist bomb.plist p.json", status: 65,
                allowedOutside: ["peak.txt"], check: refusedBomb("bomb.plist"))
        case .plistBombVendoredInApp:
            // Deep in vendored code and in a dependency manager's folder: not the app's, never read.
            return Scenario(
                files: sampleApp([
                    "p.json": noAttachment, "app/Libraries/SDK/Examples/Demo/Resources/Info.plist": bomb,
                    "app/Pods/Tracker/Info.plist": bomb, "app/vendor/sdk/Info.plist": bomb,
                ]),
                command: capped + " process --out out --app app p.json", status: 0, reason: "no-attachment-requested",
                allowedOutside: ["peak.txt"], check: { _, parent in checkPeak(parent) })
        case .plistBombTargetInApp:
            // Where an extension's plist would be: read, through the bounded reader, and refused by name.
            return Scenario(
                files: sampleApp(["p.json": noAttachment, "app/Bomb/Info.plist": bomb]),
                command: capped + " process --out out --app app p.json", status: 65, allowedOutside: ["peak.txt"],
                check: refusedBomb("app/Bomb/Info.plist"))
        case .plistBombSuite:
            // An unusable suite is exit 65 (the analytics exit table), not 1 (a suite with defects).
            return Scenario(
                files: ["group/Library/Preferences/group.example.plist": bomb],
                command: capped + " analytics show --app-group group", status: 65,
                allowedOutside: ["peak.txt"], check: refusedBomb("group/Library/Preferences/group.example.plist"))
        case .plistStringBombServicePlist:
            // It aborted at 3.8 GB ("failed to allocate", 134) before strings were counted.
            return Scenario(
                files: [
                    "p.json": noAttachment,
                    "bomb.plist": stringBomb(key: "NSAppTransportSecurity", references: 90_000),
                ],
                command: capped + " process --out out --service-plist bomb.plist p.json", status: 65,
                allowedOutside: ["peak.txt"], check: refusedBomb("bomb.plist"))
        case .plistStringBombSuite:
            return Scenario(
                files: [
                    "group/Library/Preferences/group.example.plist":
                        stringBomb(key: "pending_custom_events", references: 400_000)
                ],
                command: capped + " analytics show --app-group group", status: 65,
                allowedOutside: ["peak.txt"], check: refusedBomb("group/Library/Preferences/group.example.plist"))
        case .plistFifoServicePlist:
            return Scenario(
                files: ["p.json": noAttachment], setup: "mkfifo service.plist",
                command: process + " --service-plist service.plist p.json", status: 65,
                check: { run, _ in
                    #expect(run.stderr.contains("service.plist is not a regular file"), "\(run.stderr)")
                    #expect(!run.stderr.contains("permission"))
                })
        case .tinyDescriptorLimit:
            return Scenario(
                files: ["p.json": noAttachment], command: "ulimit -n 10; " + process + " p.json", status: 69,
                reason: nil,
                check: { run, _ in
                    #expect(run.stderr.contains("too many open files"), "\(run.stderr)")
                    #expect(!run.stderr.contains("libcurl"))
                })
        }
    }

    /// A batch `summary.json` of shard `shard` of 2 with `requested` payloads, all attached.
    static func summary(shard: Int, requested: String, extra: String = "") -> [UInt8] {
        Array(
            """
            {"total": 1, "recorded": 1, "processed": 1, "skipped": 0, "interrupted": false,
             "verdicts": {"attached": \(requested)}, "reasons": {}, "requested": \(requested),
             "attached": \(requested), "display_rate": 1, "download_ms": {}, "elapsed_seconds": 1,
             "shards": [\(shard)], "shard_count": 2\(extra)}
            """.utf8)
    }

    /// The reason a run reported: in the payload on stdout, else the first `[reason]` on stderr.
    static func reason(of run: ShellRun) -> String? {
        if let json = try? JSONValue.parse(Array(run.stdout.utf8)),
            case .string(let reason) = json["richpush"]?["reason"]
        {
            return reason
        }
        guard let open = run.stderr.firstIndex(of: "["), let close = run.stderr[open...].firstIndex(of: "]") else {
            return nil
        }
        return String(run.stderr[run.stderr.index(after: open)..<close])
    }

    @Test(arguments: Case.allCases)
    func hostileInput(_ hostile: Case) async throws {
        let scenario = Self.scenario(hostile)
        let server = try Fixtures.startServer()
        let parent = try Fixtures.temporaryFolder("richpush-hostile")
        defer {
            server.stop()
            try? FileManager.default.removeItem(atPath: parent)
        }
        for (name, bytes) in scenario.files {
            let path = parent + "/" + name
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let environment = [
            "ASSETS": Fixtures.assets, "CA": Fixtures.caFile,
            "MAP": "cdn.example.com:443:127.0.0.1:\(server.httpsPort ?? 0)",
            "CAP": Sanitizer.isActive ? "" : "/usr/bin/prlimit --as=2147483648 --",
        ]
        if !scenario.setup.isEmpty {
            let setup = try await Shell.run(scenario.setup, in: parent, environment: environment)
            try #require(setup.status == 0, "setup: \(setup.stderr)")
        }
        let before = FolderSnapshot.take(parent)
        let run = try await Shell.run(scenario.command, in: parent, environment: environment)
        #expect(run.status == scenario.status, "\(hostile): \(run.stderr)")
        if let reason = scenario.reason { #expect(Self.reason(of: run) == reason, "\(run.stderr)") }
        let after = FolderSnapshot.take(parent)
        let outside = { (snapshot: [String: String]) in
            snapshot.filter {
                $0.key != "out" && !$0.key.hasPrefix("out/") && !scenario.allowedOutside.contains($0.key)
            }
        }
        #expect(outside(after) == outside(before), "nothing changes outside --out")
        #expect(!after.keys.contains { $0.hasPrefix("out/") && $0.hasSuffix(".part") }, "no temporary left")
        scenario.check?(run, parent)
    }
}
