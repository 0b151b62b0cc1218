"""The Deepchecks import does not pay for ``rfc3987_syntax``'s grammar (issue 13 D),
and IRI validation through jsonschema still gives the real answer."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_deepchecks_import_skips_the_rfc3987_grammar_until_an_iri_is_validated():
    out = _run(
        """
        import sys
        import mlflow_deepfix.checks  # imports deepchecks.tabular, nbformat, jsonschema
        assert "deepchecks.tabular" in sys.modules and "jsonschema" in sys.modules
        print("grammar_loaded_at_import", "rfc3987_syntax.syntax_helpers" in sys.modules)
        import jsonschema
        checker = jsonschema.Draft7Validator.FORMAT_CHECKER
        validator = jsonschema.Draft7Validator({"format": "iri"}, format_checker=checker)
        print("valid", validator.is_valid("https://example.org/ä?q=1"))
        print("invalid", validator.is_valid("no scheme here ::"))
        print("grammar_loaded_after_use", "rfc3987_syntax.syntax_helpers" in sys.modules)
        """
    )
    assert out.splitlines() == [
        "grammar_loaded_at_import False",
        "valid True",
        "invalid False",
        "grammar_loaded_after_use True",
    ]


def test_an_already_imported_rfc3987_syntax_is_left_alone():
    out = _run(
        """
        import rfc3987_syntax
        real = rfc3987_syntax
        import sys
        import mlflow_deepfix.checks
        from mlflow_deepfix.checks import _lazy_imports
        print(sys.modules["rfc3987_syntax"] is real, _lazy_imports.is_deferred())
        """
    )
    assert out == "True False"
