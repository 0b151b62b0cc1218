"""Issue 12: score the rules on a DEV half and a HELD-OUT half of the corpus datasets.

The 14 core datasets are split once, before any failure is read, stratified by task type
(binary, multiclass, i.i.d. regression, time-ordered regression) with a seeded shuffle
(``random.Random(12)``). Rule authors read failures on DEV cases only; HELD-OUT numbers
are the result. The split is written down here and in ``corpus_split.json``.

    python benchmarks/corpus_split.py score --cache CACHE_ROOT/v3-KEY [--calibrated] [--definition v3|v2|v1] [--strict]
    python benchmarks/corpus_split.py failures --cache DIR --category underfitting   # DEV only
    python benchmarks/corpus_split.py failures --cache DIR --category poor_calibration --twin
    python benchmarks/corpus_split.py stage1 --reference CACHE_ROOT/v3-OLDKEY --cache-root CACHE_ROOT
    python benchmarks/corpus_split.py stage1 --datasets autos,gapminder --cache-root CACHE_ROOT

``failures --twin`` prints, under each case, what the testing step measured on it and on
its clean twin (the clean control of the same dataset, model family and seed): a planted
bug whose measurement equals its twin's (an ECE, a rare-class recall, an F1 gain at the
best threshold, a predicted-share shift) did no harm the artifact can show.

Datasets added at stop 28 came in two batches (``DATASET_BATCHES``): autos, gapminder and
meps_private form a third half, ``"fresh"`` in ``corpus_split.json``, that no rule change
has read (scored like HELD-OUT and reported beside it; rule authors do not read its
failures); tips, dietox and framing joined DEV, for variety (a panel with natural gaps,
small half-categorical sets). DEV numbers since then are over 10 datasets.

Stop 52 added a fourth half, ``"fresh2"``: college_gpa, wage_iq and college_going
(``DATASET_BATCHES[-1]``), chosen before any of their cases was scored, so that a rule
set tuned on DEV for fifty stops meets datasets that no rule, threshold or calibration
choice has seen. It is sealed like HELD-OUT and FRESH (aggregates only). Three candidates
were turned down before that, on a scikit-learn cross-validation of the data alone (no
diagnosis ran): alcohol employment and GSS happiness, whose features predict no better
than the majority class (so their clean workflows would not be healthy), and the CPS
1991 participation data, whose non-wife income carries the answer.

``score --strict`` exits 1, naming the cases and the rules, when a rule or an analyzer
raised during stage 2: otherwise such a rule is recorded and skipped (the others go on),
and its error shows only as a warning on stderr.

``dump`` writes every case's measures (top-1, top-3, reciprocal rank, two-bug recall@3,
clean alarm) by half; ``compare BEFORE AFTER`` pairs two dumps case by case and prints,
per half and measure, how many cases the change fixed and broke (case ids for DEV only,
with ``--list``). It exits 1 when a measure nets below zero on a sealed half: the gate a
rule change passes before it lands.

    python benchmarks/corpus_split.py dump --cache DIR --out before.json [--calibrated]
    python benchmarks/corpus_split.py compare before.json after.json --list

``misses`` sorts DEV's single-bug top-1 misses by how the finding that won relates to
the case's clean twin: on the twin at the same or a higher severity (the workflow's own
natural issue, there without the bug), on the twin at a lower severity (the bug's harm
read as a natural issue's), or not on the twin; and whether the planted category is
found at all. DEV only, the calibration (``--calibrated``) fitted on DEV datasets only.

    python benchmarks/corpus_split.py misses --cache DIR [--calibrated] [--list] [--by-harm]

``misses --by-harm`` also sorts DEV's single-bug cases by how far the planted bug's cost
to the test score (``score_drop``: the clean twin's score minus the case's) stands out
from that score's noise (the ``chance_level`` measurement's standard error, at least
0.5/sqrt(test rows)), and prints top-1 and top-3 per band: where the bug costs the score
many noise units, and where its cost is within noise (or it costs none: a leak or an
overlap inflates the score instead).

``stage1`` re-runs the testing step (1 worker, or 2 with ``--workers 2``) on the cases of a reference cache, in an
order that interleaves categories and the two halves, so any prefix is balanced.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import defaultdict
from pathlib import Path

SPLIT_FILE = Path(__file__).with_name("corpus_split.json")
#: corpus definitions ``score`` and ``dump`` can count by, newest first (see ``--definition``)
DEFINITIONS = ("v4", "v3", "v2", "v1")
STRATA = {
    "binary": ["breast_cancer", "anes96", "fair", "modechoice"],
    "multiclass": ["wine", "iris", "digits"],
    "regression_iid": ["diabetes", "star98", "randhie", "grunfeld"],
    "regression_time": ["macrodata", "sunspots", "co2"],
}


def make_split(seed: int = 12) -> dict[str, list[str]]:
    import random

    rng = random.Random(seed)
    dev: list[str] = []
    held: list[str] = []
    odd_to_dev = True
    for names in STRATA.values():
        names = sorted(names)
        rng.shuffle(names)
        half = len(names) // 2 + (len(names) % 2 if odd_to_dev else 0)
        if len(names) % 2:
            odd_to_dev = not odd_to_dev
        dev += names[:half]
        held += names[half:]
    return {"dev": sorted(dev), "held_out": sorted(held)}


def load_split() -> dict[str, list[str]]:
    return json.loads(SPLIT_FILE.read_text())


def halves(split: dict[str, list[str]]) -> list[str]:
    """The halves to report, in order: DEV, HELD-OUT, then FRESH and FRESH2 when the split
    has them."""
    return [h for h in ("dev", "held_out", "fresh", "fresh2") if split.get(h)]


def _specs(cache: Path):
    from mlflow_deepfix.bench.corpus.cases import CaseSpec

    return [CaseSpec.from_id(p.stem) for p in sorted(cache.glob("*.json"))]


def _outcomes(cache: Path):
    from mlflow_deepfix.bench.corpus.runner import run_stage2

    return run_stage2(_specs(cache), directory=cache)


#: the loggers through which stage 2 records a rule or an analyzer that raised: the
#: analyzer catches a rule's exception, logs it, keeps the other rules' signals and goes
#: on (``RuleSourceAnalyzer.analyze``); the coordinator does the same for an analyzer
#: (``run_analyzers``). Neither reaches the ``CaseOutcome`` (its ``error`` holds only a
#: diagnosis that raised as a whole), so ``score --strict`` reads them from the log.
FAILURE_LOGGERS = ("deepfix_agents.analyzers._base", "deepfix_agents.coordinator")


class _FailureLog(logging.Handler):
    """Collects the warnings of :data:`FAILURE_LOGGERS` (their messages, in order)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name in FAILURE_LOGGERS:
            self.messages.append(record.getMessage())


