import Foundation
import RichPush

/// The sample payloads a demo runs and the verdicts `expected.tsv` expects of them.
///
/// ```swift
/// let samples = try DemoSamples(folder: "Samples")   // Samples/payloads/*.json, Samples/expected.tsv
/// ```
package struct DemoSamples: Sendable {
    /// The samples folder (`payloads/`, `assets/`, `certs/`, `expected.tsv`).
    package let folder: String
    /// The payload files' names, sorted.
    package private(set) var names: [String]
    package let expectations: SampleExpectations

    /// Reads the payload names and the expectations; no payloads is `unusable-input`.
    package init(folder: String) throws {
        let payloads = folder + "/payloads"
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: payloads).filter { $0.hasSuffix(".json") }
                .sorted()
        } catch {
            throw ConfigurationError(
                .unusableInput, "no payloads in '\(payloads)': give the Samples folder with \(Setting.samples) DIR")
        }
        expectations = try SampleExpectations(
            text: (try? String(contentsOfFile: folder + "/expected.tsv", encoding: .utf8)) ?? "")
        self.folder = folder
    }

    /// The folder of the payloads.
    package var payloadFolder: String { folder + "/payloads" }

    /// Only the samples written for `dialect` (``DialectDetection``): what `demo --sdk NAME` runs, so
    /// each still gets the verdict `expected.tsv` expects of it.
    package func written(for dialect: Dialect) -> DemoSamples {
        var copy = self
        copy.names = names.filter { name in
            let bytes = Array((try? Data(contentsOf: URL(fileURLWithPath: payloadFolder + "/" + name))) ?? Data())
            return DialectDetection.detect(try? JSONValue.parse(bytes)) == dialect
        }
        return copy
    }
}

/// A demo set up against the sample server: the extension's policy with the sample host mapped and
/// its CA trusted, the engine, and the store the attachments go to.
///
/// ```swift
/// let session = try DemoSession(samples: samples, policy: policy, keepFolder: nil, httpsPort: 8443, httpPort: 8080)
/// defer { session.close() }
/// let outcomes = await session.run()
/// ```
package struct DemoSession: Sendable {
    package let samples: DemoSamples
    /// The policy every payload runs under.
    package let policy: ExtensionPolicy
    /// The output folder, or nil: a temporary folder, removed by ``close()``.
    package let keepFolder: String?
    private let folder: String
    private let engine: FetchEngine
    private let store: AttachmentStore
    private let service: ServiceExtension

    /// Maps `cdn.example.com` to the sample server's ports and trusts the sample CA; the bundled
    /// sample app's personalized extension gets the key it reads (`cert_title`, Samples/app/README.md).
    package init(
        samples: DemoSamples, policy: ExtensionPolicy, keepFolder: String?, durable: Bool = false, httpsPort: Int,
        httpPort: Int
    ) throws {
        var policy = policy
        var samples = samples
        // Each sample names its SDK by its own keys (Samples/expected.tsv); `--sdk NAME` runs that SDK's samples.
        switch policy.dialect {
        case nil: policy.dialect = .auto
        case .fixed(let dialect)?: samples = samples.written(for: dialect)
        case .auto?: break
        }
        let app = URL(fileURLWithPath: samples.folder + "/app").standardizedFileURL.path + "/"
        if policy.requiredKeys.isEmpty,
            policy.app?.contentExtensions.contains(where: {
                URL(fileURLWithPath: $0.plist).standardizedFileURL.path.hasPrefix(app)
            }) == true
        {
            policy.requiredKeys = [RequiredKey(key: "cert_title", extensionName: "PersonalizedContent")]
        }
        policy.fetch.caFile = samples.folder + "/certs/ca.pem"
        policy.fetch.hostMappings += [
            HostMapping(host: "cdn.example.com", port: "443", targetHost: "127.0.0.1", targetPort: "\(httpsPort)"),
            HostMapping(host: "cdn.example.com", port: "80", targetHost: "127.0.0.1", targetPort: "\(httpPort)"),
        ]
        let folder = keepFolder ?? NSTemporaryDirectory() + "richpush-demo-\(UUID().uuidString)"
        engine = try FetchEngine()
        do { store = try AttachmentStore(folder: folder, durable: durable) } catch {
            engine.shutdown()
            if keepFolder == nil { try? FileManager.default.removeItem(atPath: folder) }
            throw error
        }
        service = ServiceExtension(engine: engine, store: store, policy: policy)
        self.samples = samples
        self.policy = policy
        self.keepFolder = keepFolder
        self.folder = folder
    }

    /// Runs every sample payload through the extension, all at once; the outcomes by payload name.
    package func run() async -> [String: Outcome] {
        let service = self.service
        let payloadFolder = samples.payloadFolder
        return await withTaskGroup(of: (String, Outcome).self) { group in
            for name in samples.names {
                group.addTask {
                    let bytes = Array(
                        (try? Data(contentsOf: URL(fileURLWithPath: payloadFolder + "/" + name))) ?? Data())
                    return (name, await service.process(bytes).outcome)
                }
            }
            return await group.reduce(into: [String: Outcome]()) { $0[$1.0] = $1.1 }
        }
    }

    /// Removes the store's scratch files, stops the engine, and removes a temporary folder.
    package func close() {
        store.removeScratch()
        engine.shutdown()
        if keepFolder == nil { try? FileManager.default.removeItem(atPath: folder) }
    }
}
