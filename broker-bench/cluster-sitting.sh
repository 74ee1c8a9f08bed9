#!/usr/bin/env bash
# Cluster-scale runs of docs/benchmarks.md ("Cluster scale, APPLICATION backlogs against fan-in,
# reconnect storm"). Run from the repository root after `./mvnw -B -q -DskipTests package`:
#
#   broker-bench/cluster-sitting.sh scale OUT          p2p QoS 1 on a local cluster of 1 node, then of 3
#   broker-bench/cluster-sitting.sh app-fan-in OUT     standalone, auth on: fan-in QoS 1 to a clean and to a
#                                                      persistent APPLICATION subscriber
#   broker-bench/cluster-sitting.sh cost OUT RATE [RATE3]
#                                                      p2p QoS 1 at RATE msg/s in all on a local cluster of 1 node,
#                                                      then at RATE3 (default RATE) on one of 3, from three
#                                                      generators (one per node): every process's CPU per
#                                                      delivered message, idle and loaded; 0 = full speed
#   broker-bench/cluster-sitting.sh storm OUT N P RATE local cluster of NODES nodes (default 3), P generators
#                                                      of N devices each (persistent sessions), the last
#                                                      node killed once all are up
#
# Reports go to OUT/<run>.txt. Ports: local cluster 1883-, 8081-, 9001- (one per node), 19092-19095;
# standalone 25083, 25092-25093, 25379, 25432, 25883.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
what=${1:?scale|app-fan-in|cost|storm}
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

# CPU time of PID and every process below it (the services process starts Redis and PostgreSQL), in ticks.
tree_ticks() {
  local pid=$1 sum child
  sum=$(cpu_ticks "$pid" 2>/dev/null || echo 0)
  for child in $(pgrep -P "$pid" || true); do
    sum=$((sum + $(tree_ticks "$child")))
  done
  echo "$sum"
}

# Ticks of the services tree, then of each node, on one line.
cluster_ticks() {
  local n=$1 line i
  line=$(tree_ticks "$(cat "$LOCAL_CLUSTER_DIR/services.pid")")
  for i in $(seq 1 "$n"); do line="$line $(cpu_ticks "$(cat "$LOCAL_CLUSTER_DIR/node-$i.pid")")"; done
  echo "$line"
}

# What one delivered message costs each process of a local cluster of 1 and of 3 nodes, at the same
# rate (or at RATE3 for three nodes: three times RATE loads each node as much as the one) from the
# same three generators: generator g keeps its publishers and subscribers on node
# g mod n, so with 3 nodes the clients are spread evenly and a message crosses to another node
# whenever the node routing its partition is not its subscriber's. The idle CPU of the same
# processes over 20 s before any load is the fixed part.
cost() {
  local rate1=${3:?total msg/s} rate3=${4:-$3} rate
  export MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0 MQTT_MAX_CONNECTION_RATE=1000000
  local hz; hz=$(getconf CLK_TCK)
  local n g
  for n in 1 3; do
    rate=$rate1; [ "$n" = 3 ] && rate=$rate3
    rm -rf "$LOCAL_CLUSTER_DIR"
    ./local-cluster start "$n" >"$out/cluster-$n.log" 2>&1
    sleep "${SETTLE:-30}"
    local t0 t1
    t0=$(cluster_ticks "$n"); sleep 20; t1=$(cluster_ticks "$n")
    echo "idle 20 s, ticks at start and end (services tree, then nodes): $t0 / $t1" >"$out/cost-$n.txt"
    run_generators() {
      local pids=() gp=()
      for g in 1 2 3; do
        local port=$((1883 + (g - 1) % n))
        "${bench[@]}" --scenario p2p --qos 1 --clients 34 --rate $((rate / 3)) --port "$port" --threads 1 "$@" \
          >"$out/$tag-$n-$g.txt" 2>"$out/$tag-$n-$g.err" &
        pids+=($!)
      done
      if [ "$tag" = run ]; then
        sleep 15
        t0=$(cluster_ticks "$n"); for g in "${pids[@]}"; do gp+=("$(cpu_ticks "$g")"); done
        sleep 20
        t1=$(cluster_ticks "$n"); local i=0
        for g in "${pids[@]}"; do gp[i]="$(( $(cpu_ticks "$g") - gp[i] ))"; i=$((i + 1)); done
        echo "loaded 20 s, ticks at start and end (services tree, then nodes): $t0 / $t1; generators used: ${gp[*]}" \
          >>"$out/cost-$n.txt"
      fi
      wait "${pids[@]}" || true
    }
    tag=warm run_generators --warmup 0s --duration 60s
    tag=run run_generators --warmup 5s --duration 40s
    ./local-cluster stop >>"$out/cluster-$n.log" 2>&1
    python3 - "$out" "$n" "$hz" "$rate" <<'PY'
import json, sys
out, n, hz, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
lines = open(f"{out}/cost-{n}.txt").read().splitlines()
def ticks(line):
    a, b = line.split(": ", 1)[1].split(";")[0].split(" / ")
    return [int(y) - int(x) for x, y in zip(a.split(), b.split())]
idle, loaded = ticks(lines[0]), ticks(lines[1])
gens = sum(int(t) for t in lines[1].split("generators used: ")[1].split())
delivered = published = lost = 0.0
latency = []
for g in (1, 2, 3):
    r = json.loads(open(f"{out}/run-{n}-{g}.txt").read().strip().splitlines()[-1])
    delivered += r["delivered_per_s"]; published += r["published_per_s"]; lost += r.get("lost", 0)
    latency.append(f'{r["latency_us"]["p50"] / 1e3:.1f} / {r["latency_us"]["p99"] / 1e3:.1f}')
us = lambda t: t / hz / 20 / delivered * 1e6
print(f"nodes {n}: asked {rate} msg/s, published {published:.0f}, delivered {delivered:.0f}, lost {lost:.0f};"
      f" end-to-end p50 / p99 ms per generator: {', '.join(latency)}")
print(f"  idle cores: services {idle[0] / hz / 20:.3f}, nodes {sum(idle[1:]) / hz / 20:.3f} ({', '.join(f'{t / hz / 20:.3f}' for t in idle[1:])})")
print(f"  loaded cores: services {loaded[0] / hz / 20:.3f}, nodes {sum(loaded[1:]) / hz / 20:.3f} ({', '.join(f'{t / hz / 20:.3f}' for t in loaded[1:])}), generators {gens / hz / 20:.3f}")
print(f"  CPU per delivered message: nodes {us(sum(loaded[1:])):.1f} us ({us(sum(loaded[1:]) - sum(idle[1:])):.1f} above idle), services {us(loaded[0]):.1f} us ({us(loaded[0] - idle[0]):.1f} above idle), generators {us(gens):.1f} us")
PY
  done | tee "$out/cost.txt"
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
  cost) cost "$@" ;;
  *) echo "usage: $0 scale|app-fan-in|cost|storm OUT [N P RATE | RATE [RATE3]]" >&2; exit 2 ;;
esac
