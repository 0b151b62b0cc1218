"""Scores over the corpus, with leave-dataset-out folds.

Metrics (over *valid* cases, see :func:`cases.validity`):

* buggy single-bug cases: top-1, top-3 and MRR of the planted category among the
  distinct categories of the ranked findings;
* two-bug cases: recall@3, both planted categories in the top 3 (and top-1 for
  either of them);
* clean controls: the share with at least one finding at ``medium`` or above.

Every fold holds out one dataset: anything fitted (the optional calibration model, see
:mod:`mlflow_deepfix.bench.corpus.calibration`) is fitted on the other datasets' cases only,
and each case is scored by the model of the fold that never saw its dataset. The
rules alone have nothing fitted, so their held-out score is their score on every
case; it is reported per fold all the same so the two are read side by side.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any

from mlflow_deepfix.bench.corpus.runner import CaseOutcome

MEDIUM_OR_WORSE = ("critical", "high", "medium")


def ranked_categories(findings: list[dict[str, Any]]) -> list[str]:
    ordered = sorted(findings, key=lambda f: f.get("rank", 0))
    return list(dict.fromkeys(f["category"] for f in ordered))


def rank_of(categories: list[str], expected: str | tuple[str, ...]) -> int | None:
    """The 1-based rank of the first of ``expected`` (a category, or the categories
    that all name one planted bug) among ``categories``; None when none is there."""
    names = (expected,) if isinstance(expected, str) else expected
    ranks = [categories.index(n) + 1 for n in names if n in categories]
    return min(ranks, default=None)


@dataclass
class Scores:
    n_buggy: int = 0
    top1: float = 0.0
    top3: float = 0.0
    mrr: float = 0.0
    n_two_bug: int = 0
    two_bug_recall3: float = 0.0
    two_bug_any_top1: float = 0.0
    n_clean: int = 0
    clean_medium_plus: float = 0.0
    #: errored cases (testing/diagnosis errors are scored as misses; build errors,
    #: timeouts and uncached cases are left out)
    n_errors: int = 0
    n_invalid: int = 0

    def as_row(self) -> dict[str, Any]:
        return asdict(self)


def counts_as_miss(error: str) -> bool:
    """A testing or diagnosis error is the product failing on the case: a miss. A case
    the corpus could not build, one stage 1 gave up on (timeout, dead worker) or one not
    cached yet says nothing about the diagnosis: left out, and counted as an error."""
    return not error.startswith(("build:", "timeout", "worker died", "not in the cache"))


def case_measures(o: CaseOutcome) -> dict[str, float] | None:
    """The measures :func:`score` averages, for one case: ``top1``, ``top3`` and ``rr``
    (reciprocal rank) of a single-bug case; ``r3`` (both bugs in the top 3) and
    ``any_top1`` of a two-bug case; ``alarm`` (a finding at medium or above) of a clean
    control. None for a case left out: an error that is no miss, or an invalid case. A
    paired comparison of two diagnoses reads the same per-case values
    (``benchmarks/corpus_split.py compare``)."""
    if (o.error and not counts_as_miss(o.error)) or not o.valid:
        return None
    cats = ranked_categories(o.findings)
    if o.kind == "single":
        r = rank_of(cats, o.names(o.expected[0]))
        return {"top1": float(r == 1), "top3": float(r is not None and r <= 3),
                "rr": 1.0 / r if r else 0.0}
    if o.kind == "two_bug":
        return {"r3": float(all(e in cats[:3] for e in o.expected)),
                "any_top1": float(bool(cats) and cats[0] in o.expected)}
    return {"alarm": float(any(f["severity"] in MEDIUM_OR_WORSE for f in o.findings))}


def _mean(rows: list[dict[str, float]], key: str) -> float:
    return sum(r[key] for r in rows) / len(rows) if rows else 0.0


def score(outcomes: list[CaseOutcome]) -> Scores:
    """Scores of ``outcomes`` (errored cases count as misses; invalid ones are left
    out and counted)."""
    s = Scores()
    measured: dict[str, list[dict[str, float]]] = defaultdict(list)
    for o in outcomes:
        if o.error:
            s.n_errors += 1
            if not counts_as_miss(o.error):
                continue
        if not o.valid:
            s.n_invalid += 1
            continue
        kind = o.kind if o.kind in ("single", "two_bug") else "clean"
        measured[kind].append(case_measures(o))
    single, two_bug, clean = measured["single"], measured["two_bug"], measured["clean"]
    s.n_buggy, s.n_two_bug, s.n_clean = len(single), len(two_bug), len(clean)
    s.top1, s.top3, s.mrr = _mean(single, "top1"), _mean(single, "top3"), _mean(single, "rr")
    s.two_bug_recall3, s.two_bug_any_top1 = _mean(two_bug, "r3"), _mean(two_bug, "any_top1")
    s.clean_medium_plus = _mean(clean, "alarm")
    return s


def group_scores(outcomes: list[CaseOutcome], key: str) -> dict[str, Scores]:
    """Scores per ``key``: ``category`` (planted category of single-bug cases; clean and
    two-bug cases under ``(clean)`` / ``(two_bug)``), ``dataset``, ``model``, ``magnitude``."""
    groups: dict[str, list[CaseOutcome]] = defaultdict(list)
    for o in outcomes:
        if key == "category":
            name = o.expected[0] if o.kind == "single" else f"({o.kind})"
        elif key == "magnitude":
            name = o.magnitudes[0] if o.kind == "single" else f"({o.kind})"
        else:
            name = getattr(o, key)
        groups[name].append(o)
    return {k: score(v) for k, v in sorted(groups.items())}


def folds(outcomes: list[CaseOutcome]) -> dict[str, tuple[list[CaseOutcome], list[CaseOutcome]]]:
    """Leave-one-dataset-out: held-out dataset -> (training cases, held-out cases)."""
    datasets = sorted({o.dataset for o in outcomes})
    return {
        d: ([o for o in outcomes if o.dataset != d], [o for o in outcomes if o.dataset == d])
        for d in datasets
    }


@dataclass
class FailureRow:
    case_id: str
    expected: list[str]
    got: list[str]
    top_severity: str | None
    harm: dict[str, Any] = field(default_factory=dict)


def failures(outcomes: list[CaseOutcome]) -> dict[str, list[FailureRow]]:
    """Per planted category (or ``(clean)``): the cases the diagnosis got wrong."""
    out: dict[str, list[FailureRow]] = defaultdict(list)
    for o in outcomes:
        if not o.valid or (o.error and not counts_as_miss(o.error)):
            continue
        cats = ranked_categories(o.findings)
        top_sev = o.findings[0]["severity"] if o.findings else None
        row = FailureRow(o.case_id, o.expected, cats[:4], top_sev, o.harm)
        if o.kind == "single" and (not cats or cats[0] not in o.names(o.expected[0])):
            out[o.expected[0]].append(row)
        elif o.kind == "two_bug" and not all(e in cats[:3] for e in o.expected):
            out["(two_bug)"].append(row)
        elif o.kind == "clean" and any(f["severity"] in MEDIUM_OR_WORSE for f in o.findings):
            loud = [f"{f['category']}:{f['severity']}" for f in o.findings
                    if f["severity"] in MEDIUM_OR_WORSE]
            out["(clean)"].append(FailureRow(o.case_id, [], loud, top_sev, o.harm))
    return dict(out)
