"""``deepfix gate``: the promotion gate (:func:`mlflow_deepfix.gate.gate`) for CI jobs.

Exit codes: 0 the model passed (and the alias, if asked, was moved); 1 the gate refused
it (the blocking findings and unmet thresholds are printed); 2 the call itself is wrong
(unknown model, unreadable data file, missing target column...), with a one-line
message on stderr and no traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

logger = logging.getLogger(__name__)

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a number between 0 and 1; got {text!r}"
        ) from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1; got {text!r}")
    return value


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number >= 0; got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0; got {text!r}")
    return value


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``gate`` subcommand to the ``deepfix`` command line."""
    from mlflow_deepfix.config import FAIL_ON, SUITES

    parser = subparsers.add_parser(
        "gate",
        help="evaluate a registered model with deepfix and promote it only if it passes",
        description=(
            "Evaluate a model with deepfix in a new MLflow run, refuse it when it has "
            "findings at or above --fail-on (or, with --baseline, when the fix-verification "
            "thresholds are not met), tag the registered model version and, when it passes, "
            "point --promote-to at it. Exit code 0: passed, 1: refused, 2: usage or input "
            "error. The tracking/registry server comes from MLFLOW_TRACKING_URI or "
            "--tracking-uri."
        ),
    )
    parser.add_argument(
        "--model-uri", required=True, help="e.g. models:/churn/3 or models:/churn@challenger"
    )
    parser.add_argument("--data", required=True, help="labelled evaluation rows (.csv or .parquet)")
    parser.add_argument("--target", required=True, help="name of the label column")
    parser.add_argument(
        "--model-type",
        choices=("classifier", "regressor"),
        default=None,
        help="inferred from the model or labels when left out",
    )
    parser.add_argument("--train-data", default=None, help="training split (.csv or .parquet)")
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="critical",
        help="findings at or above this severity block promotion (default: critical)",
    )
    parser.add_argument(
        "--promote-to",
        default=None,
        metavar="ALIAS",
        help="registry alias to move to the model when it passes",
    )
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="MODEL_URI",
        help="model to compare with, e.g. models:/churn@champion (fix verification)",
    )
    parser.add_argument(
        "--max-nfr",
        type=_rate,
        default=None,
        metavar="RATE",
        help="largest accepted negative flip rate against --baseline (0-1)",
    )
    parser.add_argument(
        "--min-repair-rate",
        type=_rate,
        default=None,
        metavar="RATE",
        help="smallest accepted repair rate against --baseline (0-1)",
    )
    parser.add_argument(
        "--tolerance",
        type=_non_negative,
        default=None,
        help="regression: absolute error under which a prediction counts as "
        "correct (default: the baseline's median absolute error)",
    )
    parser.add_argument(
        "--suites",
        default=None,
        help=f"comma-separated subset of {','.join(SUITES)} (default: all)",
    )
    parser.add_argument(
        "--text-col", default=None, help="text modality: the column holding the raw text"
    )
    parser.add_argument(
        "--image-col",
        default=None,
        help="image modality: the column holding image file paths (tables hold no arrays)",
    )
    parser.add_argument("--experiment", default=None, help="experiment name for the gate run")
    parser.add_argument(
        "--tracking-uri",
        default=None,
        help="MLflow tracking (and registry) URI; default: MLFLOW_TRACKING_URI",
    )
    parser.set_defaults(func=run_gate)
    return parser


def run_gate(args: argparse.Namespace) -> int:
    """Handler of ``deepfix gate``; returns the exit code."""
    from mlflow.exceptions import MlflowException

    from mlflow_deepfix.errors import DeepfixError

    try:
        result = _run(args)
    except DeepfixError as error:
        _error(error.message)
        return EXIT_USAGE
    except MlflowException as error:
        # e.g. an unreachable tracking server or a refused registry call
        _error(f"MLflow error: {_first_line(error.message)}")
        return EXIT_USAGE
    except OSError as error:
        _error(f"{type(error).__name__}: {_first_line(str(error))}")
        return EXIT_USAGE
    print(result.summary())
    return EXIT_PASSED if result.passed else EXIT_FAILED


def _run(args: argparse.Namespace) -> Any:
    import mlflow

    from mlflow_deepfix.gate import gate

    if args.tracking_uri:
        mlflow.set_tracking_uri(args.tracking_uri)
    evaluator_config = {}
    if args.suites:
        evaluator_config["suites"] = [s.strip() for s in args.suites.split(",") if s.strip()]
    for key in ("text_col", "image_col"):
        if getattr(args, key):
            evaluator_config[key] = getattr(args, key)
    return gate(
        args.model_uri,
        args.data,
        targets=args.target,
        model_type=args.model_type,
        train_data=args.train_data,
        fail_on=args.fail_on,
        promote_to=args.promote_to,
        baseline_uri=args.baseline,
        max_negative_flip_rate=args.max_nfr,
        min_repair_rate=args.min_repair_rate,
        tolerance=args.tolerance,
        evaluator_config=evaluator_config,
        experiment=args.experiment,
    )


def _first_line(text: str) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def _error(message: str) -> None:
    # one line: CI logs show it whole, and no traceback hides it
    print(f"deepfix gate: error: {' '.join(str(message).split())}", file=sys.stderr)
