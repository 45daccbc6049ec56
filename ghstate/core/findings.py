"""Claims of a checkpoint that contradict each other or the working tree, said rather than left to the reader.

Pure: the checkpoint, its provenance and what the tree looks like now in; sentences out. Phases are
named by their number, commits by their hash: these sentences stand outside the prompt's data block,
so they repeat nothing a person typed into the issue.
"""

from __future__ import annotations

import re
from typing import Any

from ghstate.core.markup import short_commit
from ghstate.core.model import Checkpoint
from ghstate.core.provenance import Provenance
from ghstate.core.sections import BY_KEY

_HEX = re.compile(r"^[0-9a-f]{4,40}$")
FAILED = ("failing", "blocked", "failure", "failed")
STATUSES = ("passing", "success", "cancelled", "unknown", *FAILED)


def named_phases(cp: Checkpoint) -> list[int]:
    """0-based indexes of the phases the resume instruction names (by label, full name or "phase N")."""
    text = " ".join(cp.resume.lower().split())
    out = []
    for i, p in enumerate(cp.phases):
        label, name = " ".join(p.label.lower().split()), " ".join(p.name.lower().split())
        by_label = bool(label) and re.search(rf"(?<!\w){re.escape(label)}(?![\w])", text)
        if by_label or (name and name in text) or re.search(rf"\bphase\s*{i + 1}(?![\w.])", text):
            out.append(i)
    return out


def resume_names_only_done(cp: Checkpoint) -> list[int]:
    """The done phases the resume instruction names, when it names no unfinished one; else []."""
    named = named_phases(cp)
    if not named or any(not cp.phases[i].done for i in named):
        return []
    return named


def _numbers(indexes: list[int]) -> str:
    words = [str(i + 1) for i in indexes]
    return "phase " + words[0] if len(words) == 1 else "phases " + ", ".join(words[:-1]) + " and " + words[-1]


def commit_text(value: Any) -> str:
    """A commit hash from the checkpoint, shortened; "" when it is not one (text from an issue)."""
    return short_commit(value) if isinstance(value, str) and _HEX.match(value.lower()) else ""


def findings(cp: Checkpoint, *, head: str = "", commits_since: int | None = None) -> list[str]:
    """What a reader of the prompt should not take at face value. ``head`` is the commit checked out now."""
    prov = Provenance(cp)
    out: list[str] = []
    done_named = resume_names_only_done(cp)
    if done_named:
        nxt = cp.next_phase
        where = (f"the next unfinished phase is phase {cp.phases.index(nxt) + 1}" if nxt
                 else "every phase is done")
        ticks = [prov.tick(cp.phases[i].name) for i in done_named]
        resume = prov.resume()
        when = ""
        if resume.known and all(t.known for t in ticks) and max(t.revision for t in ticks) > resume.revision:
            when = (f" (ticked in revision {max(t.revision for t in ticks)}, after the instruction was set in "
                    f"revision {resume.revision})")
        out.append(f"The resume instruction names {_numbers(done_named)} of {len(cp.phases)}, which "
                   f"{'is' if len(done_named) == 1 else 'are'} done{when}; {where}. Trust the phase list over "
                   f"the instruction unless the instruction says why.")
    v = cp.verification_data
    vcommit = commit_text(v.commit) if v else ""
    status = v.status if v and v.status in STATUSES else ""  # said outside the data block
    if vcommit and head and not head.startswith(vcommit):
        since = f" ({commits_since} commit{'s' if commits_since != 1 else ''} since the checkpoint)" \
            if commits_since else ""
        out.append(f"The verification ({status or 'recorded'}) is for commit {vcommit}, not for HEAD "
                   f"{short_commit(head)}{since}: run the tests before relying on it.")
    if vcommit and status in FAILED:
        for i, phase in enumerate(cp.phases):
            tick = prov.tick(phase.name)
            if phase.done and tick.commit and short_commit(tick.commit) == vcommit:
                out.append(f"Phase {i + 1} is ticked (revision {tick.revision}, at {vcommit}), but the last CI "
                           f"result on that commit failed: treat it as not verified.")
    return out


def write_warning(before: Checkpoint | None, after: Checkpoint) -> str:
    """At write time: a tick that leaves the resume instruction pointing at a finished phase."""
    named = resume_names_only_done(after)
    if not named:
        return ""
    newly = [i for i in named if before is None or not any(p.name == after.phases[i].name and p.done
                                                             for p in before.phases)]
    changed_resume = before is not None and before.resume != after.resume
    if not newly and not changed_resume:
        return ""
    labels = ", ".join(after.phases[i].label for i in named)
    nxt = after.next_phase
    flag = f"--{BY_KEY['resume'].flag}"
    hint = f'e.g. {flag} "Start at {nxt.label}. …"' if nxt else f'{flag} "…"'
    return (f"the resume instruction still names {labels}, which {'is' if len(named) == 1 else 'are'} done; "
            f"set a new one with {hint}")
