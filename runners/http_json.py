"""Small blocking JSON-over-HTTP calls (stdlib urllib) for engine probes, server tokenizers, the metrics
scrape and the launcher's readiness check, under the run's retry policy (runners.retry). Completions go
through `runners.endpoint` instead.

Each call's timeout is a deadline for the whole answer, headers and body: every read from the socket is given
what is left of it, so a server that drips a byte a second (a slow loris, a proxy that keeps a dead upstream's
connection open) costs one timeout, not forever. No thread is left waiting on it.

A URL may carry credentials (`http://user:KEY@host`): they are sent as HTTP basic auth (as the completions
client sends them) and never shown: every message names the endpoint by `display_url`."""

from __future__ import annotations

import base64
import functools
import http.client
import io
import ipaddress
import json
import os
import socket
import time
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ctxprobe.runners.retry import CallFailed, CallTimedOut, RetryPolicy, refused_key, retryable_status
from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV
from ctxprobe.runners.shown_text import shown_body
from ctxprobe.tasks.errors import UserError

DUMMY_API_KEY = "EMPTY"  # what OpenAI-compatible servers without auth accept


class Unreachable(Exception):
    """No HTTP answer at all: refused, DNS failure, reset, or timed out."""


class TimedOut(Unreachable):
    """No answer within the call's deadline (a frozen or overloaded server): never retried."""


def api_root(base_url: str) -> str:
    """`http://h:8000`, `http://h:8000/` and `http://h:8000/v1` all name the server root `http://h:8000`.
    Engine-specific calls (`/tokenize`, `/props`, ...) live at the root; OpenAI calls under `/v1`."""
    url = base_url.strip().rstrip("/")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"invalid endpoint {display_url(base_url)!r}: use a URL like http://127.0.0.1:8000")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    return url


def display_url(url: str) -> str:
    """The URL as ctxprobe shows and writes it: no `user:password@`, no query string (either may carry a
    key). Safe on any text, a malformed URL included."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL at all: keep what cannot be a credential
        return url.strip().rpartition("@")[2].partition("?")[0]
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _without_credentials(url: str) -> tuple[str, str | None]:
    """(the URL without `user:password@`, the basic-auth header value they make, or None)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    netloc = parts.netloc.rpartition("@")[2]
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    return urlunsplit(parts._replace(netloc=netloc)), "Basic " + base64.b64encode(pair.encode()).decode()


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def api_key(env_var: str = DEFAULT_API_KEY_ENV) -> str:
    """The key from the named environment variable, or the dummy key local servers accept. Whitespace around
    it is dropped (a key read from a secrets file often ends in a newline); a key that still holds a control
    or non-ASCII character cannot go into an HTTP header and is refused by the variable's name, never shown."""
    key = (os.environ.get(env_var) or "").strip()
    bad = next((c for c in key if not 32 <= ord(c) < 127), None)
    if bad is not None:
        what = "a control character" if ord(bad) < 32 or ord(bad) == 127 else "a non-ASCII character"
        raise UserError(
            f"the API key in ${env_var} holds {what}, which an HTTP header cannot carry; "
            "check the variable (the key is not shown)"
        )
    return key or DUMMY_API_KEY


