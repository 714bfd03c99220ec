/// Why something could not be stored.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
