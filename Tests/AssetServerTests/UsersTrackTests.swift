import AssetServer
import Foundation
import TestSupport
import Testing

/// `POST /users/track` of the embedded server: the key, the body checks, the limit, the log, the faults.
@Suite struct UsersTrackTests {
    static let key = "test-rest-key-7f3a"

    /// A started server with the endpoint, its log, and a folder to remove.
    struct Rig {
        let server: AssetServer
        let folder: String
        var log: String { folder + "/track.ndjson" }

        init(limit: Int = 100, windowSeconds: Int = 1) throws {
            folder = try Fixtures.temporaryFolder("richpush-track")
            server = try AssetServer(
                root: Fixtures.assets,
                usersTrack: UsersTrackOptions(
                    apiKey: UsersTrackTests.key, logPath: folder + "/track.ndjson", limit: limit,
                    windowSeconds: windowSeconds))
        }

        func stop() {
            server.stop()
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// The logged lines, decoded.
        func logged() throws -> [[String: Any]] {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return try text.split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
        }

        /// POSTs `body` to `/users/track` + `query`, with the key unless `key` is nil (`authorization`,
        /// when given, is the header's whole value, sent as is; `last` sends it as the last header).
        func post(
            _ body: String, query: String = "", key: String? = UsersTrackTests.key, authorization: String? = nil,
            last: Bool = false
        ) async throws -> RawResponse? {
            let port = server.httpPort
            return try await offThePool {
                let connection = try RawConnection(port: port)
                let value = authorization ?? key.map { "Bearer \($0)" }
                let auth = value.map { "Authorization: \($0)\r\n" } ?? ""
                let length = "Content-Length: \(body.utf8.count)\r\n"
                try connection.send(
                    "POST /users/track\(query) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                        + "Content-Type: application/json\r\n\(last ? length + auth : auth + length)\r\n\(body)")
                return RawHTTP.parse(connection.receive())
            }
        }
    }

    static func json(_ response: RawResponse?) throws -> [String: Any] {
        let response = try #require(response)
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    static let event = #"{"external_id":"u1","name":"opened","time":"2026-11-30T11:00:00.250Z","properties":{"n":1}}"#

    @Test func refusesAMissingOrWrongKey() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        let body = #"{"events":[\#(Self.event)]}"#
        #expect(try await rig.post(body, key: nil)?.status == 401)
        #expect(try await rig.post(body, key: "wrong")?.status == 401)
        #expect(try rig.logged().isEmpty, "nothing logged without the key")
    }

    /// The key is compared over the header's whole value, NUL bytes included: a NUL after the key does
    /// not end the value (it did, read as a C string).
    @Test func refusesTheKeyFollowedByANulAndMore() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        let body = #"{"events":[\#(Self.event)]}"#
        for value in ["Bearer \(Self.key)\u{0}anything", "Bearer \(Self.key)\u{0}", "Bearer \u{0}\(Self.key)"] {
            for last in [false, true] {
                let response = try await rig.post(body, authorization: value, last: last)
                #expect(response?.status == 401, "\(value.debugDescription), last header: \(last)")
            }
        }
        #expect(try rig.logged().isEmpty, "nothing logged for a key with a NUL")
        #expect(try await rig.post(body)?.status == 201, "the exact key is still accepted")
        #expect(try await rig.post(body, last: true)?.status == 201, "also as the last header")
    }

