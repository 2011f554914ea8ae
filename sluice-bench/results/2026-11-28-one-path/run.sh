#!/bin/bash
# The explaining call in process, and the code before (OLD) and after (NEW) the one decision path on
# Redis, alternately; run from the repository root, as root: every run is given real-time priority
# (chrt -f 50) so that other work on a shared machine does not preempt it. Without root, drop RT=.
OLD=${OLD:-old/sluice-bench.jar}   # built from 8d27390, with PolicyContender and its two names added to RedisContenders
NEW=${NEW:-sluice-bench/target/sluice-bench.jar}
OUT=${OUT:-sluice-bench/results/2026-11-28-one-path}
RT=${RT-chrt -f 50}
OLD=$(realpath "$OLD"); NEW=$(realpath "$NEW"); mkdir -p "$OUT"; cd "$OUT"
for round in 1 2 3; do
  uptime > jmh-t1-$round.txt
  $RT java -jar $NEW TwoWindowBenchmark -p impl=sluice,sluice_decision,bucket4j,bucket4j_probe -p rule=TWO_WINDOWS \
    -p keys=1 -f 1 -wi 4 -w 1s -i 6 -r 1s -t 1 >> jmh-t1-$round.txt 2>&1
  uptime > jmh-t2-$round.txt
  $RT java -jar $NEW TwoWindowBenchmark -p impl=sluice,sluice_decision,bucket4j,bucket4j_probe -p rule=TWO_WINDOWS \
    -p keys=1 -f 1 -wi 4 -w 1s -i 6 -r 1s -t 2 -bm thrpt -tu s >> jmh-t2-$round.txt 2>&1
done
for round in 1 2 3; do
  for v in old new; do
    J=$OLD; [ $v = new ] && J=$NEW
    uptime > redis-$v-$round.md
    $RT java -cp $J dev.sluice.bench.RedisLoad --seconds 6 --warmup 3 --inflight 64 --keys 10000 --modes keys \
      --ceiling-requests 0 --contenders sluice_operation,sluice_policies >> redis-$v-$round.md 2>&1
  done
done
echo done
