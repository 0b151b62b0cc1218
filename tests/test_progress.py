"""deepfix's progress bars honour tqdm's own environment switches."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlflow_deepfix._progress import bar_options

ROOT = Path(__file__).resolve().parents[1]

#: draws the checks runner's bar (no checks: the bar alone) in a fresh interpreter,
#: where tqdm reads the environment when it is first imported
DRAW_CHECKS_BAR = (
    "from mlflow_deepfix.checks._runner import _run_parallel; "
    "_run_parallel([], None, progress=True)"
)


def test_bar_options_turns_a_bar_off_and_otherwise_leaves_tqdm_its_defaults():
    assert bar_options(False) == {"disable": True}
    # not {"disable": False}: an explicit False would beat TQDM_DISABLE
    assert bar_options(True) == {}


def _stderr_of_checks_bar(**env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TQDM_")}
    environment.update(env, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "agents")]))
    done = subprocess.run(
        [sys.executable, "-c", DRAW_CHECKS_BAR], env=environment, cwd=ROOT,
        capture_output=True, text=True, timeout=120, check=True,
    )
    return done.stderr


@pytest.mark.parametrize(("env", "shown"), [({}, True), ({"TQDM_DISABLE": "1"}, False)])
def test_checks_bar_is_silenced_by_tqdm_disable(env, shown):
    assert ("deepfix checks" in _stderr_of_checks_bar(**env)) is shown
