import RichPush
import Testing

/// `-H 'Name: value'` as the library reads it: one line, a token name, curl's removal syntax, and the
/// merge with the device's own headers.
@Suite struct RequestHeaderTests {
    @Test func parsesANameAndItsValue() throws {
        let header = try RequestHeader(parsing: "X-Device:  iPhone15,2\t")
        #expect(header == RequestHeader(name: "X-Device", value: "iPhone15,2"))
        #expect(header.description == "X-Device: iPhone15,2")
        #expect(try RequestHeader(parsing: "Cookie: a=b: c").value == "a=b: c", "only the first colon splits")
    }

    @Test func anEmptyValueRemovesTheHeader() throws {
        let header = try RequestHeader(parsing: "Accept-Language:")
        #expect(header.value.isEmpty && header.description == "Accept-Language:")
    }

    @Test(arguments: [
        "X: a\r\nX-Evil: 1", "X: a\nHost: evil.example", "X: a\r", "X: a\0b", "X\r\n: a", "\r\nGET / HTTP/1.1",
    ])
    func refusesLineBreaksAndNUL(text: String) {
        #expect {
            try RequestHeader(parsing: text)
        } throws: { error in
            let message = (error as? RequestHeader.Failure)?.message ?? ""
            // The message shows the value escaped, never a raw line break.
            return (message.contains("CR") || message.contains("LF") || message.contains("NUL"))
                && !message.contains("\r") && !message.contains("\n")
        }
    }

    @Test(arguments: ["NoColon", ": value", " X: a", "X Y: a", "X@Y: a", "Ünïcode: a"])
    func refusesANameThatIsNotAToken(text: String) {
        #expect(throws: RequestHeader.Failure.self) { try RequestHeader(parsing: text) }
    }

    @Test func givenHeadersReplaceTheDevicesInPlaceAndOthersFollowInOrder() throws {
        let given = try ["accept: image/jpeg", "X-A: 1", "Accept: image/png", "X-A: 2", "Accept-Language:"].map {
            try RequestHeader(parsing: $0)
        }
        let lines = RequestHeader.merged(FetchPolicy.deviceHeaders, with: given).map(\.description)
        #expect(lines == ["Accept: image/png", "Accept-Language:", "X-A: 1", "X-A: 2"])
    }

    @Test func theDevicesHeadersAreURLSessionsDefaults() {
        let lines = RequestHeader.merged(FetchPolicy.deviceHeaders, with: []).map(\.description)
        #expect(lines == ["Accept: */*", "Accept-Language: en-US,en;q=0.9"])
        #expect(FetchPolicy().acceptEncoding == "gzip, deflate, br")
        #expect(FetchPolicy().offersHTTP2)
    }
}
