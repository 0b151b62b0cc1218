"""Refresh only the label-only measurements (``label_only_feature`` interventions) of
cached corpus artifacts with the current code, into a new folder.

Stage 1 caches whole artifacts per testing-code fingerprint. Stop 53 changed one
measurement: the label-only test of a leak candidate now reads the row's text columns
(as indicators of their common levels) beside its numeric ones. That test needs only the
training sample the interventions draw, so this script rebuilds each case's served
inputs (deterministic from its id, without the bug-free refit), draws that sample
exactly as ``run_interventions`` does, re-runs the test for every leak candidate the
artifact measured (the columns of its ``target_leakage`` interventions), and writes the
record with those entries replaced (or added, before the column's other measurements,
where the test had no column to read before). Every other file is hard-linked from the
source folder, unchanged.

    python benchmarks/corpus_label_only_refresh.py --source DIR --dest NEW_DIR [--workers 2]

On a table without text columns the refreshed fits must equal the cached ones (the
script counts any that do not as ``mismatch``: the check that it reproduces the testing
step); only their count of predictors may move, where a constant column is now dropped.
"""

from __future__ import annotations

import pandas as pd

LEAK_KINDS = ("label_only_feature", "permute_feature", "drop_feature")


def leak_columns(artifact: dict) -> list[str]:
    """The leak candidates the artifact measured, in the order it measured them."""
    seen: dict[str, None] = {}
    for item in artifact.get("interventions") or []:
        if item.get("category") == "target_leakage" and item.get("kind") in LEAK_KINDS:
            seen.setdefault(item["target"], None)
    return list(seen)


def _association(artifact: dict, column: str) -> float:
    for item in artifact["interventions"]:
        if item.get("target") == column and "association" in (item.get("values") or {}):
            return float(item["values"]["association"])
    return 0.0


def _strip(items: list[dict]) -> list[dict]:
    return [{k: v for k, v in i.items() if k != "seconds"} for i in items]


def _fits(items: list[dict]) -> list[tuple]:
    """The label-only fits themselves (what the other columns explain), without the count
    of predictors: on a table without text columns only a constant column dropped by
    the range rather than a round-off std (stop 53) may change that count."""
    return [(i["target"], i["score_after"], i["values"].get("r2_label"),
             i["values"].get("r2_full")) for i in items if i.get("kind") == "label_only_feature"]


def refresh(record: dict) -> tuple[dict, str]:
    """The record with its label-only entries re-measured, and what happened: ``same``,
    ``changed``, ``mismatch`` (a table without text columns whose fit moved) or
    ``untouched``."""
    from refresh_pool import interventions_sample

    from mlflow_deepfix.testing.interventions import _label_only
    from mlflow_deepfix.testing.stats.labels import is_classification

    artifact = record.get("artifact")
    columns = leak_columns(artifact) if artifact else []
    if not columns:
        return record, "untouched"
    _config, inputs, features, rows = interventions_sample(record["case_id"])
    target = inputs.target
    text = any(not pd.api.types.is_numeric_dtype(rows[c]) for c in features if c in rows)
    old = [dict(i) for i in artifact["interventions"]]
    new_items = []
    for column in columns:
        found = _label_only(rows, target, features, column, _association(artifact, column),
                            is_classification(inputs.task))
        new_items.append((column, found.model_dump(mode="json") if found else None))
    result = [i for i in old if i.get("kind") != "label_only_feature"]
    for column, item in new_items:
        if item is None:
            continue
        at = next((k for k, i in enumerate(result) if i.get("target") == column
                   and i.get("category") == "target_leakage"), len(result))
        result.insert(at, item)
    status = "same" if _strip(result) == _strip(old) else "changed"
    if status == "changed" and not text and _fits(result) != _fits(old):
        status = "mismatch"
    record = dict(record)
    record["artifact"] = dict(artifact, interventions=result)
    return record, status


def _wants(record: dict) -> bool:
    return bool(record.get("artifact") and leak_columns(record["artifact"]))


def main(argv: list[str] | None = None) -> int:
    from refresh_pool import run_refresh

    return run_refresh(argv, description=__doc__.splitlines()[0],
                       module="corpus_label_only_refresh", wants=_wants,
                       what="cases with leak candidates")


if __name__ == "__main__":
    raise SystemExit(main())
