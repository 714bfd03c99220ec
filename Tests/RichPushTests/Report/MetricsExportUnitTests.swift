import Testing

@testable import RichPush
@testable import RichPushRuns

/// OpenMetrics' text rules: label values escaped, numbers as the format writes them, `# EOF` last.
@Suite struct MetricsExportUnitTests {
    @Test func escapesLabelsAndWritesNumbersAsTheFormatDoes() {
        let text = OpenMetrics.render([
            OpenMetrics.Family(
                name: "richpush_test", help: "A help\nwith a line break.",
                samples: [([("threshold", "a\"b\\c\nd")], 0.25), ([("threshold", "x")], 3)])
        ])
        #expect(text.contains(#"richpush_test{threshold="a\"b\\c\nd"} 0.25"#), "\(text)")
        #expect(text.contains("richpush_test{threshold=\"x\"} 3\n"))
        #expect(text.contains("# HELP richpush_test A help\\nwith a line break.\n"))
        #expect(text.hasSuffix("# EOF\n"))
        #expect(OpenMetrics.number(.nan) == "NaN" && OpenMetrics.number(-.infinity) == "-Inf")
        // A family without samples is left out, not written empty.
        #expect(OpenMetrics.render([OpenMetrics.Family(name: "richpush_none", help: "h", samples: [])]) == "# EOF\n")
    }

    /// A damaged report's count near Int64.max is written, not converted back to an integer (a trap).
    @Test func aHugeMeasuredValueNeverTraps() {
        let result = ThresholdResult(Threshold(.wouldCrash, .equal, 0), actual: Double(Int64.max))
        let lines = MarkdownSummary.thresholds([result])
        #expect(lines.last?.contains("9.223372036854776e+18") == true, "\(lines)")
    }

    @Test func markdownCellsCannotBreakTheTable() {
        #expect(MarkdownSummary.code("a|b`c\nd") == "a\\|b'c d")
    }
}
