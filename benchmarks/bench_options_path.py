"""How far a run's options travel from the command line to the first request: the modules that receive them
and how often their path climbs back up to hand them on again.

`ctxprobe run` is traced (sys.setprofile) against the tests' fake engine (tests/runners/fake_engine.py, on
127.0.0.1) from `main()` until the first completion request is sent (`EndpointClient.send`). A function
*carries* the options when one of its arguments (`self` included) is the run's whole options object (`RunOptions`), or holds it in an attribute (`options`, `opts`, `plan`).
Printed:
- every call on the way: the ctxprobe modules with any call between `main()` and the first request, and the
  returns from one of them to another;
- modules entered: the ctxprobe modules with a function that carries the options;
- hand-offs: calls of a carrier from a carrier in another module (the options handed down);
- returns: returns of a carrier to a carrier in another module;
- climbs back up: hand-offs made by a carrier after one of its earlier hand-offs returned (the path went down,
  came back up and goes down again from higher up: a pipeline that hands the options straight on has none);
- the functions that take the whole options object as an argument (`self` apart).

    python benchmarks/bench_options_path.py [--root PATH]   # PATH: a folder holding a `ctxprobe` checkout
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from types import FrameType
from typing import Any

HOLDERS = ("options", "opts", "plan")


def _is_options(value: Any) -> bool:
    return type(value).__name__ == "RunOptions"


def _carries(value: Any) -> bool:
    if _is_options(value):
        return True
    for name in HOLDERS:
        try:
            held = vars(value).get(name) if hasattr(value, "__dict__") else None
        except TypeError:
            held = None
        if held is not None and (_is_options(held) or _carries_direct(held)):
            return True
    return False


def _carries_direct(value: Any) -> bool:
    return hasattr(value, "__dict__") and _is_options(vars(value).get("options"))


class Tracer:
    def __init__(self) -> None:
        self.stack: list[tuple[FrameType, bool, str]] = []  # frame, carries, module
        self.modules: dict[str, int] = defaultdict(int)
        self.whole: set[str] = set()
        self.handoffs = self.returns = self.climbs = 0
        self.path: list[str] = []  # the hand-offs in order, climbs marked
        self.returned_from: set[int] = set()  # carrier frames one of whose hand-offs has returned
        self.done = False
        self.all_modules: set[str] = set()  # every ctxprobe module with a call on the way, carrier or not
        self.all_returns = 0  # every return from one ctxprobe module to another

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if self.done or event not in ("call", "return"):
            return
        module = frame.f_globals.get("__name__", "")
        if event == "call":
            code = frame.f_code
            if module == "ctxprobe.runners.endpoint" and code.co_name == "send":
                self.done = True
                return
            carries = False
            if module.startswith("ctxprobe"):
                self.all_modules.add(module)
                n = code.co_argcount + code.co_kwonlyargcount
                for name in code.co_varnames[:n]:
                    value = frame.f_locals.get(name)
                    if _carries(value):
                        carries = True
                        if name != "self" and _is_options(value):
                            self.whole.add(f"{module}.{code.co_qualname}")
            if carries:
                self.modules[module] += 1
                parent = next(((f, m) for f, c, m in reversed(self.stack) if c), None)
                if parent is not None and parent[1] != module:
                    self.handoffs += 1
                    climb = id(parent[0]) in self.returned_from
                    self.climbs += climb
                    self.path.append(
                        f"{'climb ' if climb else '      '}{parent[0].f_code.co_qualname} -> "
                        f"{module}.{code.co_qualname}"
                    )
            self.stack.append((frame, carries, module))
        else:
            while self.stack and self.stack[-1][0] is not frame:
                self.stack.pop()
            if not self.stack:
                return
            _, carries, mod = self.stack.pop()
            caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back is not None else ""
            if mod.startswith("ctxprobe") and caller.startswith("ctxprobe") and caller != mod:
                self.all_returns += 1
            if carries:
                parent = next(((f, m) for f, c, m in reversed(self.stack) if c), None)
                if parent is not None and parent[1] != mod:
                    self.returns += 1
                    self.returned_from.add(id(parent[0]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", help="a folder holding the `ctxprobe` checkout to trace (default: the installed one)")
    args = ap.parse_args()
    if args.root:
        sys.path.insert(0, args.root)
    repo = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(repo / "tests" / "runners"))
    from fake_engine import FakeEngine  # type: ignore[import-not-found]

    try:
        cli = importlib.import_module("ctxprobe.evals.cli.main")
    except ModuleNotFoundError:
        cli = importlib.import_module("ctxprobe.evals.cli")
    print(f"ctxprobe from {Path(cli.__file__).parents[2]}")
    tracer = Tracer()
    with FakeEngine("vllm") as engine, tempfile.TemporaryDirectory() as tmp:
        argv = [
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
            "--token-counter",
            "estimate",
            "--mode",
            "completions",
            "--results-dir",
            tmp,
            "--quiet",
            "--no-report",
        ]
        sys.setprofile(tracer)
        try:
            cli.main(argv)
        finally:
            sys.setprofile(None)
    print(
        f"every call on the way: {len(tracer.all_modules)} ctxprobe modules, {tracer.all_returns} returns "
        "from one to another"
    )
    print(f"modules entered: {len(tracer.modules)}")
    print(f"hand-offs: {tracer.handoffs}   returns: {tracer.returns}   climbs back up: {tracer.climbs}")
    print(
        f"functions taking the whole options object: {len(tracer.whole)} in "
        f"{len({w.rsplit('.', 1)[0] for w in tracer.whole})} modules"
    )
    for name in sorted(tracer.modules):
        print(f"  {name}")
    print("hand-offs, in order:")
    for line in tracer.path:
        print(f"  {line}")
    print("whole options taken by:")
    for name in sorted(tracer.whole):
        print(f"  {name}")


if __name__ == "__main__":
    main()
