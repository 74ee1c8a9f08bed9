#!/usr/bin/env bash
# One benchmark sitting: Eclipse Mosquitto, a standalone FleetMQ node and a local 3-node FleetMQ
# cluster, measured one after the other with the same load generator on this machine. Writes every
# run's report to OUT/<name>.txt (the JSON line is the last line of each).
#
#   broker-bench/sitting.sh OUT [quick]
#
# "quick" shortens every run (for trying the script, not for numbers). Needs the mosquitto package
# and a built tree (./mvnw -DskipTests package). Ports: Mosquitto 11883, standalone 12883,
# cluster 21883-21885; everything under OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1")
mkdir -p "$out"
duration=20s
warmup=5s
if [ "${2:-}" = quick ]; then duration=5s; warmup=2s; fi
bench() { java -jar broker-bench/target/fleetmq-bench.jar "$@"; }
run() { # name, then bench arguments
  local name=$1; shift
  echo "== $name" >&2
  bench "$@" >"$out/$name.txt" 2>"$out/$name.log" || true
  tail -n 1 "$out/$name.txt" >&2
}
series() { # prefix, port
  for qos in 0 1; do for s in fan-in fan-out p2p; do
    run "$1-$s-qos$qos" --scenario "$s" --qos "$qos" --port "$2" --warmup $warmup --duration $duration
  done; done
  for qos in 0 1; do
    run "$1-fan-in-qos$qos-10k" --scenario fan-in --qos "$qos" --rate 10000 --port "$2" --warmup $warmup --duration $duration
    run "$1-fan-out-qos$qos-10k" --scenario fan-out --qos "$qos" --rate 100 --port "$2" --warmup $warmup --duration $duration
    run "$1-p2p-qos$qos-10k" --scenario p2p --qos "$qos" --rate 10000 --port "$2" --warmup $warmup --duration $duration
  done
}
wait_port() { for _ in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.2; done; return 1; }

# --- Mosquitto
printf 'listener 11883 127.0.0.1\nallow_anonymous true\npersistence false\n' >"$out/mosquitto.conf"
/usr/sbin/mosquitto -c "$out/mosquitto.conf" >"$out/mosquitto.log" 2>&1 &
mosq=$!
wait_port 11883
series mosquitto 11883
kill "$mosq"; wait "$mosq" || true

# --- FleetMQ: the saturation runs drive each publisher far beyond the per-client publish rate a
# public broker allows by default (mqtt.max-publish-rate), so the sitting turns it off.
export MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0

# --- FleetMQ, standalone
# The DEVICE backlog run queues 100,000 messages for one client: above the default queue limit.
BROKER_DATA_DIR="$out/standalone" DEVICE_QUEUE_LIMIT=200000 MQTT_TCP_PORT=12883 HTTP_PORT=12083 MQTT_WS_ENABLED=false \
EMBEDDED_KAFKA_PORT=12092 EMBEDDED_KAFKA_CONTROLLER_PORT=12093 EMBEDDED_REDIS_PORT=12379 EMBEDDED_POSTGRES_PORT=12432 \
  java -Xmx2g -jar broker-app/target/fleetmq.jar >"$out/standalone.log" 2>&1 &
node=$!
until grep -q "FleetMQ node .* ready in" "$out/standalone.log"; do sleep 0.5; kill -0 "$node"; done
series standalone 12883
run standalone-p2p-qos1-persistent-device --scenario p2p --qos 1 --session-expiry 300 --port 12883 --warmup $warmup --duration $duration
echo "== standalone-backlog-device" >&2
bench backlog --port 12883 --messages 100000 --client-id dev-backlog --redis 127.0.0.1:12379 >"$out/standalone-backlog-device.txt" 2>&1 || true
tail -n 1 "$out/standalone-backlog-device.txt" >&2
kill "$node"; wait "$node" || true

# --- FleetMQ, 3-node cluster: publishers on node-1, subscribers on node-2
export LOCAL_CLUSTER_DIR="$out/cluster" LOCAL_CLUSTER_MQTT_BASE=21883 LOCAL_CLUSTER_WS_BASE=29001 \
  LOCAL_CLUSTER_HTTP_BASE=28081 LOCAL_CLUSTER_SERVICE_BASE=29092 FLEETMQ_JAR=broker-app/target/fleetmq.jar \
  APPLICATION_CLIENT_ID_PATTERN='b[0-9a-z]+s[0-9]+|app-.*' JAVA_OPTS=-Xmx1g
./local-cluster start 3 >&2
for qos in 0 1; do for s in fan-in fan-out p2p; do
  run "cluster-$s-qos$qos" --scenario "$s" --qos "$qos" --port 21883 --subscriber-port 21884 --warmup $warmup --duration $duration
done; done
run cluster-p2p-qos1-10k --scenario p2p --qos 1 --rate 10000 --port 21883 --subscriber-port 21884 --warmup $warmup --duration $duration
run cluster-p2p-qos1-persistent-application --scenario p2p --qos 1 --session-expiry 300 --port 21883 --subscriber-port 21884 --warmup $warmup --duration $duration
echo "== cluster-backlog-application" >&2
bench backlog --port 21884 --publish-port 21883 --messages 100000 --client-id app-backlog >"$out/cluster-backlog-application.txt" 2>&1 || true
tail -n 1 "$out/cluster-backlog-application.txt" >&2
echo "== cluster-failover" >&2
bench failover --victim-port 21885 --victim-pid "$(cat "$out/cluster/node-3.pid")" --survivor-ports 21883,21884 \
  --clients 100 >"$out/cluster-failover.txt" 2>&1 || true
tail -n 1 "$out/cluster-failover.txt" >&2
./local-cluster stop >&2
