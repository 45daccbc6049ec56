"""Is what the work assumes alive still alive? Loopback HTTP and TCP checks with short timeouts.

A Runtime item comes from an issue, so it is untrusted: it is only ever read as an address to
probe, never run, and only loopback addresses are contacted (anything else is ``skipped``).
"""

from __future__ import annotations

import re

TIMEOUT = 0.5  # per connection and per read
DEADLINE = 1.5  # for all probes of one resume together: a server that trickles bytes cannot hold it
MAX_PROBES = 16  # Runtime items probed; the rest are reported skipped
_PORT_ONLY = re.compile(r"^(?:tcp\s+)?port\s+(\d{1,5})\b", re.IGNORECASE)
_HOST_PORT = re.compile(r"^(?:tcp://)?(\[[0-9a-fA-F:]+\]|[\w.-]+):(\d{1,5})\b")
_URL = re.compile(r"https?://\S+")


def _loopback(host: str) -> bool:
    import ipaddress

    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def target(check: str) -> tuple[str, str, int, str] | None:
    """(kind, host, port, path) for a check such as ``http://127.0.0.1:3000/health`` or ``port 5432``."""
    check = check.strip().strip("`")
    url = _URL.search(check)
    if url:
        from urllib.parse import urlsplit

        parts = urlsplit(url.group(0).rstrip(").,;"))
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return None
        return (parts.scheme, parts.hostname or "", port, parts.path or "/")
    m = _PORT_ONLY.match(check)
    if m:
        return ("tcp", "127.0.0.1", int(m.group(1)), "")
    m = _HOST_PORT.match(check)
    if m:
        return ("tcp", m.group(1), int(m.group(2)), "")
    return None


def probe(check: str, timeout: float | None = None) -> str:
    """``up``, ``down``, or ``skipped`` (not a loopback address, or not an address at all); ``timeout``
    per connection and read, TIMEOUT unless given."""
    timeout = TIMEOUT if timeout is None else timeout
    found = target(check)
    if found is None:
        return "skipped"
    kind, host, port, path = found
    if not 0 < port < 65536 or not _loopback(host):
        return "skipped"
    addresses = ("127.0.0.1", "::1") if host.lower() == "localhost" else (host.strip("[]"),)
    status = "down"
    for address in addresses:  # localhost may be served on IPv4 or IPv6 only (Node 17+, Vite)
        status = _probe_one(kind, address, port, path, timeout)
        if status == "up":
            break
    return status


def _probe_one(kind: str, address: str, port: int, path: str, timeout: float) -> str:
    import http.client
    import socket

    if kind == "tcp":
        try:
            with socket.create_connection((address, port), timeout=timeout):
                return "up"
        except OSError:
            return "down"
    if kind == "https":  # a local dev server's certificate is self-signed: liveness is all we ask
        import ssl

        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            address, port, timeout=timeout, context=ssl._create_unverified_context())
    else:
        conn = http.client.HTTPConnection(address, port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"User-Agent": "ghstate-probe", "Connection": "close"})
        status = conn.getresponse().status
        return "up" if status < 500 else "down"
    except (OSError, http.client.HTTPException, ValueError):
        return "down"
    finally:
        conn.close()


def probe_all(checks: list[str], timeout: float | None = None, deadline: float | None = None) -> list[str]:
    """Every check's status, all within ``deadline`` seconds (DEADLINE unless given): each runs in a daemon
    thread, and one that has not answered by then is ``down`` (and left behind; it cannot keep the process
    alive)."""
    import threading
    import time

    results = ["skipped"] * len(checks)
    threads = []
    for i, check in enumerate(checks[:MAX_PROBES]):
        def run(i: int = i, check: str = check) -> None:
            results[i] = probe(check, timeout)

        results[i] = "down"
        thread = threading.Thread(target=run, name=f"ghstate-probe-{i}", daemon=True)
        thread.start()
        threads.append(thread)
    end = time.monotonic() + (DEADLINE if deadline is None else deadline)
    for thread in threads:
        thread.join(max(0.0, end - time.monotonic()))
    return list(results)
