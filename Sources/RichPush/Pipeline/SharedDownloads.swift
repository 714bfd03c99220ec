import Foundation
import Synchronization

/// Downloads each URL once per run and lets every payload that names it use the same bytes.
///
/// For a batch that shares downloads: payloads still get their own verdicts (their own declared
/// type, cap and validation) but the asset host sees one request per URL. The first payload to ask
/// for a URL downloads it, with its own deadline, into a hidden cache file in the store; the others
/// wait for that download and get a hard link to the same file. The download runs with the largest
/// class cap (movie); each payload then applies the cap of its own declared class.
///
/// Waiting is cancellable: a cancelled waiter returns `cancelled` at once, and the download itself
/// is cancelled when its last waiter has gone (so cancelling the batch ends it). Only outcomes that
/// depend on the URL alone are kept for later payloads: a success, or a failure such as
/// `http-status`, `too-large` or `tls-failed`. A failure that belongs to the payload that started the
/// download (its deadline, its cancellation, a stopped engine, a full disk, or a network hiccup)
/// is handed to the payloads waiting at that moment and then forgotten; a waiter that still has time
/// tries once more with its own deadline, and a later payload downloads again.
public final class SharedDownloads: Sendable {
    public typealias Entry = Result<(path: String, result: FetchResult), FetchError>

    /// What a waiter receives: the entry, and whether a download started by another payload produced it.
    private typealias Delivery = (entry: Entry, fromOther: Bool)

    /// One URL's download in flight: its generation (the id of the waiter that started it) and who waits.
    private struct Running {
        var generation: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: CheckedContinuation<Delivery, Never>] = [:]
    }

    private enum Slot {
        case running(Running)
        case finished(Entry)
    }

    private struct State {
        var slots: [String: Slot] = [:]
        var nextWaiter: UInt64 = 0
        /// Waiters given an id but not yet registered (cancellation can arrive in between).
        var pending: Set<UInt64> = []
        /// Pending waiters whose task was cancelled before they registered.
        var cancelledEarly: Set<UInt64> = []
        var files: [String] = []
    }

    private let engine: FetchEngine
    private let store: AttachmentStore
    private let state = Mutex(State())

    public init(engine: FetchEngine, store: AttachmentStore) {
        self.engine = engine
        self.store = store
    }

    /// Whether a failure depends on the URL alone, so every payload naming the URL would get it too.
    static func dependsOnURLAlone(_ code: FetchError.Code) -> Bool {
        switch code {
        case .invalidURL, .invalidHostMapping, .schemeNotAllowed, .redirectNotAllowed, .tooManyRedirects, .dnsFailed,
            .connectFailed, .tlsFailed, .tooLarge, .httpStatus, .protocolError:
            return true
        default:
            return false
        }
    }

    /// The shared download of `request.url`, starting it if no download of it is running or kept.
    @inline(never)
    public func download(_ request: FetchRequest) async -> Entry {
        let first = await attend(request)
        guard first.fromOther, case .failure(let error) = first.entry, !Self.dependsOnURLAlone(error.code),
            !Task.isCancelled, ContinuousClock.now < request.deadline
        else { return first.entry }
        // Another payload's own failure (its deadline, say): try once more, with this payload's deadline.
        return await attend(request).entry
    }

    /// Waits for the kept outcome or the running download of the URL, starting one if there is none.
    private func attend(_ request: FetchRequest) async -> Delivery {
        let url = request.url
        let waiter = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            state.pending.insert(state.nextWaiter)
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Delivery, Never>) in
                let immediate = state.withLock { state -> Delivery? in
                    state.pending.remove(waiter)
                    if state.cancelledEarly.remove(waiter) != nil { return (Self.cancelled(url), false) }
                    switch state.slots[url] {
                    case .finished(let entry)?:
                        return (entry, true)
                    case .running(var running)?:
                        running.waiters[waiter] = continuation
                        state.slots[url] = .running(running)
                    case nil:
                        var running = Running(generation: waiter)
                        running.waiters[waiter] = continuation
                        // The task only enqueues here; its first step (`finish`) takes this lock later.
                        running.task = Task { [self] in
                            let entry = await perform(request)
                            finish(url, generation: waiter, entry: entry)
                        }
                        state.slots[url] = .running(running)
                    }
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            leave(url, waiter: waiter)
        }
    }

    /// A cancelled waiter stops waiting; the download is cancelled when it was the last one.
    private func leave(_ url: String, waiter: UInt64) {
        let (continuation, task) = state.withLock {
            state -> (CheckedContinuation<Delivery, Never>?, Task<Void, Never>?) in
            if state.pending.contains(waiter) {
                state.cancelledEarly.insert(waiter)
                return (nil, nil)
            }
            guard case .running(var running)? = state.slots[url],
                let continuation = running.waiters.removeValue(forKey: waiter)
            else { return (nil, nil) }
            if running.waiters.isEmpty {
                state.slots[url] = nil
                return (continuation, running.task)
            }
            state.slots[url] = .running(running)
            return (continuation, nil)
        }
        task?.cancel()
        continuation?.resume(returning: (Self.cancelled(url), false))
    }

    /// Hands a finished download to its waiters, and keeps it when it depends on the URL alone.
    private func finish(_ url: String, generation: UInt64, entry: Entry) {
        let waiters = state.withLock { state -> [UInt64: CheckedContinuation<Delivery, Never>]? in
            guard case .running(let running)? = state.slots[url], running.generation == generation else { return nil }
            switch entry {
            case .success(let value):
                state.slots[url] = .finished(entry)
                state.files.append(value.path)
            case .failure(let error):
                state.slots[url] = Self.dependsOnURLAlone(error.code) ? .finished(entry) : nil
            }
            return running.waiters
        }
        guard let waiters else {
            // Abandoned (every waiter left): nobody will link the file.
            if case .success(let value) = entry { unlink(value.path) }
            return
        }
        for (waiter, continuation) in waiters {
            continuation.resume(returning: (entry, waiter != generation))
        }
    }

    /// Downloads into a temporary file and gives it a cache name in the store.
    private func perform(_ request: FetchRequest) async -> Entry {
        let temporary: TemporaryFile
        do throws(StoreError) { temporary = try store.makeTemporary() } catch {
            return .failure(FetchError(.storageFailed, error.message))
        }
        defer { temporary.discard() }
        do throws(FetchError) {
            let result = try await engine.fetch(request, writingTo: temporary.descriptor)
            let path = store.folder + "/.richpush-shared-" + UUID().uuidString.lowercased()
            guard link(temporary.path, path) == 0 else {
                return .failure(FetchError(.storageFailed, "cannot keep the shared download of \(request.url)"))
            }
            temporary.isLinked = true
            return .success((path, result))
        } catch {
            return .failure(error)
        }
    }

    private static func cancelled(_ url: String) -> Entry {
        .failure(FetchError(.cancelled, "the download of \(url) was cancelled"))
    }

    /// Cancels downloads still running and removes the cached files; payloads that attached them keep their own links.
    public func removeAll() async {
        let (files, tasks) = state.withLock { state -> ([String], [Task<Void, Never>]) in
            let files = state.files
            state.files.removeAll()
            let tasks = state.slots.values.compactMap { slot -> Task<Void, Never>? in
                if case .running(let running) = slot { return running.task }
                return nil
            }
            return (files, tasks)
        }
        for task in tasks { task.cancel() }
        for path in files { unlink(path) }
    }
}
