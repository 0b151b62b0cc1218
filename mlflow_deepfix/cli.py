"""The ``deepfix`` command line: ``deepfix bench``, ``deepfix kb ...``, ``deepfix gate``,
``deepfix cache info|clear``.

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
    ("mlflow_deepfix.cache", "add_cache_parser"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deepfix", description="Diagnose ML models and data logged in MLflow."
    )
    parser.add_argument("--version", action="version", version=f"mlflow-deepfix {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress (INFO)")
    parser.add_argument("--debug", action="store_true",
                        help="log everything (DEBUG) and show the traceback of an error")
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
    debug = getattr(args, "debug", False)
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    handler = getattr(args, "func", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        if debug:
            raise
        print(f"deepfix {args.command}: error: {describe_error(error)}", file=sys.stderr)
        return 2


def describe_error(error: BaseException) -> str:
    """One line naming the problem and the fix, for an error no subcommand handled."""
    message = " ".join(str(getattr(error, "message", None) or error).split())
    if is_connection_error(error):
        return (
            f"cannot reach the server ({message or type(error).__name__}). Check that it is "
            "running and that the URL and port are right. Run again with --debug for details."
        )
    return (
        f"{type(error).__name__}: {message[:300] or 'no message'}. This is unexpected: run "
        "again with --debug for the traceback and report it."
    )


def is_connection_error(error: BaseException | None) -> bool:
    """True when ``error`` (or what caused it) is a refused or failed network connection,
    whichever client library wrapped it (httpx, requests, qdrant-client, urllib3)."""
    seen = 0
    while error is not None and seen < 8:
        name = type(error).__name__
        if isinstance(error, ConnectionError) or name in (
            "ConnectError", "ConnectTimeout", "ResponseHandlingException", "NewConnectionError",
            "MaxRetryError",
        ) or "Connection refused" in str(error):
            return True
        error = error.__cause__ or error.__context__
        seen += 1
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
