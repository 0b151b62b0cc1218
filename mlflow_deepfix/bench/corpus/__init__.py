"""A procedural fault-injection corpus for measuring the diagnosis on data it was
never tuned on (issue 12, part D).

Bugs of every contract category are planted, at magnitudes from subtle to blatant,
into real datasets shipped with scikit-learn and statsmodels, under eight model
families; two-bug combinations and clean controls on every dataset x model pair
complete it. Cases are seeded and deterministic, ids read
``<category>.<dataset>.<model>.<magnitude>.s<seed>``.

Running it is split in two: stage 1 (the real testing step, cached per case under a
fingerprint of the testing code) and stage 2 (the rules diagnosis on the cached
artifacts, seconds). Scores are reported on leave-one-dataset-out folds.

    >>> from mlflow_deepfix.bench.corpus import generate_cases, run_corpus_bench
    >>> report = run_corpus_bench(generate_cases()[:5])   # doctest: +SKIP
"""

from __future__ import annotations

from mlflow_deepfix.bench.corpus.cases import (
    CORPUS_VERSION,
    CaseSpec,
    build_case,
    generate_cases,
)
from mlflow_deepfix.bench.corpus.datasets import DATASETS, load_dataset
from mlflow_deepfix.bench.corpus.injectors import INJECTORS
from mlflow_deepfix.bench.corpus.models import MODEL_FAMILIES
from mlflow_deepfix.bench.corpus.report import (
    CorpusReport,
    failure_markdown,
    format_report,
    run_corpus_bench,
    select_cases,
)
from mlflow_deepfix.bench.corpus.runner import (
    cache_dir,
    run_stage1,
    run_stage2,
    testing_fingerprint,
)
from mlflow_deepfix.bench.corpus.scoring import Scores, score

__all__ = [
    "CORPUS_VERSION",
    "DATASETS",
    "INJECTORS",
    "MODEL_FAMILIES",
    "CaseSpec",
    "CorpusReport",
    "Scores",
    "build_case",
    "cache_dir",
    "failure_markdown",
    "format_report",
    "generate_cases",
    "load_dataset",
    "run_corpus_bench",
    "run_stage1",
    "run_stage2",
    "score",
    "select_cases",
    "testing_fingerprint",
]
