#!/bin/bash
# acquire and tryAcquire in process, the code before (OLD, built from a2f58f6) and after (NEW) answering a
# repeated denial with the same decision, alternately, Bucket4j in every run; from the repository root,
# as root: each run at real-time priority (chrt -f 50) so that other work on a shared machine does not
# preempt it. Without root, drop RT=.
OLD=${OLD:-old/sluice-bench.jar}
NEW=${NEW:-sluice-bench/target/sluice-bench.jar}
OUT=${OUT:-sluice-bench/results/2026-11-29-repeated-denials}
RT=${RT-chrt -f 50}
OLD=$(realpath "$OLD"); NEW=$(realpath "$NEW"); mkdir -p "$OUT"; cd "$OUT"
for round in 1 2 3; do
  for v in old new; do
    J=$OLD; [ $v = new ] && J=$NEW
    uptime > jmh-$v-t1-$round.txt
    $RT java -jar $J TwoWindowBenchmark -p impl=sluice,sluice_decision,bucket4j,bucket4j_probe -p rule=TWO_WINDOWS \
      -p keys=1 -f 1 -wi 4 -w 1s -i 6 -r 1s -t 1 -prof gc >> jmh-$v-t1-$round.txt 2>&1
    uptime > jmh-$v-t2-$round.txt
    $RT java -jar $J TwoWindowBenchmark -p impl=sluice,sluice_decision,bucket4j,bucket4j_probe -p rule=TWO_WINDOWS \
      -p keys=1 -f 1 -wi 4 -w 1s -i 6 -r 1s -t 2 -bm thrpt -tu s >> jmh-$v-t2-$round.txt 2>&1
  done
done
echo done
