import RichPush
import RichPushRuns

/// A bench's URL list as a user writes it (`--urls FILE`) and the cache headers a CDN answers with:
/// untrusted text from a file and from a server.
///
/// - Reading a list never traps; an accepted list has 1 to ``URLList/maxEntries`` entries with weights
///   in range, every device draws an entry in range, and a template's expansion holds no placeholder.
/// - A refusal's message carries no control character of the input.
/// - Every header value gives a cache result without trapping, and the same value the same result.
enum CampaignInvariants {
    static func check(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        do throws(ConfigurationError) {
            let list = try URLList(parsing: text, file: "urls.txt", seed: UInt64(bytes.count))
            require((1...URLList.maxEntries).contains(list.entries.count), "\(list.entries.count) entries")
            require(
                list.entries.allSatisfy { (1...URLList.maxWeight).contains($0.weight) }, "a weight out of range")
            for device in [0, 1, 2, 7, 1000, 999_999] {
                let entry = list.entry(of: device)
                require(list.entries.indices.contains(entry), "device \(device) drew entry \(entry)")
                let template = list.entries[entry].template
                let url = template.expand(device: device, shard: 1, seed: 3)
                // Every brace of an accepted entry is a placeholder, and placeholders expand to digits and letters.
                require(!url.contains("{"), "an expansion kept a brace: \(url)")
                require(template.isTemplate || url == template.text, "a plain URL changed when expanded")
            }
        } catch {
            require(
                !error.text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F },
                "a refusal repeats a control character")
        }
        for line in splitLines(bytes).prefix(8) {
            let value = String(decoding: line, as: UTF8.self)
            for name in CacheResult.headerNames {
                let first = CacheResult(headers: [name: value])
                require(first == CacheResult(headers: [name: value]), "\(name): \(value) read two ways")
            }
        }
    }
}
