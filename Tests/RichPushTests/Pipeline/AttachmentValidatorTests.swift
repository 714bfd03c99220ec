import RichPush
import Testing

/// The decision table documented on ``AttachmentValidator`` and in the README.
@Suite struct AttachmentValidatorTests {
    func sniff(_ mime: String, video: Bool? = nil) -> Sniff {
        Sniff(
            mime: mime, description: "test", formatName: AttachmentFormat.forMIME(mime)?.name, hasVideoTrack: video,
            notes: [])
    }

    func format(_ fileExtension: String) throws -> AttachmentFormat {
        try #require(AttachmentFormat.forExtension(fileExtension))
    }

    @Test(arguments: [
        ("jpg", "image/jpeg"), ("png", "image/png"), ("gif", "image/gif"), ("mp3", "audio/mpeg"),
        ("m4a", "audio/x-m4a"), ("wav", "audio/x-wav"), ("aif", "audio/x-aiff"), ("mp4", "video/mp4"),
        ("mpg", "video/mpeg"), ("avi", "video/x-msvideo"),
    ])
    func attachesMatchingFormats(declared: String, mime: String) throws {
        #expect(
            AttachmentValidator.validate(declared: try format(declared), sniff: sniff(mime)) == .attach(warnings: []))
    }

    @Test func attachesAnImageOfAnotherFormatWithAWarning() throws {
        guard
            case .attach(let warnings) = AttachmentValidator.validate(
                declared: try format("jpg"), sniff: sniff("image/png"))
        else {
            Issue.record("PNG bytes behind jpg should attach")
            return
        }
        #expect(warnings.map(\.code) == ["image-format-mismatch"])
    }

    @Test func acceptsAudioOnlyMPEG4ForM4A() throws {
        #expect(
            AttachmentValidator.validate(declared: try format("m4a"), sniff: sniff("video/mp4", video: false))
                == .attach(warnings: []))
        if case .reject(let reason, _) = AttachmentValidator.validate(
            declared: try format("m4a"), sniff: sniff("video/mp4", video: true))
        {
            #expect(reason == .contentClassMismatch)
        } else {
            Issue.record("a movie behind m4a must not attach")
        }
    }

    @Test(arguments: [
        ("jpg", "audio/mpeg", ReasonCode.contentClassMismatch), ("mp3", "image/png", .contentClassMismatch),
        ("wav", "audio/mpeg", .contentFormatMismatch), ("avi", "video/mp4", .contentFormatMismatch),
        ("jpg", "image/webp", .contentUnrecognized), ("jpg", "image/heic", .contentUnrecognized),
        ("jpg", "application/gzip", .contentUnrecognized), ("jpg", "text/html", .contentUnrecognized),
        ("jpg", "application/x-empty", .contentUnrecognized), ("png", "application/octet-stream", .contentUnrecognized),
    ])
    func rejectsWhatIOSCannotOpen(declared: String, mime: String, reason: ReasonCode) throws {
        guard
            case .reject(let got, let message) = AttachmentValidator.validate(
                declared: try format(declared), sniff: sniff(mime))
        else {
            Issue.record("\(mime) behind \(declared) must not attach")
            return
        }
        #expect(got == reason)
        #expect(got.unErrorCode == 101)
        #expect(!message.isEmpty)
    }
}
