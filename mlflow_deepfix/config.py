"""``evaluator_config["deepfix"]``, parsed once into :class:`DeepfixConfig`.

Validation happens here, before any work starts (CONTRACT.md section 2): unknown keys
and wrong types are refused with a message in the scikit-learn style, naming the key,
the value received and what is accepted.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from deepfix_agents.llm._config import LLMConfig, validate_llm_options
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    field_validator,
)

from mlflow_deepfix.errors import DeepfixConfigError

__all__ = [
    "FAIL_ON",
    "MODALITIES",
    "SUITES",
    "DeepfixConfig",
    "KBConfig",
    "LLMConfig",
    "parse_config",
]

SUITES = ("data_integrity", "train_test_validation", "model_evaluation")
FAIL_ON = ("critical", "high", "medium", "low")
MODALITIES = ("tabular", "text", "image")
PRIVACY = ("default", "strict")


def is_spark_frame(value: Any) -> bool:
    """A Spark DataFrame (classic or Spark Connect), recognised by its type's module so
    that pyspark stays optional: nothing here imports it."""
    module = type(value).__module__ or ""
    return module.startswith("pyspark.sql") and all(
        hasattr(value, name) for name in ("schema", "columns", "sparkSession")
    )


def spark_frame_of(value: Any) -> Any:
    """The Spark DataFrame behind ``value`` (itself, or an ``mlflow.data.SparkDataset``'s
    ``.df``), else None."""
    if is_spark_frame(value):
        return value
    if isinstance(value, pd.DataFrame):
        return None
    frame = getattr(value, "df", None)
    return frame if is_spark_frame(frame) else None


class KBConfig(BaseModel):
    """Where the knowledge base lives: an embedded Qdrant ``path`` or a server ``url``."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = None
    url: str | None = None
    collection: str = "deepfix_kb"
    top_k: int = Field(default=3, ge=1, le=20)


