"""Optional dense embeddings for recall: a protocol, local adapters and a test fake.

Importing this package is cheap: adapters import numpy and their model package on first use.
"""

from __future__ import annotations

from typing import Any

from memdream.embed.embedder import (
    EMBEDDERS,
    Embedder,
    EmbedderSpec,
    NoEmbedder,
    available_embedders,
    load_embedder,
)

__all__ = [
    "EMBEDDERS",
    "Embedder",
    "EmbedderSpec",
    "HashEmbedder",
    "NoEmbedder",
    "available_embedders",
    "load_embedder",
]


def __getattr__(name: str) -> Any:
    if name == "HashEmbedder":
        from memdream.embed.fake import HashEmbedder

        return HashEmbedder
    raise AttributeError(f"module 'memdream.embed' has no attribute {name!r}")
