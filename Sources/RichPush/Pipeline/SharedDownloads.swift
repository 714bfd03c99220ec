import Foundation

/// Downloads each URL once per run and lets every payload that names it use the same bytes.
///
/// For `richpush batch --share-downloads`: payloads still get their own verdicts (their own declared
/// type, cap and validation) but the asset host sees one request per URL. The first payload to ask
/// for a URL downloads it, with its own deadline, into a hidden cache file in the store; the others
/// wait for that download and get a hard link to the same file. The download runs with the largest
/// class cap (movie); each payload then applies the cap of its own declared class.
public actor SharedDownloads {
    public typealias Entry = Result<(path: String, result: FetchResult), FetchError>

    private let engine: FetchEngine
    private let store: AttachmentStore
    private var entries: [String: Task<Entry, Never>] = [:]
    private var files: [String] = []

    public init(engine: FetchEngine, store: AttachmentStore) {
        self.engine = engine
        self.store = store
    }

    /// The shared download of `request.url`, starting it if this is the first ask.
    public func download(_ request: FetchRequest) async -> Entry {
        if let existing = entries[request.url] { return await existing.value }
        let engine = self.engine
        let store = self.store
        let task = Task { () -> Entry in
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
        entries[request.url] = task
        let entry = await task.value
        if case .success(let value) = entry { files.append(value.path) }
        return entry
    }

    /// Removes the cached files; payloads that attached them keep their own links.
    public func removeAll() {
        for path in files { unlink(path) }
        files.removeAll()
    }
}
