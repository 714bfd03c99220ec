/// The Content-Type the server sends for a file, from its extension, as a typical CDN does.
enum MediaTypes {
    private static let byExtension: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
        "webp": "image/webp", "heic": "image/heic", "bmp": "image/bmp",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "wav": "audio/wav", "aif": "audio/aiff", "aiff": "audio/aiff",
        "mp4": "video/mp4", "mpg": "video/mpeg", "mpeg": "video/mpeg", "avi": "video/x-msvideo",
        "html": "text/html; charset=utf-8", "json": "application/json", "txt": "text/plain; charset=utf-8",
    ]

    static func contentType(forPath path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else {
            return "application/octet-stream"
        }
        return byExtension[path[path.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }
}
