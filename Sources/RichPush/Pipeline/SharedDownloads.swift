import Foundation
import POSIXKit
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
///
/// The decisions (who downloads, who waits, what is kept) are ``SharedDownloadsMachine``'s; this
/// class holds it under a lock with the continuations and download tasks it names, and performs
/// what it returns.
package final class SharedDownloads: Sendable {
    package typealias Entry = Result<(path: String, result: FetchResult), FetchError>

    /// What a waiter receives: the entry, and whether a download started by another payload produced it.
    private typealias Delivery = (entry: Entry, fromOther: Bool)

    typealias Machine = SharedDownloadsMachine<Entry>

    /// The machine, and the continuations and tasks its waiter ids and generations name.
    private struct State {
        var machine: Machine
        var continuations: [UInt64: CheckedContinuation<Delivery, Never>] = [:]
        var tasks: [UInt64: Task<Void, Never>] = [:]
    }

    private let engine: FetchEngine
    private let store: AttachmentStore
    private let state: Mutex<State>

    /// Shares downloads into `store`, keeping at most `keptLimit` outcomes for later payloads.
    package init(engine: FetchEngine, store: AttachmentStore, keptLimit: Int = 1024) {
        self.engine = engine
        self.store = store
        state = Mutex(State(machine: Machine(keptLimit: keptLimit)))
    }

    /// The shared download of `request.url`, starting it if no download of it is running or kept.
    @inline(never)
    package func download(_ request: FetchRequest) async -> Entry {
        let first = await attend(request)
        guard
            Machine.triesAgain(
                fromOther: first.fromOther, settlement: Self.settlement(first.entry), cancelled: Task.isCancelled,
                timeLeft: ContinuousClock.now < request.deadline)
        else { return first.entry }
        // Another payload's own failure (its deadline, say): try once more, with this payload's deadline.
        return await attend(request).entry
    }

    /// Waits for the kept outcome or the running download of the URL, starting one if there is none.
    private func attend(_ request: FetchRequest) async -> Delivery {
        let url = request.url
        let waiter = state.withLock { $0.machine.register() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Delivery, Never>) in
                let immediate = state.withLock { state -> Delivery? in
                    switch state.machine.attend(waiter, url: url) {
                    case .cancelled:
                        return (Self.cancelled(url), false)
                    case .kept(let entry):
                        return (entry, true)
                    case .wait:
                        state.continuations[waiter] = continuation
                    case .start(let generation):
                        state.continuations[waiter] = continuation
                        // The task only enqueues here; its last step (`finish`) takes this lock later.
                        state.tasks[generation] = Task { [self] in
                            let entry = await perform(request)
                            finish(url, generation: generation, entry: entry)
                        }
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
            let action = state.machine.leave(waiter, url: url)
            let continuation = action.resumeCancelled ? state.continuations.removeValue(forKey: waiter) : nil
            return (continuation, action.cancelDownload.flatMap { state.tasks[$0] })
        }
        task?.cancel()
        continuation?.resume(returning: (Self.cancelled(url), false))
    }

    /// Hands a finished download to its waiters (the machine keeps it when it depends on the URL alone).
    private func finish(_ url: String, generation: UInt64, entry: Entry) {
        let settlement = Self.settlement(entry)
        let resumes = state.withLock { state -> [(CheckedContinuation<Delivery, Never>, Bool)]? in
            state.tasks[generation] = nil
            switch state.machine.finish(url, generation: generation, entry: entry, settlement: settlement) {
            case .discard:
                return nil
            case .deliver(let deliveries):
                return deliveries.compactMap { delivery in
                    state.continuations.removeValue(forKey: delivery.waiter).map { ($0, delivery.fromOther) }
                }
            }
        }
        guard let resumes else {
            // Abandoned (every waiter left): nobody will link the file.
            if case .downloaded(let file) = settlement { unlink(file) }
            return
        }
        for (continuation, fromOther) in resumes {
            continuation.resume(returning: (entry, fromOther))
        }
    }

    /// What the machine needs to know of an entry.
    static func settlement(_ entry: Entry) -> Machine.Settlement {
        switch entry {
        case .success(let value): .downloaded(file: value.path)
        case .failure(let error): .failed(error.code)
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
    package func removeAll() async {
        let (files, tasks) = state.withLock { state -> ([String], [Task<Void, Never>]) in
            let removal = state.machine.removeAll()
            return (removal.files, removal.cancel.compactMap { state.tasks[$0] })
        }
        for task in tasks { task.cancel() }
        for path in files { unlink(path) }
    }
}
