#!/usr/bin/env bash
# Overload backpressure on and off (docs/benchmarks.md): QoS 1 point-to-point at saturation against
# a standalone node with authentication on, for each value of mqtt.publish-backpressure-delay in
# turn (0 = off), ROUNDS times, each run on a fresh node.
#
#   broker-bench/backpressure-sitting.sh OUT ROUNDS DELAY [DELAY ...]     e.g. /tmp/bp 3 0 100ms
#
# JAR (environment): the build to measure, default broker-app/target/fleetmq.jar. Each run: a fresh
# data directory, one unmeasured 20-s run (the JVM compiles for minutes after start), then 5 s of
# warm-up and 20 s measured. Needs curl, python3 and a built tree. Ports: MQTT 28883, admin HTTP
# 28083, embedded 28092/28093/28379/28432. Output: OUT/<delay>-<round>.txt (the generator's report
# and the node's backpressure counters) and OUT/summary.txt, one line per run.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
out=$(realpath -m "$1"); rounds=$2; shift 2
jar=${JAR:-broker-app/target/fleetmq.jar}
mkdir -p "$out"
admin_pass=bench-admin-secret-1
bench() {
  java -jar broker-bench/target/fleetmq-bench.jar --port 28883 --username bench --password bench-secret-1 \
    --scenario p2p --qos 1 "$@"
}
for round in $(seq 1 "$rounds"); do
  for delay in "$@"; do
    name="$delay-$round"; data="$out/data-$name"; rm -rf "$data"
    MQTT_PUBLISH_BACKPRESSURE_DELAY="$delay" MQTT_ALLOW_ANONYMOUS=false MQTT_MAX_PUBLISH_RATE=0 \
    MQTT_MAX_PUBLISH_BYTES_RATE=0 MQTT_MAX_CONNECTION_RATE=1000000 ADMIN_PASSWORD="$admin_pass" \
    BROKER_DATA_DIR="$data" MQTT_TCP_PORT=28883 HTTP_PORT=28083 MQTT_WS_ENABLED=false \
    EMBEDDED_KAFKA_PORT=28092 EMBEDDED_KAFKA_CONTROLLER_PORT=28093 EMBEDDED_REDIS_PORT=28379 \
    EMBEDDED_POSTGRES_PORT=28432 java -Xmx2g -jar "$jar" >"$out/node-$name.log" 2>&1 &
    node=$!
    trap 'kill $node 2>/dev/null || true' EXIT
    wait_ready "$node" "$out/node-$name.log"
    make_credential 28083 "$admin_pass" \
      '{"type":"basic","username":"bench","password":"bench-secret-1","publish":["fleetmq-bench/#"],"subscribe":["fleetmq-bench/#"]}'
    bench --warmup 0s --duration 20s >/dev/null 2>&1 || true
    bench --warmup 5s --duration 20s >"$out/$name.txt" 2>"$out/$name.log" || true
    curl -s http://127.0.0.1:28083/metrics | grep '^fleetmq_publish_backpressure' >>"$out/$name.txt" || true
    kill "$node"; wait "$node" || true
    rm -rf "$data"
    tail -n 20 "$out/$name.txt" | python3 -c '
import json, sys
name = sys.argv[1]
lines = sys.stdin.read().splitlines()
report = next(json.loads(l) for l in lines if l.startswith("{"))
waits = sum(float(l.split()[-1]) for l in lines if l.startswith("fleetmq_publish_backpressure_waits_total"))
e2e, ack = report["latency_us"], report["ack_latency_us"]
rate, lost = report["delivered_per_s"], report["lost"]
print("%s: delivered %.0f/s, end-to-end p50 %.1f ms p99 %.1f ms, PUBACK p50 %.1f ms p99 %.1f ms, lost %d, "
      "backpressure waits %.0f" % (name, rate, e2e["p50"] / 1000, e2e["p99"] / 1000, ack["p50"] / 1000,
                                   ack["p99"] / 1000, lost, waits))
' "$name" | tee -a "$out/summary.txt"
  done
done
