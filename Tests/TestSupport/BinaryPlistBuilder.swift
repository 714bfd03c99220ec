/// Builds binary property lists (`bplist00`) byte by byte, including ones Foundation must never see:
/// reference bombs, cycles, bad trailers.
///
/// ```swift
/// let bomb = BinaryPlistBuilder.bomb(levels: 40)  // 240 bytes that expand to 2^40 objects
/// ```
package enum BinaryPlistBuilder {
    /// The file for `objects` (each one's encoded bytes): header, objects, offset table and trailer.
    package static func assemble(
        _ objects: [[UInt8]], top: Int = 0, referenceSize: Int = 1, offsetSize: Int = 2
    ) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += bigEndian(UInt64(offset), size: offsetSize) }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        bytes += bigEndian(UInt64(objects.count), size: 8) + bigEndian(UInt64(top), size: 8)
        bytes += bigEndian(UInt64(table), size: 8)
        return bytes
    }

    /// `levels` objects, each an array that references the next object twice; the last an integer.
    ///
    /// Decoded, it holds 2^levels - 1 objects.
    package static func bomb(levels: Int) -> [UInt8] {
        let referenceSize = levels < 256 ? 1 : 2
        var objects = (0..<(levels - 1)).map { index in
            [UInt8(0xA2)] + reference(index + 1, size: referenceSize) + reference(index + 1, size: referenceSize)
        }
        objects.append(integer(0))
        return assemble(objects, referenceSize: referenceSize)
    }

    /// A dictionary `{key: bomb}`, so a reader that wants a dictionary at the top reaches the bomb.
    package static func dictionaryBomb(levels: Int, key: String = "NSExtension") -> [UInt8] {
        var objects: [[UInt8]] = [[0xD1, 1, 2], ascii(key)]
        for index in 0..<(levels - 1) {
            objects.append([0xA2, UInt8(index + 3), UInt8(index + 3)])
        }
        objects.append(integer(0))
        return assemble(objects)
    }

    /// Two arrays that hold each other.
    package static func cycle() -> [UInt8] { assemble([[0xA1, 1], [0xA1, 0]]) }

    /// An array of `references` (one-byte references).
    package static func array(_ references: [Int]) -> [UInt8] {
        precondition(references.count < 15)
        return [0xA0 | UInt8(references.count)] + references.map { UInt8($0) }
    }

    /// A one-byte integer object.
    package static func integer(_ value: UInt8) -> [UInt8] { [0x10, value] }

    /// An ASCII string object (fewer than 256 characters).
    package static func ascii(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        precondition(bytes.count < 256)
        return (bytes.count < 15 ? [0x50 | UInt8(bytes.count)] : [0x5F, 0x10, UInt8(bytes.count)]) + bytes
    }

    /// The tracker's second bomb shape: `{key: [leaf, leaf, ...]}`, one `leaf` object (a ``string(_:)``
    /// or ``data(_:)``) referenced `references` times. Its objects stay under the object limits while
    /// its strings and data expand to `references` times the leaf's length.
    ///
    /// ```swift
    /// let string = BinaryPlistBuilder.string(String(repeating: "a", count: 100_000))
    /// let bomb = BinaryPlistBuilder.sharedLeafBomb(string, references: 90_000)  // 460 KB; 9 GB decoded
    /// ```
    package static func sharedLeafBomb(
        _ leaf: [UInt8], references: Int, key: String = "NSAppTransportSecurity", referenceSize: Int = 4
    ) -> [UInt8] {
        let objects = [
            dictionary(keys: [1], values: [2], referenceSize: referenceSize), string(key),
            array([Int](repeating: 3, count: references), referenceSize: referenceSize), leaf,
        ]
        return assemble(objects, referenceSize: referenceSize, offsetSize: 4)
    }

    /// The marker of an object of `type` (the high nibble: 0x4 data, 0x5 ASCII, 0x6 UTF-16, 0xA array,
    /// 0xD dictionary) holding `count` elements: in the marker below 15, else in an integer that follows.
    package static func marker(_ type: UInt8, count: Int) -> [UInt8] {
        if count < 15 { return [type << 4 | UInt8(count)] }
        let size = count <= 0xFF ? 0 : count <= 0xFFFF ? 1 : count <= 0xFFFF_FFFF ? 2 : 3
        return [type << 4 | 0x0F, 0x10 | UInt8(size)] + bigEndian(UInt64(count), size: 1 << size)
    }

    /// A string object of any length: ASCII when `text` is, else UTF-16 (big-endian, as Foundation writes it).
    package static func string(_ text: String) -> [UInt8] {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return marker(0x5, count: text.utf8.count) + Array(text.utf8) }
        return marker(0x6, count: text.utf16.count) + text.utf16.flatMap { bigEndian(UInt64($0), size: 2) }
    }

    /// A data object.
    package static func data(_ bytes: [UInt8]) -> [UInt8] { marker(0x4, count: bytes.count) + bytes }

    /// An array of any number of `references`, each `referenceSize` bytes.
    package static func array(_ references: [Int], referenceSize: Int) -> [UInt8] {
        marker(0xA, count: references.count) + references.flatMap { reference($0, size: referenceSize) }
    }

    /// A dictionary: its `keys` (references to strings) and then its `values`, each `referenceSize` bytes.
    package static func dictionary(keys: [Int], values: [Int], referenceSize: Int) -> [UInt8] {
        precondition(keys.count == values.count)
        return marker(0xD, count: keys.count) + (keys + values).flatMap { reference($0, size: referenceSize) }
    }

    package static func reference(_ index: Int, size: Int) -> [UInt8] { bigEndian(UInt64(index), size: size) }

    package static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
