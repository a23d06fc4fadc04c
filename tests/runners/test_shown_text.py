"""A server's answer is quoted as one line: an HTML error page without its tags, control bytes as escapes, the
whole cut at a fixed length. Checked on the function and on a run against a fake engine that answers a proxy's
error page."""

from __future__ import annotations

import json
from pathlib import Path

from fake_engine import FakeEngine, Reply

from ctxprobe.evals.cli.main import main
from ctxprobe.runners.shown_text import SHOWN_CHARS, one_line, shown_body

NGINX_502 = (
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1>"
    "</center>\r\n<hr><center>nginx/1.27.3</center>\r\n<script>var x = '<b>';</script></body>\r\n</html>\r\n"
)


def test_an_html_page_is_its_text_on_one_line() -> None:
    assert one_line(NGINX_502) == "502 Bad Gateway 502 Bad Gateway nginx/1.27.3"
    assert one_line("<!DOCTYPE html><p>Service &amp; co &lt;down&gt;</p>") == "Service & co <down>"


def test_text_that_is_not_html_keeps_its_angle_brackets() -> None:
    assert one_line("value must be < 5 and > 1") == "value must be < 5 and > 1"


def test_control_bytes_are_escaped_and_white_space_made_one_space() -> None:
    assert one_line("a\x00b\x1b[31mc\x07\n\n  d\te") == "a\\x00b\\x1b[31mc\\x07 d e"
    assert one_line("\x9b2J") == "\\x9b2J"


def test_a_long_answer_is_cut_at_the_fixed_length() -> None:
    shown = one_line("x" * 10_000)
    assert len(shown) == SHOWN_CHARS and shown.endswith("\u2026")
    assert one_line("y" * SHOWN_CHARS) == "y" * SHOWN_CHARS


def test_a_json_body_is_shown_as_compact_json() -> None:
    assert shown_body({"error": {"message": "bad\nthing"}}) == '{"error": {"message": "bad\\nthing"}}'


def test_a_run_against_a_proxy_error_page_records_one_line(tmp_path: Path, capsys: object) -> None:
    with FakeEngine("vllm", answer="The number is 1234567.") as engine:
        engine.script.extend([Reply(status=400, html=NGINX_502 * 3)])
        assert (
            main(
                [
                    "run",
                    "--endpoint",
                    engine.url,
                    "--family",
                    "niah",
                    "--lengths",
                    "1k",
                    "--depths",
                    "50",
                    "--samples",
                    "1",
                    "--quiet",
                    "--no-report",
                    "--allow-errors",
                    "--retries",
                    "0",
                    "--results-dir",
                    str(tmp_path),
                ]
            )
            == 0
        )
    [line] = next(tmp_path.iterdir()).joinpath("samples.jsonl").read_text().splitlines()
    detail = json.loads(line)["error_detail"]
    assert "502 Bad Gateway 502 Bad Gateway nginx/1.27.3" in detail
    assert "<" not in detail and "\n" not in detail and "\r" not in detail and len(detail) <= 600
