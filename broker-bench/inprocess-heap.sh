#!/usr/bin/env bash
# What idle connections cost a standalone node's heap with more of them than a process may open
# files (docs/benchmarks.md): CLIENTS devices connect with a password, subscribe to a topic of their
# own at QoS 1 and stay, over Netty's local transport into a node running in the same JVM with
# -Xmx1g, through its TCP listener's pipeline (io.fleetmq.bench.inprocess.InProcessFleet). The
# JVM's live heap is taken from class histograms (each after a full GC) before the first client and
# with all held; a second run without a node (--bare) measures the two ends of a bare local
# connection, the part of the difference that is not the node's.
#
#   broker-bench/inprocess-heap.sh OUT CLIENTS [JAR]
#
# JAR defaults to broker-app/target/fleetmq.jar. Needs a built tree (the bench jar). Ports: admin
# HTTP 30083, embedded 30092/30093/30379/30432 (no MQTT port is used: MQTT_TCP_PORT 30883 is bound
# but idle). Output: OUT/node/ and OUT/bare/ (summary.txt, the two histograms, the log) and
# OUT/summary.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1"); clients=$2; jar=${3:-broker-app/target/fleetmq.jar}
mkdir -p "$out/node" "$out/bare"
cp=$jar:broker-bench/target/fleetmq-bench.jar
rm -rf "$out/data"
MQTT_ALLOW_ANONYMOUS=false MQTT_MAX_CONNECTION_RATE=1000000 MQTT_MAX_CONNECTIONS=1000000 ADMIN_PASSWORD=bench-admin-secret-1 \
  BROKER_DATA_DIR="$out/data" MQTT_TCP_PORT=30883 HTTP_PORT=30083 MQTT_WS_ENABLED=false \
  EMBEDDED_KAFKA_PORT=30092 EMBEDDED_KAFKA_CONTROLLER_PORT=30093 EMBEDDED_REDIS_PORT=30379 \
  EMBEDDED_POSTGRES_PORT=30432 \
  java -Xmx1g -cp "$cp" io.fleetmq.bench.inprocess.InProcessFleet "$out/node" "$clients" >"$out/node/log.txt" 2>&1 \
  || echo "the node run ended with an error; see $out/node/log.txt" >&2
java -Xmx1g -cp "$cp" io.fleetmq.bench.inprocess.InProcessFleet "$out/bare" "$clients" --bare >"$out/bare/log.txt" 2>&1 \
  || echo "the bare run ended with an error; see $out/bare/log.txt" >&2
cat "$out/node/summary.txt" "$out/bare/summary.txt" | tee "$out/summary.txt"
