"""``openai``: any OpenAI-compatible chat-completions endpoint.

One provider covers OpenAI itself and the self-hosted servers that speak its API
(vLLM, Ollama, llama.cpp server, LM Studio, TGI), so artifact data can stay inside the
organisation's perimeter by pointing ``llm.base_url`` at a local server.

* ``llm.base_url`` (default ``https://api.openai.com/v1``) + ``/chat/completions``;
* the API key is read from the environment variable named by ``llm.api_key_env`` at
  call time and sent as a bearer token; it is never stored, logged or put in an error
  message (any echo of it in a server's error body is masked);
* timeouts, connection errors, HTTP 429 and 5xx are retried ``llm.max_retries`` times
  with exponential backoff (0.5 s, 1 s, 2 s, ... capped at 8 s, or the server's
  ``Retry-After`` when shorter than 30 s); other HTTP errors fail at once.

httpx is imported when the first request is made, not when the registry loads.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from deepfix_agents.providers._base import Provider, ProviderError

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
BACKOFF_START = 0.5
BACKOFF_MAX = 8.0
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAIProvider(Provider):
    id = "openai"
    description = (
        "Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp "
        "server, LM Studio): llm.base_url, llm.model, llm.api_key_env"
    )

    def __init__(self, options: Any):
        super().__init__(options)
        self._client: Any = None
        self._secret: str | None = None

    # ------------------------------------------------------------------ helpers
    @property
    def url(self) -> str:
        base = (getattr(self.options, "base_url", None) or DEFAULT_BASE_URL).rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        env = getattr(self.options, "api_key_env", None)
        if env:
            secret = os.environ.get(env)
            if not secret:
                raise ProviderError(
                    f"the environment variable {env!r} named by llm.api_key_env is not set"
                )
            self._secret = secret
            headers["Authorization"] = f"Bearer {secret}"
        return headers

    def _mask(self, text: str) -> str:
        if self._secret and self._secret in text:
            text = text.replace(self._secret, "***")
        return text

    def _get_client(self) -> Any:
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=httpx.Timeout(float(self.options.timeout)))
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        delay = min(BACKOFF_START * 2**attempt, BACKOFF_MAX)
        try:
            if retry_after is not None and 0 <= float(retry_after) < 30:
                delay = float(retry_after)
        except ValueError:
            pass
        return delay

    # ------------------------------------------------------------------ the call
    def complete(self, messages: list[dict[str, str]], seed: int | None = None) -> str:
        import httpx

        body: dict[str, Any] = {
            "model": self.options.model,
            "messages": messages,
            "temperature": float(self.options.temperature),
            "max_tokens": int(self.options.max_new_tokens),
            "stream": False,
        }
        if seed is not None:
            body["seed"] = int(seed)
        headers = self._headers()
        client = self._get_client()
        retries = int(getattr(self.options, "max_retries", 0))
        reason = "no attempt made"
        for attempt in range(retries + 1):
            retry_after = None
            try:
                response = client.post(self.url, json=body, headers=headers)
            except httpx.TimeoutException:
                reason = f"timeout after {self.options.timeout:g}s"
            except httpx.TransportError as error:
                reason = f"connection error: {type(error).__name__}: {self._mask(str(error))}"
            else:
                if response.status_code < 400:
                    return self._content(response)
                excerpt = self._mask(" ".join(response.text.split())[:200])
                reason = f"HTTP {response.status_code} from {self.url}: {excerpt}"
                if response.status_code not in RETRY_STATUS:
                    raise ProviderError(reason)
                retry_after = response.headers.get("retry-after")
            if attempt < retries:
                delay = self._backoff(attempt, retry_after)
                logger.info(
                    "openai provider: %s; retry %d/%d in %.1fs", reason, attempt + 1, retries, delay
                )
                time.sleep(delay)
        suffix = f" ({retries + 1} attempts)" if retries else ""
        raise ProviderError(reason + suffix)

    def _content(self, response: Any) -> str:
        try:
            data = response.json()
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            excerpt = self._mask(" ".join(response.text.split())[:200])
            raise ProviderError(
                f"the response of {self.url} is not a chat completion: {excerpt}"
            ) from None
        if not isinstance(content, str):
            # an invalid answer, not a provider failure: let validation reject it
            return "" if content is None else str(content)
        return content
