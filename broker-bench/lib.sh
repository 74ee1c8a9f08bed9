# Shell functions shared by the sitting scripts of broker-bench; sourced, not run.

# Waits until the node of PID has logged that it is ready, failing as soon as it exits.
#   wait_ready PID LOG
wait_ready() {
  until grep -qs "FleetMQ node .* ready in" "$2"; do sleep 0.5; kill -0 "$1" 2>/dev/null || { echo "node $1 exited before it was ready; see $2" >&2; return 1; }; done
}

# Logs in to the admin API of 127.0.0.1:HTTP_PORT as admin and creates a credential.
#   make_credential HTTP_PORT ADMIN_PASSWORD CREDENTIAL_JSON
make_credential() {
  local token
  token=$(curl -sS -f -X POST "http://127.0.0.1:$1/api/v1/auth/login" -H 'Content-Type: application/json' \
    -d "{\"username\":\"admin\",\"password\":\"$2\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
  curl -sS -f -X POST "http://127.0.0.1:$1/api/v1/credentials" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d "$3" >/dev/null
}

# A build to measure, given as JAR or as JAVA=JAR (the java launcher to run it with, by default the
# java on the PATH): sets jar and node_java, which start_node_30k runs.
#   jar_spec SPEC
jar_spec() {
  case $1 in
    *=*) node_java=${1%%=*}; jar=${1#*=} ;;
    *) node_java=java; jar=$1 ;;
  esac
}

# Writes OUT/mosquitto.conf (listener on 127.0.0.1:PORT, no anonymous clients, no persistence) with a
# password file holding USER and PASS and an ACL giving USER fleetmq-bench/#: the rights of the
# FleetMQ credential the sittings make.
#   mosquitto_config OUT PORT USER PASS
mosquitto_config() {
  rm -f "$1/mosquitto.passwd"
  mosquitto_passwd -c -b "$1/mosquitto.passwd" "$3" "$4"
  printf 'user %s\ntopic readwrite fleetmq-bench/#\n' "$3" >"$1/mosquitto.acl"
  chmod 0644 "$1/mosquitto.passwd" "$1/mosquitto.acl"
  printf 'listener %s 127.0.0.1\nallow_anonymous false\npassword_file %s\nacl_file %s\npersistence false\n' \
    "$2" "$1/mosquitto.passwd" "$1/mosquitto.acl" >"$1/mosquitto.conf"
}

# Of the generator's report of a connect run (its JSON line last): accepted CONNECTs per second, the
# accepted CONNECTs of warm-up and measured run together at that rate, CONNACK p50 and p99 in ms.
#   read -r rate total p50 p99 < <(connect_report FILE)
connect_report() {
  tail -n 1 "$1" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
l = r["connack_latency_us"]
print(round(r["accepted_per_s"]), round(r["accepted_per_s"] * (r["warmup_s"] + r["measured_s"])),
      round(l["p50"] / 1000, 1), round(l["p99"] / 1000, 1))'
}

# The arguments of a script that runs builds in turns, OUT ROUNDS JAR...: sets out (made if
# missing), rounds and the array jars.
#   rounds_args "$@"
rounds_args() {
  out=$(realpath -m "$1"); rounds=$2; shift 2
  jars=("$@")
  mkdir -p "$out"
}

# CPU time the process of PID has used so far, user and system, in clock ticks (getconf CLK_TCK).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# Starts a standalone node of JAR (run by node_java, default java; see jar_spec) with authentication
# on, on a fresh data directory DATA, and waits until it is ready; sets `node` to its PID and kills it
# when the script exits. MQTT on 30883, admin HTTP on 30083, embedded services on
# 30092/30093/30379/30432; admin password ADMIN_PASSWORD.
#   start_node_30k JAR DATA LOG HEAP ADMIN_PASSWORD
start_node_30k() {
  rm -rf "$2"
  MQTT_ALLOW_ANONYMOUS=false MQTT_MAX_CONNECTION_RATE=1000000 ADMIN_PASSWORD="$5" \
  BROKER_DATA_DIR="$2" MQTT_TCP_PORT=30883 HTTP_PORT=30083 MQTT_WS_ENABLED=false \
  EMBEDDED_KAFKA_PORT=30092 EMBEDDED_KAFKA_CONTROLLER_PORT=30093 EMBEDDED_REDIS_PORT=30379 \
  EMBEDDED_POSTGRES_PORT=30432 "${node_java:-java}" "-Xmx$4" -jar "$1" >"$3" 2>&1 &
  node=$!
  trap 'kill $node 2>/dev/null || true' EXIT
  wait_ready "$node" "$3"
}
