"""The one registry primitive (tasks/plugins.py) every extension point uses: found by name, an unknown name
listing the known ones, a second member of a name refused unless the registry replaces, the listing order,
the built-in package and the entry points found once before the first look-up, a plugin that does not import
in one line."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.plugins import AS_REGISTERED, Registry


def test_found_by_name_and_an_unknown_name_lists_the_known_ones() -> None:
    colours: Registry[int] = Registry("colour")
    colours.register("red")(1)
    colours.add("blue", 2)
    assert colours.find("red") == 1 and colours.find("green") is None and "blue" in colours
    assert colours.known() == ["blue", "red"] and list(colours) == [2, 1]
    with pytest.raises(UserError, match=r"^no colour 'green'; known: blue, red$"):
        colours.get("green", "no colour {name!r}; known: {known}")
    colours.remove("red")
    assert colours.known() == ["blue"]


def test_a_second_member_of_a_name_is_refused_unless_the_registry_replaces() -> None:
    strict: Registry[object] = Registry("gadget")
    first = object()
    strict.add("g", first)
    strict.add("g", first)  # the same member again is no conflict
    with pytest.raises(ValueError, match="gadget 'g' is registered twice"):
        strict.add("g", object())
    loose: Registry[int] = Registry("gadget", replace=True, order=AS_REGISTERED)
    loose.add("z", 1)
    loose.add("a", 2)
    loose.add("z", 3)
    assert loose.items() == {"z": 3, "a": 2}


def test_the_order_is_the_registrys_own() -> None:
    ranked: Registry[int] = Registry("engine", order=lambda name, rank: (rank, name))
    for name, rank in (("c", 0), ("a", 2), ("b", 0)):
        ranked.add(name, rank)
    assert ranked.known() == ["b", "c", "a"]


def test_the_package_and_the_entry_points_are_found_once_before_the_first_look_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found: Registry[str] = Registry("toy", package="toys_pkg", first=("zeta",), group="ctxprobe.toys")
    monkeypatch.setitem(sys.modules, "toy_registry", type(sys)("toy_registry"))
    sys.modules["toy_registry"].found = found  # type: ignore[attr-defined]
    (tmp_path / "toys_pkg").mkdir()
    (tmp_path / "toys_pkg" / "__init__.py").write_text("")
    for name in ("alpha", "zeta"):
        (tmp_path / "toys_pkg" / f"{name}.py").write_text(
            f"import toy_registry\ntoy_registry.found.add({name!r}, str(len(toy_registry.found.so_far())))\n"
        )
    (tmp_path / "toy_plugin.py").write_text("import toy_registry\ntoy_registry.found.add('plugged', 'p')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("toys_pkg", "toys_pkg.alpha", "toys_pkg.zeta", "toy_plugin"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    points = metadata.EntryPoints([metadata.EntryPoint("plugged", "toy_plugin", "ctxprobe.toys")])
    calls: list[str] = []
    monkeypatch.setattr(metadata, "entry_points", lambda group: calls.append(group) or points)
    assert found.so_far() == {}
    assert found.items() == {"alpha": "1", "plugged": "p", "zeta": "0"}  # zeta imported first, as asked
    found.known()
    assert calls == ["ctxprobe.toys"]


def test_a_plugin_that_does_not_import_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = metadata.EntryPoints([metadata.EntryPoint("gone", "no_such_module_here", "ctxprobe.toys")])
    monkeypatch.setattr(metadata, "entry_points", lambda group: broken)
    with pytest.raises(UserError, match=r"^toy plugin 'gone' \(no_such_module_here\) does not load: No module"):
        Registry("toy", group="ctxprobe.toys").known()
