"""The LLM seam: a small protocol, and the OpenAI-compatible client that serves Ollama, vLLM,
llama.cpp server and hosted APIs unchanged.

Everything that uses a model (dream phases, reflection, ambiguous knowledge checks) depends on
the `LLM` protocol, never on a concrete client; tests pass a client pointed at a real HTTP
server on loopback with scripted replies (memdream.llm.fake).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Protocol

from memdream.errors import ConfigError, MemdreamError

TIMEOUT_S = 60.0
RETRIES = 3  # attempts on connection errors, timeouts, 429 and 5xx, with exponential backoff
BACKOFF_S = 0.5


class LLMError(MemdreamError):
    """The model could not be reached or answered nonsense; callers fall back, never crash."""

    exit_code = 1


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it (may be malformed: the caller checks)


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str
    seconds: float
    tool_calls: tuple[ToolCall, ...] = ()

    def json(self) -> Any:
        """The reply parsed as JSON (a ```json fence or leading prose is tolerated)."""
        t = self.text.strip()
        if t.startswith("```"):
            t = t.strip("`")
            t = t[t.find("\n") + 1 :] if "\n" in t else t
        start = min((i for i in (t.find("{"), t.find("[")) if i >= 0), default=-1)
        if start > 0:
            t = t[start:]
        try:
            return json.loads(t)
        except ValueError as exc:
            raise LLMError(f"the model's reply is not valid JSON: {exc}", "the phase is skipped; check the model") from exc


class LLM(Protocol):
    model_id: str

    def complete(
        self, messages: list[dict[str, Any]], json_mode: bool = False, max_tokens: int | None = None, tools: list[dict] | None = None
    ) -> Completion: ...


class OpenAICompatLLM:
    """POST {base_url}/chat/completions. JSON mode is asked for when wanted; a server that
    rejects `response_format` is asked again without it (and not asked again later)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = TIMEOUT_S, retries: int = RETRIES) -> None:
        if not base_url or not model:
            raise ConfigError("an LLM needs base_url and model", "set [llm] base_url and model in memdream.toml, or MEMDREAM_LLM_BASE_URL and MEMDREAM_LLM_MODEL")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.retries = max(1, retries)
        self.model_id = f"{self.base_url}:{model}"
        self._json_mode_ok = True
        self._client = None  # one httpx.Client, made on first use: connections and TLS set-up are reused

    def complete(
        self, messages: list[dict[str, Any]], json_mode: bool = False, max_tokens: int | None = None, tools: list[dict] | None = None
    ) -> Completion:
        """One chat completion. `tools` (OpenAI function specs) lets the model answer with tool calls."""
        import httpx

        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout)
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
        if max_tokens:
            body["max_tokens"] = max_tokens
        if json_mode and self._json_mode_ok:
            body["response_format"] = {"type": "json_object"}
        if tools:
            body["tools"] = tools
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        url = f"{self.base_url}/chat/completions"
        last: str = ""
        for attempt in range(self.retries):
            start = time.monotonic()
            try:
                r = self._client.post(url, json=body, headers=headers, timeout=self.timeout)
            except httpx.HTTPError as exc:  # connection refused, timeout, ...
                last = f"{type(exc).__name__}: {exc}"
                time.sleep(BACKOFF_S * 2**attempt)
                continue
            if r.status_code == 400 and "response_format" in body and "response_format" in r.text:
                self._json_mode_ok = False
                body.pop("response_format")
                continue
            if r.status_code == 429 or r.status_code >= 500:
                last = f"HTTP {r.status_code}"
                time.sleep(BACKOFF_S * 2**attempt)
                continue
            if r.status_code >= 400:
                raise LLMError(f"{url} answered HTTP {r.status_code}: {r.text[:200]}", "check [llm] model and the API key")
            try:
                data = r.json()
                message = data["choices"][0]["message"]
                text = message.get("content") or ""
                usage = data.get("usage") or {}
                calls = tuple(
                    ToolCall(str(c.get("id") or f"call{i}"), str(c["function"]["name"]), str(c["function"].get("arguments") or "{}"))
                    for i, c in enumerate(message.get("tool_calls") or [])
                )
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise LLMError(f"unexpected answer from {url}: {exc}", "is base_url an OpenAI-compatible /v1 endpoint?") from exc
            return Completion(
                text,
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
                str(data.get("model") or self.model),
                time.monotonic() - start,
                calls,
            )
        raise LLMError(f"no answer from {url} after {self.retries} attempts ({last})", "is the model server running? check [llm] base_url")


    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def load_llm(config: Any) -> OpenAICompatLLM | None:
    """The configured model, or None when none is configured (every LLM phase is then skipped)."""
    if not config.llm_base_url and not config.llm_model:
        return None
    return OpenAICompatLLM(config.llm_base_url, config.llm_model, config.llm_api_key or None, config.llm_timeout)
