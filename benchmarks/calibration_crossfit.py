"""Separate a rule change's own effect on the calibrated view from the refit's.

The calibrated view (``corpus_split.py score --calibrated``) refits the calibration per
held-out dataset on the other datasets' findings, so a rule change moves it twice: the
changed findings are scored, and the fits themselves change. This tool crosses the two:

    python benchmarks/calibration_crossfit.py dump CACHE base.pkl   # on the reference code
    python benchmarks/calibration_crossfit.py dump CACHE new.pkl    # on the changed code
    python benchmarks/calibration_crossfit.py cross base.pkl new.pkl

prints DEV / HELD-OUT top-1 for fit x findings in {base, new}^2: ``fit=base findings=new``
is the rule change under unchanged fits, ``fit=new findings=base`` the refit alone.
``noise base.pkl`` prints HELD-OUT top-1 when 8 random DEV cases are left out of every
fit (6 seeds): the refit's own spread. Aggregates only: no case of a held-out dataset
is shown.
"""

from __future__ import annotations

import pickle
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from corpus_split import _outcomes, load_split  # noqa: E402

from mlflow_deepfix.bench.corpus.calibration import (  # noqa: E402
    calibrated_outcome,
    fit_calibration,
    folds,
)
from mlflow_deepfix.bench.corpus.scoring import ranked_categories  # noqa: E402


def _top1(outcomes, datasets) -> float:
    xs = [o for o in outcomes if o.dataset in datasets and o.kind == "single"
          and o.valid and not o.error]
    return sum(ranked_categories(o.findings)[:1] == o.expected for o in xs) / max(len(xs), 1)


def _calibrated(fit_on, apply_to, drop=frozenset()):
    by_id = {o.case_id: o for o in apply_to}
    result = []
    for _held, (train, test) in folds(fit_on).items():
        cal = fit_calibration([o for o in train if o.case_id not in drop], fitted_on="crossfit")
        result += [calibrated_outcome(by_id[o.case_id], cal) for o in test]
    return result


def main(argv):
    split = load_split()
    if argv[0] == "dump":
        Path(argv[2]).write_bytes(pickle.dumps(_outcomes(Path(argv[1]))))
    elif argv[0] == "cross":
        runs = {name: pickle.loads(Path(p).read_bytes()) for name, p in zip(("base", "new"), argv[1:3])}
        for fit in runs:
            for found in runs:
                out = _calibrated(runs[fit], runs[found])
                print(f"fit={fit:4s} findings={found:4s}  DEV top-1 {_top1(out, split['dev']):.3f}"
                      f"  HELD-OUT top-1 {_top1(out, split['held_out']):.3f}")
    elif argv[0] == "noise":
        base = pickle.loads(Path(argv[1]).read_bytes())
        dev = sorted(o.case_id for o in base if o.dataset in split["dev"])
        for seed in range(6):
            drop = frozenset(random.Random(seed).sample(dev, 8))
            out = _calibrated(base, base, drop)
            print(f"seed {seed}: HELD-OUT top-1 {_top1(out, split['held_out']):.3f}")
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
