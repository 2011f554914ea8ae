#!/bin/bash
# The top-offender count without a lock (NEW) against the code before it (OLD, built from 6aca299), alternately,
# Bucket4j in every run; from the repository root, as root (each run at real-time priority). Two rounds of
# two threads on one key (throughput), then three of one thread (time per decision).
OLD=${OLD:-old/sluice-bench.jar}
NEW=${NEW:-sluice-bench/target/sluice-bench.jar}
OUT=${OUT:-sluice-bench/results/2026-11-29-offender-front}
RT=${RT-chrt -f 50}
OLD=$(realpath "$OLD"); NEW=$(realpath "$NEW"); mkdir -p "$OUT"; cd "$OUT"
for round in 1 2; do
  for v in old new; do
    J=$OLD; [ $v = new ] && J=$NEW
    uptime > $v-t2-$round-thrpt.txt
    $RT java -jar $J TwoWindowBenchmark -p impl=sluice,sluice_decision,bucket4j -p rule=TWO_WINDOWS -p keys=1 \
      -f 1 -wi 4 -w 1s -i 6 -r 1s -t 2 -bm thrpt -tu s >> $v-t2-$round-thrpt.txt 2>&1
  done
done
for round in 1 2 3; do
  for v in old new; do
    J=$OLD; [ $v = new ] && J=$NEW
    uptime > $v-t1-$round.txt
    $RT java -jar $J TwoWindowBenchmark -p impl=sluice,sluice_decision,bucket4j -p rule=TWO_WINDOWS -p keys=1 \
      -f 1 -wi 4 -w 1s -i 6 -r 1s -t 1 >> $v-t1-$round.txt 2>&1
  done
done
# Then the new code alone, three rounds of two threads with Bucket4j's explaining call beside its boolean one.
for round in 1 2 3; do
  uptime > new-t2-probe-$round.txt
  $RT java -jar $NEW TwoWindowBenchmark -p impl=sluice,sluice_decision,bucket4j,bucket4j_probe -p rule=TWO_WINDOWS \
    -p keys=1 -f 1 -wi 4 -w 1s -i 6 -r 1s -t 2 -bm thrpt -tu s >> new-t2-probe-$round.txt 2>&1
done
