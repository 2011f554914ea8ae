#!/usr/bin/env bash
# Runs the in-process acquire benchmarks recorded in docs/benchmarks.md and writes JMH's JSON
# results to the directory given (default: sluice-bench/target/jmh). Build first:
#   ./mvnw -q -pl sluice-bench -am package -DskipTests
# JAR=path overrides the jar (e.g. a copy, so that rebuilding does not disturb a run).
# Usage: sluice-bench/scripts/jmh-all.sh [OUT_DIR] [THREADS...]   (threads default: 1 2 4)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-sluice-bench/target/jmh}
shift || true
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2 4)
mkdir -p "$out"
jar=${JAR:-sluice-bench/target/sluice-bench.jar}
opts=(-f 1 -wi 4 -w 1s -i 5 -r 1s)
for t in "${threads[@]}"; do
  if [ "$t" = 1 ]; then
    one=(); two=()   # every contender, baseline included
  else
    one=(-p impl=sluice,sluice_token_bucket,sluice_decision,bucket4j,resilience4j,guava)
    two=(-p impl=sluice,sluice_token_bucket,sluice_decision,bucket4j,bucket4j_synchronized)
  fi
  java -jar "$jar" OneWindowBenchmark "${opts[@]}" -t "$t" "${one[@]}" -rf json -rff "$out/one-window-t$t.json"
  java -jar "$jar" TwoWindowBenchmark "${opts[@]}" -t "$t" "${two[@]}" -rf json -rff "$out/two-window-t$t.json"
done
