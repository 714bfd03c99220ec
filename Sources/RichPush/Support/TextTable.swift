/// A plain-text table with aligned columns, for terminals and CI logs.
///
/// ```swift
/// var table = TextTable(["PAYLOAD", "VERDICT"], rightAligned: [])
/// table.append(["image-jpg.json", "attached"])
/// print(table.rendered)
/// ```
package struct TextTable: Sendable {
    package let headers: [String]
    package let rightAligned: Set<Int>
    package private(set) var rows: [[String]] = []

    package init(_ headers: [String], rightAligned: Set<Int> = []) {
        self.headers = headers
        self.rightAligned = rightAligned
    }

    package mutating func append(_ row: [String]) {
        rows.append(row)
    }

    /// The table as text, one line per row, columns separated by two spaces, no trailing spaces.
    package var rendered: String {
        let all = [headers] + rows
        let widths = headers.indices.map { column in
            all.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        return all.map { row in
            headers.indices.map { column -> String in
                let cell = column < row.count ? row[column] : ""
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ").trimmingTrailingSpaces
        }.joined(separator: "\n")
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
