"""CLI errors (KB, gate, bench): one line naming the problem and the fix, exit code 2,
never a traceback; ``--debug`` shows the traceback instead."""

from __future__ import annotations

import socket

import pytest

from mlflow_deepfix.cli import main


def _dead_port() -> int:
    """A loopback port nobody listens on (bound then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _one_line_error(capsys) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    # MLflow's own INFO log lines may precede it; the error itself is one line
    lines = [line for line in captured.err.splitlines() if "error" in line.lower()]
    assert len(lines) == 1, captured.err
    return lines[0]


def _corpus(tmp_path):
    (tmp_path / "note.md").write_text("# Leakage\n\nSplit by group before fitting.\n")
    return tmp_path


def test_kb_build_against_a_dead_port_is_one_line_and_exit_2(capsys, tmp_path):
    _corpus(tmp_path)
    url = f"http://127.0.0.1:{_dead_port()}"
    assert main(["kb", "build", "--url", url, "--quiet", "--no-builtin", "--source", str(tmp_path)]) == 2
    line = _one_line_error(capsys)
    assert "cannot reach the Qdrant server" in line and url in line
    assert "--path" in line  # the fix: the embedded store


def test_kb_query_against_a_dead_port_is_one_line_and_exit_2(capsys):
    url = f"http://127.0.0.1:{_dead_port()}"
    assert main(["kb", "info", "--url", url]) == 2
    line = _one_line_error(capsys)
    assert "cannot reach the knowledge base" in line.lower() and "--path" in line


def test_debug_shows_the_traceback(tmp_path):
    _corpus(tmp_path)
    url = f"http://127.0.0.1:{_dead_port()}"
    with pytest.raises(Exception) as caught:
        main(["--debug", "kb", "build", "--url", url, "--quiet", "--no-builtin", "--source", str(tmp_path)])
    from mlflow_deepfix.cli import is_connection_error

    assert is_connection_error(caught.value)


def test_gate_refuses_an_empty_frame_before_mlflow(capsys, tmp_path, tracking_uri):
    data = tmp_path / "empty.csv"
    data.write_text("x1,x2,label\n", encoding="utf-8")
    code = main(["gate", "--model-uri", "models:/nothing/1", "--data", str(data), "--target", "label"])
    assert code == 2
    line = _one_line_error(capsys)
    assert "data is empty (0 rows)" in line and line.startswith("deepfix gate: error:")


def test_gate_against_a_dead_tracking_server_is_one_line(capsys, tmp_path, monkeypatch):
    # MLflow retries for minutes by default
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "5")
    data = tmp_path / "d.csv"
    data.write_text("x1,label\n1,0\n2,1\n", encoding="utf-8")
    uri = f"http://127.0.0.1:{_dead_port()}"
    code = main(["gate", "--model-uri", "models:/m/1", "--data", str(data), "--target", "label", "--tracking-uri", uri])
    assert code == 2
    assert "error" in _one_line_error(capsys)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["bench", "--scenario", "no-such-scenario"], "no-such-scenario"),
        (["bench", "--provider", "no-such-provider"], "--provider"),
        (["bench", "--json", "/no/such/folder/report.json"], "does not exist"),
    ],
)
def test_bench_errors_are_one_line_before_any_scenario_runs(capsys, argv, expected):
    assert main(argv) == 2
    assert expected in _one_line_error(capsys)