def _outcomes_and_failures(cache: Path):
    """Stage 2 as :func:`_outcomes` runs it (case by case, the same diagnosis), with the
    errors recorded on each case: per case id, the rules and analyzers that raised (as
    logged) and a diagnosis that raised as a whole (the outcome's ``error``)."""
    from mlflow_deepfix.bench.corpus.runner import run_stage2

    handler = _FailureLog()
    logger = logging.getLogger("deepfix_agents")
    level = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.WARNING:
        logger.setLevel(logging.WARNING)
    outcomes, failures = [], {}
    try:
        for spec in _specs(cache):
            del handler.messages[:]
            (outcome,) = run_stage2([spec], directory=cache)
            outcomes.append(outcome)
            failed = list(dict.fromkeys(handler.messages))
            if outcome.error and outcome.error.startswith("diagnosis:"):
                failed.append(outcome.error)
            if failed:
                failures[spec.id] = failed
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return outcomes, failures


def _line(name: str, s) -> str:
    return (f"{name:24s} top-1 {s.top1:.3f} top-3 {s.top3:.3f} MRR {s.mrr:.3f} (n={s.n_buggy})"
            f"  two-bug r@3 {s.two_bug_recall3:.3f} (n={s.n_two_bug})"
            f"  clean medium+ {s.clean_medium_plus:.3f} (n={s.n_clean})")


