#!/usr/bin/env bash
# The cost of MQTT authentication and authorization, one sitting: CONNECT handshakes per second and
# publish throughput of a standalone FleetMQ node with security off and on, and CONNECTs per second
# of Eclipse Mosquitto with and without a password file. Every configuration runs twice, the second
# round in the opposite order. Writes every run's report to OUT/<name>.txt (JSON on the last line).
#
#   broker-bench/auth-sitting.sh OUT [quick]
#
# FleetMQ configurations (each a fresh start of the node on the same data directory):
#   off    MQTT_ALLOW_ANONYMOUS=true, no credential in the database: CONNECTs never ask PostgreSQL,
#          clients connect without credentials and get the anonymous rules ('#')
#   ttl0   MQTT_ALLOW_ANONYMOUS=false, one bcrypt credential, MQTT_AUTH_CACHE_TTL=0: every CONNECT
#          reads the credential from PostgreSQL and checks the hash
#   cache  as ttl0 with the default cache (60 s): a client that connected recently skips both
# The credential is written straight into the node's `credential` table (the tree this was first run on
# had no admin API), with a $2b$ cost-10 hash made by the broker's own PasswordHashes, while the node before the
# one that must see it still runs; a node reads whether credentials exist when it starts.
#
# Needs the mosquitto package, psql, and a built tree (./mvnw -DskipTests package).
# Ports: FleetMQ 21883 (HTTP 21083, embedded services 21092/21093/21379/21432), Mosquitto 22883.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1")
mkdir -p "$out"
duration=20s
warmup=5s
if [ "${2:-}" = quick ]; then duration=3s; warmup=1s; fi
user=bench
pass=bench-secret-1
# Nine rules that do not match the benchmark's topics (six of them with placeholders), the matching one last.
rules="ARRAY['devices/\${clientid}/telemetry','devices/\${clientid}/events/#','users/\${username}/inbox/#',"
rules+="'fleet/+/commands/\${clientid}','sensors/\${clientid}/+/raw','alerts/\${username}/+','config/\${clientid}',"
rules+="'status/+/\${username}','logs/archive/#','fleetmq-bench/#']"

bench() { java -jar broker-bench/target/fleetmq-bench.jar "$@"; }
run() { # name, then bench arguments
  local name=$1; shift
  echo "== $name ($(cut -d' ' -f1-3 /proc/loadavg))" >&2
  bench "$@" >"$out/$name.txt" 2>"$out/$name.log" || true
  tail -n 1 "$out/$name.txt" >&2
}
wait_port() { for _ in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.2; done; return 1; }
machine() { { date -u; uptime; top -bn1 -o %CPU | sed -n 7,14p; } >>"$out/machine.txt"; }

# --- Eclipse Mosquitto: anonymous, or a password file written by mosquitto_passwd ($7$, 101 iterations)
rm -f "$out/mosquitto.passwd"
mosquitto_passwd -c -b "$out/mosquitto.passwd" "$user" "$pass"
chmod 0644 "$out/mosquitto.passwd" # Mosquitto may drop to its own user before reading it
printf 'listener 22883 127.0.0.1\nallow_anonymous true\npersistence false\n' >"$out/mosquitto-anon.conf"
printf 'listener 22883 127.0.0.1\nallow_anonymous false\npassword_file %s\npersistence false\n' \
  "$out/mosquitto.passwd" >"$out/mosquitto-passwd.conf"
mosquitto_round() { # round, then configurations in order
  local round=$1; shift
  for cfg in "$@"; do
    /usr/sbin/mosquitto -c "$out/mosquitto-$cfg.conf" >>"$out/mosquitto-$cfg.log" 2>&1 &
    local mosq=$!
    wait_port 22883
    if [ "$cfg" = passwd ]; then creds=(--username "$user" --password "$pass"); else creds=(); fi
    run "mosquitto-$cfg-connect-$round" --scenario connect --clients 100 --port 22883 "${creds[@]}" \
      --warmup $warmup --duration $duration
    kill "$mosq"; wait "$mosq" || true
  done
}

