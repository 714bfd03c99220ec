import Testing

@testable import RichPush

/// The Liquid richpush renders, and what it leaves as written.
@Suite struct LiquidTests {
    static let ada = Liquid.Context(
        user: .object([
            ("first_name", .string("Ada")), ("external_id", .string("u-1")), ("city", .string("")),
            (
                "custom_attributes",
                .object([("tier", .string("gold")), ("points", .number("12")), ("tags", .array([]))])
            ),
            ("campaign", .object([("name", .string("Spring"))])),
        ]), campaign: [("api_id", .string("camp-9"))])

    @Test(arguments: [
        ("Hi {{${first_name}}}!", "Hi Ada!"),
        ("Hi {{ ${first_name} }}", "Hi Ada"),
        ("{{${user_id}}}", "u-1"),
        ("{{${last_name} | default: 'friend'}}", "friend"),
        (#"{{${city} | default: "somewhere"}}"#, "somewhere"),
        ("{{custom_attribute.${tier}}}/{{custom_attribute.${points}}}", "gold/12"),
        ("{{campaign.${name}}} {{campaign.${api_id}}}", "Spring camp-9"),
        ("{{${first_name} | default: 'a|b'}}", "Ada"),
        ("no liquid", "no liquid"),
    ])
    func renders(text: String, expected: String) {
        let (rendered, notes) = Liquid.render(text, context: Self.ada)
        #expect(rendered == expected)
        #expect(notes.unrendered.isEmpty)
        #expect(notes.empty.isEmpty)
    }

    @Test(arguments: [
        "{% if ${first_name} %}x{% endif %}",
        "{{${first_name} | upcase}}",
        "{{${favourite_colour}}}",
        "{{content_blocks.${promo}}}",
        "{{custom_attribute.${tags}}}",
        "{{${first_name}",
    ])
    func leavesTheRestAsWritten(text: String) {
        let (rendered, notes) = Liquid.render(text, context: Self.ada)
        #expect(notes.holdsLiquid)
        #expect(!notes.unrendered.isEmpty)
        #expect(rendered.contains(notes.unrendered[0]))
        #expect(!rendered.contains("Ada") || text.contains("{%"))
    }

    @Test func aMissingValueWithoutDefaultRendersEmptyAndIsNamed() {
        let (rendered, notes) = Liquid.render("Hi {{${last_name}}}.", context: Self.ada)
        #expect(rendered == "Hi .")
        #expect(notes.empty == ["{{${last_name}}}"])
    }

    @Test func withoutAUserNothingIsRendered() {
        let (rendered, notes) = Liquid.render("Hi {{${first_name}}}", context: nil)
        #expect(rendered == "Hi {{${first_name}}}")
        #expect(notes.holdsLiquid)
    }

    /// Per user: the fields holding Liquid are reported, and the size limit is checked on what each
    /// user gets, so a long name alone is refused.
    @Test func composesPerUserAndChecksTheSizePerUser() throws {
        let filler = String(repeating: "z", count: 1800)
        let request = try Composer.read(
            Array(
                #"{"broadcast":true,"messages":{"apple_push":{"alert":{"title":"Hi {{${first_name} | default: 'there'}}","body":"\#(filler)"},"extra":{"u":"{% raw %}"}}}}"#
                    .utf8)
        ).get()
        let long = String(repeating: "N", count: 200)
        let lines = #"{"first_name":"Ada"}"# + "\n\n" + #"{"first_name":"\#(long)"}"# + "\n"
        let users: [JSONValue] = try Composer.users(Array(lines.utf8)).get()
        #expect(users.count == 2)
        let first = try Composer.compose(request, user: users[0]).get()
        #expect(first.payload["aps"]?["alert"]?["title"] == JSONValue.string("Hi Ada"))
        #expect(first.liquidFields == ["apple_push.alert.title", "apple_push.extra.u"])
        #expect(first.warnings.map { $0.code } == ["liquid-left-as-written"])
        #expect(first.warnings[0].message.contains("{% raw %} in apple_push.extra.u"))
        guard case .failure(let refusal) = Composer.compose(request, user: users[1]) else {
            Issue.record("the long name should be over 1,912 bytes")
            return
        }
        #expect(refusal.code == ComposeRefusal.Code.applePushLengthExceeded)
        let unrendered = try Composer.compose(request).get()
        #expect(unrendered.warnings.map(\.code) == ["liquid-unrendered"])
        #expect(unrendered.payload["aps"]?["alert"]?["title"] == .string("Hi {{${first_name} | default: 'there'}}"))
    }

    @Test func aUserFileMustHoldObjects() {
        guard case .failure(let refusal) = Composer.users(Array("{\"a\":1}\n[1]\n".utf8)) else {
            Issue.record("an array is not a user")
            return
        }
        #expect(refusal.detail.contains("line 2"))
    }
}
