#!/usr/bin/env bash
# What an idle connection costs a standalone node's heap per build (docs/benchmarks.md): CLIENTS
# devices connect with a password, subscribe to a topic of their own at QoS 1 and stay; the node's
# live heap is taken after a full GC (jcmd GC.run, then GC.heap_info) before the first connect and
# again with all of them held, and the difference is divided by CLIENTS. A class histogram is kept
# at both points (jcmd GC.class_histogram), so the per-connection objects can be compared by class.
# SUBSCRIPTIONS=K gives each device K subscriptions (default 1); with DUMP=1 a heap dump of the held state is written as well (large: about 16 KiB per connection).
#
#   broker-bench/heap-cost.sh OUT CLIENTS JAR...
#
# JAR may be JAVA=JAR to run that build with another java launcher (lib.sh, jar_spec); jcmd is then
# taken from that launcher's directory, since a JDK's jcmd attaches to its own version.
# The node runs with -Xmx1g and authentication on (one bcrypt `basic` credential with publish and
# subscribe rules, made through the admin API), as in perf-sitting.sh. CLIENTS above about 19,000
# need a higher open-file limit than 20,000 (ulimit -Hn) for the node and the generator. Needs
# python3, curl, jcmd and a built tree. Ports: MQTT 30883, admin HTTP 30083, embedded
# 30092/30093/30379/30432. Output: OUT/<build>-*.txt and OUT/summary.txt, one line per build.
set -euo pipefail
cd "$(dirname "$0")/.."
. broker-bench/lib.sh
out=$(realpath -m "$1"); clients=$2; shift 2
mkdir -p "$out"
jcmd() { "$(dirname "$(readlink -f "$(command -v "$node_java")")")/jcmd" "$@"; }
used_kib() { jcmd "$1" GC.run >/dev/null; jcmd "$1" GC.heap_info | awk '/garbage-first heap/ {sub("K", "", $6); print $6}'; }
i=0
for spec in "$@"; do
  jar_spec "$spec"
  i=$((i + 1))
  start_node_30k "$jar" "$out/node" "$out/$i-node.log" 1g bench-admin-secret-1
  make_credential 30083 bench-admin-secret-1 \
    '{"type":"basic","username":"bench","password":"bench-secret-1","publish":["fleetmq-bench/#"],"subscribe":["fleetmq-bench/#"]}'
  before=$(used_kib "$node")
  jcmd "$node" GC.class_histogram >"$out/$i-histogram-empty.txt"
  rm -f "$out/$i-idle.log"
  java -Xmx2g -jar broker-bench/target/fleetmq-bench.jar --scenario idle --port 30883 \
    --username bench --password bench-secret-1 --clients "$clients" --qos 1 --subscriptions "${SUBSCRIPTIONS:-1}" \
    --source-addresses 127.0.0.1-127.0.0.3 --connect-rate 3000 --duration 40s \
    --metrics-url http://127.0.0.1:30083/metrics --broker-pid "$node" >"$out/$i-idle.txt" 2>"$out/$i-idle.log" &
  gen=$!
  until grep -qs "^holding" "$out/$i-idle.log"; do sleep 1; kill -0 "$gen"; done
  after=$(used_kib "$node")
  jcmd "$node" GC.class_histogram >"$out/$i-histogram-held.txt"
  if [ -n "${DUMP:-}" ]; then jcmd "$node" GC.heap_dump "$out/$i-held.hprof" >/dev/null; fi
  wait "$gen" || true
  echo "$spec: live heap ${before} KiB empty, ${after} KiB with $clients connections held," \
    "$(( (after - before) * 1024 / clients )) bytes per connection with ${SUBSCRIPTIONS:-1} subscription(s); $(grep '^result' "$out/$i-idle.txt")" \
    | tee -a "$out/summary.txt"
  kill "$node"; wait "$node" || true
done
