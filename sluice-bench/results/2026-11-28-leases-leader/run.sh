#!/bin/sh
# LeaseLoad with the leader sizing leases, as run for docs/benchmarks.md §6 and docs/scaling.md §4: four worker processes on one
# redis-server of the test kit, the parent, Redis and the workers at real-time priority (root).
set -e
cd "$(dirname "$0")/../../.."
nice -n 10 ./mvnw -B -ntp -o -q package -pl sluice-bench -am -DskipTests
out=sluice-bench/results/2026-11-28-leases-leader
{ echo "load average before: $(cat /proc/loadavg)"; } > "$out/stderr.txt"
chrt -f 50 java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.LeaseLoad --reps 3 --raw "$out/raw" \
    > "$out/lease-load.md" 2>> "$out/stderr.txt"
echo "load average after: $(cat /proc/loadavg)" >> "$out/stderr.txt"
