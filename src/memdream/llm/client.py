"""The LLM seam: a small protocol, and the OpenAI-compatible client that serves Ollama, vLLM,
llama.cpp server and hosted APIs unchanged.

Everything that uses a model (dream phases, reflection, ambiguous knowledge checks) depends on
the `LLM` protocol, never on a concrete client; tests pass a client pointed at a real HTTP
server on loopback with scripted replies (memdream.llm.fake), and `make test-llm` points it
at a real llama.cpp server.

What the client does on a real server:
- JSON is asked for in the strongest form the server takes: a JSON schema in
  `response_format` (`{"type": "json_schema"}`: OpenAI, vLLM, Ollama, llama.cpp's own server),
  else `{"type": "json_object", "schema": ...}` (llama-cpp-python's form of the same), else
  `{"type": "json_object"}`, else plain text from which the JSON is extracted. A server that rejects one form is asked again with the next at once, and the
  form that worked is remembered for the process (per server and model).
- Only what is safe to repeat is retried: a refused connection, 429 and 503. A read timeout is
  not: a single-slot local server keeps generating the abandoned request, and a second copy
  would only queue behind it. The next request of the process is given that much longer
  (once more the abandoned request's timeout), since it may have to wait for it. Any other error status is reported with the server's own words.
- The read timeout grows with `max_tokens` (a phase that may write more waits longer).
- `Completion.seconds` and `LLMError.seconds` count every attempt, backoffs included.
- An answer cut off at `max_tokens` (finish_reason "length") is reported as such.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from memdream.errors import ConfigError, MemdreamError

TIMEOUT_S = 60.0  # [llm] timeout: the read timeout of an answer of up to ...
TIMEOUT_TOKENS = 500  # ... this many tokens; a request that allows more waits proportionally longer
CONNECT_TIMEOUT_S = 10.0
RETRIES = 3  # attempts on refused connections, 429 and 503, with exponential backoff
BACKOFF_S = 0.5
RETRY_STATUS = frozenset({429, 503})

# The forms of JSON output, strongest first, and the first one each server took (per process).
FORMATS = ("json_schema", "json_object+schema", "json_object", "text")
_format_ok: dict[str, int] = {}
_format_lock = threading.Lock()


class LLMError(MemdreamError):
    """The model could not be reached or answered nonsense; callers fall back, never crash.

    `seconds`: the time spent on it, every attempt counted. `answered`: the model did answer,
    but the answer was unusable (cut off, not JSON), as opposed to an unreachable or failing server."""

    exit_code = 1

    def __init__(self, message: str, hint: str = "", seconds: float = 0.0, answered: bool = False) -> None:
        super().__init__(message, hint)
        self.seconds = seconds
        self.answered = answered
        self.tokens: tuple[int, int] = (0, 0)


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
    seconds: float  # every attempt, backoffs included
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = ""  # "stop", "length" (cut off at max_tokens), "tool_calls", ...
    max_tokens: int = 0

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"

    def json(self) -> Any:
        """The reply parsed as JSON: the first JSON object or list in it (a ```json fence,
        leading or trailing prose, raw newlines in strings are tolerated). A reply cut off at max_tokens is reported
        as that, not as bad JSON."""
        t = self.text.strip()
        if t.startswith("```"):
            t = t.strip("`")
            t = t[t.find("\n") + 1 :] if "\n" in t else t
        start = min((i for i in (t.find("{"), t.find("[")) if i >= 0), default=-1)
        if start > 0:
            t = t[start:]
        try:
            # strict=False: a raw newline inside a string (small models write them, even under a
            # grammar) is read as the escaped one would be; the cage checks the text either way.
            return json.JSONDecoder(strict=False).raw_decode(t)[0] if start >= 0 else json.loads(t, strict=False)
        except ValueError as exc:
            if self.truncated:
                raise LLMError(
                    f"the model ran out of tokens: its answer was cut off at max_tokens={self.max_tokens or '?'} before the JSON was complete",
                    "the phase is skipped; a model that answers more briefly (or a larger [llm] model) fixes it",
                    self.seconds, answered=True,
                ) from exc
            raise LLMError(f"the model's reply is not valid JSON: {exc}", "the phase is skipped; check the model", self.seconds, answered=True) from exc


class LLM(Protocol):
    model_id: str

    def complete(
        self,
        messages: list[dict[str, Any]],
        json_mode: bool = False,
        max_tokens: int | None = None,
        tools: list[dict] | None = None,
        schema: dict[str, Any] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
    ) -> Completion: ...


def _rejects_format(status: int, body: str) -> bool:
    """Whether an error answer says the server does not take the response_format it was sent."""
    if status not in (400, 422, 500, 501):
        return False
    low = body.lower()
    return "response_format" in low or "json_schema" in low or "json_object" in low


class OpenAICompatLLM:
    """POST {base_url}/chat/completions (see the module docstring for what it does on errors)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = TIMEOUT_S, retries: int = RETRIES) -> None:
        if not base_url or not model:
            raise ConfigError("an LLM needs base_url and model", "set [llm] base_url and model in memdream.toml, or MEMDREAM_LLM_BASE_URL and MEMDREAM_LLM_MODEL")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.retries = max(1, retries)
        self.model_id = f"{self.base_url}:{model}"
        self._client = None  # one httpx.Client, made on first use: connections and TLS set-up are reused
        self._busy_until = 0.0  # a request abandoned at its read timeout may keep the server busy until then

    def read_timeout(self, max_tokens: int | None) -> float:
        """The read timeout of one request: [llm] timeout for up to TIMEOUT_TOKENS tokens of
        answer, proportionally more for a larger max_tokens (the default 60 s then allows
        about 8 tokens a second, below a small model's speed on two CPU cores)."""
        return self.timeout * max(1.0, (max_tokens or 0) / TIMEOUT_TOKENS)

    @property
    def json_format(self) -> str:
        """The strongest JSON form this server took so far in this process."""
        return FORMATS[_format_ok.get(self.model_id, 0)]

    def _response_format(self, level: int, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        form = FORMATS[level]
        if form == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
        if form == "json_object+schema":
            return {"type": "json_object", "schema": schema}
        if form == "json_object":
            return {"type": "json_object"}
        return None

    def complete(
        self,
        messages: list[dict[str, Any]],
        json_mode: bool = False,
        max_tokens: int | None = None,
        tools: list[dict] | None = None,
        schema: dict[str, Any] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
    ) -> Completion:
        """One chat completion. `json_mode` asks for JSON (constrained by `schema` where the
        server can); `tools` (OpenAI function specs) lets the model answer with tool calls,
        `tool_choice` "auto" unless given (some servers take a missing one as "none")."""
        import httpx

        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout)
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
        if max_tokens:
            body["max_tokens"] = max_tokens
        level = -1
        if json_mode:
            level = max(_format_ok.get(self.model_id, 0), 0 if schema else FORMATS.index("json_object"))
            fmt = self._response_format(level, schema)
            if fmt:
                body["response_format"] = fmt
        if tools:
            body["tools"] = tools
            body["tool_choice"] = tool_choice or "auto"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        url = f"{self.base_url}/chat/completions"
        t0 = time.monotonic()
        read = self.read_timeout(max_tokens) + max(0.0, self._busy_until - t0)
        timeout = httpx.Timeout(read, connect=min(CONNECT_TIMEOUT_S, read))
        last = ""
        attempt = 0
        while attempt < self.retries:
            try:
                r = self._client.post(url, json=body, headers=headers, timeout=timeout)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # nothing reached the server: safe to repeat
                last = f"{type(exc).__name__}: {exc}"
                attempt += 1
                if attempt < self.retries:
                    time.sleep(BACKOFF_S * 2 ** (attempt - 1))
                continue
            except httpx.TimeoutException as exc:
                self._busy_until = time.monotonic() + read
                raise LLMError(
                    f"{url} gave no answer within {read:g} s; it was not asked again (a local server keeps working on the request, and a second copy would wait behind it)",
                    "raise [llm] timeout in memdream.toml, or use a faster model",
                    time.monotonic() - t0,
                ) from exc
            except httpx.HTTPError as exc:  # the connection broke after the request went out
                raise LLMError(
                    f"{url} broke off the connection without an answer ({type(exc).__name__}: {exc}); it was not asked again",
                    "check the model server's log: did it crash?",
                    time.monotonic() - t0,
                ) from exc
            if level >= 0 and "response_format" in body and _rejects_format(r.status_code, r.text):
                level += 1  # the next form, at once: this is no transient failure
                with _format_lock:
                    _format_ok[self.model_id] = max(_format_ok.get(self.model_id, 0), level)
                fmt = self._response_format(level, schema)
                if fmt:
                    body["response_format"] = fmt
                else:
                    body.pop("response_format")
                continue
            if r.status_code in RETRY_STATUS:
                last = f"HTTP {r.status_code}: {r.text[:200]}"
                attempt += 1
                if attempt < self.retries:
                    time.sleep(BACKOFF_S * 2 ** (attempt - 1))
                continue
            if r.status_code >= 400:
                hint = (
                    "check [llm] model and the API key" if r.status_code in (401, 403, 404)
                    else "the server refused this request; its answer above says why"
                )  # fmt: skip
                raise LLMError(f"{url} answered HTTP {r.status_code}: {r.text[:500]}", hint, time.monotonic() - t0)
            try:
                data = r.json()
                choice = data["choices"][0]
                message = choice["message"]
                text = message.get("content") or ""
                usage = data.get("usage") or {}
                calls = tuple(
                    ToolCall(str(c.get("id") or f"call{i}"), str(c["function"]["name"]), str(c["function"].get("arguments") or "{}"))
                    for i, c in enumerate(message.get("tool_calls") or [])
                )
            except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
                raise LLMError(f"unexpected answer from {url}: {exc}", "is base_url an OpenAI-compatible /v1 endpoint?", time.monotonic() - t0) from exc
            return Completion(
                text,
                int(usage.get("prompt_tokens") or 0),
                int(usage.get("completion_tokens") or 0),
                str(data.get("model") or self.model),
                time.monotonic() - t0,
                calls,
                str(choice.get("finish_reason") or ""),
                int(max_tokens or 0),
            )
        raise LLMError(f"no answer from {url} after {self.retries} attempts ({last})", "is the model server running? check [llm] base_url", time.monotonic() - t0)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def load_llm(config: Any) -> OpenAICompatLLM | None:
    """The configured model, or None when none is configured (every LLM phase is then skipped)."""
    if not config.llm_configured:
        return None
    return OpenAICompatLLM(config.llm_base_url, config.llm_model, config.llm_api_key or None, config.llm_timeout)
