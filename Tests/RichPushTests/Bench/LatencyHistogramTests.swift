import RichPush
import RichPushRuns
import Testing

@Suite struct LatencyHistogramTests {
    @Test func keepsSmallValuesExact() {
        for value: UInt64 in [0, 1, 999, 2047] {
            #expect(LatencyHistogram.range(of: LatencyHistogram.index(of: value)) == value...value)
        }
    }

    @Test(arguments: [2048, 2049, 4095, 4096, 123_456, 1_000_000, 30_000_000, 3_600_000_000] as [UInt64])
    func bucketsLargeValuesWithinATenthOfAPercent(value: UInt64) {
        let range = LatencyHistogram.range(of: LatencyHistogram.index(of: value))
        #expect(range.contains(value))
        #expect(Double(range.upperBound - range.lowerBound) / Double(value) <= 1.0 / 1024)
    }

    @Test func indicesAreMonotonic() {
        var previous = -1
        for value in stride(from: UInt64(0), to: 10_000_000, by: 997) {
            let index = LatencyHistogram.index(of: value)
            #expect(index >= previous)
            previous = index
        }
    }

    @Test func reportsPercentiles() {
        var histogram = LatencyHistogram()
        for ms in 1...1000 { histogram.record(microseconds: UInt64(ms) * 1000) }
        #expect(histogram.count == 1000)
        #expect(abs(Double(histogram.value(atQuantile: 0.5)) - 500_000) < 500)
        #expect(abs(Double(histogram.value(atQuantile: 0.99)) - 990_000) < 1000)
        #expect(histogram.max == 1_000_000)
        #expect(histogram.value(atQuantile: 1) <= histogram.max)
    }

    @Test func mergingEqualsRecordingEverythingInOne() throws {
        var a = LatencyHistogram(), b = LatencyHistogram(), all = LatencyHistogram()
        for value in stride(from: UInt64(3), to: 5_000_000, by: 7919) {
            if value % 2 == 0 { a.record(microseconds: value) } else { b.record(microseconds: value) }
            all.record(microseconds: value)
        }
        try a.merge(b)
        #expect(a == all)
    }
}
