#!/usr/bin/env bash
# Where the Redis CPU of Sluice's decision script goes: replays one decision's EVALSHA with
# redis-benchmark against variants of the script and prints the server's CPU per call.
#   empty     'return 0'                                     (the cost of an EVALSHA round trip)
#   defs      every part but decide.lua, then 'return 0'     (defining all functions, per call)
#   full      the script as the store assembles it          (a real decision)
#   one-alg   prelude + sliding_log + decide                 (the same decision, one algorithm defined)
# Usage: sluice-bench/scripts/script-cost.sh [REQUESTS] [CLIENTS] [PIPELINE]   (200000 64 1)
# The arguments replayed are a 20/60s + 5/3s sliding_log decision (recorded with MONITOR by RedisLoad).
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-200000}; c=${2:-64}; P=${3:-1}
src=sluice-redis/src/main/resources/dev/sluice/redis
tmp=$(mktemp -d)
parts=(prelude sliding_log sliding_window fixed_window token_bucket leaky_bucket)
{ for f in "${parts[@]}" decide; do cat "$src/$f.lua"; echo; done; } > "$tmp/full.lua"
{ for f in "${parts[@]}"; do cat "$src/$f.lua"; echo; done; echo 'return 0'; } > "$tmp/defs.lua"
{ for f in prelude sliding_log decide; do cat "$src/$f.lua"; echo; done; } > "$tmp/one-alg.lua"
echo 'return 0' > "$tmp/empty.lua"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" > "$tmp/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
cpu() { redis-cli -p "$port" INFO cpu | awk -F: '/used_cpu_(sys|user):/ {s += $2} END {printf "%.6f", s}'; }
key='sluice:{auth.createToken|user:__rand_int__}'
args=(d '' 1000 1 1 -9007199254740992 0 3786794920 2 6 20 60000000 0 0 5 3000000 0 0)
echo "redis $(redis-server --version | awk '{print $3}'), $n calls, -c $c -P $P, 10,000 keys"
for v in empty defs full one-alg; do
  sha=$(redis-cli -p "$port" SCRIPT LOAD "$(cat "$tmp/$v.lua")")
  redis-cli -p "$port" FLUSHALL >/dev/null
  reply=$(redis-cli -p "$port" EVALSHA "$sha" 1 'sluice:{auth.createToken|user:0}' "${args[@]}" 2>&1 | head -1)
  case "$reply" in
    *ERR*|*rror*) echo "the $v script rejects these arguments ($reply): has the store's ARGV layout changed?" >&2; exit 1 ;;
  esac
  before=$(cpu)
  rps=$(redis-benchmark -p "$port" -n "$n" -c "$c" -P "$P" -r 10000 --csv EVALSHA "$sha" 1 "$key" "${args[@]}" \
    | tail -1 | cut -d, -f2 | tr -d '"')
  after=$(cpu)
  printf '%-8s %9.0f calls/s  %5.1f µs Redis CPU per call\n' "$v" "$rps" \
    "$(python3 -c "print(($after - $before) * 1e6 / $n)")"
done
