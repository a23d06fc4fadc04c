"""The embedded engine's own process: llama.cpp's C++ server (llama-server) from the `xllamacpp` wheel,
serving one GGUF on a loopback port until it is killed.

    python -m ctxprobe.runners.serve --model M.gguf --port 8080 --n-ctx 8192 [--parallel 2] ...

Why a process of its own (docs/ENGINES.md, "llama-server as a Python wheel"): in-process, stopping the
server during a prefill hung for more than 37 s, model loading holds the GIL (other threads and Ctrl-C
wait), and a native abort would take ctxprobe down with it. Here it can be killed at any moment, and the
launcher (runners/launcher.py) does exactly that: SIGTERM keeps its default action, so the process ends at
once even mid-prefill; the server has nothing to save.

Its flags are `ServeSettings`' fields (runners/settings.py), written by the launcher and read back and
validated by the same model: no option is declared here. `--n-ctx` is per slot, as a user means it: llama.cpp divides its context among the slots (n_ctx 8192 with
2 slots gives 4096 each), so the server is given n_ctx x parallel. Flash attention stays at the engine's
default (auto: on where the backend has it). Start failures leave llama.cpp's own error lines on stderr
(the launcher's log file), which the launcher quotes; this process then exits with START_FAILED.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

from ctxprobe.runners.settings import ServeSettings, from_argv
from ctxprobe.tasks.errors import UserError

START_FAILED = 3
READY_LINE = "ctxprobe-serve: ready"


def engine_version() -> str:
    """The xllamacpp wheel's version: the one version this engine has (its build_info says b0-unknown)."""
    import xllamacpp

    return str(xllamacpp.__version__)


def server_params(args: ServeSettings) -> Any:
    """xllamacpp's CommonParams for these options."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_parallel = args.slots
    params.n_ctx = args.context * args.slots  # llama.cpp splits n_ctx among the slots
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


def parse_args(argv: list[str] | None = None) -> ServeSettings:
    """The settings the launcher wrote (`to_argv`: one JSON value), validated by the model that declares them."""
    return from_argv(ServeSettings, sys.argv[1:] if argv is None else argv)


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except UserError as err:
        print(f"ctxprobe-serve: {err}", file=sys.stderr, flush=True)
        return 2
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # die at once, mid-prefill too
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    import xllamacpp

    try:
        server = xllamacpp.Server(server_params(args))  # returns once /health answers 200
    except RuntimeError as err:  # the reason is in llama.cpp's error lines above, on stderr
        print(f"ctxprobe-serve: {err}", file=sys.stderr, flush=True)
        return START_FAILED
    threads = args.threads or "llama.cpp's default"
    print(
        f"{READY_LINE} on {server.listening_address} (xllamacpp {engine_version()}, threads: {threads})",
        file=sys.stderr,
        flush=True,
    )
    threading.Event().wait()  # serve until killed; the server's threads do the work
    return 0


if __name__ == "__main__":
    sys.exit(main())
