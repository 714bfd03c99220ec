import CFuzzerShim
import Glibc

// The fuzz target: libFuzzer feeds inputs to `LLVMFuzzerTestOneInput`; the first byte picks the reader.
//
// SwiftPM links an executable with `--defsym main=RichPushFuzz_main`, so this file's top-level code
// is the program's `main` even though `-sanitize=fuzzer` also links libFuzzer's own `main`. It
// therefore starts libFuzzer's driver itself with `LLVMFuzzerRunDriver`. Build and run with
// `scripts/fuzz`.

/// libFuzzer's entry point: checks one input against the reader its first byte selects.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    FuzzReader.check(bytes)
    return 0
}

guard rp_fuzzer_available() != 0 else {
    report(
        "richpush-fuzz: built without libFuzzer. Build it with "
            + "`swift build -Xswiftc -sanitize=fuzzer,address --product RichPushFuzz` (or run scripts/fuzz).\n")
    exit(64)
}
// Once-initialised catalogues are built before the first input, so no input is blamed for them.
DialectInvariants.prepare()
var argumentCount = CommandLine.argc
var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(rp_fuzzer_run(&argumentCount, &arguments) { data, size in fuzzOneInput(data, size) })
