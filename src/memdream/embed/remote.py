"""Any OpenAI-compatible /v1/embeddings endpoint: Ollama, vLLM, llama.cpp server, hosted APIs.

    [embedder]
    name = "openai"
    base_url = "http://127.0.0.1:11434/v1"     # Ollama
    model = "nomic-embed-text"
    api_key_env = "MEMDREAM_EMBEDDER_API_KEY"  # optional; the key itself never goes in the file
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memdream.embed.embedder import Kind
from memdream.errors import ConfigError, MemdreamError

if TYPE_CHECKING:
    import numpy

TIMEOUT_S = 30.0
RETRIES = 3  # attempts on connection errors and 5xx/429, with exponential backoff
BATCH = 64


class EmbeddingError(MemdreamError):
    exit_code = 1


class OpenAICompatEmbedder:
    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = TIMEOUT_S) -> None:
        if not base_url or not model:
            raise ConfigError(
                "the openai embedder needs base_url and model",
                'set [embedder] base_url = "http://127.0.0.1:11434/v1" and model = "nomic-embed-text" in memdream.toml',
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.model_id = f"openai:{self.base_url}:{model}"
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"])[0].shape[0])
        return self._dim

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> numpy.ndarray:
        import numpy as np

        out = []
        for start in range(0, len(texts), BATCH):
            out.extend(self._post(list(texts[start : start + BATCH])))
        mat = np.asarray(out, dtype=np.float32).reshape(len(texts), -1) if out else np.zeros((0, self._dim or 0), np.float32)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        mat = mat / norms
        if mat.shape[0]:
            self._dim = mat.shape[1]
        return mat

    def _post(self, batch: list[str]) -> list[list[float]]:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        url = f"{self.base_url}/embeddings"
        last: Exception | None = None
        for attempt in range(RETRIES):
            try:
                r = httpx.post(url, json={"model": self.model, "input": batch}, headers=headers, timeout=self.timeout)
                if r.status_code == 429 or r.status_code >= 500:
                    raise httpx.HTTPStatusError(f"HTTP {r.status_code}", request=r.request, response=r)
                if r.status_code >= 400:
                    raise EmbeddingError(
                        f"the embeddings endpoint {url} answered HTTP {r.status_code}: {r.text[:200]}",
                        "check [embedder] model and the API key",
                    )
                data = r.json()["data"]
                return [d["embedding"] for d in sorted(data, key=lambda d: d.get("index", 0))]
            except (httpx.TransportError, httpx.HTTPStatusError) as exc:
                last = exc
                time.sleep(min(4.0, 0.25 * 2**attempt))
            except (KeyError, TypeError, ValueError) as exc:
                raise EmbeddingError(f"unexpected answer from {url}: {exc}", "is base_url an OpenAI-compatible /v1 endpoint?") from exc
        raise EmbeddingError(f"cannot reach the embeddings endpoint {url}: {last}", "is the server running? check [embedder] base_url")


def from_config(table: dict) -> OpenAICompatEmbedder:
    key_env = table.get("api_key_env", "MEMDREAM_EMBEDDER_API_KEY")
    return OpenAICompatEmbedder(str(table.get("base_url", "")), str(table.get("model", "")), os.environ.get(key_env) or None)
