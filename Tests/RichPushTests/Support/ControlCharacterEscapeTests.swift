import RichPush
import Testing

@Suite struct ControlCharacterEscapeTests {
    @Test func escapesControlCharacters() {
        #expect(
            "a\nb\rc\u{1B}[2Jd\u{7F}\u{9B}\te".escapingControlCharacters == "a\\nb\\rc\\u{1B}[2Jd\\u{7F}\\u{9B}\\te")
        #expect("plain text, é".escapingControlCharacters == "plain text, é")
        #expect(!"x\u{2028}y".escapingControlCharacters.contains("\u{2028}"))
    }
}
