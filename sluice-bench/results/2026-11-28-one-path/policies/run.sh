#!/bin/bash
# old/new alternately: RedisLoad by operation with and without ban and audit.
# OLD, NEW: the bench jars before and after the batched policies.
cd "$(dirname "$0")"
for round in 1 2 3; do
  for v in old new; do
    J=$OLD; [ $v = new ] && J=$NEW
    uptime > redis-$v-$round.md
    nice -n 5 java -cp $J dev.sluice.bench.RedisLoad --seconds 6 --warmup 3 --inflight 64 --keys 10000 --modes keys \
      --ceiling-requests 0 --contenders sluice_operation,sluice_policies >> redis-$v-$round.md 2>&1
  done
done
