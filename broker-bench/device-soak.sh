#!/usr/bin/env bash
# A soak run of persistent DEVICE point-to-point on one fresh standalone node: QoS 1 at a fixed rate
# for a long measured window, with the generator's per-interval series (delivered msg/s, latency,
# the node's heap, direct memory and RSS) and, beside it, what a time series of samples cannot show:
# the node's live heap after a full collection at fixed marks, and Redis' memory and append-only
# file (docs/benchmarks.md, "Persistent DEVICE soak").
#
#   broker-bench/device-soak.sh OUT [MINUTES] [RATE]
#
# MINUTES of measured load (default 30) at RATE msg/s (default 10000), after one minute of warm-up.
# Environment: JAR (default broker-app/target/fleetmq.jar); SE, the subscribers' session expiry in
# seconds (default 300: persistent DEVICE sessions; 0: clean); GC_EVERY, minutes between the
# full collections that measure the live heap (default 10; each pauses the node once, which shows
# in that minute's p99). Needs curl, python3, redis-cli, jcmd and a built tree. Ports: MQTT 30883,
# admin HTTP 30083, embedded 30092/30093/30379/30432. Output: OUT/report.txt (the generator's
# table, series and JSON line), OUT/live.txt (minute, live heap in bytes after a full collection),
# OUT/samples.txt (every minute: routing lag, DEVICE queue size, backpressure stalls, Redis memory
# and append-only file size, Redis rewrites so far) and OUT/node.log.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
out=$(realpath -m "$1"); minutes=${2:-30}; rate=${3:-10000}; every=${GC_EVERY:-10}
rm -rf "$out"; mkdir -p "$out"
admin_pass=bench-admin-secret-1
start_node_30k "${JAR:-broker-app/target/fleetmq.jar}" "$out/data" "$out/node.log" 2g "$admin_pass"
samplers=()
trap 'for p in "${samplers[@]}"; do kill "$p" 2>/dev/null || true; done; kill $node 2>/dev/null || true; wait $node 2>/dev/null || true' EXIT
make_credential 30083 "$admin_pass" \
  '{"type":"basic","username":"bench","password":"bench-secret-1","publish":["fleetmq-bench/#"],"subscribe":["fleetmq-bench/#"]}'

# The live heap in bytes: the objects a class histogram finds after the full collection it makes
# (the embedded Kafka, Redis client and PostgreSQL pool live in the same JVM and count in it). The
# heap's "used" right after `GC.run` is no such measure: it read 77 to 218 MB in one run whose
# histograms said 75 MB.
live_heap() {
  jcmd "$node" GC.class_histogram | awk '/^Total/ {print $3}'
}

( started=$(date +%s)
  while true; do
    m=$(curl -s --max-time 2 http://127.0.0.1:30083/metrics || true)
    lag=$(echo "$m" | awk '/^fleetmq_publish_routing_lag/ {s += $2} END {print s + 0}')
    queued=$(echo "$m" | awk '/^fleetmq_device_queue_messages/ {s += $2} END {print s + 0}')
    stalls=$(echo "$m" | awk '/^fleetmq_publish_backpressure_stalls_total/ {print $2}')
    dropped=$(echo "$m" | awk '/^fleetmq_messages_dropped_total/ {s += $2} END {print s + 0}')
    redis=$(redis-cli -p 30379 info memory | tr -d '\r' | awk -F: '/^used_memory:/ {print "redis_used=" $2}')
    aof=$(redis-cli -p 30379 info persistence | tr -d '\r' | awk -F: '/^aof_current_size:/ {print "aof=" $2}')
    forks=$(redis-cli -p 30379 info stats | tr -d '\r' | awk -F: '/^total_forks:/ {print "forks=" $2}')
    echo "$(( ($(date +%s) - started) / 60 )) lag=$lag queued=$queued stalls=${stalls:--} dropped=$dropped $redis $aof $forks"
    sleep 60
  done >"$out/samples.txt" ) &
samplers+=($!)

# Full collections at the end of the warm-up, every GC_EVERY minutes of the measured window, and
# once the generator is done.
( sleep 60; echo "0 $(live_heap)"
  for ((k = every; k < minutes; k += every)); do sleep $((every * 60)); echo "$k $(live_heap)"; done
) >"$out/live.txt" 2>&1 &
samplers+=($!)

java -jar broker-bench/target/fleetmq-bench.jar --port 30883 --username bench --password bench-secret-1 \
  --scenario p2p --qos 1 --session-expiry "${SE:-300}" --rate "$rate" --warmup 60s --duration "${minutes}m" \
  --drain 60s --report-every 60s --metrics-url http://127.0.0.1:30083/metrics --broker-pid "$node" \
  >"$out/report.txt" 2>"$out/bench.log"
echo "end $(live_heap)" >>"$out/live.txt"
echo "done: $(tail -1 "$out/report.txt" | cut -c1-300)"
