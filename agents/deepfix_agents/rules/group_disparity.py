"""group_disparity: the model serves the groups of a sensitive feature unequally.

Only the columns the user names in ``sensitive_features`` are examined; without the key
nothing about groups of people is measured or reported. Evidence is the testing step's
group table (``artifact.fairness``): the equalized odds difference (largest gap in true
or false positive rate between groups), the accuracy gap and the demographic parity
difference (selection-rate gap), each scored by the *lower end* of its 95% interval so
a small group's noise is not read as a disparity; a gap whose interval excludes 0 is
sized by its point estimate up to medium. A selection-rate gap no larger than
the gap in actual positives mirrors the labels and is not counted on its own.
Multiclass models are read one class against the rest; regressors by the gap in mean
absolute error (relative to the overall MAE) and in mean residual (in target standard
deviations), with intervals widened for the number of groups compared.
"""

from __future__ import annotations

from deepfix_agents.rules import register_rule
from deepfix_agents.rules._base import Rule, interp, pct

#: lower end of the interval of the equalized odds / accuracy gap -> score
GAP_SCORE = ((0.0, 0.0), (0.05, 0.3), (0.1, 0.45), (0.2, 0.65), (0.35, 0.82))
#: selection-rate gap beyond the base-rate gap (lower end) -> score
PARITY_SCORE = ((0.0, 0.0), (0.1, 0.3), (0.2, 0.45), (0.3, 0.6))
#: regression: lower end of the MAE gap as a share of the overall MAE -> score (the
#: worst group's errors are that much larger than the best group's)
MAE_GAP_SCORE = ((0.0, 0.0), (0.15, 0.3), (0.3, 0.45), (0.6, 0.65), (1.0, 0.82))
#: regression: lower end of the mean-residual gap in target standard deviations -> score
#: (one group systematically under- or over-predicted relative to another)
BIAS_GAP_SCORE = ((0.0, 0.0), (0.1, 0.3), (0.2, 0.45), (0.4, 0.65), (0.7, 0.82))
#: a gap whose 95% interval excludes 0 and whose point estimate reaches the first band
#: of its table (0.05 in a rate, 15% of the MAE, 0.1 target SD) is a measured disparity:
#: at least ``low``, however close to 0 the interval's lower end. Scoring by the lower end
#: alone dropped a significant 8-point accuracy gap as info (its lower end 0.001)
SIGNIFICANT_FLOOR = 0.2
#: a measured gap (as above) is scored by its point estimate up to this score, the
#: tables' second anchor (0.45, medium): once the interval has ruled out chance, the
#: estimate is the best guess of the gap's size, and a gap the table calls medium is
#: worth looking at. Only the lower end can make it high or critical (urgent): the
#: estimate of a just-significant gap is the noisiest part of the measurement
SIGNIFICANT_CAP = 0.45


