import CAssetServerShim
import Foundation

/// What the server keeps for one `/users/track` request between libmicrohttpd's calls: the body as
/// it arrives, then the answer while a `delay=` fault holds it.
final class UsersTrackRequest: @unchecked Sendable {  // Touched by its connection's thread only, like RequestRecord.
    var body: [UInt8] = []
    var tooLarge = false
    var answer: UsersTrackAnswer?
    /// A `reset=` fault: the request is processed, then the connection is reset instead of answered.
    var resetInsteadOfAnswer = false

    /// The largest body read (75 objects of each kind fit many times over).
    static let maximumBody = 4 << 20
}

/// Handles every call for a `/users/track` request: collects the body, then processes it once,
/// applies the faults of the query (`status=`, `delay=`, `reset=`, `every=`), and answers.
///
/// A `delay=` or `reset=` fault takes effect after the body was processed and logged, as an answer
/// lost on the way back would: the client cannot tell whether its items arrived.
func handleUsersTrack(
    _ connection: OpaquePointer, record: RequestRecord, state: ServerState, service: UsersTrackService,
    socket: Int32, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?,
    uploadSize: UnsafeMutablePointer<Int>?
) -> MHD_Result {
    guard let track = record.usersTrack else { return .NO }
    if let uploadSize, uploadSize.pointee > 0 {
        if let uploadData, !track.tooLarge {
            if track.body.count + uploadSize.pointee > UsersTrackRequest.maximumBody {
                track.tooLarge = true
                track.body = []
            } else {
                track.body += UnsafeRawBufferPointer(start: uploadData, count: uploadSize.pointee)
            }
        }
        uploadSize.pointee = 0
        return .YES
    }
    if track.answer == nil {
        let plan: FaultPlan
        do {
            plan = try FaultPlan(query: queryArguments(of: connection), strict: state.strictFaults)
                .applying(toRequest: record.sequence)
        } catch {
            return answerUsersTrack(connection, record, .fatal(400, error.description))
        }
        guard record.method == "POST" else {
            return answerUsersTrack(connection, record, .fatal(405, "/users/track takes POST only"))
        }
        if let status = plan.status, !(200..<300).contains(status) {
            track.answer = service.faultAnswer(status)
        } else {
            track.answer = service.handle(
                body: track.body, bodyTooLarge: track.tooLarge,
                authorization: headerValue(of: connection, named: "Authorization", method: method, version: version),
                sequence: record.sequence)
        }
        track.body = []
        track.resetInsteadOfAnswer = plan.resetAt != nil
        if plan.delayMilliseconds > 0 { record.delayUntil = .now + .milliseconds(plan.delayMilliseconds) }
    }
    if let until = record.delayUntil {
        if state.isStopping { return .NO }
        if ContinuousClock.now < until {
            if rp_socket_peer_gone(socket) != 0 { return .NO }
            return state.suspensions.suspend(connection, socket: socket, until: until) ? .YES : .NO
        }
        record.delayUntil = nil
    }
    if track.resetInsteadOfAnswer {
        _ = rp_socket_reset(socket)
        return .NO
    }
    guard let answer = track.answer else { return .NO }
    return answerUsersTrack(connection, record, answer)
}

/// The value of the request header `name` as the client sent it, or nil when the request has none.
///
/// libmicrohttpd reads a header value as a C string, so a NUL byte in it hides what follows (`Bearer
/// KEY\0anything` reads as `Bearer KEY`): such a value is returned up to and including its first NUL,
/// which no key matches.
private func headerValue(
    of connection: OpaquePointer, named name: String, method: UnsafePointer<CChar>?,
    version: UnsafePointer<CChar>?
) -> [UInt8]? {
    var value: UnsafePointer<CChar>?
    var length = 0
    let whole = rp_mhd_header_value(connection, method, version, name, &value, &length)
    guard whole >= 0, let value else { return nil }
    let bytes = Array(UnsafeRawBufferPointer(start: value, count: length))
    return whole == 1 ? bytes : bytes + [0]
}

private func answerUsersTrack(_ connection: OpaquePointer, _ record: RequestRecord, _ answer: UsersTrackAnswer)
    -> MHD_Result
{
    let body = answer.bytes
    let response = body.withUnsafeBytes { rp_mhd_response_copy($0.baseAddress, $0.count) }
    guard let response else { return .NO }
    defer { MHD_destroy_response(response) }
    MHD_add_response_header(response, "Content-Type", "application/json")
    MHD_add_response_header(response, "Cache-Control", "no-store")
    for (name, value) in answer.headers { MHD_add_response_header(response, name, value) }
    record.status = answer.status
    record.bufferedBytes = UInt64(body.count)
    return MHD_queue_response(connection, UInt32(answer.status), response)
}
