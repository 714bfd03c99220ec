#!/usr/bin/env bash
# flush-outbox.sh: how `richpush analytics flush` scales with the outbox. For each count N, writes a
# suite of N pending events, flushes it to `richpush serve`'s mock /users/track (no rate limit to
# speak of, no TLS) and prints the wall time, the requests and the time per request. With an outbox
# that is rewritten per request the time per request grows with N; with the append-only log it
# stays flat.
#
#   bench/flush-outbox.sh [N...]        default: 2000 5000 20000
#   RICHPUSH=/path/to/richpush bench/flush-outbox.sh 20000    another build (an older one, to compare)
set -euo pipefail
NAME=flush-outbox
source "$(dirname "$0")/serve-lib.sh"

counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(2000 5000 20000)

printf 'demo-key\n' >"$SCRATCH/key"
start_serve --no-tls --api-key-file "$SCRATCH/key" --track-limit 1000000/1 --track-log "$SCRATCH/track.ndjson"
base=
for _ in $(seq 100); do
    base=$(head -n 1 "$SCRATCH/urls" 2>/dev/null || true)
    [[ -n $base ]] && break
    sleep 0.1
done
[[ -n $base ]] || { echo "$NAME: serve did not start: $(cat "$SCRATCH/stderr")" >&2; exit 1; }

printf '%8s  %10s  %8s  %14s\n' items seconds requests ms/request
for count in "${counts[@]}"; do
    container="$SCRATCH/group-$count"
    mkdir -p "$container/Library/Preferences"
    # An XML suite of N events, as an extension would leave them (a flush keeps the plist's format).
    {
        printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>pending_custom_events</key><array>\n'
        for ((i = 0; i < count; i++)); do
            printf '<dict><key>event_name</key><string>tap</string><key>seq</key><integer>%d</integer></dict>\n' "$i"
        done
        printf '</array></dict></plist>\n'
    } >"$container/Library/Preferences/group.bench.plist"
    start=$(date +%s.%N)
    "$RICHPUSH" analytics flush --app-group "$container" --suite group.bench --endpoint "$base" \
        --external-id bench-user --api-key-file "$SCRATCH/key" --json >"$SCRATCH/summary.json"
    end=$(date +%s.%N)
    requests=$(grep -o '"requests_sent":[0-9]*' "$SCRATCH/summary.json" | cut -d: -f2)
    accepted=$(grep -o '"accepted":[0-9]*' "$SCRATCH/summary.json" | cut -d: -f2)
    [[ $accepted == "$count" ]] || { echo "$NAME: $accepted of $count accepted" >&2; exit 1; }
    awk -v n="$count" -v s="$start" -v e="$end" -v r="$requests" \
        'BEGIN { printf "%8d  %10.2f  %8d  %14.1f\n", n, e - s, r, (e - s) * 1000 / r }'
done
