"""Rehydration: a checkpoint next to reality, fitted to a budget, given once per agent session.

What ``resume`` prints and what the SessionStart hook injects come from here: the drift of the tree,
the findings of ``trust``, the prompt fitted by ``fit``, and what a session has already been given
(``seen``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ghstate import drift as drift_mod
from ghstate import fit, gitinfo, present, render, seen, trust
from ghstate.commands.common import App
from ghstate.model import Checkpoint, file_paths_of, runtime_entry, with_digests
from ghstate.provenance import Provenance
from ghstate.stores import Stored


class Observed(NamedTuple):
    """Reality next to the checkpoint: drift, runtime probes, stale files to re-read, findings."""

    drift: drift_mod.Drift
    statuses: list[str]
    reread_stale: dict[str, int]  # file → the revision that listed it, when it changed since then
    findings: list[str]


MAX_LISTING_COMMITS = 3  # older revisions whose files to re-read are compared with the tree


def observe(app: App, cp: Checkpoint, tree: gitinfo.WorkTree) -> Observed:
    """Check reality: drift of the working tree since the checkpoint, the runtime probes, and what of
    the checkpoint contradicts itself or the tree."""
    root = app.settings.root if app.settings.in_git else None
    changes = (gitinfo.changes_since(root, cp.meta.commit) if drift_mod.recorded_in_repository(cp)
               else gitinfo.Changes(False))
    changes = changes._replace(changed_files=app.own_files_removed(changes.changed_files))
    recorded = cp.meta.fingerprints
    fingerprints = gitinfo.fingerprints(root, tuple(recorded)) if recorded else {}
    if root is not None and drift_mod.recorded_in_repository(cp):  # what is uncommitted, and HEAD
        status = gitinfo.work_tree(root)
        tree = tree._replace(dirty=app.own_files_removed(status.dirty), commit=tree.commit or status.commit)
    drift = drift_mod.compute(cp, tree, changes, fingerprints, in_repository=root is not None)
    statuses = []
    if cp.runtime:
        from ghstate import probes

        statuses = probes.probe_all([runtime_entry(item)[1] for item in cp.runtime])
    stale = _reread_stale(app, cp, drift) if drift.known and not drift.commit_missing else {}
    findings = trust.findings(cp, head=drift.head, commits_since=drift.commits_since)
    return Observed(drift, statuses, stale, findings)


def _reread_stale(app: App, cp: Checkpoint, drift: drift_mod.Drift) -> dict[str, int]:
    """Files to re-read listed by an older revision (on another commit) that changed since that one."""
    prov = Provenance(cp)
    by_commit: dict[str, list[tuple[str, int]]] = {}
    for item in cp.files:
        source = prov.item("files", item)
        if source.known and source.commit and not cp.meta.commit.startswith(source.commit):
            for path in file_paths_of(item):
                if path not in drift.reread_changed:
                    by_commit.setdefault(source.commit, []).append((path, source.revision))
    out: dict[str, int] = {}
    for commit in sorted(by_commit, key=lambda c: -max(r for _, r in by_commit[c]))[:MAX_LISTING_COMMITS]:
        since = gitinfo.changes_since(app.settings.root, commit)
        if not since.commit_known:
            continue
        for path, revision in by_commit[commit]:
            if any(drift_mod.matches(path, f) for f in since.changed_files):
                out[path] = revision
    return out


def resume_text(app: App, stored: Stored, cp: Checkpoint, fmt: str, tree: gitinfo.WorkTree,
                notes: list | Callable[[], tuple[list, int]] | None = None, skipped: int = 0, budget: int = 0,
                delivery: tuple[str, str] | None = None, mcp: bool = False) -> str:
    """``delivery``: (session id, SessionStart source): give what that session has not seen yet. ``mcp``:
    the session's host reaches ghstate through its MCP server (the startup line says so)."""
    if fmt == "markdown":  # the body as stored, its marker's digests those of what it holds now
        body = render.replace_marker(stored.body, with_digests(cp))
        return body if body.endswith("\n") else body + "\n"
    label = app.label(stored.number)
    observed: list[Observed] = []
    if callable(notes):  # comments from GitHub: fetched only when the whole prompt is given
        fetch, notes = notes, None

        def comments() -> tuple[list, int]:
            nonlocal notes, skipped
            if notes is None:
                notes, skipped = fetch()
            return notes, skipped
    else:
        def comments() -> tuple[list, int]:
            return notes or [], skipped

    def obs() -> Observed:  # git and the runtime probes only when the answer needs them
        if not observed:
            observed.append(observe(app, cp, tree))
        return observed[0]

    if fmt == "short":
        return present.short(cp, label=label, drift=obs().drift, env=app.env) + "\n"

    def full() -> fit.Fitted:
        o = obs()
        shown, left = comments()
        facts = present.PromptFacts(o.drift, o.statuses, shown, left, o.findings, o.reread_stale)
        return present.fitted_prompt(cp, source=app.describe_source(stored), env=app.env, facts=facts,
                                     budget=budget, show_command=f"ghstate show {stored.number}")

    kind, text, found = "full", "", None
    if delivery is not None:
        kind, text, found = deliver(app, stored, cp, delivery, obs, full, mcp)
    fitted = full() if kind == "full" or fmt == "json" else None
    if fitted is not None and kind == "full":
        text = fitted.text
    if fmt == "json":
        import json

        from ghstate.state_json import to_json

        data = to_json(with_digests(cp), issue=stored.number, url=stored.location,
                       drift=obs().drift.as_dict(), runtime_status=obs().statuses)
        shown, left = comments()
        data["notes"] = [{"author": n.author, "created_at": n.created_at, "body": n.body} for n in shown]
        data["notes_left_out"] = left
        data["findings"] = obs().findings
        data["reread_stale"] = obs().reread_stale
        assert fitted is not None
        data["fit"] = fit_json(fitted, budget)
        if delivery is not None:
            data["delivery"] = {"kind": kind, "text": text.rstrip("\n") + "\n",
                                "changes": found.as_dict() if found is not None else None}
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    return text.rstrip("\n") + "\n"


