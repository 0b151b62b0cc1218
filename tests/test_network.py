"""Nothing leaves the machine: an offline tabular evaluation, a knowledge-base build and a
text evaluation open no socket except loopback (and unix sockets).

The guard is pytest-socket's ``socket_allow_hosts``, installed per test by a fixture (the
rest of the suite keeps its sockets, e.g. the gate tests' ``mlflow server``), plus a
recorder: a connection attempt that some library catches and swallows still fails the
test, and so does a DNS lookup of a non-loopback name.
"""

from __future__ import annotations

import socket

import mlflow
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

pytest_socket = pytest.importorskip("pytest_socket")

LOOPBACK = ["127.0.0.1", "localhost", "::1"]
_LOOPBACK_NAMES = {*LOOPBACK, "ip6-localhost", "localhost.localdomain", None, ""}


@pytest.fixture
def loopback_only():
    """Yield the list of refused network attempts (empty when all stayed on loopback)."""
    attempts: list[str] = []
    pytest_socket.socket_allow_hosts(LOOPBACK, allow_unix_socket=True)
    guarded_connect = socket.socket.connect
    true_getaddrinfo = socket.getaddrinfo

    def recording_connect(sock, address, *args):
        family = getattr(sock, "family", None)
        if family != getattr(socket, "AF_UNIX", object()):
            host = address[0] if isinstance(address, tuple) else address
            if host not in LOOPBACK:
                attempts.append(f"connect {address!r}")
        return guarded_connect(sock, address, *args)

    def recording_getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name not in _LOOPBACK_NAMES and not str(name).startswith("127."):
            attempts.append(f"resolve {name!r}")
            raise socket.gaierror(f"deepfix test: name resolution of {name!r} is not allowed")
        return true_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = recording_connect
    socket.getaddrinfo = recording_getaddrinfo
    try:
        yield attempts
    finally:
        socket.getaddrinfo = true_getaddrinfo
        pytest_socket._remove_restrictions()


def test_the_guard_catches_a_real_outbound_connection(loopback_only):
    with socket.socket() as sock, pytest.raises(pytest_socket.SocketConnectBlockedError):
        sock.connect(("192.0.2.1", 80))  # TEST-NET-1, never routed
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo("example.org", 443)
    assert loopback_only == ["connect ('192.0.2.1', 80)", "resolve 'example.org'"]
    with socket.create_server(("127.0.0.1", 0)) as server:  # loopback stays open
        socket.create_connection(server.getsockname(), timeout=5).close()
    assert len(loopback_only) == 2


def test_offline_tabular_evaluation_stays_on_loopback(loopback_only, tracking_uri, breast_cancer_splits):
    train, test = breast_cancer_splits
    train, test = train.head(250), test.head(120)
    features = train.drop(columns=["label"])
    model = LogisticRegression(max_iter=3000).fit(features, train["label"])
    with mlflow.start_run():
        info = mlflow.sklearn.log_model(model, name="model", serialization_format="cloudpickle",
                                        pip_requirements=["scikit-learn"])
        result = mlflow.models.evaluate(
            info.model_uri, test, targets="label", model_type="classifier",
            evaluators=["deepfix"], evaluator_config={"deepfix": {"train_data": train}},
        )
    assert "deepfix_findings_count" in result.metrics
    assert loopback_only == []


def test_kb_build_and_query_stay_on_loopback(loopback_only, tmp_path):
    from kb_builder.builder import build_kb
    from kb_builder.retrieval import KnowledgeBase

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "overlap.md").write_text(
        "---\ncategories: [train_test_overlap]\n---\n# Overlap\n\nDeduplicate before splitting.\n"
    )
    report = build_kb([str(corpus)], path=str(tmp_path / "kb"), include_builtin=False, progress=False)
    assert report.chunks >= 1
    with KnowledgeBase.open(str(tmp_path / "kb"), None, report.collection) as kb:
        hits = kb.search("rows shared by train and test", top_k=1)
    assert hits and hits[0].doc_id
    assert loopback_only == []


def test_text_evaluation_stays_on_loopback(loopback_only, tracking_uri):
    from mlflow_deepfix.scenarios._text_data import make_reviews, text_model

    frame = make_reviews(300, seed=0)
    train, test = train_test_split(frame, test_size=0.3, stratify=frame["sentiment"], random_state=0)
    model = text_model(0).fit(train.drop(columns=["sentiment"]), train["sentiment"])
    with mlflow.start_run():
        info = mlflow.sklearn.log_model(model, name="model", serialization_format="cloudpickle",
                                        pip_requirements=["scikit-learn"])
        result = mlflow.models.evaluate(
            info.model_uri, test, targets="sentiment", model_type="classifier",
            evaluators=["deepfix"],
            evaluator_config={"deepfix": {"text_col": "review", "train_data": train}},
        )
    assert result.artifacts["deepfix_findings"].content["modality"] == "text"
    assert loopback_only == []
