#!/usr/bin/env bash
# A fixed-rate run on a fresh standalone node, reported every 20 s from the first second of load, so
# the warm-up shows: the generator's median and p99 per interval, and beside each interval the node's
# cores and its publish producer's Kafka requests (from /metrics).
#
#   broker-bench/warm-series.sh OUT [JAR] [SECONDS]
#
# JAR defaults to broker-app/target/fleetmq.jar, SECONDS to 300. The load is p2p QoS 1 at 10,000
# msg/s unless BENCH_ARGS says otherwise (for example BENCH_ARGS="--scenario fan-in --qos 1 --rate
# 10000"). The node runs with authentication on, as perf-sitting.sh runs it, and with the
# environment this script is given, so a setting can be compared by running it twice, e.g.
# KAFKA_PUBLISH_PARTITIONS=16 broker-bench/warm-series.sh /tmp/ws16. At 100 s the embedded Kafka's
# per-request times go to OUT/kafka-requests.txt (KafkaRequestTimes.java). Ports as start_node_30k.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
out=$(realpath -m "$1"); jar=${2:-broker-app/target/fleetmq.jar}; seconds=${3:-300}
read -r -a load <<<"${BENCH_ARGS:---scenario p2p --qos 1 --rate 10000}"
mkdir -p "$out"
export MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0
start_node_30k "$jar" "$out/node" "$out/node.log" 2g bench-admin-secret-1
make_credential 30083 bench-admin-secret-1 \
  '{"type":"basic","username":"bench","password":"bench-secret-1","publish":["fleetmq-bench/#"],"subscribe":["fleetmq-bench/#"]}'
java -jar broker-bench/target/fleetmq-bench.jar --port 30883 --username bench --password bench-secret-1 \
  "${load[@]}" --warmup 0s --duration "${seconds}s" --report-every 20s >"$out/run.txt" 2>"$out/run.log" &
bench=$!
metric() { # the value of the first series of $1 whose labels match $2
  awk -v name="$1" -v labels="$2" 'index($0, name "{") == 1 && index($0, labels) { print $2; exit }' "$out/metrics.txt"
}
for i in $(seq 1 $((seconds / 20))); do
  t0=$(cpu_ticks "$node"); sleep 20; t1=$(cpu_ticks "$node")
  curl -s http://127.0.0.1:30083/metrics >"$out/metrics.txt"
  producer='-publish",'
  printf 't=%s s  node cores %s  publish requests/s %s  records/request %s  request ms %s  queue ms %s\n' \
    $((i * 20)) "$(echo "scale=2; ($t1 - $t0) / 100 / 20" | bc)" \
    "$(metric kafka_producer_request_rate "$producer")" "$(metric kafka_producer_records_per_request_avg "$producer")" \
    "$(metric kafka_producer_request_latency_avg "$producer")" "$(metric kafka_producer_record_queue_time_avg "$producer")" \
    | tee -a "$out/node-series.txt"
  if [ "$i" = 5 ]; then java broker-bench/KafkaRequestTimes.java "$node" >"$out/kafka-requests.txt" 2>&1 || true; fi
done
wait "$bench" || true
grep interval "$out/run.log" | tee "$out/latency-series.txt"
kill "$node"; wait "$node" 2>/dev/null || true
