import RichPush
import Testing

/// The one table joining extensions, MIME types, UTIs and classes (docs/platform.md, section 2).
@Suite struct AttachmentFormatTests {
    @Test(arguments: [
        ("jpg", "public.jpeg", AttachmentClass.image), ("JPEG", "public.jpeg", .image), (".png", "public.png", .image),
        ("gif", "com.compuserve.gif", .image), ("aif", "public.aiff-audio", .audio),
        ("aiff", "public.aiff-audio", .audio), ("wav", "com.microsoft.waveform-audio", .audio),
        ("mp3", "public.mp3", .audio), ("m4a", "public.mpeg-4-audio", .audio), ("mpg", "public.mpeg", .movie),
        ("mpeg", "public.mpeg", .movie), ("m2v", "public.mpeg-2-video", .movie), ("mp4", "public.mpeg-4", .movie),
        ("avi", "public.avi", .movie),
    ])
    func mapsEverySupportedExtension(fileExtension: String, uti: String, kind: AttachmentClass) throws {
        let format = try #require(AttachmentFormat.forExtension(fileExtension))
        #expect(format.uti == uti)
        #expect(format.attachmentClass == kind)
    }

    @Test(arguments: ["webp", "heic", "heif", "bmp", "tiff", "tmp", "", ".", "..", "../../x", "jpg/", "mov"])
    func refusesEverythingElse(fileExtension: String) {
        #expect(AttachmentFormat.forExtension(fileExtension) == nil)
    }

    @Test func stripsOnlyOneLeadingDot() {
        #expect(AttachmentFormat.normalizedExtension(".JPG") == "jpg")
        #expect(AttachmentFormat.normalizedExtension("..jpg") == ".jpg")
        #expect(AttachmentFormat.forExtension("..jpg") == nil)
    }

    @Test func mapsMIMETypesIgnoringParameters() {
        #expect(AttachmentFormat.forMIME("image/jpeg; charset=binary")?.name == "jpeg")
        #expect(AttachmentFormat.forMIME("audio/x-m4a")?.name == "m4a")
        #expect(AttachmentFormat.forMIME("image/webp") == nil)
    }

    @Test func capsFollowApple() {
        #expect(AttachmentClass.audio.maxBytes() == 5_000_000)
        #expect(AttachmentClass.image.maxBytes() == 10_000_000)
        #expect(AttachmentClass.movie.maxBytes() == 50_000_000)
        #expect(AttachmentClass.image.maxBytes(binaryMegabytes: true) == 10 * 1_048_576)
    }

    @Test func everyExtensionBelongsToExactlyOneFormat() {
        let extensions = AttachmentFormat.all.flatMap(\.extensions)
        #expect(Set(extensions).count == extensions.count)
    }
}
