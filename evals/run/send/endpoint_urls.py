"""An endpoint URL is checked when it is given, not when the first request fails: `http://[::1` or
`http//host` would otherwise surface as a traceback from deep in the HTTP client, or as an endpoint
that "went away" before it was ever reached."""

from __future__ import annotations

from urllib.parse import urlsplit

from ctxprobe.runners.http_json import display_url
from ctxprobe.tasks.errors import UserError


def check_endpoint_url(url: str) -> str:
    """The URL as given, when it is an http(s) URL with a host and a valid port; else one line saying why
    (naming the URL without the credentials or query it may carry)."""
    shown = display_url(url)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    try:
        parts = urlsplit(url)
        port = parts.port  # raises for a port that is not a number in 0-65535
    except ValueError as exc:
        raise UserError(f"invalid endpoint {shown!r}: {str(exc).replace(url, shown)}") from None
    if parts.scheme not in ("http", "https"):
        raise UserError(f"invalid endpoint {shown!r}: use http:// or https://, e.g. http://gpu-node:8000")
    if not parts.hostname:
        raise UserError(f"invalid endpoint {shown!r}: no host, e.g. http://gpu-node:8000")
    if port == 0:
        raise UserError(f"invalid endpoint {shown!r}: port 0")
    return url
