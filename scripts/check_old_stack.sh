#!/usr/bin/env bash
# Run the Deepchecks-layer tests on the last stack Deepchecks 0.19.1 supported.
#
# Why: mlflow_deepfix.checks._compat patches Deepchecks for today's numpy / pandas /
# scikit-learn / setuptools, and every patch is feature-detected. This script proves
# the other half of that promise: on the old stack (numpy 1.26, pandas 2.3,
# scikit-learn 1.7, setuptools < 81, where Deepchecks works unpatched) the patches
# stay out of the way and every check still runs.
#
# Usage:  scripts/check_old_stack.sh [pytest args...]
#   OLD_STACK_VENV   where to build the throwaway venv (default: a fresh temp dir,
#                    removed at exit; set it to keep and reuse the venv)
#   PYTHON           interpreter to build it from (default: python3.11, else python3)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"

if [[ -n "${OLD_STACK_VENV:-}" ]]; then
    VENV="$OLD_STACK_VENV"
else
    VENV="$(mktemp -d -t deepfix-old-stack-XXXXXX)"
    trap 'rm -rf "$VENV"' EXIT
fi

if [[ ! -x "$VENV/bin/python" ]]; then
    echo "== creating $VENV from $PYTHON"
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade "pip" "setuptools<81" "wheel"
    # The last releases Deepchecks 0.19.1 was built against, plus an MLflow 3 that
    # accepts them. Installing the repo itself (no deps) keeps these pins intact.
    "$VENV/bin/python" -m pip install --quiet \
        "numpy==1.26.*" "pandas==2.3.*" "scikit-learn==1.7.*" "setuptools<81" \
        "deepchecks==0.19.1" "mlflow>=3,<4" \
        "pydantic>=2.5" "jinja2>=3.1" "platformdirs>=3" "tqdm>=4.60" "httpx>=0.24" \
        "pyarrow>=12" "pytest>=8" "pytest-timeout>=2.3"
    "$VENV/bin/python" -m pip install --quiet --no-deps --no-build-isolation -e "$REPO"
fi

echo "== stack in $VENV"
"$VENV/bin/python" - <<'EOF'
import importlib.metadata as md
for name in ("numpy", "pandas", "scikit-learn", "setuptools", "mlflow", "deepchecks"):
    print(f"   {name:14s} {md.version(name)}")
EOF

cd "$REPO"
"$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    tests/test_checks_compat.py tests/test_checks_runner.py "$@"
