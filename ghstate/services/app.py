"""What every command and service works with: settings, the store, the local store and the templates,
built once per command from options and the environment. No click here: the MCP server, the hooks and
scripts build an ``App`` with ``build_app`` as the CLI does."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ghstate import config, templating
from ghstate.core.model import Checkpoint
from ghstate.errors import ConfigError, NotFound
from ghstate.git import gitinfo
from ghstate.local import parsecache
from ghstate.local.store import LocalStore, holds_store
from ghstate.services.reader import current, locate
from ghstate.store import Store, Stored

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.github.project_sync import ProjectSync
    from ghstate.github.store import GitHubStore
    from ghstate.services.writer import Writer


# What a reader gives GitHub (``resume``, ``show``, the MCP tools: ``build_app(github=READ_BUDGET)``): 15 s in all,
# a deadline no attempt starts past (each may take the transport's 10 s); then this machine's copy
# (``services.outage``)
READ_BUDGET: dict[str, Any] = {"total": 15.0, "deadline": True}


KEPT_WAIT = 30.0  # seconds a write waits for another command of this machine to finish sending the kept writes


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class App:
    """Everything a command needs, built once from flags and environment."""

    def __init__(self, settings: config.Settings, store: Store, local: LocalStore) -> None:
        self.settings = settings
        self.store = store
        self.local = local
        self.clock: Callable[[], datetime] = utc_now  # what leases are measured by (tests set their own)
        self.tasks: Any = None  # the store's child tasks and claims (ghstate.services.family.backend), made once
        self.reading: Any = None  # where the state read comes from when not simply GitHub (services.outage.Reading)
        self.offline: Exception | None = None  # GitHub did not answer: what was read is this machine's copy
        # a reader that says where its state comes from (resume, show, the hooks, the MCP resume and show): it
        # may read this machine's copy when GitHub does not answer, with this machine's kept writes on top
        self.reads_last_seen = False
        self.kept_sent: Any = None  # what sending this clone's kept writes first did (services.kept.send_first)
        # a hook: a repository's template that cannot be used is replaced by the shipped one, said (never no context)
        self.template_fallback = False

    @functools.cached_property
    def env(self) -> Any:
        return templating.environment(self.settings.templates_dir, cache_dir=self.settings.cache_dir,
                                      fallback=self.template_fallback)

    def writer(self, *, keep_pending: bool = True) -> Writer:
        """The writer for this store; ``keep_pending``: a write GitHub cannot take is kept for 'push'."""
        from ghstate.services.writer import Writer

        s = self.settings
        builtin = None if templating.is_builtin(self.env, "checkpoint.md.j2") else templating.environment()
        writer = Writer(self.store, env=self.env, builtin=builtin, max_body_chars=s.policy.max_body_chars,
                        pending=self.local if keep_pending else None, repo=s.repo, api_url=s.api_url)
        writer.renamed = lambda branch: self.renamed_from(branch, proven=True)
        if self.store.remote:  # what it writes is what this machine last saw; kept writes go out first
            writer.looks = self.local  # a look for a person's save a mirror may have replaced, kept even by push
            from ghstate.services import kept, outage

            writer.replica = outage.replica(self)
            writer.remember = lambda stored, cp, body: outage.remember(self, stored, cp, body)
            if keep_pending:
                # a write waits for another command of this machine that is sending them (then sees what is left)
                writer.send_kept = lambda: kept.send_first(self, wait=KEPT_WAIT).outcome
        return writer

    def caught_up(self, stored: Stored) -> Stored:
        """A checkpoint whose body lags its chain (a write whose body could not be brought up to date, a person's
        edit not merged yet) with the body made its chain head's mirror, by a write that changes nothing else:
        what a close does before it folds the chain, so that the closed checkpoint's body names the head its
        chain ends at (``show``, ``log`` and ``resume`` of a closed checkpoint read from there, and a reopened
        one goes on from there)."""
        from ghstate.core.intent import Intent, WriteSpec

        spec = WriteSpec(Intent(), number=stored.number, lookup=False, create=False, record_tree=False, event="close")
        return self.writer(keep_pending=False).write(spec).stored or stored

    @functools.cached_property
    def project(self) -> ProjectSync | None:
        """The GitHub Project (v2) this command keeps current, when one is configured (ids cached here)."""
        from ghstate.github.project_sync import connect

        return connect(self.settings, self.store)

    def keep_project(self, stored: Stored, cp: Checkpoint) -> list[str]:
        """After a write: the checkpoint's project item made current; warnings, never a failure."""
        if not self.settings.project or self.project is None or not self.settings.repo:
            return []  # no project: nothing imported, nothing asked
        return self.project.keep(self.settings.repo, stored.number, cp)

    @property
    def fallback(self) -> str:
        """What a command says when ``--store auto`` fell back to the local store although the checkpoints
        are on GitHub (no token, an ``origin`` on another host than the API's): "" when it did not."""
        reason = self.settings.fallback
        if not reason:
            return ""
        issues = f"the issues of {self.settings.repo}" if self.settings.repo else "GitHub's issues"
        return (f"using the local store ({self.display_path(str(self.settings.store_dir))}), not {issues}: "
                f"{reason}")

    def searched(self, *, why: bool = True) -> str:
        """The store a command looked in, for a person: ``the local store``, saying when GitHub was not read
        (and, with ``why``, the reason)."""
        said = f"the {self.store.kind} store"
        if not self.settings.fallback:
            return said
        return f"{said} (GitHub's checkpoints were not read{': ' + self.settings.fallback if why else ''})"

    def flush_notices(self) -> None:
        """Say what the store noticed and did not fail on (ignored log entries, unread pages)."""
        fallen = templating.fallen_back(self.__dict__["env"]) if "env" in self.__dict__ else []
        for notice in dict.fromkeys([*self.store.notices, *fallen]):
            print(f"Warning: {notice}", file=sys.stderr)
        self.store.notices.clear()

    def github(self) -> GitHubStore:
        """The GitHub store, for what only GitHub does (comments, labels); a clear error elsewhere."""
        from ghstate.github.store import GitHubStore

        if not isinstance(self.store, GitHubStore):
            raise ConfigError("this needs the GitHub store: set GH_TOKEN (or GITHUB_TOKEN) and -R OWNER/NAME, "
                              "or pass --store github")
        return self.store

    def label(self, number: int) -> str:
        return f"#{number}" if self.store.remote else f"local #{number}"

    def describe_source(self, stored: Stored) -> str:
        if self.store.remote:
            return f"GitHub issue #{stored.number} ({stored.location})"
        return f"local checkpoint #{stored.number} ({self.where(stored)})"

    def where(self, stored: Stored) -> str:
        """Where a checkpoint is, for a person: its URL, or its file relative to here."""
        return stored.location if self.store.remote else self.display_path(stored.location)

    def display_path(self, location: str) -> str:
        try:
            return str(Path(location).relative_to(Path.cwd()))
        except ValueError:
            return location

    def tree(self) -> gitinfo.WorkTree:
        """The working tree now, with at most MAX_DIRTY dirty paths (beyond them drift errs on "changed")."""
        tree = gitinfo.work_tree(self.settings.root if self.settings.in_git else None)
        return tree._replace(dirty=gitinfo.recordable(self.own_files_removed(tree.dirty)))

    def own_files_removed(self, paths: tuple[str, ...]) -> tuple[str, ...]:
        """Paths without ghstate's own files and the hosts' (``config.own_files_removed``)."""
        return config.own_files_removed(self.settings, paths)

    def renamed_from(self, branch: str, *, proven: bool = False) -> str:
        """For a branch with no checkpoint: when its reflog says it was renamed (``git branch -m``) from a name
        that has an open checkpoint, which one, and how to go on with it; on the local store, without such a
        reflog (renamed in another clone, or the reflog expired), an open checkpoint of a branch this clone no
        longer has whose commit is in this branch's history; "" otherwise."""
        root = self.settings.root if self.settings.in_git else None
        for name in gitinfo.former_names(root, branch):
            stored = locate(self.store, None, name)
            if stored is not None:
                n = stored.number
                return (f"this branch was renamed from {name}, whose checkpoint is {self.label(n)}: 'ghstate resume "
                        f"{n}' reads it, and 'ghstate checkpoint {n} --move' with your next change makes it this "
                        "branch's")
        if self.store.remote or root is None or proven:  # on GitHub, a listing would cost requests on every
            return ""  # such miss; ``proven``: only what the reflog shows (a write refused on a guess would stop work)
        from itertools import islice

        rows = [(stored, current(self.store, stored)) for stored in islice(self.store.iter_open(), 30)]
        gone = gitinfo.branch_states(root, [cp.meta.branch for _, cp in rows if cp.meta.branch])
        for stored, cp in rows:
            if gone.get(cp.meta.branch) == "gone" and gitinfo.in_history(root, cp.meta.commit):
                n, name = stored.number, cp.meta.branch
                return (f"{self.label(n)} is the checkpoint of branch {name}, which this clone no longer has, and its "
                        f"commit is in this branch's history: if this branch was {name}, 'ghstate checkpoint {n} "
                        f"--move' with your next change makes it this branch's ('ghstate resume {n}' reads it)")
        return ""

    def detached_at(self, tree: gitinfo.WorkTree) -> str:
        """For a detached HEAD with no checkpoint: the checkpoint of a branch whose tip it is, and how to read it
        (at most three branches are looked up); "" otherwise."""
        root = self.settings.root if self.settings.in_git else None
        if tree.branch or not tree.commit:
            return ""
        for name in gitinfo.branches_at(root, tree.commit):
            stored = locate(self.store, None, name)
            if stored is not None:
                n = stored.number
                return (f"HEAD is detached at the tip of branch {name}, whose checkpoint is {self.label(n)}: "
                        f"'ghstate resume {n}' reads it ('git switch {name}' makes every command find it)")
        return ""

    def find(self, number: int | None, *, tree: gitinfo.WorkTree | None = None,
             closed: bool = False) -> tuple[Stored, Checkpoint]:
        """ISSUE, or the open checkpoint of the current branch (``closed``: or its closed one, when it has none
        open); a clear error when there is none."""
        found = self.read(number, tree=tree, closed=closed)
        if found is None:
            tree = tree or self.tree()
            raise NotFound(f"no open checkpoint for {tree.place} in {self.searched()}; "
                           f"{self.renamed_from(tree.branch) or self.detached_at(tree) or NONE_YET}")
        return found

    def read(self, number: int | None, *, tree: gitinfo.WorkTree | None = None, closed: bool = False,
             until: float | None = None) -> tuple[Stored, Checkpoint] | None:
        """As ``find``, None when the branch has none. On GitHub, through ``services.outage``: kept writes sent
        first (while ``until`` allows), and this machine's last copy when GitHub does not answer."""
        if number is None:
            tree = tree or self.tree()
        branch = tree.branch if tree is not None else ""
        if self.store.remote:
            from ghstate.services import outage

            return outage.read(self, number, branch, closed=closed, until=until)
        stored = self.store.get(number) if number is not None else locate(self.store, None, branch, closed=closed)
        return (stored, current(self.store, stored)) if stored is not None else None