def fit_json(fitted: fit.Fitted, budget: int) -> dict:
    sel = fitted.selection
    return {"budget": budget or None, "chars": len(fitted.text), "over": fitted.over, "left_out": fitted.left_out,
            "kept": {"decisions": sel.decisions, "questions": sel.questions, "risks": sel.risks, "notes": sel.notes,
                     "files": sel.files, "runtime": sel.runtime, "finished_phase_names": sel.done_names,
                     "later_phase_names": sel.later_names}}


def deliver(app: App, stored: Stored, cp: Checkpoint, delivery: tuple[str, str], obs: Callable[[], Observed],
            full: Callable[[], fit.Fitted], mcp: bool = False) -> tuple[str, str, seen.Changes | None]:
    """Once per session and revision: (kind, text, changes) for a session starting with ``source``,
    recorded in the seen-file so that the next start of the same session knows what it was given."""
    session, source = delivery
    label = app.label(stored.number)
    if not session:  # nothing to remember it by: the full prompt, or the pointer at startup
        if source == "startup":
            return "pointer", present.pointer_line(present.short(cp, label=label, drift=obs().drift, env=app.env),
                                                   stored.number, mcp), None
        return "full", "", None
    key = f"{app.store.kind}:{stored.number}"
    with seen.book(app.settings.state_dir) as book:
        record = book.get(session, key)
        decision = seen.decide(source, record, cp)
        if decision.kind == "full":
            book.put(session, key, seen.snapshot(cp, full=True, source=source))
            return "full", "", None
        if decision.kind == "line":
            return "line", present.already_seen_line(label, stored.number, cp.meta.revision), None
        if decision.kind == "changes":
            assert decision.changes is not None and record is not None
            text = present.changes_prompt(cp, decision.changes, label=label, env=app.env, findings=obs().findings)
            fitted = full()
            if len(text) >= len(fitted.text):  # so much changed that the whole prompt says it better
                book.put(session, key, seen.snapshot(cp, full=True, source=source))
                return "full", fitted.text, decision.changes
            book.put(session, key, seen.snapshot(cp, full=bool(record.get("full")), source=source))
            return "changes", text, decision.changes
    return "pointer", present.pointer_line(present.short(cp, label=label, drift=obs().drift, env=app.env),
                                           stored.number, mcp), None


def hook_context(app: App, stored: Stored, cp: Checkpoint, tree: gitinfo.WorkTree, event: dict,
                 host: str = fit.DEFAULT_HOST) -> str:
    """What a SessionStart hook of ``host`` injects (see ``deliver``), fitted into that host's budget."""
    source = event.get("source") or "startup"
    session = event.get("session_id") if isinstance(event.get("session_id"), str) else ""
    notes: Callable[[], tuple[list, int]] | None = None
    if app.store.remote and source != "startup":  # comments: asked for only when given in full
        notes = lambda: app.github().notes_since(stored, cp.meta.updated_at)  # noqa: E731
    budget = fit.host_budget(host, app.settings.policy.prompt_budget)
    return resume_text(app, stored, cp, "prompt", tree, notes, budget=budget,
                       delivery=(session, source), mcp=host != fit.DEFAULT_HOST).strip()
