#!/usr/bin/env bash
# What delivering a PUBLISH costs a standalone node per build, small and large payloads
# (docs/benchmarks.md): QoS 1 fan-out (1 publisher, 100 subscribers) with 64-byte and 64-KiB
# payloads and QoS 1 point-to-point with 64-byte payloads, each at saturation, with the node's CPU
# per delivered message (/proc) and its resident memory at the end of each run beside the
# generator's report.
#
#   broker-bench/payload-cost.sh OUT ROUNDS JAR...
#
# The builds take turns, ROUNDS times (A B A B ...), each on a fresh data directory after one
# unmeasured run of every scenario (the JVM compiles for minutes after start), so a drift of the
# machine during the sitting falls on all of them. Anonymous clients (the cost compared is the
# delivery path's), and no per-client publish rate bound (the one publisher of fan-out would
# meet it). Needs python3, bc and a built tree. Ports: MQTT 28883, admin HTTP 28083, embedded
# 28092/28093/28379/28432. Output: OUT/<round>-<build>-<scenario>.txt (the generator's report) and
# OUT/summary.txt, one line per run.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
rounds_args "$@"
bench() { java -jar broker-bench/target/fleetmq-bench.jar --port 28883 --qos 1 "$@"; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
scenarios=(
  "fan-out-64|--scenario fan-out --payload 64"
  "fan-out-64k|--scenario fan-out --payload 65536"
  "p2p-64|--scenario p2p --payload 64")
ticks=$(getconf CLK_TCK)
for round in $(seq 1 "$rounds"); do
  i=0
  for jar in "${jars[@]}"; do
    i=$((i + 1))
    data="$out/node"; rm -rf "$data"
    BROKER_DATA_DIR="$data" MQTT_TCP_PORT=28883 HTTP_PORT=28083 MQTT_WS_ENABLED=false \
    MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0 \
    EMBEDDED_KAFKA_PORT=28092 EMBEDDED_KAFKA_CONTROLLER_PORT=28093 EMBEDDED_REDIS_PORT=28379 \
    EMBEDDED_POSTGRES_PORT=28432 java -Xmx2g -jar "$jar" >"$out/node-$round-$i.log" 2>&1 &
    node=$!
    trap 'kill $node 2>/dev/null || true' EXIT
    wait_ready "$node" "$out/node-$round-$i.log"
    for entry in "${scenarios[@]}"; do
      bench ${entry#*|} --warmup 3s --duration 15s >/dev/null 2>&1 || true
    done
    for entry in "${scenarios[@]}"; do
      name=${entry%%|*}
      before=$(cpu_ticks "$node")
      bench ${entry#*|} --warmup 5s --duration 20s >"$out/$round-$i-$name.txt" 2>"$out/$round-$i-$name.log" || true
      after=$(cpu_ticks "$node")
      # The generator's JSON line: its rate, and the deliveries of the whole run (warm-up and drain
      # included, as the CPU ticks are), estimated at that rate.
      read -r rate total p99 < <(tail -n 1 "$out/$round-$i-$name.txt" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
print(round(r["delivered_per_s"]), round(r["delivered_per_s"] * (r["warmup_s"] + r["measured_s"] + r["drain_s"])),
      round(r["latency_us"]["p99"] / 1000, 1))')
      echo "round $round, $jar, $name: delivered msg/s $rate, p99 $p99 ms," \
        "node CPU us/msg $(echo "scale=1; ($after - $before) * 1000000 / $ticks / $total" | bc)," \
        "RSS $(( $(rss_kib "$node") / 1024 )) MiB" | tee -a "$out/summary.txt"
    done
    kill "$node"; wait "$node" || true
  done
done
