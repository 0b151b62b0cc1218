"""Issue 12, "unfamiliar models": the corpus's bugs planted under model families that
neither the corpus nor any rule, threshold or calibration has met.

The corpus fits eight families (``MODEL_FAMILIES``) and every rule was read against their
failures. A user's model is often none of them. This script plants the same injectors
under four more (``UNSEEN_FAMILIES``: extra trees, classic gradient boosting, a single
decision tree, and a linear SVM, which decides without probabilities) and scores the
diagnosis the way ``corpus_split.py`` does (same validity bars, same measures).

Two parts, told apart by the datasets they use (``corpus_split.json``):

* ``dev``: DEV's datasets. The rules were tuned on these datasets, not on these models.
  The part a rule author may read case by case.
* ``sealed``: the HELD-OUT, FRESH and FRESH2 datasets: neither the datasets nor the
  models were ever read. Aggregates only.

Cases: per family and planted category, ``--per-pair`` single-bug cases (datasets in a
seeded order, magnitudes spread over the injector's levels), one two-bug case per
pair the corpus plants (families in turn), and clean controls on every dataset of the
part (``--clean-datasets`` caps DEV's). Seeded and deterministic, like the corpus.

Views: the rules alone, and the rules with a calibration fitted on the corpus's DEV
datasets only (the calibration has then seen neither the sealed datasets nor any of
these models; the shipped one was fitted on every corpus dataset).

    python benchmarks/unseen_models.py run --cache-root DIR [--part dev|sealed|both]
    python benchmarks/unseen_models.py score --cache-root DIR --corpus-cache DIR [--part ...]
    python benchmarks/unseen_models.py misses --cache-root DIR [--calibrated --corpus-cache DIR]

``misses`` lists the DEV part's single-bug top-1 misses (never the sealed part's).

``dump`` writes every case's measures by part, in ``corpus_split.py dump``'s format, so
``corpus_split.py compare BEFORE AFTER`` gates a change on this benchmark too: counts for
the sealed part, case ids for DEV's (``--list``), exit 1 when a sealed measure nets below
zero.

    python benchmarks/unseen_models.py dump --cache-root DIR --out F [--calibrated --corpus-cache DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

SEALED_HALVES = ("held_out", "fresh", "fresh2")
PARTS = ("dev", "sealed")
#: DEV datasets that get clean controls (the sealed part gets them on every dataset)
DEV_CLEAN_DATASETS = 12


def part_datasets(part: str) -> list[str]:
    import corpus_split

    split = corpus_split.load_split()
    if part == "dev":
        return sorted(split["dev"])
    return sorted(d for half in SEALED_HALVES for d in split.get(half, []))


def _seeded_order(items: list, salt: str) -> list:
    seed = int.from_bytes(hashlib.sha256(salt.encode()).digest()[:4], "little")
    return [items[i] for i in np.random.default_rng(seed).permutation(len(items))]


def generate(part: str, *, per_pair: int = 2, dev_clean_datasets: int = DEV_CLEAN_DATASETS,
             seed: int = 0) -> list:
    """The part's case specs (see the module docstring), deterministically: clean
    controls on every dataset of the sealed part and on ``dev_clean_datasets`` of DEV's."""
    from mlflow_deepfix.bench.corpus import INJECTORS
    from mlflow_deepfix.bench.corpus.cases import TWO_BUG_PAIRS, CaseSpec
    from mlflow_deepfix.bench.corpus.datasets import load_dataset
    from mlflow_deepfix.bench.corpus.models import UNSEEN_FAMILIES

    datasets = part_datasets(part)
    specs: list = []
    for family in UNSEEN_FAMILIES:
        for category, injector in INJECTORS.items():
            usable = [d for d in datasets if injector.applies(load_dataset(d), family)]
            for i, d in enumerate(_seeded_order(usable, f"{part}/{family}/{category}")[:per_pair]):
                levels = injector.levels_for(load_dataset(d), family)
                if levels:
                    specs.append(CaseSpec((category,), d, family,
                                          (levels[(i + len(specs)) % len(levels)],), seed))
    for k, (a, b) in enumerate(TWO_BUG_PAIRS):
        family = UNSEEN_FAMILIES[k % len(UNSEEN_FAMILIES)]
        usable = [d for d in datasets
                  if INJECTORS[a].applies(load_dataset(d), family)
                  and INJECTORS[b].applies(load_dataset(d), family)]
        for d in _seeded_order(usable, f"{part}/{family}/{a}+{b}")[:1]:
            la = INJECTORS[a].levels_for(load_dataset(d), family)
            lb = INJECTORS[b].levels_for(load_dataset(d), family)
            if la and lb:
                specs.append(CaseSpec((a, b), d, family,
                                      (la[min(len(la) - 1, 1)], lb[-1]), seed))
    clean = _seeded_order(datasets, f"{part}/clean")[:dev_clean_datasets] if part == "dev" \
        else datasets
    specs.extend(CaseSpec((), d, f, (), seed) for d in sorted(clean) for f in UNSEEN_FAMILIES)
    return specs


