import RichPush
import RichPushServices
import TestSupport
import Testing

/// `analytics record`'s command line: `KEY=VALUE` fields and the records they make, in order.
@Suite struct PendingRecordCommandLineTests {
    /// Messages spell settings as the command line does, as users read them.
    init() { useCommandLineSpelling() }

    @Test func aFieldIsKeyEqualsValueWithItsJSONType() throws {
        let count = try SuiteEntry.Field(keyValue: "count=42")
        #expect(count == SuiteEntry.Field(key: "count", value: AnalyticsValue(commandLine: "42")))
        #expect(count.value != .string("42"))
        // Only the first '=' splits: the value may hold more.
        #expect(try SuiteEntry.Field(keyValue: "q=a=b").value == .string("a=b"))
        #expect(try SuiteEntry.Field(keyValue: "empty=").key == "empty")
        for text in ["novalue", "=x", ""] {
            #expect(isUsage(setupError { _ = try SuiteEntry.Field(keyValue: text) }, "'\(text)' is not KEY=VALUE"))
        }
    }

    @Test func recordsComeInOrderAndPropertiesNeedAnEvent() throws {
        let property = SuiteEntry.Field(key: "source", value: .string("push"))
        let attribute = SuiteEntry.Field(key: "tier", value: .string("gold"))
        let records = try PendingRecord.records(
            event: "opened", properties: [property], attributes: [attribute], email: "a@b.c")
        #expect(
            records == [
                .event(name: "opened", properties: [property]), .customAttribute(key: "tier", value: .string("gold")),
                .email("a@b.c"),
            ])
        #expect(
            try PendingRecord.records(event: nil, properties: [], attributes: [], email: "a@b.c") == [.email("a@b.c")])
        #expect(
            isUsage(
                setupError { _ = try PendingRecord.records(event: nil, properties: [], attributes: [], email: nil) },
                "nothing to record: give --event NAME, --attribute K=V or --email ADDRESS"))
        #expect(
            isUsage(
                setupError {
                    _ = try PendingRecord.records(event: nil, properties: [property], attributes: [], email: nil)
                }, "--property belongs to an event: give --event NAME too"))
    }
}
