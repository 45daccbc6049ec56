"""What the Action does beside a CI result, on the events that carry a checkpoint's life: a pull request
opened or changed (linked to its branch's checkpoint), merged (the checkpoint closes as completed, the final
result recorded on it first), closed unmerged (recorded; closed as not planned once its branch is gone), and
a branch deleted (its checkpoint closed as not planned, unless its pull request is still open). Every other
event records the result as ``ghstate.services.ci`` does. Nothing here fails the job: what it did not do is a
notice, in one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ghstate.config import CiRun
from ghstate.core.marker import PullRequest
from ghstate.core.present import oneline
from ghstate.errors import GhstateError, NotFound
from ghstate.services.ci import CiOutcome, CiRequest, _write, record_result
from ghstate.services.reader import current, locate
from ghstate.store import Stored

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.services.app import App

NOTHING = {"issue": "", "status": ""}


def follow(app: App, runner: CiRun, request: CiRequest) -> CiOutcome:
    """The run's event followed: a pull request's, a deleted branch's, else the result recorded."""
    if runner.pull is not None:
        return on_pull_request(app, runner, request)
    if runner.event_name == "delete":
        if not runner.deleted_branch:
            return CiOutcome(None, [("notice", "a tag was deleted, not a branch; nothing to do")], NOTHING)
        return on_branch_deleted(app, runner, request)
    return record_result(app, runner, request)


def on_pull_request(app: App, runner: CiRun, request: CiRequest) -> CiOutcome:
    """Link the pull request to its head branch's checkpoint (with the result, when one is given); merged: close
    it as completed; closed unmerged with its branch gone: close it as not planned."""
    pr = runner.pull
    assert pr is not None
    branch = pr.head_ref or runner.branch
    if pr.from_fork:  # the head ref names a branch of the fork: no checkpoint of this repository is its
        fork = pr.head_repo or f"of {pr.head_owner} (deleted since)"
        said = (f"pull request #{pr.number} comes from the fork {fork}: its branch {_name(branch)} is not "
                f"one of {pr.base_repo}'s; nothing recorded")
        return CiOutcome(None, [("notice", said)], NOTHING)
    link = PullRequest(pr.number, pr.url, pr.state)
    outcome = record_result(app, runner, request._replace(pull_request=link)) if request.result else \
        _link(app, runner, request.issue, link)
    if outcome.written is None:
        return _none_open(app, outcome, branch, request.issue)
    stored = outcome.written.stored
    assert stored is not None
    notes = list(outcome.annotations)
    try:
        if pr.state != "open":
            notes.append(("notice", _after_closed(app, stored, pr.number, pr.state, branch)))
    except GhstateError as exc:  # what was written stands: only the close is missing, said as a warning
        notes.append(("warning", f"#{stored.number} was not closed ({exc}); what was recorded stands"))
    return outcome._replace(annotations=notes)


def _after_closed(app: App, stored: Stored, number: int, state: str, branch: str) -> str:
    """A closed pull request's checkpoint: closed as completed when it merged; as not planned when it closed
    unmerged and its branch is gone (one request asks), else left open."""
    if state == "merged":
        return _close(app, stored, "completed", f"pull request #{number} merged")
    from ghstate.services.lifecycle import branch_states

    if branch_states(app, [branch]).get(branch):
        return _close(app, stored, "not_planned", f"pull request #{number} closed unmerged and its branch is gone")
    return (f"#{stored.number} stays open: pull request #{number} closed unmerged, its branch {_name(branch)} is "
            "still there ('ghstate list --stale' names it)")


def on_branch_deleted(app: App, runner: CiRun, request: CiRequest) -> CiOutcome:
    """A deleted branch's open checkpoint closed: as not planned when its pull request closed unmerged or it had
    none, as completed when it merged (a merge the Action did not see); left open while its pull request is
    open (that pull request's own closed event decides)."""
    branch = runner.deleted_branch
    notes: list[tuple[str, str]] = []
    if request.result:
        notes.append(("notice", "a delete event records no CI result"))
    found = locate(app.store, None, branch, closed=True)
    stored = found if found is not None and found.state == "open" else None
    if stored is None:
        notes.append(("notice", f"no open checkpoint for the deleted branch {_name(branch)}; nothing to close"))
        if found is not None and app.store.retire_branch(branch, found):  # its entry names a closed one: gone
            notes.append(("notice", f"the branch index no longer names #{found.number} for {_name(branch)}"))
        return CiOutcome(None, notes, NOTHING)
    pr = current(app.store, stored).meta.pull_request
    if pr is not None and pr.state == "open":
        notes.append(("notice", f"#{stored.number} stays open: its pull request #{pr.number} is open (its closed "
                                "event closes the checkpoint)"))
    elif pr is not None and pr.state == "merged":
        notes.append(("notice", _close(app, stored, "completed", f"pull request #{pr.number} merged")))
    else:
        notes.append(("notice", _close(app, stored, "not_planned", f"its branch {_name(branch)} was deleted")))
    return CiOutcome(None, notes, {"issue": str(stored.number), "status": ""})


def _link(app: App, runner: CiRun, number: int | None, link: PullRequest) -> CiOutcome:
    """The pull request linked to the checkpoint, written only when it changed (a write that changes nothing is
    skipped)."""
    from ghstate.core.intent import Intent

    try:
        written = _write(app, number, runner, lambda cp: Intent(pull_request=link), None)
    except NotFound as exc:
        said = f"{exc}; nothing recorded" if number else f"no open checkpoint for branch {_name(runner.branch)}"
        return CiOutcome(None, [("notice", said)], NOTHING)
    stored = written.stored
    assert stored is not None
    said = f"linked pull request #{link.number} ({link.state}) to #{stored.number}" if written.changed else \
        f"#{stored.number} already links pull request #{link.number} ({link.state})"
    data = written.checkpoint.verification_data
    return CiOutcome(written, [*(("warning", w) for w in written.warnings), ("notice", said)],
                     {"issue": str(stored.number), "status": str(data.status) if data else ""})


def _none_open(app: App, outcome: CiOutcome, branch: str, number: int | None) -> CiOutcome:
    """No open checkpoint took the pull request: said in one line (a closed one, where the store knows it)."""
    if number is not None:
        return outcome
    notes = [n for n in outcome.annotations if not n[1].startswith("no open checkpoint")]
    found = app.store.find_branch(branch) if branch else None
    if isinstance(found, Stored) and found.state == "closed":
        from ghstate.services.lifecycle import why_closed

        words = why_closed(app, found, current(app.store, found))
        notes.append(("notice", f"#{found.number}, the checkpoint of branch {_name(branch)}, was {words} already; "
                                "nothing recorded"))
    else:
        notes.append(("notice", f"no open checkpoint for branch {_name(branch)}; nothing recorded"))
    return outcome._replace(annotations=notes)


def _close(app: App, stored: Stored, reason: str, why: str) -> str:
    """``stored`` closed (``completed`` or ``not_planned``); what to say of it."""
    if stored.state != "closed":
        app.store.close(stored, reason)
    return f"closed #{stored.number} as {reason.replace('_', ' ')}: {why}"


def _name(branch: str) -> str:
    return oneline(branch) or "(unknown)"
