/// From the send request a team writes to the APNs payload and headers the platform delivers.
///
/// Pure: request bytes in, a ``ComposedPush`` or a ``ComposeRefusal`` out, no I/O. Braze's
/// `/messages/send` body (or its `apple_push` object alone, or `{"apple_push": ...}`) by default;
/// OneSignal's and Airship's request bodies with `ComposeOptions/dialect`. Which rules are
/// documented and which inferred is `ComposeRule`'s table.
///
/// ```swift
/// switch Composer.compose(Array(#"{"broadcast":true,"messages":{"apple_push":{"alert":"Hi"}}}"#.utf8)) {
/// case .success(let push): print(push.payloadText, push.headerFields)
/// case .failure(let refusal): print(refusal.line)
/// }
/// ```
public enum Composer {
    /// The request read once, ready to compose for one user or many: its Liquid is parsed here, not per user.
    public struct Request: Sendable {
        let root: JSONValue
        let options: ComposeOptions
        /// Braze's `apple_push` with its Liquid parsed; nil for the other dialects, or without one.
        let document: Liquid.Document?
        /// What `document`'s Liquid reads of a user, found once (``renderingKey(for:)``).
        let readAttributes: Liquid.Document.ReadAttributes?

        init(root: JSONValue, options: ComposeOptions) {
            self.root = root
            self.options = options
            document = options.dialect == .braze ? BrazeComposer.document(of: root) : nil
            readAttributes = document?.readAttributes
        }
    }

    /// Composes one request's bytes (for no user: Liquid is reported, not rendered) as the platform
    /// `dialect` would deliver it; `dashboard`: the message comes from a dashboard campaign, whose
    /// limits differ (APNs' 4,096 bytes instead of the REST API's 1,912).
    public static func compose(_ bytes: [UInt8], dialect: ComposeDialect = .braze, dashboard: Bool = false)
        -> Result<ComposedPush, ComposeRefusal>
    {
        compose(bytes, options: ComposeOptions(dialect: dialect, dashboard: dashboard))
    }

    /// Reads the request's JSON; a refusal when it is not JSON.
    package static func read(_ bytes: [UInt8], options: ComposeOptions = ComposeOptions()) -> Result<
        Request, ComposeRefusal
    > {
        do {
            return .success(Request(root: try JSONValue.parse(bytes), options: options))
        } catch {
            let status = options.dialect == .braze ? 400 : nil
            return .failure(
                ComposeRefusal(
                    .invalidJSON, status: status, brazeMessage: status == nil ? nil : "Bad Request",
                    detail: "the request is not JSON (\(error)).",
                    hint: "A doc example with trailing commas or comments is not JSON; fix it and run again."))
        }
    }

    /// The request composed for one user (`nil`: Liquid is reported, not rendered).
    ///
    /// Liquid renders against Braze's size limit: once the texts it writes into the payload pass
    /// it, rendering stops and the refusal is the size check's, so a short template and a long
    /// value cost no more than the limit.
    package static func compose(_ request: Request, user: JSONValue? = nil) -> Result<ComposedPush, ComposeRefusal> {
        switch request.options.dialect {
        case .braze: braze(request, user: user)
        case .onesignal: OneSignalComposer.compose(request.root)
        case .airship: AirshipComposer.compose(request.root)
        }
    }

    /// ``compose(_:user:)`` with no limit on what Liquid renders, for the fuzz target: wherever this
    /// composes a push within the limits, ``compose(_:user:)`` must compose the same one.
    package static func composeRenderingWhole(_ request: Request, user: JSONValue?) -> Result<
        ComposedPush, ComposeRefusal
    > {
        request.options.dialect == .braze
            ? braze(request, user: user, renderingLimit: .max) : compose(request, user: user)
    }

    /// Braze's composition without looking for cancellation.
    private static func braze(_ request: Request, user: JSONValue?, renderingLimit: Int? = nil) -> Result<
        ComposedPush, ComposeRefusal
    > {
        let composed = BrazeComposer.compose(
            request.root, document: request.document, options: request.options, user: user, checksCancellation: false,
            renderingLimit: renderingLimit)
        // Never nil: only a composition that looks for cancellation gives up.
        return composed ?? .failure(ComposeRefusal(.notARequest, status: nil, brazeMessage: nil, detail: "cancelled."))
    }

    /// ``compose(_:user:)`` that gives up once the current task is cancelled (rendering looks
    /// every 1,024 Liquid tags): nil then. For a loop over many users that a signal must stop.
    package static func composeUnlessCancelled(_ request: Request, user: JSONValue?) -> Result<
        ComposedPush, ComposeRefusal
    >? {
        if Task.isCancelled { return nil }
        guard request.options.dialect == .braze else { return compose(request, user: user) }
        return BrazeComposer.compose(
            request.root, document: request.document, options: request.options, user: user, checksCancellation: true)
    }

    /// Reads and composes `bytes` in one step.
    package static func compose(
        _ bytes: [UInt8], options: ComposeOptions, user: JSONValue? = nil
    ) -> Result<ComposedPush, ComposeRefusal> {
        read(bytes, options: options).flatMap { compose($0, user: user) }
    }

    /// The users of a `--user` file: one JSON object, or NDJSON (one object per line; blank lines skipped).
    package static func users(_ bytes: [UInt8]) -> Result<[JSONValue], ComposeRefusal> {
        if let whole = try? JSONValue.parse(bytes) {
            guard case .object = whole else {
                return .failure(
                    ComposeRefusal(
                        .notARequest, status: nil, brazeMessage: nil,
                        detail: "the user file holds \(whole.typeName), not an object of attributes.",
                        hint: "Write one object per user, one per line: {\"first_name\": \"Ada\"}."))
            }
            return .success([whole])
        }
        var users: [JSONValue] = []
        for (number, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated()
        {
            let text = line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : Array(line)
            guard text.contains(where: { ![0x20, 0x09].contains($0) }) else { continue }
            do {
                let user = try JSONValue.parse(text)
                guard case .object = user else { throw JSONParseError(offset: 0, reason: "not an object") }
                users.append(user)
            } catch {
                return .failure(
                    ComposeRefusal(
                        .notARequest, status: nil, brazeMessage: nil,
                        detail: "line \(number + 1) of the user file is not a JSON object of attributes (\(error)).",
                        hint: "One JSON object per user, one per line."))
            }
        }
        guard !users.isEmpty else {
            return .failure(
                ComposeRefusal(.notARequest, status: nil, brazeMessage: nil, detail: "the user file holds no user."))
        }
        return .success(users)
    }
}
