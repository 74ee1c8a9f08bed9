#!/usr/bin/env bash
# What a persistent DEVICE message costs a standalone node, Redis and Kafka, per build, at a fixed
# rate the node keeps up with (docs/benchmarks.md): Redis scripts and Redis CPU per delivered
# message (Redis' own INFO), bytes Redis appended to its append-only file per message (unless it
# rewrote the file meanwhile), Kafka offset commits of the routing and DEVICE hand-off consumers (the
# node's /metrics), and the node's CPU (/proc), besides the generator's report.
#
#   broker-bench/device-cost.sh OUT RATE [JAR ...]
#
# JAR: builds to measure one after the other (default broker-app/target/fleetmq.jar), each on a
# fresh data directory, after two unmeasured 20-s runs at 4,000 msg/s (the JVM compiles for
# minutes after start). Needs redis-cli (the node runs Debian's redis-server when it is installed),
# curl, bc and a built tree. Ports: MQTT 27883, admin HTTP 27083, embedded 27092/27093/27379/27432.
# Output: OUT/<n>.txt (the generator's report) and OUT/summary.txt, one line per build.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
out=$(realpath -m "$1"); rate=$2; shift 2
jars=("$@"); [ ${#jars[@]} -gt 0 ] || jars=(broker-app/target/fleetmq.jar)
mkdir -p "$out"
bench() { java -jar broker-bench/target/fleetmq-bench.jar --port 27883 --scenario p2p --qos 1 --session-expiry 300 "$@"; }
redis_cpu() { redis-cli -p 27379 info cpu | awk -F: '/used_cpu_(sys|user):/ {s += $2} END {print s}'; }
aof_size() { redis-cli -p 27379 info persistence | tr -d '\r' | awk -F: '/^aof_current_size:/ {print $2}'; }
forks() { redis-cli -p 27379 info stats | tr -d '\r' | awk -F: '/^total_forks:/ {print $2}'; }
commits() {
  curl -s http://127.0.0.1:27083/metrics \
    | grep -E '^kafka_consumer_coordinator_commit_total\{client_id="fleetmq-[^"]*-(publish|device-persisted)"' \
    | awk '{s += $2} END {print s + 0}'
}
i=0
for jar in "${jars[@]}"; do
  i=$((i + 1))
  data="$out/node-$i"; rm -rf "$data"
  BROKER_DATA_DIR="$data" MQTT_TCP_PORT=27883 HTTP_PORT=27083 MQTT_WS_ENABLED=false \
  EMBEDDED_KAFKA_PORT=27092 EMBEDDED_KAFKA_CONTROLLER_PORT=27093 EMBEDDED_REDIS_PORT=27379 EMBEDDED_POSTGRES_PORT=27432 \
    java -Xmx2g -jar "$jar" >"$out/node-$i.log" 2>&1 &
  node=$!
  trap 'kill $node 2>/dev/null || true' EXIT
  until grep -qs "FleetMQ node .* ready in" "$out/node-$i.log"; do sleep 0.5; kill -0 "$node"; done
  for warm in 1 2; do
    bench --rate 4000 --warmup 3s --duration 20s --drain 30s >/dev/null 2>&1 || true
  done
  redis-cli -p 27379 config resetstat >/dev/null
  node0=$(cpu_ticks "$node"); redis0=$(redis_cpu); commits0=$(commits); aof0=$(aof_size); forks0=$(forks)
  bench --rate "$rate" --warmup 2s --duration 30s --drain 30s >"$out/$i.txt" 2>"$out/$i.log" || true
  node1=$(cpu_ticks "$node"); redis1=$(redis_cpu); commits1=$(commits); aof1=$(aof_size); forks1=$(forks)
  delivered=$(awk '/^  delivered  / {gsub(",", "", $2); print $2; exit}' "$out/$i.txt")
  scripts=$(redis-cli -p 27379 info commandstats | awk -F'[=,]' '/^cmdstat_evalsha:/ {print $2}')
  ticks=$(getconf CLK_TCK)
  echo "$jar: delivered $delivered, Redis scripts/msg $(echo "scale=3; $scripts / $delivered" | bc)," \
    "Redis CPU us/msg $(echo "scale=1; ($redis1 - $redis0) * 1000000 / $delivered" | bc)," \
    "node CPU us/msg $(echo "scale=1; ($node1 - $node0) * 1000000 / $ticks / $delivered" | bc)," \
    "Kafka commits $((commits1 - commits0))," \
    "AOF bytes/msg $( [ "$forks1" = "$forks0" ] && echo "$(( (aof1 - aof0) / delivered ))" || echo "- (rewritten)")" \
    | tee -a "$out/summary.txt"
  kill "$node"; wait "$node" || true
done
