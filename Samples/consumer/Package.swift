// swift-tools-version:6.0
// A package that uses richpush as a library, as the README's "The library" shows: the test suite
// builds it (scripts/test) and runs it against the embedded asset server.
import PackageDescription

let package = Package(
    name: "PushCheck",
    dependencies: [.package(name: "richpush", path: "../..")],
    targets: [
        .executableTarget(
            name: "PushCheck", dependencies: [.product(name: "RichPush", package: "richpush")])
    ]
)
