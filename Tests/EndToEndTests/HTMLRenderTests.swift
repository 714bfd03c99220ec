import Foundation
import TestSupport
import Testing

/// The bench's HTML report in a real browser (Debian's chromium, headless; CI installs it): the page
/// loads with no console error and renders at a phone's width and a desktop's.
@Suite struct HTMLRenderTests {
    static let chromium = "/usr/bin/chromium"

    /// The width and height a PNG's IHDR chunk gives.
    static func pngSize(_ path: String) throws -> (width: Int, height: Int) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard bytes.count > 24, bytes[1...3] == [0x50, 0x4E, 0x47][...] else { return (0, 0) }
        func number(_ offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (number(16), number(20))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: chromium)))
    func theReportRendersWithoutAConsoleErrorAtTwoWidths() async throws {
        let folder = try Fixtures.temporaryFolder("richpush-html-render")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bench = try await RichPushBinary.run(
            [
                "bench", "--serve", Fixtures.assets, "-n", "60", "--ramp", "1s", "--ios-mix", "17=50,16=50",
                "--html", folder + "/report.html", "--no-progress",
            ], directory: Fixtures.root)
        #expect(bench.status == 0, "\(bench.stderr)")
        for (width, height) in [(420, 900), (1280, 900)] {
            let shot = folder + "/shot-\(width).png"
            let run = try await ChildProcess.run(
                "/usr/bin/timeout",
                [
                    "120", Self.chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--user-data-dir=" + folder + "/profile", "--enable-logging=stderr", "--v=0",
                    "--window-size=\(width),\(height)", "--screenshot=" + shot, "file://" + folder + "/report.html",
                ])
            #expect(run.status == 0, "chromium at \(width): \(run.stderr.suffix(2000))")
            // What the page logs to the console reaches stderr as CONSOLE lines: none may be an error.
            let console = run.stderr.split(separator: "\n").filter { $0.contains("CONSOLE") }
            #expect(
                !console.contains { $0.contains("Uncaught") || $0.contains("ERROR") || $0.contains("Failed") },
                "\(console)")
            let size = try Self.pngSize(shot)
            #expect(size.width == width && size.height == height, "the screenshot at \(width): \(size)")
        }
    }
}
