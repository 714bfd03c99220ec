extension ProcessResult {
    /// The request `bytes` composed, then the composed payload run through `service` under the push type
    /// it composed into; a request Braze would refuse is `rejected` with `request-refused` and Braze's words.
    ///
    /// `name` is the request's file (or batch item) as the outcome's `composed.request` names it.
    package static func composing(_ bytes: [UInt8], name: String, with service: ServiceExtension) async -> ProcessResult
    {
        switch Composer.compose(bytes) {
        case .success(let push):
            var result = await service.pushing(push.headers.pushType).process(push.bytes)
            result.keep(Composition(request: name, push: push))
            return result
        case .failure(let refusal):
            return refused(refusal, bytes: bytes.count)
        }
    }

    /// The outcome of a request Braze would refuse: nothing is delivered, so there is no payload.
    public static func refused(_ refusal: ComposeRefusal, bytes: Int) -> ProcessResult {
        let message =
            (refusal.status.map { "Braze would answer \($0)" } ?? "the request is refused")
            + (refusal.brazeMessage.map { " \"\($0)\"" } ?? "") + ": " + refusal.detail
        let outcome = Outcome(
            verdict: .rejected, reason: .requestRefused, message: message, hint: refusal.hint, payloadBytes: bytes)
        return ProcessResult(outcome: outcome, mutatedPayload: nil)
    }

    /// Keeps what the payload was composed from in the outcome and in the payload's `richpush` object.
    package mutating func keep(_ composition: Composition) {
        outcome.composed = composition
        guard mutatedPayload != nil else { return }
        let bytes = Array(composition.payload.utf8)
        mutatedPayload = PayloadText.inserting(
            key: "richpush", value: outcome.payloadSummary, into: bytes, isEmpty: bytes == Array("{}".utf8))
    }
}
