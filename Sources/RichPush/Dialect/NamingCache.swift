import Synchronization

/// The last few names an SDK gave, by what it read: a campaign sends every device the same URL and
/// the server answers each alike, so a bench's devices would otherwise each parse the same
/// Content-Type and build the same name. Naming is a pure function of the dialect, the input and
/// the stand-in, so a remembered answer is the answer.
final class NamingCache: Sendable {
    private struct Entry {
        let dialect: Dialect
        let input: NamingInput
        let stand: String
        let naming: Naming
    }

    /// The most recent first; a handful covers a campaign's URL list's busiest entries.
    private let entries = Mutex<[Entry]>([])
    private static let capacity = 8

    /// `dialect`'s name for `input` (``Dialect/name(_:stand:)``), computed once per distinct input.
    func name(_ input: NamingInput, stand: String, dialect: Dialect) -> Naming {
        let found = entries.withLock { entries -> Naming? in
            guard
                let index = entries.firstIndex(where: {
                    $0.stand == stand && $0.input == input && $0.dialect == dialect
                })
            else { return nil }
            if index > 0 { entries.insert(entries.remove(at: index), at: 0) }
            return entries[0].naming
        }
        if let found { return found }
        let naming = dialect.name(input, stand: stand)
        entries.withLock { entries in
            entries.insert(Entry(dialect: dialect, input: input, stand: stand, naming: naming), at: 0)
            if entries.count > Self.capacity { entries.removeLast() }
        }
        return naming
    }
}