def cache_dir(root: Path) -> Path:
    from mlflow_deepfix.bench.corpus.runner import testing_fingerprint

    return Path(root) / f"unseen-{testing_fingerprint()}"


def _parts(arg: str) -> list[str]:
    return list(PARTS) if arg == "both" else [arg]


def _specs(args) -> dict[str, list]:
    return {part: generate(part, per_pair=args.per_pair,
                           dev_clean_datasets=args.clean_datasets)
            for part in _parts(args.part)}


def run_cmd(args) -> int:
    from mlflow_deepfix.bench.corpus.runner import run_stage1

    directory = cache_dir(Path(args.cache_root))
    specs = [s for part in _specs(args).values() for s in part]
    report = run_stage1(specs, directory=directory, workers=args.workers,
                        progress=not args.no_progress)
    print(f"{directory}: {len(report.ran)} ran, {len(report.skipped)} cached, "
          f"{len(report.errors)} errors, {len(report.timeouts)} timeouts, "
          f"{report.seconds:.0f} s")
    for case_id, error in sorted(report.errors.items()):
        print(f"  error {case_id}: {error[:160]}")
    return 0


def dev_calibration(corpus_cache: Path):
    """A calibration fitted on the corpus's DEV datasets only (the eight corpus families)."""
    import corpus_split

    from mlflow_deepfix.bench.corpus.calibration import fit_calibration
    from mlflow_deepfix.bench.corpus.cases import CaseSpec
    from mlflow_deepfix.bench.corpus.runner import run_stage2

    dev = set(corpus_split.load_split()["dev"])
    specs = [CaseSpec.from_id(p.stem) for p in sorted(Path(corpus_cache).glob("*.json"))
             if p.stem.split(".")[1] in dev]
    return fit_calibration(run_stage2(specs, directory=corpus_cache),
                           fitted_on="corpus DEV datasets")


def _outcomes(args, part: str, calibration=None) -> list:
    from mlflow_deepfix.bench.corpus.calibration import calibrated_outcome
    from mlflow_deepfix.bench.corpus.runner import run_stage2

    specs = generate(part, per_pair=args.per_pair, dev_clean_datasets=args.clean_datasets)
    outcomes = run_stage2(specs, directory=cache_dir(Path(args.cache_root)))
    if calibration is not None:
        outcomes = [calibrated_outcome(o, calibration) for o in outcomes]
    return outcomes


def _line(name: str, s) -> str:
    return (f"{name:26s} top-1 {s.top1:.3f} top-3 {s.top3:.3f} MRR {s.mrr:.3f} "
            f"(n={s.n_buggy})  two-bug r@3 {s.two_bug_recall3:.3f} (n={s.n_two_bug})  "
            f"clean medium+ {s.clean_medium_plus:.3f} (n={s.n_clean})  "
            f"errors {s.n_errors}, invalid {s.n_invalid}")


