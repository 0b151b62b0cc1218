"""``transformers``: a local causal language model, loaded offline.

For users who cannot send even condensed statistics to a server: ``llm.model`` is a
local directory saved with ``save_pretrained`` (weights, tokenizer, chat template), or
a ``.gguf`` file (loaded through transformers' GGUF support, which needs the ``gguf``
package). Nothing is downloaded: loading uses ``local_files_only=True`` with
``HF_HUB_OFFLINE`` set for the duration of the load.

Generation applies the tokenizer's chat template (a plain ``role: content`` layout
when it has none), decodes greedily at ``temperature == 0`` and samples otherwise,
seeded per sample; it stops after ``llm.max_new_tokens`` tokens or ``llm.timeout``
seconds (transformers' ``max_time``), whichever comes first. The loaded model is kept
for the next call in the same process (one model at a time).

transformers and torch are imported on first use, never when the registry loads.
"""

from __future__ import annotations

import logging
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from deepfix_agents.providers._base import Provider, ProviderError

logger = logging.getLogger(__name__)

_LOADED: dict[str, tuple[Any, Any]] = {}
_LOCK = threading.Lock()


@contextmanager
def _offline():
    keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    previous = {k: os.environ.get(k) for k in keys}
    os.environ.update({k: "1" for k in keys})
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _plain_prompt(messages: list[dict[str, str]]) -> str:
    body = "\n\n".join(f"{m['role']}: {m['content']}" for m in messages)
    return f"{body}\n\nassistant:"


class TransformersProvider(Provider):
    id = "transformers"
    description = (
        "A local transformers causal LM loaded offline: llm.model is a model directory "
        "or a .gguf file"
    )

    @property
    def path(self) -> Path:
        return Path(str(self.options.model)).expanduser()

    @property
    def model_name(self) -> str:
        path = self.path
        return path.stem if path.suffix == ".gguf" else (path.name or str(path))

    def _load(self) -> tuple[Any, Any]:
        path = self.path
        if not path.exists():
            raise ProviderError(
                f"llm.model={str(path)!r} does not exist; the transformers provider needs a "
                "local model directory or .gguf file (nothing is downloaded)"
            )
        key = str(path.resolve())
        with _LOCK:
            if key in _LOADED:
                return _LOADED[key]
            try:
                from transformers import AutoModelForCausalLM, AutoTokenizer
            except ImportError as error:
                raise ProviderError(
                    f"the transformers provider needs transformers and torch ({error}); "
                    "install mlflow-deepfix[llm]"
                ) from None
            kwargs: dict[str, Any] = {"local_files_only": True}
            directory = path
            if path.suffix == ".gguf":
                directory, kwargs["gguf_file"] = path.parent, path.name
            try:
                with _offline():
                    tokenizer = AutoTokenizer.from_pretrained(directory, **kwargs)
                    model = AutoModelForCausalLM.from_pretrained(directory, **kwargs)
            except Exception as error:  # noqa: BLE001 - surfaced as a provider failure
                raise ProviderError(
                    f"could not load the local model {str(path)!r}: "
                    f"{type(error).__name__}: {str(error)[:300]}"
                ) from None
            model.eval()
            _LOADED.clear()
            _LOADED[key] = (tokenizer, model)
            logger.info("transformers provider: loaded %s", path)
            return tokenizer, model

    def _encode(self, tokenizer: Any, messages: list[dict[str, str]]) -> dict[str, Any]:
        if getattr(tokenizer, "chat_template", None):
            encoded = tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            return dict(encoded)
        return dict(tokenizer(_plain_prompt(messages), return_tensors="pt"))

    def complete(self, messages: list[dict[str, str]], seed: int | None = None) -> str:
        import torch

        tokenizer, model = self._load()
        inputs = self._encode(tokenizer, messages)
        n_prompt = int(inputs["input_ids"].shape[-1])
        limit = getattr(model.config, "max_position_embeddings", None) or getattr(
            model.config, "n_positions", None
        )
        max_new = int(self.options.max_new_tokens)
        if limit and n_prompt + max_new > int(limit):
            max_new = int(limit) - n_prompt
            if max_new < 16:
                raise ProviderError(
                    f"the prompt has {n_prompt} tokens; the model {self.model_name!r} "
                    f"handles {limit} in all"
                )
        temperature = float(self.options.temperature)
        generate: dict[str, Any] = {
            "max_new_tokens": max_new,
            "max_time": float(self.options.timeout),
            "do_sample": temperature > 0,
            "pad_token_id": tokenizer.pad_token_id
            if tokenizer.pad_token_id is not None
            else tokenizer.eos_token_id,
        }
        if temperature > 0:
            generate["temperature"] = temperature
        else:
            generate.update(temperature=None, top_p=None, top_k=None)
        torch.manual_seed(0 if seed is None else int(seed))
        try:
            with torch.inference_mode():
                output = model.generate(**inputs, **generate)
        except Exception as error:  # noqa: BLE001
            raise ProviderError(f"generation failed: {type(error).__name__}: {error}") from None
        return tokenizer.decode(output[0, n_prompt:], skip_special_tokens=True)
