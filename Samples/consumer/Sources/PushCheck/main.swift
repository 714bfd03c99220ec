// Runs one APNs payload through richpush's emulated service extension and prints the verdict.
//
//     swift run PushCheck payload.json [CA-FILE HOST:PORT:HOST2:PORT2]
//
// The optional CA file and host mapping point the download at a test server, as `--cacert` and
// `--connect-to` do on the command line. Exit status: 0 when the attachment would show.
import Foundation
import RichPush

let arguments = CommandLine.arguments.dropFirst()
guard let path = arguments.first, let payload = FileManager.default.contents(atPath: path) else {
    print("usage: PushCheck payload.json [CA-FILE HOST:PORT:HOST2:PORT2]")
    exit(64)
}

var policy = ExtensionPolicy()
policy.budget = .seconds(10)
if arguments.count == 3 {
    policy.fetch.caFile = arguments[arguments.startIndex + 1]
    policy.fetch.hostMappings = [try HostMapping(parsing: arguments[arguments.startIndex + 2])]
}

let result = try await ProcessSession.with(policy: policy, folder: "pushcheck-out") { session in
    await session.process(Array(payload))
}
let outcome = result.outcome
print("\(outcome.verdict) \(outcome.reason): \(outcome.message)")
exit(outcome.verdict == .attached ? 0 : 1)
