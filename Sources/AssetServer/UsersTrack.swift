import Foundation
import POSIXKit
import Synchronization

/// How the server answers `POST /users/track` like Braze's REST API, for flush tests and demos.
///
/// ```swift
/// let track = UsersTrackOptions(apiKey: "test-key", logPath: "/tmp/track.ndjson")
/// let server = try AssetServer(root: "Samples/assets", usersTrack: track)
/// ```
package struct UsersTrackOptions: Sendable {
    /// The REST API key the `Authorization: Bearer` header must carry.
    package var apiKey: String
    /// Every accepted object is appended here as one JSON line (`nil`: not logged).
    package var logPath: String?
    /// Requests accepted per window; more get 429 with the rate-limit headers.
    package var limit: Int
    /// The window, in whole seconds, aligned to the epoch (so `X-RateLimit-Reset` is a window's end).
    package var windowSeconds: Int

    package init(apiKey: String, logPath: String? = nil, limit: Int = 20, windowSeconds: Int = 1) {
        self.apiKey = apiKey
        self.logPath = logPath
        self.limit = limit
        self.windowSeconds = windowSeconds
    }
}

/// An answer of the endpoint: status, JSON body, extra headers.
struct UsersTrackAnswer: Sendable {
    var status: Int
    /// The JSON body, encoded.
    var bytes: [UInt8]
    var headers: [(String, String)] = []

    init(status: Int, body: [String: Any]) {
        self.status = status
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data("{}".utf8)
        bytes = [UInt8](data)
    }

    static func fatal(_ status: Int, _ message: String, errors: [String] = []) -> UsersTrackAnswer {
        UsersTrackAnswer(
            status: status, body: errors.isEmpty ? ["message": message] : ["message": message, "errors": errors])
    }
}

/// The endpoint's state shared by every request: the key, the rate window and the NDJSON log.
final class UsersTrackService: Sendable {
    let options: UsersTrackOptions
    private let window = Mutex<(start: Int, count: Int)>((0, 0))
    /// The log's descriptor, written under the lock one request at a time (-1: no log).
    private let log: Mutex<Int32>

    init(_ options: UsersTrackOptions) throws(AssetServerError) {
        self.options = options
        var descriptor: Int32 = -1
        if let path = options.logPath {
            do {
                descriptor = try SystemCall.open(
                    path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode: 0o600,
                    operation: "open the track log")
            } catch {
                throw AssetServerError.start(error)
            }
        }
        log = Mutex(descriptor)
    }

    deinit {
        log.withLock { descriptor in if descriptor >= 0 { close(descriptor) } }
    }

    /// The rate-limit headers for a window: limit, what is left, and the window's end (epoch seconds).
    private func rateHeaders(remaining: Int, reset: Int) -> [(String, String)] {
        [
            ("X-RateLimit-Limit", String(options.limit)), ("X-RateLimit-Remaining", String(max(0, remaining))),
            ("X-RateLimit-Reset", String(reset)),
        ]
    }

    /// Counts a request in the current window; the headers to send, and whether it is over the limit.
    func admit(now: Date = Date()) -> (headers: [(String, String)], limited: Bool) {
        let seconds = max(1, options.windowSeconds)
        let start = Int(now.timeIntervalSince1970) / seconds * seconds
        let count = window.withLock { window -> Int in
            if window.start != start { window = (start, 0) }
            window.count += 1
            return window.count
        }
        return (rateHeaders(remaining: options.limit - count, reset: start + seconds), count > options.limit)
    }

    /// The answer a `status=` fault asks for: nothing processed.
    func faultAnswer(_ status: Int) -> UsersTrackAnswer {
        var answer = UsersTrackAnswer.fatal(status, "status=\(status) was requested (nothing was processed)")
        if status == 429 {
            let seconds = max(1, options.windowSeconds)
            let reset = Int(Date().timeIntervalSince1970) / seconds * seconds + seconds
            answer.headers = rateHeaders(remaining: 0, reset: reset)
        }
        return answer
    }

    /// Checks the key and the limit, validates the body, logs what was accepted and builds the answer.
    ///
    /// `authorization` is the header's value as sent, every byte of it (a NUL does not end it).
    func handle(body: [UInt8], bodyTooLarge: Bool, authorization: [UInt8]?, sequence: Int) -> UsersTrackAnswer {
        let scheme = Array("Bearer ".utf8)
        guard let authorization, authorization.starts(with: scheme),
            Self.sameKey(Array(authorization.dropFirst(scheme.count)), Array(options.apiKey.utf8))
        else {
            return .fatal(401, "Invalid API key: give 'Authorization: Bearer <REST API key>'")
        }
        let (headers, limited) = admit()
        guard !limited else {
            var answer = UsersTrackAnswer.fatal(429, "Rate limit exceeded: \(options.limit) requests per window")
            answer.headers = headers
            return answer
        }
        guard !bodyTooLarge else {
            var answer = UsersTrackAnswer.fatal(413, "Request body too large (at most 4 MiB)")
            answer.headers = headers
            return answer
        }
        var answer: UsersTrackAnswer
        switch UsersTrackValidation.validate(body) {
        case .failure(let failure):
            answer = .fatal(400, failure.message, errors: failure.errors)
        case .success(let result):
            if !appendToLog(result.accepted, sequence: sequence) {
                answer = .fatal(500, "cannot write the track log; nothing was processed")
            } else {
                var json: [String: Any] = [
                    "message": "success", "events_processed": result.counts["events"] ?? 0,
                    "attributes_processed": result.counts["attributes"] ?? 0,
                ]
                if let purchases = result.counts["purchases"] { json["purchases_processed"] = purchases }
                if !result.errors.isEmpty { json["errors"] = result.errors }
                answer = UsersTrackAnswer(status: 201, body: json)
            }
        }
        answer.headers += headers
        return answer
    }

