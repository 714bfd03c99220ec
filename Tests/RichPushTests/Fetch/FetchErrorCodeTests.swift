import RichPush
import Testing

/// The fetch error vocabulary: one list, one enum, the same stable names.
@Suite struct FetchErrorCodeTests {
    @Test func theDocumentedListIsEveryKind() {
        #expect(FetchError.Code.all.map(\.kind) == FetchError.Code.Kind.allCases)
        #expect(FetchError.Code.all.map(\.description) == FetchError.Code.Kind.allCases.map(\.rawValue))
        #expect(Set(FetchError.Code.all.map(\.description)).count == FetchError.Code.all.count)
    }
}
