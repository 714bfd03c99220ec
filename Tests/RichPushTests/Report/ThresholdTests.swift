import RichPush
import RichPushRuns
import Testing

/// The threshold grammar: metrics, operators, numbers and units, and the typed error that lists the metrics.
@Suite struct ThresholdTests {
    @Test(arguments: [
        ("display>=99%", GateKind.bench, "display>=99%", 99.0),
        (" display >= 99.5 % ", .bench, "display>=99.5%", 99.5),
        ("p95<800ms", .bench, "p95<800ms", 800),
        ("p99<=1.5s", .bench, "p99<=1500ms", 1500),
        ("p50 < 20", .bench, "p50<20ms", 20),
        ("http_5xx<1%", .bench, "http_5xx<1%", 1),
        ("http_4xx!=0%", .bench, "http_4xx!=0%", 0),
        ("errors<=2.25%", .bench, "errors<=2.25%", 2.25),
        ("would_crash==0", .batch, "would_crash==0", 0),
        ("configuration_error>3", .batch, "configuration_error>3", 3),
        ("not_run==0", .bench, "not_run==0", 0),
        ("reason:too-many-open-files==0", .batch, "reason:too-many-open-files==0", 0),
        ("reason:http-status<=12", .bench, "reason:http-status<=12", 12),
        // k6's spellings.
        ("p(95)<200", .bench, "p95<200ms", 200),
        ("p(99) <= 1.5s", .bench, "p99<=1500ms", 1500),
        ("rate<0.01", .bench, "errors<1%", 1),
        ("rate<0.01", .batch, "errors<1%", 1),
        ("display:rate>=0.99", .bench, "display>=99%", 99),
        ("display: rate >= 0.995", .batch, "display>=99.5%", 99.5),
        ("http_5xx:rate<0.001", .bench, "http_5xx<0.1%", 0.1),
    ])
    func readsTheGrammar(_ text: String, _ kind: GateKind, _ expression: String, _ limit: Double) throws {
        let threshold = try Threshold(parsing: text, for: kind)
        #expect(threshold.expression == expression)
        #expect(threshold.limit == limit)
        // The canonical text reads back as the same threshold.
        #expect(try Threshold(parsing: threshold.expression, for: kind) == threshold)
    }

    @Test(arguments: [
        ("", "needs a metric"),
        (">=99%", "needs a metric"),
        ("display", "needs a metric"),
        ("dispaly>=99%", "names no metric 'dispaly'"),
        ("p99<800ms", "names no metric 'p99'"),  // batch has no latency metric
        ("reason:no-such-code==0", "names no metric 'reason:no-such-code'"),
        ("display=>99%", "has no operator"),
        ("display=99%", "has no operator"),
        ("display>=", "needs a number"),
        ("display>=.5%", "needs a number"),
        ("display>=1.2.3%", "needs a number"),
        ("display>=-1%", "needs a number"),
        ("display>=99", "give it in percent"),
        ("display>=0.99", "give it in percent"),
        ("display>=101%", "0% to 100%"),
        ("would_crash==0%", "is a count"),
        ("would_crash<=1.5", "whole number"),
        ("display>=1e2%", "give it in percent"),
    ])
    func refusesWithTheMetricsListed(_ text: String, _ says: String) {
        let kind: GateKind = text.hasPrefix("p99") ? .batch : .bench
        let error = #expect(throws: ThresholdError.self) { try Threshold(parsing: text, for: kind) }
        #expect(error?.message.contains(says) == true, "\(String(describing: error?.message))")
        #expect(error?.message.contains("metrics: display") == true)
        #expect(error?.message.contains("--") == false, "library text names no flag")
    }

    @Test func durationsTakeMillisecondsOrSecondsOnly() {
        for text in ["p95<800us", "p95<1m", "p95<2%"] {
            let error = #expect(throws: ThresholdError.self) { try Threshold(parsing: text, for: .bench) }
            #expect(error?.message.contains("give it in ms or s") == true, "\(text)")
        }
        #expect(throws: ThresholdError.self) { try Threshold(parsing: "p95<86401s", for: .bench) }
    }

    @Test func aHostileStringCostsNothingAndIsShownSafely() {
        let long = String(repeating: "display>=", count: 100)
        let error = #expect(throws: ThresholdError.self) { try Threshold(parsing: long, for: .bench) }
        #expect(error?.message.contains("longer than 200") == true)
        let control = #expect(throws: ThresholdError.self) {
            try Threshold(parsing: "dis\u{1b}[2Jplay>=1%", for: .bench)
        }
        #expect(control?.message.contains("\u{1b}") == false)
    }

    @Test func comparisonsHoldAsWritten() {
        #expect(Threshold.Comparison.greaterOrEqual.holds(99.0000000001, 99.0000000002))
        #expect(!Threshold.Comparison.greaterOrEqual.holds(98.9, 99))
        #expect(Threshold.Comparison.less.holds(0.5, 1) && !Threshold.Comparison.less.holds(1, 1))
        #expect(Threshold.Comparison.lessOrEqual.holds(1, 1) && !Threshold.Comparison.lessOrEqual.holds(1.1, 1))
        #expect(Threshold.Comparison.greater.holds(0.1, 0) && !Threshold.Comparison.greater.holds(0, 0))
        #expect(Threshold.Comparison.equal.holds(0, 0) && !Threshold.Comparison.equal.holds(1, 0))
        #expect(Threshold.Comparison.notEqual.holds(1, 0) && !Threshold.Comparison.notEqual.holds(0, 0))
    }
}

/// What k6's spellings cannot mean is refused as any other text is.
@Suite struct K6ThresholdTests {
    @Test(arguments: ["p(97)<200", "rate<1.5", "rate<", "rate<-0.1", "display:rate>=99%", "p()<5", "p(95"])
    func refusesWhatItCannotRead(text: String) {
        #expect(throws: ThresholdError.self) { try Threshold(parsing: text, for: .bench) }
    }
}
