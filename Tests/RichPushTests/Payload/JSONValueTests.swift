import RichPush
import Testing

@Suite struct JSONValueTests {
    @Test func keepsKeyOrderAndNumbersAsWritten() throws {
        let text =
            #"{"z":1,"a":{"n":12345678901234567890,"d":1.10,"e":-2.5E+3,"t":true,"f":false,"x":null},"s":[1,"two"]}"#
        let value = try JSONValue.parse(Array(text.utf8))
        #expect(value.text == text)
        guard case .object(let members) = value else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["z", "a", "s"])
        #expect(value["a"]?["n"] == .number("12345678901234567890"))
        #expect(value["a"]?["d"] == .number("1.10"))
    }

    @Test func decodesEscapesAndUnicode() throws {
        let value = try JSONValue.parse(Array(#"{"s":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n","r":"日本"}"#.utf8))
        #expect(value["s"] == .string("café 😀 \"q\" \\ / \n"))
        #expect(value["r"] == .string("日本"))
    }

    @Test func reencodesStringsSafely() {
        #expect(JSONValue.string("a\"b\\c\n\u{01}é").text == #""a\"b\\c\n\u0001é""#)
    }

    @Test(arguments: [
        "", "{", "}", #"{"a":}"#, #"{"a" 1}"#, #"{"a":1,}"#, "[1,]", "01", "1.", "-", "1e", "tru", #""\x""#,
        #""\ud800""#, "{\"a\":\"\u{01}\"}", "{} {}", "nul",
    ])
    func rejectsInvalidJSON(text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(Array(text.utf8)) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x22, 0xff, 0xfe, 0x22]) }
    }

    @Test func refusesNestingDeeperThanTheLimit() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(Array(deep.utf8)) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(try JSONValue.parse(Array(fine.utf8)).typeName == "an array")
    }

    @Test func insertsAMemberWithoutTouchingTheRest() throws {
        let original = Array("{\"a\":1.10 , \"b\":[] }\n".utf8)
        let out = PayloadText.inserting(
            key: "richpush", value: .object([("v", .bool(true))]), into: original, isEmpty: false)
        #expect(String(decoding: out, as: UTF8.self) == "{\"a\":1.10 , \"b\":[] ,\"richpush\":{\"v\":true}}\n")
        let empty = PayloadText.inserting(key: "k", value: .null, into: Array("{}".utf8), isEmpty: true)
        #expect(String(decoding: empty, as: UTF8.self) == "{\"k\":null}")
    }
}
