import Glibc

extension SystemCall {
    /// The name of an entry `readdir` returned, read where it lies in the stream's buffer.
    ///
    /// glibc's records are only as long as their name (`d_reclen`), not `sizeof(dirent)`: copying
    /// the entry or its 256-byte `d_name` reads past a short last record, and past the end of the
    /// buffer when that record ends at a page boundary (a crash seen reading `/proc/self/fd`).
    /// Only the record's own bytes are read here, up to its NUL.
    package static func entryName(_ entry: UnsafePointer<dirent>) -> [UInt8] {
        let raw = UnsafeRawPointer(entry)
        guard let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name),
            let lengthOffset = MemoryLayout<dirent>.offset(of: \dirent.d_reclen)
        else { return [] }
        let recordLength = Int(raw.load(fromByteOffset: lengthOffset, as: UInt16.self))
        let room = max(0, recordLength - nameOffset)
        let name = raw.advanced(by: nameOffset).assumingMemoryBound(to: UInt8.self)
        var length = 0
        while length < room, name[length] != 0 { length += 1 }
        return Array(UnsafeBufferPointer(start: name, count: length))
    }
}