def score_cmd(args) -> int:
    from mlflow_deepfix.bench.corpus.scoring import group_scores, score

    views = [("rules", None)]
    if args.corpus_cache:
        views.append(("calibrated (DEV fit)", dev_calibration(Path(args.corpus_cache))))
    result: dict = {}
    for view, calibration in views:
        for part in _parts(args.part):
            outcomes = _outcomes(args, part, calibration)
            overall = score(outcomes)
            print(_line(f"{view}, {part}", overall))
            row = result.setdefault(view, {}).setdefault(part, {})
            row["overall"] = overall.as_row()
            row["model"] = {k: v.as_row() for k, v in group_scores(outcomes, "model").items()}
            for family, s in group_scores(outcomes, "model").items():
                print("    " + _line(family, s))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


def dump_cmd(args) -> int:
    """Per-case measures (top-1, top-3, reciprocal rank, two-bug recall@3, clean alarm)
    of both parts, for ``corpus_split.py compare``."""
    from mlflow_deepfix.bench.corpus.scoring import case_measures

    calibration = dev_calibration(Path(args.corpus_cache)) if args.calibrated else None
    out = {part: {o.case_id: case_measures(o) or {}
                  for o in _outcomes(args, part, calibration)}
           for part in PARTS}
    Path(args.out).write_text(json.dumps(out, sort_keys=True), encoding="utf-8")
    print(f"{args.out}: " + ", ".join(f"{part} {len(v)}" for part, v in out.items()))
    return 0


def misses_cmd(args) -> int:
    """DEV part only: each single-bug top-1 miss with what ranked first."""
    from mlflow_deepfix.bench.corpus.scoring import case_measures, ranked_categories

    calibration = dev_calibration(Path(args.corpus_cache)) if args.calibrated else None
    by_category: dict[str, list[str]] = defaultdict(list)
    for o in _outcomes(args, "dev", calibration):
        measures = case_measures(o)
        if o.kind != "single" or measures is None or measures["top1"] == 1.0:
            continue
        cats = ranked_categories(o.findings)
        where = "absent" if measures["top3"] == 0.0 else "top-3"
        by_category[o.expected[0]].append(
            f"{o.case_id} [{where}] -> {', '.join(cats[:3]) or '(no finding)'}"
            + (f" ERROR {o.error[:80]}" if o.error else ""))
    for category in sorted(by_category, key=lambda c: (-len(by_category[c]), c)):
        print(f"{category} ({len(by_category[category])})")
        for line in by_category[category]:
            print("   " + line)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "score", "misses", "dump"):
        p = sub.add_parser(name)
        p.add_argument("--cache-root", required=True,
                       help="folder that holds the unseen-<fingerprint> cache")
        p.add_argument("--per-pair", type=int, default=2,
                       help="single-bug cases per family and category (default 2)")
        p.add_argument("--clean-datasets", type=int, default=DEV_CLEAN_DATASETS,
                       help="DEV datasets that get clean controls (sealed: all)")
        if name in ("run", "score"):
            p.add_argument("--part", choices=("dev", "sealed", "both"), default="both")
        if name == "run":
            p.add_argument("--workers", type=int, default=2)
            p.add_argument("--no-progress", action="store_true")
        else:
            p.add_argument("--corpus-cache", help="the corpus's stage-1 cache (v3-<key>): "
                           "adds the view calibrated on its DEV datasets")
        if name == "score":
            p.add_argument("--json", help="write the scores here")
        if name in ("misses", "dump"):
            p.add_argument("--calibrated", action="store_true")
        if name == "dump":
            p.add_argument("--out", required=True, help="the JSON file to write")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.basicConfig(level=logging.ERROR)
    if args.command in ("misses", "dump") and args.calibrated and not args.corpus_cache:
        parser.error(f"{args.command} --calibrated needs --corpus-cache")
    commands = {"run": run_cmd, "score": score_cmd, "misses": misses_cmd, "dump": dump_cmd}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
