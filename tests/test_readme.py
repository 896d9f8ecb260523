"""The README's, README.zh.md's and docs/integrations.md's instructions, run as written on a
fresh vault in a temporary home: every fenced shell line either runs and succeeds (the read
commands finding something) or is named below with the reason it is not run here and the
test that covers it instead; the Python examples run and return what their comments say."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ["README.md", "README.zh.md", "docs/integrations.md"]
BIN = Path(sys.executable).parent  # the install under test: .venv/bin in a clone

# A line starting with one of these is not run by this test, for the reason given.
NOT_RUN = {
    "make ": "make demo and make test are the suite itself (tests/test_demo.py runs the demo)",
    "python3.11 -m venv": "the environment this test runs in was made that way",
    ".venv/bin/pip install": "installs take minutes and change the environment: the extras they name are checked to exist",
    "claude mcp add": "needs Claude Code: tests/test_integrations_doc.py checks it runs the documented stdio command",
    "memdream serve": "a server that runs until stopped: tests/test_integrations_doc.py and tests/test_mcp.py run it",
    "MEMDREAM_MCP_TOKEN=": "a server that runs until stopped: tests/test_mcp.py runs it over HTTP",
    "MEMDREAM_LLM_BASE_URL=": "a chat with a model that is not here: tests/test_chat.py drives it with a fake model",
    "MEMDREAM_EMBEDDER=use": "needs the embed extra (an optional model package): tests/test_embed.py covers it",
    "~/.cache/memdream/test-llm/venv/bin/": "builds llama.cpp (15-35 min) and serves a model: make test-llm runs this recipe (tests_llm/)",
    "--host 127.0.0.1 --port 8080": "the rest of the llama.cpp server line above: make test-llm runs it",
    "memdream import": "imports the reader's own export files: tests/test_recall.py, test_import_chatgpt.py and test_import_folders.py cover each format",
}
READS = ("recall", "history", "context", "list", "search", "lookup")


def shell_lines(doc: str) -> list[str]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    return [ln.strip() for b in re.findall(r"```sh\n(.*?)```", text, re.S) for ln in b.splitlines() if ln.strip() and not ln.strip().startswith("#")]


def python_blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(encoding="utf-8"), re.S)


def reason_not_run(line: str) -> str | None:
    bare = line.removeprefix(".venv/bin/") if not line.startswith(".venv/bin/pip") else line
    return next((why for start, why in NOT_RUN.items() if bare.startswith(start) or line.startswith(start)), None)


def fresh_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMDREAM_")}
    env.update(HOME=str(home), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", NO_COLOR="1")
    return env


def extras() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"])


@pytest.mark.parametrize("doc", DOCS)
def test_the_shell_lines_run_as_written_on_a_fresh_vault(doc: str, tmp_path: Path) -> None:
    lines = shell_lines(doc)
    assert lines, f"{doc} has no shell block"
    ran = 0
    for line in lines:
        why = reason_not_run(line)
        if why is not None:
            for extra in re.findall(r"'\.\[([\w,-]+)\]'", line):
                assert set(extra.split(",")) <= extras(), f"{doc}: {line!r} names an extra pyproject.toml lacks"
            continue
        command = line.replace(".venv/bin/", f"{BIN}/")
        # `undo` asks before it changes anything: the reader answers yes.
        res = subprocess.run(["bash", "-c", command], cwd=ROOT, env=fresh_env(tmp_path), input="y\n", capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, f"{doc}: {line!r} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}"
        verb = line.removeprefix(".venv/bin/").split()[1]
        if verb in READS:
            assert res.stdout.strip(), f"{doc}: {line!r} printed nothing"
            for empty in ("nothing found", "no memories yet", "(nothing relevant)"):
                assert empty not in res.stdout, f"{doc}: {line!r} found nothing on a fresh vault:\n{res.stdout}"
        ran += 1
    assert ran >= 1
    assert (tmp_path / ".memdream").is_dir()  # the commands used the fresh vault in the temporary home


def test_the_readme_python_example_returns_what_its_comments_say(tmp_path: Path) -> None:
    code = python_blocks("README.md")[0]
    check = (
        "\nassert entry.type == 'instruction' and entry.layer == 'resident', entry"
        "\nassert out.action == 'superseded' and out.superseded, out"
        "\nassert [e.text for e in trail] == ['我在余杭区', '我在西湖区'], trail"
        "\nassert hits and hits[0].text == '我在西湖区' and set(hits[0].trace.to_json()) >= {'recency', 'importance', 'relevance'}, hits"
        "\nassert '以后都用中文回我' in block.render() and '我在西湖区' in block.render(), block.render()"
        "\nprint('ok')"
    )
    res = subprocess.run([sys.executable, "-c", code + check], env=fresh_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stdout + res.stderr


def test_the_chinese_readme_python_example_finds_the_allergy(tmp_path: Path) -> None:
    code = python_blocks("README.zh.md")[0]
    res = subprocess.run([sys.executable, "-c", code], env=fresh_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "我对花生过敏" in res.stdout, res.stdout


def test_every_line_not_run_names_its_reason_and_make_installs_web_and_mcp() -> None:
    skipped = [ln for doc in DOCS for ln in shell_lines(doc) if reason_not_run(ln)]
    assert skipped and all(reason_not_run(ln) for ln in skipped)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    installed = re.search(r"pip install -q -e '\.\[([\w,-]+)\]'", makefile)
    assert installed and {"web", "mcp"} <= set(installed.group(1).split(","))  # "make demo already installs web and mcp"
    assert {"all", "web", "mcp", "embed", "remote"} <= extras()


def test_the_wheel_route_installs_and_runs(tmp_path: Path) -> None:
    """README: `.venv/bin/pip wheel --no-deps -w dist .`, then `pip install 'dist/memdream-VERSION-py3-none-any.whl[web]'`
    elsewhere (a fresh virtualenv here; the dependencies come from the package index)."""
    import memdream

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip wheel --no-deps -w dist ." in text and f"dist/memdream-{memdream.__version__}-py3-none-any.whl[all]" in text
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    wheel = dist / f"memdream-{memdream.__version__}-py3-none-any.whl"
    assert wheel.is_file(), list(dist.iterdir())
    venv = tmp_path / "venv"
    # Without a pip of its own (ensurepip was 5 s of the test): this pip installs into it (--python).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    # A PYTHONPATH naming this tree's src/ (how a worktree runs the suite) would let the fresh
    # virtualenv see memdream already there (src/memdream.egg-info): pip would install nothing
    # and the checks below would import the tree, not the wheel. The fresh virtualenv gets none.
    bare = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", f"{wheel}[web]"], capture_output=True, text=True, timeout=900, env=bare)
    assert pip.returncode == 0, pip.stderr
    env = {k: v for k, v in fresh_env(tmp_path / "home").items() if k != "PYTHONPATH"}
    (tmp_path / "home").mkdir()
    exe = str(venv / "bin" / "memdream")
    assert subprocess.run([exe, "--version"], capture_output=True, text=True, env=env).stdout.strip() == f"memdream, version {memdream.__version__}"
    for args in (["init"], ["remember", "我在西湖区"]):
        assert subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=120).returncode == 0
    found = subprocess.run([exe, "recall", "西湖"], capture_output=True, text=True, env=env, timeout=120)
    assert "我在西湖区" in found.stdout, found.stdout + found.stderr
    web = subprocess.run([str(venv / "bin" / "python"), "-c", "import memdream.web.app, memdream, pathlib; print(pathlib.Path(memdream.__file__).with_name('py.typed').is_file())"], capture_output=True, text=True, env=env)
    assert web.returncode == 0 and web.stdout.strip() == "True", web.stderr  # the web extra came along, and py.typed