def _with_validity(outcomes, required):
    """The outcomes with an earlier definition's validity bars ``required``, re-derived
    from each case's recorded harm, so every definition is scored on the same
    artifacts: corpus v1's (an absolute ECE bar, rarity and nudges counted whether or not
    they harmed the model) or v3's (label drift counted at any realised shift)."""
    from dataclasses import replace

    from mlflow_deepfix.bench.corpus.cases import CaseSpec, validity

    out = []
    for o in outcomes:
        valid, reason = validity(CaseSpec.from_id(o.case_id), o.harm, required)
        out.append(replace(o, valid=valid, invalid_reason=reason))
    return out


def _without_same_mechanism(outcomes):
    """The outcomes scored as before definition v3: only the planted category names a
    single bug (see ``cases.SAME_MECHANISM``)."""
    from dataclasses import replace

    return [replace(o, also_accepted={}) for o in outcomes]


def with_definition(outcomes, definition: str):
    """The outcomes as corpus definition ``definition`` counts them (v4, the cache's own
    recorded validity, unchanged)."""
    from mlflow_deepfix.bench.corpus.cases import HARM_REQUIRED_V1, HARM_REQUIRED_V3

    if definition in ("v2", "v1"):
        outcomes = _without_same_mechanism(outcomes)
    if definition == "v1":
        return _with_validity(outcomes, HARM_REQUIRED_V1)
    if definition in ("v3", "v2"):
        return _with_validity(outcomes, HARM_REQUIRED_V3)
    return outcomes


def score_cmd(args) -> int:
    from mlflow_deepfix.bench.corpus.scoring import group_scores, score

    split = load_split()
    failures = {}
    if args.strict:
        outcomes, failures = _outcomes_and_failures(Path(args.cache))
    else:
        outcomes = _outcomes(Path(args.cache))
    outcomes = with_definition(outcomes, args.definition)
    if args.calibrated:
        # each case diagnosed by the calibration fitted without its dataset (what the
        # evaluator's default would say on a dataset the calibration never saw)
        from mlflow_deepfix.bench.corpus.calibration import held_out_calibrated

        outcomes = held_out_calibrated(outcomes)
        if outcomes is None:
            print("not enough findings to fit a calibration", file=sys.stderr)
            return 2
    result = {}
    for half in halves(split):
        part = [o for o in outcomes if o.dataset in split[half]]
        overall = score(part)
        print(_line(half.upper(), overall))
        result[half] = {"overall": overall.as_row()}
        if args.detail:
            for key in ("category", "dataset"):
                groups = group_scores(part, key)
                result[half][key] = {k: v.as_row() for k, v in groups.items()}
                for k, v in groups.items():
                    print("   " + _line(k, v))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    if failures:
        print(f"strict: rules or analyzers raised during stage 2 on {len(failures)} "
              "case(s):", file=sys.stderr)
        for case_id, messages in failures.items():
            for message in messages:
                print(f"  {case_id}: {message}", file=sys.stderr)
        return 1
    return 0


def clean_twin(case_id: str) -> str | None:
    """The clean control built like ``case_id`` (same dataset, model family and seed),
    or None for a clean control itself."""
    category, dataset, model, _level, seed = case_id.split(".")
    return None if category == "clean" else f"clean.{dataset}.{model}.none.{seed}"


