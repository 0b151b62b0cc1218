"""Keep import-time costs that a deepfix run never uses off the Deepchecks import.

Deepchecks imports ``nbformat`` (for notebook output), which imports ``jsonschema``,
whose format checker imports ``rfc3987_syntax`` when it is installed. That module
compiles an Earley grammar for RFC 3987 IRIs *at import* (about 0.9 s on an idle
core, 3 s under load), only to back the ``"iri"`` / ``"iri-reference"`` string
formats, which no deepfix run validates.

:func:`defer_rfc3987_syntax` puts a small stand-in module under that name before
Deepchecks is imported. jsonschema only does ``from rfc3987_syntax import
is_valid_syntax``; the stand-in's ``is_valid_syntax`` imports the real module on its
first call and delegates to it, so anything that does validate an IRI still gets the
real answer, just paid for at that moment instead of at every import. Any other
attribute access loads the real module too.

This module is self-contained on purpose (the Deepchecks source edits live in
:mod:`._compat`): it edits nothing, and removing the call leaves behaviour unchanged.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

_NAME = "rfc3987_syntax"


class _DeferredModule(types.ModuleType):
    """Stands in for ``rfc3987_syntax`` until something really uses it."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(_load_real(), name)


def _load_real() -> types.ModuleType:
    current = sys.modules.get(_NAME)
    if current is not None and not isinstance(current, _DeferredModule):
        return current
    sys.modules.pop(_NAME, None)
    try:
        return importlib.import_module(_NAME)
    except BaseException:
        if current is not None:
            sys.modules.setdefault(_NAME, current)
        raise


def _is_valid_syntax(term: str, value: str) -> bool:
    """``rfc3987_syntax.is_valid_syntax``, loaded on first use."""
    return _load_real().is_valid_syntax(term, value)


def defer_rfc3987_syntax() -> bool:
    """Install the stand-in when ``rfc3987_syntax`` is installed and not yet imported.

    Returns whether the stand-in is in place (False when the package is absent, so
    jsonschema's own ``ImportError`` path stays as it was, or already imported).
    """
    if _NAME in sys.modules:
        return isinstance(sys.modules[_NAME], _DeferredModule)
    if importlib.util.find_spec(_NAME) is None:
        return False
    stand_in = _DeferredModule(_NAME, __doc__)
    stand_in.is_valid_syntax = _is_valid_syntax  # type: ignore[attr-defined]
    sys.modules[_NAME] = stand_in
    return True


def is_deferred() -> bool:
    """True while ``rfc3987_syntax`` is still the stand-in (for tests and benchmarks)."""
    return isinstance(sys.modules.get(_NAME), _DeferredModule)
