#!/usr/bin/env bash
# What a CONNECT costs a standalone node per build (docs/benchmarks.md): 100 connectors connecting,
# authenticating with a password and disconnecting in a loop, with the node's CPU per accepted
# CONNECT (/proc) and the Kafka offset commits of its consumers per accepted CONNECT, beside the
# generator's rate and CONNACK latency.
#
#   broker-bench/connect-cost.sh OUT ROUNDS JAR...
#
# JAR may be JAVA=JAR to run that build with another java launcher (lib.sh, jar_spec): the same build
# on two JVMs is then measured in turns.
# The builds take turns, ROUNDS times (A B A B ...), each on a fresh data directory. Before the
# measured run each node connects unmeasured for WARM seconds (default 180): the JIT compiles the
# broker's and the embedded Kafka's code for minutes, and CONNECT alone reaches its steady rate
# after about three. Authentication as in perf-sitting.sh: one bcrypt `basic` credential, made
# through the admin API. Needs python3, bc, curl and a built tree. Ports: MQTT 30883, admin HTTP
# 30083, embedded 30092/30093/30379/30432. Output: OUT/<round>-<build>.txt (the generator's report)
# and OUT/summary.txt, one line per run.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
rounds_args "$@"
user=bench; pass=bench-secret-1; admin_pass=bench-admin-secret-1
bench() {
  java -jar broker-bench/target/fleetmq-bench.jar --port 30883 --scenario connect --clients 100 \
    --username "$user" --password "$pass" "$@"
}
commits() { # every consumer of the node: the connect sequence's, the followers', the node inbox's
  curl -s http://127.0.0.1:30083/metrics | awk '/^kafka_consumer_coordinator_commit_total\{/ {s += $NF} END {printf "%d", s}'
}
ticks=$(getconf CLK_TCK)
for round in $(seq 1 "$rounds"); do
  i=0
  for spec in "${jars[@]}"; do
    jar_spec "$spec"
    i=$((i + 1))
    start_node_30k "$jar" "$out/node" "$out/node-$round-$i.log" 2g "$admin_pass"
    make_credential 30083 "$admin_pass" "{\"type\":\"basic\",\"username\":\"$user\",\"password\":\"$pass\"}"
    bench --warmup 0s --duration "${WARM:-180}s" >/dev/null 2>&1 || true
    before=$(cpu_ticks "$node"); commits0=$(commits)
    bench --warmup 5s --duration 20s >"$out/$round-$i.txt" 2>"$out/$round-$i.log" || true
    after=$(cpu_ticks "$node"); commits1=$(commits)
    # The CPU ticks cover the warm-up too: the accepted CONNECTs of both, at the measured rate.
    read -r rate total p50 p99 < <(connect_report "$out/$round-$i.txt")
    echo "round $round, $spec: accepted/s $rate, CONNACK p50 $p50 ms p99 $p99 ms," \
      "node CPU us/CONNECT $(echo "scale=1; ($after - $before) * 1000000 / $ticks / $total" | bc)," \
      "Kafka commits per CONNECT $(echo "scale=3; ($commits1 - $commits0) / $total" | bc)" \
      | tee -a "$out/summary.txt"
    kill "$node"; wait "$node" || true
  done
done
