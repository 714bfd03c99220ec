import RichPush
import Testing

/// The ``SetupError`` `body` throws, or nil when it throws nothing (any other error fails the test).
public func setupError(_ body: () throws -> Void) -> SetupError? {
    do {
        try body()
        return nil
    } catch let error as SetupError {
        return error
    } catch {
        Issue.record("not a SetupError: \(error)")
        return nil
    }
}
