"""A deterministic, dependency-light embedder for tests: hashed character n-grams.

Not a model: texts that share characters and character pairs get close vectors, in
Chinese and English alike, so tests can exercise the dense path without a model package.
Only numpy is needed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from memdream.embed.embedder import Kind
from memdream.embed.local import check_texts, l2_normalize
from memdream.model import lazyre as re

if TYPE_CHECKING:
    import numpy

_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=65536)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


def features(text: str) -> list[str]:
    """Character unigrams and bigrams of the lower-cased text, spaces collapsed (word edges kept)."""
    t = " " + _SPACE.sub(" ", text.lower()).strip() + " "
    grams = [c for c in t if c != " "]
    grams.extend(t[i : i + 2] for i in range(len(t) - 1) if t[i : i + 2] != "  ")
    return grams


class HashEmbedder:
    """Bag of hashed character unigrams + bigrams, signed, L2-normalised. Same text, same vector."""

    def __init__(self, dim: int = 64) -> None:
        if dim < 2:
            raise ValueError("dim must be >= 2")
        self.dim = dim
        self.model_id = f"hash:1:char-1-2gram-{dim}"

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self.dim})"

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> numpy.ndarray:
        import numpy as np

        items = check_texts(texts, kind)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        for row, text in enumerate(items):
            for f in features(text):
                col, sign = _slot(f, self.dim)
                out[row, col] += sign
        return l2_normalize(out)
