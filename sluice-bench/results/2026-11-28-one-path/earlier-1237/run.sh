#!/bin/bash
for r in 1 2 3 4; do for v in old new; do
J=/work/wt/old/sluice-bench/target/sluice-bench.jar; [ $v = new ] && J=/work/main/sluice-bench/target/sluice-bench.jar
java -cp $J dev.sluice.bench.RedisLoad --seconds 6 --warmup 3 --inflight 64 --keys 10000 --modes keys --ceiling-requests 0 --contenders sluice_operation,sluice_policies > /tmp/s24/alt-$v-$r.md 2>&1
echo "$v $r $(uptime | sed 's/.*average//')"; grep '^| 10,000' /tmp/s24/alt-$v-$r.md | cut -d'|' -f3,5,6,10,11,12,13
done; done
