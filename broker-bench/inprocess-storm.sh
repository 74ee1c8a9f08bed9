#!/usr/bin/env bash
# A reconnect storm onto one node with more clients than a process may open files
# (docs/benchmarks.md): two cluster nodes on shared Kafka, Redis and PostgreSQL (the "services"
# subcommand), each running in the JVM of an in-process fleet (io.fleetmq.bench.inprocess). Node A's
# fleet of CLIENTS devices connects with a password and a session expiry of 300 s, subscribes at
# QoS 1 and stays; then node A is killed with SIGKILL, and node B's fleet, the same devices,
# reconnects at once (at most WINDOW handshakes under way, default 5,000) without clean start.
# The report gives when each was served again after the kill, how many found their session, and
# every failure by kind (CONNACK reason code, closed without a CONNACK).
#
#   broker-bench/inprocess-storm.sh OUT CLIENTS [JAR]
#
# With OWN=1 every device has a credential of its own, as a fleet usually has: user name its client
# ID, password pw-<client ID>, stored as Mosquitto's PBKDF2 ($7$, ITERATIONS, default 101), imported
# into node B before node A's fleet connects (import-mosquitto); so each reconnecting device costs
# node B a credential read and a hash check of its own. With ANONYMOUS=1 no credential is made and the nodes let anonymous clients in, so no CONNECT
# waits for a credential's lookup or a password check. Node B takes at most RATE new connections per second (MQTT_MAX_CONNECTION_RATE, default here
# 5000; the shipped default is 1000). JAR defaults to broker-app/target/fleetmq.jar. Needs a built
# tree. NODE_B_JAVA_OPTS adds JVM options to node B's java command (a diagnostic such as
# -XX:+PrintCompilation). Ports: services 31092-31095, node A MQTT 31883 and HTTP 31083, node B 31884 and 31084.
# Output: OUT/a, OUT/b (logs, summaries), OUT/summary.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1"); clients=$2; jar=$(realpath "${3:-broker-app/target/fleetmq.jar}")
rm -rf "$out"; mkdir -p "$out/a" "$out/b"
cp=$jar:$(realpath broker-bench/target/fleetmq-bench.jar)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
await() { # LOG TEXT PID
  until grep -qs "$2" "$1"; do sleep 0.5; kill -0 "$3" 2>/dev/null || { echo "exited early; see $1" >&2; exit 1; }; done
}
BROKER_DATA_DIR="$out/services" EMBEDDED_KAFKA_PORT=31092 EMBEDDED_KAFKA_CONTROLLER_PORT=31093 \
  EMBEDDED_REDIS_PORT=31094 EMBEDDED_POSTGRES_PORT=31095 java -jar "$jar" services >"$out/services.log" 2>&1 &
services=$!; pids+=("$services")
await "$out/services.log" "# services ready" "$services"
set -a; . "$out/services/services.env"; set +a
anon=(); MQTT_ALLOW_ANONYMOUS=false
if [ -n "${ANONYMOUS:-}" ]; then anon=(--anonymous); MQTT_ALLOW_ANONYMOUS=true; fi
if [ -n "${OWN:-}" ]; then anon=(--own-credentials); fi
export MQTT_ALLOW_ANONYMOUS ADMIN_PASSWORD=bench-admin-secret-1 MQTT_WS_ENABLED=false MQTT_MAX_CONNECTIONS=1000000
BROKER_NODE_ID=node-b BROKER_DATA_DIR="$out/b/data" MQTT_TCP_PORT=31884 HTTP_PORT=31084 \
  MQTT_MAX_CONNECTION_RATE=${RATE:-5000} \
  java -Xmx1g ${NODE_B_JAVA_OPTS:-} -cp "$cp" io.fleetmq.bench.inprocess.InProcessFleet "$out/b" "$clients" --cluster-node \
  --storm "$out/killed" --window "${WINDOW:-5000}" "${anon[@]}" >"$out/b/log.txt" 2>&1 &
b=$!; pids+=("$b")
await "$out/b/log.txt" "waiting for" "$b"
if [ -n "${OWN:-}" ]; then
  python3 - "$clients" "${ITERATIONS:-101}" >"$out/passwd" <<'PY'
import base64, hashlib, os, sys
clients, iterations = int(sys.argv[1]), int(sys.argv[2])
for name in [f"inproc-{i}" for i in range(clients)] + ["inproc-publisher"]:
    salt = os.urandom(12)
    digest = hashlib.pbkdf2_hmac("sha512", f"pw-{name}".encode(), salt, iterations, 64)
    print(f"{name}:$7${iterations}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}")
PY
  echo "pattern readwrite fleetmq-bench/#" >"$out/acl"
  t0=$(date +%s)
  java -jar "$jar" import-mosquitto --api http://127.0.0.1:31084 --passwd "$out/passwd" --acl "$out/acl" \
    >"$out/import.log" 2>&1
  echo "imported $((clients + 1)) credentials in $(( $(date +%s) - t0 )) s" | tee -a "$out/import.log"
fi
BROKER_NODE_ID=node-a BROKER_DATA_DIR="$out/a/data" MQTT_TCP_PORT=31883 HTTP_PORT=31083 MQTT_MAX_CONNECTION_RATE=1000000 \
  java -Xmx1g -cp "$cp" io.fleetmq.bench.inprocess.InProcessFleet "$out/a" "$clients" --cluster-node \
  --persistent --hold "${anon[@]}" >"$out/a/log.txt" 2>&1 &
a=$!; pids+=("$a")
await "$out/a/log.txt" "holding until killed" "$a"
sleep 5 # node B has read the sessions of node A's fleet
kill -9 "$a"
date +%s%3N >"$out/killed.tmp"; mv "$out/killed.tmp" "$out/killed"
wait "$b" || echo "node B's fleet reported failures" >&2
cat "$out/a/summary.txt" "$out/b/summary.txt" | tee "$out/summary.txt"
