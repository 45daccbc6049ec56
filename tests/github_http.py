"""The fake GitHub of github_fake.py behind a real HTTP server on 127.0.0.1, for ghstate run as a
subprocess (the MCP server, hooks), which ``responses`` in the test process cannot reach."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from types import SimpleNamespace

from github_fake import FakeGitHub


class _Server(http.server.ThreadingHTTPServer):
    fake: FakeGitHub
    lock: threading.Lock
    since = 0.0

    def flow(self) -> None:
        """GitHub's clock runs for processes that really wait: the fake's moves on by the real time since the
        last request (and as a test sets it, from there), as GitHub's Date does. In process (``responses``) it
        stands still unless a test moves it."""
        now = time.monotonic()
        if self.since:
            self.fake.clock += timedelta(seconds=now - self.since)
        self.since = now


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # The headers and the body go out in two writes: with Nagle's algorithm on, the body waited for the client's
    # delayed ACK (40 ms a request on Linux), a stall of this server's own, not GitHub's
    disable_nagle_algorithm = True

    def _any(self) -> None:
        started = time.perf_counter()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        fake = self.server.fake
        request = SimpleNamespace(method=self.command, url=fake.base + self.path, headers=self.headers, body=body)
        with self.server.lock:  # the fake is a plain object: one request at a time
            self.server.flow()
            status, headers, text = fake.route(request)
        data = text.encode() if isinstance(text, str) else text
        took = time.perf_counter() - started
        self.send_response_only(status)  # the fake's own Date (GitHub's clock), not this machine's
        self.send_header("Server", "GitHub.com")
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        # the fake's own time on this request (a benchmark sets it apart from the client's: benchmarks/speed.py)
        self.send_header("X-Fake-Seconds", f"{took:.6f}")
        self.end_headers()
        self.wfile.write(data)
        fake.served_seconds = getattr(fake, "served_seconds", 0.0) + time.perf_counter() - started

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _any

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serve_fake(repo: str = "octo/hello") -> Iterator[FakeGitHub]:
    """A FakeGitHub listening on a loopback port; its ``base`` is the API URL to give ghstate."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.lock = threading.Lock()
    port = server.server_address[1]
    fake = server.fake = FakeGitHub(None, repo=repo, base=f"http://127.0.0.1:{port}")
    fake.lock = server.lock  # for a test that changes the fake while requests are being served
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
