#!/usr/bin/env bash
# Fuzzes the service with schemathesis against its own OpenAPI document, every check on every
# operation (schemathesis.toml lists what a generated request cannot reach, and why). The service
# runs as a newcomer would run it, on a throwaway SQLite file, against a JSON-RPC node that knows
# no transaction (ledger_stub.py). Exits with schemathesis's status; bounded in time.
set -euo pipefail
cd "$(dirname "$0")/../.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/narrative-target}"
venv="${SCHEMATHESIS_VENV:-$HOME/.cache/nms-schemathesis-venv}"
version="4.32.5"
if ! "$venv/bin/st" --version 2>/dev/null | grep -q "$version"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "schemathesis==$version"
fi
cargo build --quiet -p narrative-api

work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The operator's and the inbound webhooks' credentials, so their operations are fuzzed past the
# authentication too (schemathesis.toml hands them to schemathesis).
export NMS_ADMIN_WALLET="9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
export NMS_ADMIN_SECRET="fuzz-admin-secret-$(date +%s%N)"
export NMS_WEBHOOK_SECRET="fuzz-webhook-secret-$(date +%s%N)"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rpc_port="$(free_port)"
api_port="$(free_port)"
python3 scripts/schemathesis/ledger_stub.py "$rpc_port" &
pids+=("$!")

# Every request comes from 127.0.0.1, and generated terms acknowledgements are mostly refused:
# the shield gate's block is set out of reach so the fuzz keeps reaching the shield's handlers
# (tests/admin.rs covers the block). The identity pass's daily cap per IP (30, since
# 2026-11-29) likewise: a run that generates more than 30 requests for it would otherwise get
# 429 where its checks expect the provider's answer (tests/trust_limits.rs covers the cap).
DATABASE_URL="sqlite://$work/fuzz.db?mode=rwc" \
API_LISTEN="127.0.0.1:$api_port" \
SOLANA_RPC_URL="http://127.0.0.1:$rpc_port" \
TREASURY_WALLET="So11111111111111111111111111111111111111112" \
HUMAN_VERIFICATION_LOCAL_TOKEN="fuzz-human" \
ADMIN_WALLET="$NMS_ADMIN_WALLET" \
ADMIN_SECRET="$NMS_ADMIN_SECRET" \
WEBHOOK_SECRET="$NMS_WEBHOOK_SECRET" \
SHIELD_GATE_MAX_FAILURES=1000000 \
IDPASS_PER_IP_DAILY=1000000 \
SAS_TRUSTED_SCHEMAS="So11111111111111111111111111111111111111112:11111111111111111111111111111111" \
ANON_RATE_PER_MIN=1000000 \
SOL_USD_PRICE=150 \
CONFIRM_WAIT_MS=250 \
RUST_LOG="${RUST_LOG:-warn}" \
  "$CARGO_TARGET_DIR/debug/narrative-api" > "$work/api.log" 2>&1 &
pids+=("$!")
base="http://127.0.0.1:$api_port"
for _ in $(seq 1 100); do
  curl -sf "$base/health" > /dev/null && break
  sleep 0.1
done
curl -sf "$base/health" > /dev/null || { cat "$work/api.log"; exit 1; }

# The agent whose key the key-authenticated operations use.
NMS_AGENT_KEY="$(curl -sf -X POST "$base/v1/agent/register" -H 'content-type: application/json' \
  -d '{"wallet_address":"So11111111111111111111111111111111111111112","name":"fuzzer"}' |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["agent"]["api_key"])')"
export NMS_AGENT_KEY

status=0
PYTHONPATH=scripts/schemathesis SCHEMATHESIS_HOOKS=hooks \
  timeout "${SCHEMATHESIS_TIMEOUT:-900}" "$venv/bin/st" \
  --config-file scripts/schemathesis/schemathesis.toml \
  run "$base/v1/openapi.json" \
  --checks all \
  --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-30}" \
  --workers 2 \
  --seed "${SCHEMATHESIS_SEED:-20261122}" \
  --no-color "$@" || status=$?
if [ "$status" -ne 0 ]; then
  echo "schemathesis: failures above; the service's log follows" >&2
  tail -50 "$work/api.log" >&2
fi
exit "$status"