class _DeadlineSocket:
    """A connected socket whose reads share one deadline: each is given what is left of it, and one past it
    raises `TimeoutError`. Everything else goes to the socket; closing waits for the readers made from it
    (as a socket's own `makefile` does), since urllib closes the connection before the body is read."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock, self._deadline = sock, deadline
        self._readers, self._closing = 0, False

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        self._readers += 1
        return io.BufferedReader(_DeadlineReader(self))

    def recv_into(self, buffer: Any) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the deadline passed")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)

    def reader_closed(self) -> None:
        self._readers -= 1
        if self._closing and not self._readers:
            self._sock.close()

    def close(self) -> None:
        self._closing = True
        if not self._readers:
            self._sock.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _DeadlineReader(io.RawIOBase):
    def __init__(self, sock: _DeadlineSocket) -> None:
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self._sock.recv_into(buffer)

    def close(self) -> None:
        if not self.closed:
            self._sock.reader_closed()
        super().close()


class _DeadlineHTTP(http.client.HTTPConnection):
    def __init__(self, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline

    def connect(self) -> None:
        super().connect()
        self.sock = _DeadlineSocket(self.sock, self._deadline)


class _DeadlineHTTPS(http.client.HTTPSConnection):
    def __init__(self, *args: Any, deadline: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline

    def connect(self) -> None:
        super().connect()  # TLS included: the deadline wraps the encrypted socket's reads
        self.sock = _DeadlineSocket(self.sock, self._deadline)


def _opener(url: str, deadline: float) -> urllib.request.OpenerDirector:
    """urllib with every read under `deadline` (time.monotonic); a proxy from the environment never carries
    loopback traffic."""

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(functools.partial(_DeadlineHTTP, deadline=deadline), req)

    class Secure(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(functools.partial(_DeadlineHTTPS, deadline=deadline), req, context=self._context)  # type: ignore[attr-defined]  # HTTPSHandler's own context: private, not in typeshed

    handlers: list[Any] = [Plain, Secure]
    if is_loopback(url):
        handlers.append(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener(*handlers)


def request_json(
    method: str,
    url: str,
    payload: Any = None,
    *,
    timeout_s: float,
    api_key_env: str = DEFAULT_API_KEY_ENV,
) -> tuple[int, Any]:
    """Send one request; return (HTTP status, decoded JSON body or the raw text when not JSON).
    Non-2xx answers are returned, not raised; `Unreachable` when no answer came, `TimedOut` when the whole
    answer (headers and body) did not come within `timeout_s`."""
    data = None if payload is None else json.dumps(payload).encode("utf-8")
    url, basic = _without_credentials(url)
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", basic or f"Bearer {api_key(api_key_env)}")
    req.add_header("Accept", "application/json")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    deadline = time.monotonic() + timeout_s
    try:
        with _opener(url, deadline).open(req, timeout=timeout_s) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    except urllib.error.URLError as err:
        if isinstance(err.reason, (socket.timeout, TimeoutError)):
            raise TimedOut(f"no complete answer within {timeout_s:g} s") from None
        raise Unreachable(str(err.reason)) from None
    except TimeoutError:
        raise TimedOut(f"no complete answer within {timeout_s:g} s") from None
    except (ConnectionError, http.client.HTTPException, ValueError) as err:  # ValueError: a malformed URL
        raise Unreachable(str(err) or type(err).__name__) from None
    text = raw.decode("utf-8", errors="replace")
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


class JsonCalls(ABC):
    """`get` and `post` of JSON over a `send(method, path, payload) -> (status, body)`: one endpoint's calls
    (`EndpointCalls`) or the replicas' in turn (`runners.replica_calls.ReplicaCalls`)."""

    @abstractmethod
    def send(self, method: str, path: str, payload: Any = None) -> tuple[int, Any]:
        """(status, body) of the call's final answer."""

    def get(self, path: str) -> Any:
        """The JSON body of a 200 answer, else None."""
        status, body = self.send("GET", path)
        return body if status == 200 and isinstance(body, dict) else None

    def post(self, path: str, payload: Any) -> Any:
        """The JSON body of a 200 answer, else None."""
        status, body = self.send("POST", path, payload)
        return body if status == 200 and isinstance(body, dict) else None


class EndpointCalls(JsonCalls):
    """JSON calls to one endpoint's root, each with the API key from the variable `api_key_env` names,
    under one retry policy: the probe, the tokenize calls and the metrics scrape all go through here.
    A call that fails after the retries, times out, or has its key refused raises `CallFailed`."""

    def __init__(
        self,
        base_url: str,
        *,
        policy: RetryPolicy | None = None,
        timeout_s: float | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
    ) -> None:
        self.root = api_root(base_url)
        self.shown = display_url(self.root)
        policy = policy or RetryPolicy()
        self.policy = (
            policy
            if timeout_s is None
            else RetryPolicy(timeout_s, policy.max_retries, policy.backoff_base_s, policy.backoff_max_s)
        )
        self.timeout_s = self.policy.timeout_s
        self.api_key_env = api_key_env

    def send(self, method: str, path: str, payload: Any = None, *, failover: bool = False) -> tuple[int, Any]:
        """(status, body) of any final answer (2xx, or a 4xx other than a refused key); 429 and 5xx are
        retried and, when they persist, raise `CallFailed` like no answer at all; an answer not complete
        within the deadline raises `CallTimedOut`. `failover`: no answer at all raises at once (another
        replica takes the call: runners/replica_calls.py)."""
        attempts = 0
        while True:
            attempts += 1
            try:
                status, body = request_json(
                    method, self.root + path, payload, timeout_s=self.timeout_s, api_key_env=self.api_key_env
                )
            except TimedOut as err:
                raise CallTimedOut(
                    f"endpoint {self.shown} did not answer {method} {path}: {err} (raise --timeout)", attempts=attempts
                ) from None
            except Unreachable as err:
                if attempts > self.policy.max_retries or failover:
                    raise CallFailed(
                        f"endpoint {self.shown} is unreachable: {err} (after {attempts} attempts)", attempts=attempts
                    ) from None
                time.sleep(self.policy.backoff_s(attempts))
                continue
            if refused_key(status):
                raise CallFailed(
                    f"endpoint {self.shown} refused the API key (HTTP {status} on {path}); set it "
                    f"in the environment variable {self.api_key_env}",
                    status=status,
                    attempts=attempts,
                )
            if not retryable_status(status):
                return status, body
            if attempts > self.policy.max_retries:
                raise CallFailed(
                    f"{method} {path} at {self.shown} failed with HTTP {status} after {attempts} "
                    f"attempts: {shown_body(body)}",
                    status=status,
                    attempts=attempts,
                )
            time.sleep(self.policy.backoff_s(attempts))