def measured(artifact: dict) -> str:
    """One line of what the testing step measured that bears on a planted bug's harm:
    test accuracy and balanced accuracy (or the test score), the expected calibration
    error and its noise level, the minority class's F1 at 0.5 and at the best threshold,
    and how far the predicted class shares are from the true ones on test."""
    from deepfix_agents.rules.label_drift import total_variation

    perf = artifact.get("performance") or {}
    test = (perf.get("scores") or {}).get("test", {})
    labels = ((artifact.get("dataset") or {}).get("test") or {}).get("label_distribution") or {}
    parts = [f"n_test={((artifact.get('dataset') or {}).get('test') or {}).get('n_rows')}"]
    for key in ("accuracy", "balanced_accuracy", "r2"):
        if test.get(key) is not None:
            parts.append(f"{key}={test[key]:.3f}")
    if perf.get("calibration_error") is not None:
        noise = perf.get("calibration_noise")
        parts.append(f"ece={perf['calibration_error']:.3f}"
                     + (f" (noise {noise:.3f})" if noise is not None else ""))
    if perf.get("f1_at_default") is not None and perf.get("f1_at_best") is not None:
        parts.append(f"f1 {perf['f1_at_default']:.3f}->{perf['f1_at_best']:.3f}"
                     f" at {perf.get('best_threshold')}")
    predicted = perf.get("prediction_distribution") or {}
    if predicted and labels:
        parts.append(f"pred-vs-true tv={total_variation(predicted, labels):.3f}")
    if len(labels) >= 2:
        rare, share = min(labels.items(), key=lambda kv: (kv[1], kv[0]))
        n_rows = ((artifact.get("dataset") or {}).get("test") or {}).get("n_rows") or 0
        parts.append(f"rarest {rare!r} {share:.3f} ({share * n_rows:.0f} rows, predicted "
                     f"{predicted.get(rare, 0.0):.3f})")
    return " ".join(parts)


def failures_cmd(args) -> int:
    from mlflow_deepfix.bench.corpus.scoring import ranked_categories

    split = load_split()
    outcomes = [o for o in _outcomes(Path(args.cache)) if o.dataset in split["dev"]]
    for o in outcomes:
        if not o.valid or o.error:
            continue
        want = args.category
        if want == "clean":
            if o.kind != "clean":
                continue
        elif want == "two_bug":
            if o.kind != "two_bug":
                continue
        elif o.kind != "single" or o.expected[0] != want:
            continue
        cats = ranked_categories(o.findings)
        ok = (o.kind == "single" and bool(cats) and cats[0] in o.names(o.expected[0])) or (
            o.kind == "two_bug" and all(e in cats[:3] for e in o.expected))
        if o.kind == "clean":
            ok = not any(f["severity"] in ("critical", "high", "medium") for f in o.findings)
        if ok and not args.all:
            continue
        print(("OK  " if ok else "MISS") + f" {o.case_id} harm={json.dumps(o.harm)}")
        for f in sorted(o.findings, key=lambda f: f.get("rank", 0))[: args.top]:
            print(f"      {f['category']:24s} {f['severity']:8s} conf={f.get('confidence')} "
                  f"impact={f.get('max_impact', f.get('impact'))}")
        if args.twin:
            twin = clean_twin(o.case_id)
            for name in (o.case_id, twin):
                path = Path(args.cache) / f"{name}.json" if name else None
                if path is not None and path.exists():
                    artifact = json.loads(path.read_text()).get("artifact") or {}
                    print(f"      measured {'case' if name == o.case_id else 'twin'}: "
                          f"{measured(artifact)}")
    return 0


#: severities in order, for "the same or a higher severity"
SEVERITY_LEVEL = {"info": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}
MISS_KINDS = (
    "winner on the clean twin, same or higher severity",
    "winner on the clean twin, lower severity there",
    "winner not on the clean twin",
    "no clean twin",
    "no findings",
)


def miss_kind(outcome, twin_findings: list[dict] | None) -> tuple[str, bool] | None:
    """(kind, planted category found at all) for a single-bug case whose top finding is
    not its planted category, None for a hit. ``twin_findings``: the findings of its
    clean twin (:func:`clean_twin`), None when the twin is missing or invalid.

    A winner that the clean twin shows at the same or a higher severity is the
    workflow's own issue, there without the bug: ranking it first is no misreading of
    the bug, the bug's harm is just not larger than it. One the twin shows at a lower
    severity is usually the bug's harm credited to a natural issue (a cause read as
    another's symptom); one the twin lacks is new with the bug."""
    from mlflow_deepfix.bench.corpus.scoring import ranked_categories

    names = set(outcome.names(outcome.expected[0]))
    cats = ranked_categories(outcome.findings)
    if cats and cats[0] in names:
        return None
    found = any(f["category"] in names for f in outcome.findings)
    if not outcome.findings:
        return MISS_KINDS[4], found
    if twin_findings is None:
        return MISS_KINDS[3], found
    top = min(outcome.findings, key=lambda f: f.get("rank", 0))
    there = {f["category"]: f["severity"] for f in twin_findings}
    if top["category"] not in there:
        return MISS_KINDS[2], found
    if SEVERITY_LEVEL[there[top["category"]]] >= SEVERITY_LEVEL[top["severity"]]:
        return MISS_KINDS[0], found
    return MISS_KINDS[1], found


