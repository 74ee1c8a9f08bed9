# Shell functions shared by the sitting scripts of broker-bench; sourced, not run.

# Waits until the node of PID has logged that it is ready, failing as soon as it exits.
#   wait_ready PID LOG
wait_ready() {
  until grep -qs "FleetMQ node .* ready in" "$2"; do sleep 0.5; kill -0 "$1"; done
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

# CPU time the process of PID has used so far, user and system, in clock ticks (getconf CLK_TCK).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
