/// Checks the structure of a binary property list (`bplist00`) before Foundation decodes it.
///
/// Foundation trusts the file: a reference to an object already referenced elsewhere is decoded
/// again, so a few hundred bytes can expand to billions of objects, and every structural defect is
/// reported as the XML reader's "Unexpected character b". This walk reads the 32-byte trailer, the
/// offset table and every reachable object's header, and refuses the file with the real defect:
/// a bad trailer, an offset or a length out of range, a reference to an object that does not exist,
/// a reference cycle, a type Info.plist files and suites never hold, or more objects or more bytes
/// of strings and data than the limits once shared references are counted as many times as they
/// are reached.
///
/// The walk is linear in the file's size: each object's children are visited once, the expansion
/// of each finished object (its objects and the bytes of its strings and data) is kept, and no
/// recursion is used, so neither a long chain nor a wide fan-out costs more than the bytes that
/// describe it. A sum is checked as each reference is added, so a file is refused at the reference
/// that takes it past a limit: one large string referenced 90,000 times costs a few dozen additions.
///
/// ```swift
/// let expansion = try BinaryPropertyListValidator.validate(bytes, limits: .infoPlist)
/// ```
enum BinaryPropertyListValidator {
    /// What is wrong with the file: the error's code and a predicate for its message.
    struct Defect: Error, Equatable {
        var code: PropertyListError.Code
        var problem: String
    }

    /// The header every binary property list Foundation reads starts with.
    static let magic: [UInt8] = Array("bplist00".utf8)
    /// The header, one object of one byte, a one-byte offset table, and the trailer.
    static let minimumSize = 8 + 1 + 1 + 32

    /// The fields of the trailer, the file's last 32 bytes.
    struct Trailer: Equatable {
        var offsetSize: Int
        var referenceSize: Int
        var objectCount: Int
        var topObject: Int
        var offsetTableStart: Int
    }

    /// What the decoded value holds, each shared object counted once per reference.
    struct Expansion: Equatable {
        /// Every dictionary, key, value, array and element.
        var objects: Int
        /// The bytes of every string (dictionary keys included) and data object, as the file stores
        /// them: one per byte for data and ASCII strings, two per unit for UTF-16 strings.
        var bytes: Int
    }

    /// What one object is, as far as the walk needs: a leaf, or a container and its references.
    enum Shape: Equatable {
        /// `bytes`: a string's or data object's length as stored (see ``Expansion/bytes``); 0 for the others.
        case leaf(isString: Bool, bytes: Int)
        /// References start at `start`, `count` of them (a dictionary's keys first, then its values).
        case container(start: Int, count: Int, isDictionary: Bool)
    }

    /// Validates `bytes` within `limits`; returns what the decoded value holds.
    static func validate(_ bytes: [UInt8], limits: PropertyListLimits) throws(Defect) -> Expansion {
        let trailer = try readTrailer(bytes)
        // Every entry of the offset table is an object the decoded value holds at least once: refused
        // before the tables sized by it are allocated.
        guard trailer.objectCount <= limits.maximumObjects else { throw tooMany(limits.maximumObjects) }
        let offsets = try readOffsets(bytes, trailer)
        return try expand(bytes, trailer, offsets, limits: limits)
    }

    // MARK: - Trailer and offset table

