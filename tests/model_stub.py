"""A loopback stand-in for the Anthropic Messages API: it answers every request with a short streamed
reply and keeps each request body, which is exactly what the model would have seen (hook contexts
included). Used to run Claude Code itself as a judge of what the hooks inject."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _events(text: str, model: str, usage: dict[str, int] | None = None) -> bytes:
    message = {"id": "msg_stub", "type": "message", "role": "assistant", "model": model, "content": [],
               "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1, **(usage or {})}}
    events = [
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


class ModelStub:
    """``usage``: what each answer reports (input, cache-read, cache-creation tokens), which Claude Code records in
    the session's transcript: 150,000 input tokens make a context three quarters full without sending one."""

    def __init__(self, reply: str = "OK", usage: dict[str, int] | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply = reply
        self.usage = dict(usage or {})
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    self._json({"input_tokens": 10})
                    return
                stub.requests.append(body)
                if body.get("stream"):
                    payload = _events(stub.reply, body.get("model", "stub"), stub.usage)
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                else:
                    self._json({"id": "msg_stub", "type": "message", "role": "assistant",
                                "model": body.get("model", "stub"), "content": [{"type": "text", "text": stub.reply}],
                                "stop_reason": "end_turn", "stop_sequence": None,
                                "usage": {"input_tokens": 10, "output_tokens": 1, **stub.usage}})

            def do_GET(self) -> None:  # noqa: N802
                self._json({})

            def do_HEAD(self) -> None:  # noqa: N802
                self.send_response(200)
                self.end_headers()

            def _json(self, data: Any) -> None:
                payload = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ModelStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def seen_texts(self) -> list[str]:
        """Every text of every request: system prompt blocks and message contents, in order."""
        out: list[str] = []

        def walk(value: Any) -> None:
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, dict):
                if isinstance(value.get("text"), str):
                    out.append(value["text"])
                for key in ("content", "system"):
                    if key in value and not isinstance(value[key], str):
                        walk(value[key])
                    elif isinstance(value.get(key), str):
                        out.append(value[key])
            elif isinstance(value, list):
                for item in value:
                    walk(item)

        for body in self.requests:
            walk(body.get("system"))
            walk(body.get("messages"))
        return out
