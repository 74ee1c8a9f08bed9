#!/usr/bin/env bash
# The performance sitting of docs/benchmarks.md: Eclipse Mosquitto and a standalone FleetMQ node as
# users run them, with authentication and authorization on, measured one after the other with the
# same load generator on this machine.
#
#   broker-bench/perf-sitting.sh OUT [JAR ...]
#
# JAR: FleetMQ builds to measure, one after the other (default broker-app/target/fleetmq.jar), so a
# change can be measured beside the build before it in the same sitting; JAVA=JAR runs that build with
# another java launcher (lib.sh, jar_spec), to measure one build on two JVMs. Needs the mosquitto
# package, curl, python3 and a built tree (./mvnw -B -o -q package -pl broker-app,broker-bench -am
# -DskipTests). Ports: FleetMQ 25883 (admin HTTP 25083, embedded 25092/25093/25379/25432),
# Mosquitto 26883. Every report goes to OUT/<name>.txt, its JSON line last.
#
# ONLY: a space-separated subset of the scenario names to run (for example ONLY=connect), default all.
# WARM: seconds of the unmeasured run before each FleetMQ scenario (default 300). The JVM goes on
# compiling for minutes: CONNECT alone, on a fresh node, reaches its steady rate after about 3 minutes,
# and in one run the median of p2p at 10,000 msg/s fell from 29 ms in its first 20 s to about 2 ms from 160 s on.
#
# Each FleetMQ scenario first runs once unmeasured: the JVM compiles the code of the broker and of
# its embedded Kafka for minutes after start, and a first run measures the compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
out=$(realpath -m "$1"); shift
jars=("$@"); [ ${#jars[@]} -gt 0 ] || jars=(broker-app/target/fleetmq.jar)
mkdir -p "$out"
user=bench; pass=bench-secret-1; admin_pass=bench-admin-secret-1
creds=(--username "$user" --password "$pass")
bench() { java -jar broker-bench/target/fleetmq-bench.jar "$@"; }
run() { # name, then bench arguments
  local name=$1; shift
  echo "== $name (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  bench --warmup 5s --duration 20s "$@" >"$out/$name.txt" 2>"$out/$name.log" || true
  tail -n 1 "$out/$name.txt" >&2
}
wait_port() { for _ in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.2; done; return 1; }
scenarios() { # prefix, port, warm-up first (yes/no)
  local p=$1 port=$2 warm=$3
  local -a list=(
    "p2p-qos1|--scenario p2p --qos 1"
    "fan-in-qos1|--scenario fan-in --qos 1"
    "p2p-qos1-10k|--scenario p2p --qos 1 --rate 10000"
    "fan-in-qos1-10k|--scenario fan-in --qos 1 --rate 10000"
    "connect|--scenario connect --clients 100")
  for entry in "${list[@]}"; do
    local name=${entry%%|*} args=${entry#*|}
    if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
    if [ "$warm" = yes ]; then
      bench --warmup 0s --duration "${WARM:-300}s" $args --port "$port" "${creds[@]}" >/dev/null 2>&1 || true
    fi
    run "$p-$name" $args --port "$port" "${creds[@]}"
  done
}
git rev-parse --short HEAD >"$out/commit.txt"
{ date -u; uptime; } >"$out/machine.txt"

# --- Mosquitto: password file and ACL, the same rights as the FleetMQ credential below
mosquitto_config "$out" 26883 "$user" "$pass"
/usr/sbin/mosquitto -c "$out/mosquitto.conf" >"$out/mosquitto.log" 2>&1 &
mosq=$!
trap 'kill $mosq 2>/dev/null || true' EXIT
wait_port 26883
scenarios mosquitto 26883 no
kill "$mosq"; wait "$mosq" || true

# --- FleetMQ, standalone, authentication on: one basic credential with publish and subscribe rules.
# The per-client publish rate limit and the new-connection rate limit are lifted: the generator's
# 100 clients send far beyond their defaults, which are for fleets of devices.
i=0
for spec in "${jars[@]}"; do
  jar_spec "$spec"
  i=$((i + 1))
  data="$out/node-$i"; rm -rf "$data"
  MQTT_ALLOW_ANONYMOUS=false MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0 MQTT_MAX_CONNECTION_RATE=1000000 \
  ADMIN_PASSWORD="$admin_pass" BROKER_DATA_DIR="$data" MQTT_TCP_PORT=25883 HTTP_PORT=25083 MQTT_WS_ENABLED=false \
  EMBEDDED_KAFKA_PORT=25092 EMBEDDED_KAFKA_CONTROLLER_PORT=25093 EMBEDDED_REDIS_PORT=25379 EMBEDDED_POSTGRES_PORT=25432 \
    "$node_java" -Xmx2g -jar "$jar" >"$out/node-$i.log" 2>&1 &
  node=$!
  trap 'kill $node 2>/dev/null || true' EXIT
  wait_ready "$node" "$out/node-$i.log"
  make_credential 25083 "$admin_pass" \
    "{\"type\":\"basic\",\"username\":\"$user\",\"password\":\"$pass\",\"publish\":[\"fleetmq-bench/#\"],\"subscribe\":[\"fleetmq-bench/#\"]}"
  echo "fleetmq-$i: $spec" >>"$out/machine.txt"
  scenarios "fleetmq-$i" 25883 yes
  curl -s http://127.0.0.1:25083/metrics | grep '^fleetmq_messages_dropped_total' >"$out/fleetmq-$i-drops.txt" || true
  kill "$node"; wait "$node" || true
done
{ date -u; uptime; } >>"$out/machine.txt"
