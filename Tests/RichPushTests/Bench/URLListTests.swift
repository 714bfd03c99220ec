import Foundation
import RichPush
import RichPushRuns
import TestSupport
import Testing

/// URL lists: the file's syntax, its mistakes by line, and how entries share the devices.
@Suite struct URLListTests {
    init() { useCommandLineSpelling() }

    let text = """
        # two variants, 3:1, and a personalised one
        https://cdn.example.com/a.jpg 3

        https://cdn.example.com/b.jpg\t1
        https://cdn.example.com/c.jpg?u={device}
        """

    @Test func readsURLsWeightsAndComments() throws {
        let list = try URLList(parsing: text, file: "urls.txt")
        #expect(
            list.entries.map(\.template.text) == [
                "https://cdn.example.com/a.jpg", "https://cdn.example.com/b.jpg",
                "https://cdn.example.com/c.jpg?u={device}",
            ])
        #expect(list.entries.map(\.weight) == [3, 1, 1])
        #expect(list.entries.map(\.line) == [2, 4, 5])
        #expect(list.totalWeight == 5)
        #expect(list.hasTemplates)
    }

    @Test func entriesShareTheDevicesByWeightInEveryStretchOfTheSchedule() throws {
        let list = try URLList(parsing: text, file: "urls.txt", seed: 9)
        var counts = [0, 0, 0]
        for device in 0..<10_000 { counts[list.entry(of: device)] += 1 }
        // The golden-ratio sequence is within a few devices of the exact shares (6000, 2000, 2000).
        #expect(abs(counts[0] - 6000) <= 20 && abs(counts[1] - 2000) <= 20 && abs(counts[2] - 2000) <= 20)
        // The first 20 arrivals of a ramp already see every entry.
        #expect(Set((0..<20).map(list.entry(of:))) == [0, 1, 2])
        // The same device, the same entry, whichever shard runs it.
        #expect(
            (0..<100).map(list.entry(of:)) == (0..<100).map(try URLList(parsing: text, file: "x", seed: 9).entry(of:)))
    }

    @Test(arguments: [
        ("https://cdn.example.com/a.jpg 0", "line 1"), ("https://cdn.example.com/a.jpg 2000000", "line 1"),
        ("https://cdn.example.com/a.jpg x", "weight"), ("\n\nhttps://cdn.example.com/a.jpg 1 2", "line 3"),
        ("https://cdn.example.com/{id}.jpg", "line 1"), ("# only a comment\n", "holds no URL"),
    ])
    func namesTheLineOfAMistake(_ input: String, _ expected: String) {
        do {
            _ = try URLList(parsing: input, file: "urls.txt")
            Issue.record("accepted \(input)")
        } catch {
            #expect(error.text.contains(expected), "\(error.text)")
            #expect(error.setting == .urls)
        }
    }

    /// A list saved on Windows (CRLF) or an old Mac (CR) reads as the same list written with LF.
    @Test(arguments: ["\r\n", "\r"])
    func readsEveryLineEnding(_ ending: String) throws {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let list = try URLList(parsing: lines.joined(separator: ending) + ending, file: "urls.txt")
        let unix = try URLList(parsing: text, file: "urls.txt")
        #expect(list.entries == unix.entries)
    }

    /// A line past the limit is refused by its number as soon as it is, even when it never ends: the
    /// file is read a block at a time, not whole.
    @Test func refusesALineLongerThanAServerAcceptsWhileReadingIt() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/urls.txt"
        var bytes = Array("https://cdn.example.com/a.jpg\r\nhttps://cdn.example.com/".utf8)
        bytes += [UInt8](repeating: UInt8(ascii: "a"), count: 32 << 20)
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        #expect {
            _ = try URLList.read(path)
        } throws: { error in
            "\(error)".contains("line 2 is longer than \(URLList.maxLineBytes) bytes")
        }
        let longest = "https://cdn.example.com/" + String(repeating: "a", count: URLList.maxLineBytes - 24)
        _ = FileManager.default.createFile(atPath: path, contents: Data((longest + "\r\n").utf8))
        #expect(try URLList.read(path).entries.map(\.template.text) == [longest])
    }

    @Test func refusesAListThatIsNotARegularFile() throws {
        let folder = try Fixtures.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(mkfifo(folder + "/urls.fifo", 0o600) == 0)
        #expect {
            _ = try URLList.read(folder + "/urls.fifo")
        } throws: { error in
            "\(error)".contains("not a regular file")
        }
    }

    @Test func oneEntryTakesEveryDevice() throws {
        let list = try URLList(single: "https://cdn.example.com/hero.jpg?v={random}")
        #expect((0..<50).allSatisfy { list.entry(of: $0) == 0 })
    }
}