@register_rule
class GroupDisparity(Rule):
    id = "group_disparity"
    name = "The model treats groups of people unequally"
    detects = (
        "Gaps between the groups of a column named in `sensitive_features` (sex, age band, "
        "region...): in true or false positive rates (equalized odds difference), accuracy, "
        "or selection rate beyond what the labels themselves differ by (demographic parity "
        "difference), each with a 95% interval."
    )
    why = (
        "A model that misses more of one group's positives, or flags more of its negatives, "
        "hands that group worse decisions; it can be unlawful (credit, hiring, housing) and "
        "erodes trust. Averages hide it, and removing the sensitive column does not remove "
        "proxies of it."
    )
    example = (
        "A loan model approves 31% of applicants over 60 and 52% of the others although "
        "both groups repay equally often: its true positive rate differs by 0.24 (95% "
        "interval 0.15-0.33)."
    )
    fixes = (
        "Find where the gap comes from: per-group error analysis, representation of each "
        "group in training, features that act as proxies (postcode, first name), labels that "
        "encode past decisions.",
        "Mitigate and measure again: reweight or resample the under-served group, train "
        "with a fairness constraint (`fairlearn.reductions.ExponentiatedGradient` with "
        "`EqualizedOdds`), or post-process thresholds per group "
        "(`fairlearn.postprocessing.ThresholdOptimizer`), after checking what the law "
        "allows for your use case.",
        "Report the per-group rates with their intervals next to the overall score, and "
        "gate releases on the equalized odds difference.",
    )
    severity_policy = (
        "Per sensitive feature, groups with >= 30 rows: lower end of the 95% interval "
        "(Newcombe) of the equalized odds difference or of the accuracy gap: 0 -> 0, 0.05 -> "
        "0.3, 0.1 -> 0.45, 0.2 -> 0.65, 0.35 -> 0.82; demographic parity difference counted "
        "beyond the base-rate difference: 0.1 -> 0.3, 0.2 -> 0.45, 0.3 -> 0.6. Multiclass: "
        "the same, one class against the rest (largest class gap), intervals widened "
        "(Bonferroni) for the groups and classes compared. Regression: lower end of the "
        "MAE gap as a share of the overall MAE: 0.15 -> 0.3, 0.3 -> 0.45, 0.6 -> 0.65, "
        "1.0 -> 0.82; of the mean-residual gap in target standard deviations: 0.1 -> 0.3, "
        "0.2 -> 0.45, 0.4 -> 0.65, 0.7 -> 0.82. A gap whose interval excludes 0 and whose "
        "point estimate reaches the first band (0.05, 15% of the MAE, 0.1 SD) is at least "
        "low (0.2), and at least what its point estimate scores up to medium (0.45): "
        "high and critical need the lower end. The worst feature and metric count. Nothing without "
        "`sensitive_features`."
    )

    def detect_model(self, artifact):
        summary = artifact.fairness
        if summary is None:
            return
        for item in summary.features:
            candidates = []
            if item.equalized_odds_low is not None:
                candidates.append(
                    (_scored(item.equalized_odds_difference, item.equalized_odds_low,
                             GAP_SCORE), "equalized odds difference",
                     item.equalized_odds_difference, item.equalized_odds_low)
                )
            if item.accuracy_difference_low is not None:
                candidates.append(
                    (_scored(item.accuracy_difference, item.accuracy_difference_low,
                             GAP_SCORE), "accuracy gap",
                     item.accuracy_difference, item.accuracy_difference_low)
                )
            if item.demographic_parity_low is not None:
                beyond = item.demographic_parity_low - abs(item.base_rate_difference or 0.0)
                candidates.append(
                    (interp(beyond, PARITY_SCORE), "demographic parity difference",
                     item.demographic_parity_difference, item.demographic_parity_low)
                )
            candidates.extend(_regression_candidates(item))
            if not candidates:
                continue
            score, metric, gap, low = max(candidates, key=lambda c: (c[0], c[1]))
            if score <= 0:
                continue
            groups = {g.group: g for g in item.groups}
            worst, best = groups.get(item.worst_group), groups.get(item.best_group)
            rates = ", ".join(_group_text(g) for g in (worst, best) if g is not None)
            if item.worst_class is not None and metric != "accuracy gap":
                metric = f"{metric} (class {item.worst_class!r} against the rest)"
            yield self.signal(
                "model",
                score=score,
                confidence=0.8 if min(g.n_rows for g in item.groups) >= 100 else 0.65,
                detail=(
                    f"{item.feature!r}: {metric} {gap:.3f} (95% interval from {low:.3f}); "
                    f"{rates}" + ("" if item.model_sees_it else "; the model does not read "
                                  "this column (a proxy carries it)")
                ),
                value=gap,
                feature=item.feature,
                metric=metric,
                gap=gap,
                low=low,
                worst=item.worst_group,
                best=item.best_group,
                sees=item.model_sees_it,
            )

    def title(self, signals, artifact):
        feature, metric, gap = (self.fact(signals, k) for k in ("feature", "metric", "gap"))
        if feature is None:
            return self.name
        worst, best = self.fact(signals, "worst"), self.fact(signals, "best")
        between = f" (worst: {worst}, best: {best})" if worst and best else ""
        return f"Across {feature!r} groups the model's {metric} is {gap:.2f}{between}"

    def explanation(self, signals, artifact):
        feature = self.fact(signals, "feature")
        sees = self.fact(signals, "sees")
        proxy = (
            "" if sees else
            " The model does not read this column itself, so other features act as proxies "
            "for it; dropping the column would not help."
        )
        return (
            f"The model's errors are not spread evenly over the groups of {feature!r}: one "
            "group gets its positives missed or its negatives flagged noticeably more often, "
            "beyond what the groups' sizes can explain by chance (the gap's 95% interval "
            f"excludes 0).{proxy} Check the groups' representation and labels "
            "in training before choosing a mitigation."
        )


def _scored(gap, low, table) -> float:
    """Score of a gap from its interval's lower end (``table``); when the interval
    excludes 0 and the point estimate reaches the table's first band (a measured gap),
    at least ``SIGNIFICANT_FLOOR`` and at least the point estimate's score up to
    ``SIGNIFICANT_CAP``.

    The lower end answers whether a gap this large could be chance; once it excludes 0
    the gap is real, and scoring its size by the lower end as well counts the group's
    size twice: a 33% larger error for one group of 130 rows (interval 16%-50%) read
    as a 16% gap, low, below background findings that every clean run of the same
    model has. High and critical still need the lower end."""
    score = interp(low, table)
    if gap is not None and low > 0 and gap >= table[1][0]:
        score = max(score, SIGNIFICANT_FLOOR, min(interp(gap, table), SIGNIFICANT_CAP))
    return score


def _regression_candidates(item):
    """(score, metric, gap, lower end) of a regressor's MAE and mean-residual gaps."""
    out = []
    if item.mae_difference_low is not None and item.mae_overall:
        scale = item.mae_overall
        out.append((_scored((item.mae_difference or 0.0) / scale,
                            item.mae_difference_low / scale, MAE_GAP_SCORE),
                    "mean absolute error gap", item.mae_difference, item.mae_difference_low))
    if item.bias_difference_low is not None and item.target_std:
        scale = item.target_std
        out.append((_scored((item.bias_difference or 0.0) / scale,
                            item.bias_difference_low / scale, BIAS_GAP_SCORE),
                    "mean residual gap", item.bias_difference, item.bias_difference_low))
    return out


def _group_text(g) -> str:
    """One group's rates in words (classifier or regressor)."""
    parts = [f"{g.group}: n={g.n_rows}"]
    if g.accuracy is not None:
        parts.append(f"accuracy {g.accuracy:.2f}")
    if g.macro_recall is not None:
        parts.append(f"macro recall {g.macro_recall:.2f}")
    if g.tpr is not None:
        parts.append(f"TPR {g.tpr:.2f}")
    if g.fpr is not None:
        parts.append(f"FPR {g.fpr:.2f}")
    if g.mae is not None:
        parts.append(f"MAE {g.mae:.3g}")
        if g.mean_residual is not None:
            parts.append(f"mean residual {g.mean_residual:+.3g}")
    elif g.selection_rate is not None:
        parts.append(f"selected {pct(g.selection_rate)}")
    return ", ".join(parts)
