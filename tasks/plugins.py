"""The one registry of every extension point (task families, answer kinds, haystack kinds, engine adapters,
launchers, gate metrics): things registered by name, found by name, listed in one order, and an unknown name
refused in one line that lists the known ones. A registry may find its members before its first look-up: the
modules of a built-in package (a new module there is the whole change) and the modules an entry point group
names (an installed plugin), through the one loader here.

It sits in tasks, the lowest layer, so runners and evals keep their registries in the same table type
without an import pointing up."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from typing import Any, Generic, TypeVar

from ctxprobe.tasks.errors import UserError

__all__ = ["AS_REGISTERED", "BY_NAME", "Registry", "import_modules", "load_entry_points"]

T = TypeVar("T")
Order = Callable[[str, T], Any]


def BY_NAME(name: str, item: object) -> Any:
    """List members sorted by name."""
    return name


def AS_REGISTERED(name: str, item: object) -> Any:
    """List members in the order they were registered."""
    return 0


def load_entry_points(group: str, what: str) -> None:
    """Import the module each entry point of `group` names (each registers what it declares); one that does not
    import is a one-line user error naming the plugin."""
    for point in metadata.entry_points(group=group):
        try:
            point.load()
        except ImportError as exc:
            raise UserError(f"{what} plugin {point.name!r} ({point.value}) does not load: {exc}") from None


def import_modules(package: str, first: Sequence[str] = (), skip: Sequence[str] = ()) -> None:
    """Import every module of `package` (those named in `first` first, in that order; those in `skip` not)."""
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations is not None
    names = sorted(info.name for info in pkgutil.iter_modules(spec.submodule_search_locations) if info.name not in skip)
    for name in sorted(names, key=lambda n: (n not in first, first.index(n) if n in first else 0, n)):
        importlib.import_module(f"{package}.{name}")


class Registry(Generic[T]):
    """Members of one kind by name. `what` names the kind in messages; `package` and `group` are where its
    members are found before the first look-up (once per process); `replace` lets a name registered again
    take the new member (else a second, different member of a name is refused); `order` is the listing's."""

    def __init__(
        self,
        what: str,
        *,
        package: str | None = None,
        first: Sequence[str] = (),
        skip: Sequence[str] = (),
        group: str | None = None,
        replace: bool = False,
        order: Order[T] = BY_NAME,
    ) -> None:
        self.what = what
        self.package = package
        self.first = tuple(first)
        self.skip = tuple(skip)
        self.group = group
        self.replace = replace
        self.order = order
        self.discovered = False
        self._items: dict[str, T] = {}

    def discover(self) -> None:
        """Import the package's modules and the entry points' modules, once per process."""
        if self.discovered:
            return
        self.discovered = True
        if self.package is not None:
            import_modules(self.package, self.first, self.skip)
        if self.group is not None:
            load_entry_points(self.group, self.what)

    def add(self, name: str, item: T) -> T:
        """Register `item` under `name`."""
        if not self.replace and self._items.get(name, item) is not item:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self._items[name] = item
        return item

    def register(self, name: str) -> Callable[[T], T]:
        """`@registry.register("name")`."""
        return lambda item: self.add(name, item)

    def remove(self, name: str) -> None:
        """Forget `name` (a member registered for a while, e.g. by a test)."""
        self._items.pop(name, None)

    def find(self, name: str) -> T | None:
        self.discover()
        return self._items.get(name)

    def get(self, name: str, unknown: str) -> T:
        """The member `name`; else a user error, `unknown` formatted with `{name!r}` and `{known}` (the known
        names, comma-separated)."""
        found = self.find(name)
        if found is None:
            raise UserError(unknown.format(name=name, known=", ".join(self.known())))
        return found

    def items(self) -> dict[str, T]:
        """Name -> member, in the registry's order."""
        self.discover()
        return dict(sorted(self._items.items(), key=lambda pair: self.order(*pair)))

    def known(self) -> list[str]:
        return list(self.items())

    def so_far(self) -> dict[str, T]:
        """What is registered until now, without discovering more (what an import added is the difference)."""
        return dict(self._items)

    def __contains__(self, name: object) -> bool:
        self.discover()
        return name in self._items

    def __iter__(self) -> Iterator[T]:
        return iter(self.items().values())
