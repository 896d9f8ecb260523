"""bench/locomo.py: evidence-id normalisation, loading and the recall metrics.

Inline, made-up fixtures only: LoCoMo itself is CC BY-NC and never enters the repository.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "bench" / "locomo.py"
_spec = importlib.util.spec_from_file_location("bench_locomo", _PATH)
locomo = importlib.util.module_from_spec(_spec)
sys.modules["bench_locomo"] = locomo
_spec.loader.exec_module(locomo)


# ---- single ids ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("D1:3", "D1:3"),
        ("D:11:26", "D11:26"),  # stray colon after D
        ("D30:05", "D30:5"),  # zero-padded turn
        ("D07:010", "D7:10"),
        (" D2:4 ", "D2:4"),
        ("D", None),  # no numbers at all
        ("D10", None),
        ("", None),
        ("session 3", None),
    ],
)
def test_normalize_id(raw, expected):
    assert locomo.normalize_id(raw) == expected


# ---- lists of evidence ------------------------------------------------------------------------

VALID = {"D1:1", "D1:2", "D4:4", "D4:6", "D8:6", "D9:1", "D9:17", "D11:26", "D30:5"}


def test_split_on_semicolon():
    ids, repairs = locomo.normalize_evidence(["D8:6; D9:17"], VALID)
    assert ids == ["D8:6", "D9:17"]
    assert repairs == [("D8:6; D9:17", "D8:6 D9:17")]


def test_split_on_whitespace():
    ids, _ = locomo.normalize_evidence(["D9:1 D4:4 D4:6"], VALID)
    assert ids == ["D9:1", "D4:4", "D4:6"]


def test_stray_colon_and_zero_padding():
    ids, repairs = locomo.normalize_evidence(["D:11:26", "D30:05"], VALID)
    assert ids == ["D11:26", "D30:5"]
    assert repairs == [("D:11:26", "D11:26"), ("D30:05", "D30:5")]


def test_ids_naming_no_turn_are_dropped():
    ids, repairs = locomo.normalize_evidence(["D1:1", "D10:19", "D"], VALID)
    assert ids == ["D1:1"]
    assert ("D10:19", None) in repairs and ("D", None) in repairs


def test_without_valid_set_only_malformed_ids_are_dropped():
    ids, _ = locomo.normalize_evidence(["D10:19", "D", "D4:36"])
    assert ids == ["D10:19", "D4:36"]


def test_clean_ids_need_no_repair_and_repeats_collapse():
    ids, repairs = locomo.normalize_evidence(["D1:1", "D1:2", "D1:1"], VALID)
    assert ids == ["D1:1", "D1:2"]
    assert repairs == []


# ---- a whole (made-up) file -----------------------------------------------------------------


def _sample() -> dict:
    return {
        "sample_id": "conv-test",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:00 pm on 1 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Look at this!", "blip_caption": "a photo of a red kite"},
            ],
            "session_2_date_time": "9:30 am on 8 May, 2023",
            "session_2": [
                {"speaker": "Ann", "dia_id": "D2:1", "text": "The cat is called Miso."},
                {"speaker": "Bo", "dia_id": "D2:2", "text": "I fly kites on weekends."},
            ],
            # a date for a session that does not exist (as in the real file)
            "session_3_date_time": "2:00 pm on 9 May, 2023",
        },
        "qa": [
            {"question": "What is Ann's cat called?", "answer": "Miso", "evidence": ["D2:01"], "category": 4},
            {"question": "What did Bo photograph?", "answer": "a kite", "evidence": ["D1:2; D2:2"], "category": 1},
            {"question": "When did Ann adopt a cat?", "answer": "May 2023", "evidence": ["D:1:1"], "category": 2},
            {"question": "Would Ann like dogs?", "answer": "maybe", "evidence": [], "category": 3},
            {"question": "Who won?", "answer": "n/a", "evidence": ["D9:9", "D"], "category": 3},
            {"question": "What did Bo say about boats?", "adversarial_answer": "x", "evidence": ["D2:2"], "category": 5},
        ],
    }


@pytest.fixture
def conv(tmp_path):
    path = tmp_path / "mini.json"
    path.write_text(json.dumps([_sample()]), encoding="utf-8")
    convs = locomo.load(path)
    assert len(convs) == 1
    return convs[0]


def test_turns_in_order_with_sessions_dates_and_captions(conv):
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    assert [t.session for t in conv.turns] == [1, 1, 2, 2]
    assert conv.turns[1].text == "Look at this! [image: a photo of a red kite]"
    assert conv.turns[2].session_date == "9:30 am on 8 May, 2023"
    assert conv.speakers == ("Ann", "Bo")


def test_memory_text(conv):
    t = conv.turns[0]
    assert t.memory() == "Ann: I adopted a cat."
    assert t.memory(with_date=True) == "[1:00 pm on 1 May, 2023] Ann: I adopted a cat."


def test_questions_keep_categories_1_to_4_with_evidence(conv):
    qs = {q.question: q for q in conv.questions}
    assert set(qs) == {"What is Ann's cat called?", "What did Bo photograph?", "When did Ann adopt a cat?"}
    assert qs["What is Ann's cat called?"].evidence == ["D2:1"]
    assert qs["What did Bo photograph?"].evidence == ["D1:2", "D2:2"]
    assert qs["When did Ann adopt a cat?"].evidence == ["D1:1"]
    assert qs["What did Bo photograph?"].category == 1
    reasons = {q: why for q, _, why in conv.skipped}
    assert reasons["Would Ann like dogs?"] == "empty evidence"
    assert reasons["Who won?"] == "empty evidence"  # every id pointed at no turn
    assert reasons["What did Bo say about boats?"] == "category 5"
    assert ("Who won?", "D9:9", None) in conv.repairs


# ---- metrics ------------------------------------------------------------------------------


def test_turn_recall():
    ranked = ["D1:1", "D2:2", "D3:3", "D4:4"]
    assert locomo.turn_recall(ranked, ["D2:2"], 1) == 0.0
    assert locomo.turn_recall(ranked, ["D2:2"], 2) == 1.0
    assert locomo.turn_recall(ranked, ["D2:2", "D9:9"], 4) == 0.5


def test_session_recall():
    ranked = ["D1:1", "D2:5", "D2:6"]
    assert locomo.session_recall(ranked, ["D2:1"], 2) == 1.0  # another turn of the same session counts
    assert locomo.session_recall(ranked, ["D2:1", "D7:1"], 3) == 0.5
    assert locomo.session_recall(ranked, ["D3:1"], 3) == 0.0


def test_empty_evidence_is_an_error():
    with pytest.raises(ValueError):
        locomo.turn_recall(["D1:1"], [], 5)


def test_summarize_per_category_and_overall():
    rows = [(1, {"R@5": 1.0}), (1, {"R@5": 0.0}), (4, {"R@5": 1.0})]
    s = locomo.summarize(rows)
    assert list(s) == ["1", "4", "all"]
    assert s["1"] == {"R@5": 0.5, "n": 2.0}
    assert s["4"]["R@5"] == 1.0
    assert s["all"]["R@5"] == pytest.approx(2 / 3)
    assert s["all"]["n"] == 3.0


def test_score_question_has_all_metrics():
    m = locomo.score_question(["D1:1", "D1:2"], ["D1:2"])
    assert m == {"R@5": 1.0, "R@10": 1.0, "S@5": 1.0}
