import RichPush

/// "Did you mean": the closest known word to a mistyped one, by edit distance.
///
/// ```swift
/// Suggestion.closest(to: "--budgte", in: ["--budget", "--out"])  // "--budget"
/// ```
package enum Suggestion {
    /// The candidate nearest to `word`, when it is near enough to be what was meant.
    ///
    /// Near enough: at most a third of the word's letters differ (at least one), ignoring case and
    /// leading dashes. Ties go to the earlier candidate.
    package static func closest(to word: String, in candidates: [String]) -> String? {
        let typed = normalized(word)
        guard !typed.isEmpty else { return nil }
        let limit = max(1, typed.count / 3)
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(typed, normalized(candidate))
            if distance <= limit && distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// The Levenshtein distance between two strings, in characters (insert, delete, replace; and
    /// swapping two neighbours counts as one).
    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previousRow: [Int] = []
        var row = Array(0...b.count)
        for i in 1...a.count {
            let beforePrevious = previousRow
            previousRow = row
            row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                row[j] = min(previousRow[j] + 1, row[j - 1] + 1, previousRow[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], beforePrevious[j - 2] + 1)
                }
            }
        }
        return row[b.count]
    }

    private static func normalized(_ word: String) -> String {
        String(word.drop(while: { $0 == "-" })).lowercased()
    }
}