    /// Appends one line per accepted object, in one write(2); false when the log cannot take them.
    private func appendToLog(_ accepted: [(array: String, object: Any)], sequence: Int) -> Bool {
        log.withLock { descriptor in
            guard descriptor >= 0, !accepted.isEmpty else { return true }
            var bytes: [UInt8] = []
            for (array, object) in accepted {
                let line: [String: Any] = ["request": sequence, "array": array, "object": object]
                guard let data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) else {
                    return false
                }
                bytes += data
                bytes.append(0x0a)
            }
            return (try? SystemCall.writeAll(descriptor, bytes)) != nil
        }
    }

    /// Compares keys without an early exit, so timing says nothing about how much matched.
    static func sameKey(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = a.count ^ b.count
        for index in 0..<max(a.count, b.count) {
            difference |= Int((index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0))
        }
        return difference == 0
    }
}

/// The body checks of `/users/track`, as Braze documents them.
enum UsersTrackValidation {
    struct Failure: Error {
        var message: String
        var errors: [String] = []
    }

    struct Result {
        var accepted: [(array: String, object: Any)] = []
        var counts: [String: Int] = [:]
        var errors: [[String: Any]] = []
    }

    /// Objects per array at most.
    static let limit = 75

    static func validate(_ body: [UInt8]) -> Swift.Result<Result, Failure> {
        guard let value = try? JSONSerialization.jsonObject(with: Data(body)), let root = value as? [String: Any]
        else {
            return .failure(Failure(message: "Invalid JSON: the body must be a JSON object"))
        }
        let arrays = ["attributes", "events", "purchases"].filter { root[$0] != nil }
        guard !arrays.isEmpty else {
            return .failure(Failure(message: "The body has no attributes, events or purchases"))
        }
        var result = Result()
        for name in arrays {
            guard let list = root[name] as? [Any] else {
                return .failure(Failure(message: "'\(name)' must be an array"))
            }
            guard list.count <= limit else {
                return .failure(
                    Failure(
                        message: "Too many \(name) in one request: \(list.count) (at most \(limit))",
                        errors: ["\(name): at most \(limit) objects per request"]))
            }
            var processed = 0
            for (index, element) in list.enumerated() {
                if let problem = check(element, array: name) {
                    result.errors.append(["type": problem, "input_array": name, "index": index])
                } else {
                    result.accepted.append((name, element))
                    processed += 1
                }
            }
            result.counts[name] = processed
        }
        return .success(result)
    }

    /// What is wrong with one object, or nil.
    static func check(_ element: Any, array: String) -> String? {
        guard let object = element as? [String: Any] else { return "\(array) objects must be JSON objects" }
        if let problem = identifierProblem(object) { return problem }
        switch array {
        case "events":
            guard let name = object["name"] as? String, !name.isEmpty else {
                return "event name must be a non-empty string"
            }
            if let problem = timeProblem(object["time"]) { return problem }
            if let properties = object["properties"], !(properties is [String: Any]) {
                return "event properties must be a JSON object"
            }
        case "purchases":
            guard object["product_id"] is String else { return "purchase product_id must be a string" }
            if let problem = timeProblem(object["time"]) { return problem }
        default:
            if object.keys.contains(where: \.isEmpty) { return "attribute names must not be empty" }
        }
        return nil
    }

    private static func identifierProblem(_ object: [String: Any]) -> String? {
        let strong = ["external_id", "user_alias", "braze_id"].filter { object[$0] != nil }
        if strong.count > 1 { return "more than one identifier (\(strong.joined(separator: ", ")))" }
        if let key = strong.first {
            if key == "user_alias" {
                guard let alias = object[key] as? [String: Any], alias["alias_name"] is String,
                    alias["alias_label"] is String
                else { return "user_alias must be an object with alias_name and alias_label" }
                return nil
            }
            guard let text = object[key] as? String, !text.isEmpty else { return "\(key) must be a non-empty string" }
            return nil
        }
        for key in ["email", "phone"] where object[key] != nil {
            guard let text = object[key] as? String, !text.isEmpty else { return "\(key) must be a non-empty string" }
            return nil
        }
        return "no identifier: give one of external_id, user_alias, braze_id, email, phone"
    }

    private static func timeProblem(_ value: Any?) -> String? {
        guard let text = value as? String else { return "time must be an ISO 8601 string" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if formatter.date(from: text) != nil { return nil }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text) == nil ? "time '\(text.prefix(40))' is not ISO 8601" : nil
    }
}
