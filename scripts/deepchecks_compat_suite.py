"""Run Deepchecks' own tabular check tests (tag 0.19.1) against our compatibility layer.

Why: :mod:`mlflow_deepfix.checks._compat` patches Deepchecks 0.19.1 for today's numpy,
pandas, scikit-learn and setuptools. Deepchecks' own test suite is the broadest statement
of what its checks should compute, so running it with the patches applied shows how much
of Deepchecks behaves as designed on this stack. Nothing of Deepchecks is vendored: the
tests are extracted from a git copy of the Deepchecks repository into a temporary folder,
run there, and thrown away. Not part of the project's default test run (it needs extra
test-only packages and takes minutes).

Usage::

    python scripts/deepchecks_compat_suite.py --git-dir PATH/TO/deepchecks.git [--rev 0.19.1]
        [--deps-dir DIR] [--object-strings] [-- extra pytest args]

``--git-dir`` is a clone (bare or not) of github.com/deepchecks/deepchecks holding the
tag. The tests' own imports (PyHamcrest, CatBoost, LightGBM, XGBoost, DeepDiff) are installed with
``pip --target --no-deps`` into ``--deps-dir`` (cached; nothing else is changed) and put
on ``PYTHONPATH``. The tests that load Deepchecks' example datasets download them; with
no network (``--disable-socket``) they fail at once and are counted, not hidden.
``--object-strings`` sets ``pandas.options.future.infer_string = False`` before the tests
import anything, which mends the tests' own pandas-3 breakage (text fixtures that rely on
object columns keeping ``None``/``pd.NA``/``np.nan`` apart) and is the documented
workaround for Mixed Nulls.

Prints the pytest summary and a last line ``compat suite: P passed, F failed, E errors,
S skipped of N`` (also written as JSON next to the JUnit XML when ``--json`` is given).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_GIT_DIR = Path("/work/.mirror/deepchecks+deepchecks/repo")
#: what Deepchecks' tabular tests import beyond Deepchecks' own requirements
TEST_PACKAGES = ("PyHamcrest", "catboost", "lightgbm", "xgboost", "deepdiff", "orderly-set")
#: the parts of Deepchecks' tests/ folder the tabular check tests need
TEST_PATHS = ("tests/__init__.py", "tests/conftest.py", "tests/common.py", "tests/base",
              "tests/tabular")

PLUGIN = '''"""Loaded by pytest before any conftest: patch Deepchecks first (deepfix compat)."""
import os
if os.environ.get("DEEPFIX_OBJECT_STRINGS") == "1":
    import pandas
    pandas.set_option("future.infer_string", False)
import mlflow_deepfix.checks  # noqa: F401  (applies mlflow_deepfix.checks._compat)
from mlflow_deepfix.checks import _compat


def pytest_report_header(config):
    return f"deepfix compat patches: {', '.join(_compat.STATE.needed)}"
'''


def extract_tests(git_dir: Path, rev: str, into: Path) -> None:
    archive = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", rev, *TEST_PATHS],
        check=True, capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def install_test_packages(deps_dir: Path) -> None:
    marker = deps_dir / ".deepfix-complete"
    if marker.exists() and marker.read_text().split() == list(TEST_PACKAGES):
        return
    deps_dir.mkdir(parents=True, exist_ok=True)
    constraints = REPO / "constraints.txt"
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
               "--target", str(deps_dir), *TEST_PACKAGES]
    if constraints.exists():
        command[4:4] = ["-c", str(constraints)]
    subprocess.run(command, check=True)
    marker.write_text(" ".join(TEST_PACKAGES) + "\n")


def summarize(junit: Path) -> dict[str, int]:
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        for key in counts:
            counts[key] += int(suite.get(key, 0))
    counts["passed"] = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--git-dir", type=Path, default=DEFAULT_GIT_DIR)
    parser.add_argument("--rev", default="0.19.1")
    parser.add_argument("--deps-dir", type=Path,
                        default=Path.home() / ".cache" / "deepfix-compat-suite-deps")
    parser.add_argument("--object-strings", action="store_true")
    parser.add_argument("--json", type=Path, help="write the counts here")
    parser.add_argument("--junit", type=Path, help="keep pytest's JUnit XML here")
    parser.add_argument("pytest_args", nargs="*", help="default: tests/tabular")
    args = parser.parse_args(argv)
    if not (args.git_dir / "HEAD").exists() and not (args.git_dir / ".git").exists():
        parser.error(f"--git-dir {args.git_dir} is not a git directory of Deepchecks")
    install_test_packages(args.deps_dir)
    with tempfile.TemporaryDirectory(prefix="deepchecks-compat-") as tmp:
        root = Path(tmp)
        extract_tests(args.git_dir, args.rev, root)
        (root / "deepfix_compat_first.py").write_text(PLUGIN)
        (root / "pytest.ini").write_text("[pytest]\n")  # not the project's settings
        junit = root / "junit.xml"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(root), str(REPO), str(REPO / "agents"), str(args.deps_dir),
             env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["DEEPFIX_OBJECT_STRINGS"] = "1" if args.object_strings else "0"
        env.setdefault("DISABLE_DEEPCHECKS_ANONYMOUS_TELEMETRY", "true")
        env.setdefault("MPLBACKEND", "Agg")
        command = [sys.executable, "-m", "pytest", "-p", "deepfix_compat_first",
                   "-p", "no:cacheprovider", "-q", "-rfE",
                   "--continue-on-collection-errors", "--disable-socket",
                   "--allow-unix-socket", "--timeout", "300", f"--junitxml={junit}",
                   *(args.pytest_args or ["tests/tabular"])]
        subprocess.run(command, cwd=root, env=env, check=False)
        if not junit.exists():
            print("compat suite: pytest wrote no results", file=sys.stderr)
            return 2
        counts = summarize(junit)
        if args.junit:
            args.junit.write_bytes(junit.read_bytes())
    print(f"compat suite ({args.rev}{', object strings' if args.object_strings else ''}): "
          f"{counts['passed']} passed, {counts['failures']} failed, {counts['errors']} errors, "
          f"{counts['skipped']} skipped of {counts['tests']}")
    if args.json:
        args.json.write_text(json.dumps(counts, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
