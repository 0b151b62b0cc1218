"""The ``deepfix`` command line: ``deepfix bench``, ``deepfix kb ...``, ``deepfix gate``.

Each subcommand lives beside the code it drives and registers itself here through a
``register(subparsers)`` function, so this module stays a thin dispatcher.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from importlib import import_module

from mlflow_deepfix import __version__

#: module path -> name of its ``register(subparsers)`` function
SUBCOMMANDS: tuple[tuple[str, str], ...] = (
    ("mlflow_deepfix.bench.runner", "add_bench_parser"),
    ("kb_builder.cli", "register"),
    ("mlflow_deepfix.gate.cli", "register"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deepfix", description="Diagnose ML models and data logged in MLflow."
    )
    parser.add_argument("--version", action="version", version=f"mlflow-deepfix {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress (INFO)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name, function in SUBCOMMANDS:
        try:
            register: Callable = getattr(import_module(module_name), function)
        except (ImportError, AttributeError):
            continue
        register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    handler = getattr(args, "func", None)
    if handler is None:
        parser.print_help()
        return 2
    return int(handler(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
