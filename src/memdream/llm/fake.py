"""A real OpenAI-compatible HTTP server on loopback with scripted replies, for tests and
benchmarks: the boundary where the model would be, reached through the production client.

    with FakeLLMServer() as srv:
        srv.reply('{"ops": []}')               # the next chat completion answers this
        srv.reply(status=500)                   # ... then an error
        srv.reply("late", delay=2.0)            # ... then a slow reply
        llm = OpenAICompatLLM(srv.base_url, "fake")

By default it behaves as llama-cpp-python's server was seen to (issue 16), so the suite catches
what a real local server does:
- `tools` without `tool_choice` means no tools: scripted tool calls are not sent (as "none");
- a message whose content is not a string (`"content": null`) is rejected with HTTP 500 and a
  pydantic-style body;
- a reply longer than `max_tokens` (4 characters a token) is cut off, finish_reason "length";
- `reject_formats` names the `response_format` types it rejects (HTTP 500 with a validation
  error naming the field, as llama-cpp-python 0.3.36 answers `json_schema`; "json_object+schema"
  is a json_object with a schema), `reject_json_mode=True` rejects every one;
- `slots=1` answers one request at a time, as a single-slot server does: a request sent while
  another is generating waits behind it (even when its client gave up on the first).
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

CHARS_PER_TOKEN = 4


@dataclass
class Scripted:
    text: str = ""
    status: int = 200
    delay: float = 0.0
    body: str | None = None  # a raw body instead of a completion (malformed replies)
    tool_calls: list[dict[str, Any]] | None = None  # [{"name": ..., "arguments": {...} or "raw json"}]
    finish_reason: str | None = None  # None: "tool_calls", "length" or "stop" as the reply says


def _invalid_message(req: dict[str, Any]) -> str | None:
    """What llama-cpp-python's request validation says about a bad message, or None."""
    for i, m in enumerate(req.get("messages") or []):
        if not isinstance(m, dict):
            return f"messages.{i}: Input should be a valid dictionary"
        if "content" in m and not isinstance(m["content"], str) and not isinstance(m["content"], list):
            return f"1 validation error: messages.{i}.{m.get('role')}.content {{'type': 'string_type', 'msg': 'Input should be a valid string', 'input': {json.dumps(m['content'])}}}"
    return None


class FakeLLMServer:
    def __init__(
        self,
        reject_json_mode: bool = False,
        reject_formats: tuple[str, ...] = (),
        missing_tool_choice: str = "none",
        slots: int = 0,
    ) -> None:
        self.queue: deque[Scripted] = deque()
        self.requests: list[dict[str, Any]] = []
        self.errors: list[tuple[int, str]] = []  # (status, body) of every request it rejected
        self.default: Callable[[dict[str, Any]], str | Scripted] | None = None
        self.reject_formats = ("json_schema", "json_object+schema", "json_object", "text") if reject_json_mode else tuple(reject_formats)
        self.missing_tool_choice = missing_tool_choice  # what a request with tools but no tool_choice gets
        self._slot = threading.Semaphore(slots) if slots else None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                if server._slot is None:
                    self._handle()
                    return
                with server._slot:
                    self._handle()

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                req = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(req)
                fmt = req.get("response_format")
                kind = "json_object+schema" if isinstance(fmt, dict) and fmt.get("type") == "json_object" and "schema" in fmt else fmt.get("type") if isinstance(fmt, dict) else None
                if kind in server.reject_formats:  # as llama-cpp-python 0.3.36 does: a 500 naming the field
                    self._reject(500, json.dumps({"error": {"message": f"1 validation error: {{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': '{fmt.get('type')}'}}", "type": "internal_server_error"}}))
                    return
                bad = _invalid_message(req)
                if bad:
                    self._reject(500, json.dumps({"error": {"message": bad, "type": "internal_server_error"}}))
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
                choice = req.get("tool_choice", server.missing_tool_choice) if req.get("tools") else "none"
                calls = item.tool_calls if choice != "none" else None
                text = item.text
                finish = item.finish_reason or ("tool_calls" if calls else "stop")
                limit = req.get("max_tokens")
                if isinstance(limit, int) and len(text) > limit * CHARS_PER_TOKEN:
                    text, finish = text[: limit * CHARS_PER_TOKEN], "length"
                message: dict[str, Any] = {"role": "assistant", "content": text}
                if calls:
                    message["tool_calls"] = [
                        {"id": f"call_{n}", "type": "function", "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"], ensure_ascii=False)}}
                        for n, c in enumerate(calls)
                    ]
                out = {
                    "id": "fake", "object": "chat.completion", "model": req.get("model", "fake"),
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": sum(len(m.get("content") or "") for m in req.get("messages", [])) // CHARS_PER_TOKEN, "completion_tokens": len(text) // CHARS_PER_TOKEN},
                }  # fmt: skip
                self._send(200, json.dumps(out))

            def _reject(self, status: int, body: str) -> None:
                server.errors.append((status, body))
                self._send(status, body)

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
        # serve_forever looks for shutdown() every poll_interval (0.5 s by default): each `with`
        # block's exit waited that long, half a second per test of the suite's dozens that use one.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def reply(
        self, text: str = "", status: int = 200, delay: float = 0.0, body: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None, finish_reason: str | None = None,
    ) -> None:  # fmt: skip
        self.queue.append(Scripted(text, status, delay, body, tool_calls, finish_reason))

    def __enter__(self) -> "FakeLLMServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
