"""weak_segment with the ladder's out-of-fold errors on the training rows as a second,
independent test of a category the model serves worse on test (stop 47)."""

from __future__ import annotations

import math

from deepfix_agents.rules._training_segments import (
    combined_z,
    comparable_rate,
    training_segments,
    training_z,
)
from deepfix_agents.rules.weak_segment import scan_z
from deepfix_agents.rules.weak_segment import tested_segments as scan_on_test

from mlflow_deepfix.schemas import BaselineResult, SegmentScore
from tests.test_rules_model import HEALTHY, HEALTHY_PERF, artifact, assess, col, modified

N_TEST, N_TRAIN = 160, 480


def _test_site(error=0.3, rest=0.1, n=40):
    """site = d on ``n`` of 160 test rows, wrong on ``error`` of them and on ``rest`` of
    the other rows."""
    errors = error * n + rest * (N_TEST - n)
    return SegmentScore(
        feature="site", value="d", share=n / N_TEST, n_rows=n, error=error,
        overall_error=errors / N_TEST, baseline_error=0.4, overall_baseline_error=0.4,
        sibling_n_rows=N_TEST - n, sibling_error=rest, sibling_baseline_error=0.4,
    )


def _train_site(error, rest=0.1, baseline=0.4, sibling_baseline=0.4, n=120):
    """The linear rung's out-of-fold errors on site = d's ``n`` of 480 training rows."""
    return SegmentScore(
        feature="site", value="d", share=n / N_TRAIN, n_rows=n, error=error,
        overall_error=(error * n + rest * (N_TRAIN - n)) / N_TRAIN, baseline_error=baseline,
        overall_baseline_error=0.4, sibling_n_rows=N_TRAIN - n, sibling_error=rest,
        sibling_baseline_error=sibling_baseline,
    )


def _with_sites(test_seg, train_seg=None, rung="linear"):
    features = ["a", "b", "site"]
    cols = [col("a"), col("b"), col("site", kind="categorical", n_unique=4)]
    scanned = {
        "train_segments": [train_seg] if train_seg is not None else [],
        "train_rows": N_TRAIN if train_seg is not None else None,
    }
    baselines = [
        BaselineResult(name="dummy", metric="f1_macro", cv_score=0.37, test_score=0.37),
        BaselineResult(name="linear", metric="f1_macro", cv_score=0.86, test_score=0.86,
                       **(scanned if rung == "linear" else {})),
        BaselineResult(name="tree", metric="f1_macro", cv_score=0.84, test_score=0.85,
                       **(scanned if rung == "tree" else {})),
    ]
    data = artifact(features=features, train_cols=cols, test_cols=cols, n_test=N_TEST,
                    n_train=N_TRAIN, baselines=baselines,
                    performance=modified(HEALTHY_PERF, segments=[test_seg]))
    return data.model_copy(update={"dataset": data.dataset.model_copy(
        update={"cat_features": ["site"]})})


def test_a_site_short_of_the_bar_on_test_is_confirmed_by_its_training_rows():
    """A quarter of a 160-row test split, wrong three times as often as the rest: the
    exact test alone stays under the scan's bar. The linear rung errs on 35% of the site's
    480 training rows out of fold against 10% elsewhere: together the two splits are
    beyond the bar, and the test shortfall is reported (its severity is the test
    drop's: 0.70 accuracy against 0.85, a quarter of the rows, is low)."""
    alone = _with_sites(_test_site())
    min_z, tested = scan_on_test(alone)
    assert min_z == scan_z(3) and tested[0][1] < min_z
    assert assess("weak_segment", alone)[0] == "info"

    confirmed = _with_sites(_test_site(), _train_site(0.35))
    min_z, tested = scan_on_test(confirmed)
    assert tested[0][1] >= min_z
    severity, title, _ = assess("weak_segment", confirmed)
    assert severity == "low"
    assert "site = 'd'" in title


