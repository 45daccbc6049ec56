"""The MCP server's figures on this machine. Run: python benchmarks/mcp_server.py [--runs N]

Prints, never asserts: what importing the MCP SDK costs (and that the other commands do not pay it),
the server's start time (process start to the answer of ``initialize``, as a host sees it), the
round trip of a ``resume`` tool call on the local store and on a loopback stub of GitHub, and the size
of the tool list a host puts in every session's context. Figures are medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # a source checkout's ghstate, as the servers started below use
EXAMPLE = ROOT / "examples" / "checkpoint.md"


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_", "GHSTATE_"))}
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), out.get("PYTHONPATH")]))
    out.update(extra)
    return out


def wall_ms(cmd: list[str], runs: int, cwd: str | None = None, environ: dict | None = None) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=environ or env(), check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def imported(cmd: list[str], cwd: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", *cmd], cwd=cwd, env=env(), capture_output=True,
                          text=True, check=True)
    return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


async def session_figures(repo: str, runs: int, environ: dict[str, str]) -> tuple[float, float, float]:
    """(start ms, first resume ms, median resume ms) of one server process."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "ghstate", "mcp"], cwd=repo, env=environ)
    start = time.perf_counter()
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        started = (time.perf_counter() - start) * 1000
        times = []
        for _ in range(runs + 1):
            t = time.perf_counter()
            result = await client.call_tool("resume", {"issue": 1})
            times.append((time.perf_counter() - t) * 1000)
            if result.is_error:
                raise SystemExit(f"resume failed: {result.content[0].text}")
    return started, times[0], statistics.median(times[1:])


def main() -> None:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    from ghstate.agents.mcp_tools import tool_summary

    python = wall_ms([sys.executable, "-c", "pass"], runs)
    sdk = wall_ms([sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"], runs)
    print(f"importing the MCP SDK:           {sdk - python:6.0f} ms (python alone {python:.0f} ms)")
    with tempfile.TemporaryDirectory() as repo:
        for args in (["init", "-q", "-b", "main"], ["-c", "user.email=b@e", "-c", "user.name=b", "commit", "-q",
                                                      "--allow-empty", "-m", "init"]):
            subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
        subprocess.run([sys.executable, "-m", "ghstate", "checkpoint", "--store", "local", "--file", str(EXAMPLE)],
                       cwd=repo, env=env(), check=True, capture_output=True)
        version = wall_ms([sys.executable, "-m", "ghstate", "--version"], runs, repo)
        resume = wall_ms([sys.executable, "-m", "ghstate", "resume", "1"], runs, repo)
        pays = "mcp" in imported(["-m", "ghstate", "resume", "1"], repo)
        print(f"ghstate --version / resume (CLI): {version:6.0f} / {resume:.0f} ms; the CLI imports the SDK: "
              f"{'YES' if pays else 'no'}")
        local = [anyio.run(session_figures, repo, runs, env(GHSTATE_STORE="local")) for _ in range(3)]
        print(f"server start (spawn → initialize): {statistics.median(s for s, _, _ in local):6.0f} ms")
        print(f"resume tool call, local store:     {statistics.median(m for _, _, m in local):6.1f} ms "
              f"(first call {statistics.median(f for _, f, _ in local):.1f} ms)")
        sys.path.insert(0, str(ROOT / "tests"))
        try:
            from github_http import serve_fake
        except ModuleNotFoundError:
            print("resume tool call, GitHub stub:     skipped (the stub needs the test dependencies)")
        else:
            with serve_fake() as fake:
                fake.add_issue(1, EXAMPLE.read_text(), title="Example")
                github = env(GH_TOKEN="bench-token", GITHUB_REPOSITORY="octo/hello", GITHUB_API_URL=fake.base)
                _, first, median = anyio.run(session_figures, repo, runs, github)
                print(f"resume tool call, GitHub stub:     {median:6.1f} ms (first call {first:.1f} ms; loopback, "
                      "no network latency)")
    summary = tool_summary()
    print(f"tool list in every session:        {len(summary):6d} characters (~{len(summary) // 4} tokens)")


if __name__ == "__main__":
    main()
