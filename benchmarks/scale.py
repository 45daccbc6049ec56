"""What a command costs as open checkpoints pile up: requests, bytes received and seconds, at 10, 1,000 and
10,000 open checkpoints (one per branch), against the test suite's fake GitHub on 127.0.0.1.

Run: python benchmarks/scale.py [--counts 10,1000,10000] [--markdown]

Each count gets a fresh fake seeded with that many open checkpoints, each in the branch index (as ghstate
writes a new one), updated oldest first; the newest twenty and the oldest two (those the rows read) have a
body of about 60,000 characters (GitHub's limit is 65,536): what a page of bodies must stay under 1 MB
with. Then ghstate runs as a process, once per row: `resume` and `checkpoint --risk R --resume P` by
branch on the newest branch, the oldest and a branch with none (the write there creates one); on two
checkpoints the branch index does not hold (found with GitHub's issue search): `resume` on an older ghstate's
(no entry), its first write (which adds the entry) and `resume` after it, and `resume` on one opened with the
issue form; `list` (its first page), `ready` and the session-start hook. Requests and bytes
are counted at the fake (bytes: the answers' bodies, the largest one too); seconds are the process's wall
time, PyGithub's start-up included, no network latency (add a round trip per request for the real thing).
A figure measured, not asserted: tests/test_branch_index.py holds the request counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
try:
    from github_http import serve_fake  # noqa: E402
except ModuleNotFoundError as exc:  # the stub is the test suite's fake GitHub
    raise SystemExit(f"{exc}: install the test dependencies first: pip install '.[test]'") from None

from ghstate.core.chain import TREE_FILES  # noqa: E402

BIG = 60_000  # characters of the large bodies (one in ten)


def seed(fake, count: int) -> None:
    """``count`` open checkpoints, #1 (branch b1) updated first, #count last; each in the branch index."""
    filler = ("- a risk that is long enough to matter in a body near GitHub's limit, line {}\n")
    for number in range(1, count + 1):
        branch = f"b{number}"
        big = number <= 2 or number > count - 20  # the oldest two and the newest twenty: what is read
        risks = "".join(filler.format(i) for i in range(BIG // 80)) if big else "- one risk\n"
        marker = json.dumps({"revision": 1, "branch": branch})
        body = (f"<!-- ghstate:v1 {marker} -->\n## Goal\nWork on {branch}.\n\n## Current status\n- [ ] Phase 1: "
                f"start\n\n## Remaining risks\n{risks}\n## Resume instruction\nStart at Phase 1.\n")
        fake.add_issue(number, body, title=f"Checkpoint: {branch}")
        fake.tasks.index(number, branch, flag=number == 1)
    marker = json.dumps({"revision": 1, "branch": "older"})  # an older ghstate's, made after the flag: no entry
    fake.add_issue(count + 1, f"<!-- ghstate:v1 {marker} -->\n## Goal\nOlder.\n\n## Current status\n- [ ] Phase 1: "
                   "start\n\n## Resume instruction\nStart at Phase 1.\n", title="Checkpoint: older")
    fake.add_issue(count + 2, "### Branch\n\nfrom-form\n\n### Goal\n\nMade with the issue form.\n\n### Current status"
                   "\n\n- [ ] Phase 1: start\n\n### Resume instruction\n\nStart at Phase 1.", title="Checkpoint: form")
    fake.tasks.add_tree(TREE_FILES)


def measure(fake, args: list[str], env: dict[str, str], cwd: str, stdin: str = "") -> dict[str, float]:
    sizes: list[int] = []
    route = fake.route

    def counted(request):  # the answers' bytes, as they leave the fake
        status, headers, text = route(request)
        sizes.append(len(text.encode() if isinstance(text, str) else text))
        return status, headers, text

    fake.route = counted
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ghstate", *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - start
    fake.route = route
    if done.returncode not in (0, 1):
        raise SystemExit(f"ghstate {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return {"requests": len(sizes), "bytes": sum(sizes), "largest": max(sizes, default=0), "seconds": seconds}


def run_count(count: int) -> dict[str, dict[str, float]]:
    with serve_fake() as fake, tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        seed(fake, count)
        print(f"[{count:,} open checkpoints] seeded in {time.perf_counter() - began:.1f} s", file=sys.stderr)
        for args in (["init", "-q", "-b", "main"], ["-c", "user.email=b@e", "-c", "user.name=b", "commit", "-q",
                                                      "--allow-empty", "-m", "init"]):
            subprocess.run(["git", *args], cwd=tmp, check=True, capture_output=True)
        env = {**os.environ, "GH_TOKEN": "bench-token", "GITHUB_REPOSITORY": "octo/hello",
               "GITHUB_API_URL": fake.base, "XDG_CACHE_HOME": os.path.join(tmp, ".cache"),
               "GHSTATE_DIR": os.path.join(tmp, ".ghstate")}
        hook = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": tmp})
        rows: dict[str, dict[str, float]] = {}
        for label, branch in (("newest branch", f"b{count}"), ("oldest branch", "b1"), ("branch with none", "none")):
            subprocess.run(["git", "checkout", "-q", "-B", branch], cwd=tmp, check=True)
            rows[f"resume, {label}"] = measure(fake, ["resume"], env, tmp)
            rows[f"checkpoint --risk, {label}"] = measure(fake, ["checkpoint", "--risk", "measured", "--resume",
                                                                 "Phase 1"], env, tmp)
        subprocess.run(["git", "checkout", "-q", "-B", "older"], cwd=tmp, check=True)
        rows["resume, not indexed (an older ghstate's)"] = measure(fake, ["resume"], env, tmp)
        rows["checkpoint --risk, not indexed (its first write: indexed)"] = measure(
            fake, ["checkpoint", "--risk", "measured", "--resume", "Phase 1"], env, tmp)
        rows["resume, not indexed, after its first write"] = measure(fake, ["resume"], env, tmp)
        subprocess.run(["git", "checkout", "-q", "-B", "from-form"], cwd=tmp, check=True)
        rows["resume, not indexed (made with the issue form)"] = measure(fake, ["resume"], env, tmp)
        subprocess.run(["git", "checkout", "-q", "-B", "b1"], cwd=tmp, check=True)
        rows["list (first page)"] = measure(fake, ["list"], env, tmp)
        rows["ready"] = measure(fake, ["ready"], env, tmp)
        rows["session-start hook, oldest branch"] = measure(fake, ["hook", "session-start"], env, tmp, hook)
        return rows


def main() -> None:
    counts = [10, 1_000, 10_000]
    if "--counts" in sys.argv:
        counts = [int(x) for x in sys.argv[sys.argv.index("--counts") + 1].split(",")]
    results = {count: run_count(count) for count in counts}
    names = list(results[counts[0]])
    if "--markdown" in sys.argv:
        print("| command | " + " | ".join(f"{c:,} open" for c in counts) + " |")
        print("| --- |" + " --- |" * len(counts))
        for name in names:
            cells = [f"{r['requests']:.0f} req, {r['bytes'] / 1024:,.0f} KB (largest {r['largest'] / 1024:,.0f} KB), "
                     f"{r['seconds']:.1f} s" for r in (results[c][name] for c in counts)]
            print(f"| {name} | " + " | ".join(cells) + " |")
        return
    for name in names:
        cells = (results[c][name] for c in counts)
        print(f"{name:<38}" + "".join(f"  {r['requests']:>3.0f} req {r['bytes'] / 1024:>7,.0f} KB (max "
                                      f"{r['largest'] / 1024:>5,.0f}) {r['seconds']:>5.1f} s" for r in cells))
    largest = max(r["largest"] for rows in results.values() for r in rows.values())
    print(f"largest answer: {largest / 1024:,.0f} KB (bound: 1,024 KB)")


if __name__ == "__main__":
    main()
