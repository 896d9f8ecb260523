"""bench/sets: the suite's data sets load, are deterministic, and every gold id names a memory.

The public data lives outside the repository (../shared/bench); without it these tests skip.
The committed question files are checked on their own, data or not.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.sets import SHARED  # noqa: E402

HAVE_MB = (SHARED / "memorybank" / "cn" / "memory_bank_cn.json").is_file() and (
    SHARED / "memorybank" / "en" / "memory_bank_en.json"
).is_file()
needs_data = pytest.mark.skipif(not HAVE_MB, reason=f"public data absent ({SHARED}/memorybank)")


def test_memorybank_zh_question_file_is_well_formed():
    spec = json.loads((ROOT / "bench" / "sets" / "memorybank_zh_questions.json").read_text(encoding="utf-8"))
    cats = {q["category"] for q in spec}
    assert cats == {"probe", "lexical", "paraphrase", "short"}
    own = [q for q in spec if q["category"] != "probe"]
    assert len(own) >= 150
    for q in spec:
        assert q["gold"], q
        for g in q["gold"]:
            user, date, turn, part = g.split("/")
            assert user == q["user"] and part in ("q", "r") and turn.isdigit() and date.startswith("2023-"), g
        if q["category"] == "probe":
            assert isinstance(q["probe"], int) and "question" not in q  # the text stays in the data
        else:
            assert q["question"].strip()
    probes = [(q["user"], q["probe"]) for q in spec if q["category"] == "probe"]
    assert len(probes) == len(set(probes))


def _loads_alike_twice_with_every_gold_id(mod):  # type: ignore[no-untyped-def]
    """The set `mod` loads: the same twice, every memory id once, every gold id a memory of the
    question's own conversation, every memory said before its conversation's questions."""
    a, b = mod.load(), mod.load()
    assert [m.id for m in a.memories] == [m.id for m in b.memories]
    assert [q.text for q in a.questions] == [q.text for q in b.questions]
    ids = {m.id for m in a.memories}
    assert len(ids) == len(a.memories)
    for q in a.questions:
        assert set(q.gold) <= ids
        assert all(i.startswith(q.conv + "/") for i in q.gold)
    for m in a.memories:
        assert m.at.tzinfo is not None and m.at < a.asked_at[m.conv]
    return a


@needs_data
def test_memorybank_zh_loads_deterministically_with_every_gold_id():
    mod = importlib.import_module("bench.sets.memorybank_zh")
    a = _loads_alike_twice_with_every_gold_id(mod)
    assert a.metric == "recall" and a.k == 5 and a.lang == "zh"
    assert len(a.questions) >= 250 and sum(q.category == "probe" for q in a.questions) == 100


@needs_data
@pytest.mark.parametrize("name", ["memorybank_zh", "memorybank_en"])
def test_memorybank_fails_loudly_on_a_gold_id_that_names_no_message(tmp_path, name):
    mod = importlib.import_module(f"bench.sets.{name}")
    spec = json.loads(mod.QUESTIONS.read_text(encoding="utf-8"))
    spec[0]["gold"] = [spec[0]["user"] + "/2023-04-27/99/q"]
    bad = tmp_path / "questions.json"
    bad.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="gold ids missing"):
        mod.load(questions_file=bad)


def test_memorybank_en_question_file_is_well_formed():
    spec = json.loads((ROOT / "bench" / "sets" / "memorybank_en_questions.json").read_text(encoding="utf-8"))
    cats = {q["category"] for q in spec}
    assert cats == {"probe", "lexical", "paraphrase", "short"}
    own = [q for q in spec if q["category"] != "probe"]
    assert len(own) >= 100 and len({q["user"] for q in own}) == 15
    for q in spec:
        assert q["gold"] and q["user"] == q["user"].strip(), q
        for g in q["gold"]:
            user, date, turn, part = g.split("/")
            assert user == q["user"] and part in ("q", "r") and turn.isdigit() and date.startswith("2023-"), g
        if q["category"] == "probe":
            assert isinstance(q["probe"], int) and "question" not in q  # the text stays in the data
        else:
            assert q["question"].strip() and 1 <= len(q["gold"]) <= 3
    probes = [(q["user"], q["probe"]) for q in spec if q["category"] == "probe"]
    assert len(probes) == len(set(probes)) == 99
    assert ("John Zhang", 4) not in probes  # its day (2023-05-05) is empty in the English data


@needs_data
def test_memorybank_en_loads_deterministically_with_every_gold_id():
    mod = importlib.import_module("bench.sets.memorybank_en")
    a = _loads_alike_twice_with_every_gold_id(mod)
    assert a.name == "memorybank_en" and a.metric == "recall" and a.k == 5 and a.lang == "en"
    assert len(a.asked_at) == 15 and all(u == u.strip() for u in a.asked_at)
    assert len(a.questions) >= 200 and sum(q.category == "probe" for q in a.questions) == 99
    # same days, same clock as the Chinese set: user i of one is user i of the other
    zh = importlib.import_module("bench.sets.memorybank_zh").load()
    assert list(a.asked_at.values()) == list(zh.asked_at.values())


def test_filler_bank_is_well_formed():
    mod = importlib.import_module("bench.sets.filler")
    bank = mod.load_bank()
    langs = [e["lang"] for e in bank]
    assert len(bank) >= 80 and abs(langs.count("en") - langs.count("zh")) <= 4
    for e in bank:
        assert e["topic"] and e["statement"] != e["indirect"]


@needs_data
def test_filler_plants_each_statement_once_and_is_deterministic_per_seed():
    mod = importlib.import_module("bench.sets.filler")
    bank = {e["statement"]: e for e in mod.load_bank()}
    a, b, c = mod.load(seed=0), mod.load(seed=0), mod.load(seed=1)
    assert [(m.id, m.text) for m in a.memories] == [(m.id, m.text) for m in b.memories]
    assert [(m.id, m.text) for m in a.memories] != [(m.id, m.text) for m in c.memories]
    assert a.metric == "hit" and a.k == 5 and len(a.asked_at) >= 40
    by_id = {m.id: m for m in a.memories}
    for conv in a.asked_at:
        mine = [m for m in a.memories if m.conv == conv]
        planted = [m for m in mine if m.text in bank]
        assert len(mine) >= 240 and 3 <= len(planted) <= 6
        assert len({bank[m.text]["topic"] for m in planted}) == len(planted)
        assert all(m.role == "user" and m.at < a.asked_at[conv] for m in planted)
    for q in a.questions:
        (gold,) = q.gold
        entry = bank[by_id[gold].text]
        assert by_id[gold].conv == q.conv
        assert q.text == (entry["indirect"] if q.category == "indirect" else entry["direct"])


def test_changing_fact_bank_covers_both_languages():
    mod = importlib.import_module("bench.sets.changing")
    facts = mod.load_facts()
    assert set(facts) == {"en", "zh"} and set(facts["en"]) == set(facts["zh"])
    assert len(facts["en"]) >= 10


@needs_data
def test_changing_puts_every_current_version_after_all_old_ones():
    mod = importlib.import_module("bench.sets.changing")
    a, b = mod.load(seed=0), mod.load(seed=0)
    assert [(m.id, m.text, m.at) for m in a.memories] == [(m.id, m.text, m.at) for m in b.memories]
    assert a.metric == "current" and a.k == 5 and len(a.asked_at) >= 40
    by_id = {m.id: m for m in a.memories}
    langs = {q.conv.split("-")[1] for q in a.questions}
    assert langs == {"en", "zh"}
    per_conv: dict[str, int] = {}
    for q in a.questions:
        per_conv[q.conv] = per_conv.get(q.conv, 0) + 1
        assert q.gold and q.old and not set(q.gold) & set(q.old)
        assert all(by_id[i].conv == q.conv and by_id[i].role == "user" for i in q.gold + q.old)
        assert min(by_id[g].at for g in q.gold) > max(by_id[o].at for o in q.old)
        assert max(by_id[g].at for g in q.gold) < a.asked_at[q.conv]
    assert all(5 <= n <= 10 for n in per_conv.values())


@needs_data
@pytest.mark.parametrize("name", ["memorybank_zh", "memorybank_en", "filler", "changing"])
def test_each_set_prints_its_counts_and_examples(name, capsys):
    mod = importlib.import_module(f"bench.sets.{name}")
    assert mod.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{name}: ") and "memories" in out and "questions" in out
    assert out.count("\n- [") == 3 and "gold " in out
