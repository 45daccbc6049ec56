"""Runtime probes with real local sockets; nothing but loopback is contacted, nothing is executed."""

from __future__ import annotations

import http.server
import json
import socket
import threading

import pytest

from ghstate.local import probes


@pytest.fixture(autouse=True)
def patient(monkeypatch):
    """Timeouts and the deadline long enough never to decide a result on a loaded machine: a server that
    answers answers well within them, and none is waited out (a test of the deadline gives its own)."""
    monkeypatch.setattr(probes, "TIMEOUT", 60.0)
    monkeypatch.setattr(probes, "DEADLINE", 120.0)


@pytest.fixture
def http_port():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/health" else 503)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def tcp_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    yield sock.getsockname()[1]
    sock.close()


def closed_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def test_http_and_tcp(http_port, tcp_port):
    assert probes.probe(f"http://127.0.0.1:{http_port}/health") == "up"
    assert probes.probe(f"http://localhost:{http_port}/broken") == "down"  # a 5xx is not alive
    assert probes.probe(f"port {tcp_port}") == "up"
    assert probes.probe(f"127.0.0.1:{tcp_port}") == "up"
    assert probes.probe(f"tcp://127.0.0.1:{tcp_port}") == "up"
    port = closed_port()
    assert probes.probe(f"port {port}") == "down"
    assert probes.probe(f"http://127.0.0.1:{port}/") == "down"


@pytest.mark.parametrize("check", ["http://example.com/health", "https://10.0.0.5:8443/", "db.internal:5432",
                                   "http://[2001:db8::1]:80/"])
def test_only_loopback_is_contacted(check, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a non-loopback address was contacted")

    monkeypatch.setattr(socket, "create_connection", refuse)
    assert probes.probe(check) == "skipped"


@pytest.mark.parametrize("check", ["`rm -rf /`", "$(touch /tmp/pwned)", "npm run dev", "", "port 99999"])
def test_nothing_is_executed(check, monkeypatch, tmp_path):
    import subprocess

    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: (_ for _ in ()).throw(AssertionError("executed")))
    assert probes.probe(check) == "skipped"


def test_resume_reports_runtime(repo, run, tmp_path, http_port):
    body = tmp_path / "c.md"
    down = closed_port()
    body.write_text(f"## Current status\n- [ ] Phase 1\n\n## Runtime\n"
                    f"- dev server: http://127.0.0.1:{http_port}/health\n- postgres: port {down}\n"
                    "- staging: https://staging.example.com\n\n## Resume instruction\nPhase 1\n")
    run("checkpoint", "--file", str(body))
    data = json.loads(run("resume", "--format", "json").stdout)
    assert [(r["name"], r["status"]) for r in data["runtime"]] == [
        ("dev server", "up"), ("postgres", "down"), ("staging", "skipped")]
    text = run("resume").stdout
    assert f"- dev server: http://127.0.0.1:{http_port}/health is up" in text
    assert f"- postgres: port {down} is down" in text


def test_a_server_that_trickles_bytes_cannot_hold_resume(trickle_port, monkeypatch):
    """The trickle never lets a read time out; the deadline (read at each call) ends the wait at once
    here, and leaves its probe behind."""
    monkeypatch.setattr(probes, "DEADLINE", 0)
    before = set(threading.enumerate())
    assert probes.probe_all([f"http://127.0.0.1:{trickle_port}/health"]) == ["down"]
    [left] = [t for t in threading.enumerate() if t not in before and t.name == "ghstate-probe-0"]
    assert left.is_alive() and left.daemon


def test_only_so_many_items_are_probed(tcp_port):
    statuses = probes.probe_all([f"port {tcp_port}"] * (probes.MAX_PROBES + 3))
    assert statuses == ["up"] * probes.MAX_PROBES + ["skipped"] * 3


def test_localhost_is_tried_on_ipv6_too():
    try:
        server = socket.socket(socket.AF_INET6)
        server.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    server.listen()
    try:
        assert probes.probe(f"localhost:{server.getsockname()[1]}") == "up"
    finally:
        server.close()
