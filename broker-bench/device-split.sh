#!/usr/bin/env bash
# Where the CPU of persistent DEVICE point-to-point at saturation goes, per process: the node, the
# embedded Redis server and the load generator, beside the delivered rate, and what Redis ran
# (docs/benchmarks.md, "Where the persistent DEVICE path waits").
#
#   broker-bench/device-split.sh OUT ROUNDS JAR...
#
# The builds take turns, ROUNDS times (A B A B ...), each on a fresh standalone node (authentication
# on, per-client publish limits lifted): WARM seconds (default 30) of the same load unmeasured, then
# `--scenario p2p --qos 1 --rate 0 --warmup 3s --duration 30s --drain 30s`, of which 15 s in the
# middle are measured: /proc CPU of the three processes, `vmstat 5`, Redis' INFO commandstats
# (reset first), and the node's routing and DEVICE queue write delays (the mean over those seconds of
# each batch's oldest message; "-" for a build without these timers). Environment: SE, the
# subscribers' session expiry (default 300: persistent DEVICE sessions; 0: clean ones), and any
# setting of the node (say MQTT_PUBLISH_BACKPRESSURE_DELAY), which every run gets. Needs python3,
# bc, curl, redis-cli and a built tree. Ports: MQTT 30883, admin HTTP 30083, embedded
# 30092/30093/30379/30432. Output per run OUT/<round>-<n>/ (run.txt, cmdstats.txt, vmstat.txt,
# delays0.txt, delays1.txt) and OUT/summary.txt, one line per run.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
rounds_args "$@"
admin_pass=bench-admin-secret-1
export MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0
bench() {
  java -jar broker-bench/target/fleetmq-bench.jar --port 30883 --username bench --password bench-secret-1 \
    --scenario p2p --qos 1 --rate 0 --session-expiry "${SE:-300}" "$@"
}
cores() { echo "scale=2; ($2 - $1) / $(getconf CLK_TCK) / $3" | bc; }
for round in $(seq 1 "$rounds"); do
  i=0
  for jar in "${jars[@]}"; do
    i=$((i + 1))
    run="$out/$round-$i"
    mkdir -p "$run"
    start_node_30k "$jar" "$run/node" "$run/node.log" 2g "$admin_pass"
    make_credential 30083 "$admin_pass" \
      '{"type":"basic","username":"bench","password":"bench-secret-1","publish":["fleetmq-bench/#"],"subscribe":["fleetmq-bench/#"]}'
    bench --warmup 0s --duration "${WARM:-30}s" --drain 20s >/dev/null 2>&1 || true
    redis=$(pgrep -f "redis-server.*30379" | head -n 1)
    redis-cli -p 30379 config resetstat >/dev/null
    bench --warmup 3s --duration 30s --drain 30s >"$run/run.txt" 2>"$run/run.log" &
    load=$!
    sleep 8
    generator=$(pgrep -f "fleetmq-bench.jar .*--duration 30s" | head -n 1)
    n0=$(cpu_ticks "$node"); r0=$(cpu_ticks "$redis"); g0=$(cpu_ticks "$generator"); t0=$(date +%s.%N)
    curl -sf http://127.0.0.1:30083/metrics | grep -E '^fleetmq_(publish_routing|device_queue_write)_delay' >"$run/delays0.txt" || true
    vmstat 5 4 >"$run/vmstat.txt"
    n1=$(cpu_ticks "$node"); r1=$(cpu_ticks "$redis"); g1=$(cpu_ticks "$generator"); t1=$(date +%s.%N)
    curl -sf http://127.0.0.1:30083/metrics | grep -E '^fleetmq_(publish_routing|device_queue_write)_delay' >"$run/delays1.txt" || true
    redis-cli -p 30379 info commandstats >"$run/cmdstats.txt"
    wait "$load" || true
    kill "$node" 2>/dev/null || true; wait "$node" 2>/dev/null || true
    seconds=$(echo "$t1 - $t0" | bc)
    idle=$(awk 'NR > 3 {s += $15; n++} END {printf "%.0f", s / n}' "$run/vmstat.txt")
    python3 - "$run/run.txt" "$run/cmdstats.txt" "$run/delays0.txt" "$run/delays1.txt" "$(basename "$jar")" "$round" \
      "$(cores "$n0" "$n1" "$seconds")" "$(cores "$r0" "$r1" "$seconds")" "$(cores "$g0" "$g1" "$seconds")" "$idle" \
      <<'PY' | tee -a "$out/summary.txt"
import json, re, sys
report, stats, delays0, delays1, jar, rnd, node, redis, gen, idle = sys.argv[1:]
r = json.loads(open(report).read().strip().splitlines()[-1])
m = re.search(r"cmdstat_evalsha:calls=(\d+),usec=(\d+)", open(stats).read())
scripts = "scripts %s, %.0f us each" % (m.group(1), int(m.group(2)) / max(1, int(m.group(1)))) if m else "no scripts"
def samples(path):
    out = {}
    for line in open(path):
        name, value = line.split("{")[0], float(line.rsplit(" ", 1)[1])
        out[name] = value
    return out
d0, d1 = samples(delays0), samples(delays1)
def mean_ms(stage):
    n = d1.get(stage + "_seconds_count", 0) - d0.get(stage + "_seconds_count", 0)
    return "%.0f ms" % (1000 * (d1.get(stage + "_seconds_sum", 0) - d0.get(stage + "_seconds_sum", 0)) / n) if n > 0 else "-"
# Mean over the measured seconds of each batch's oldest message (none for a build without the timers).
delays = "oldest of a batch routed %s, in its DEVICE queue %s" % (
    mean_ms("fleetmq_publish_routing_delay"), mean_ms("fleetmq_device_queue_write_delay"))
print("%s round %s: delivered %.0f/s, p50 %.0f ms, p99 %.0f ms, lost %d; cores node %s, Redis %s, generator %s; "
      "machine idle %s %%; %s; %s" % (jar, rnd, r["delivered_per_s"], r["latency_us"]["p50"] / 1000,
                                       r["latency_us"]["p99"] / 1000, r["lost"], node, redis, gen, idle, scripts,
                                       delays))
PY
  done
done
