import RichPush

/// A send request for `compose`, as each platform's body, through the API's and the dashboard's limits,
/// and the same bytes as Liquid text and as a `--user` file.
///
/// - Nothing traps. A composed push's bytes are its payload's compact JSON, which parses back to the
///   same value: an object with `aps` (and, for Braze, `ab` with `c`), within Braze's 1,912 bytes for an
///   API send, that the inspector reads without calling it malformed; its push type is alert or background,
///   and every rule it names is in the rule table.
/// - A Braze refusal with a status is a 400 with Braze's words; OneSignal's and Airship's have no status.
/// - Liquid leaves text without `{{` or `{%` alone, and renders nothing without a user.
enum ComposeInvariants {
    /// Made per input, not a global: a lazily made global's boxes count as leaked under libFuzzer's leak check.
    static var user: JSONValue {
        .object([("first_name", .string("Ada")), ("custom_attributes", .object([("tier", .string("gold"))]))])
    }

    static func check(_ bytes: [UInt8]) {
        let ruleIDs = Set(ComposeRule.all.map(\.id))
        let user = user
        for dialect in ComposeDialect.allCases {
            for dashboard in [false, true] where dialect == .braze || !dashboard {
                let options = ComposeOptions(dialect: dialect, dashboard: dashboard)
                for user in [nil, user] where dialect == .braze || user == nil {
                    switch Composer.compose(bytes, options: options, user: user) {
                    case .success(let push): checkPush(push, dialect: dialect, dashboard: dashboard, rules: ruleIDs)
                    case .failure(let refusal):
                        if dialect == .braze, let status = refusal.status {
                            require(status == 400 && refusal.brazeMessage != nil, "refusal \(refusal.line)")
                        } else if dialect != .braze {
                            require(refusal.status == nil, "\(dialect) refusal with a status: \(refusal.line)")
                        }
                        require((try? JSONValue.parse(refusal.json.utf8)) == refusal.json, "refusal JSON")
                    }
                }
            }
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let context = Liquid.Context(user: user)
        let (rendered, notes) = Liquid.render(text, context: context)
        if !Liquid.holdsLiquid(text) { require(rendered == text && !notes.holdsLiquid, "Liquid changed plain text") }
        require(Liquid.render(text, context: nil).0 == text, "Liquid rendered without a user")
        if case .success(let users) = Composer.users(bytes) {
            require(!users.isEmpty && users.allSatisfy { if case .object = $0 { true } else { false } }, "users")
        }
    }

    static func checkPush(_ push: ComposedPush, dialect: ComposeDialect, dashboard: Bool, rules: Set<String>) {
        require(push.bytes == push.payload.utf8, "bytes are not the payload's compact JSON")
        require((try? JSONValue.parse(push.bytes)) == push.payload, "the payload does not parse back")
        require(push.payload["aps"] != nil, "no aps: \(push.payload.text)")
        if dialect == .braze {
            require(push.payload["ab"]?["c"] != nil, "no ab.c: \(push.payload.text)")
            if !dashboard { require(push.bytes.count <= 1912, "\(push.bytes.count) bytes passed the API limit") }
        }
        require([.alert, .background].contains(push.headers.pushType), "push type \(push.headers.pushType)")
        require(push.rules.allSatisfy(rules.contains), "unknown rule in \(push.rules)")
        require((try? JSONValue.parse(push.envelope().utf8)) != nil, "envelope is not JSON")
        if case .decided(let outcome, _) = PayloadInspector.inspect(push.bytes, pushType: push.headers.pushType) {
            require(
                ![ReasonCode.invalidJSON, .notAnObject, .apsMissing, .apsNotAnObject].contains(outcome.reason),
                "the inspector calls a composed payload \(outcome.reason): \(push.payload.text)")
        }
    }
}
