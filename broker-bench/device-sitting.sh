#!/usr/bin/env bash
# Persistent DEVICE (or clean) point-to-point at saturation on one fresh standalone node, run after
# run, with the node's routing lag, backpressure state and DEVICE queue size and Redis' append-only
# file state sampled about once a second (docs/benchmarks.md, "A faster sitting").
#
#   broker-bench/device-sitting.sh OUT RUNS
#
# Environment: JAR (default broker-app/target/fleetmq.jar); SE, the subscribers' session expiry in
# seconds (default 300: persistent DEVICE sessions; 0: clean); RATE (default 0, saturation);
# REDIS_CMD, arguments for redis-cli run once the node is ready (for example
# "config set auto-aof-rewrite-percentage 0"). Needs curl, python3, redis-cli and a built tree.
# Ports: MQTT 28883, admin HTTP 28083, embedded 28092/28093/28379/28432. Output: OUT/r<n>.txt (the
# generator's report, with its per-second series), OUT/samples.txt, OUT/runs.txt (one line per
# run) and OUT/redis-persistence.txt (Redis' INFO persistence and forks at the end). The samples'
# `stalls` is fleetmq_publish_backpressure_stalls_total (absent before the node counted stalls).
set -uo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
out=$(realpath -m "$1"); runs=$2
rm -rf "$out"; mkdir -p "$out"
admin_pass=bench-admin-secret-1
MQTT_ALLOW_ANONYMOUS=false MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0 MQTT_MAX_CONNECTION_RATE=1000000 \
ADMIN_PASSWORD="$admin_pass" BROKER_DATA_DIR="$out/data" MQTT_TCP_PORT=28883 HTTP_PORT=28083 MQTT_WS_ENABLED=false \
EMBEDDED_KAFKA_PORT=28092 EMBEDDED_KAFKA_CONTROLLER_PORT=28093 EMBEDDED_REDIS_PORT=28379 EMBEDDED_POSTGRES_PORT=28432 \
  java -Xmx2g -jar "${JAR:-broker-app/target/fleetmq.jar}" >"$out/node.log" 2>&1 &
node=$!
sampler=
trap '[ -n "$sampler" ] && kill $sampler 2>/dev/null; kill $node 2>/dev/null; wait $node 2>/dev/null' EXIT
wait_ready "$node" "$out/node.log" || exit 1
make_credential 28083 "$admin_pass" \
  '{"type":"basic","username":"bench","password":"bench-secret-1","publish":["fleetmq-bench/#"],"subscribe":["fleetmq-bench/#"]}'
if [ -n "${REDIS_CMD:-}" ]; then redis-cli -p 28379 $REDIS_CMD; fi
( while true; do
    m=$(curl -s --max-time 1 http://127.0.0.1:28083/metrics)
    lag=$(echo "$m" | awk '/^fleetmq_publish_routing_lag/ {s += $2} END {print s + 0}')
    behind=$(echo "$m" | awk '/^fleetmq_publish_backpressure_behind/ {print $2}')
    queued=$(echo "$m" | awk '/^fleetmq_device_queue_messages/ {s += $2} END {print s + 0}')
    stalls=$(echo "$m" | awk '/^fleetmq_publish_backpressure_stalls_total/ {print $2}')
    aof=$(redis-cli -p 28379 info persistence 2>/dev/null | tr -d '\r' \
      | awk -F: '/aof_rewrite_in_progress|aof_delayed_fsync/ {printf "%s=%s ", $1, $2}')
    echo "$(date +%s.%N | cut -c1-14) lag=$lag behind=$behind stalls=${stalls:--} queued=$queued cpu=$(cpu_ticks "$node") $aof"
    sleep 1
  done >"$out/samples.txt" ) &
sampler=$!
bench() {
  java -jar broker-bench/target/fleetmq-bench.jar --port 28883 --username bench --password bench-secret-1 \
    --scenario p2p --qos 1 --session-expiry "${SE:-300}" "$@"
}
for i in 1 2; do bench --rate 4000 --warmup 0s --duration 20s --drain 30s >/dev/null 2>&1; done
for i in $(seq 1 "$runs"); do
  bench --rate "${RATE:-0}" --warmup 3s --duration 20s --drain 30s --report-every 1s >"$out/r$i.txt" 2>"$out/r$i.log"
  python3 - "$out/r$i.txt" <<'PY' | tee -a "$out/runs.txt"
import json, re, sys
text = open(sys.argv[1]).read()
r = json.loads(text.strip().splitlines()[-1])
series = text.split("time series", 1)[1] if "time series" in text else ""
per_s = [int(m.group(1).replace(",", "")) for m in re.finditer(r"^\s+[\d.]+ s\s+[\d,]+\s+([\d,]+)", series, re.M)]
print("delivered %.0f/s, slowest second %s, p50 %.0f ms, p99 %.0f ms, lost %d" % (
    r["delivered_per_s"], min(per_s) if per_s else "-", r["latency_us"]["p50"] / 1000,
    r["latency_us"]["p99"] / 1000, r["lost"]))
PY
done
{ redis-cli -p 28379 info persistence; redis-cli -p 28379 info stats | grep fork; } >"$out/redis-persistence.txt"
