import CurlKit

/// What a failed download means, by its failure: the one table every part of richpush reads. A
/// transfer's failure (libcurl's, classified by CurlKit) becomes one ``FetchError/Code``, and each
/// code has its facts: the verdict and reason a payload gets, whether every download of the URL
/// would meet it, how far a request got, and whether the client (not the host) is to blame.
///
/// Every case is named, in both switches: a new failure or code does not compile until it has its
/// row here.
package struct FailureFacts: Sendable, Equatable {
    /// The verdict a payload gets.
    package var verdict: Verdict
    /// Its reason (the pipeline refines one: a redirect refused because it leads to http under App
    /// Transport Security is `ats-blocked`).
    package var reason: ReasonCode
    /// Whether the failure depends on the URL alone, so every payload naming it would meet it too
    /// (shared downloads reuse it); the others belong to the payload that met them (its deadline,
    /// its cancellation, the client's descriptors or disk, a network hiccup).
    package var dependsOnURLAlone: Bool
    /// How far the request got (the `/users/track` client retries only what surely never left).
    package var reach: Reach
    /// Whether the client is to blame, not the host or the payload (it ran out of descriptors).
    package var blamesClient = false

    /// How far a request got.
    package enum Reach: Sendable, Equatable {
        /// The endpoint answered (a status, a redirect included).
        case answered
        /// The request surely never left: no connection was set up.
        case neverLeft
        /// No answer, but the request may have left: the endpoint may have processed it.
        case maybeDelivered
    }
}

extension FetchError.Code.Kind {
    /// The code a transfer's failure is.
    package init(_ failure: TransferFailure) {
        switch failure {
        case .cancelled: self = .cancelled
        case .engineStopped: self = .engineStopped
        case .deadlineExceeded: self = .deadlineExceeded
        case .connectTimeout: self = .connectTimeout
        case .stalled: self = .stalled
        case .schemeRefused: self = .schemeNotAllowed
        case .redirectRefused: self = .redirectNotAllowed
        case .malformedURL: self = .invalidURL
        case .dnsFailed: self = .dnsFailed
        case .connectFailed: self = .connectFailed
        case .outOfDescriptors: self = .tooManyOpenFiles
        case .tlsFailed, .trustStoreUnreadable: self = .tlsFailed
        case .tooManyRedirects: self = .tooManyRedirects
        case .declaredTooLarge, .capExceeded: self = .tooLarge
        case .writeFailed: self = .storageFailed
        // A 3xx URLSession does not follow ends the task with that response: a status like any other.
        case .httpStatus, .redirect: self = .httpStatus
        case .truncated: self = .truncated
        case .connectionReset: self = .connectionReset
        case .protocolError, .headersTooLarge: self = .protocolError
        case .other: self = .transferFailed
        }
    }

    /// This code's facts.
    package var facts: FailureFacts {
        func row(
            _ verdict: Verdict, _ reason: ReasonCode, url: Bool, _ reach: FailureFacts.Reach, client: Bool = false
        ) -> FailureFacts {
            FailureFacts(verdict: verdict, reason: reason, dependsOnURLAlone: url, reach: reach, blamesClient: client)
        }
        return switch self {
        case .invalidURL: row(.fallback, .invalidURL, url: true, .neverLeft)
        case .invalidHostMapping: row(.fallback, .transferFailed, url: true, .neverLeft)
        case .schemeNotAllowed: row(.fallback, .schemeNotAllowed, url: true, .neverLeft)
        case .redirectNotAllowed: row(.fallback, .redirectNotAllowed, url: true, .maybeDelivered)
        case .tooManyRedirects: row(.fallback, .tooManyRedirects, url: true, .maybeDelivered)
        case .dnsFailed: row(.fallback, .dnsFailed, url: true, .neverLeft)
        case .connectFailed: row(.fallback, .connectFailed, url: true, .neverLeft)
        case .connectTimeout: row(.fallback, .connectTimeout, url: false, .neverLeft)
        case .tlsFailed: row(.fallback, .tlsFailed, url: true, .neverLeft)
        case .deadlineExceeded: row(.expired, .deadlineExceeded, url: false, .maybeDelivered)
        case .stalled: row(.fallback, .stalled, url: false, .maybeDelivered)
        case .tooLarge: row(.fallback, .fileTooLarge, url: true, .maybeDelivered)
        case .httpStatus: row(.fallback, .httpStatus, url: true, .answered)
        case .truncated: row(.fallback, .truncated, url: false, .maybeDelivered)
        case .connectionReset: row(.fallback, .connectionReset, url: false, .maybeDelivered)
        case .protocolError: row(.fallback, .protocolError, url: true, .maybeDelivered)
        case .storageFailed: row(.fallback, .storageFailed, url: false, .maybeDelivered)
        case .cancelled, .engineStopped: row(.expired, .cancelled, url: false, .maybeDelivered)
        case .transferFailed: row(.fallback, .transferFailed, url: false, .maybeDelivered)
        case .tooManyOpenFiles: row(.fallback, .tooManyOpenFiles, url: false, .neverLeft, client: true)
        case .atsBlocked: row(.fallback, .atsBlocked, url: false, .neverLeft)
        }
    }
}