    static func readTrailer(_ bytes: [UInt8]) throws(Defect) -> Trailer {
        guard bytes.count >= minimumSize else {
            throw malformed(
                "is \(bytes.count) bytes, too short for a binary property list (its header and trailer alone are 40)")
        }
        let base = bytes.count - 32
        let offsetSize = Int(bytes[base + 6])
        let referenceSize = Int(bytes[base + 7])
        let objectCount = readUnsigned(bytes, at: base + 8, size: 8)
        let topObject = readUnsigned(bytes, at: base + 16, size: 8)
        let tableStart = readUnsigned(bytes, at: base + 24, size: 8)
        guard (1...8).contains(offsetSize) else { throw badTrailer("its offsets are \(offsetSize) bytes (1 to 8)") }
        guard (1...8).contains(referenceSize) else {
            throw badTrailer("its object references are \(referenceSize) bytes (1 to 8)")
        }
        guard objectCount >= 1 else { throw badTrailer("it holds no objects") }
        guard topObject < objectCount else {
            throw badTrailer("its top object is \(topObject), but it holds \(objectCount) objects")
        }
        // The offset table lies between the objects (which start after the 8-byte header) and the trailer.
        guard tableStart >= 9, tableStart < UInt64(base) else {
            throw malformed(
                "has an offset table out of range: it starts at \(tableStart), outside 9..<\(base) (the bad trailer "
                    + "of a truncated or damaged file)")
        }
        let (tableBytes, overflow) = objectCount.multipliedReportingOverflow(by: UInt64(offsetSize))
        let (tableEnd, overflowEnd) = tableStart.addingReportingOverflow(tableBytes)
        guard !overflow, !overflowEnd, tableEnd <= UInt64(base) else {
            throw malformed(
                "has an offset table out of range: \(objectCount) offsets of \(offsetSize) bytes from \(tableStart) "
                    + "run past the trailer at \(base)")
        }
        // Both fit in Int: they are at most the file's size.
        return Trailer(
            offsetSize: offsetSize, referenceSize: referenceSize, objectCount: Int(objectCount),
            topObject: Int(topObject), offsetTableStart: Int(tableStart))
    }

    /// Every object's offset, each checked to lie among the objects (after the header, before the table).
    static func readOffsets(_ bytes: [UInt8], _ trailer: Trailer) throws(Defect) -> [Int] {
        var offsets: [Int] = []
        offsets.reserveCapacity(trailer.objectCount)
        for index in 0..<trailer.objectCount {
            let offset = readUnsigned(
                bytes, at: trailer.offsetTableStart + index * trailer.offsetSize, size: trailer.offsetSize)
            guard offset >= 8, offset < UInt64(trailer.offsetTableStart) else {
                throw malformed(
                    "has object \(index) at offset \(offset), outside the objects (8..<\(trailer.offsetTableStart))")
            }
            offsets.append(Int(offset))
        }
        return offsets
    }

    // MARK: - Objects

    /// Reads the header of object `index` at `offset`: its type, its length, and where it ends.
    static func shape(_ bytes: [UInt8], _ trailer: Trailer, index: Int, offset: Int) throws(Defect) -> Shape {
        let end = trailer.offsetTableStart
        let marker = bytes[offset]
        let low = Int(marker & 0x0F)
        func leaf(_ payload: Int) throws(Defect) -> Shape {
            try requireExtent(index: index, offset: offset, length: 1 + payload, end: end)
            return .leaf(isString: false, bytes: 0)
        }
        switch marker >> 4 {
        case 0x0:
            // null, false, true, fill.
            guard [0x0, 0x8, 0x9, 0xF].contains(low) else { throw unknownMarker(index, marker) }
            return .leaf(isString: false, bytes: 0)
        case 0x1:
            guard low <= 3 else {
                throw Defect(
                    code: .unsupported,
                    problem: "holds an integer wider than 64 bits (object \(index)), which no Info.plist or suite holds"
                )
            }
            return try leaf(1 << low)
        case 0x2:
            guard low == 2 || low == 3 else { throw unknownMarker(index, marker) }
            return try leaf(1 << low)
        case 0x3:
            guard low == 3 else { throw unknownMarker(index, marker) }
            return try leaf(8)
        case 0x4, 0x5, 0x6:
            let (count, header) = try length(bytes, index: index, offset: offset, end: end)
            let (payload, overflow) = count.multipliedReportingOverflow(by: marker >> 4 == 0x6 ? 2 : 1)
            guard !overflow else { throw outOfObjects(index, offset, end) }
            let (length, overflowLength) = header.addingReportingOverflow(payload)
            guard !overflowLength else { throw outOfObjects(index, offset, end) }
            try requireExtent(index: index, offset: offset, length: length, end: end)
            // Data, ASCII and UTF-16: the payload is the bytes Foundation copies into the decoded object.
            return .leaf(isString: marker >> 4 != 0x4, bytes: payload)
        case 0xA, 0xD:
            let isDictionary = marker >> 4 == 0xD
            let (count, header) = try length(bytes, index: index, offset: offset, end: end)
            let (references, overflow) = count.multipliedReportingOverflow(by: isDictionary ? 2 : 1)
            let (payload, overflowPayload) = references.multipliedReportingOverflow(by: trailer.referenceSize)
            let (length, overflowLength) = header.addingReportingOverflow(payload)
            guard !overflow, !overflowPayload, !overflowLength else { throw outOfObjects(index, offset, end) }
            try requireExtent(index: index, offset: offset, length: length, end: end)
            return .container(start: offset + header, count: references, isDictionary: isDictionary)
        case 0x8:
            throw Defect(
                code: .unsupported,
                problem: "holds a keyed-archive UID (object \(index)), which no Info.plist or suite holds")
        case 0xB, 0xC:
            throw Defect(
                code: .unsupported, problem: "holds a set (object \(index)), which no Info.plist or suite holds")
        default:
            throw unknownMarker(index, marker)
        }
    }

