// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "richpush",
    products: [
        .executable(name: "richpush", targets: ["richpush"]),
        .library(name: "RichPush", targets: ["RichPush", "RichPushRuns"]),
    ],
    targets: [
        // The executable: a few lines of @main that hand the process to RichPushCLI.
        .executableTarget(name: "richpush", dependencies: ["RichPushCLI", "CProcessStart"]),
        // Before the Swift runtime: closed descriptors 0-2 are occupied (no runtime file takes them) and
        // an early Ctrl-C is counted until richpush's handler takes it over.
        .target(name: "CProcessStart"),

        // The command line: the command and option tables, parsing, help, progress lines, and the one
        // function that maps an error to an exit status. No pipeline logic of its own.
        .target(
            name: "RichPushCLI",
            dependencies: [
                "RichPush", "RichPushRuns", "RichPushServices", "POSIXKit", "MagicKit", "AssetServer", "Digest",
                "CProcessStart",
            ]),

        // The library, in three layers a wrong-way use does not compile across. None of them knows
        // flags, argv, exit codes or terminals.
        // The core: the vocabulary (verdicts, reasons, warnings, the outcome), and one payload's run
        // through every stage (payload, dialect, policy, app plists, fetch, network, sniff, store,
        // pipeline), composing send requests and logging deliveries (/users/track).
        .target(
            name: "RichPush",
            dependencies: ["POSIXKit", "CurlKit", "MagicKit", "Digest", "CNetRelay", "CMediaScan"]),
        // Runs of many payloads on the core: a campaign (batch), a burst at the asset host (bench), and
        // their reports, gates and merges.
        .target(name: "RichPushRuns", dependencies: ["RichPush", "POSIXKit", "Digest", "CWallClock"]),
        // Services beside the runs, on the core: the App Group analytics and their flush, the demo and
        // its samples, the embedded server's configuration.
        .target(name: "RichPushServices", dependencies: ["RichPush", "POSIXKit"]),

        // Below everything: system calls retried on EINTR, the one error that keeps errno, exclusive
        // temporaries, write-all and read-all, and the descriptor budget. Glibc only, no Foundation.
        .target(name: "POSIXKit"),

        // The only Swift code that touches libcurl, libmagic and libcrypto.
        .target(name: "CurlKit", dependencies: ["POSIXKit", "CCurlShim"]),
        .target(name: "MagicKit", dependencies: ["CMagic"]),
        .target(name: "Digest", dependencies: ["CCrypto"]),

        // The embedded asset server with fault modes, on libmicrohttpd.
        .target(name: "AssetServer", dependencies: ["POSIXKit", "CAssetServerShim"]),

        // C: system libraries from Debian and the small shims Swift needs to call them.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CMagic", providers: [.apt(["libmagic-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        // The media structure the sniffer reads (ID3v2 tag end, MPEG-4 brands and video handler), once for
        // both the curl sink's streamed chunks and a file's buffer; no dependencies.
        .target(name: "CMediaScan"),
        .target(
            name: "CCurlShim", dependencies: ["CCurl", "CMediaScan"],
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        .target(
            name: "CAssetServerShim", dependencies: ["CMicroHTTPD"],
            linkerSettings: [.linkedLibrary("z")]),

        // The fuzz target over the readers and writers of untrusted bytes (scripts/fuzz builds it with
        // -sanitize=fuzzer,address); its shim reaches libFuzzer's driver through a weak symbol.
        .executableTarget(
            name: "RichPushFuzz",
            dependencies: ["RichPush", "RichPushRuns", "RichPushServices", "CFuzzerShim", "CMediaScan"]),
        .target(name: "CFuzzerShim"),

        // The wall clock with the kernel's NTP state, read together (bench --start-at and its lateness).
        .target(name: "CWallClock"),

        // The shaping relay behind network profiles: an epoll loop that delays and paces TCP bytes.
        .target(name: "CNetRelay"),

        // Fixtures the test targets share: the repository's samples and a started asset server.
        .target(
            name: "TestSupport",
            dependencies: ["AssetServer", "RichPush", "RichPushRuns", "RichPushServices", "Digest"],
            path: "Tests/TestSupport"),
        .testTarget(name: "POSIXKitTests", dependencies: ["POSIXKit", "TestSupport"]),
        .testTarget(name: "CurlKitTests", dependencies: ["CurlKit"]),
        .testTarget(name: "CMediaScanTests", dependencies: ["CMediaScan"]),
        .testTarget(name: "DigestTests", dependencies: ["Digest"]),
        .testTarget(
            name: "RichPushTests",
            dependencies: ["RichPush", "RichPushRuns", "RichPushServices", "AssetServer", "TestSupport"]),
        .testTarget(
            name: "AssetServerTests", dependencies: ["AssetServer", "RichPush", "RichPushServices", "TestSupport"]),
        .testTarget(
            name: "RichPushCLITests",
            dependencies: ["RichPushCLI", "RichPush", "RichPushRuns", "RichPushServices", "TestSupport"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["RichPush", "RichPushRuns", "RichPushServices", "RichPushCLI", "AssetServer", "TestSupport"]),
    ]
)

// Shared compiler settings, applied in one place to every Swift target.
let cTargets: Set<String> = [
    "CCurl", "CMagic", "CCrypto", "CMicroHTTPD", "CCurlShim", "CAssetServerShim", "CFuzzerShim", "CNetRelay",
    "CProcessStart", "CMediaScan", "CWallClock",
]
for target in package.targets where !cTargets.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.swiftLanguageMode(.v6)]
}
