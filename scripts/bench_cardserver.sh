#!/usr/bin/env bash
# The cardserver as the peers harness should start it: the harness lifts the
# per-connection rate limit (--rate/--burst) but predates the per-address quotas,
# which a benchmark's 100 connections from 127.0.0.1 trip at once (its throughput
# phase stalls on too_many_handshakes, and --address-rate caps it at 2,000 req/s).
# Every check still runs; only its bounds are raised. Use it as
#   CARDSERVER=$PWD/scripts/bench_cardserver.sh bash ../shared/bench/peers/run.sh ...
# BENCH_CARDSERVER names the cardserver to run (default: this checkout's). A build
# older than a quota (the issue-time build of #16 has none of them) is not given
# its option: only the options its --help lists are passed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exe="${BENCH_CARDSERVER:-$here/.venv/bin/cardserver}"
known="$("$exe" --help 2>/dev/null || true)"
raised=()
raise() {
    if grep -qE -- "(^|[^-a-z])$1([^-a-z]|$)" <<<"$known"; then raised+=("$1" "$2"); fi
}
raise --address-rate 1000000
raise --address-burst 1000000
raise --handshakes-per-second 100000
raise --handshake-burst 100000
raise --max-sessions-per-address 100000
raise --creates-per-minute 1000000
raise --creates-per-minute-per-address 1000000
raise --max-waiting-per-session 100000
raise --max-active-per-session 100000
raise --max-waiting-per-address 100000
raise --max-active-per-address 100000
exec "$exe" "$@" "${raised[@]}"
