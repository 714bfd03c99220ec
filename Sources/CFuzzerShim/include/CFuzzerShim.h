#ifndef C_FUZZER_SHIM_H
#define C_FUZZER_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// The function libFuzzer calls with each input.
typedef int (*rp_fuzz_callback)(const uint8_t *data, size_t size);

/// Whether libFuzzer is linked in (the binary was built with -sanitize=fuzzer).
int rp_fuzzer_available(void);

/// Runs libFuzzer's driver with the command line; returns -1 when libFuzzer is not linked in.
int rp_fuzzer_run(int *argc, char ***argv, rp_fuzz_callback callback);

#endif
