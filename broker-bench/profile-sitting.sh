#!/usr/bin/env bash
# A profile of a warm standalone node under a load of the generator's, with the node's CPU use
# over the profiled seconds: what docs/benchmarks.md reads before a change to the hot path.
#
#   broker-bench/profile-sitting.sh OUT [BENCH_ARGS ...]     e.g. --scenario p2p --qos 1 --rate 10000
#
# A fresh node of JAR (default broker-app/target/fleetmq.jar), authentication on, its per-client
# publish limits lifted, takes WARM seconds (default 300) of the load unmeasured, then a measured
# 30-s run, of which PROFILE seconds (default 15) are profiled with async-profiler (EVENT, default
# cpu: CPU time; wall: where each thread is, running or waiting, which shows what the threads of a
# pipeline wait for; 1-ms interval, per thread). async-profiler comes from Maven Central
# (tools.profiler:async-profiler, AP_VERSION, default 4.2) into OUT. Writes OUT/run.txt (the
# generator's report), OUT/cpu.txt (node cores used while profiled), OUT/profile.collapsed and
# OUT/summary.txt (profile-threads.py).
# Ports as start_node_30k in lib.sh. Needs curl, python3, unzip and a built tree.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
out=$(realpath -m "${1:?output directory}"); shift
jar=${JAR:-broker-app/target/fleetmq.jar}
warm=${WARM:-300} seconds=${PROFILE:-15} version=${AP_VERSION:-4.2} event=${EVENT:-cpu}
[ $# -gt 0 ] || set -- --scenario p2p --qos 1 --rate 10000
mkdir -p "$out"
lib=$out/async-profiler/linux-x64/libasyncProfiler.so
if [ ! -f "$lib" ]; then
  ./mvnw -B -q dependency:copy -Dartifact="tools.profiler:async-profiler:$version" \
    -DoutputDirectory="$out/async-profiler" >/dev/null
  unzip -q -o "$out/async-profiler/async-profiler-$version.jar" 'linux-x64/*' -d "$out/async-profiler"
fi
admin_pass=bench-admin-secret-1 user=bench pass=bench-secret-1
export MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0
start_node_30k "$jar" "$out/node" "$out/node.log" 2g "$admin_pass"
make_credential 30083 "$admin_pass" \
  "{\"type\":\"basic\",\"username\":\"$user\",\"password\":\"$pass\",\"publish\":[\"fleetmq-bench/#\"],\"subscribe\":[\"fleetmq-bench/#\"]}"
bench() { java -jar broker-bench/target/fleetmq-bench.jar --port 30883 --username "$user" --password "$pass" "$@"; }
bench --warmup 0s --duration "${warm}s" "$@" >/dev/null 2>&1 || true
bench --warmup 5s --duration 30s "$@" >"$out/run.txt" 2>"$out/run.log" &
load=$!
sleep 10
java broker-bench/Attach.java "$node" "$lib" "start,event=$event,interval=1ms,threads"
t0=$(cpu_ticks "$node")
sleep "$seconds"
t1=$(cpu_ticks "$node")
java broker-bench/Attach.java "$node" "$lib" "stop,collapsed,threads,file=$out/profile.collapsed"
echo "node cores while profiled: $(echo "scale=3; ($t1 - $t0) / $(getconf CLK_TCK) / $seconds" | bc)" >"$out/cpu.txt"
wait "$load" || true
python3 broker-bench/profile-threads.py "$out/profile.collapsed" >"$out/summary.txt"
cat "$out/cpu.txt"; tail -n 1 "$out/run.txt"; head -n 25 "$out/summary.txt"
