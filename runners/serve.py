"""The embedded engine's own process: llama.cpp's C++ server (llama-server) from the `xllamacpp` wheel,
serving one GGUF on a loopback port until it is killed.

    python -m ctxprobe.runners.serve --model M.gguf --port 8080 --n-ctx 8192 [--parallel 2] ...

Why a process of its own (docs/ENGINES.md, "llama-server as a Python wheel"): in-process, stopping the
server during a prefill hung for more than 37 s, model loading holds the GIL (other threads and Ctrl-C
wait), and a native abort would take ctxprobe down with it. Here it can be killed at any moment, and the
launcher (runners/launcher.py) does exactly that: SIGTERM keeps its default action, so the process ends at
once even mid-prefill; the server has nothing to save.

`--n-ctx` is per slot, as a user means it: llama.cpp divides its context among the slots (n_ctx 8192 with
2 slots gives 4096 each), so the server is given n_ctx x parallel. Flash attention stays at the engine's
default (auto: on where the backend has it). Start failures leave llama.cpp's own error lines on stderr
(the launcher's log file), which the launcher quotes; this process then exits with START_FAILED.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

KV_CACHE_TYPES = ("f16", "q8_0", "q4_0")
START_FAILED = 3
READY_LINE = "ctxprobe-serve: ready"


def engine_version() -> str:
    """The xllamacpp wheel's version: the one version this engine has (its build_info says b0-unknown)."""
    import xllamacpp  # type: ignore[import-untyped]

    return str(xllamacpp.__version__)


def server_params(args: argparse.Namespace) -> Any:
    """xllamacpp's CommonParams for these options."""
    import xllamacpp  # type: ignore[import-untyped]

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_parallel = args.parallel
    params.n_ctx = args.n_ctx * args.parallel  # llama.cpp splits n_ctx among the slots
    params.kv_unified = False  # each slot owns its n_ctx: no slot can take another's room
    kv = getattr(xllamacpp.ggml_type, f"GGML_TYPE_{args.kv_cache_type.upper()}")
    params.cache_type_k = kv
    params.cache_type_v = kv
    if args.threads is not None:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    # Sliding-window layers (Gemma 3: 5 of 6) keep only their window by default, so the server can reuse a
    # cached prefix only up to its last checkpoint; a full cache reuses any shared prefix (docs/ENGINES.md).
    params.swa_full = args.swa_cache == "full"
    params.endpoint_metrics = True
    params.endpoint_slots = True
    params.verbosity = args.verbosity
    return params


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m ctxprobe.runners.serve", description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="the GGUF file to serve")
    p.add_argument("--alias", default="model", help="the model name /v1/models lists")
    p.add_argument("--port", type=int, required=True, help="loopback port to listen on")
    p.add_argument("--n-ctx", type=int, default=8192, help="context per slot, in tokens")
    p.add_argument("--parallel", type=int, default=1, help="slots (requests served at once)")
    p.add_argument("--kv-cache-type", choices=KV_CACHE_TYPES, default="f16")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: the engine's choice)")
    p.add_argument("--swa-cache", choices=("full", "window"), default="full",
                   help="KV cache of sliding-window layers: full (prefix reuse at any depth) or window (less memory)")
    p.add_argument("--verbosity", type=int, default=2, help="llama.cpp log level: 1 errors, 2 + warnings, 3 + info")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # die at once, mid-prefill too
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    import xllamacpp  # type: ignore[import-untyped]

    try:
        server = xllamacpp.Server(server_params(args))  # returns once /health answers 200
    except RuntimeError as err:  # the reason is in llama.cpp's error lines above, on stderr
        print(f"ctxprobe-serve: {err}", file=sys.stderr, flush=True)
        return START_FAILED
    print(f"{READY_LINE} on {server.listening_address} (xllamacpp {engine_version()})", file=sys.stderr, flush=True)
    threading.Event().wait()  # serve until killed; the server's threads do the work
    return 0


if __name__ == "__main__":
    sys.exit(main())
