"""Hybrid recall: an embedder changes only relevance; vectors are keyed by model and text hash;
a remote OpenAI-compatible endpoint works and its failure degrades to keyword recall."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from memdream.config import load_config
from memdream.embed.fake import HashEmbedder
from memdream.embed.remote import OpenAICompatEmbedder
from memdream.memory import Memory


def _memory(vault, clock, embedder) -> Memory:
    m = Memory(load_config(vault, "me", "main", env={}), clock, embedder)
    m.vault.init()
    return m


def _fill(m: Memory) -> None:
    for text in ("我对花生过敏", "I am allergic to shellfish", "周五下午有组会", "以后都用中文回我", "My cat is called Mochi"):
        m.remember(text)


def test_embedder_changes_only_relevance(vault, clock) -> None:
    plain = _memory(vault / "a", clock, None)
    hybrid = _memory(vault / "b", clock, HashEmbedder())
    _fill(plain)
    _fill(hybrid)
    q = "过敏 allergic"
    kw = {h.entry.text: h.trace for h in plain.recall(q, k=5)}
    hy = {h.entry.text: h.trace for h in hybrid.recall(q, k=5)}
    assert kw and set(kw) <= set(hy)
    for text, t in kw.items():
        assert t.fusion == "bm25" and t.cosine is None
        assert hy[text].cosine is not None and hy[text].fusion.startswith("weighted")
        assert hy[text].recency == t.recency and hy[text].importance == t.importance
        assert hy[text].bm25 == pytest.approx(t.bm25)


def test_vectors_keyed_by_model_and_text(vault, clock) -> None:
    m = _memory(vault, clock, HashEmbedder(dim=64))
    _fill(m)
    # With an embedder, remember embeds each new text (to find its restatements) and keeps the vector.
    assert m.embed_pending() == 0  # nothing is embedded twice
    m.remember("我喜欢深色主题")
    assert m.embed_pending() == 0
    assert m.index.db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 6
    other = HashEmbedder(dim=32)  # another model: embeds only what it lacks
    m2 = _memory(vault, clock, other)
    assert m2.embed_pending() == 6 and m2.embed_pending() == 0
    models = dict(m.index.db.execute("SELECT model, count(*) FROM vectors GROUP BY model"))
    assert models == {HashEmbedder(dim=64).model_id: 6, other.model_id: 6}
    # A rebuild of the index keeps the vectors: nothing to embed again.
    m.index.rebuild(m.vault.scopes())
    assert m.embed_pending() == 0


def test_dense_candidates_find_what_keywords_miss(vault, clock) -> None:
    m = _memory(vault, clock, HashEmbedder())
    m.remember("Mochi the cat sleeps on the keyboard")
    hits = m.recall("cats sleeping", k=3)
    assert hits and hits[0].text.startswith("Mochi")
    assert hits[0].trace.cosine is not None


class _FakeEmbeddings(BaseHTTPRequestHandler):
    fail = False
    calls = 0

    def do_POST(self) -> None:  # noqa: N802
        type(self).calls += 1
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if type(self).fail:
            self.send_response(500)
            self.end_headers()
            return
        vecs = HashEmbedder(dim=16).embed(body["input"])
        data = [{"index": i, "embedding": (v * 3.0).tolist()} for i, v in enumerate(vecs)]  # not normalised on purpose
        out = json.dumps({"data": list(reversed(data)), "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def fake_server():
    srv = HTTPServer(("127.0.0.1", 0), _FakeEmbeddings)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)  # shutdown() waits one poll
    t.start()
    _FakeEmbeddings.fail = False
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def test_remote_embedder_against_a_loopback_server(vault, clock, fake_server) -> None:
    emb = OpenAICompatEmbedder(fake_server, "fake-embed")
    vecs = emb.embed(["我对花生过敏", "cats"])
    assert vecs.shape == (2, 16) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0)
    assert np.allclose(vecs[0], HashEmbedder(dim=16).embed(["我对花生过敏"])[0], atol=1e-5)  # order restored by index
    m = _memory(vault, clock, emb)
    _fill(m)
    hits = m.recall("过敏", k=3)
    assert hits[0].trace.cosine is not None and m.last_warning == ""


def test_embedder_failure_degrades_to_keywords(vault, clock, fake_server) -> None:
    m = _memory(vault, clock, OpenAICompatEmbedder(fake_server, "fake-embed"))
    _fill(m)
    _FakeEmbeddings.fail = True
    hits = m.recall("过敏", k=3)
    assert hits and hits[0].text == "我对花生过敏"
    assert hits[0].trace.fusion == "bm25" and "embedder unavailable" in m.last_warning


def test_embedder_from_config(tmp_path, clock) -> None:
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "memdream.toml").write_text('[embedder]\nname = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n', encoding="utf-8")
    cfg = load_config(tmp_path / "v", env={})
    assert cfg.embedder == "openai"
    m = Memory(cfg, clock)
    assert isinstance(m.embedder, OpenAICompatEmbedder) and m.embedder.model == "m"
    assert load_config(tmp_path / "v", env={"MEMDREAM_EMBEDDER": "none"}).embedder == "none"
