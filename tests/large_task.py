"""A realistic large task, as a long-running session writes it: 30 phases with steps, 40 locked
decisions, 25 risks, 30 files to re-read, a ~17 KB body. Shared by the tests and the benchmark."""

from __future__ import annotations

AREAS = ("storage", "indexer", "query planner", "cache", "auth", "billing", "export", "scheduler", "search",
         "audit log")


def large_task_body(done: int = 12) -> str:
    lines = ["## Goal", "Move every service of the monolith onto the new storage engine without downtime, keeping "
             "the public API byte-compatible and the p99 latency under 120 ms while both engines run side by side.",
             "", "## Current status"]
    for i in range(1, 31):
        area = AREAS[i % len(AREAS)]
        mark = "x" if i <= done else " "
        lines.append(f"- [{mark}] Phase {i}: move the {area} layer, part {i // len(AREAS) + 1}")
        for j in range(1, 5):
            step = "x" if i <= done or (i == done + 1 and j <= 2) else " "
            lines.append(f"  - [{step}] port `src/{area.replace(' ', '_')}/part{j}.py` and its tests")
    lines += ["", "## Decisions locked"]
    for i in range(1, 41):
        area = AREAS[i % len(AREAS)]
        lines.append(f"- D{i}: the {area} layer keeps its public signatures; adapters in "
                     f"`src/{area.replace(' ', '_')}/compat.py` translate, and nothing outside it imports the engine")
    lines += ["", "## Open questions", "- should the export job read from the old engine until Phase 25?",
              "- do billing reconciliations need a freeze window during the cut-over?", "", "## Remaining risks"]
    for i in range(1, 26):
        lines.append(f"- R{i}: the {AREAS[i % len(AREAS)]} migration may double-write under retries when "
                     f"the queue redelivers (seen once in staging)")
    lines += ["", "## Files to re-read"]
    for i in range(1, 31):
        lines.append(f"- `src/{AREAS[i % len(AREAS)].replace(' ', '_')}/module_{i}.py`")
    lines += ["", "## Resume instruction",
              f"Start at Phase {done + 1}: steps 1 and 2 are done; port step 3 next. Re-read the compat adapters "
              "before touching engine code; run the dual-write tests after every step.", ""]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(len(large_task_body()))


def sized_task_body(kilobytes: int, done: int = 12, risks: int = 25) -> str:
    """A task of about ``kilobytes`` KB with 30 phases and 40 locked decisions (issue 55's 11 KB and 30 KB tasks):
    the decisions and ``risks`` risks grow to make the size (each item under the 400 characters lint allows), with
    30 files to re-read."""
    target = kilobytes * 1000
    for width in range(40, 400, 4):
        pad = "; measured against the old engine in staging before and after the switch" * (width // 70 + 1)
        lines = ["## Goal", "Move every service of the monolith onto the new storage engine without downtime.", "",
                 "## Current status"]
        lines += [f"- [{'x' if i <= done else ' '}] Phase {i}: move the {AREAS[i % len(AREAS)]} layer"
                  for i in range(1, 31)]
        lines += ["", "## Decisions locked"]
        lines += [f"- D{i}: the {AREAS[i % len(AREAS)]} layer keeps its public signatures{pad[:width]}"
                  for i in range(1, 41)]
        lines += ["", "## Remaining risks"]
        lines += [f"- R{i}: the {AREAS[i % len(AREAS)]} migration may double-write under retries{pad[:width]}"
                  for i in range(1, risks + 1)]
        lines += ["", "## Files to re-read"]
        lines += [f"- `src/{AREAS[i % len(AREAS)].replace(' ', '_')}/module_{i}.py`" for i in range(1, 31)]
        lines += ["", "## Resume instruction", f"Start at Phase {done + 1}: port step 3 next; re-read the compat "
                  "adapters before touching engine code.", ""]
        body = "\n".join(lines)
        if len(body) >= target:
            return body
    return body
