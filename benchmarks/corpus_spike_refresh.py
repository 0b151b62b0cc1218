"""Refresh only the spike typicality of cached corpus artifacts (the ``rows_auc``,
``rows_auc_noise``, ``column_r2`` and ``spike_rows`` values of their ``impute_sentinel``
interventions) with the current code, into a new folder.

Stage 1 caches whole artifacts per testing-code fingerprint. Stop 56 added one
measurement to the spike refit: how ordinary the spike's training rows are
(:mod:`mlflow_deepfix.testing.spike_typicality`). It reads only the training sample the
interventions draw, so this script rebuilds each case's served inputs (deterministic
from its id, without the bug-free refit), draws that sample exactly as
``run_interventions`` does, measures every spike the artifact refitted, and writes the
record with those values added. Every other file is hard-linked from the source folder,
unchanged. A spike whose refit is absent (budget, a missing column) is left as it is.

    python benchmarks/corpus_spike_refresh.py --source DIR --dest NEW_DIR [--workers 2]
"""

from __future__ import annotations


def spike_items(artifact: dict) -> list[dict]:
    return [i for i in artifact.get("interventions") or [] if i.get("kind") == "impute_sentinel"]


def refresh(record: dict) -> tuple[dict, str]:
    """The record with its spike refits' typicality measured, and ``changed`` or
    ``untouched``."""
    from refresh_pool import interventions_sample

    from mlflow_deepfix.testing.spike_typicality import spike_typicality

    artifact = record.get("artifact")
    if not artifact or not spike_items(artifact):
        return record, "untouched"
    config, _inputs, features, rows = interventions_sample(record["case_id"])
    rows = rows[features]
    items = []
    for item in artifact["interventions"]:
        item = dict(item)
        if item.get("kind") == "impute_sentinel":
            values = dict(item.get("values") or {})
            found = spike_typicality(rows, item["target"], float(values.get("value", 0.0)),
                                     config.seed)
            values.update(found or {})
            item["values"] = values
        items.append(item)
    record = dict(record)
    record["artifact"] = dict(artifact, interventions=items)
    return record, "changed"


def _wants(record: dict) -> bool:
    return bool(record.get("artifact") and spike_items(record["artifact"]))


def main(argv: list[str] | None = None) -> int:
    from refresh_pool import run_refresh

    return run_refresh(argv, description=__doc__.splitlines()[0],
                       module="corpus_spike_refresh", wants=_wants,
                       what="cases with spike refits")


if __name__ == "__main__":
    raise SystemExit(main())
