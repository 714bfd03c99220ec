import Foundation
import RichPush
import RichPushRuns
import Testing

/// The per-device log: one record per device, CSV or JSON lines by the file's extension.
@Suite struct DeviceLogTests {
    func device(url: String?) -> DeviceResult {
        var device = DeviceResult(
            verdict: .attached, reason: .ok, status: 200, bytes: 4207, dns: .microseconds(250),
            connect: .microseconds(1500), tls: .milliseconds(4), firstByte: .milliseconds(10),
            download: .milliseconds(20), scheduled: .milliseconds(100), started: .milliseconds(101),
            ended: .milliseconds(125), network: "3g")
        device.index = 7
        device.url = url
        device.cache = .hit
        device.httpVersion = "2"
        device.connectionsMade = 1
        return device
    }

    /// Writes `devices` through a log on a pipe-free temporary file and reads the file back.
    func written(_ format: DeviceLog.Format, _ devices: [DeviceResult]) throws -> String {
        let path = NSTemporaryDirectory() + "device-log-\(UUID().uuidString)"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        #expect(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        let log = DeviceLog(descriptor: descriptor, path: path, format: format)
        for device in devices { log.record(device) }
        try log.finish()
        #expect(log.records == devices.count)
        return String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }

    @Test func formatFollowsTheExtension() throws {
        #expect(try DeviceLog.Format(path: "run/devices.CSV") == .csv)
        #expect(try DeviceLog.Format(path: "devices.ndjson") == .ndjson)
        #expect(try DeviceLog.Format(path: "devices.jsonl") == .ndjson)
        #expect(throws: ConfigurationError.self) { try DeviceLog.Format(path: "devices.txt") }
    }

    @Test func csvHasAHeaderAndOneQuotedLinePerDevice() throws {
        let text = try written(.csv, [device(url: "https://cdn.example.com/a.jpg?x=1,2"), device(url: nil)])
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines[3].isEmpty)
        #expect(lines[0] == Substring(DeviceLog.columns.joined(separator: ",")))
        #expect(
            lines[1]
                == "7,\"https://cdn.example.com/a.jpg?x=1,2\",3g,100.000,101.000,125.000,0.250,1.500,4.000,10.000,"
                + "20.000,200,4207,2,hit,1,attached,ok")
        #expect(lines[2].hasPrefix("7,,3g,"))
    }

    @Test func ndjsonLinesAreJSONObjectsWithEveryKey() throws {
        var failed = device(url: "https://cdn.example.com/\"quoted\"\n.jpg")
        failed.verdict = .fallback
        failed.reason = .connectFailed
        failed.status = 0
        failed.firstByte = nil
        let text = try written(.ndjson, [failed])
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(Set(object.keys) == Set(DeviceLog.columns))
        #expect(object["url"] as? String == "https://cdn.example.com/\"quoted\"\n.jpg")
        #expect(object["status"] is NSNull && object["first_byte_ms"] is NSNull)
        #expect(object["reason"] as? String == "connect-failed")
        #expect((object["download_ms"] as? Double) == 20)
    }
}
