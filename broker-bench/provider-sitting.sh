#!/usr/bin/env bash
# CONNECT handshakes per second of a standalone FleetMQ node for each authentication provider, with
# Eclipse Mosquitto beside it on the same machine; one sitting. Every configuration runs twice, the
# second round in the opposite order, each on a fresh start of the node on the same data directory.
# Writes every run's report to OUT/<name>.txt (JSON on the last line), the load average before each
# run to stderr and OUT/loadavg.txt (with top's busiest processes in OUT/machine.txt), and the
# requests the HTTP auth service answered during each run to OUT/service-requests.txt.
# The generator does the client half of every TLS handshake on the same cores: TLS runs are bound
# by it long before the broker (docs/benchmarks.md, "Authentication providers").
#
#   broker-bench/provider-sitting.sh OUT [quick]
#
# Environment: CONFIGS="anon x509 ..." runs only those FleetMQ configurations; SKIP_MOSQUITTO=1.
#
# FleetMQ configurations (100 connectors each, MQTT 5; AUTH_PROVIDERS names exactly one provider,
# anonymous clients refused except in anon and tls-anon):
#   anon         default provider (basic), MQTT_ALLOW_ANONYMOUS=true, no credentials sent
#   basic-cache  basic, user name and password, bcrypt cost 10, default MQTT_AUTH_CACHE_TTL (60 s)
#   basic-nocache  the same with MQTT_AUTH_CACHE_TTL=0s: a bcrypt check per CONNECT
#   tls-anon     anon over the TLS listener, no client certificate: what TLS alone costs
#   x509         the TLS listener with MQTT_TLS_CLIENT_AUTH=required, an x509 credential naming
#                the client certificate's CN
#   jwt-hs256    jwt, AUTH_JWT_HMAC_SECRET, the token as password, no user name
#   jwt-rs256    jwt, AUTH_JWT_PUBLIC_KEY_FILE (RSA 2048), the same
#   http         http, a local service answering every request allow, default AUTH_HTTP_CACHE_TTL (30 s)
#   http-nocache the same with AUTH_HTTP_CACHE_TTL=0s: a request to the service per CONNECT
#   scram-256    scram, SCRAM-SHA-256 enhanced authentication (AUTH packets), 4096 iterations
#   scram-512    scram, SCRAM-SHA-512, 10,000 iterations
# Credentials are created through the admin API by a first start of the node that is not measured.
#
# Mosquitto configurations: anon, passwd (password file, $7$), tls-cert (require_certificate true,
# use_identity_as_username true, the same certificates).
#
# Needs the mosquitto package, openssl, python3, curl, and a built tree
# (./mvnw -B -o -q package -pl broker-app,broker-bench -am -DskipTests).
# Ports: FleetMQ 23883, TLS 23884 (admin HTTP 23083, embedded 23092/23093/23379/23432), HTTP
# auth service 23080, Mosquitto 24883 and TLS 24884.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "$1")
mkdir -p "$out"
duration=20s
warmup=5s
if [ "${2:-}" = quick ]; then duration=3s; warmup=1s; fi
configs=(${CONFIGS:-anon basic-cache basic-nocache tls-anon x509 jwt-hs256 jwt-rs256 http http-nocache scram-256 scram-512})
user=bench
pass=bench-secret-1
admin_pass=bench-admin-secret-1
hmac_secret=bench-hmac-secret-of-more-than-32-bytes-0123456789
rules='"publish":["fleetmq-bench/#"],"subscribe":["fleetmq-bench/#"]'

bench() { java -jar broker-bench/target/fleetmq-bench.jar "$@"; }
run() { # name, then bench arguments
  local name=$1; shift
  echo "== $name (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  echo "$name: load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/loadavg.txt"
  bench --scenario connect --clients 100 --warmup $warmup --duration $duration "$@" \
    >"$out/$name.txt" 2>"$out/$name.log" || true
  tail -n 1 "$out/$name.txt" >&2
}
wait_port() { for _ in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.2; done; return 1; }
machine() { { date -u; uptime; top -bn1 -o %CPU | sed -n 7,14p; } >>"$out/machine.txt"; }
git rev-parse --short HEAD >"$out/commit.txt"

# --- Certificates (EC P-256): a CA, the brokers' certificate for 127.0.0.1, a device "bench-device"
pki="$out/pki"
mkdir -p "$pki"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj "/CN=Bench CA" \
  -keyout "$pki/ca.key" -out "$pki/ca.pem" -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
