#!/usr/bin/env bash
# Builds the router test tier's environment, once, into a cached folder:
#   ROOT/venv        PyPI vllm-router (a prebuilt Rust wheel: nothing compiles), in a venv of its own
#   ROOT/router.env  ROUTER_BIN=... (its vllm-router command) and ROUTER_VERSION=..., read by the tests
#                    ($CTXPROBE_ROUTER_ENV points at it) and by benchmarks/bench_nested_prefill.py
# ROOT is $CTXPROBE_ROUTER_ROOT, else $CTXPROBE_CACHE/router, else ~/.cache/ctxprobe/router. Run again, it
# reuses what is there. Any failure prints one line and exits non-zero; the tier then skips (it never fails CI
# for that).
set -uo pipefail
VERSION="0.1.17"
ROOT="${CTXPROBE_ROUTER_ROOT:-${CTXPROBE_CACHE:-$HOME/.cache/ctxprobe}/router}"
VENV="$ROOT/venv"
LOG="$ROOT/install.log"
mkdir -p "$ROOT" || { echo "router-env: cannot create $ROOT"; exit 1; }
fail() { echo "router-env: $1 (log: $LOG)"; exit 1; }
# The router's venv takes its own pins, not ctxprobe's.
unset PIP_CONSTRAINT
start=$(date +%s)

# A venv built for another version is rebuilt: .complete holds the version installed.
if [ "$(cat "$VENV/.complete" 2>/dev/null)" != "$VERSION" ]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV" >>"$LOG" 2>&1 || fail "cannot create the venv $VENV"
    "$VENV/bin/python" -m pip install -q --only-binary=:all: "vllm-router==$VERSION" >>"$LOG" 2>&1 \
        || fail "vllm-router==$VERSION did not install"
    "$VENV/bin/vllm-router" --help >>"$LOG" 2>&1 || fail "vllm-router --help failed"
    echo "$VERSION" > "$VENV/.complete"
fi

printf 'ROUTER_BIN=%s\nROUTER_VERSION=%s\n' "$VENV/bin/vllm-router" "$VERSION" > "$ROOT/router.env"
echo "router-env: ready in $(( $(date +%s) - start )) s: $ROOT/router.env"
