"""The embedded default engine: llama.cpp's own server (llama-server, from the prebuilt `xllamacpp` wheel)
in a child process on a free loopback port, serving the packaged Gemma 3 270M GGUF or a user's GGUF.
Nothing is downloaded and nothing is compiled.

    with EmbeddedEngine(n_ctx=8192, parallel=1) as engine:
        engine.base_url, engine.n_ctx, engine.model_path, engine.model_alias

The child (runners/serve.py) runs in a session of its own, is killed by the kernel if ctxprobe dies, and
writes to a log file. It is stopped when the block ends, on errors and on Ctrl-C: SIGTERM, which ends it at
once even mid-prefill, then SIGKILL if it lingers. A start that fails is reported with llama.cpp's own
reason from the log, in one line; a port taken between choosing it and binding it is retried on another.
`endpoint_config()` gives client settings that suit the server: one request in flight per slot, streamed.

The child-process machinery (free port, log file, health wait with a deadline, the cause quoted in one line,
stop on exit, errors, Ctrl-C and SIGTERM) is this class's; another launched engine (runners/vllm_engine.py)
subclasses it and says only what differs: its command line, its model, its log's error lines, its facts.
A run reaches both through their launchers (runners/launchers/), which size, start and count them.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from ctxprobe.runners.cpu_share import threads_for_engine
from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.http_json import Unreachable, request_json
from ctxprobe.runners.probe import EngineInfo, probe_engine
from ctxprobe.runners.serve import READY_LINE
from ctxprobe.runners.settings import ClientSettings, EngineSettings, ServeSettings, checked, to_argv
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Mode
from ctxprobe.tasks.token_counter import packaged_gguf

DEFAULT_MODEL_ALIAS = "gemma-3-270m"
EMBEDDED_MODE: Mode = "completions"  # the packaged model is a base model: completions with an answer prefix
PORT_ATTEMPTS = 3
_GGUF_MAGIC = b"GGUF"
_PR_SET_PDEATHSIG = 1
# llama.cpp's log lines: "0.00.003.870 E gguf_init_from_file: failed to open GGUF file ..."
_ERROR_LINE = re.compile(r"^\s*[\d.]+\s+E\s+(?:[a-z]{3,4}\s{2,})?(.*\S)\s*$")
_PORT_BUSY = re.compile(r"couldn't bind HTTP server socket|address already in use", re.IGNORECASE)


class EngineStartError(UserError):
    """The embedded engine did not come up; the message gives llama.cpp's reason from its log."""


