"""Where things live: the default store location and the built-in corpus.

The default store is an embedded Qdrant folder in the user's data directory, so that
``deepfix kb build`` once and every later evaluation finds it without configuration.
``DEEPFIX_KB_PATH`` overrides it (handy in CI and containers).
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_COLLECTION = "deepfix_kb"
ENV_KB_PATH = "DEEPFIX_KB_PATH"


def default_kb_path() -> str:
    """The embedded Qdrant folder used when neither ``path`` nor ``url`` is given:
    ``$DEEPFIX_KB_PATH`` when set, else ``<user data dir>/mlflow-deepfix/kb``."""
    env = os.environ.get(ENV_KB_PATH)
    if env:
        return str(Path(env).expanduser())
    import platformdirs

    return str(Path(platformdirs.user_data_dir("mlflow-deepfix", appauthor=False)) / "kb")


def builtin_corpus_dir() -> Path:
    """The curated Markdown documents shipped inside the package."""
    return Path(__file__).resolve().parent / "corpus"
