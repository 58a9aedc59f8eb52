#!/usr/bin/env bash
# The peers harness (../shared/bench/peers) with its cardserver client speaking
# protocol 2 (scripts/peers_ours_protocol2.js: hello [1, 2], deltas merged), for the
# bytes-per-move figure of a protocol-2 client. The harness itself is not changed:
# it is copied to $PEERS2_WORK (default $TMPDIR/cardserver-peers2) and only the copy's
# drivers/ours.js is replaced. Arguments go to its run.js, e.g.
#   CARDSERVER=$PWD/scripts/bench_cardserver.sh bash scripts/bench_peers_protocol2.sh \
#       --phases latency --reps 1 --servers ours
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peers="${PEERS:-$root/../shared/bench/peers}"
[ -d "$peers" ] || peers=/work/shared/bench/peers
work="${PEERS2_WORK:-${TMPDIR:-/tmp}/cardserver-peers2}"
mkdir -p "$work"
(cd "$peers" && tar --exclude=node_modules --exclude=run -cf - .) | (cd "$work" && tar -xf -)
chmod -R u+w "$work"
cp "$root/scripts/peers_ours_protocol2.js" "$work/drivers/ours.js"
if [ ! -d "$work/node_modules/boardgame.io" ]; then
  (cd "$work" && npm ci --no-audit --no-fund)
fi
export CARDSERVER="${CARDSERVER:-$root/.venv/bin/cardserver}"
export PYTHON="${PYTHON:-$root/.venv/bin/python}"
cd "$root"
exec node "$work/run.js" "$@"