    @Test func processesValidObjectsAndReportsInvalidOnesWithoutFailing() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        let body = """
            {"events":[\(Self.event),
              {"external_id":"u1","name":7,"time":"2026-11-30T11:00:00Z"},
              {"name":"x","time":"2026-11-30T11:00:00Z"},
              {"external_id":"u1","braze_id":"b","name":"x","time":"2026-11-30T11:00:00Z"},
              {"external_id":"u1","name":"x","time":"yesterday"},
              {"external_id":"u1","name":"x","time":"2026-11-30T11:00:00Z","properties":[1]}],
             "attributes":[{"braze_id":"b1","tiers":["gold"],"vip":true},{"email":"a@b.c"},{"tier":"x"}]}
            """
        let response = try await rig.post(body)
        #expect(response?.status == 201)
        let answer = try Self.json(response)
        #expect(answer["message"] as? String == "success")
        #expect(answer["events_processed"] as? Int == 1)
        #expect(answer["attributes_processed"] as? Int == 2)
        let errors = try #require(answer["errors"] as? [[String: Any]])
        #expect(
            errors.map { "\($0["input_array"] ?? "")/\($0["index"] ?? "")" } == [
                "attributes/2", "events/1", "events/2", "events/3", "events/4", "events/5",
            ])
        let logged = try rig.logged()
        #expect(logged.count == 3)
        #expect(logged.filter { $0["array"] as? String == "events" }.count == 1)
        let attributes = logged.compactMap { $0["object"] as? [String: Any] }.filter { $0["braze_id"] != nil }
        #expect(attributes.first?["vip"] as? Bool == true, "JSON types survive into the log")
    }

    @Test func aMalformedBodyOrTooManyObjectsIsAFatal400() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        #expect(try await rig.post("not json")?.status == 400)
        #expect(try await rig.post("[]")?.status == 400)
        #expect(try await rig.post(#"{"events":{}}"#)?.status == 400)
        let many = Array(repeating: Self.event, count: 76).joined(separator: ",")
        let response = try await rig.post(#"{"events":[\#(many)]}"#)
        #expect(response?.status == 400)
        #expect((try Self.json(response)["errors"] as? [String])?.isEmpty == false)
        let exactly = Array(repeating: Self.event, count: 75).joined(separator: ",")
        #expect(try await rig.post(#"{"events":[\#(exactly)]}"#)?.status == 201)
        #expect(try rig.logged().count == 75, "only the request of 75 was logged")
    }

    @Test func overTheLimitIs429WithTheRateLimitHeaders() async throws {
        let rig = try Rig(limit: 2, windowSeconds: 3600)
        defer { rig.stop() }
        let body = #"{"events":[\#(Self.event)]}"#
        var statuses: [Int] = []
        var last: RawResponse?
        let before = Date().timeIntervalSince1970
        for _ in 0..<3 {
            last = try await rig.post(body)
            statuses.append(last?.status ?? 0)
        }
        #expect(statuses == [201, 201, 429])
        let headers = try #require(last?.headers)
        #expect(headers["x-ratelimit-limit"] == "2")
        #expect(headers["x-ratelimit-remaining"] == "0")
        let reset = try #require(headers["x-ratelimit-reset"].flatMap(Double.init))
        // The end of the window the last request fell in: after it was sent, at most a window after it was answered.
        #expect(reset > before && reset <= Date().timeIntervalSince1970 + 3600, "\(reset)")
        #expect(try rig.logged().count == 2)
    }

    @Test func faultModesApplyToTheEndpoint() async throws {
        let rig = try Rig()
        defer { rig.stop() }
        let body = #"{"events":[\#(Self.event)]}"#
        #expect(try await rig.post(body, query: "?status=500")?.status == 500)
        #expect(try await rig.post(body, query: "?status=429")?.headers["x-ratelimit-reset"] != nil)
        #expect(try rig.logged().isEmpty, "a status fault processes nothing")
        // A reset after processing: no answer, but the object was logged (the client cannot know).
        #expect(try await rig.post(body, query: "?reset=0") == nil)
        #expect(try rig.logged().count == 1)
        let started = ContinuousClock.now
        #expect(try await rig.post(body, query: "?delay=300")?.status == 201)
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        // A parameter no fault reads is ignored, as for assets: the object is processed.
        #expect(try await rig.post(body, query: "?bogus=1")?.status == 201)
        #expect(try rig.logged().count == 3)
    }
}
