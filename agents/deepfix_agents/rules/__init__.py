"""Rule registry: one rule module per contract category.

Third-party rules register through the entry point group ``deepfix.rules`` (a class
subclassing :class:`Rule` whose ``id`` is a contract category not already taken).
Adding a built-in category means one new module here plus its line below.
"""

from __future__ import annotations

from importlib import import_module

from deepfix_agents._registry import Registry
from deepfix_agents.rules._base import Rule, validate_rule

RULES: Registry = Registry("rule", Rule, "deepfix.rules", validate_rule)
register_rule = RULES.register

# Built-in rules, in the order of CONTRACT.md section 5. Each module registers itself.
BUILTIN_RULES = (
    "missing_values",
    "data_type_issues",
    "duplicate_samples",
    "conflicting_labels",
    "target_leakage",
    "identifier_leakage",
    "constant_feature",
    "outliers",
    "class_imbalance",
    "train_test_overlap",
    "label_drift",
    "feature_drift",
    "prediction_drift",
    "unseen_categories",
    "temporal_leakage",
    "split_size_mismatch",
    "schema_mismatch",
    "overfitting",
    "underfitting",
    "degenerate_predictions",
    "poor_calibration",
    "decision_threshold",
    "weak_segment",
    "preprocessing_mismatch",
    "wrong_task_type",
    "unused_features",
    # added since the contract (version 0.2.0)
    "spurious_correlation",
    "fragile_predictions",
    "overconfident_slice",
    "group_disparity",
    "training_divergence",
    "training_stalled",
)

for _module in BUILTIN_RULES:
    import_module(f"{__name__}.{_module}")

__all__ = ["RULES", "Rule", "register_rule"]
