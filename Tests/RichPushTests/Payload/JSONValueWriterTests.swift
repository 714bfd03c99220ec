import Foundation
import Testing

@testable import RichPush

/// The JSON writer the pipeline runs for every payload.
@Suite struct JSONValueWriterTests {
    @Test func escapesQuotesBackslashesAndControlCharactersAndKeepsEverythingElse() throws {
        let tricky = "a\"b\\c\nd\re\tf\u{1}g\u{1f}h\u{7f}é😀\"\u{301}"
        let value = JSONValue.object([("k\"ey", .string(tricky)), ("n", .number("1.10")), ("b", .bool(false))])
        #expect(
            value.text
                == #"{"k\"ey":"a\"b\\c\nd\re\tf\u0001g\u001fh"# + "\u{7f}é😀" + #"\""# + "\u{301}"
                + #"","n":1.10,"b":false}"#)
        // What it writes, Foundation reads back as the same string.
        let decoded = try JSONSerialization.jsonObject(with: Data(value.utf8)) as? [String: Any]
        #expect(decoded?["k\"ey"] as? String == tricky)
        #expect(value.utf8 == Array(value.text.utf8))
    }
}
