"""Writes GitHub could not take, kept on this machine (``LocalStore.pending``), published: by ``ghstate push``,
and first thing by the next command that reaches GitHub (``send_first``), so that they reach GitHub without a
person.

Kept writes are published in the order they were made, each rebased onto its checkpoint as it is then
(``Writer.write(kept=True)``): never twice (a write the chain holds already landed), never out of order (when
one fails, the later ones for the same checkpoint wait behind it). One process of this machine publishes at a
time (a lock beside the kept writes); another that finds it taken leaves them to it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ghstate.core.intent import Intent
from ghstate.errors import GhstateError, InputError, NotFound, RemoteError, SecretFound
from ghstate.local.store import PendingWrite, file_lock

# ``app`` is an ``App`` (``ghstate.services.app``, which imports this module: named, not imported, here)
if TYPE_CHECKING:  # pragma: no cover
    from ghstate.github.store import GitHubStore
    from ghstate.services.writer import Writer, WriteResult


def target(record: PendingWrite) -> str:
    """What a kept write is for: an issue, or the new checkpoint of a branch."""
    write = record.write
    return f"#{write.number}" if write.number else f"a new checkpoint for {write.tree.branch or 'no branch'}"


@dataclass
class Pushed:
    """What became of one kept write."""

    file: str
    target: str
    result: str  # created | updated | unchanged | would publish | skipped | held | failed | set aside
    issue: int | None = None
    url: str = ""
    error: str = ""
    warnings: list[str] = field(default_factory=list)
    unreachable: bool = False  # it failed because GitHub did not answer

    @property
    def failed(self) -> bool:
        return self.result in ("failed", "held", "set aside")

    def data(self) -> dict[str, object]:
        return {"file": self.file, "target": self.target, "result": self.result, "issue": self.issue,
                "url": self.url or None, "error": self.error or None}

    def line(self) -> str:
        if self.result == "would publish":
            return f"Would publish {self.file} to {self.target} ({self.error or 'saved ?'})"
        if self.result == "skipped":
            return f"Skipped {self.file}: {self.error}"
        if self.result == "held":
            return f"Held back {self.file}: {self.error}"
        if self.result == "failed":
            return f"Could not publish {self.file}: {self.error}"
        if self.result == "set aside":
            return f"Set aside {self.file}: {self.error}"
        verb = {"created": "created", "updated": "updated"}.get(self.result, "already up to date:")
        return f"Published {self.file}: {verb} #{self.issue} {self.url}"


DEFAULT_API = "https://api.github.com"  # the GitHub a kept write that does not name one was kept for


def github_of(api_url: str) -> str:
    """A GitHub as a kept write names it: its API's URL, the host in lower case, without a trailing slash
    (``https://API.github.com/`` is ``https://api.github.com``); github.com's for a write that names none."""
    from urllib.parse import urlsplit

    parts = urlsplit((api_url or DEFAULT_API).strip())
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def host_of(api_url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(github_of(api_url)).netloc


def here(app: Any, record: PendingWrite) -> bool:
    """Whether a kept write is for this command's GitHub and repository (names in any letter case, as GitHub
    takes them): only such a one is sent with this command's token."""
    repo = app.settings.repo or ""
    return (record.repo or "").lower() == repo.lower() and github_of(record.api_url) == github_of(app.settings.api_url)


def waiting(app: Any) -> list[PendingWrite]:
    """This clone's kept writes for the command's GitHub and repository, oldest first (one that cannot be read
    aside)."""
    return [record for _, record in app.local.pending() if isinstance(record, PendingWrite) and here(app, record)]


def elsewhere(app: Any, record: PendingWrite) -> str:
    """Why a kept write is not sent by this command, and how to send it: it is for another repository, or for
    the same one on another GitHub."""
    if not record.repo:
        return "it names no repository (written by hand, or cut down), so it is never sent: delete it"
    if github_of(record.api_url) == github_of(app.settings.api_url):
        return f"it is for {record.repo}; run 'ghstate push -R {record.repo}'"
    return (f"it is for {record.repo} on {host_of(record.api_url)}, not on {host_of(app.settings.api_url)}: run "
            f"'GITHUB_API_URL={github_of(record.api_url)} ghstate push -R {record.repo}'")


@dataclass
class Sent:
    """What ``send_first`` did: the kept writes published, those still waiting (by ``target``), and the failure
    when GitHub did not answer (the command then does not ask it again)."""

    published: list[Pushed] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    unanswered: RemoteError | None = None

    @property
    def outcome(self) -> tuple[list[str], RemoteError | None]:
        """What a writer needs of it (``Writer.send_kept``): the targets still waiting, and GitHub's silence."""
        return self.waiting, self.unanswered


def send_first(app: Any, *, until: float | None = None, wait: float = 0) -> Sent:
    """This clone's kept writes for the repository published before the command's own requests, as ``push``
    publishes them, while ``until`` (a ``time.monotonic()`` deadline) allows a next one to start; once per
    command (a second call answers the first's). Nothing (no request, one folder listed) when none wait;
    nothing either while another process of this machine is publishing them (after ``wait`` seconds for it
    to finish). What each became is said as a notice of the store."""
    if not app.store.remote:
        return Sent()
    if app.kept_sent is not None:
        return app.kept_sent
    sent = app.kept_sent = Sent()
    _say_apart(app)
    if not waiting(app):
        return sent
    with file_lock(app.local.pending_dir / ".push.lock", wait=wait) as mine:
        if not mine:  # another command of this machine is publishing them
            sent.waiting = [target(record) for record in waiting(app)]
            return sent
        records = [(path, record) for path, record in app.local.pending()
                   if isinstance(record, PendingWrite) and here(app, record)]

        def stop() -> bool:
            return until is not None and time.monotonic() >= until

        outcomes = publish_all(app, app.github(), records, stop=stop)
    for outcome in outcomes:
        if outcome.result in ("created", "updated", "unchanged"):
            sent.published.append(outcome)
            app.store.notices.append(f"a write this machine kept while GitHub was out of reach was published first: "
                                     f"{outcome.line().split(': ', 1)[1]}")
        elif outcome.result == "set aside":  # refused for good: said, and nothing waits behind it
            app.store.notices.append(outcome.error)
        else:
            sent.waiting.append(outcome.target)
            if outcome.result == "failed" and not outcome.unreachable:
                app.store.notices.append(f"a write this machine kept for {outcome.target} could not be published "
                                         f"({outcome.error}); it waits, and later writes to it wait behind it")
        if outcome.unreachable and sent.unanswered is None:
            sent.unanswered = RemoteError(outcome.error, retryable=True, unreachable=True)
    if sent.waiting:
        count = len(sent.waiting)
        app.store.notices.append(f"{count} write{'s' if count != 1 else ''} this machine kept while GitHub was out "
                                 f"of reach {'are' if count != 1 else 'is'} still waiting in {app.local.pending_dir}; "
                                 "the next ghstate command that reaches GitHub sends them (or 'ghstate push')")
    return sent


def _say_apart(app: Any) -> None:
    """What a person must act on, said by every command that reaches GitHub until they do: this repository's
    kept writes GitHub refused for good (set aside), those kept for it on another GitHub, and kept-write files
    that cannot be read."""
    repo = (app.settings.repo or "").lower()
    for path, record, why in app.local.aside():
        if not isinstance(record, PendingWrite) or here(app, record):
            app.store.notices.append(set_aside_words(app, path, record, why))
    for path, record in app.local.pending():
        name = app.display_path(str(path))
        if not isinstance(record, PendingWrite):
            app.store.notices.append(f"{name} cannot be sent ({record}); 'ghstate push' names it")
        elif not here(app, record) and (record.repo or "").lower() == repo:
            app.store.notices.append(f"{name} was not sent: {elsewhere(app, record)}")


def for_good(exc: GhstateError) -> bool:
    """Whether GitHub's refusal of a kept write will never change, whatever is retried: the checkpoint is gone
    (deleted, transferred: not found; 410), or the write itself is refused (its body over the bound once
    rebased, a credential in it). Not so a refusal a person or time may lift (a token, a limit, an outage)."""
    if isinstance(exc, RemoteError):
        return exc.status == 410
    return isinstance(exc, (InputError, NotFound, SecretFound))


def set_aside_words(app: Any, path: Path, record: PendingWrite | GhstateError, why: str) -> str:
    """What a kept write set aside is, and what a person can do with it."""
    where = target(record) if isinstance(record, PendingWrite) else "a checkpoint"
    return (f"a write this machine kept for {where} was refused by GitHub for good ({why or record}), and is set "
            f"aside in {app.display_path(str(path))}: no later write waits for it; delete the file to drop it, or "
            f"move it back into {app.display_path(str(app.local.pending_dir))} to send it again")


def publish_all(app: Any, store: GitHubStore, records: list, dry_run: bool = False,
                stop: Callable[[], bool] | None = None) -> list[Pushed]:
    """Each kept write published in order (``push``); ``stop()`` true: the rest wait (``held``), as they do
    behind one GitHub did not answer."""
    writer = app.writer(keep_pending=False)
    out: list[Pushed] = []
    held: set[str] = set()  # checkpoints with an earlier write that failed: later ones keep their order
    before: dict[str, tuple[Intent, ...]] = {}  # the kept writes published so far, by checkpoint
    unanswered = ""
    for path, record in records:
        name = app.display_path(str(path))
        if isinstance(record, GhstateError):
            out.append(Pushed(name, "", "failed", error=str(record)))
            continue
        where = target(record)
        if not here(app, record):
            out.append(Pushed(name, where, "skipped", error=elsewhere(app, record)))
        elif dry_run:
            out.append(Pushed(name, where, "would publish", error=f"saved {record.saved_at or '?'}"))
        elif unanswered or (stop is not None and stop()):
            out.append(Pushed(name, where, "held", error=unanswered or "not sent within this command's time"))
        elif where in held:
            out.append(Pushed(name, where, "held", error=f"an earlier kept write for {where} is not published yet"))
        else:
            pushed = _push_one(app, store, writer, (path, name, where), record, held, before)
            unanswered = "GitHub did not answer an earlier one" if pushed.unreachable else ""
            out.append(pushed)
    return out


def _publish(store: GitHubStore, writer: Writer, record: PendingWrite, before: tuple[Intent, ...]) -> WriteResult:
    """Replay one kept write, as it was made, on the checkpoint as it is now (``before``: the kept writes
    to it published before it)."""
    write = record.write
    if not write.number and write.new_id:  # a create whose answer was lost may have landed
        landed = store.find_open(f'"id":"{write.new_id}"')
        if landed is not None:
            write = replace(write, number=landed.number)
    return writer.write(write, kept=True, before=before)


def _push_one(app: Any, store: GitHubStore, writer: Writer, where: tuple[str, str, str], record: PendingWrite,
              held: set[str], before: dict[str, tuple[Intent, ...]]) -> Pushed:
    path, name, target_ = where
    try:
        result = _publish(store, writer, record, before.get(target_, ()))
    except GhstateError as exc:
        if for_good(exc):  # never held behind: set aside for a person, said by every command until they act
            aside = app.local.set_aside(Path(path), str(exc), writer.clock())
            return Pushed(name, target_, "set aside", error=set_aside_words(app, aside, record, str(exc)))
        if not record.write.look_back:  # a look for replaced saves holds nothing back: it merges in any order
            held.add(target_)
        return Pushed(name, target_, "failed", error=str(exc),
                      unreachable=isinstance(exc, RemoteError) and exc.unreachable)
    with contextlib.suppress(FileNotFoundError):
        Path(path).unlink()
    if isinstance(record.write.intent, Intent):
        before[target_] = (*before.get(target_, ()), record.write.intent)
    stored = result.stored
    assert stored is not None
    verb = "created" if result.created else ("updated" if result.changed else "unchanged")
    beside = [_not_applied(app.label(stored.number), c, result.checkpoint) for c in result.conflicts]
    return Pushed(name, target_, verb, stored.number, stored.location,
                  warnings=[*beside, *result.warnings, *app.keep_project(stored, result.checkpoint)])


def _not_applied(label: str, section: str, cp: Any) -> str:
    """A kept write's value that met another landed after what it was made on (by the chain, never a clock):
    that one stands; said with the kept text, kept beside under "… (concurrent edit)"."""
    from ghstate.core.model import concurrent

    kept = next((" ".join(e.body.split()) for e in cp.extra if e.heading == concurrent(section)), "")
    text = f" (\"{kept[:200]}{'…' if len(kept) > 200 else ''}\")" if kept else ""
    return (f"{section} of {label} changed after this write was kept, and that change stands: this write's "
            f"{section[:1].lower() + section[1:]}{text} was not applied; it is kept beside it, under "
            f"\"{concurrent(section)}\"")
