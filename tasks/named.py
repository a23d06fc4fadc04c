"""A registry of named things (haystack kinds, answer kinds' scorers): registered by decorator, looked up by
name, listed sorted. A name registered twice to two different things is a mistake and is refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Named(Generic[T]):
    def __init__(self, what: str) -> None:
        self.what = what
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """`@registry.register("name")`."""

        def register(item: T) -> T:
            if self._items.get(name, item) is not item:
                raise ValueError(f"{self.what} {name!r} is registered twice")
            self._items[name] = item
            return item

        return register

    def find(self, name: str) -> T | None:
        return self._items.get(name)

    def known(self) -> list[str]:
        return sorted(self._items)