#: bands of the planted bug's cost to the test score, in noise units (see ``--by-harm``)
HARM_BANDS = ((0.0, "below 0 (no cost: the score held or rose)"), (1.0, "0 to 1"),
              (2.0, "1 to 2"), (4.0, "2 to 4"), (float("inf"), "4 or more"))


def harm_units(outcome, artifact: dict) -> float | None:
    """The planted bug's cost to the test score (``score_drop`` against the clean twin)
    over the test score's noise: the ``chance_level`` measurement's standard error, at
    least the sampling noise 0.5/sqrt(test rows). None without the cost."""
    from deepfix_agents.rules._noise import sampling_noise

    drop = (outcome.harm or {}).get("score_drop")
    if drop is None:
        return None
    chance = next((i for i in artifact.get("interventions") or []
                   if i.get("kind") == "chance_level"), None)
    n_test = ((artifact.get("dataset") or {}).get("test") or {}).get("n_rows") or 0
    noise = max((chance or {}).get("noise") or 0.0, sampling_noise(n_test) if n_test else 0.0)
    return drop / noise if noise > 0 else None


def harm_band(units: float | None) -> str:
    if units is None:
        return "not measured"
    return next(name for bound, name in HARM_BANDS if units < bound)


def _by_harm(outcomes, cache: Path) -> None:
    """Top-1 and top-3 of DEV's valid single-bug cases per band of :func:`harm_units`."""
    from mlflow_deepfix.bench.corpus.scoring import ranked_categories

    bands: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for o in outcomes:
        if o.kind != "single" or not o.valid or o.error:
            continue
        path = cache / f"{o.case_id}.json"
        artifact = json.loads(path.read_text()).get("artifact") or {} if path.exists() else {}
        names = set(o.names(o.expected[0]))
        cats = ranked_categories(o.findings)
        row = bands[harm_band(harm_units(o, artifact))]
        row[0] += 1
        row[1] += bool(cats) and cats[0] in names
        row[2] += any(c in names for c in cats[:3])
    print("by the planted bug's cost to the test score, in noise units:")
    for name in [n for _, n in HARM_BANDS] + ["not measured"]:
        n, top1, top3 = bands.get(name, (0, 0, 0))
        if n:
            print(f"  {name:42s} cases {n:4d}  top-1 {top1 / n:.3f}  top-3 {top3 / n:.3f}")


def misses_cmd(args) -> int:
    split = load_split()
    outcomes = [o for o in with_definition(_outcomes(Path(args.cache)), "v4")
                if o.dataset in split["dev"]]
    if args.calibrated:
        from mlflow_deepfix.bench.corpus.calibration import held_out_calibrated

        outcomes = held_out_calibrated(outcomes)
        if outcomes is None:
            print("not enough findings to fit a calibration", file=sys.stderr)
            return 2
    twins = {o.case_id: o.findings for o in outcomes
             if o.kind == "clean" and o.valid and not o.error}
    counts: dict[tuple[str, bool], list[str]] = defaultdict(list)
    n_single = 0
    for o in outcomes:
        if o.kind != "single" or not o.valid or o.error:
            continue
        n_single += 1
        kind = miss_kind(o, twins.get(clean_twin(o.case_id)))
        if kind is not None:
            counts[kind].append(o.case_id)
    n_miss = sum(len(v) for v in counts.values())
    print(f"DEV single-bug cases {n_single}, top-1 misses {n_miss}")
    for kind in MISS_KINDS:
        for found in (True, False):
            ids = counts.get((kind, found), [])
            if ids:
                print(f"  {len(ids):4d}  {kind}; planted {'found' if found else 'absent'}")
                if args.list:
                    for case_id in ids:
                        print(f"          {case_id}")
    if args.by_harm:
        _by_harm(outcomes, Path(args.cache))
    return 0