def _within(path: Path, root: Path) -> bool:
    """Whether ``path`` is inside the work tree ``root`` (not its git folder)."""
    try:
        inside = path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return not inside.parts or inside.parts[0] != ".git"


NONE_YET = "give an ISSUE number, or create one with 'ghstate checkpoint'"


def build_app(*, repo: str | None = None, store: str | None = None, need_token: bool = True,
              agent: str | None = None, role: str | None = None, session: str | None = None,
              project: str | None = None, github: dict[str, Any] | None = None) -> App:
    """The App for one command. ``github``: keyword arguments for the GitHub store (hooks pass short
    timeouts). PyGithub is imported only when the store is GitHub."""
    settings = config.build(repo=repo, store=store, need_token=need_token, agent=agent, role=role, session=session,
                            project=project)
    parsecache.use(settings.cache_dir)
    local = LocalStore(settings.store_dir)
    root = settings.root if settings.in_git else None
    if root is not None and _within(settings.store_dir, root):  # GHSTATE_DIR in the work tree: a kept-write file
        local.ignored = lambda folder: gitinfo.ignored(root, folder)  # what git does not ignore is the repository's
    # One store per clone: a worktree's own, from before, joins it when this command uses it (on GitHub, only
    # when it holds kept writes); what git tracks there is copied and left in place, never a kept write
    if settings.store_dir != settings.state_dir and holds_store(settings.state_dir, settings.store != "local"):
        from ghstate.local.worktrees import gather

        own = (lambda: gitinfo.ignored(root, settings.state_dir)) if root is not None else (lambda: None)
        for said in gather(settings.state_dir, local, own, root):
            print(f"Note: {said}", file=sys.stderr)
    chosen: Store
    if settings.store == "github":
        from ghstate.github.store import GitHubStore  # only GitHub commands pay for PyGithub

        assert settings.repo is not None
        github_store = GitHubStore.connect(settings, **(github or {}))
        if settings.cache_dir:  # this machine's writes to the repository, spaced under GitHub's secondary limit
            from ghstate.local.pace import Pacer

            pacer = Pacer(Path(settings.cache_dir).parent, f"{settings.api_url} {settings.repo}")
            github_store.before_write = pacer.before_write
            github_store.machine_lock = pacer.writing  # this machine's writers, one at a time
        chosen = github_store
    else:
        chosen = local
    app = App(settings, chosen, local)
    if settings.store == "github":  # a close folds only a chain whose head the body names: it is brought there
        github_store.caught_up = app.caught_up
    return app
