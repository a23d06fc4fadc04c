"""Where task families are found: every module of the built-in `ctxprobe.tasks.families` package, every
module a `ctxprobe.families` entry point names (an installed plugin), and every module an `--include PATH`
names (a `.py` file, or a folder of them), as lm-eval's `--include_path` does. Importing a module registers
the families it declares (`@task_family`, tasks/registry.py) into the index kept here (`FAMILIES`, one
`tasks.plugins.Registry`).

The index sits below everything it indexes: nothing here imports a family module by name, so a family
(which imports the records and the registry) never closes an import circle. A family's generator version is
read from here too, by the recipe (tasks/sample.py) that fills in the version a record did not state.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.plugins import Registry

ENTRY_POINT_GROUP = "ctxprobe.families"  # [project.entry-points."ctxprobe.families"] name = "module"
BUILTIN_PACKAGE = "ctxprobe.tasks.families"
# The version a family starts at when it does not declare one: the version every family built before
# versions were per family, so their ids stayed as they were.
BASE_VERSION = "2"

# How long an included module may take to import. Declaring families takes milliseconds; a module that loops or
# waits at import would hang the run before its first request, with no word said.
INCLUDE_DEADLINE_S = 30.0

# A family registered again under its name replaces the first (a test's toy family, a module included again).
FAMILIES: Registry[type] = Registry("task family", package=BUILTIN_PACKAGE, group=ENTRY_POINT_GROUP, replace=True)
_INCLUDED: set[Path] = set()


def add(name: str, cls: type) -> None:
    """Index family `cls` under `name` (the registry's decorator calls this)."""
    FAMILIES.add(name, cls)


def discover() -> None:
    """Import the built-in family modules and the entry points' modules, once per process."""
    FAMILIES.discover()


def include(path: str) -> list[str]:
    """Import the family modules at `path` (a `.py` file, or a folder whose `.py` files are each one) and
    return the families they added. A path given twice is imported once."""
    where = Path(path).expanduser().resolve()
    if where.is_dir():
        modules = sorted(p for p in where.glob("*.py") if not p.name.startswith("_"))
        if not modules:
            raise UserError(f"--include {path}: the folder holds no .py module")
    elif where.is_file() and where.suffix == ".py":
        modules = [where]
    else:
        raise UserError(f"--include {path}: not a .py module or a folder of them")
    before = set(FAMILIES.so_far())
    for module in modules:
        if module not in _INCLUDED:
            _import_file(module)
            _INCLUDED.add(module)
    return sorted(set(FAMILIES.so_far()) - before)


def _import_file(path: Path) -> None:
    """Import one family module. It is foreign code, so this is the one place that catches whatever it raises
    (an exception of any kind, a recursion without end, `exit()`): each is one line naming the module and what
    it raised, never a traceback or a silent exit."""
    name = f"ctxprobe_included.m{len(_INCLUDED)}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    before = set(FAMILIES.so_far())
    try:
        _exec_within(spec.loader, module, path)
    except _Abandoned:
        _forget(name, before)
        raise UserError(
            f"--include {path}: still importing after {INCLUDE_DEADLINE_S:g} s (a loop or a wait at "
            "import time?); a family module only declares families"
        ) from None
    except (ImportError, SyntaxError) as exc:
        _forget(name, before)
        raise UserError(f"--include {path}: does not import: {_one_line(exc)}") from None
    except SystemExit as exc:  # `exit(0)` in a module would end ctxprobe with no word said
        _forget(name, before)
        raise UserError(
            f"--include {path}: the module called exit({exc.code!r}) while it was imported; a family "
            "module only declares families"
        ) from None
    except Exception as exc:
        _forget(name, before)
        raise UserError(
            f"--include {path}: the module raised {type(exc).__name__} while it was imported: {_one_line(exc)}"
        ) from None


class _Abandoned(Exception):
    """An included module still importing at its deadline."""


def _exec_within(loader: Any, module: ModuleType, path: Path) -> None:
    """Run the module's code on a daemon thread and wait for it at most `INCLUDE_DEADLINE_S`: past that it is
    abandoned (`_Abandoned`; the thread never holds the process at exit), else whatever it raised is raised
    here."""
    raised: list[BaseException] = []

    def load() -> None:
        try:
            loader.exec_module(module)
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=load, name=f"--include {path.name}", daemon=True)
    thread.start()
    thread.join(INCLUDE_DEADLINE_S)
    if thread.is_alive():
        _interrupt(thread)
        raise _Abandoned(str(path))
    if raised:
        raise raised[0]


def _interrupt(thread: threading.Thread) -> None:
    """Ask an abandoned import to stop: CPython raises `_Abandoned` in that thread at its next bytecode, so a
    loop in Python ends there and then (a wait inside a C call, which takes no CPU, ends when the call does)."""
    import ctypes

    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(_Abandoned))


def _forget(name: str, before: set[str]) -> None:
    """A module that failed to import leaves nothing behind: not itself, not the families it declared."""
    sys.modules.pop(name, None)
    for added in set(FAMILIES.so_far()) - before:
        FAMILIES.remove(added)


def _one_line(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def family_class(name: str) -> type | None:
    return FAMILIES.find(name)


def family_names() -> list[str]:
    return FAMILIES.known()


def family_version(name: str) -> str:
    """The generator version of family `name`; `BASE_VERSION` for a name no family registered (records
    of imported tasks carry their own version, so this default only fills in a recipe that gave none)."""
    cls = family_class(name)
    return str(getattr(cls, "version", BASE_VERSION)) if cls is not None else BASE_VERSION
