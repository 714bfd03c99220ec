import CAssetServerShim
import Foundation

/// The push SDKs' own calls, answered as a mock endpoint: Customer.io's delivery metric
/// (`POST /v1/track`), OneSignal's receipt (`PUT /notifications/{id}/report_received`) and
/// CleverTap's Notification Viewed (`POST /a1?os=iOS&t=REV&z=ACCOUNT&ts=EPOCH`: those four query
/// parameters are CleverTap's own and are not read as faults).
///
/// The body is read and dropped; the answer is `{"success":true}`. The query's faults apply:
/// `status=CODE` answers that status, `delay=MS` holds the answer, `reset=0` resets the connection,
/// `every=K` applies them to every K-th request (`--sdk-endpoint 'https://host/?delay=3000'`).
package enum SDKEndpoint {
    /// Whether `path` is an SDK call this server answers.
    package static func answers(_ path: String) -> Bool {
        path == "/v1/track" || path == "/a1"
            || (path.hasPrefix("/notifications/") && path.hasSuffix("/report_received"))
    }

    /// The query parameters an SDK's own request carries on `path`, which are not faults.
    static func ownParameters(of path: String) -> Set<String> {
        path == "/a1" ? ["os", "t", "z", "ts"] : []
    }
}

func handleSDKEndpoint(
    _ connection: OpaquePointer, path: String, record: RequestRecord, state: ServerState, socket: Int32,
    uploadSize: UnsafeMutablePointer<Int>?
) -> MHD_Result {
    if let uploadSize, uploadSize.pointee > 0 {
        uploadSize.pointee = 0
        return .YES
    }
    if record.plan == nil {
        do {
            let own = SDKEndpoint.ownParameters(of: path)
            record.plan = try FaultPlan(
                query: queryArguments(of: connection).filter { !own.contains($0.0) }, strict: state.strictFaults
            )
            .applying(toRequest: record.sequence)
        } catch {
            return respond(connection, record, status: 400, body: Array(error.description.utf8), type: "text/plain")
        }
        guard record.method == "POST" || record.method == "PUT" else {
            return respond(
                connection, record, status: 405, body: Array("SDK calls take POST or PUT".utf8), type: "text/plain")
        }
        if let delay = record.plan?.delayMilliseconds, delay > 0 { record.delayUntil = .now + .milliseconds(delay) }
    }
    if let until = record.delayUntil {
        if state.isStopping { return .NO }
        if ContinuousClock.now < until {
            if rp_socket_peer_gone(socket) != 0 { return .NO }
            return state.suspensions.suspend(connection, socket: socket, until: until) ? .YES : .NO
        }
        record.delayUntil = nil
    }
    if record.plan?.resetAt != nil {
        _ = rp_socket_reset(socket)
        return .NO
    }
    let status = record.plan?.status ?? 200
    let body = (200..<300).contains(status) ? #"{"success":true}"# : #"{"errors":["fault status"]}"#
    return respond(connection, record, status: status, body: Array(body.utf8), type: "application/json")
}
