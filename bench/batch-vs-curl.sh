#!/usr/bin/env bash
# batch-vs-curl.sh: the batch row of bench/ratios.sh alone: `richpush batch` on BENCH_PAYLOADS payloads
# (the whole pipeline per payload) against `curl --parallel` downloading the same URLs to files, fresh
# connections, whole-process wall time, median of BENCH_RUNS rotating rounds, every run checked.
#
# Usage: bench/batch-vs-curl.sh     (the settings are ratios.sh's: BENCH_PAYLOADS, BENCH_CONCURRENCY,
#                                    BENCH_RUNS, BENCH_OUT_ROOT, BENCH_TIMEOUT, BENCH_SKIP_BUILD)
set -euo pipefail
BENCH_WORKLOADS=batch exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/ratios.sh" "$@"
