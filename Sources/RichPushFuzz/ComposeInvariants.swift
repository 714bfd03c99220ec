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
/// - Liquid products (a few tags times a long value): rendering stops once it passes the limit, having
///   copied no more than the limit and reached no further than one piece past it; and the limit never
///   changes a push that composes without it (nor composes one that does not).
enum ComposeInvariants {
    /// Made per input, not a global: a lazily made global's boxes count as leaked under libFuzzer's leak check.
    static var user: JSONValue {
        .object([("first_name", .string("Ada")), ("custom_attributes", .object([("tier", .string("gold"))]))])
    }

    /// The longest value ``longUser`` holds.
    static let longValue = 2000

    /// A user whose values multiply past the limit in a few tags: Liquid's products.
    static var longUser: JSONValue {
        .object([
            ("first_name", .string(String(repeating: "N", count: longValue))),
            ("custom_attributes", .object([("tier", .string(String(repeating: "g", count: 700)))])),
            ("campaign", .object([("name", .string(String(repeating: "c", count: 300)))])),
        ])
    }

    static func check(_ bytes: [UInt8]) {
        let ruleIDs = Set(ComposeRule.all.map(\.id))
        let user = user
        let longUser = longUser
        for dialect in ComposeDialect.allCases {
            for dashboard in [false, true] where dialect == .braze || !dashboard {
                let options = ComposeOptions(dialect: dialect, dashboard: dashboard)
                if dialect == .braze, case .success(let request) = Composer.read(bytes, options: options) {
                    for user in [user, longUser] { checkLimit(request, user: user, dashboard: dashboard) }
                }
                for user in [nil, user, longUser] where dialect == .braze || user == nil {
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
        checkBudget(text, user: longUser)
        if case .success(let users) = Composer.users(bytes) {
            require(!users.isEmpty && users.allSatisfy { if case .object = $0 { true } else { false } }, "users")
        }
    }

    /// The rendering limit changes only what it must: a push that composes without it composes the
    /// same with it, and what the limit refuses is refused without it too (for an API send).
    static func checkLimit(_ request: Composer.Request, user: JSONValue, dashboard: Bool) {
        let limited = Composer.compose(request, user: user)
        let whole = Composer.composeRenderingWhole(request, user: user)
        if case .success = limited { require(limited == whole, "the limit changed a push: \(whole) to \(limited)") }
        // A dashboard "$json:" text is charged as rendered, a little more than the compact JSON sent.
        if case .success(let push) = whole, push.bytes.count <= (dashboard ? 4096 : 1912),
            !push.rules.contains("dashboard-json")
        {
            require(limited == whole, "the limit refused a push of \(push.bytes.count) bytes: \(limited)")
        }
        if !dashboard, case .failure(let refusal) = limited, refusal.detail.contains("rendering stopped") {
            require((try? whole.get()) == nil, "the limit refused a push that composes: \(refusal.line)")
        }
    }

    /// Rendering `text` for ``longUser`` against Braze's 1,912 bytes: the same text and notes as without
    /// a limit when it fits; otherwise it stops having copied at most the limit, one piece past it, and
    /// evaluated no tag twice.
    static func checkBudget(_ text: String, user: JSONValue) {
        let template = Liquid.Template(text)
        let context = Liquid.Context(user: user)
        var renderer = Liquid.Renderer(context: context)
        var budget = Liquid.Budget(limit: 1912)
        var notes = Liquid.Notes()
        do throws(Liquid.Interruption) {
            let rendered = try renderer.render(template, field: "text", budget: &budget, notes: &notes)
            let (whole, wholeNotes) = Liquid.render(text, context: context)
            require(rendered == whole && notes == wholeNotes, "the budget changed a rendering that fits")
        } catch {
            guard case .pastLimit(_, let reached, let limit, _) = error else {
                return require(false, "a rendering that does not look for cancellation was cancelled")
            }
            require(renderer.written <= limit && reached > limit, "stopped at \(renderer.written) of \(limit) bytes")
            let piece = max(longValue, text.utf8.count)
            require(reached - renderer.written <= piece, "stopped \(reached - renderer.written) bytes past the limit")
        }
        require(renderer.evaluations <= template.tags, "\(renderer.evaluations) evaluations of \(template.tags) tags")
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
