import Testing

@testable import RichPush

/// Liquid renders against Braze's size limit: a short template and a long value cost no more than
/// the limit, the refusal is the size check's, and a cancelled task stops a rendering.
@Suite struct LiquidBudgetTests {
    static let tag = "{{${first_name}}}"

    static func user(firstName length: Int) -> JSONValue {
        .object([("first_name", .string(String(repeating: "N", count: length)))])
    }

    static func request(_ applePush: String, dashboard: Bool = false) throws -> Composer.Request {
        try Composer.read(
            Array(#"{"broadcast":true,"messages":{"apple_push":\#(applePush)}}"#.utf8),
            options: ComposeOptions(dashboard: dashboard)
        ).get()
    }

    static func titled(tags: Int) throws -> Composer.Request {
        try request(#"{"alert":{"title":"\#(String(repeating: tag, count: tags))"}}"#)
    }

    static func refusal(_ request: Composer.Request, user: JSONValue) -> ComposeRefusal? {
        if case .failure(let refusal) = Composer.compose(request, user: user) { return refusal }
        return nil
    }

    /// The tracker's shape: a title of 4,000 `{{${first_name}}}` tags (68 KB) and a 20 KB first name
    /// were 80 MB rendered, copied whole at every tag (155 s of CPU), before the size check refused
    /// them. The first value is past the limit: refused there, as the size check refuses.
    @Test func theTrackersShapeIsRefusedAtTheFirstValuePastTheLimit() throws {
        let refusal = try #require(Self.refusal(try Self.titled(tags: 4000), user: Self.user(firstName: 20_000)))
        #expect(refusal.code == .applePushLengthExceeded)
        #expect(refusal.status == 400)
        #expect(refusal.brazeMessage == "Apple Push Length Exceeded")
        #expect(
            refusal.detail
                == "JSON payload is more than 1,912 bytes: the text its Liquid renders for this user passes 1,912 "
                + "bytes in apple_push.alert.title, where rendering stopped at 20000 bytes.")
    }

    /// Ten times the tags stop at the same byte: the refusal comes where the limit is passed, not at
    /// the template's end.
    @Test(arguments: [20_000, 100, 1])
    func tenTimesTheTagsAreRefusedAtTheSameByte(nameLength: Int) throws {
        let user = Self.user(firstName: nameLength)
        let small = try #require(Self.refusal(try Self.titled(tags: 4000), user: user))
        let large = try #require(Self.refusal(try Self.titled(tags: 40_000), user: user))
        #expect(small == large)
        #expect(small.detail.contains("rendering stopped at \(1912 / nameLength * nameLength + nameLength) bytes"))
    }

    /// What the renderer did before it stopped: the bytes it copied stay within the limit, the text
    /// it reached is at most the limit and one value, and it evaluated one tag past the last that
    /// fit, for 4,000 tags as for 40,000.
    @Test(arguments: [20_000, 100, 1])
    func theWorkBeforeTheRefusalIsTheLimitsNotTheTemplates(nameLength: Int) throws {
        func work(tags: Int) throws -> (written: Int, evaluations: Int, reached: Int) {
            let title = String(repeating: Self.tag, count: tags)
            let document = Liquid.Document(
                .object([("alert", .object([("title", .string(title))]))]), path: "apple_push")
            var renderer = Liquid.Renderer(context: Liquid.Context(user: Self.user(firstName: nameLength)))
            var budget = Liquid.Budget(limit: 1912)
            var report = Liquid.Report()
            do throws(Liquid.Interruption) {
                _ = try renderer.render(document, budget: &budget, report: &report)
            } catch {
                guard case .pastLimit(let field, let reached, let limit, let whole) = error else { throw error }
                #expect(field == "apple_push.alert.title" && limit == 1912 && whole)
                return (renderer.written, renderer.evaluations, reached)
            }
            Issue.record("\(tags) tags of \(nameLength) bytes rendered within 1,912 bytes")
            return (renderer.written, renderer.evaluations, 0)
        }
        let small = try work(tags: 4000)
        let large = try work(tags: 40_000)
        #expect(small == large)
        #expect(small.written <= 1912)
        #expect(small.reached <= 1912 + nameLength)
        #expect(small.evaluations == 1912 / nameLength + 1)
    }

    /// Within the limit nothing changes: a payload of exactly 1,912 bytes composes, and one byte more
    /// is refused by the size check, whose words name the compact payload.
    @Test func aPayloadAtTheLimitStillComposes() throws {
        let request = try Self.request(#"{"alert":"{{${first_name}}}"}"#)
        let overhead = try Composer.compose(request, user: Self.user(firstName: 0)).get().bytes.count
        let fits = try Composer.compose(request, user: Self.user(firstName: 1912 - overhead)).get()
        #expect(fits.bytes.count == 1912)
        let refusal = try #require(Self.refusal(request, user: Self.user(firstName: 1913 - overhead)))
        #expect(refusal.detail.contains("the composed payload is 1913 bytes as compact JSON"))
    }

    /// Every text that goes into the payload draws on one budget: two fields of 1,000 bytes each are
    /// refused at the second.
    @Test func theFieldsOfOnePayloadShareItsBudget() throws {
        let request = try Self.request(#"{"alert":{"title":"{{${first_name}}}","body":"{{${first_name}}}"}}"#)
        let refusal = try #require(Self.refusal(request, user: Self.user(firstName: 1000)))
        #expect(refusal.detail.contains("in apple_push.alert.body, where rendering stopped at 2000 bytes"))
    }

    /// Texts that never reach the payload are not charged to it: an unknown field, a key repeated
    /// before its last, an extra key Braze writes itself, a button's unknown member, and a header,
    /// which has a budget of its own.
    @Test func textsOutsideThePayloadAreNotChargedToIt() throws {
        let ten = String(repeating: Self.tag, count: 10)
        let request = try Self.request(
            #"{"alert":"Hi {{${first_name}}}","alert":"{{${first_name}}}","note":"\#(ten)","custom_uri":"app://x","#
                + #""category":"ab_cat_yes_no","#
                + #""buttons":[{"action_id":"ab_pb_yes","ab_note":"\#(ten)"},{"action_id":"ab_pb_no"}],"#
                + #""collapse_id":"{{${first_name}}}","extra":{"ab_uri":"\#(ten)"}}"#)
        let push = try Composer.compose(request, user: Self.user(firstName: 1000)).get()
        #expect(push.bytes.count < 1912)
        #expect(push.headers.collapseID?.utf8.count == 1000)
        #expect(
            push.liquidFields == [
                "apple_push.alert", "apple_push.alert", "apple_push.note", "apple_push.buttons[0].ab_note",
                "apple_push.collapse_id", "apple_push.extra.ab_uri",
            ])
        #expect(push.warnings.map(\.code) == ["unknown-field", "extra-key-collision", "collapse-id-too-long"])
        // A header alone past the limit is refused, naming it.
        let header = try Self.request(#"{"alert":"Hi","collapse_id":"{{${first_name}}}"}"#)
        let refusal = try #require(Self.refusal(header, user: Self.user(firstName: 2000)))
        #expect(refusal.code == .applePushLengthExceeded)
        #expect(refusal.detail.hasPrefix("apple_push.collapse_id renders to more than 1,912 bytes for this user"))
    }

    /// A dashboard message only warns over 3,807 bytes; past APNs' 4,096 no send delivers it, and
    /// rendering stops there, without Braze's API status.
    @Test func aDashboardMessageStopsPastAPNsLimit() throws {
        let request = try Self.request(#"{"alert":"\#(String(repeating: Self.tag, count: 40))"}"#, dashboard: true)
        let warned = try Composer.compose(request, user: Self.user(firstName: 100)).get()
        #expect(warned.warnings.map(\.code) == ["dashboard-size"])
        let refusal = try #require(Self.refusal(request, user: Self.user(firstName: 200)))
        #expect(refusal.code == .applePushLengthExceeded)
        #expect(refusal.status == nil && refusal.brazeMessage == nil)
        #expect(refusal.detail.hasPrefix("the payload is more than APNs' 4,096 bytes, so no send delivers it: "))
        #expect(
            refusal.detail.contains("passes 4,096 bytes in apple_push.alert, where rendering stopped at 4200 bytes"))
    }

    /// A cancelled task stops a rendering within ``Liquid/Renderer/cancellationInterval`` tags, and
    /// ``Composer/composeUnlessCancelled(_:user:)`` gives nothing; ``Composer/compose(_:user:)`` does not look.
    @Test func aCancelledTaskStopsTheRendering() async throws {
        let request = try Self.request(#"{"alert":"\#(String(repeating: "{{${last_name}}}", count: 3000))"}"#)
        let user = Self.user(firstName: 3)
        let outcome = await Task { () -> (evaluations: Int, cancelled: Bool, composed: Bool, whole: Bool) in
            withUnsafeCurrentTask { $0?.cancel() }
            var renderer = Liquid.Renderer(context: Liquid.Context(user: user), checksCancellation: true)
            var budget = Liquid.Budget(limit: 1912)
            var notes = Liquid.Notes()
            var cancelled = false
            do throws(Liquid.Interruption) {
                _ = try renderer.render(
                    Liquid.Template(String(repeating: "{{${last_name}}}", count: 3000)), field: "t", budget: &budget,
                    notes: &notes)
            } catch {
                cancelled = error == .cancelled
            }
            let composed = Composer.composeUnlessCancelled(request, user: user) != nil
            let whole = (try? Composer.compose(request, user: user).get()) != nil
            return (renderer.evaluations, cancelled, composed, whole)
        }.value
        #expect(outcome.cancelled)
        #expect(outcome.evaluations == Liquid.Renderer.cancellationInterval)
        #expect(!outcome.composed)
        #expect(outcome.whole)
    }

    /// The request's Liquid is parsed when it is read, once for all its users.
    @Test func theTemplateIsParsedOncePerRequest() throws {
        let request = try Self.titled(tags: 3)
        guard case .object(let members)? = request.document, case .object(let alert) = members[0].value,
            case .text(let template, let field) = alert[0].value
        else {
            Issue.record("the request's apple_push was not parsed when read")
            return
        }
        #expect(field == "apple_push.alert.title")
        #expect(template.tags == 3)
    }
}

/// A warning stays a line whatever the template: 40,000 empty tags per user wrote 1.8 MB of
/// `liquid-empty` per user (36 GB of stderr for 20,000 users).
@Suite struct LiquidWarningSizeTests {
    @Test func repeatedTagsAreCountedAndAtMostFiveNamed() throws {
        let request = try LiquidBudgetTests.titled(tags: 40_000)
        guard case .success(let push) = Composer.compose(request, user: LiquidBudgetTests.user(firstName: 0)) else {
            Issue.record("40,000 empty tags render an empty title, which Braze accepts")
            return
        }
        let warning = try #require(push.warnings.first { $0.code == "liquid-empty" })
        #expect(warning.message.hasPrefix("{{${first_name}}} in apple_push.alert.title (40000 times) has no value"))
        #expect(warning.message.utf8.count < 300, "\(warning.message)")
        let names = (0..<8).map { (field: "f\($0)", tag: "{{${t}}}") } + [(field: "f0", tag: "{{${t}}}")]
        #expect(
            Liquid.Report.naming(names)
                == "{{${t}}} in f0 (2 times), {{${t}}} in f1, {{${t}}} in f2, {{${t}}} in f3, {{${t}}} in f4 and 3 more"
        )
    }
}

/// Users whose attributes the Liquid reads are the same compose the same: `compose --user` reuses the
/// result (40,000 tags for 20,000 users took 4.5 minutes, each user rendered anew).
@Suite struct RenderingKeyTests {
    static let request = try? Composer.read(
        Array(
            #"{"broadcast":true,"messages":{"apple_push":{"alert":{"title":"Hi {{${first_name}}} {{${user_id}}}","body":"{{custom_attribute.${tier} | default: 'x'}} {{campaign.${name}}}"}}}}"#
                .utf8)
    ).get()

    static func user(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    @Test func theKeyHoldsWhatTheLiquidReadsAndNothingElse() throws {
        let request = try #require(Self.request)
        let ana = try #require(
            request.renderingKey(for: try Self.user(#"{"first_name":"Ana","external_id":"a","city":"X"}"#)))
        // An attribute no tag reads does not change the key.
        #expect(request.renderingKey(for: try Self.user(#"{"first_name":"Ana","external_id":"a","city":"Y"}"#)) == ana)
        // user_id falls back to external_id, as the renderer reads it.
        #expect(request.renderingKey(for: try Self.user(#"{"first_name":"Ana","user_id":"a"}"#)) == ana)
        // Each read attribute, custom and campaign ones included, changes it.
        for other in [
            #"{"first_name":"Bo","external_id":"a"}"#, #"{"first_name":"Ana","external_id":"b"}"#,
            #"{"first_name":"Ana","external_id":"a","custom_attributes":{"tier":"gold"}}"#,
            #"{"first_name":"Ana","external_id":"a","campaign":{"name":"c"}}"#,
            #"{"first_name":"Ana","first_name":"Bo","external_id":"a"}"#,
        ] {
            #expect(request.renderingKey(for: try Self.user(other)) != ana, "\(other)")
        }
        #expect(request.renderingKey(for: nil) == nil)
    }

    @Test func usersWithOneKeyComposeTheSame() throws {
        let request = try #require(Self.request)
        let users = try [
            #"{"first_name":"Ana","external_id":"a","city":"X"}"#, #"{"first_name":"Ana","user_id":"a"}"#,
            #"{"first_name":"","external_id":"a"}"#, #"{"external_id":"a","z":1}"#,
        ].map(Self.user)
        for first in users {
            for second in users where request.renderingKey(for: first) == request.renderingKey(for: second) {
                let one = Composer.compose(request, user: first)
                let two = Composer.compose(request, user: second)
                switch (one, two) {
                case (.success(let a), .success(let b)):
                    #expect(a.bytes == b.bytes && a.warnings == b.warnings)
                case (.failure(let a), .failure(let b)): #expect(a.line == b.line)
                default: Issue.record("one composed, the other refused")
                }
            }
        }
    }
}

/// A media URL that Liquid renders with a character only iOS 17 and later read is flagged for that user.
@Suite struct ComposedURLVersionTests {
    @Test func aRenderedURLOnlyNewPhonesReadIsWarnedPerUser() throws {
        let request = try Composer.read(
            Array(
                #"{"broadcast":true,"messages":{"apple_push":{"alert":"Hi","asset_url":"https://cdn.example.com/{{${city}}}.jpg","asset_file_type":"jpg"}}}"#
                    .utf8)
        ).get()
        func codes(_ user: String) throws -> [String] {
            try Composer.compose(request, user: JSONValue.parse(Array(user.utf8))).get().warnings.map(\.code)
        }
        #expect(try !codes(#"{"city":"London"}"#).contains("url-needs-ios-17"))
        #expect(try codes(#"{"city":"New York"}"#).contains("url-needs-ios-17"))
        #expect(try codes(#"{"city":"Zürich"}"#).contains("url-needs-ios-17"))
    }
}
