#!/bin/bash
# The code before (OLD) and after (NEW) the one decision path, alternately; run from the repository root.
OLD=${OLD:-old/sluice-bench.jar}   # built from 8d27390, with PolicyContender and its two names added to RedisContenders
NEW=${NEW:-sluice-bench/target/sluice-bench.jar}
OUT=${OUT:-sluice-bench/results/2026-11-28-one-path}
OLD=$(realpath "$OLD"); NEW=$(realpath "$NEW"); mkdir -p "$OUT"; cd "$OUT"
for round in 1 2; do
  for v in old new; do
    J=$OLD; [ $v = new ] && J=$NEW
    uptime > jmh-t1-$v-$round.txt
    java -jar $J TwoWindowBenchmark -p impl=sluice,sluice_decision,bucket4j -p rule=TWO_WINDOWS -p keys=1 \
      -f 1 -wi 4 -w 1s -i 5 -r 1s -t 1 >> jmh-t1-$v-$round.txt 2>&1
    uptime > jmh-t2-$v-$round.txt
    java -jar $J TwoWindowBenchmark -p impl=sluice,sluice_decision,bucket4j -p rule=TWO_WINDOWS -p keys=1 \
      -f 1 -wi 4 -w 1s -i 5 -r 1s -t 2 -bm thrpt -tu s >> jmh-t2-$v-$round.txt 2>&1
  done
done
for round in 1 2 3; do
  for v in old new; do
    J=$OLD; C=sluice_operation,sluice_policies; [ $v = new ] && J=$NEW
    uptime > redis-$v-$round.md
    java -cp $J dev.sluice.bench.RedisLoad --seconds 6 --warmup 3 --inflight 64 --keys 10000 --modes keys \
      --ceiling-requests 0 --contenders $C >> redis-$v-$round.md 2>&1
  done
done
echo done
