import Foundation
import POSIXKit

/// The one reader of property list files: bounded in size, in objects and in the bytes of its strings
/// and data before Foundation decodes.
///
/// Every plist richpush reads goes through it: the service and content extensions' plists given one by
/// one, the Info.plist files found in the app's folder, the App Group suite, and the user attributes
/// stored inside the suite. In order:
///
/// 1. The path must be a regular file: it is opened without blocking and checked with `fstat`, so a
///    FIFO or a device is refused by name and never read.
/// 2. Its size must be within ``PropertyListLimits/maximumBytes``, checked before reading and while
///    reading (a file that grows is cut off, not followed).
/// 3. A binary plist (`bplist00`) is walked by ``BinaryPropertyListValidator``: trailer, offsets,
///    references, cycles, nesting, the expanded object count and the expanded bytes of strings and
///    data (``PropertyListLimits/maximumExpandedBytes``), with the real defect in the error.
/// 4. An XML plist has no shared references, so its size bounds its expansion: its strings and data
///    hold no more bytes than the file (entities and base64 only shrink). Its elements are
///    counted (every `<` that opens a tag) against the object limit, an encoding other than UTF-8,
///    ASCII or Latin-1 is refused (the count reads bytes), and Foundation's XML parser itself refuses
///    a DTD internal subset (no entity can expand) and nesting past 512 levels.
///    Old-style OpenStep text plists are refused: neither Xcode nor `UserDefaults` writes them.
/// 5. Only then does Foundation decode it.
///
/// ```swift
/// let document = try PropertyListReader(limits: .infoPlist).read(contentsOf: "Ext/Info.plist")
/// let root = try document.dictionary()
/// ```
package struct PropertyListReader: Sendable {
    package var limits: PropertyListLimits

    package init(limits: PropertyListLimits) {
        self.limits = limits
    }

    /// Reads and decodes the file at `path`.
    package func read(contentsOf path: String) throws(PropertyListError) -> PropertyListDocument {
        try decode(try bytes(of: path), path: path)
    }

    /// The bytes of the regular file at `path`, at most ``PropertyListLimits/maximumBytes`` of them.
    package func bytes(of path: String) throws(PropertyListError) -> [UInt8] {
        let descriptor: Int32
        do {
            descriptor = try SystemCall.openRegularFile(path)
        } catch {
            throw Self.openFailure(error, path: path)
        }
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) == 0, Int64(info.st_size) > Int64(limits.maximumBytes) {
            throw tooLarge(path, size: "\(info.st_size) bytes")
        }
        let bytes: [UInt8]
        do {
            bytes = try SystemCall.readAll(descriptor, upTo: limits.maximumBytes + 1, path: path)
        } catch {
            throw PropertyListError(.unreadable, path: path, problem: "cannot be read: \(error.cause)", cause: error)
        }
        guard bytes.count <= limits.maximumBytes else { throw tooLarge(path, size: "more than that (it grew)") }
        return bytes
    }

    /// Decodes `bytes` read from `path` (the name in messages), within the limits.
    package func decode(_ bytes: [UInt8], path: String) throws(PropertyListError) -> PropertyListDocument {
        guard bytes.count <= limits.maximumBytes else { throw tooLarge(path, size: "\(bytes.count) bytes") }
        if bytes.starts(with: Array("bplist".utf8)) {
            return try decodeBinary(bytes, path: path)
        }
        return try decodeXML(bytes, path: path)
    }

    private func decodeBinary(_ bytes: [UInt8], path: String) throws(PropertyListError) -> PropertyListDocument {
        guard bytes.starts(with: BinaryPropertyListValidator.magic) else {
            let version = String(decoding: bytes.prefix(8), as: UTF8.self).escapingControlCharacters
            throw PropertyListError(
                .unsupported, path: path,
                problem: "is a binary property list of version '\(version)'; Foundation reads bplist00")
        }
        let expansion: BinaryPropertyListValidator.Expansion
        do {
            expansion = try BinaryPropertyListValidator.validate(bytes, limits: limits)
        } catch {
            throw PropertyListError(error.code, path: path, problem: error.problem)
        }
        guard let value = try? PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        else {
            // Foundation's own message for a binary plist is the XML reader's ("Unexpected character b").
            throw PropertyListError(
                .notAPropertyList, path: path,
                problem: "is a binary property list whose structure is sound but whose content Foundation refuses "
                    + "(a string that is neither ASCII nor UTF-16, or a value of the wrong type)")
        }
        return PropertyListDocument(
            value: value, format: .binary, objects: expansion.objects, expandedBytes: expansion.bytes, path: path)
    }

    private func decodeXML(_ bytes: [UInt8], path: String) throws(PropertyListError) -> PropertyListDocument {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        guard start < bytes.count, bytes[start] == UInt8(ascii: "<") else {
            let what = bytes.isEmpty ? "is empty" : "is not a property list"
            throw PropertyListError(
                .notAPropertyList, path: path,
                problem: "\(what) (neither binary, which starts with bplist00, nor XML, which starts with <)")
        }
        if let encoding = Self.declaredEncoding(bytes[start...]),
            !["utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1", "latin1"].contains(encoding.lowercased())
        {
            throw PropertyListError(
                .unsupported, path: path,
                problem: "declares the encoding '\(encoding.escapingControlCharacters)'; richpush reads XML plists "
                    + "in UTF-8, as Xcode and UserDefaults write them")
        }
        let elements = Self.elementCount(bytes[start...])
        guard elements <= limits.maximumObjects else {
            throw PropertyListError(
                .tooManyObjects, path: path,
                problem: "holds more than \(limits.maximumObjects) XML elements, the most richpush reads for "
                    + "\(limits.kind)")
        }
        var format = PropertyListSerialization.PropertyListFormat.xml
        let value: Any
        do {
            value = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: &format)
        } catch {
            throw PropertyListError(
                .notAPropertyList, path: path, problem: "is not a property list (XML): \(Self.reason(error))")
        }
        guard format == .xml else {
            throw PropertyListError(
                .unsupported, path: path,
                problem: "is an old-style (OpenStep) property list; Info.plist files and suites are XML or binary")
        }
        return PropertyListDocument(
            value: value, format: .xml, objects: elements, expandedBytes: bytes.count, path: path)
    }

    /// The `encoding` of an `<?xml ...?>` declaration at the start, if there is one.
    static func declaredEncoding(_ bytes: ArraySlice<UInt8>) -> String? {
        guard bytes.starts(with: Array("<?xml".utf8)) else { return nil }
        let declaration = bytes.prefix(256)
        guard let close = declaration.firstIndex(of: UInt8(ascii: ">")) else { return nil }
        let text = String(decoding: declaration[..<close], as: UTF8.self)
        guard let range = text.range(of: "encoding") else { return nil }
        let rest = text[range.upperBound...].drop { $0 == " " || $0 == "=" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return String(rest.prefix(40)) }
        return String(rest.dropFirst().prefix { $0 != quote }.prefix(40))
    }

    /// How many elements the XML holds at most: each `<` followed by a letter opens one (comments,
    /// declarations and closing tags start with `!`, `?` or `/`). The `<plist>` element is counted too:
    /// Foundation also reads a document without one, so leaving it out could undercount by one.
    static func elementCount(_ bytes: ArraySlice<UInt8>) -> Int {
        var count = 0
        var previous: UInt8 = 0
        for byte in bytes {
            if previous == UInt8(ascii: "<"), (byte | 0x20) >= UInt8(ascii: "a"), (byte | 0x20) <= UInt8(ascii: "z") {
                count += 1
            }
            previous = byte
        }
        return count
    }

    private func tooLarge(_ path: String, size: String) -> PropertyListError {
        PropertyListError(
            .tooLarge, path: path,
            problem: "is \(size), larger than the \(limits.maximumBytes) bytes richpush reads for \(limits.kind)")
    }

    static func openFailure(_ error: SystemError, path: String) -> PropertyListError {
        switch error.code {
        case ENOENT:
            return PropertyListError(.missing, path: path, problem: "cannot be read: \(error.cause)", cause: error)
        case EINVAL where error.reason != nil:
            return PropertyListError(
                .notARegularFile, path: path,
                problem: "is not a regular file (a FIFO, device, socket or folder): give the path of a plist file",
                cause: error)
        default:
            return PropertyListError(.unreadable, path: path, problem: "cannot be read: \(error.cause)", cause: error)
        }
    }

    static func reason(_ error: any Error) -> String {
        let text = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
        return (text ?? (error as NSError).localizedDescription).escapingControlCharacters
    }
}