def _die_with_parent() -> None:
    """Runs in the child before exec: on Linux, ask for SIGKILL when ctxprobe dies (an orphan has no one
    to serve), so a ctxprobe killed with SIGKILL leaves no server behind. Elsewhere stop() must do."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def check_gguf(path: Path) -> Path:
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


def start_failure(log_text: str) -> str:
    """llama.cpp's reason for a failed start, in one line: its first error line (the cause; the lines
    after it are the layers above giving up), else the log's last line."""
    errors = [m.group(1) for m in map(_ERROR_LINE.match, log_text.splitlines()) if m]
    if errors:
        return errors[0]
    lines = [line.strip() for line in log_text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _read(path: Path, start: int) -> str:
    try:
        with path.open("rb") as f:
            f.seek(start)
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def engine_version() -> str:
    from importlib import metadata

    return metadata.version("xllamacpp")


class EmbeddedEngine:
    """`EmbeddedEngine(model_file, settings=EngineSettings(...))`, or the settings' fields as keywords
    (`n_ctx=4096, parallel=2`), checked by the same model: a bad one is a `UserError`."""

    label = "the embedded engine"  # how errors name it
    stop_grace_s = 2.0  # SIGTERM ends llama.cpp's server at once; SIGKILL after this

    def __init__(
        self,
        model_file: str | Path | None = None,
        *,
        settings: EngineSettings | None = None,
        model_alias: str | None = None,
        startup_timeout_s: float = 180.0,
        log_path: str | Path | None = None,
        **options: Any,
    ) -> None:
        if settings is not None and options:
            raise TypeError("pass the engine settings or their fields, not both")
        self.settings = settings if settings is not None else checked(EngineSettings, options)
        self.model_file = Path(model_file) if model_file is not None else None
        self.model_alias = model_alias or (DEFAULT_MODEL_ALIAS if model_file is None else Path(model_file).stem)
        self.startup_timeout_s = startup_timeout_s
        self.log_path = Path(log_path) if log_path is not None else None
        self.model_path: Path | None = None
        self.threads: int | None = None  # what the child was started with (None: llama.cpp's default)
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def n_ctx(self) -> int:
        """Context per slot, in tokens."""
        return self.settings.context

    @property
    def parallel(self) -> int:
        return self.settings.slots

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("the embedded engine is not running")
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> EmbeddedEngine:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def command(self, port: int) -> list[str]:
        """The child's command line: the serve module, given `ServeSettings` as one typed value (its JSON)."""
        assert self.model_path is not None
        given = self.settings.model_dump(include=set(EngineSettings.model_fields))
        threads = self.settings.threads or threads_for_engine()  # the cores others leave idle (runners/cpu_share.py)
        self.threads = threads
        served = ServeSettings(
            **{**given, "n_ctx": self.n_ctx, "parallel": self.parallel, "threads": threads},
            model=str(self.model_path),
            alias=self.model_alias,
            port=port,
        )
        return [sys.executable, "-m", "ctxprobe.runners.serve", *to_argv(served)]

    def start(self) -> None:
        """Launch and wait until the server answers `GET /health`; EngineStartError with the cause if not."""
        if self.process is not None:
            raise RuntimeError("the embedded engine is already running")
        self.model_path = self.resolve_model()
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="ctxprobe-engine-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            for _ in range(PORT_ATTEMPTS):  # the free port can be taken between choosing and binding it
                offset = self.log_path.stat().st_size if self.log_path.exists() else 0
                self._spawn(_free_port())
                if self._wait_ready():
                    return
                self.stop()
                reason = self.start_failure(_read(self.log_path, offset))
                if not _PORT_BUSY.search(reason):
                    break
            raise EngineStartError(f"{self.label} could not start: {reason} (log: {self.log_path})")
        except BaseException:
            self.stop()
            raise

    def resolve_model(self) -> Path:
        """The model to serve, checked before anything starts."""
        return check_gguf(self.model_file) if self.model_file else packaged_gguf()

    def start_failure(self, log_text: str) -> str:
        """The engine's reason for a failed start, from its log, in one line."""
        return start_failure(log_text)

    def child_env(self) -> dict[str, str] | None:
        """The child's environment (None: ctxprobe's own)."""
        return None

    def _spawn(self, port: int) -> None:
        assert self.log_path is not None
        self.port = port
        self._log = self.log_path.open("ab")
        atexit.register(self.stop)
        self.process = subprocess.Popen(
            self.command(port),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            env=self.child_env(),
        )

    def _wait_ready(self) -> bool:
        """True once it answers; False if the process ended; EngineStartError when out of time."""
        assert self.process is not None and self.log_path is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                status, _ = request_json("GET", f"{self.base_url}/health", timeout_s=2.0)
                if status == 200:
                    return True
            except Unreachable:
                pass
            time.sleep(0.05)
        raise EngineStartError(
            f"{self.label} did not answer within {self.startup_timeout_s:.0f} s: "
            f"{self.start_failure(_read(self.log_path, 0))} (log: {self.log_path})"
        )

    def stop(self, grace_s: float | None = None) -> None:
        """End the server's whole process group: SIGTERM (immediate, see runners/serve.py), then SIGKILL."""
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=self.stop_grace_s if grace_s is None else grace_s)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL)
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        atexit.unregister(self.stop)

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ready_line(self) -> str | None:
        """The serve module's ready line from the log, which names the address and the engine version."""
        text = _read(self.log_path, 0) if self.log_path else ""
        return next((line for line in text.splitlines() if line.startswith(READY_LINE)), None)

    def info(self) -> EngineInfo:
        """The manifest's engine facts: what the server states (engine, per-slot context, slots, model),
        with xllamacpp's version (the wheel's build_info says b0-unknown)."""
        return probe_engine(self.base_url, model=self.model_alias, n_ctx=self.n_ctx, version=engine_version())

    def endpoint_config(self, settings: ClientSettings | None = None, **overrides: Any) -> EndpointConfig:
        """Client settings that suit this server: completions, streamed (TTFT; usage and cached tokens
        come in the last chunk), one request in flight per slot (more would queue, and a queued request's
        latency and deadline would count its wait). `overrides` replace these; the user's `settings`
        (timeouts, retries, the key's variable, a model name) are taken as given."""
        server: dict[str, Any] = {
            "base_urls": (self.base_url,),
            "model": self.model_alias,
            "mode": EMBEDDED_MODE,
            "concurrency": self.parallel,
            "stream": True,
            **overrides,
        }
        return EndpointConfig.of(settings, **server) if settings is not None else EndpointConfig(**server)
