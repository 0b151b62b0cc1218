"""Natural heavy tails vs unit errors (round 23): the statistics measure how far the
values beyond the 5-IQR fences sit apart from the rest on the log scale
(``ColumnStats.outlier_gap``), and the outliers rule lowers its confidence in a tail that
continues the bulk *and* that both harm measurements show harmless. Nothing is raised.

The frames are seeded and measured by the real statistics; the rule is read on hand-built
artifacts with the real reasoner."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from deepfix_agents.rules import RULES

from mlflow_deepfix.privacy import Scrubber, protect_artifact
from mlflow_deepfix.schemas import Intervention, ModelInfo
from mlflow_deepfix.testing.stats import infer_cat_features, split_stats
from tests.test_interventions import chance, findings_of, with_interventions
from tests.test_rules_data_split import artifact, num

N = 900


def _stats(**columns: np.ndarray):
    frame = pd.DataFrame(columns)
    frame["label"] = np.random.default_rng(0).integers(0, 2, size=len(frame))
    features = [c for c in frame.columns if c != "label"]
    return split_stats(
        frame, name="train", label="label", feature_names=features,
        task="binary_classification", cat_features=infer_cat_features(frame, features),
    )


def _population(rng) -> np.ndarray:
    """Town sizes: a quarter of the rows at 0, the rest log-normal over three decades
    (a natural, continuous heavy tail with a point mass at 0)."""
    values = np.exp(rng.normal(3.0, 1.6, size=N)).round()
    values[rng.random(N) < 0.25] = 0.0
    return values


def _typed_x1000(rng, share: float, negative: bool = False) -> np.ndarray:
    """A compact measurement (1-7) typed x1000 on ``share`` of the rows (the corpus's unit
    error), on the negative side when ``negative``."""
    values = rng.uniform(1.0, 7.0, size=N) * (-1.0 if negative else 1.0)
    hit = rng.choice(N, int(share * N), replace=False)
    values[hit] *= 1000.0
    return values


def test_gap_tells_a_continuous_tail_from_a_separate_cluster():
    rng = np.random.default_rng(23)
    sentinel = rng.normal(26.0, 4.0, size=N)
    sentinel[:27] = 9999.0  # a device code on 3% of the rows
    mixed = rng.lognormal(1.0, 0.3, size=N)
    mixed[:18] = np.exp(rng.normal(1.0, 0.3, size=18)) * 1000.0  # 2% x1000
    stats = _stats(
        population=_population(rng),
        typed=_typed_x1000(rng, 0.05),
        typed_negative=_typed_x1000(rng, 0.03, negative=True),
        sentinel=sentinel,
        mixed=mixed,
        plain=rng.normal(size=N),
    )
    tail = stats.column("population")
    assert tail.outlier_fraction > 0.03  # flagged like a unit error would be ...
    assert tail.outlier_gap is not None and tail.outlier_gap < 0.5  # ... but continuous
    for name in ("typed", "typed_negative", "sentinel", "mixed"):
        column = stats.column(name)
        assert column.outlier_fraction > 0.01, name
        assert column.outlier_gap >= 1.5, name  # a factor ~10^k with nothing in between
    # nothing beyond the fences: nothing to measure
    assert stats.column("plain").outlier_fraction == 0.0
    assert stats.column("plain").outlier_gap is None


def test_gap_needs_a_group_not_one_extreme_row():
    rng = np.random.default_rng(5)
    values = rng.normal(10.0, 1.0, size=N)
    values[:12] = rng.uniform(20.0, 30.0, size=12)  # flagged, continuous-ish
    values[12] = 1e6  # one row far beyond: no group of its own
    gap = _stats(x=values).column("x").outlier_gap
    assert gap is not None and gap < 1.0


def test_strict_privacy_drops_the_gap_and_default_keeps_it():
    data = artifact([num("a", outlier_fraction=0.05, outlier_gap=2.31234)])
    def gap(level):
        return protect_artifact(data, Scrubber([]), level).dataset.train.column("a").outlier_gap

    assert gap("default") == pytest.approx(2.31)
    assert gap("strict") is None


# --------------------------------------------------------------------------- the rule


def _artifact(gap):
    """A heavy-tailed count column: 9% of rows beyond 5 IQRs, a point mass at 0 makes it
    look extreme (max 365x the lower half's spread), and ``gap`` decades of empty log
    scale separate the flagged values from the rest."""
    tail = num("towns", q01=0.0, q50=20.0, q99=7300.0, min=0.0, max=7300.0,
               outlier_fraction=0.09, outlier_gap=gap)
    test = num("towns", 300, q01=0.0, q50=31.0, q99=7300.0, min=0.0, max=7300.0,
               outlier_fraction=0.056, outlier_gap=gap)
    return artifact([tail, num("x1"), num("x2")], [test, num("x1", 300), num("x2", 300)],
                    model=ModelInfo(scale_sensitive=True))


def _imputed(before, after):
    """The refit with the flagged values imputed: test F1 ``before`` -> ``after``."""
    return Intervention(kind="impute_outliers", category="outliers", target="towns",
                        metric="f1_macro", score_before=before, score_after=after, noise=0.01,
                        n_rows=300, model_used="clone")


def _affected_rows(rest, flagged, noise, n_rows):
    """Test error on the rows beyond the fences (``flagged``) vs the rest."""
    return Intervention(kind="affected_rows", category="outliers", target="towns",
                        metric="error_rate", score_before=rest, score_after=flagged,
                        noise=noise, n_rows=n_rows)


def _harmless():
    return chance(0.83, 0.5), _imputed(0.83, 0.832), _affected_rows(0.17, 0.16, 0.07, 31)


def _harmful():
    """A refit gain of a third of the skill, and the 31 test rows holding the values
    predicted worse than the rest (the testing step compares them whenever 10 or more
    test rows hold such values: a refit alone means fewer, see round 39 below)."""
    return chance(0.80, 0.5), _imputed(0.70, 0.80), _affected_rows(0.17, 0.40, 0.07, 31)


def _finding(gap, measured):
    data = with_interventions(_artifact(gap), *measured)
    return next(f for f in findings_of(data) if f.category == "outliers")


def _dataset_signals(gap, measured):
    data = with_interventions(_artifact(gap), *measured)
    return list(RULES.get("outliers")().detect("dataset", data))


def test_a_harmless_continuous_tail_loses_the_confidence_of_its_extremeness():
    natural = _finding(0.32, _harmless())
    separated = _finding(2.3, _harmless())
    unknown = _finding(None, _harmless())  # older artifacts, Spark
    # same severity (capped at low: harmless either way), lower confidence
    assert natural.severity == separated.severity == unknown.severity == "low"
    assert natural.confidence < separated.confidence - 0.2
    # round 47: a separated cluster is surer to be an error than an unknown gap
    assert separated.confidence > unknown.confidence
    signals = _dataset_signals(0.32, _harmless())
    assert signals and all(s.facts["natural_tail"] and s.confidence <= 0.4 for s in signals)
    assert "natural heavy tail" in signals[0].evidence.detail
    assert not any(s.facts["natural_tail"]
                   for s in _dataset_signals(2.3, _harmless()))


def test_measured_harm_keeps_the_finding_whatever_the_tail_looks_like():
    harmed = _finding(0.32, _harmful())
    reference = _finding(2.3, _harmful())
    assert harmed.severity == reference.severity and harmed.severity in ("high", "critical")
    # the separated cluster only adds certainty that the values are errors (round 47)
    assert harmed.confidence <= reference.confidence
    assert not any(s.facts["natural_tail"]
                   for s in _dataset_signals(0.32, _harmful()))


def test_unmeasured_tail_keeps_its_estimate():
    # no harm measured at all (no refit possible): a continuous tail is not judged natural
    # on its shape alone, and the shape never raises the severity either (a separated
    # cluster raises only the confidence that the values are errors, round 47)
    natural = _finding(0.32, ())
    separated = _finding(2.3, ())
    assert natural.severity == separated.severity
    assert natural.confidence < separated.confidence


# --- round 31: outl31 ---


def _worse_rows():
    """Test rows beyond the fences predicted worse than the rest (0.81 vs 0.37 error, 4.9
    noise units), a refit with them imputed that gains nothing, a model at chance: what
    a collapsed model shows on a natural tail whose rows mostly hold the other class."""
    return chance(0.378, 0.378), _imputed(0.378, 0.378), _affected_rows(0.366, 0.81, 0.09, 21)


def test_outl31_worse_rows_of_a_natural_tail_are_no_harm_of_the_values():
    # rows picked by a genuine (continuous) tail differ from the rest in their labels, so
    # their excess error compares cases; only the refit could show the values' harm
    natural = _finding(0.32, _worse_rows())
    assert natural.severity == "low"
    assert any("compares cases" in e.detail for e in natural.evidence)
    # the same rows behind a separate cluster (a unit error or a code hits rows at random)
    # stay harm of the values
    separated = _finding(2.3, _worse_rows())
    assert separated.severity in ("medium", "high", "critical")
    # a gap that was not measured is not a natural tail: the rows still count
    assert _finding(None, _worse_rows()).severity == separated.severity
    # and a refit gain on a continuous tail is still harm
    assert _finding(0.32, _harmful()).severity in ("high", "critical")


# --- round 35b: ot35b ---


def _gain_rows_fine():
    """A refit with the flagged values imputed gains 2.5 noise units (F1 0.70 -> 0.725,
    a ninth of the skill over chance: medium when sized) while the 31 test rows holding
    the values are predicted as well as the rest (error 0.16 vs 0.17, noise 0.07)."""
    return (chance(0.70, 0.5), _imputed(0.70, 0.725),
            _affected_rows(0.17, 0.16, 0.07, 31))


def test_ot35b_refit_gain_on_a_natural_tail_whose_rows_are_fine_is_no_harm():
    # a continuous tail (a genuine heavy-rain column) whose rows the model predicts as
    # well as the rest: the few-noise-unit gain from imputing genuine values is no error
    # in them; capped at low and measured harmless (natural-tail confidence)
    natural = _finding(0.32, _gain_rows_fine())
    assert natural.severity == "low"
    assert any("no error in the values" in e.detail for e in natural.evidence)
    assert all(s.facts["natural_tail"] for s in _dataset_signals(0.32, _gain_rows_fine()))
    # a separate cluster (x1000 unit error, code) keeps its sized gain
    assert _finding(2.3, _gain_rows_fine()).severity in ("medium", "high", "critical")
    # an unmeasured gap is not judged natural
    assert _finding(None, _gain_rows_fine()).severity in ("medium", "high", "critical")
    # rows predicted worse (beyond noise): the gain stays sized
    worse = (chance(0.70, 0.5), _imputed(0.70, 0.725), _affected_rows(0.17, 0.40, 0.07, 31))
    assert _finding(0.32, worse).severity in ("medium", "high", "critical")
    # (a refit without the comparison: the testing step found fewer than 10 such test
    # rows, whatever the statistics' own fences estimate; see round 39 below)


# --- round 38: cl38 ---


def _few_test_rows(gap, share):
    """The heavy-tailed column again, with ``share`` of the 300 test rows beyond the
    fences (under 10 rows at 2%: too few for the testing step to compare them)."""
    data = _artifact(gap)
    test = data.dataset.test
    columns = [c.model_copy(update={"outlier_fraction": share}) if c.name == "towns" else c
               for c in test.columns]
    dataset = data.dataset.model_copy(update={"test": test.model_copy(update={"columns": columns})})
    return data.model_copy(update={"dataset": dataset})


def test_cl38_refit_gain_on_a_natural_tail_too_rare_on_test_to_compare_is_no_harm():
    # a continuous tail held by 6 of 300 test rows: no comparison of those rows could be
    # made, and the refit's gain (2.5 noise units) from imputing genuine values shows no
    # error in them: low, with the reason in words
    gain = (chance(0.70, 0.5), _imputed(0.70, 0.725))
    natural = next(f for f in findings_of(with_interventions(_few_test_rows(0.32, 0.02), *gain))
                   if f.category == "outliers")
    assert natural.severity == "low"
    assert any("too few on test" in e.detail for e in natural.evidence)
    # a separate cluster (a unit error) on as few rows keeps its sized gain
    separated = next(f for f in findings_of(with_interventions(_few_test_rows(2.3, 0.02), *gain))
                     if f.category == "outliers")
    assert separated.severity in ("medium", "high", "critical")


# --- round 39: dq39 ---


def _lone_and_uncompared(lone_max: float):
    """star98-like: the heavy-tailed column continues the bulk on both splits, a second
    column holds one test value past the fences (its gap unknown: no group of two), the
    statistics estimate 17 test rows beyond their own fences, and the testing step
    refitted (2.5 noise units gained) without comparing the rows (it found fewer than 10
    by the training fences)."""
    data = _artifact(0.32)
    lone = num("x1", 300, outlier_fraction=1 / 300, outlier_gap=None, max=lone_max)
    test = data.dataset.test
    columns = [lone if c.name == "x1" else c for c in test.columns]
    dataset = data.dataset.model_copy(update={"test": test.model_copy(update={"columns": columns})})
    clip = _imputed(0.70, 0.725).model_copy(update={"target": "towns,x1"})
    return with_interventions(data.model_copy(update={"dataset": dataset}), chance(0.70, 0.5), clip)


def test_dq39_a_lone_value_is_no_cluster_and_a_skipped_comparison_means_too_few_rows():
    # one value past the fences cannot be a separated group; within natural extremeness
    # it is the tail's end, and a refit without a comparison of the rows is the testing
    # step saying too few rows hold the values: the gain shows no error in them
    found = next(f for f in findings_of(_lone_and_uncompared(4.0)) if f.category == "outliers")
    assert found.severity == "low"
    assert any("too few on test" in e.detail for e in found.evidence)
    # a lone value as extreme as a unit error or a code (hundreds of the lower spread)
    # is not judged natural: the gain stays sized
    extreme = next(f for f in findings_of(_lone_and_uncompared(5000.0)) if f.category == "outliers")
    assert extreme.severity in ("medium", "high", "critical")


def test_dq39_a_natural_tail_whose_strongest_column_is_a_lone_value_says_so():
    """When the column that sets a split's signal is the lone value itself (its gap
    unknown: no group of two), the natural-tail evidence names it as a single value past
    the fences instead of formatting the missing gap (which raised and dropped the
    finding's dataset signal on two corpus cases when round 39's rules were merged)."""
    # both harm measurements taken and harmless (rows predicted as well as the rest, no
    # refit gain): the cap that lets the tail be judged natural on the signals
    harmless = (chance(0.70, 0.5), _imputed(0.70, 0.70).model_copy(update={"target": "towns,x1"}),
                _affected_rows(0.17, 0.17, 0.07, 31))
    data = with_interventions(_lone_and_uncompared(4.0), *harmless)
    # a small test split (60 rows): its one value past the fences is 1.7 % of the rows,
    # enough to flag the column, and no other test column is flagged
    small = [num("towns", 60), num("x1", 60, outlier_fraction=1 / 60, outlier_gap=None, max=4.0),
             num("x2", 60)]
    test = data.dataset.test.model_copy(update={"columns": small, "n_rows": 60})
    dataset = data.dataset.model_copy(update={"test": test})
    found = next(f for f in findings_of(data.model_copy(update={"dataset": dataset}))
                 if f.category == "outliers")
    assert any("a single value past the fences" in e.detail for e in found.evidence)
    assert found.severity == "low"


# --- round 47: ol47 ---


def test_ol47_a_separated_cluster_is_certain_to_be_an_error_even_when_harmless():
    """A group of values an empty decade beyond the rest (a unit slip: x1000) is a value
    no real row holds: the statistics are then all but certain the values are errors,
    whether or not they harm this model. The confidence says so (0.95, above the 0.9 of
    values merely hundreds of times out), so the harmless finding outranks other low
    findings that are only likely; its score, which is the harm, stays capped at low."""
    from deepfix_agents.rules.outliers import SEPARATED_CONFIDENCE

    separated = _dataset_signals(2.3, _harmless())
    unknown = _dataset_signals(None, _harmless())
    natural = _dataset_signals(0.32, _harmless())
    assert separated and all(s.confidence == SEPARATED_CONFIDENCE for s in separated)
    assert all(s.confidence == 0.9 for s in unknown)  # extremeness 365: likely, not certain
    assert all(s.confidence <= 0.4 for s in natural)  # a natural tail stays quiet
    assert [s.score for s in separated] == [s.score for s in unknown]
    finding = _finding(2.3, _harmless())
    assert finding.severity == "low" and finding.confidence >= SEPARATED_CONFIDENCE