def stage1_cmd(args) -> int:
    from mlflow_deepfix.bench.corpus.cases import CaseSpec
    from mlflow_deepfix.bench.corpus.runner import cache_dir, run_stage1

    split = load_split()
    if args.reference:
        ids = sorted(p.stem for p in Path(args.reference).glob("*.json"))
    else:
        from mlflow_deepfix.bench.corpus.cases import generate_cases

        ids = sorted(s.id for s in generate_cases())
    if args.datasets:
        wanted = set(args.datasets.split(","))
        ids = [i for i in ids if CaseSpec.from_id(i).dataset in wanted]
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for case_id in ids:
        spec = CaseSpec.from_id(case_id)
        group = spec.categories[0] if spec.kind == "single" else f"({spec.kind})"
        half = next((h for h in halves(split) if spec.dataset in split[h]), "held_out")
        groups[(group, half)].append(case_id)
    import random

    rng = random.Random(12)
    for key in sorted(groups):
        # spread each round over the datasets (ids sort by dataset otherwise)
        rng.shuffle(groups[key])
    order: list[str] = []
    while any(groups.values()):
        for key in sorted(groups):
            take = 2 if key[0] == "(clean)" else 1
            for _ in range(take):
                if groups[key]:
                    order.append(groups[key].pop(0))
    if args.limit:
        order = order[: args.limit]
    directory = cache_dir(Path(args.cache_root))
    print(f"stage 1: {len(order)} cases -> {directory}", flush=True)
    report = run_stage1([CaseSpec.from_id(i) for i in order], directory=directory, workers=args.workers,
                        timeout_s=args.timeout, progress=True)
    print(f"ran {len(report.ran)} errors {len(report.errors)} timeouts {len(report.timeouts)}")
    return 0


def dump_cmd(args) -> int:
    """Per-case measures of every case (``--calibrated``: each case by the calibration of
    the fold that never saw its dataset), grouped by half, for :func:`compare_cmd`."""
    split = load_split()
    outcomes = with_definition(_outcomes(Path(args.cache)), args.definition)
    if args.calibrated:
        from mlflow_deepfix.bench.corpus.calibration import held_out_calibrated

        outcomes = held_out_calibrated(outcomes)
    from mlflow_deepfix.bench.corpus.scoring import case_measures

    out: dict[str, dict[str, dict[str, float]]] = {h: {} for h in halves(split)}
    for o in outcomes:
        half = next((h for h in halves(split) if o.dataset in split[h]), None)
        if half is not None:
            out[half][o.case_id] = case_measures(o) or {}
    Path(args.out).write_text(json.dumps(out, sort_keys=True))
    print(f"{args.out}: " + ", ".join(f"{h} {len(v)}" for h, v in out.items()))
    return 0


#: per measure, whether a higher value is better
_BETTER_HIGH = {"top1": True, "top3": True, "rr": True, "r3": True, "alarm": False}


