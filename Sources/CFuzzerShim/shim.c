#include "CFuzzerShim.h"

// Weak, so that the target also links in an ordinary build (without -sanitize=fuzzer), where
// libFuzzer is absent and the address is null.
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *, size_t))
    __attribute__((weak));

int rp_fuzzer_available(void) { return LLVMFuzzerRunDriver != 0; }

int rp_fuzzer_run(int *argc, char ***argv, rp_fuzz_callback callback) {
    if (LLVMFuzzerRunDriver == 0) return -1;
    return LLVMFuzzerRunDriver(argc, argv, callback);
}
