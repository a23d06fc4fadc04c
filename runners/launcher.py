"""The embedded default engine: llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`)
on a free loopback port, serving the packaged Gemma 3 270M GGUF or a user's GGUF. Nothing is downloaded.

    with EmbeddedEngine(n_ctx=8192) as engine:
        engine.base_url, engine.n_ctx, engine.model_path, engine.model_alias

The server is stopped (terminate, then kill) when the block ends, on errors and on Ctrl-C. Its output goes to
a log file, whose tail is quoted when it fails to start. Quirks handled (ENGINES.md): `--logits_all False`
(else n_ctx x vocab floats are allocated), `--interrupt_requests False` (else a new request aborts the
running one). The server answers one request at a time, and its stream carries no usage and hides a
too-long error: `endpoint_config()` gives the matching client settings.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal

from ctxprobe.runners.endpoint import EndpointConfig
from ctxprobe.runners.http_json import Unreachable, request_json
from ctxprobe.runners.probe import EngineInfo, probe_engine
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.token_counter import packaged_gguf

KvCacheType = Literal["f16", "q8_0", "q4_0"]
# ggml type ids, as llama_cpp.GGML_TYPE_F16 / GGML_TYPE_Q8_0 / GGML_TYPE_Q4_0 (the server's --type_k/--type_v)
KV_CACHE_TYPES: dict[str, int] = {"f16": 1, "q8_0": 8, "q4_0": 2}
DEFAULT_MODEL_ALIAS = "gemma-3-270m"
_GGUF_MAGIC = b"GGUF"


_PR_SET_PDEATHSIG = 1


class EngineStartError(UserError):
    """The embedded engine did not come up; the message quotes the end of its log."""


def _die_with_parent() -> None:
    """Runs in the server's process before exec: on Linux, ask for SIGKILL when ctxprobe dies (an orphan has no one to serve), so a
    ctxprobe killed with SIGKILL leaves no server behind. Elsewhere the launcher's own stop() must do."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _check_gguf(path: Path) -> Path:
    if not path.is_file():
        raise UserError(f"model file not found: {path}")
    with path.open("rb") as f:
        if f.read(4) != _GGUF_MAGIC:
            raise UserError(f"{path} is not a GGUF file")
    return path.resolve()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_env() -> dict[str, str]:
    """The environment without variables the server would read as settings (pydantic-settings reads every
    field from the environment, and HOST/PORT/CONFIG_FILE override the command line)."""
    from llama_cpp.server.settings import Settings

    names = {n.lower() for n in Settings.model_fields} | {"host", "port", "config_file"}
    return {k: v for k, v in os.environ.items() if k.lower() not in names}


def _log_tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(kept[-lines:])


class EmbeddedEngine:
    def __init__(
        self,
        model_file: str | Path | None = None,
        *,
        n_ctx: int = 8192,
        kv_cache_type: KvCacheType = "f16",
        threads: int | None = None,
        model_alias: str | None = None,
        startup_timeout_s: float = 180.0,
        log_path: str | Path | None = None,
    ) -> None:
        if n_ctx < 16:
            raise UserError(f"n_ctx {n_ctx} is too small")
        if kv_cache_type not in KV_CACHE_TYPES:
            raise UserError(f"unknown KV cache type {kv_cache_type!r}; known: {', '.join(KV_CACHE_TYPES)}")
        if threads is not None and threads < 1:
            raise UserError(f"threads {threads} must be at least 1")
        self.model_file = Path(model_file) if model_file is not None else None
        self.n_ctx = n_ctx
        self.kv_cache_type = kv_cache_type
        self.threads = threads
        self.model_alias = model_alias or (DEFAULT_MODEL_ALIAS if model_file is None else Path(model_file).stem)
        self.startup_timeout_s = startup_timeout_s
        self.log_path = Path(log_path) if log_path is not None else None
        self.model_path: Path | None = None
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the embedded engine is not running")
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> EmbeddedEngine:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def command(self, port: int) -> list[str]:
        assert self.model_path is not None
        kv = str(KV_CACHE_TYPES[self.kv_cache_type])
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model_path), "--model_alias", self.model_alias,
            "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", str(self.n_ctx), "--type_k", kv, "--type_v", kv,
            "--logits_all", "False", "--interrupt_requests", "False", "--use_mlock", "False",
        ]
        if self.kv_cache_type != "f16":
            cmd += ["--flash_attn", "True"]  # llama.cpp quantizes the V cache only with flash attention
        if self.threads is not None:
            cmd += ["--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)]
        return cmd

    def start(self) -> None:
        """Launch and wait until the server answers `GET /v1/models`."""
        if self.process is not None:
            raise RuntimeError("the embedded engine is already running")
        self.model_path = _check_gguf(self.model_file) if self.model_file else packaged_gguf()
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="ctxprobe-engine-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = _server_env()
        code: int | None = None
        try:
            for _ in range(3):  # the free port can be taken between choosing and binding it
                self._spawn(env)
                if self._wait_ready():
                    return
                assert self.process is not None
                code, tail = self.process.returncode, _log_tail(self.log_path, 20)
                self.stop()
                if "address already in use" not in tail.lower():
                    break
            raise EngineStartError(f"the embedded engine exited with code {code} while starting: "
                                   f"{_log_tail(self.log_path)} (log: {self.log_path})")
        except BaseException:
            self.stop()
            raise

    def _spawn(self, env: dict[str, str]) -> None:
        assert self.log_path is not None
        self.port = _free_port()
        self._log = self.log_path.open("ab")
        atexit.register(self.stop)
        self.process = subprocess.Popen(
            self.command(self.port), stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            env=env, start_new_session=True, preexec_fn=_die_with_parent,
        )

    def _wait_ready(self) -> bool:
        """True once it answers; False if the process died; EngineStartError when out of time."""
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                status, _ = request_json("GET", f"{self.base_url}/v1/models", timeout_s=5.0)
                if status == 200:
                    return True
            except Unreachable:
                pass
            time.sleep(0.2)
        raise EngineStartError(f"the embedded engine did not answer within {self.startup_timeout_s:.0f} s: "
                               f"{_log_tail(self.log_path) if self.log_path else ''} (log: {self.log_path})")

    def stop(self, grace_s: float = 10.0) -> None:
        """Terminate the server (its whole process group), then kill it if it lingers."""
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL)
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        atexit.unregister(self.stop)

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def info(self) -> EngineInfo:
        """The manifest's engine facts; n_ctx and version come from here (the server states neither)."""
        return probe_engine(self.base_url, model=self.model_alias, n_ctx=self.n_ctx,
                            version=metadata.version("llama_cpp_python"))

    def endpoint_config(self, **overrides: Any) -> EndpointConfig:
        """Client settings that suit this server: one request at a time (it queues the rest, and a queued
        request's deadline would run while it waits), no streaming."""
        settings: dict[str, Any] = {"base_urls": (self.base_url,), "model": self.model_alias, "mode": "completions",
                                    "concurrency": 1, "stream": False}
        settings.update(overrides)
        return EndpointConfig(**settings)
