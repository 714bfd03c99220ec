import Testing

@testable import RichPushCLI

/// "Did you mean": the closest known word within a small edit distance.
@Suite struct SuggestionTests {
    @Test func suggestionsPickTheClosestKnownWord() {
        #expect(Suggestion.closest(to: "--budgte", in: ["--out", "--budget"]) == "--budget")
        #expect(Suggestion.closest(to: "--concurency", in: ["--concurrency", "--recursive"]) == "--concurrency")
        #expect(Suggestion.closest(to: "--xyz", in: ["--budget"]) == nil)
        #expect(Suggestion.editDistance("abc", "acb") == 1)
    }
}
