"""A real OpenAI-compatible HTTP server on loopback with scripted replies, for tests and
benchmarks: the boundary where the model would be, reached through the production client.

    with FakeLLMServer() as srv:
        srv.reply('{"ops": []}')               # the next chat completion answers this
        srv.reply(status=500)                   # ... then an error
        srv.reply("late", delay=2.0)            # ... then a slow reply
        llm = OpenAICompatLLM(srv.base_url, "fake")
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    text: str = ""
    status: int = 200
    delay: float = 0.0
    body: str | None = None  # a raw body instead of a completion (malformed replies)
    tool_calls: list[dict[str, Any]] | None = None  # [{"name": ..., "arguments": {...} or "raw json"}]


class FakeLLMServer:
    def __init__(self, reject_json_mode: bool = False) -> None:
        self.queue: deque[Scripted] = deque()
        self.requests: list[dict[str, Any]] = []
        self.default: Callable[[dict[str, Any]], str | Scripted] | None = None
        self.reject_json_mode = reject_json_mode
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                req = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(req)
                if server.reject_json_mode and "response_format" in req:
                    self._send(400, json.dumps({"error": {"message": "response_format is not supported"}}))
                    return
                if server.queue:
                    item = server.queue.popleft()
                else:
                    got = server.default(req) if server.default else ""
                    item = got if isinstance(got, Scripted) else Scripted(got)
                if item.delay:
                    time.sleep(item.delay)
                if item.body is not None or item.status != 200:
                    self._send(item.status, item.body or json.dumps({"error": {"message": "scripted error"}}))
                    return
                message: dict[str, Any] = {"role": "assistant", "content": item.text}
                if item.tool_calls:
                    message["tool_calls"] = [
                        {"id": f"call_{n}", "type": "function", "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"], ensure_ascii=False)}}
                        for n, c in enumerate(item.tool_calls)
                    ]
                out = {
                    "id": "fake", "object": "chat.completion", "model": req.get("model", "fake"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if item.tool_calls else "stop"}],
                    "usage": {"prompt_tokens": sum(len(m.get("content") or "") for m in req.get("messages", [])) // 4, "completion_tokens": len(item.text) // 4},
                }  # fmt: skip
                self._send(200, json.dumps(out))

            def _send(self, status: int, body: str) -> None:
                data = body.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def reply(self, text: str = "", status: int = 200, delay: float = 0.0, body: str | None = None, tool_calls: list[dict[str, Any]] | None = None) -> None:
        self.queue.append(Scripted(text, status, delay, body, tool_calls))

    def __enter__(self) -> "FakeLLMServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
