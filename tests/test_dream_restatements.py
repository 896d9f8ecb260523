"""Dreaming that reaches restatements: with an embedder (the fake one, through the same
`embedder=` seam production uses), the light phase folds lines that say one fact in other
words, never two facts; the deep phase groups by embeddings."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from memdream.config import load_config
from memdream.dream.deep import clusters, dense_links
from memdream.dream.plan import Plan
from memdream.embed.fake import HashEmbedder
from memdream.memory import Memory
from memdream.model.entry import END_MERGED


def _corpus():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("memdream_fact_pairs", Path(__file__).parent / "data" / "fact_pairs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def open_mem(vault: Path, clock, embedder=None) -> Memory:  # type: ignore[no-untyped-def]
    m = Memory(load_config(vault, "me", "main", env={}), clock, embedder=embedder)
    m.vault.init()
    return m


def merged(mem: Memory) -> dict[str, str]:
    """text of each line the light phase superseded -> text of the line that took its place."""
    every = {e.id: e for e in mem.list(include_ended=True)}
    return {e.text: every[e.superseded_by].text for e in every.values() if e.end == END_MERGED and e.superseded_by in every}


def test_light_folds_a_restatement_into_the_line_that_says_more(tmp_path: Path, clock) -> None:
    # Written before an embedder was configured (or typed by hand): the write path did not see it.
    with open_mem(tmp_path / "v", clock) as before:
        short = before.write("我每天下班后去健身房练一个小时")
        longer = before.write("下班后我每天去健身房练上一个小时")
        assert longer.action == "added"
    mem = open_mem(tmp_path / "v", clock, HashEmbedder(256))
    mem.dream(["light"])
    assert merged(mem) == {short.entry.text: longer.entry.text} or merged(mem) == {longer.entry.text: short.entry.text}
    texts = {e.text for e in mem.list()}
    assert len(texts) == 1
    # The text of the kept line is the one written, never rewritten.
    assert texts <= {short.entry.text, longer.entry.text}


def test_without_an_embedder_nothing_is_folded_by_meaning(tmp_path: Path, clock) -> None:
    mem = open_mem(tmp_path / "v", clock)
    mem.write("我每天下班后去健身房练一个小时")
    mem.write("下班后我每天去健身房练上一个小时")
    mem.dream(["light"])
    assert len(mem.list()) == 2


def test_light_never_folds_a_contradiction_of_the_corpus(tmp_path: Path, clock) -> None:
    pairs = _corpus().CONTRADICTIONS
    mem = open_mem(tmp_path / "v", clock, HashEmbedder(256))
    joined: dict[str, str] = {}  # a text the write path folded -> the line it joined
    for _, a, b in pairs:
        for text in (a, b):
            out = mem.write(text, subject="")
            if out.action == "duplicate":
                joined[text] = out.entry.text
    mem.dream(["light"])
    folds = merged(mem)
    bad = [(a, b) for _, a, b in pairs if b in (folds.get(a), joined.get(a)) or a in (folds.get(b), joined.get(b))]
    assert bad == []
    # Lines of different pairs may fold (这家店周一营业 into 这家店周五到周一营业 says it
    # again; "I'm not allergic to peanuts" joins "I am not allergic to peanuts"), but never
    # into a line that contradicts them.
    from memdream.model.similarity import contradiction

    both = list(folds.items()) + list(joined.items())
    assert [(a, b) for a, b in both if contradiction(a, b) or contradiction(b, a)] == []
    current = {e.text for e in mem.list()}
    ended = {e.text for e in mem.list(include_ended=True)} - current
    # Every side of every pair is current, folded into a line that does not contradict it, or
    # ended by a later line (a change supersedes: "We moved from Paris to Berlin").
    lost = [t for _, a, b in pairs for t in (a, b) if t not in current and t not in folds and t not in joined and t not in ended]
    assert lost == []
    assert sum(a in current and b in current for _, a, b in pairs) >= 0.95 * len(pairs)


def test_deep_groups_come_from_embeddings(tmp_path: Path, clock) -> None:
    from datetime import timedelta

    texts = [
        "我每天下班后去健身房练一个小时",
        "下班后我每天去健身房练上一个小时",
        "My sister Anna moved to Lisbon in May",
        "Anna, my sister, moved to Lisbon this May",
        "I live in Shanghai",
        "I live in Singapore",
    ]
    with open_mem(tmp_path / "v", clock) as before:  # written before the embedder was configured
        for t in texts:
            before.write(t, type="fact", subject="")
    mem = open_mem(tmp_path / "v", clock, HashEmbedder(256))
    clock.advance(days=6)
    mem.sync()
    rows = mem.index.db.execute("SELECT e.line, e.layer, f.tok, e.rowid FROM entries e JOIN entries_fts f ON f.rowid = e.rowid WHERE e.vt IS NULL").fetchall()
    from memdream.store.format import parse_line

    items = [(parse_line(line, layer), set(tok.split())) for line, layer, tok, _ in rows]
    dense = dense_links(mem.core, items, [r[3] for r in rows], Plan("deep"))
    assert dense is not None
    groups = [sorted(items[i][0].text for i in g) for g in clusters(items, frozenset(), dense)]
    assert sorted(texts[:2]) in groups
    assert not any({"I live in Shanghai", "I live in Singapore"} <= set(g) for g in groups)


def test_the_write_path_folds_a_restatement_by_meaning(tmp_path: Path, clock) -> None:
    mem = open_mem(tmp_path / "v", clock, HashEmbedder(256))
    first = mem.write("我每天下班后去健身房练一个小时")
    again = mem.write("下班后我每天去健身房练上一个小时")
    assert again.action in ("duplicate", "superseded")
    if again.action == "superseded":  # the one that says more stays, the other is ended, not lost
        assert [e.id for e in again.superseded] == [first.entry.id]
    assert len(mem.list()) == 1 and len(mem.list(include_ended=True)) == 2 - (again.action == "duplicate")


def test_the_write_path_with_an_embedder_never_folds_a_contradiction(tmp_path: Path, clock) -> None:
    pairs = _corpus().CONTRADICTIONS
    mem = open_mem(tmp_path / "v", clock, HashEmbedder(256))
    folded = []
    for _, a, b in pairs:
        mem.write(a)
        out = mem.write(b)
        if out.action == "duplicate" and out.entry.text == a:
            folded.append((a, b))
        ended_by_meaning = [e.text for e in out.superseded if e.text == a and not out.entry.subject]
        folded += [(a, b) for _ in ended_by_meaning]
    assert folded == []


def test_the_restatement_cosine_is_the_embedders_own_or_the_configured_one(tmp_path: Path, clock) -> None:
    from memdream.model.similarity import RESTATEMENT_COSINE, restatement_cosine

    pair = ("我每天下班后去健身房练一个小时", "下班后我每天去健身房练上一个小时")
    with open_mem(tmp_path / "v", clock) as before:
        for text in pair:
            before.write(text)
    # A cosine set above what the pair reaches (an embedder whose cosines sit high, like e5):
    # the light phase folds nothing, at write or at night.
    (tmp_path / "v" / "memdream.toml").write_text("[embedder]\nrestatement_cosine = 1.0\n", encoding="utf-8")
    strict = open_mem(tmp_path / "v", clock, HashEmbedder(256))
    assert restatement_cosine(strict.core.embedder, strict.config.embedder_options) == 1.0
    strict.dream(["light"])
    assert merged(strict) == {} and len(strict.list()) == 2
    # Unset: the embedder's own figure, else the measured default.
    emb = HashEmbedder(256)
    assert restatement_cosine(emb) == RESTATEMENT_COSINE
    emb.restatement_cosine = 0.5  # type: ignore[attr-defined]
    assert restatement_cosine(emb, {}) == 0.5


def test_a_restatement_cosine_out_of_range_is_refused_with_the_file_to_edit(tmp_path: Path) -> None:
    import pytest

    from memdream.errors import ConfigError

    (tmp_path / "memdream.toml").write_text("[embedder]\nrestatement_cosine = 1.5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, "me", "main", env={})
    assert "restatement_cosine" in err.value.message and "memdream.toml" in err.value.hint


class MeaningEmbedder:
    """A scripted embedder (the edge fake): texts listed in one group of `same` get one vector,
    every other text its own (the hash embedder's), as a model that knows which texts mean the
    same would."""

    dim = 256
    model_id = "test:meaning:256"

    def __init__(self, same: list[list[str]]) -> None:
        self.base = HashEmbedder(self.dim)
        self.group = {t: i for i, texts in enumerate(same) for t in texts}

    def embed(self, texts, kind="document"):  # type: ignore[no-untyped-def]
        import numpy as np

        out = np.array(self.base.embed(list(texts), kind), dtype=np.float32)
        for row, t in enumerate(texts):
            if t in self.group:
                out[row] = 0.0
                out[row, self.group[t]] = 1.0
        return out


GINA = (
    "Gina: Thanks, Jon! Appreciate your offer. Since I lost my job at Door Dash, things have been tough. "
    "But here's some good news - I've got something to share!"
)
GINA_SAID = "Gina: Since I lost my job at Door Dash, things have been tough."  # one sentence, said by her
XIAOMEI = "小美：谢谢你！最近挺忙的。我上个月从美团离职了，现在在字节跳动上班。周末想去爬山放松一下。"
XIAOMEI_SAID = "小美: 我上个月从美团离职了，现在在字节跳动上班。"


@pytest.mark.parametrize(
    ("message", "sentence", "restated"),
    [
        (GINA, GINA_SAID, "Things have been tough for Gina since she lost her job at Door Dash"),
        (XIAOMEI, XIAOMEI_SAID, "小美上个月从美团离职，如今在字节跳动上班"),
    ],
)
def test_the_write_path_folds_a_restatement_of_one_sentence_of_a_message(tmp_path: Path, clock, message: str, sentence: str, restated: str) -> None:
    # Far from the whole message, close to one of its sentences: the message is refreshed.
    mem = open_mem(tmp_path / "v", clock, MeaningEmbedder([[sentence, restated]]))
    first = mem.write(message)
    again = mem.write(restated)
    assert again.action == "duplicate" and again.entry.id == first.entry.id
    assert [e.text for e in mem.list()] == [message]


@pytest.mark.parametrize(
    ("message", "sentence", "other"),
    [
        # a contradiction of the sentence, however close an embedder puts it
        (GINA, GINA_SAID, "Gina never lost her job at Door Dash, things have been tough"),
        (XIAOMEI, XIAOMEI_SAID, "小美上个月没有从美团离职，现在在字节跳动上班"),
        # says more than the sentence: a clause of its own
        (GINA, GINA_SAID, "Since Gina lost her job at Door Dash, things have been tough, and she moved to Ohio"),
        # another person's
        (GINA, GINA_SAID, "Jon: Since I lost my job at Door Dash, things have been tough."),
    ],
)
def test_a_sentence_is_not_folded_into_when_the_text_says_otherwise(tmp_path: Path, clock, message: str, sentence: str, other: str) -> None:
    mem = open_mem(tmp_path / "v", clock, MeaningEmbedder([[sentence, other]]))
    mem.write(message)
    out = mem.write(other)
    assert out.action == "added"
    assert sorted(e.text for e in mem.list()) == sorted([message, other])
