"""An HTTP-level fake of the Anthropic Messages API (and of OpenAI chat completions).

A real HTTP server on 127.0.0.1 in a thread. Each `POST /v1/messages` (or
`/v1/chat/completions`) is answered by the next scripted step: a function of the request body
returning a list of content blocks (`text(...)`, `tool_use(...)`). Calls are counted and
time-stamped; the real clients are pointed at it with base_url / ANTHROPIC_BASE_URL.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Block = dict[str, Any]
Step = Callable[[dict[str, Any]], list[Block]]


def text(t: str) -> Block:
    return {"type": "text", "text": t}


def tool_use(name: str, args: dict[str, Any], id: str | None = None) -> Block:
    return {"type": "tool_use", "id": id or f"toolu_{name}_{time.monotonic_ns()}",
            "name": name, "input": args}


def tool_results(body: dict[str, Any]) -> list[tuple[str, Any, bool]]:
    """(tool_use_id, parsed content, is_error) of the last user turn of an Anthropic request."""
    last = body["messages"][-1]
    out = []
    for b in last["content"] if isinstance(last["content"], list) else []:
        if b.get("type") == "tool_result":
            c = b.get("content")
            if isinstance(c, list):
                c = "".join(x.get("text", "") for x in c)
            try:
                c = json.loads(c)
            except (TypeError, ValueError):
                pass
            out.append((b["tool_use_id"], c, bool(b.get("is_error"))))
    return out


def last_result(body: dict[str, Any]) -> Any:
    return tool_results(body)[-1][1]


class FakeLLM:
    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake._lock:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    fake.times.append(time.time())
                    step = fake.steps.pop(0) if fake.steps else None
                if step is None:
                    fake.errors.append(f"unscripted call {len(fake.requests)}")
                    return self._send(500, {"type": "error", "error": {
                        "type": "api_error", "message": "the fake has no more steps"}})
                try:
                    blocks = step(body)
                except Exception as e:  # a script bug: make it visible in the test
                    fake.errors.append(repr(e))
                    return self._send(500, {"type": "error", "error": {
                        "type": "api_error", "message": repr(e)}})
                if self.path.endswith("/chat/completions"):
                    return self._send(200, _openai(blocks, body))
                return self._send(200, _anthropic(blocks, body))

            def _send(self, code: int, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def calls(self) -> int:
        return len(self.requests)

    def script(self, *steps: Step | list[Block]) -> FakeLLM:
        self.steps.extend(s if callable(s) else (lambda _b, s=s: s) for s in steps)
        return self

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _anthropic(blocks: list[Block], body: dict[str, Any]) -> dict[str, Any]:
    uses = any(b["type"] == "tool_use" for b in blocks)
    return {"id": f"msg_{time.monotonic_ns()}", "type": "message", "role": "assistant",
            "model": body.get("model", "fake"), "content": blocks,
            "stop_reason": "tool_use" if uses else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def _openai(blocks: list[Block], body: dict[str, Any]) -> dict[str, Any]:
    calls = [{"id": b["id"], "type": "function", "function": {
        "name": b["name"], "arguments": json.dumps(b["input"])}}
        for b in blocks if b["type"] == "tool_use"]
    msg: dict[str, Any] = {"role": "assistant", "content": "\n".join(
        b["text"] for b in blocks if b["type"] == "text") or None}
    if calls:
        msg["tool_calls"] = calls
    return {"id": "chatcmpl-fake", "object": "chat.completion", "model": body.get("model"),
            "choices": [{"index": 0, "message": msg,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}}
