import Digest
import Testing

@Suite struct SHA256DigestTests {
    /// FIPS 180-2's examples, and the empty input.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func knownDigests(input: String, expected: String) {
        #expect(SHA256Digest.hex(of: Array(input.utf8)) == expected)
    }

    @Test func piecesGiveTheSameDigestAsTheWhole() {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var digest = SHA256Digest()
        for start in stride(from: 0, to: bytes.count, by: 777) {
            bytes[start..<min(bytes.count, start + 777)].withUnsafeBytes { digest.update($0) }
        }
        #expect(digest.hex() == SHA256Digest.hex(of: bytes))
        #expect(SHA256Digest.hex(of: bytes)?.count == 64)
    }
}