class DeepfixConfig(BaseModel):
    """The parsed ``evaluator_config["deepfix"]`` (see CONTRACT.md section 2)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, frozen=True)

    train_data: Any = None
    #: the full evaluation table (Spark DataFrame, SparkDataset or pandas DataFrame), used
    #: instead of MLflow's copy of ``data`` (10,000 rows of a Spark frame, see inputs.spark)
    eval_data: Any = None
    suites: tuple[Literal["data_integrity", "train_test_validation", "model_evaluation"], ...] = SUITES
    modality: Literal["tabular", "text", "image"] | None = None
    text_col: str | None = None
    image_col: str | None = None
    cat_features: tuple[str, ...] | None = None
    index_col: str | None = None
    datetime_col: str | None = None
    sample_size: int | None = Field(default=None, ge=100)
    seed: int = 0
    provider: str = "rules"
    llm: LLMConfig | None = None
    kb: KBConfig | Literal[False] | None = None
    fail_on: Literal["critical", "high", "medium", "low"] = "critical"
    #: reuse the testing step's result for identical inputs (see mlflow_deepfix.cache)
    cache: StrictBool = True
    #: what of the data may be stored (see mlflow_deepfix.privacy and README)
    privacy: Literal["default", "strict"] = "default"
    sensitive_features: tuple[str, ...] | None = None
    #: measure harm with counterfactual refits of a clone of the model (issue 12); off
    #: leaves severities to the patterns alone
    interventions: StrictBool = True
    #: learned calibration of the rules' confidence/severity/order (issue 12 E); false
    #: leaves the rules' own
    calibration: StrictBool = True

    @field_validator("train_data", "eval_data")
    @classmethod
    def _data_is_a_frame(cls, value: Any) -> Any:
        if value is None or isinstance(value, pd.DataFrame):
            return value
        # Spark DataFrame or mlflow.data.SparkDataset: kept as a Spark frame (never
        # collected here; see mlflow_deepfix.inputs.spark)
        spark_frame = spark_frame_of(value)
        if spark_frame is not None:
            return spark_frame
        # mlflow.data datasets (PandasDataset, ...) expose ``.df``
        frame = getattr(value, "df", None)
        if isinstance(frame, pd.DataFrame):
            return frame
        raise ValueError(
            f"must be a pandas DataFrame, a Spark DataFrame or an mlflow.data dataset with a "
            f".df attribute, got {type(value).__name__}"
        )

    @field_validator("suites", mode="before")
    @classmethod
    def _suites_not_empty(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if value is not None and len(value) == 0:
            raise ValueError("must name at least one suite")
        return tuple(dict.fromkeys(value)) if value is not None else value

    @field_validator("cat_features", mode="before")
    @classmethod
    def _cat_features_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("must be a list of column names, not a single string")
        return tuple(value) if value is not None else value

    @field_validator("sensitive_features", mode="before")
    @classmethod
    def _sensitive_features_list(cls, value: Any) -> Any:
        if value is None:
            return value
        if isinstance(value, str):
            raise ValueError("must be a list of column names, not a single string")
        names = tuple(value)
        if not names:
            raise ValueError("must name at least one column (or leave the key out)")
        if not all(isinstance(n, str) and n.strip() for n in names):
            raise ValueError("every entry must be a non-empty column name (str)")
        return tuple(dict.fromkeys(names))

    @field_validator("kb", mode="before")
    @classmethod
    def _kb_true_means_default(cls, value: Any) -> Any:
        if value is True:
            return {}
        return value

    @field_validator("provider")
    @classmethod
    def _provider_known(cls, value: str) -> str:
        from deepfix_agents.providers import available_providers

        value = value.strip()
        accepted = available_providers()
        if value not in accepted:
            raise ValueError(f"unknown provider; accepted: {accepted}")
        return value

    @property
    def kb_enabled(self) -> bool:
        return self.kb is not False


#: keys of CONTRACT.md section 2 that this version refuses with a specific message
#: (instead of "unknown key") until they are implemented (none left: eval_data landed
#: with Spark input, issue 13 A)
NOT_YET_SUPPORTED: dict[str, str] = {}

_ACCEPTED = {
    "train_data": "a pandas or Spark DataFrame, or an mlflow.data dataset (SparkDataset, ...)",
    "eval_data": "a Spark DataFrame, an mlflow.data SparkDataset or a pandas DataFrame",
    "suites": f"a list drawn from {list(SUITES)}",
    "modality": f"one of {list(MODALITIES)}",
    "text_col": "a column name (str)",
    "image_col": "a column name (str)",
    "cat_features": "a list of column names",
    "index_col": "a column name (str)",
    "datetime_col": "a column name (str)",
    "sample_size": "an integer >= 100",
    "seed": "an integer",
    "provider": "'rules' or the name of a registered LLM provider",
    "llm": f"a dict with keys {sorted(LLMConfig.model_fields)}",
    "kb": f"false, or a dict with keys {sorted(KBConfig.model_fields)}",
    "fail_on": f"one of {list(FAIL_ON)}",
    "cache": "true or false",
    "privacy": f"one of {list(PRIVACY)}",
    "sensitive_features": "a non-empty list of column names of data",
    "interventions": "true or false",
    "calibration": "true or false",
}


def _explain(error: ValidationError) -> str:
    lines = []
    for item in error.errors():
        loc = [str(p) for p in item["loc"]]
        key = loc[0] if loc else "?"
        where = "evaluator_config['deepfix']" + "".join(f"[{p!r}]" for p in loc[:1])
        sub = ".".join(loc[1:])
        if item["type"] == "extra_forbidden":
            if sub:
                lines.append(
                    f"{where}: unknown key {loc[-1]!r}; accepted: {_ACCEPTED.get(key, '')}"
                )
            else:
                lines.append(
                    f"evaluator_config['deepfix']: unknown key {key!r}. "
                    f"Accepted keys: {', '.join(DeepfixConfig.model_fields)}"
                )
            continue
        received = item.get("input")
        shown = (
            type(received).__name__
            if isinstance(received, pd.DataFrame) or _is_table(received)
            else repr(received)
        )
        if len(shown) > 80:
            shown = shown[:77] + "..."
        detail = f"{where}{'.' + sub if sub else ''} must be {_ACCEPTED.get(key, 'valid')}"
        lines.append(f"{detail}; got {shown} ({item['msg']}).")
    return "Invalid deepfix configuration:\n  - " + "\n  - ".join(lines)


def _is_table(value: Any) -> bool:
    """A data frame-like value, shown by its type name in errors (never its rows)."""
    module = type(value).__module__ or ""
    return module.startswith(("pyspark", "mlflow.data", "numpy", "pandas"))


def parse_config(raw: dict[str, Any] | None) -> DeepfixConfig:
    """Parse ``evaluator_config["deepfix"]`` (or the whole evaluator_config) once.

    MLflow hands each evaluator its own sub-dict when ``evaluator_config`` is keyed by
    evaluator name; when a single flat dict is given for several evaluators MLflow passes
    it whole, so a nested ``{"deepfix": {...}}`` is unwrapped here too.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise DeepfixConfigError(
            f"evaluator_config['deepfix'] must be a dict, got {type(raw).__name__}. "
            "Example: evaluator_config={'deepfix': {'train_data': train_df}}"
        )
    if set(raw) == {"deepfix"} and isinstance(raw["deepfix"], dict):
        raw = raw["deepfix"]
    for key in set(raw) & set(NOT_YET_SUPPORTED):
        raise DeepfixConfigError(NOT_YET_SUPPORTED[key])
    try:
        config = DeepfixConfig(**raw)
    except ValidationError as error:
        raise DeepfixConfigError(_explain(error)) from None
    if config.provider != "rules":
        validate_llm_options(config.provider, config.llm)
    return config
