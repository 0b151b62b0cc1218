"""Tests of the HTML report (``deepfix/report.html``).

The report is shown inside the MLflow UI and prints names taken from user data, so the
tests focus on what must never break: every string is escaped, nothing is fetched from
the network, findings keep their rank order and content, notes are never lost, the page
stays small, and it is produced from the template file.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from markupsafe import escape

from mlflow_deepfix.report import TEMPLATE_PATH, render_report
from mlflow_deepfix.report._format import fmt_number, fmt_percent, fmt_seconds, fmt_value
from mlflow_deepfix.schemas import (
    ArtifactData,
    BaselineResult,
    CheckOutcome,
    CheckSummary,
    ColumnStats,
    ConditionResult,
    DatasetSummary,
    Diagnosis,
    Evidence,
    Finding,
    ModelInfo,
    PerformanceSummary,
    Reference,
    RuntimeFailure,
    SplitComparison,
    SplitStats,
    Timings,
)

XSS_COLUMN = "<script>alert(1)</script>"
XSS_CHECK = "<img src=x onerror=alert(2)>"
XSS_TITLE = 'Column "<b>bold</b>" & friends leak the label'


# --------------------------------------------------------------------------- builders


def _columns() -> list[ColumnStats]:
    return [
        ColumnStats(
            name="age",
            dtype="int64",
            kind="numeric",
            n_unique=60,
            min=18,
            max=90,
            mean=41.5,
            outlier_fraction=0.0,
            target_association=0.1,
        ),
        ColumnStats(
            name=XSS_COLUMN,
            dtype="object",
            kind="categorical",
            n_unique=3,
            missing_fraction=0.05,
            mixed_types=True,
        ),
        ColumnStats(
            name="country", dtype="object", kind="categorical", n_unique=1, top_fraction=1.0
        ),
    ]


def _split(name: str, n_rows: int) -> SplitStats:
    return SplitStats(
        name=name,
        n_rows=n_rows,
        n_columns=4,
        columns=_columns(),
        duplicate_fraction=0.01,
        label_distribution={"no": 0.8, "yes": 0.2},
    )


def _checks() -> list[CheckOutcome]:
    return [
        CheckOutcome(
            name="Is Single Value",
            suite="data_integrity",
            outcome="not_passed",
            value=1.0,
            conditions=[
                ConditionResult(
                    name="Does not contain only a single value",
                    status="FAIL",
                    details="Found 1 column with a single value",
                )
            ],
        ),
        CheckOutcome(name=XSS_CHECK, suite="data_integrity", outcome="passed", value=0.0),
        CheckOutcome(
            name="Outlier Sample Detection",
            suite="data_integrity",
            outcome="skipped",
            reason="skipped: sample too large for the budget",
        ),
        CheckOutcome(
            name="Multivariate Drift",
            suite="train_test_validation",
            outcome="errored",
            reason="ValueError: Input contains NaN",
        ),
        CheckOutcome(
            name="Feature Drift",
            suite="train_test_validation",
            outcome="not_passed",
            value=0.4,
            values={"age": 0.05, XSS_COLUMN: 0.4, "country": 0.0},
        ),
        CheckOutcome(name="Roc Report", suite="model_evaluation", outcome="passed", value=0.91),
    ]


def _findings() -> list[Finding]:
    return [
        Finding(
            rank=1,
            category="train_test_overlap",
            layer="split",
            severity="critical",
            confidence=0.93,
            title="38% of test rows also appear in the training data",
            explanation="The model has seen these rows.\n\nSo the score is too good.",
            fixes=["Drop duplicates before splitting", "Split by customer id"],
            evidence=[
                Evidence(
                    source="deepchecks",
                    check="Train Test Samples Mix",
                    detail="share of test rows in train",
                    value=0.38,
                )
            ],
            references=[Reference(title="Contamination", source="kb-doc-7", section="2.3")],
        ),
        Finding(
            rank=2,
            category="target_leakage",
            layer="data",
            severity="high",
            confidence=0.8,
            title=XSS_TITLE,
            explanation=f"The column {XSS_COLUMN} encodes the label.",
            fixes=[f"Remove {XSS_COLUMN} from the features"],
            evidence=[
                Evidence(
                    source="deepchecks", check=XSS_CHECK, detail=f"PPS of {XSS_COLUMN}", value=0.97
                )
            ],
        ),
        Finding(
            rank=3,
            category="class_imbalance",
            layer="data",
            severity="medium",
            confidence=0.5,
            title="Minority class is 20% of rows",
            explanation="The rare class is under-represented.",
            fixes=["Use class_weight='balanced'"],
        ),
        Finding(
            rank=4,
            category="constant_feature",
            layer="data",
            severity="low",
            confidence=0.99,
            title="Column country has a single value",
            explanation="It carries no information.",
            fixes=["Drop country"],
        ),
        Finding(
            rank=5,
            category="unused_features",
            layer="model",
            severity="info",
            confidence=0.3,
            title="One feature is ignored by the model",
            explanation="Its importance is zero.",
            fixes=["Consider dropping it"],
        ),
    ]


def _artifact_data(
    *,
    train: bool = True,
    task: str = "binary_classification",
    notes: list[str] | None = None,
    n_columns: int | None = None,
) -> ArtifactData:
    test = _split("test", 200)
    train_split = _split("train", 800) if train else None
    if n_columns is not None:
        wide = [
            ColumnStats(
                name=f"feature_{i:04d}", dtype="float64", kind="numeric", min=0.0, max=1.0, mean=0.5
            )
            for i in range(n_columns)
        ]
        test = test.model_copy(update={"columns": wide, "n_columns": n_columns})
        if train_split is not None:
            train_split = train_split.model_copy(update={"columns": wide, "n_columns": n_columns})
    if task == "regression":
        test = test.model_copy(
            update={"label_distribution": {}, "label_stats": {"mean": 3.2, "std": 1.1, "max": 9.0}}
        )
        if train_split is not None:
            train_split = train_split.model_copy(
                update={"label_distribution": {}, "label_stats": {"mean": 3.0, "std": 1.0}}
            )
    return ArtifactData(
        deepfix_version="9.9.9-test",
        task=task,
        dataset=DatasetSummary(
            target="label",
            feature_names=["age", XSS_COLUMN, "country"],
            cat_features=[XSS_COLUMN],
            train=train_split,
            test=test,
            comparison=SplitComparison(
                overlap_fraction=0.38,
                test_to_train_ratio=0.25,
                unseen_category_fraction={XSS_COLUMN: 0.02},
            )
            if train
            else None,
        ),
        checks=_checks() if train else [c for c in _checks() if c.suite != "train_test_validation"],
        model=ModelInfo(
            flavor="sklearn",
            model_class="sklearn.ensemble.RandomForestClassifier",
            hyperparameters={"n_estimators": 100, "max_depth": None, XSS_COLUMN: "x"},
            has_predict_proba=True,
            output_kind="probabilities",
            classes=["no", "yes"],
            feature_importances={"age": 0.7, XSS_COLUMN: 0.3, "country": 0.0},
        ),
        performance=PerformanceSummary(
            metric="roc_auc",
            test_score=0.91,
            train_score=1.0,
            scores={"train": {"roc_auc": 1.0}, "test": {"roc_auc": 0.91}},
        ),
        baselines=[
            BaselineResult(name="majority class", metric="roc_auc", test_score=0.5),
            BaselineResult(
                name="logistic regression", metric="roc_auc", cv_score=0.8, test_score=0.79
            ),
        ],
        notes=notes if notes is not None else ["artifact note: Outlier check skipped"],
        checks_seconds=3.0,
    )


def _diagnosis(
    findings: list[Finding] | None = None,
    *,
    status: str = "fail",
    task: str = "binary_classification",
    notes: list[str] | None = None,
) -> Diagnosis:
    return Diagnosis(
        status=status,
        modality="tabular",
        task=task,
        findings=_findings() if findings is None else findings,
        checks=[
            CheckSummary(
                name="Only In Summary", suite="model_evaluation", outcome="passed", value=0.5
            )
        ],
        timings=Timings(checks_seconds=3.0, diagnosis_seconds=0.25, total_seconds=4.5),
        notes=notes if notes is not None else ["no knowledge base found: references omitted"],
        analyzer_errors={"calibration": "RuntimeError: boom <x>"},
    )


@pytest.fixture(scope="module")
def html() -> str:
    return render_report(
        _diagnosis(), _artifact_data(), context={"footer": ["LLM cache hit rate: 75%"]}
    )


class _TagBalance(HTMLParser):
    """Records tags left open or closed out of order (void elements excluded)."""

    VOID = frozenset(
        {
            "meta",
            "link",
            "br",
            "hr",
            "img",
            "input",
            "col",
            "wbr",
            "source",
            "area",
            "base",
            "embed",
            "param",
            "track",
        }
    )

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        pass  # <rect .../> and friends open and close at once

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()


# --------------------------------------------------------------------------- safety


def test_user_strings_are_escaped_everywhere(html):
    assert "<script>alert(1)" not in html
    assert "<img src=x onerror" not in html
    assert "<b>bold</b>" not in html
    assert str(escape(XSS_COLUMN)) in html
    assert str(escape(XSS_CHECK)) in html
    assert str(escape(XSS_TITLE)) in html
    # the analyzer error message is data too
    assert "boom <x>" not in html and "boom &lt;x&gt;" in html


def test_only_script_is_inline_and_optional(html):
    scripts = re.findall(r"<script\b[^>]*>", html, flags=re.IGNORECASE)
    assert scripts == ["<script>"], scripts  # one inline script, no src
    # everything a reader needs is in the markup: collapsed findings use <details>
    assert html.count('<details class="finding') == 5


def test_nothing_is_fetched_from_the_network(html):
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.IGNORECASE)
    assert not re.search(r"<link\b", html, re.IGNORECASE)
    assert "@import" not in html
    assert not re.search(r"url\(", html, re.IGNORECASE)
    assert "<iframe" not in html.lower() and "<img" not in html.lower()
    # the page forbids fetches itself, as a second line of defence
    assert "default-src 'none'" in html
    # every href is an in-page anchor
    hrefs = re.findall(r"""href\s*=\s*["']([^"']*)["']""", html)
    assert hrefs and all(h.startswith("#") for h in hrefs), hrefs


def test_markup_is_well_formed(html):
    parser = _TagBalance()
    parser.feed(html)
    parser.close()
    assert parser.errors == []
    assert parser.stack == []


# --------------------------------------------------------------------------- content


def test_findings_keep_rank_order_and_all_their_content(html):
    positions = [html.index(str(escape(f.title))) for f in _findings()]
    assert positions == sorted(positions)
    for finding in _findings():
        assert str(escape(finding.category)) in html
        for fix in finding.fixes:
            assert str(escape(fix)) in html
        for evidence in finding.evidence:
            assert str(escape(evidence.detail)) in html
    assert "Contamination" in html and "kb-doc-7" in html
    assert "93% confidence" in html
    # explanation paragraphs are split on blank lines
    assert "<p>The model has seen these rows.</p>" in html


def test_findings_are_sorted_even_when_given_out_of_order():
    shuffled = list(reversed(_findings()))
    page = render_report(_diagnosis(shuffled), _artifact_data())
    ranks = [int(r) for r in re.findall(r'id="finding-(\d+)"', page)]
    assert ranks == [1, 2, 3, 4, 5]


def test_first_finding_is_expanded_and_the_others_collapsed(html):
    tags = re.findall(r'<details class="finding[^>]*>', html)
    assert len(tags) == 5
    assert tags[0].endswith(" open>")
    assert not any(" open" in t for t in tags[1:])


def test_header_has_status_counts_and_facts(html):
    assert 'class="badge status-fail"' in html and ">FAIL<" in html
    for severity in ("critical", "high", "medium", "low", "info"):
        assert f"1 {severity}</span>" in html
    assert "Binary classification" in html
    assert "9.9.9-test" in html
    assert "4.50 s" in html  # total time


def test_notes_from_both_steps_and_analyzer_errors_appear(html):
    assert "artifact note: Outlier check skipped" in html
    assert "no knowledge base found: references omitted" in html
    assert "calibration" in html
    notes = html[html.index('id="notes"') : html.index('id="checks"')]
    assert notes.index("artifact note") < notes.index("no knowledge base")


def test_duplicate_notes_are_shown_once():
    page = render_report(_diagnosis(notes=["same note"]), _artifact_data(notes=["same note"]))
    assert page.count("same note") == 1


def test_checks_table_groups_by_suite_with_reasons(html):
    checks = html[html.index('id="checks"') : html.index('id="dataset"')]
    suites = [
        checks.index(s) for s in ("Data integrity", "Train test validation", "Model evaluation")
    ]
    assert suites == sorted(suites)
    assert "ValueError: Input contains NaN" in checks
    assert "skipped: sample too large for the budget" in checks
    assert 'class="chip out-errored"' in checks and 'class="chip out-skipped"' in checks
    assert "Does not contain only a single value" in checks
    # a check known only from the diagnosis summary is still listed
    assert "Only In Summary" in checks
    assert "7 checks" not in checks  # counts are per outcome, not a bare total
    assert "2 not passed</span>" in checks and "1 errored</span>" in checks


def test_dataset_and_model_sections(html):
    dataset = html[html.index('id="dataset"') : html.index('id="model"')]
    assert "800" in dataset and "200" in dataset
    assert "38%" in dataset  # overlap
    assert 'aria-label="label distribution per split"' in dataset
    assert "Feature drift" in dataset
    assert "mixed types" in dataset and "constant" in dataset
    model = html[html.index('id="model"') : html.index("<footer")]
    assert "sklearn.ensemble.RandomForestClassifier" in model
    assert "n_estimators" in model and "max_depth" in model
    assert "logistic regression" in model and "your model" in model
    assert 'aria-label="native feature importances, top 10"' in model


def test_footer_shows_timings_context_lines_and_generator(html):
    footer = html[html.index("<footer") :]
    assert "LLM cache hit rate: 75%" in footer
    assert "checks 3.00 s" in footer and "diagnosis 0.25 s" in footer
    assert "Generated by mlflow-deepfix 9.9.9-test" in footer


def test_no_training_split_is_reported_not_hidden():
    page = render_report(
        _diagnosis(notes=["train/test checks skipped: no training data"]),
        _artifact_data(train=False),
    )
    assert "train/test checks skipped: no training data" in page
    assert "not available: train/test comparisons were not run" in page
    assert "there is no training split to compare" in page
    assert "Train test validation" not in page


def test_no_findings_state():
    page = render_report(_diagnosis(findings=[], status="pass"), _artifact_data())
    assert "No findings." in page
    assert 'class="badge status-pass"' in page
    assert '<details class="finding' not in page
    assert "0 findings" in page


def test_regression_shows_target_statistics():
    page = render_report(
        _diagnosis(task="regression", findings=[], status="pass"), _artifact_data(task="regression")
    )
    assert "Target statistics" in page
    assert "label distribution per split" not in page
    assert "3.2" in page


def test_runtime_failure_lists_missing_and_extra_columns():
    data = _artifact_data().model_copy(
        update={
            "runtime_failures": [
                RuntimeFailure(
                    stage="predict",
                    exception_type="KeyError",
                    message="columns missing: ['b']",
                    expected_columns=["a", "b"],
                    given_columns=["a", "<c>"],
                    shape=[10, 2],
                    nan_counts={"a": 3},
                )
            ]
        }
    )
    page = render_report(_diagnosis(), data)
    assert "Runtime failure during predict" in page
    assert "expects but did not get:</strong> b" in page
    assert "does not expect:</strong> &lt;c&gt;" in page
    assert "10 × 2" in page


# --------------------------------------------------------------------------- size, template


def test_typical_report_is_small(html):
    assert len(html.encode("utf-8")) < 200_000


def test_wide_dataset_stays_small_and_says_it_was_cut():
    page = render_report(_diagnosis(), _artifact_data(n_columns=2000))
    assert len(page.encode("utf-8")) < 200_000
    assert "of 2000 columns are shown" in page
    assert "feature_0000" in page and "feature_1999" not in page


def test_rendering_is_deterministic():
    first = render_report(_diagnosis(), _artifact_data())
    second = render_report(_diagnosis(), _artifact_data())
    assert first == second


def test_template_file_is_used_with_custom_sections():
    assert TEMPLATE_PATH.name == "report.html.j2"
    assert TEMPLATE_PATH.is_file()
    template = TEMPLATE_PATH.read_text(encoding="utf-8")
    style = template[template.index("<style>") : template.index("</style>")]
    context = {
        "sections": [
            {
                "title": "Fix verification <v1>",
                "rows": [("repair rate", 0.75), ("negative flip rate", "0.02"), ("note <n>", None)],
            }
        ],
        "footer": ["first line", "second <line>"],
        "title": "Custom <title>",
    }
    page = render_report(_diagnosis(), _artifact_data(), context=context)
    assert style in page  # the stylesheet comes verbatim from the template file
    assert "Fix verification &lt;v1&gt;</h2>" in page
    assert "repair rate</th><td>0.75</td>" in page
    assert "negative flip rate</th><td>0.02</td>" in page
    assert "note &lt;n&gt;</th><td>—</td>" in page
    assert '<a href="#extra-1">Fix verification &lt;v1&gt;</a>' in page
    assert "second &lt;line&gt;" in page
    assert "<title>Custom &lt;title&gt;</title>" in page
    # sections come after the model section and before the footer
    assert page.index('id="model"') < page.index('id="extra-1"') < page.index("<footer")


# --------------------------------------------------------------------------- validation


def test_wrong_argument_types_are_refused():
    with pytest.raises(TypeError, match="diagnosis must be"):
        render_report({"status": "pass"}, _artifact_data())
    with pytest.raises(TypeError, match="artifact_data must be"):
        render_report(_diagnosis(), {})
    with pytest.raises(TypeError, match="context must be a dict"):
        render_report(_diagnosis(), _artifact_data(), context=["x"])


@pytest.mark.parametrize(
    "context, error, message",
    [
        ({"footer": "just a string"}, TypeError, r"context\['footer'\] must be a list of str"),
        ({"sections": {"title": "x"}}, TypeError, r"context\['sections'\] must be a list"),
        ({"sections": [{"rows": []}]}, ValueError, r"context\['sections'\]\[0\] must be a dict"),
        (
            {"sections": [{"title": "t", "rows": [("a", "b", "c")]}]},
            ValueError,
            r"context\['sections'\]\[0\]\['rows'\]\[0\] must be a \(key, value\) pair",
        ),
    ],
)
def test_bad_context_is_refused_with_a_message_naming_the_key(context, error, message):
    with pytest.raises(error, match=message):
        render_report(_diagnosis(), _artifact_data(), context=context)


def test_unknown_context_keys_are_ignored_with_a_warning(caplog):
    with caplog.at_level("WARNING", logger="mlflow_deepfix.report._render"):
        page = render_report(_diagnosis(), _artifact_data(), context={"colour": "zz-unused-zz"})
    assert "colour" in caplog.text
    assert "zz-unused-zz" not in page


# --------------------------------------------------------------------------- formatting


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, "—"),
        (0, "0"),
        (12345, "12,345"),
        (0.38, "0.38"),
        (0.123456, "0.1235"),
        (1234.56, "1,234.6"),
        (2.5e-5, "2.5e-05"),
        (3.2e7, "3.2e+07"),
        (float("nan"), "NaN"),
        (float("inf"), "∞"),
        (True, "yes"),
    ],
)
def test_fmt_number(value, expected):
    assert fmt_number(value) == expected


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, "—"),
        (0.0, "0%"),
        (0.38, "38%"),
        (0.042, "4.2%"),
        (0.004, "0.40%"),
        (1e-7, "<0.01%"),
        (1.0, "100%"),
    ],
)
def test_fmt_percent(value, expected):
    assert fmt_percent(value) == expected


@pytest.mark.parametrize(
    "value, expected", [(0.25, "0.25 s"), (21.66, "21.7 s"), (125, "2 min 05 s")]
)
def test_fmt_seconds(value, expected):
    assert fmt_seconds(value) == expected


def test_fmt_value_keeps_hyperparameters_as_typed_and_short():
    assert fmt_value(1.0) == "1.0"
    assert fmt_value(None) == "None"
    assert fmt_value({"b": 1, "a": [1, 2]}) == '{"a": [1, 2], "b": 1}'
    assert len(fmt_value("x" * 500)) == 160


# ------------------------------------------------- one count of checks, nav, layout


def _consistent_diagnosis(artifact, **kwargs) -> Diagnosis:
    """A diagnosis whose check summary is built from the artifact, as diagnose() does."""
    from mlflow_deepfix.schemas import CheckSummary

    diagnosis = _diagnosis(**kwargs)
    return diagnosis.model_copy(update={"checks": [
        CheckSummary(name=c.name, suite=c.suite, outcome=c.outcome, value=c.value)
        for c in artifact.checks]})


def test_header_count_of_checks_is_the_metric_checks_run():
    from mlflow_deepfix.mlflow_io import contract_metrics

    artifact = _artifact_data()
    diagnosis = _consistent_diagnosis(artifact)
    page = render_report(diagnosis, artifact)
    header = page[: page.index("<main")]
    run = re.search(r'data-count="checks-run">(\d+)<', header).group(1)
    assert int(run) == contract_metrics(diagnosis)["deepfix_checks_run"] == 5
    assert re.search(r'data-count="checks-skipped">1<', header)
    assert re.search(r'data-count="checks-errored">1<', header)
    checks = page[page.index('id="checks"'): page.index('id="dataset"')]
    assert "5 checks ran, 1 skipped (6 in the suites)." in checks
    assert "1 skipped</span>" in checks


def test_notes_agree_with_the_skipped_badge():
    artifact = _artifact_data(notes=[])
    page = render_report(_consistent_diagnosis(artifact, notes=[]), artifact)
    notes = page[page.index('id="notes"'): page.index('id="checks"')]
    assert "Nothing was skipped" not in notes
    assert "1 was skipped" in notes and "1 of them errored" in notes
    # and with nothing skipped or errored, the note says so
    clean = artifact.model_copy(update={"checks": [
        c for c in artifact.checks if c.outcome not in ("skipped", "errored")]})
    page = render_report(_consistent_diagnosis(clean, notes=[]).model_copy(
        update={"analyzer_errors": {}}), clean)
    notes = page[page.index('id="notes"'): page.index('id="checks"')]
    assert "Nothing was skipped" in notes
    assert 'chip out-skipped zero">0 skipped' in page


def test_nav_links_keep_href_and_scroll_by_script(html):
    nav = html[html.index('<nav class="toc"'): html.index("</nav>")]
    for target in ("findings", "notes", "checks", "dataset", "model"):
        assert f'<a href="#{target}">' in nav
        assert f'id="{target}"' in html
    script = html[html.index("<script>"): html.index("</script>")]
    assert "preventDefault()" in script and "scrollIntoView(" in script


def test_every_table_scrolls_inside_its_own_box(html):
    tables = re.findall(r"(.{0,24})<table\b", html)
    assert tables and all(t.endswith('<div class="tablebox">') for t in tables)
    assert ".tablebox{max-width:100%;overflow-x:auto" in html
