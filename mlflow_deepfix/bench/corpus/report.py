"""The corpus benchmark end to end (``deepfix bench --corpus``) and its reports:
a plain-text summary for the terminal and a Markdown failure summary per category
(``REPORT.md`` beside the cache) that rule authors read to see where the rules fail.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mlflow_deepfix.bench.corpus.cases import CaseSpec, generate_cases
from mlflow_deepfix.bench.corpus.runner import (
    DEFAULT_SAMPLE_SIZE,
    DEFAULT_TIMEOUT_S,
    CaseOutcome,
    cache_dir,
    case_path,
    run_stage1,
    run_stage2,
)
from mlflow_deepfix.bench.corpus.scoring import Scores, failures, group_scores, score

logger = logging.getLogger(__name__)

#: the default subset: one case in SUBSET_EVERY of the full corpus (every category,
#: the two-bug pairs and clean controls stay represented)
SUBSET_EVERY = 8


def select_cases(*, full: bool = False, patterns: list[str] | None = None,
                 limit: int | None = None) -> list[CaseSpec]:
    """The corpus (``full``) or its default subset, filtered by id substrings."""
    specs = generate_cases()
    if not full:
        specs = [s for i, s in enumerate(specs) if i % SUBSET_EVERY == 0]
    if patterns:
        specs = [s for s in specs if any(p in s.id for p in patterns)]
        if not specs:
            raise ValueError(f"no corpus case id contains any of {patterns!r}")
    if limit is not None:
        specs = specs[:limit]
    return specs


@dataclass
class CorpusReport:
    cases: int
    stage1_seconds: float
    stage2_seconds: float
    rules: Scores
    calibrated: Scores | None = None
    per_category: dict[str, Scores] = field(default_factory=dict)
    per_dataset: dict[str, Scores] = field(default_factory=dict)
    per_model: dict[str, Scores] = field(default_factory=dict)
    per_category_calibrated: dict[str, Scores] = field(default_factory=dict)
    per_dataset_calibrated: dict[str, Scores] = field(default_factory=dict)
    cache: str = ""
    #: testing step per case, as recorded in stage 1 (median and total, seconds)
    testing_median_seconds: float = 0.0
    testing_total_seconds: float = 0.0
    outcomes: list[CaseOutcome] = field(default_factory=list)
    calibrated_outcomes: list[CaseOutcome] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_corpus_bench(
    specs: list[CaseSpec], *, directory: Path | None = None, workers: int = 2,
    timeout_s: float = DEFAULT_TIMEOUT_S, sample_size: int = DEFAULT_SAMPLE_SIZE,
    calibrate: bool = True, progress: bool = True,
) -> CorpusReport:
    """Stage 1 (cached), stage 2, leave-dataset-out scores (rules and calibrated)."""
    directory = Path(directory) if directory is not None else cache_dir()
    stage1 = run_stage1(specs, directory=directory, workers=workers, timeout_s=timeout_s,
                        sample_size=sample_size, progress=progress)
    started = time.perf_counter()
    outcomes = run_stage2(specs, directory=directory)
    stage2_seconds = time.perf_counter() - started
    report = CorpusReport(
        cases=len(specs), stage1_seconds=stage1.seconds, stage2_seconds=stage2_seconds,
        rules=score(outcomes), per_category=group_scores(outcomes, "category"),
        per_dataset=group_scores(outcomes, "dataset"), per_model=group_scores(outcomes, "model"),
        cache=str(directory), outcomes=outcomes,
    )
    timed = sorted(o.testing_seconds for o in outcomes if o.testing_seconds)
    if timed:
        report.testing_median_seconds = timed[len(timed) // 2]
        report.testing_total_seconds = sum(timed)
    if calibrate:
        from mlflow_deepfix.bench.corpus.calibration import held_out_calibrated

        calibrated = held_out_calibrated(outcomes)
        if calibrated is not None:
            report.calibrated_outcomes = calibrated
            report.calibrated = score(calibrated)
            report.per_category_calibrated = group_scores(calibrated, "category")
            report.per_dataset_calibrated = group_scores(calibrated, "dataset")
    return report


# --------------------------------------------------------------------------- text


def _fmt(s: Scores) -> str:
    return (f"top-1 {s.top1:.3f}  top-3 {s.top3:.3f}  MRR {s.mrr:.3f} (n={s.n_buggy})  "
            f"two-bug recall@3 {s.two_bug_recall3:.3f} (n={s.n_two_bug})  "
            f"clean medium+ {s.clean_medium_plus:.3f} (n={s.n_clean})")


def _cells(s: Scores) -> list[str]:
    """top-1, top-3, MRR (single bugs), recall@3 (two bugs), medium+ share (clean)."""
    single = [f"{s.top1:.2f}", f"{s.top3:.2f}", f"{s.mrr:.2f}"] if s.n_buggy else ["-"] * 3
    two = [f"{s.two_bug_recall3:.2f}"] if s.n_two_bug else ["-"]
    clean = [f"{s.clean_medium_plus:.2f}"] if s.n_clean else ["-"]
    return single + two + clean


def _table(groups: dict[str, Scores], other: dict[str, Scores] | None, label: str) -> list[str]:
    names = ["top-1", "top-3", "MRR", "two-bug r@3", "clean medium+"]
    head = [label, "n valid", *names]
    if other:
        head += [f"cal. {n}" for n in names]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in groups.items():
        row = [name, str(s.n_buggy + s.n_two_bug + s.n_clean), *_cells(s)]
        if other:
            row += _cells(other[name]) if name in other else ["-"] * len(names)
        lines.append("| " + " | ".join(row) + " |")
    return lines


def format_report(report: CorpusReport) -> str:
    lines = [
        f"corpus: {report.cases} cases, cache {report.cache}",
        (f"stage 1 {report.stage1_seconds:.0f}s (new cases only), stage 2 "
         f"{report.stage2_seconds:.1f}s; testing step per case (as cached): median "
         f"{report.testing_median_seconds:.1f}s, total {report.testing_total_seconds:.0f}s"),
        "held-out (leave-one-dataset-out) scores:",
        f"  rules      {_fmt(report.rules)}",
    ]
    if report.calibrated is not None:
        lines.append(f"  calibrated {_fmt(report.calibrated)}")
    lines.append(f"  errors {report.rules.n_errors}, left out as invalid "
                 f"{report.rules.n_invalid} (bug not measurably harmful, or the workflow "
                 "without it not better than the trivial baseline)")
    lines += ["", *_table(report.per_category, report.per_category_calibrated, "category")]
    lines += ["", *_table(report.per_dataset, report.per_dataset_calibrated, "dataset")]
    lines += ["", *_table(report.per_model, None, "model")]
    return "\n".join(lines)


def failure_markdown(report: CorpusReport) -> str:
    """Per category: the score, what was ranked first instead, and example misses."""
    fails = failures(report.outcomes)
    lines = [
        "# Corpus failure summary (rules only)",
        "",
        f"{report.cases} cases; cache `{report.cache}`.",
        "",
        f"Rules: {_fmt(report.rules)}",
    ]
    if report.calibrated is not None:
        lines.append(f"Calibrated (held-out folds): {_fmt(report.calibrated)}")
    lines += ["", "## Per category", "", *_table(report.per_category,
                                                 report.per_category_calibrated, "category")]
    lines += ["", "## Per dataset", "", *_table(report.per_dataset, None, "dataset")]
    invalid = Counter(o.expected[0] if o.expected else "(clean)"
                      for o in report.outcomes if not o.valid)
    if invalid:
        lines += ["", ("## Cases left out (bug not measurably harmful / clean model not "
                  "better than trivial)"), ""]
        lines += [f"- {k}: {v}" for k, v in sorted(invalid.items())]
    errors = [o for o in report.outcomes if o.error]
    if errors:
        lines += ["", "## Errors", ""]
        lines += [f"- `{o.case_id}`: {o.error[:200]}" for o in errors[:40]]
    lines += ["", "## Misses per planted category", ""]
    for category, rows in sorted(fails.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"### {category}: {len(rows)} misses")
        lines.append("")
        if category == "(two_bug)":
            missed = Counter(e for r in rows for e in r.expected if e not in r.got[:3])
            lines.append("Planted but not in the top 3: " + ", ".join(
                f"{k} x{v}" for k, v in missed.most_common()))
        else:
            instead = Counter(r.got[0] if r.got else "(nothing)" for r in rows)
            lines.append("Ranked first instead: " + ", ".join(
                f"{k} x{v}" for k, v in instead.most_common()))
        lines.append("")
        for r in rows[:12]:
            harm = {k: v for k, v in r.harm.items() if k in (
                "score_test", "score_clean", "score_baseline", "ece", "f1_gain",
                "train_test_gap")}
            lines.append(f"- `{r.case_id}` got {r.got} (top severity {r.top_severity}) "
                         f"harm {json.dumps(harm)}")
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- CLI


def add_corpus_arguments(parser: Any) -> None:
    """``deepfix bench --corpus`` options (registered on the bench parser)."""
    group = parser.add_argument_group("fault-injection corpus (--corpus)")
    group.add_argument("--corpus", action="store_true",
                       help="score on the fault-injection corpus instead of the scenario "
                       "library (a subset; --full for all of it)")
    group.add_argument("--full", action="store_true", help="with --corpus: every case")
    group.add_argument("--case", action="append", dest="corpus_cases", metavar="SUBSTR",
                       default=None, help="with --corpus: only case ids containing SUBSTR")
    group.add_argument("--limit", type=int, default=None, help="with --corpus: at most N cases")
    group.add_argument("--workers", type=int, default=2, choices=(0, 1, 2),
                       help="with --corpus: testing processes (default 2; 0 = in this "
                       "process)")
    group.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                       help="with --corpus: seconds per case before it is abandoned")
    group.add_argument("--cache-dir", default=None,
                       help="with --corpus: cache root (default: the user cache folder)")
    group.add_argument("--report", dest="report_path", default=None, metavar="PATH",
                       help="with --corpus: write the per-category failure summary (Markdown)")
    group.add_argument("--cached-only", action="store_true",
                       help="with --corpus: skip stage 1, score only the cases already cached")
    group.add_argument("--cache-key", default=None, metavar="KEY",
                       help="with --corpus: read the cache folder KEY (e.g. v1-c957d9fbf43a) "
                       "instead of the one of the current testing code; artifacts made by "
                       "other testing code, so rules changes only")
    group.add_argument("--no-calibration", action="store_true",
                       help="with --corpus: score the rules only (no held-out calibration)")
    group.add_argument("--write-calibration", default=None, metavar="PATH",
                       help="with --corpus: fit the calibration on every case and write "
                       "its JSON file")


def run_corpus_cli(args: Any) -> int:
    import sys

    try:
        specs = select_cases(full=args.full, patterns=args.corpus_cases, limit=args.limit)
    except ValueError as error:
        sys.stderr.write(f"deepfix bench --corpus: {error}\n")
        return 2
    if getattr(args, "list", False):
        for spec in specs:
            sys.stdout.write(f"{spec.id}\n")
        return 0
    directory = cache_dir(Path(args.cache_dir)) if args.cache_dir else cache_dir()
    if args.cache_key:
        directory = directory.parent / args.cache_key
        if not directory.is_dir():
            sys.stderr.write(f"deepfix bench --corpus: no cache folder {directory}\n")
            return 2
        sys.stderr.write(f"deepfix bench --corpus: reading {directory}: artifacts of other "
                         "testing code than this checkout's\n")
    if args.cached_only or args.cache_key:
        specs = [s for s in specs if case_path(directory, s.id).exists()]
        if not specs:
            sys.stderr.write(f"deepfix bench --corpus: no cached case in {directory}\n")
            return 2
    report = run_corpus_bench(
        specs, directory=directory, workers=args.workers, timeout_s=args.timeout,
        calibrate=not args.no_calibration, progress=not getattr(args, "no_progress", False),
    )
    sys.stdout.write(format_report(report) + "\n")
    if args.report_path:
        Path(args.report_path).write_text(failure_markdown(report), encoding="utf-8")
        sys.stdout.write(f"failure summary written to {args.report_path}\n")
    if getattr(args, "json_path", None):
        data = report.to_dict()
        Path(args.json_path).write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
        sys.stdout.write(f"report written to {args.json_path}\n")
    if args.write_calibration:
        from mlflow_deepfix.bench.corpus.calibration import write_shipped

        write_shipped(report.outcomes, Path(args.write_calibration))
        sys.stdout.write(f"calibration written to {args.write_calibration}\n")
    return 0
