# serve-lib.sh: what the scripts that measure `richpush serve` share (sourced, not run).
#
#   NAME=... ; source bench/serve-lib.sh    sets ROOT, RICHPUSH (RICHPUSH env, else the release build,
#                                          else the debug one), SCRATCH (removed at exit) and a trap that
#                                          stops the server started with start_serve
#   start_serve [ARGS...]                  starts `richpush serve Samples/assets --host 127.0.0.1 ARGS` with
#                                          the soft descriptor limit raised; its URL lines go to
#                                          $SCRATCH/urls, its stderr to $SCRATCH/stderr; sets SERVER_PID

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${RICHPUSH:-} ]]; then
    RICHPUSH=$ROOT/.build/release/richpush
    [[ -x $RICHPUSH ]] || RICHPUSH=$ROOT/.build/debug/richpush
fi
[[ -x $RICHPUSH ]] || { echo "$NAME: no richpush binary; run 'swift build' or set RICHPUSH" >&2; exit 1; }

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX")
SERVER_PID=
cleanup() {
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -INT "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$SCRATCH"
}
trap cleanup EXIT INT TERM

start_serve() {
    # The server needs about one descriptor per connection: raise the soft limit where the hard one allows.
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    "$RICHPUSH" serve "$ROOT/Samples/assets" --host 127.0.0.1 "$@" >"$SCRATCH/urls" 2>"$SCRATCH/stderr" &
    SERVER_PID=$!
}
