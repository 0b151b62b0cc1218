"""Corpus held-out numbers with the behaviour probes (issue 15) on vs off.

One stage-1 run (the real testing step, probes included) caches each case's artifact;
stage 2 then diagnoses every artifact twice: as tested, and with the four probe
sections (``robustness``, ``confidence``, ``fairness``, ``spurious``) removed, which
is exactly what the rules see when the probes do not run (the probes feed nothing
else of the testing step). Same artifacts, same seeds: the difference is the
detectors' alone, not load or stage-1 noise.

    # stage 1 on a fixed case list (resumable), then both stage-2 passes
    nice -n 10 python benchmarks/corpus_probes_ab.py --ids ids.txt \
        --cache DIR --workers 1
    # write the default subset's ids (one case in 8) to a file first:
    python benchmarks/corpus_probes_ab.py --write-ids ids.txt

The case list is fixed in a file because adding injectors changes which ids the
default subset picks.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PROBE_SECTIONS = ("robustness", "confidence", "fairness", "spurious")


def _outcomes(specs, directory: Path, *, probes: bool):
    from mlflow_deepfix.bench.corpus.runner import CaseOutcome, case_path, diagnose_cached

    outcomes = []
    for spec in specs:
        path = case_path(directory, spec.id)
        if not path.exists():
            outcomes.append(CaseOutcome(
                case_id=spec.id, kind=spec.kind, dataset=spec.dataset, model=spec.model,
                task="", expected=list(spec.categories), magnitudes=list(spec.magnitudes),
                valid=True, error="not in the cache (run stage 1)"))
            continue
        record = json.loads(path.read_text(encoding="utf-8"))
        if not probes and "artifact" in record:
            for section in PROBE_SECTIONS:
                record["artifact"][section] = None
        outcomes.append(diagnose_cached(record))
    return outcomes


def _cells(s) -> str:
    single = f"{s.top1:.2f} {s.top3:.2f} {s.mrr:.2f}" if s.n_buggy else "-    -    -   "
    two = f"{s.two_bug_recall3:.2f}" if s.n_two_bug else "-   "
    clean = f"{s.clean_medium_plus:.2f}" if s.n_clean else "-   "
    return f"{single}  {two}  {clean}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=Path, help="file with one case id per line")
    parser.add_argument("--write-ids", type=Path, help="write the default subset's ids")
    parser.add_argument("--cache", type=Path, metavar="DIR",
                        help="where stage 1 caches the artifacts (resumable; needed with --ids)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--cached-only", action="store_true", help="skip stage 1")
    parser.add_argument("--json", type=Path, help="write both score sets here")
    args = parser.parse_args(argv)

    from mlflow_deepfix.bench.corpus.cases import CaseSpec
    from mlflow_deepfix.bench.corpus.report import select_cases

    if args.write_ids:
        ids = [s.id for s in select_cases()]
        args.write_ids.write_text("\n".join(ids) + "\n", encoding="utf-8")
        print(f"{len(ids)} ids written to {args.write_ids}")
        return 0
    if not args.ids:
        parser.error("--ids is required (or --write-ids)")
    if not args.cache:
        parser.error("--cache is required with --ids: the folder stage 1 caches into")
    specs = [CaseSpec.from_id(line.strip()) for line in args.ids.read_text().splitlines()
             if line.strip()]
    if not args.cached_only:
        from mlflow_deepfix.bench.corpus.runner import run_stage1

        report = run_stage1(specs, directory=args.cache, workers=args.workers,
                            timeout_s=args.timeout, progress=True)
        print(f"stage 1: ran {len(report.ran)}, cached {len(report.skipped)}, "
              f"errors {len(report.errors)}, timeouts {len(report.timeouts)}, "
              f"{report.seconds:.0f}s", file=sys.stderr)

    from mlflow_deepfix.bench.corpus.calibration import held_out_calibrated
    from mlflow_deepfix.bench.corpus.scoring import group_scores, score

    result = {}
    for label, probes in (("on", True), ("off", False)):
        outcomes = _outcomes(specs, args.cache, probes=probes)
        calibrated = held_out_calibrated(outcomes)
        result[label] = {
            "rules": score(outcomes),
            "calibrated": score(calibrated) if calibrated is not None else None,
            "per_category": group_scores(outcomes, "category"),
            "outcomes": outcomes,
        }
    print("cells: top-1 top-3 MRR (single bugs)  two-bug r@3  clean medium+")
    for kind in ("rules", "calibrated"):
        for label in ("on", "off"):
            s = result[label][kind]
            if s is not None:
                print(f"{kind:10s} probes {label:3s}: {_cells(s)}   (n single={s.n_buggy}, "
                      f"two-bug={s.n_two_bug}, clean={s.n_clean}, invalid={s.n_invalid}, "
                      f"errors={s.n_errors})")
    # the DEV / HELD-OUT halves of the corpus datasets (benchmarks/corpus_split.json):
    # rules are read and fitted on DEV; HELD-OUT is the result
    split = json.loads(Path(__file__).with_name("corpus_split.json").read_text())
    for half in ("dev", "held_out"):
        names = set(split[half])
        for label in ("on", "off"):
            part = [o for o in result[label]["outcomes"] if o.dataset in names]
            s = score(part)
            result[label][f"rules_{half}"] = s
            print(f"{'rules ' + half:16s} probes {label:3s}: {_cells(s)}   (n single="
                  f"{s.n_buggy}, two-bug={s.n_two_bug}, clean={s.n_clean}, "
                  f"invalid={s.n_invalid}, errors={s.n_errors})")
    print(f"\n{'category':24s}  {'probes on':28s}  {'probes off':28s}")
    for name, on in result["on"]["per_category"].items():
        off = result["off"]["per_category"].get(name)
        print(f"{name:24s}  {_cells(on):28s}  {_cells(off) if off else '-':28s}")
    changed = []
    for a, b in zip(result["on"]["outcomes"], result["off"]["outcomes"]):
        cats_a = [f["category"] for f in a.findings][:3]
        cats_b = [f["category"] for f in b.findings][:3]
        if cats_a != cats_b:
            changed.append(f"{a.case_id}: on {cats_a} / off {cats_b}")
    print(f"\ncases whose top 3 differ ({len(changed)}):")
    for line in changed:
        print("  " + line)
    if args.json:
        from dataclasses import asdict

        args.json.write_text(json.dumps({
            label: {"rules": asdict(r["rules"]),
                    **{f"rules_{h}": asdict(r[f"rules_{h}"]) for h in ("dev", "held_out")},
                    "calibrated": asdict(r["calibrated"]) if r["calibrated"] else None,
                    "per_category": {k: asdict(v) for k, v in r["per_category"].items()}}
            for label, r in result.items()}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