cert() { # name, CN, extensions
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$2" \
    -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
  printf '%b' "$3" >"$pki/$1.ext"
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial -days 30 \
    -extfile "$pki/$1.ext" -out "$pki/$1.pem" 2>/dev/null
}
cert server 127.0.0.1 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n'
cert device bench-device 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n'
chmod 0755 "$pki"; chmod 0644 "$pki"/* # Mosquitto may drop to its own user before reading them
device_tls=(--tls --cafile "$pki/ca.pem" --cert "$pki/device.pem" --key "$pki/device.key")

# --- JWTs valid for the whole sitting (HS256 and RS256), no client ID claim: all connectors share one
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
claims=$(printf '{"sub":"%s","exp":%d}' "$user" $(( $(date +%s) + 6 * 3600 )) | b64url)
hs_head=$(printf '{"alg":"HS256","typ":"JWT"}' | b64url)
hs_sig=$(printf '%s.%s' "$hs_head" "$claims" | openssl dgst -sha256 -hmac "$hmac_secret" -binary | b64url)
printf '%s.%s.%s' "$hs_head" "$claims" "$hs_sig" >"$out/token-hs256"
openssl genrsa -out "$pki/jwt-rsa.key" 2048 2>/dev/null
openssl rsa -in "$pki/jwt-rsa.key" -pubout -out "$pki/jwt-rsa.pub.pem" 2>/dev/null
rs_head=$(printf '{"alg":"RS256","typ":"JWT"}' | b64url)
rs_sig=$(printf '%s.%s' "$rs_head" "$claims" | openssl dgst -sha256 -sign "$pki/jwt-rsa.key" -binary | b64url)
printf '%s.%s.%s' "$rs_head" "$claims" "$rs_sig" >"$out/token-rs256"

# --- The HTTP provider's service: allows every CONNECT, counts the requests (GET /count)
cat >"$out/auth-service.py" <<'EOF'
import json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ALLOW = json.dumps({"result": "allow", "publish": ["fleetmq-bench/#"], "subscribe": ["fleetmq-bench/#"]}).encode()
lock = threading.Lock()
count = 0

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the node reuses its connections
    # One write per answer and no Nagle: headers and body sent apart would wait for the node's
    # delayed ACK (40 ms) on every request, and the service, not the node, would set the pace.
    disable_nagle_algorithm = True
    wbufsize = -1

    def do_POST(self):
        global count
        json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        with lock:
            count += 1
        self.reply(ALLOW)

    def do_GET(self):
        self.reply(str(count).encode())

    def reply(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def log_message(self, *args):
        pass

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
EOF
python3 "$out/auth-service.py" 23080 >"$out/auth-service.log" 2>&1 &
service=$!
trap 'kill $service 2>/dev/null || true' EXIT
wait_port 23080
service_count() { curl -s http://127.0.0.1:23080/count; }

# --- Eclipse Mosquitto
rm -f "$out/mosquitto.passwd"
mosquitto_passwd -c -b "$out/mosquitto.passwd" "$user" "$pass"
chmod 0644 "$out/mosquitto.passwd"
printf 'listener 24883 127.0.0.1\nallow_anonymous true\npersistence false\n' >"$out/mosquitto-anon.conf"
printf 'listener 24883 127.0.0.1\nallow_anonymous false\npassword_file %s\npersistence false\n' \
  "$out/mosquitto.passwd" >"$out/mosquitto-passwd.conf"
printf 'listener 24884 127.0.0.1\nallow_anonymous false\npersistence false\ncafile %s\ncertfile %s\nkeyfile %s\nrequire_certificate true\nuse_identity_as_username true\n' \
  "$pki/ca.pem" "$pki/server.pem" "$pki/server.key" >"$out/mosquitto-tls-cert.conf"
mosquitto_round() { # round, then configurations in order
  local round=$1; shift
  for cfg in "$@"; do
    /usr/sbin/mosquitto -c "$out/mosquitto-$cfg.conf" >>"$out/mosquitto-$cfg.log" 2>&1 &
    local mosq=$!
    case $cfg in
      anon) wait_port 24883; args=(--port 24883) ;;
      passwd) wait_port 24883; args=(--port 24883 --username "$user" --password "$pass") ;;
      tls-cert) wait_port 24884; args=(--port 24884 "${device_tls[@]}") ;;
    esac
    machine
    run "mosquitto-$cfg-$round" "${args[@]}"
    kill "$mosq"; wait "$mosq" || true
  done
}

# --- FleetMQ, standalone. Connect runs open new connections far beyond the default 1,000 per second
# per listener (beyond it the node closes them before CONNACK), so that limit is raised to its maximum.
export MQTT_MAX_PUBLISH_RATE=0 MQTT_MAX_PUBLISH_BYTES_RATE=0 MQTT_MAX_CONNECTION_RATE=1000000
data="$out/node"
rm -rf "$data"
node=
node_start() { # configuration, log name
  local env=(MQTT_ALLOW_ANONYMOUS=false)
  local tls=(MQTT_TLS_ENABLED=true MQTT_TLS_PORT=23884 MQTT_TLS_CERT_FILE="$pki/server.pem"
             MQTT_TLS_KEY_FILE="$pki/server.key")
  case $1 in
    setup|anon) env=(MQTT_ALLOW_ANONYMOUS=true) ;;
    basic-cache) ;;
    basic-nocache) env+=(MQTT_AUTH_CACHE_TTL=0s) ;;
    tls-anon) env=(MQTT_ALLOW_ANONYMOUS=true "${tls[@]}") ;;
    x509) env+=(AUTH_PROVIDERS=x509 "${tls[@]}" MQTT_TLS_CLIENT_AUTH=required MQTT_TLS_CA_FILE="$pki/ca.pem") ;;
    jwt-hs256) env+=(AUTH_PROVIDERS=jwt AUTH_JWT_HMAC_SECRET="$hmac_secret") ;;
    jwt-rs256) env+=(AUTH_PROVIDERS=jwt AUTH_JWT_PUBLIC_KEY_FILE="$pki/jwt-rsa.pub.pem") ;;
    http) env+=(AUTH_PROVIDERS=http AUTH_HTTP_URL=http://127.0.0.1:23080/auth) ;;
    http-nocache) env+=(AUTH_PROVIDERS=http AUTH_HTTP_URL=http://127.0.0.1:23080/auth AUTH_HTTP_CACHE_TTL=0s) ;;
    scram-256|scram-512) env+=(AUTH_PROVIDERS=scram) ;;
    *) echo "unknown configuration $1" >&2; exit 2 ;;
  esac
  echo "$1: ${env[*]}" | sed 's/HMAC_SECRET=[^ ]*/HMAC_SECRET=.../' >>"$out/node-env.txt"
  env "${env[@]}" ADMIN_PASSWORD="$admin_pass" \
  BROKER_DATA_DIR="$data" MQTT_TCP_PORT=23883 HTTP_PORT=23083 MQTT_WS_ENABLED=false \
  EMBEDDED_KAFKA_PORT=23092 EMBEDDED_KAFKA_CONTROLLER_PORT=23093 EMBEDDED_REDIS_PORT=23379 EMBEDDED_POSTGRES_PORT=23432 \
    java -Xmx2g -jar broker-app/target/fleetmq.jar >"$out/$2.log" 2>&1 &
  node=$!
  until grep -qs "FleetMQ node .* ready in" "$out/$2.log"; do sleep 0.5; kill -0 "$node"; done
}
node_stop() { kill "$node"; wait "$node" || true; }
api() { # method, path, JSON body
  curl -sS -f -X "$1" "http://127.0.0.1:23083/api/v1$2" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d "$3"
  echo
}
create_credentials() {
  token=$(curl -sS -f -X POST http://127.0.0.1:23083/api/v1/auth/login -H 'Content-Type: application/json' \
    -d "{\"username\":\"admin\",\"password\":\"$admin_pass\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
  api POST /credentials "{\"type\":\"basic\",\"username\":\"$user\",\"password\":\"$pass\",$rules}"
  api POST /credentials "{\"type\":\"x509\",\"certCommonName\":\"bench-device\",\"certCommonNameRegex\":false,$rules}"
  api POST /credentials "{\"type\":\"scram\",\"username\":\"$user-256\",\"password\":\"$pass\",\"algorithm\":\"SHA-256\",$rules}"
  api POST /credentials "{\"type\":\"scram\",\"username\":\"$user-512\",\"password\":\"$pass\",\"algorithm\":\"SHA-512\",$rules}"
  curl -sS -f "http://127.0.0.1:23083/api/v1/credentials" -H "Authorization: Bearer $token" >"$out/credentials.json"
}
fleetmq_args() { # configuration
  case $1 in
    anon) args=(--port 23883) ;;
    basic-cache|basic-nocache|http|http-nocache) args=(--port 23883 --username "$user" --password "$pass") ;;
    tls-anon) args=(--port 23884 --tls --cafile "$pki/ca.pem") ;;
    x509) args=(--port 23884 "${device_tls[@]}") ;;
    jwt-hs256) args=(--port 23883 --password-file "$out/token-hs256") ;;
    jwt-rs256) args=(--port 23883 --password-file "$out/token-rs256") ;;
    scram-256) args=(--port 23883 --username "$user-256" --password "$pass" --auth-method SCRAM-SHA-256) ;;
    scram-512) args=(--port 23883 --username "$user-512" --password "$pass" --auth-method SCRAM-SHA-512) ;;
  esac
}
fleetmq_round() { # round, then configurations in order
  local round=$1; shift
  for cfg in "$@"; do
    node_start "$cfg" "node-$cfg-$round"
    fleetmq_args "$cfg"
    machine
    local before; before=$(service_count)
    run "fleetmq-$cfg-$round" "${args[@]}"
    echo "fleetmq-$cfg-$round: HTTP service requests $(( $(service_count) - before ))" >>"$out/service-requests.txt"
    node_stop
  done
}

machine
node_start setup node-setup
create_credentials
node_stop
[ -n "${SKIP_MOSQUITTO:-}" ] || mosquitto_round 1 anon passwd tls-cert
fleetmq_round 1 "${configs[@]}"
reversed=(); for ((i = ${#configs[@]} - 1; i >= 0; i--)); do reversed+=("${configs[$i]}"); done
fleetmq_round 2 "${reversed[@]}"
[ -n "${SKIP_MOSQUITTO:-}" ] || mosquitto_round 2 tls-cert passwd anon
machine
