#!/usr/bin/env bash
# The cardserver as the peers harness should start it: the harness lifts the
# per-connection rate limit (--rate/--burst) but predates the per-address quotas,
# which a benchmark's 100 connections from 127.0.0.1 trip at once (its throughput
# phase stalls on too_many_handshakes, and --address-rate caps it at 2,000 req/s).
# Every check still runs; only its bounds are raised. Use it as
#   CARDSERVER=$PWD/scripts/bench_cardserver.sh bash ../shared/bench/peers/run.sh ...
# BENCH_CARDSERVER names the cardserver to run (default: this checkout's).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "${BENCH_CARDSERVER:-$here/.venv/bin/cardserver}" "$@" \
    --address-rate 1000000 --address-burst 1000000 \
    --handshakes-per-second 100000 --handshake-burst 100000 \
    --max-sessions-per-address 100000 \
    --creates-per-minute 1000000 --creates-per-minute-per-address 1000000 \
    --max-waiting-per-session 100000 --max-active-per-session 100000 \
    --max-waiting-per-address 100000 --max-active-per-address 100000
