"""A server that answers each call with a body captured from a real engine (tests/runners/fixtures/…, each
file {"request": {method, path, body}, "status", "body"}): a request is matched on method, path and body (the
body's `model` left aside, which a capture names and a client may not); a text body (/metrics) is sent as
text, a list body as a server-sent event stream."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def captured(folder: Path, name: str) -> dict[str, Any]:
    return json.loads((folder / f"{name}.json").read_text())  # type: ignore[no-any-return]


def _unnamed(body: Any) -> Any:
    return {k: v for k, v in body.items() if k != "model"} if isinstance(body, dict) else body


class Replay(ThreadingHTTPServer):
    """Answers GET/POST with the captured body whose request matches."""

    daemon_threads = True

    def __init__(self, folder: Path) -> None:
        self.bodies = [captured(folder, p.stem) for p in sorted(folder.glob("*.json"))]
        replay = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def answer(self, method: str, body: Any) -> None:
                found = next(
                    (
                        c
                        for c in replay.bodies
                        if c["request"]["method"] == method
                        and c["request"]["path"] == self.path
                        and _unnamed(c["request"]["body"]) == _unnamed(body)
                    ),
                    None,
                )
                status, reply = (found["status"], found["body"]) if found else (404, {"error": "not captured"})
                if isinstance(reply, str):
                    raw, kind = reply.encode(), "text/plain; version=0.0.4"
                elif isinstance(reply, list):
                    raw = "".join(f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in reply).encode()
                    kind = "text/event-stream"
                else:
                    raw, kind = json.dumps(reply).encode(), "application/json"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                self.answer("GET", None)

            def do_POST(self) -> None:
                self.answer("POST", json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextmanager
def replaying(folder: Path) -> Iterator[Replay]:
    server = Replay(folder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
