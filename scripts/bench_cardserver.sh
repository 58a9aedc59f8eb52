#!/usr/bin/env bash
# The cardserver as the peers harness should start it: the harness lifts the
# per-connection rate limit (--rate/--burst) but predates the per-address quotas,
# which a benchmark's 100 connections from 127.0.0.1 trip at once (its throughput
# phase stalls on too_many_handshakes, and --address-rate caps it at 2,000 req/s).
# Every check still runs; only its bounds are raised. Use it as
#   CARDSERVER=$PWD/scripts/bench_cardserver.sh bash ../shared/bench/peers/run.sh ...
# BENCH_CARDSERVER names the cardserver to run (default: this checkout's). A build
# older than an option (the issue-time build of #16 has no quotas) is not given it,
# whether it is raised here or given by the caller (load.py raises them too): an
# option its --help does not list is dropped, with its value.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${BENCH_CARDSERVER:-$here/.venv/bin/cardserver}"
known="$("$exe" --help 2>/dev/null || true)"
knows() { grep -qE -- "(^|[^-a-z])$1([^-a-z]|$)" <<<"$known"; }
args=()
add() {   # add OPTION [VALUE...] unless the cardserver does not know OPTION
    if [[ "$1" != --* ]] || knows "$1"; then args+=("$@"); fi
}
while (($#)); do
    if [[ "$1" == --* && $# -gt 1 && "$2" != --* ]]; then add "$1" "$2"; shift 2
    else add "$1"; shift; fi
done
add --address-rate 1000000
add --address-burst 1000000
add --handshakes-per-second 100000
add --handshake-burst 100000
add --max-sessions-per-address 100000
add --creates-per-minute 1000000
add --creates-per-minute-per-address 1000000
add --max-waiting-per-session 100000
add --max-active-per-session 100000
add --max-waiting-per-address 100000
add --max-active-per-address 100000
exec "$exe" "${args[@]}"
