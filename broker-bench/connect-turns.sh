#!/usr/bin/env bash
# CONNECT with a password on Eclipse Mosquitto and on FleetMQ builds taking turns (docs/benchmarks.md):
# the CONNECT target compares the two brokers' rates, and this host's speed moves between sittings by
# more than the difference, so Mosquitto runs again before every FleetMQ run instead of once per
# sitting. Each run: 100 connectors connecting with a password, CONNACK, DISCONNECT, close, in a loop
# (the connect scenario of perf-sitting.sh), with the broker's CPU per accepted CONNECT from /proc.
#
#   broker-bench/connect-turns.sh OUT ROUNDS JAR...
#
# Each round runs Mosquitto, then the first JAR, Mosquitto again, the next JAR, and so on. JAR may be
# JAVA=JAR to run that build with another java launcher (lib.sh, jar_spec). Every FleetMQ run is on a
# fresh node that first takes WARM seconds (default 150) of the same load unmeasured, for the JIT.
# Needs the mosquitto package, python3, bc, curl and a built tree. Ports: Mosquitto 26883, FleetMQ as
# start_node_30k. Output: OUT/<round>-<n>-<broker>.txt (the generator's reports) and OUT/summary.txt,
# one line per run.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
rounds_args "$@"
user=bench; pass=bench-secret-1; admin_pass=bench-admin-secret-1
ticks=$(getconf CLK_TCK)
bench() { java -jar broker-bench/target/fleetmq-bench.jar --scenario connect --clients 100 --username "$user" --password "$pass" "$@"; }
wait_port() { for _ in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.2; done; return 1; }

mosquitto_config "$out" 26883 "$user" "$pass"

# Runs the measured load against PORT, the broker being PID: one line of summary.txt for LABEL.
measure() {
  local label=$1 port=$2 pid=$3 file=$4 before after
  before=$(cpu_ticks "$pid")
  bench --port "$port" --warmup 5s --duration 20s >"$file" 2>"${file%.txt}.log" || true
  after=$(cpu_ticks "$pid")
  read -r rate total p50 p99 < <(connect_report "$file")
  echo "$label: accepted/s $rate, CONNACK p50 $p50 ms p99 $p99 ms," \
    "CPU us/CONNECT $(echo "scale=1; ($after - $before) * 1000000 / $ticks / $total" | bc)" | tee -a "$out/summary.txt"
}

mosquitto_run() {
  /usr/sbin/mosquitto -c "$out/mosquitto.conf" >>"$out/mosquitto.log" 2>&1 &
  local mosq=$!
  wait_port 26883
  measure "round $1, mosquitto" 26883 "$mosq" "$out/$1-$2-mosquitto.txt"
  kill "$mosq"; wait "$mosq" || true
}

for round in $(seq 1 "$rounds"); do
  n=0
  for spec in "${jars[@]}"; do
    jar_spec "$spec"
    n=$((n + 1))
    mosquitto_run "$round" "$n"
    start_node_30k "$jar" "$out/node" "$out/node-$round-$n.log" 2g "$admin_pass"
    make_credential 30083 "$admin_pass" "{\"type\":\"basic\",\"username\":\"$user\",\"password\":\"$pass\"}"
    bench --port 30883 --warmup 0s --duration "${WARM:-150}s" >/dev/null 2>&1 || true
    measure "round $round, $spec" 30883 "$node" "$out/$round-$n-fleetmq.txt"
    kill "$node"; wait "$node" || true
  done
done
