"""Median testing-step time with and without interventions, measured A/B back to back
on the quick real-data cases of ``issue12_cases.py`` (same process, alternating order, so
that load from other processes hits both sides alike).

    python benchmarks/interventions_time.py [--repeat 1]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

from issue12_cases import CASES, Wrapped, _Dataset


def _time(name: str, interventions: bool) -> float:
    from mlflow_deepfix.config import parse_config
    from mlflow_deepfix.inputs import build_inputs
    from mlflow_deepfix.testing import run_testing

    fn, _, model_type = CASES[name]
    train, test, model, extra = fn()
    config = parse_config(
        {"train_data": train, "kb": False, "interventions": interventions, **extra}
    )
    inputs = build_inputs(
        model=Wrapped(model), dataset=_Dataset(test, "y"), model_type=model_type, config=config
    )
    started = time.perf_counter()
    run_testing(inputs, config, progress=False)
    return time.perf_counter() - started


def main() -> None:
    logging.basicConfig(level=logging.ERROR)
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    on, off = [], []
    _time(next(iter(CASES)), False)  # warm-up: imports (Deepchecks, scikit-learn) and caches
    for _ in range(args.repeat):
        for i, name in enumerate(CASES):
            order = (True, False) if i % 2 == 0 else (False, True)
            for flag in order:
                seconds = _time(name, flag)
                (on if flag else off).append(seconds)
                print(f"{name:45s} interventions={flag!s:5s} {seconds:6.1f}s", flush=True)
    print(
        f"median testing seconds: with {statistics.median(on):.2f}, without "
        f"{statistics.median(off):.2f}, ratio {statistics.median(on) / statistics.median(off):.3f}"
    )
    ratios = [a / b for a, b in zip(on, off)]
    print(f"median per-case ratio {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