def compare_cmd(args) -> int:
    """Paired, case by case: per half and measure, how many cases ``after`` fixed (+)
    and broke (-) against ``before``. Case ids are printed for DEV only (``--list``):
    the sealed halves report counts, never cases."""
    before = json.loads(Path(args.before).read_text())
    after = json.loads(Path(args.after).read_text())
    status = 0
    for half in after:
        for measure, high in _BETTER_HIGH.items():
            fixed, broken = [], []
            for case_id, m in after[half].items():
                old = before.get(half, {}).get(case_id, {})
                if measure not in m or measure not in old or m[measure] == old[measure]:
                    continue
                better = (m[measure] > old[measure]) == high
                (fixed if better else broken).append(case_id)
            if not fixed and not broken:
                continue
            net = len(fixed) - len(broken)
            if net < 0 and half != "dev":
                status = 1
            print(f"{half.upper():9s} {measure:6s} +{len(fixed)}/-{len(broken)}")
            if args.list and half == "dev":
                for case_id in fixed:
                    print(f"    + {case_id}")
                for case_id in broken:
                    print(f"    - {case_id}")
    print("sealed halves: " + ("a measure nets below zero" if status else "no measure nets below zero"))
    return int(status)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("score")
    p.add_argument("--cache", required=True)
    p.add_argument("--detail", action="store_true")
    p.add_argument("--json")
    p.add_argument("--calibrated", action="store_true",
                   help="score the rules + the learned calibration, leave-one-dataset-out")
    p.add_argument("--definition", choices=DEFINITIONS, default="v4",
                   help="v3: label_drift counted at any realised shift of the test "
                   "labels (v4 counts it only beyond sampling noise, see "
                   "cases.HARM_BEYOND_NOISE); "
                   "v2: also a binary rare-class case meeting both the decision_threshold "
                   "and the class_imbalance bar counts only its planted category (v3 "
                   "accepts either, see cases.SAME_MECHANISM); v1: also corpus v1's "
                   "validity (absolute ECE bar; class_imbalance and prediction_drift "
                   "counted without measured harm), same artifacts")
    p.add_argument("--strict", action="store_true",
                   help="exit 1, naming the cases and the rules, when a rule or an analyzer "
                   "raised during stage 2 (recorded and skipped otherwise: the other rules "
                   "go on and the error shows only as a warning on stderr)")
    p = sub.add_parser("failures")
    p.add_argument("--cache", required=True)
    p.add_argument("--category", required=True)
    p.add_argument("--top", type=int, default=4)
    p.add_argument("--all", action="store_true")
    p.add_argument("--twin", action="store_true",
                   help="also print what was measured on the case and on its clean twin")
    p = sub.add_parser("misses", help="DEV top-1 misses against their clean twins")
    p.add_argument("--cache", required=True)
    p.add_argument("--calibrated", action="store_true",
                   help="the calibration fitted leave-one-dataset-out on DEV datasets only")
    p.add_argument("--list", action="store_true", help="list the case ids of each kind")
    p.add_argument("--by-harm", action="store_true",
                   help="top-1 and top-3 by the planted bug's cost to the score, in noise units")
    p = sub.add_parser("stage1")
    p.add_argument("--reference", metavar="DIR",
                   help="a cache folder (e.g. CACHE_ROOT/v3-KEY) whose case ids to re-test "
                   "(default: every generated case)")
    p.add_argument("--datasets", metavar="A,B",
                   help="only the cases of these datasets (e.g. the fresh half)")
    p.add_argument("--cache-root", required=True, metavar="DIR",
                   help="cache root for the new artifacts (a vN-KEY folder is made inside, N the corpus version)")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--timeout", type=float, default=240.0)
    p.add_argument("--workers", type=int, choices=(1, 2), default=1,
                   help="test processes (2 halves the wall time on two cores: the whole "
                        "corpus in about 37 min instead of 75; the order stays balanced, "
                        "so a prefix is still representative)")
    p = sub.add_parser("dump", help="per-case measures, for compare")
    p.add_argument("--cache", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--calibrated", action="store_true")
    p.add_argument("--definition", choices=DEFINITIONS, default="v4")
    p = sub.add_parser("compare", help="paired per-case comparison of two dumps")
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--list", action="store_true", help="list DEV cases fixed and broken")
    sub.add_parser("split")
    args = parser.parse_args(argv)
    if args.cmd == "split":
        SPLIT_FILE.write_text(json.dumps(make_split(), indent=1) + "\n")
        print(SPLIT_FILE.read_text())
        return 0
    return {"score": score_cmd, "failures": failures_cmd, "stage1": stage1_cmd,
            "dump": dump_cmd, "compare": compare_cmd, "misses": misses_cmd}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
