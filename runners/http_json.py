"""Small blocking JSON-over-HTTP calls (stdlib urllib) for engine probes, server tokenizers and the
launcher's readiness check. Completions go through `runners.endpoint` instead."""

from __future__ import annotations

import http.client
import ipaddress
import json
import os
import socket
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from ctxprobe.runners.settings import DEFAULT_API_KEY_ENV
from ctxprobe.tasks.errors import UserError

DUMMY_API_KEY = "EMPTY"  # what OpenAI-compatible servers without auth accept


class Unreachable(Exception):
    """No HTTP answer at all: refused, DNS failure, reset, or timed out."""


def api_root(base_url: str) -> str:
    """`http://h:8000`, `http://h:8000/` and `http://h:8000/v1` all name the server root `http://h:8000`.
    Engine-specific calls (`/tokenize`, `/props`, ...) live at the root; OpenAI calls under `/v1`."""
    url = base_url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UserError(f"invalid endpoint {base_url!r}: use a URL like http://127.0.0.1:8000")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    return url


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def api_key(env_var: str = DEFAULT_API_KEY_ENV) -> str:
    """The key from the named environment variable, or the dummy key local servers accept."""
    return os.environ.get(env_var) or DUMMY_API_KEY


def _opener(url: str) -> urllib.request.OpenerDirector:
    # A proxy from the environment must never carry loopback traffic.
    if is_loopback(url):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def request_json(
    method: str,
    url: str,
    payload: Any = None,
    *,
    timeout_s: float,
    api_key_env: str = DEFAULT_API_KEY_ENV,
) -> tuple[int, Any]:
    """Send one request; return (HTTP status, decoded JSON body or the raw text when not JSON).
    Non-2xx answers are returned, not raised; `Unreachable` when no answer came."""
    data = None if payload is None else json.dumps(payload).encode("utf-8")
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", f"Bearer {api_key(api_key_env)}")
    req.add_header("Accept", "application/json")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with _opener(url).open(req, timeout=timeout_s) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    except urllib.error.URLError as err:
        raise Unreachable(str(err.reason)) from None
    except (ConnectionError, socket.timeout, TimeoutError, http.client.HTTPException) as err:
        raise Unreachable(str(err) or type(err).__name__) from None
    text = raw.decode("utf-8", errors="replace")
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


class EndpointCalls:
    """JSON calls to one endpoint's root, each with the API key from the variable `api_key_env` names:
    the probe, the tokenize calls and the metrics scrape all go through here. An endpoint that does not
    answer, or refuses the key, is one user error."""

    def __init__(self, base_url: str, *, timeout_s: float, api_key_env: str = DEFAULT_API_KEY_ENV) -> None:
        self.root = api_root(base_url)
        self.timeout_s = timeout_s
        self.api_key_env = api_key_env

    def get(self, path: str) -> Any:
        """The JSON body of a 200 answer, else None."""
        status, body = self.send("GET", path)
        return body if status == 200 and isinstance(body, dict) else None

    def post(self, path: str, payload: Any) -> Any:
        """The JSON body of a 200 answer, else None."""
        status, body = self.send("POST", path, payload)
        return body if status == 200 and isinstance(body, dict) else None

    def send(self, method: str, path: str, payload: Any = None) -> tuple[int, Any]:
        """(status, body) of any answer but a refused key; UserError when there is no answer."""
        try:
            status, body = request_json(method, self.root + path, payload, timeout_s=self.timeout_s,
                                        api_key_env=self.api_key_env)
        except Unreachable as err:
            raise UserError(f"endpoint {self.root} is unreachable: {err}") from None
        if status in (401, 403):
            raise UserError(f"endpoint {self.root} refused the API key (HTTP {status} on {path}); "
                            f"set it in the environment variable {self.api_key_env}")
        return status, body