# --- FleetMQ, standalone. The saturation runs drive each publisher far beyond the default
# per-client publish rate, so it is off, as in sitting.sh; and the connect runs open new connections
# beyond the default 1,000 per second per listener (beyond it the node closes them before CONNACK),
# so that limit is raised to its maximum.
export MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0 MQTT_MAX_CONNECTION_RATE=1000000
data="$out/node"
rm -rf "$data" # a fresh node: the first configuration finds no credential
git rev-parse --short HEAD >"$out/commit.txt"
cat >"$out/Hash.java" <<'EOF'
public class Hash {
    public static void main(String[] args) {
        System.out.println(new io.fleetmq.persistence.auth.PasswordHashes().hash(args[0].toCharArray()));
    }
}
EOF
hash=$(java -cp broker-app/target/fleetmq.jar "$out/Hash.java" "$pass")
node=
node_start() { # configuration, log name
  local anon=true ttl=60s
  # "0" alone is refused: the setting needs a unit.
  case $1 in off) ;; ttl0) anon=false ttl=0s ;; cache) anon=false ;; esac
  MQTT_ALLOW_ANONYMOUS=$anon MQTT_AUTH_CACHE_TTL=$ttl \
  BROKER_DATA_DIR="$data" MQTT_TCP_PORT=21883 HTTP_PORT=21083 MQTT_WS_ENABLED=false \
  EMBEDDED_KAFKA_PORT=21092 EMBEDDED_KAFKA_CONTROLLER_PORT=21093 EMBEDDED_REDIS_PORT=21379 EMBEDDED_POSTGRES_PORT=21432 \
    java -Xmx2g -jar broker-app/target/fleetmq.jar >"$out/$2.log" 2>&1 &
  node=$!
  until grep -qs "FleetMQ node .* ready in" "$out/$2.log"; do sleep 0.5; kill -0 "$node"; done
}
node_stop() { kill "$node"; wait "$node" || true; }
sql() {
  PGPASSWORD=$(cat "$(find "$data" -name postgres-password | head -n 1)") \
    psql -h 127.0.0.1 -p 21432 -U postgres -d fleetmq -qAtX -v ON_ERROR_STOP=1 -c "$1"
}
credential() { # present | absent: what the next node start must find
  if [ "$1" = present ]; then
    sql "INSERT INTO credential (type, username, password_hash, publish, subscribe)
         SELECT 'basic', '$user', '$hash', $rules, $rules
         WHERE NOT EXISTS (SELECT 1 FROM credential WHERE username = '$user')"
  else
    sql "DELETE FROM credential"
  fi
  sql "SELECT count(*) FROM credential" >&2
}
fleetmq_round() { # round, then configurations in order
  local round=$1; shift
  local cfgs=("$@")
  for i in "${!cfgs[@]}"; do
    local cfg=${cfgs[$i]} next=${cfgs[$((i + 1))]:-}
    node_start "$cfg" "node-$cfg-$round"
    if [ "$cfg" = off ]; then creds=(); else creds=(--username "$user" --password "$pass"); fi
    machine
    run "fleetmq-$cfg-connect-$round" --scenario connect --clients 100 --port 21883 "${creds[@]}" \
      --warmup $warmup --duration $duration
    if [ "$cfg" = ttl0 ]; then
      # 100 connectors queue far deeper than a hash per CONNECT clears within the 10 s CONNACK
      # time-out; 10 show the latency of a shallow queue.
      run "fleetmq-$cfg-connect10-$round" --scenario connect --clients 10 --port 21883 "${creds[@]}" \
        --warmup $warmup --duration $duration
    else # the cache does not touch PUBLISH: one authorized configuration is enough
      run "fleetmq-$cfg-p2p-qos1-$round" --scenario p2p --qos 1 --port 21883 "${creds[@]}" \
        --warmup $warmup --duration $duration
      run "fleetmq-$cfg-fan-in-qos0-$round" --scenario fan-in --qos 0 --port 21883 "${creds[@]}" \
        --warmup $warmup --duration $duration
    fi
    if [ -n "$next" ]; then
      if [ "$next" = off ]; then credential absent; else credential present; fi
    fi
    node_stop
  done
}

machine
[ -n "${SKIP_MOSQUITTO:-}" ] || mosquitto_round 1 anon passwd
fleetmq_round 1 off ttl0 cache
fleetmq_round 2 cache ttl0 off
[ -n "${SKIP_MOSQUITTO:-}" ] || mosquitto_round 2 passwd anon
machine
