import Foundation

/// Writes to stderr, where everything but payload JSON and requested data goes.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Writes a line to stdout and flushes it, so a script reading a pipe sees it at once.
func printLine(_ text: String) {
    print(text)
    fflush(nil)
}

/// Exit codes, as sysexits(3) names them where one fits.
enum ExitCode: Int32 {
    case success = 0
    case failure = 1
    case usage = 64
    case dataError = 65
    case unavailable = 69
    case software = 70
    case ioError = 74
    /// Stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it).
    case interrupted = 130
}