    /// The element or byte count of a data, string, array or dictionary object, and the size of its header.
    ///
    /// A count below 15 is in the marker; 15 means an integer object follows with the real count.
    static func length(_ bytes: [UInt8], index: Int, offset: Int, end: Int) throws(Defect) -> (count: Int, header: Int)
    {
        let low = Int(bytes[offset] & 0x0F)
        guard low == 0x0F else { return (low, 1) }
        guard offset + 1 < end else { throw outOfObjects(index, offset, end) }
        let marker = bytes[offset + 1]
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
            throw malformed(
                "has object \(index) whose length is not an integer of 1 to 8 bytes (marker 0x\(hex(marker)))")
        }
        let size = 1 << Int(marker & 0x0F)
        try requireExtent(index: index, offset: offset, length: 2 + size, end: end)
        let count = readUnsigned(bytes, at: offset + 2, size: size)
        // A count beyond the file is never real; this also keeps every later product far from overflow.
        guard count <= UInt64(end) else {
            throw malformed("has object \(index) that claims \(count) elements, more than the file's \(end) bytes hold")
        }
        return (Int(count), 2 + size)
    }

    static func requireExtent(index: Int, offset: Int, length: Int, end: Int) throws(Defect) {
        let (last, overflow) = offset.addingReportingOverflow(length)
        guard !overflow, last <= end else { throw outOfObjects(index, offset, end) }
    }

    // MARK: - The expansion

    /// Walks every object reachable from the top, depth first without recursion, and sums the decoded
    /// value's objects and the bytes of its strings and data; refuses a reference out of range, a
    /// cycle, or a sum past a limit as soon as it passes.
    static func expand(_ bytes: [UInt8], _ trailer: Trailer, _ offsets: [Int], limits: PropertyListLimits)
        throws(Defect) -> Expansion
    {
        enum State: UInt8 { case unvisited, onPath, done }
        var state = [State](repeating: .unvisited, count: trailer.objectCount)
        // Each finished object's expansion, within the limits (a sum past one is refused at once).
        var totals = [Expansion](repeating: Expansion(objects: 0, bytes: 0), count: trailer.objectCount)
        struct Frame {
            var object: Int
            var start: Int
            var count: Int
            var keys: Int
            var next: Int
            var total: Expansion
        }

        /// Adds `part` to `total`: one addition per reference, whatever `part` holds.
        func add(_ part: Expansion, to total: inout Expansion) throws(Defect) {
            let (objects, overflowObjects) = total.objects.addingReportingOverflow(part.objects)
            guard !overflowObjects, objects <= limits.maximumObjects else { throw tooMany(limits.maximumObjects) }
            let (length, overflowBytes) = total.bytes.addingReportingOverflow(part.bytes)
            guard !overflowBytes, length <= limits.maximumExpandedBytes else { throw tooManyBytes(limits) }
            total = Expansion(objects: objects, bytes: length)
        }

        /// Starts `object`: a leaf is finished and returned; a container's frame goes on `path`.
        func push(_ object: Int, into path: inout [Frame]) throws(Defect) -> Expansion? {
            switch try shape(bytes, trailer, index: object, offset: offsets[object]) {
            case .leaf(_, let length):
                var leaf = Expansion(objects: 0, bytes: 0)
                try add(Expansion(objects: 1, bytes: length), to: &leaf)
                state[object] = .done
                totals[object] = leaf
                return leaf
            case .container(let start, let count, let isDictionary):
                guard path.count < PropertyListLimits.maximumDepth else {
                    throw malformed(
                        "nests arrays and dictionaries deeper than \(PropertyListLimits.maximumDepth) levels "
                            + "(at object \(object))")
                }
                state[object] = .onPath
                path.append(
                    Frame(
                        object: object, start: start, count: count, keys: isDictionary ? count / 2 : 0, next: 0,
                        total: Expansion(objects: 1, bytes: 0)))
                return nil
            }
        }

        var path: [Frame] = []
        if let leaf = try push(trailer.topObject, into: &path) { return leaf }
        while var frame = path.popLast() {
            if frame.next == frame.count {
                state[frame.object] = .done
                totals[frame.object] = frame.total
                guard var parent = path.popLast() else { break }
                try add(frame.total, to: &parent.total)
                path.append(parent)
                continue
            }
            let child = referenceAt(bytes, trailer, frame.start + frame.next * trailer.referenceSize)
            guard child < UInt64(trailer.objectCount) else {
                throw malformed("has object \(frame.object) that references object \(child) of \(trailer.objectCount)")
            }
            let object = Int(child)
            let isKey = frame.next < frame.keys
            frame.next += 1
            if isKey {
                guard case .leaf(isString: true, _) = try shape(bytes, trailer, index: object, offset: offsets[object])
                else {
                    throw malformed(
                        "has a dictionary (object \(frame.object)) whose key, object \(object), is not a string")
                }
            }
            switch state[object] {
            case .onPath:
                throw Defect(code: .referenceCycle, problem: "has a reference cycle at object \(object)")
            case .done:
                // A shared object already walked: its whole expansion again, in one addition.
                try add(totals[object], to: &frame.total)
                path.append(frame)
            case .unvisited:
                path.append(frame)
                if let leaf = try push(object, into: &path) {
                    try add(leaf, to: &path[path.count - 1].total)
                }
            }
        }
        return totals[trailer.topObject]
    }

    static func referenceAt(_ bytes: [UInt8], _ trailer: Trailer, _ position: Int) -> UInt64 {
        readUnsigned(bytes, at: position, size: trailer.referenceSize)
    }

    // MARK: - Helpers

    /// A big-endian unsigned integer of `size` (1 to 8) bytes at `position`; the caller checked the range.
    static func readUnsigned(_ bytes: [UInt8], at position: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for byte in bytes[position..<(position + size)] { value = value << 8 | UInt64(byte) }
        return value
    }

    static func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16)
        return text.count == 1 ? "0" + text : text
    }

    static func malformed(_ problem: String) -> Defect { Defect(code: .malformed, problem: problem) }

    static func badTrailer(_ why: String) -> Defect {
        malformed("is a binary property list with a bad trailer: \(why)")
    }

    static func unknownMarker(_ index: Int, _ marker: UInt8) -> Defect {
        malformed("has object \(index) of unknown type (marker 0x\(hex(marker)))")
    }

    static func outOfObjects(_ index: Int, _ offset: Int, _ end: Int) -> Defect {
        malformed(
            "has object \(index) at offset \(offset) that runs past the objects (the offset table starts at \(end))")
    }

    static func tooManyBytes(_ limits: PropertyListLimits) -> Defect {
        Defect(
            code: .tooManyExpandedBytes,
            problem: "expands to more than \(size(limits.maximumExpandedBytes)) of strings and data, the most "
                + "richpush reads for \(limits.kind) (each shared string or data object counted where it is "
                + "reached; Foundation would build every copy)")
    }

    /// `bytes` in MiB or KiB when it is a whole number of them ("4 MiB"), else in bytes.
    static func size(_ bytes: Int) -> String {
        if bytes > 0, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes > 0, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }

    static func tooMany(_ limit: Int) -> Defect {
        Defect(
            code: .tooManyObjects,
            problem: "expands to more than \(limit) objects (each shared reference counted where it is reached; "
                + "Foundation would build every copy)")
    }
}
