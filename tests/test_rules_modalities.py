"""Rules on text and image artifact data: properties, content fingerprints, modality
fixes and the cause/symptom direction between property drift and prediction drift.

Built from hand-written artifact data (no Deepchecks run), like the other rule tests."""

from __future__ import annotations

import pytest
from deepfix_agents._registry import RegistrationError
from deepfix_agents.reasoner import reason
from deepfix_agents.rules import RULES
from deepfix_agents.rules._base import Rule, validate_rule
from deepfix_agents.rules.class_imbalance import binary_equivalent

from mlflow_deepfix.schemas import ArtifactData, CheckOutcome
from tests.test_rules_data_split import artifact, finding, num

IMAGE_PROPERTIES = ["brightness", "rms_contrast", "sharpness"]


def _content(modality: str, *, train_columns, test_columns, **kw) -> ArtifactData:
    """Artifact data of a text/image evaluation: properties are summarised columns that
    are not model features."""
    art = artifact(train_columns, test_columns, features=[], **kw)
    properties = [c.name for c in train_columns]
    dataset = art.dataset.model_copy(
        update={"property_names": properties, "content_column": "image"}
    )
    return art.model_copy(update={"modality": modality, "dataset": dataset})


def _shifted_images(shift: float = 2.0) -> ArtifactData:
    train = [num(p, 1000) for p in IMAGE_PROPERTIES]
    test = [num("brightness", 300, mean=shift, q50=shift, q01=shift - 2.3, q99=shift + 2.3),
            *[num(p, 300) for p in IMAGE_PROPERTIES[1:]]]
    return _content("image", train_columns=train, test_columns=test)


def test_image_property_drift_is_named_as_such_with_acquisition_fixes():
    art = _shifted_images()
    found = finding("feature_drift", art)
    assert found is not None and found["severity"] in ("high", "critical")
    assert found["title"].startswith("Image property 'brightness' shifted by 2.0")
    assert "images" in found["explanation"]
    fixes = RULES.get("feature_drift")().fix_list([], art)
    assert "acquisition protocol" in fixes[0]
    tabular = art.model_copy(update={"modality": "tabular"})
    assert RULES.get("feature_drift")().fix_list([], tabular)[0] != fixes[0]


def test_constant_properties_are_not_constant_features():
    # every digit image has the same area: a property, not a feature the model reads
    train = [num("brightness", 1000), num("area", 1000, n_unique=1, std=0.0, top_fraction=1.0)]
    test = [num("brightness", 300), num("area", 300, n_unique=1, std=0.0, top_fraction=1.0)]
    art = _content("image", train_columns=train, test_columns=test)
    assert finding("constant_feature", art) is None


def test_content_duplicates_are_never_expected_by_chance():
    # no metadata features at all: on tabular rows that would make every row "collide"
    train = [num("text_length", 1000)]
    art = _content("text", train_columns=train, test_columns=[num("text_length", 300)],
                   train_kw={"duplicate_fraction": 0.2})
    found = finding("duplicate_samples", art)
    assert found is not None and found["severity"] in ("medium", "high")
    assert "20% of training texts are exact duplicates" in found["title"]


def test_on_content_property_drift_is_the_cause_and_prediction_drift_its_symptom():
    art = _shifted_images(shift=3.0)
    prediction = RULES.get("prediction_drift")()
    assert "feature_drift" not in prediction.explains_for(art)
    assert "feature_drift" in prediction.explains_for(art.model_copy(update={"modality": "tabular",
        "dataset": art.dataset.model_copy(update={"property_names": []})}))
    # with a strong prediction drift present too, the reasoner keeps feature drift on top
    drift = CheckOutcome(name="Prediction Drift", suite="train_test_validation",
                         outcome="not_passed", value=0.6)
    findings = reason(
        [s for rule_cls in RULES for source in ("dataset", "deepchecks", "model")
         for s in rule_cls().detect(source, art.model_copy(update={"checks": [drift]}))],
        art.model_copy(update={"checks": [drift]}),
    )
    assert findings[0].category == "feature_drift"


@pytest.mark.parametrize(
    ("distribution", "expect_finding"),
    [
        ({str(d): 0.1 for d in range(9)} | {"9": 0.097}, False),  # ten balanced digits
        ({"a": 0.9, "b": 0.08, "c": 0.02}, True),
        ({"0": 0.95, "1": 0.05}, True),
    ],
)
def test_class_imbalance_scales_with_the_number_of_classes(distribution, expect_finding):
    art = artifact()
    train = art.dataset.train.model_copy(update={"label_distribution": distribution})
    art = art.model_copy(update={"dataset": art.dataset.model_copy(update={"train": train})})
    assert (finding("class_imbalance", art) is not None) is expect_finding
    assert binary_equivalent(0.097, 10) == pytest.approx(0.485)


def test_text_unknown_tokens_make_a_malformed_text_finding():
    unknown = CheckOutcome(name="Unknown Tokens", suite="data_integrity", outcome="not_passed",
                           value=0.06)
    art = _content("text", train_columns=[num("text_length", 1000)],
                   test_columns=[num("text_length", 300)], checks=[unknown])
    found = finding("data_type_issues", art)
    assert found is not None and found["severity"] in ("medium", "high")
    assert "6.0% of tokens are unknown" in found["title"]
    assert "feature_drift" in RULES.get("data_type_issues")().explains_for(art)


def test_registration_refuses_bad_modality_fixes():
    base = RULES.get("outliers")

    class Audio(base):
        modality_fixes = {"audio": ("resample",)}

    class Empty(base):
        modality_fixes = {"text": ()}

    for cls in (Audio, Empty):
        with pytest.raises(RegistrationError, match="modality_fixes"):
            validate_rule(cls)
    assert issubclass(base, Rule)