def test_a_harder_site_on_the_training_rows_confirms_nothing():
    """Its labels spread wider (constant-guess error 0.5 against the other sites' 0.2):
    the rung's 24% there is what comparable rows get (0.5 x 0.1/0.2 = 0.25), so the
    training rows add nothing and the test verdict stands."""
    harder = _train_site(0.24, baseline=0.5, sibling_baseline=0.2)
    assert comparable_rate(harder) == 0.25
    assert training_z(harder, N_TRAIN, regression=False) == 0.0
    assert assess("weak_segment", _with_sites(_test_site(), harder))[0] in HEALTHY


def test_training_rows_alone_never_make_a_finding():
    """The rung fails the site on the training rows, but the model serves it no worse
    than the rest on test: there is no shortfall of this model to report."""
    data = _with_sites(_test_site(error=0.1), _train_site(0.6))
    assert scan_on_test(data)[1] == []
    assert assess("weak_segment", data)[0] in HEALTHY


def test_only_the_linear_rung_is_read_and_old_artifacts_are_unchanged():
    data = _with_sites(_test_site(), _train_site(0.35), rung="tree")
    assert training_segments(data) == ({}, 0)
    old = _with_sites(_test_site())
    assert scan_on_test(old)[1][0][1] == scan_on_test(data)[1][0][1]


def test_training_z_by_task():
    """Classification: the exact binomial test against the larger of the other rows'
    rate and the comparable rows'. Regression: the Welch z of the mean absolute errors
    from both sides' measured spreads. Stouffer's sum over sqrt(2) combines them."""
    assert training_z(_train_site(0.35), N_TRAIN, regression=False) > 6
    assert training_z(_train_site(0.1), N_TRAIN, regression=False) == 0.0
    seg = SegmentScore(feature="site", value="d", share=0.25, n_rows=100, error=3.0,
                       overall_error=2.25, baseline_error=3.0, sibling_n_rows=300,
                       sibling_error=2.0, sibling_baseline_error=4.0, error_std=2.0,
                       rest_error_std=1.5)
    # comparable rows: 3.0 x 2/4 = 1.5, below the other rows' 2.0
    assert math.isclose(training_z(seg, 400, regression=True),
                        1.0 / math.sqrt(4 / 100 + 2.25 / 300))
    no_spread = seg.model_copy(update={"error_std": None})
    assert training_z(no_spread, 400, regression=True) == 0.0
    assert math.isclose(combined_z(2.0, 4.0), 6 / math.sqrt(2))


def test_comparable_rate_when_the_other_sites_are_pure():
    """Every other category one class (no sibling rows recorded): the site is compared
    with its own constant guess; a baseline of 0 (one class itself) measures nothing."""
    pure = SegmentScore(feature="eligible", value="1", share=0.4, n_rows=100, error=0.3,
                        overall_error=0.12, baseline_error=0.23)
    assert comparable_rate(pure) == 0.23
    assert comparable_rate(pure.model_copy(update={"baseline_error": 0.0})) is None


def test_the_finding_shows_the_training_rows_evidence():
    _, _, signals = assess("weak_segment", _with_sites(_test_site(), _train_site(0.35)))
    model = next(s for s in signals if s.source == "model")
    assert model.facts["train_rows"] == 120 and model.facts["train_error"] == 0.35
    assert model.facts["train_expected"] == 0.1 and model.facts["train_z"] > 6
    assert "120 training rows predicted out of fold by the linear baseline" in (
        model.evidence.detail
    )


def test_training_rows_short_of_the_bar_on_their_own_add_nothing():
    """A category somewhat worse on both splits (z about 2 on each: a harder group on a
    clean workflow) would combine past the bar; the training rows must clear it alone."""
    mild = _train_site(0.17)
    z_train = training_z(mild, N_TRAIN, regression=False)
    min_z, tested = scan_on_test(_with_sites(_test_site(), mild))
    z_test = scan_on_test(_with_sites(_test_site()))[1][0][1]
    assert z_train < min_z <= combined_z(z_test, z_train)
    assert tested[0][1] == z_test
