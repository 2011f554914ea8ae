#!/bin/sh
# The starter's filter against the same application without Sluice (docs/benchmarks.md §7).
# From the repository's root; wrk from Debian (apt-get install -y wrk). Every process of the run
# (the driver, both applications, wrk) at real-time priority, so that other work on the shared
# machine does not preempt it.
set -e
./mvnw -B -ntp -q -pl sluice-bench,sluice-bench-boot -am package -DskipTests
out=sluice-bench/results/2026-11-28-starter
chrt -f 50 java -cp sluice-bench/target/sluice-bench.jar dev.sluice.bench.StarterComparison \
    --reps 5 --seconds 15 --warmup 5 --process-warmup 20 --raw "$out/raw" | tee "$out/starter-comparison.md"
