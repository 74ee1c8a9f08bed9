#!/usr/bin/env bash
# Cluster-scale runs of docs/benchmarks.md ("Cluster scale, APPLICATION backlogs against fan-in,
# reconnect storm"). Run from the repository root after `./mvnw -B -q -DskipTests package`:
#
#   broker-bench/cluster-sitting.sh scale OUT          p2p QoS 1 on a local cluster of 1 node, then of 3
#   broker-bench/cluster-sitting.sh app-fan-in OUT     standalone, auth on: fan-in QoS 1 to a clean and to a
#                                                      persistent APPLICATION subscriber
#   broker-bench/cluster-sitting.sh storm OUT N P RATE local cluster of NODES nodes (default 3), P generators
#                                                      of N devices each (persistent sessions), the last
#                                                      node killed once all are up
#
# Reports go to OUT/<run>.txt. Ports: local cluster 1883-, 8081-, 9001- (one per node), 19092-19095;
# standalone 25083, 25092-25093, 25379, 25432, 25883.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?scale|app-fan-in|storm}
out=${2:?output directory}
mkdir -p "$out"
jar=${JAR:-$PWD/broker-app/target/fleetmq.jar}
bench=(java -jar "$PWD/broker-bench/target/fleetmq-bench.jar")
export LOCAL_CLUSTER_DIR=${LOCAL_CLUSTER_DIR:-$out/local-cluster} FLEETMQ_JAR=$jar JAVA_OPTS=${JAVA_OPTS:--Xmx2g}

scale() {
  export MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0 MQTT_MAX_CONNECTION_RATE=1000000
  for n in 1 3; do
    rm -rf "$LOCAL_CLUSTER_DIR"
    ./local-cluster start "$n" >"$out/cluster-$n.log" 2>&1
    # 3 nodes: publishers on node-1, subscribers on node-2, node-3 routes its share of the partitions.
    local sub=1883; [ "$n" = 3 ] && sub=1884
    local common=(--scenario p2p --qos 1 --clients 100 --port 1883 --subscriber-port "$sub")
    "${bench[@]}" "${common[@]}" --duration 20s >"$out/warmup-$n.txt" 2>&1
    "${bench[@]}" "${common[@]}" --duration 30s >"$out/p2p-$n.txt" 2>&1
    "${bench[@]}" "${common[@]}" --duration 30s --rate 10000 >"$out/p2p-10k-$n.txt" 2>&1
    ./local-cluster stop >>"$out/cluster-$n.log" 2>&1
  done
}

app_fan_in() {
  local data=$out/node; rm -rf "$data"
  APPLICATION_CLIENT_ID_PATTERN='b[0-9a-z]+s[0-9]+' \
  MQTT_ALLOW_ANONYMOUS=false MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0 MQTT_MAX_CONNECTION_RATE=1000000 \
  ADMIN_PASSWORD=admin-secret-1 BROKER_DATA_DIR="$data" MQTT_TCP_PORT=25883 HTTP_PORT=25083 MQTT_WS_ENABLED=false \
  EMBEDDED_KAFKA_PORT=25092 EMBEDDED_KAFKA_CONTROLLER_PORT=25093 EMBEDDED_REDIS_PORT=25379 EMBEDDED_POSTGRES_PORT=25432 \
    java -Xmx2g -jar "$jar" >"$out/node.log" 2>&1 &
  local node=$!
  trap "kill $node 2>/dev/null || true" EXIT
  until grep -qs "FleetMQ node .* ready in" "$out/node.log"; do sleep 0.5; kill -0 "$node"; done
  local token
  token=$(curl -sS -f -X POST http://127.0.0.1:25083/api/v1/auth/login -H 'Content-Type: application/json' \
    -d '{"username":"admin","password":"admin-secret-1"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
  curl -sS -f -X POST http://127.0.0.1:25083/api/v1/credentials -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d '{"type":"basic","username":"bench","password":"bench-secret-1",
    "publish":["fleetmq-bench/#"],"subscribe":["fleetmq-bench/#"]}' >/dev/null
  local common=(--port 25883 --username bench --password bench-secret-1 --scenario fan-in --qos 1 --clients 100)
  "${bench[@]}" "${common[@]}" --duration 20s >"$out/warmup.txt" 2>&1
  "${bench[@]}" "${common[@]}" --duration 30s >"$out/clean.txt" 2>&1
  # The subscriber's client ID matches the pattern: with an expiry it is a persistent APPLICATION session.
  "${bench[@]}" "${common[@]}" --duration 30s --session-expiry 300 --drain 120s --report-every 5s \
    --metrics-url http://127.0.0.1:25083/metrics --broker-pid "$node" >"$out/app.txt" 2>&1
  "${bench[@]}" "${common[@]}" --duration 30s --session-expiry 300 --drain 120s --report-every 5s \
    --rate 20000 >"$out/app-20k.txt" 2>&1
  curl -s http://127.0.0.1:25083/metrics | grep -E '^fleetmq_messages_dropped_total|^fleetmq_application' \
    >"$out/metrics.txt" || true
  kill "$node"; wait "$node" || true
}

storm() {
  local per=${3:?devices per generator} procs=${4:?generators} rate=${5:?connects/s per generator}
  local nodes=${NODES:-3} ports
  ports=$(seq -s, 1883 $((1882 + nodes)))
  rm -rf "$LOCAL_CLUSTER_DIR"
  ./local-cluster start "$nodes" >"$out/cluster.log" 2>&1
  # Nodes started together compile their code and settle their consumer groups for a while after
  # they say ready; on shared cores a ramp started at once times out on that, not on the broker.
  sleep "${SETTLE:-30}"
  local pids=() p
  for p in $(seq 1 "$procs"); do
    "${bench[@]}" --scenario storm --clients "$per" --qos 1 --session-expiry 300 --port "$ports" \
      --source-addresses "127.0.0.$((p * 10))-127.0.0.$((p * 10 + 3))" --connect-rate "$rate" \
      --connect-concurrency 500 --threads 1 --duration 10m --storm-timeout 120s \
      >"$out/storm-$p.txt" 2>"$out/storm-$p.err" &
    pids+=($!)
  done
  for p in $(seq 1 "$procs"); do
    until grep -q '^READY$' "$out/storm-$p.err"; do kill -0 "${pids[$((p - 1))]}" || break; sleep 1; done
  done
  kill -9 "$(cat "$LOCAL_CLUSTER_DIR/node-$nodes.pid")"
  wait "${pids[@]}" || true
  ./local-cluster stop >>"$out/cluster.log" 2>&1
}

case $what in
  scale) scale ;;
  app-fan-in) app_fan_in ;;
  storm) storm "$@" ;;
  *) echo "usage: $0 scale|app-fan-in|storm OUT [N P RATE]" >&2; exit 2 ;;
esac
