import Foundation

/// Finds the repository's `Samples/` folder: in the current directory, or next to the build folder.
enum SamplesFolder {
    static func locate() -> String? {
        var candidates = [FileManager.default.currentDirectoryPath + "/Samples"]
        // .build/<config>/richpush -> the package root is three levels up.
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(
            executable.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Samples").path)
        candidates.append(
            executable.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Samples").path)
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/assets") }
    }
}
