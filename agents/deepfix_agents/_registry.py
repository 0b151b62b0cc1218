"""A small plugin registry, in the spirit of pluggy: validation at registration,
discovery of third-party plugins through entry points, a stable iteration order."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=type)


class RegistrationError(TypeError):
    """A plugin class does not satisfy its base class's contract."""


class Registry(Generic[T]):
    """Classes keyed by a unique id; entry points of ``group`` are loaded on first use."""

    def __init__(self, kind: str, base: type, group: str, validate: Callable[[type], None]):
        self.kind = kind
        self.base = base
        self.group = group
        self._validate = validate
        self._items: dict[str, T] = {}
        self._entry_points_loaded = False

    def register(self, cls: T) -> T:
        """Validate ``cls`` and add it; usable as a class decorator."""
        if not (isinstance(cls, type) and issubclass(cls, self.base)):
            raise RegistrationError(f"{self.kind} {cls!r} must subclass {self.base.__name__}")
        self._validate(cls)
        key = cls.id
        existing = self._items.get(key)
        if existing is not None and existing is not cls:
            raise RegistrationError(
                f"{self.kind} id {key!r} is already registered by "
                f"{existing.__module__}.{existing.__qualname__}"
            )
        self._items[key] = cls
        return cls

    def unregister(self, key: str) -> None:
        self._items.pop(key, None)

    def _load_entry_points(self) -> None:
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        for entry_point in sorted(entry_points(group=self.group), key=lambda e: e.name):
            try:
                self.register(entry_point.load())
            except Exception as error:  # noqa: BLE001 - a broken plugin must not break us
                logger.warning(
                    "ignoring %s plugin %r from entry point group %r: %s",
                    self.kind,
                    entry_point.name,
                    self.group,
                    error,
                )

    def get(self, key: str) -> T:
        self._load_entry_points()
        try:
            return self._items[key]
        except KeyError:
            raise KeyError(
                f"unknown {self.kind} {key!r}; registered: {', '.join(sorted(self._items))}"
            ) from None

    def __contains__(self, key: str) -> bool:
        self._load_entry_points()
        return key in self._items

    def __iter__(self) -> Iterator[T]:
        self._load_entry_points()
        return iter(list(self._items.values()))

    def ids(self) -> list[str]:
        self._load_entry_points()
        return list(self._items)
