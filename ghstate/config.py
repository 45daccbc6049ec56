"""Settings, built once at the edge from flags, environment and the repository's config file.

Nothing else in ghstate reads ``os.environ`` for its own settings or opens the config file. Policy
that must outlive sessions (labels, templates, default store, trusted authors, CI threshold) lives in
``.ghstate/config.toml`` or ``[tool.ghstate]`` in ``pyproject.toml``. A bad value is an error; an unknown key
is a warning (a typo, said with the key meant; or a newer ghstate's key a teammate committed: it must not stop
an older ghstate, its hooks least of all).
"""


import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from ghstate.core.model import DEFAULT_MAX_BODY, GITHUB_LIMIT, MAX_SESSION
from ghstate.errors import ConfigError
from ghstate.git import gitinfo
from ghstate.store import STORE_KINDS, StoreKind

DEFAULT_API = "https://api.github.com"
STORES = ("auto", *STORE_KINDS)


class Policy(NamedTuple):
    """The repository's configuration file."""

    store: str = "auto"
    label: str = "ghstate"
    ci_failing_label: str = "ghstate:ci-failing"
    blocked_label: str = "ghstate:blocked"
    templates: str = ".ghstate/templates"
    trusted_associations: tuple[str, ...] = ("OWNER", "MEMBER", "COLLABORATOR")
    trusted_authors: tuple[str, ...] = ()
    block_after: int = 3
    max_item_chars: int = 400
    max_body_chars: int = DEFAULT_MAX_BODY
    prompt_budget: int = 0  # characters for `resume` (0: no limit); hooks use at most their host's limit
    project: str = ""  # a GitHub Project (v2) whose items ghstate keeps current: orgs/OWNER/projects/N, …
    github: bool = False  # set by `ghstate init` on GitHub: the checkpoints are there, never fall back silently
    stale_days: int = 30  # days without a write after which `list --stale` names an open checkpoint
    checkpoint_at: int = 60  # percent of the context's window at which the agent is asked to checkpoint (0: never)

    def trusts(self, author: str, association: str, own: str = "") -> bool:
        """Whether ``author`` (a REST login: ``slug[bot]`` for an app), whose association with the repository is
        ``association`` (GitHub's ``authorAssociation``), may write what ghstate takes as a checkpoint or shows a
        session as a comment: an association the policy trusts, a login it names, or ``own``, the token's own
        user (an app's bot that created its checkpoints has no association with the repository). Logins are
        compared as GitHub does, without regard to letter case."""
        name = author.lower()
        return association in self.trusted_associations or (bool(name) and (
            name in {a.lower() for a in self.trusted_authors} or name == own.lower()))

    def labels(self) -> list[tuple[str, str, str]]:
        """The labels ghstate keeps in a repository: (name, colour, description), as ``init`` creates them and
        ``init --remove --github`` deletes them (with ``DOCTOR_LABEL``, its probes')."""
        return [(self.label, "1d76db", "Working state kept by ghstate"),
                (self.ci_failing_label, "d93f0b", "ghstate: CI is failing on this task"),
                (self.blocked_label, "b60205", "ghstate: CI failed too often in a row; needs a person")]


DOCTOR_LABEL = "ghstate-doctor"  # the label of `doctor --github`'s throwaway probe issue


class Settings(NamedTuple):
    root: Path  # the git working tree's top, or the current folder outside git
    in_git: bool
    state_dir: Path  # .ghstate/ of this worktree (config.toml, templates/), or GHSTATE_DIR: see store_dir
    store: StoreKind  # resolved from "auto"
    repo: str | None
    api_url: str
    policy: Policy
    token: str = ""  # never printed: see __repr__
    agent: str = ""
    role: str = ""
    session: str = ""
    cache_dir: str | None = None  # compiled templates; None disables the cache
    project: str = ""  # --project, GHSTATE_PROJECT, or the policy's; checked by parse_ref
    project_token: str = ""  # GHSTATE_PROJECT_TOKEN: a token for the project only; never printed
    fallback: str = ""  # why --store auto chose the local store where the checkpoints are on GitHub ("": it did not)
    stale_days: int = 30  # GHSTATE_STALE_DAYS, else the policy's stale_days
    # This clone's machine-only files, shared by every worktree of the clone and never committed:
    # <git common dir>/ghstate; GHSTATE_DIR when set, and the state_dir outside git.
    machine_dir: Path | None = None

    def __repr__(self) -> str:
        token = "***" if self.token else ""
        return f"Settings(root={self.root!r}, store={self.store!r}, repo={self.repo!r}, token={token!r})"

    @property
    def store_dir(self) -> Path:
        """The local store: its checkpoints (``N.md``, ``chain/``, ``closed/``), claims, lock and kept writes
        (``pending/``), one per clone (``machine_dir``), so that every worktree of the clone finds one queue;
        ``GHSTATE_DIR`` when set, and ``.ghstate/`` outside git."""
        return self.machine_dir or self.state_dir

    @property
    def templates_dir(self) -> str:
        """The repository's templates folder, when it is the repository's own: inside its work tree once every
        link is followed (a folder the config names elsewhere, or a committed link to one, is none: the shipped
        templates are used, said once); "" then."""
        path = Path(self.policy.templates)
        folder = path if path.is_absolute() else self.root / path
        try:
            inside = folder.resolve().is_relative_to(self.root.resolve())
        except (OSError, RuntimeError):
            inside = False
        if not inside:
            _warn(f"templates = {self.policy.templates!r} names a folder outside this repository: a repository's "
                  "templates are read from inside it only, so the shipped ones are used")
            return ""
        return str(folder)


def load_policy(root: Path, state_dir: Path) -> tuple[Policy, str]:
    """The policy and the file it came from ("" when built in)."""
    config_file = state_dir / "config.toml"
    data: dict[str, Any] | None = None
    origin = ""
    if config_file.is_file():
        data = _read_toml(config_file)
        origin = str(config_file)
    else:
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            raw = pyproject.read_text(encoding="utf-8", errors="replace")
            if "ghstate" in raw:  # avoid the TOML import on the common path
                tool = _read_toml(pyproject).get("tool", {})
                data = tool.get("ghstate") if isinstance(tool, dict) else None
                origin = f"{pyproject} [tool.ghstate]"
                if data is not None and not isinstance(data, dict):
                    raise ConfigError(f"{origin} must be a table of settings")
    if not data:
        return Policy(), origin
    return policy_from_dict(data, origin), origin


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]  # Python 3.10: tomllib is 3.11's
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; fix the file or remove it") from None


_SAID: set[str] = set()  # the warnings said in this process (a long-running MCP server reads the file often)


def _warn(said: str) -> None:
    """Say ``said`` once in this process, on stderr, as a warning."""
    import sys

    if said not in _SAID:
        _SAID.add(said)
        print(f"Warning: {said}", file=sys.stderr)


def _unknown_key(key: str, origin: str, known: set[str]) -> None:
    """Say once, on stderr, that ``key`` is read as nothing, with the known key it may mean."""
    import difflib
    import sys

    close = difflib.get_close_matches(key.replace("-", "_"), sorted(known), n=1)
    said = (f"Warning: unknown key {key!r} in {origin} is ignored ("
            + (f"did you mean {close[0]!r}?" if close else "a newer ghstate's?") + f"); known keys: "
            f"{', '.join(sorted(known))}")
    if said not in _SAID:
        _SAID.add(said)
        print(said, file=sys.stderr)


def policy_from_dict(data: dict[str, Any], origin: str) -> Policy:
    known = set(Policy._fields)
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name not in known:
            _unknown_key(key, origin, known)
            continue
        default = Policy._field_defaults[name]
        if isinstance(default, tuple):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{key} in {origin} must be a list of strings")
            value = tuple(value)
        elif isinstance(value, bool) != isinstance(default, bool) or not isinstance(value, type(default)):
            kinds = {"int": "whole number", "str": "string", "bool": "true or false"}
            kind = kinds.get(type(default).__name__, "value")
            raise ConfigError(f"{key} in {origin} must be a {kind}, not {value!r}")
        values[name] = value
    policy = Policy(**values)
    if policy.store not in STORES:
        raise ConfigError(f"store in {origin} must be one of {', '.join(STORES)}, not {policy.store!r}")
    if policy.block_after < 1:
        raise ConfigError(f"block_after in {origin} must be at least 1")
    if policy.prompt_budget < 0:
        raise ConfigError(f"prompt_budget in {origin} must be 0 (no limit) or a number of characters")
    if not 1_000 <= policy.max_body_chars <= GITHUB_LIMIT:
        raise ConfigError(f"max_body_chars in {origin} must be between 1000 and {GITHUB_LIMIT}")
    if policy.project:
        check_project(policy.project, f"project in {origin}")
    if policy.stale_days < 1:
        raise ConfigError(f"stale_days in {origin} must be at least 1")
    if not 0 <= policy.checkpoint_at <= 100:
        raise ConfigError(f"checkpoint_at in {origin} must be a percentage of the context, 1 to 100 (0: never ask)")
    return policy


_REF = re.compile(r"(?:https?://[^/\s]+/)?(orgs|users)/([A-Za-z0-9](?:[A-Za-z0-9_-]{0,38}))/projects/"
                  r"([1-9][0-9]{0,9})(?:/(?:views/[0-9]+)?)?(?:[?#].*)?")


class ProjectRef(NamedTuple):
    """A project: ``orgs/ACME/projects/7``, ``users/NAME/projects/N``, or the project's URL."""

    kind: str  # "orgs" or "users"
    login: str
    number: int

    def __str__(self) -> str:
        return f"{self.kind}/{self.login}/projects/{self.number}"

    @property
    def is_org(self) -> bool:
        return self.kind == "orgs"


def parse_ref(text: str) -> ProjectRef | None:
    """The project ``text`` names, or None when it names none."""
    m = _REF.fullmatch((text or "").strip())
    return ProjectRef(m.group(1), m.group(2), int(m.group(3))) if m else None


def check_project(value: str, where: str) -> str:
    """``value`` when it names a GitHub Project (v2); a ConfigError saying how to name one otherwise."""
    if parse_ref(value) is None:
        raise ConfigError(f"{where} must name a GitHub Project: orgs/OWNER/projects/N, users/NAME/projects/N "
                          f"or the project's URL, not {value[:100]!r}")
    return value.strip()


def api_hosts(api_url: str) -> tuple[str, ...]:
    """Hosts whose remotes belong to the GitHub that ``api_url`` serves."""
    from urllib.parse import urlsplit

    host = (urlsplit(api_url).hostname or "").lower()
    if host in ("api.github.com", "github.com", ""):
        return ("github.com",)
    return (host.removeprefix("api."), host)


def enterprise_host(host: str) -> bool:
    """A GitHub Enterprise Server's host, as ``gh`` tells one: neither github.com nor a GHE.com tenant."""
    host = host.lower()
    return host not in ("", "github.com", "api.github.com") and not host.endswith(".ghe.com")


def token_names(host: str = "github.com") -> tuple[str, ...]:
    """The variables a token is read from for ``host``, in order: as ``gh`` reads them, an Enterprise
    Server's own (``GH_ENTERPRISE_TOKEN``, then ``GITHUB_ENTERPRISE_TOKEN``) first for its host, then
    ``GH_TOKEN`` and ``GITHUB_TOKEN`` (which the Action and CI set, whatever the host)."""
    enterprise = ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN") if enterprise_host(host) else ()
    return (*enterprise, "GH_TOKEN", "GITHUB_TOKEN")


def read_token(env: dict[str, str], host: str = "github.com") -> str:
    """The first of ``token_names(host)`` set, then ``gh auth token`` for ``host`` (a GitHub Enterprise
    Server's token is not github.com's). Never printed or stored."""
    for name in token_names(host):
        if env.get(name, "").strip():
            return env[name].strip()
    import shutil

    gh = shutil.which("gh")
    if gh:
        import subprocess

        try:
            proc = subprocess.run([gh, "auth", "token", "--hostname", host], capture_output=True, text=True,
                                  timeout=5, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        if proc.returncode == 0:
            return proc.stdout.strip()
    return ""


def token_source(env: dict[str, str] | None = None, host: str = "github.com") -> str:
    """Where the token for ``host`` comes from, by name (``GH_ENTERPRISE_TOKEN``, ``GH_TOKEN``, …, ``gh auth
    token``), "" when none is set: never the token itself."""
    env = dict(os.environ if env is None else env)
    for name in token_names(host):
        if env.get(name, "").strip():
            return name
    return "gh auth token" if read_token({}, host) else ""


def python_finds(python: str, module: str) -> bool | None:
    """Can another Python (``python``, the one a ghstate elsewhere runs on) import ``module``? Asked
    with importlib.util.find_spec, nothing imported; None when that Python cannot be asked."""
    import subprocess

    probe = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({module!r}) else 3)"
    try:
        code = subprocess.run([python, "-c", probe], capture_output=True, timeout=15).returncode
    except (OSError, subprocess.SubprocessError):
        return None
    return code == 0 if code in (0, 3) else None


def build(
    *,
    repo: str | None = None,
    store: str | None = None,
    agent: str | None = None,
    role: str | None = None,
    session: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    need_token: bool = True,
    project: str | None = None,
    need_repo: bool = True,
) -> Settings:
    env = dict(os.environ if env is None else env)
    cwd = cwd or Path.cwd()
    git_root = gitinfo.find_root(cwd)
    root = git_root or cwd.resolve()
    state_dir = Path(env["GHSTATE_DIR"]).expanduser() if env.get("GHSTATE_DIR") else root / ".ghstate"
    if not state_dir.is_absolute():
        state_dir = (cwd / state_dir).resolve()
    machine_dir = _machine_dir(git_root, state_dir, env)
    policy, policy_file = load_policy(root, state_dir)
    repo, api_url = _repository_and_api(repo, env)
    asked = store or env.get("GHSTATE_STORE") or policy.store
    if asked not in STORES:
        raise ConfigError(f"--store must be one of {', '.join(STORES)}, not {asked!r}")
    api_from = "GITHUB_API_URL" if env.get("GITHUB_API_URL") else "GH_HOST" if env.get("GH_HOST", "").strip() else ""
    repo, elsewhere = _repository(repo, git_root if asked != "local" else None, api_url, api_from)
    chosen, token = _store_and_token(asked, repo, env, api_url, need_token=need_token, need_repo=need_repo,
                                     why=elsewhere.said)
    fallback = _fallback(asked, chosen, repo, elsewhere, policy, policy_file, api_url)
    project = _project(project, env, policy)
    return Settings(
        root=root,
        in_git=git_root is not None,
        state_dir=state_dir,
        store=chosen,
        repo=repo,
        api_url=api_url,
        policy=policy,
        token=token,
        agent=agent or env.get("GHSTATE_AGENT", ""),
        role=role or env.get("GHSTATE_ROLE", ""),
        session=session or env.get("GHSTATE_SESSION", "") or host_session(env),
        cache_dir=_cache_dir(env),
        project=project,
        project_token=env.get("GHSTATE_PROJECT_TOKEN", "").strip() if project else "",
        fallback=fallback,
        stale_days=_stale_days(env, policy),
        machine_dir=machine_dir,
    )


# A host's own files of one person in the work tree, which the host writes as it runs (Claude Code's local settings:
# the projects' MCP servers a person allowed, the status line ``init`` put there): no work of the session's.
HOSTS_OWN = (".claude/settings.local.json",)


def own_files_removed(settings: Settings, paths: tuple[str, ...]) -> tuple[str, ...]:
    """``paths`` (the work tree's, relative to its root) without ghstate's own files there (``.ghstate/``) and the
    agent hosts' (``HOSTS_OWN``): writing them is no change to the work, for drift, the prompt and the reminder."""
    paths = tuple(p for p in paths if p not in HOSTS_OWN)
    try:
        prefix = settings.state_dir.resolve().relative_to(settings.root.resolve()).as_posix().rstrip("/")
    except ValueError:
        return paths
    return tuple(p for p in paths if p.rstrip("/") != prefix and not p.startswith(prefix + "/"))


def without_token(*, env: dict[str, str] | None = None, cwd: Path | None = None) -> Settings:
    """Settings for what reads this machine's files only (the hook that watches the context, the status line): no
    token is read and nothing reaches GitHub. ``store`` is where the checkpoints are, as ``build`` settles it
    given a token: ``github`` when a GitHub repository is known (this machine's replica holds what it last saw of
    them), else ``local``; ``token`` is always empty."""
    env = dict(os.environ if env is None else env)
    settings = build(store="local", env=env, cwd=cwd, need_token=False, need_repo=False)
    asked = env.get("GHSTATE_STORE") or settings.policy.store
    if asked == "local":
        return settings
    repo, api_url = settings.repo, settings.api_url
    if not repo:
        repo, _ = _repository(None, gitinfo.find_root(cwd or Path.cwd()), api_url)
    return settings._replace(store="github", repo=repo) if repo else settings


# The session id each agent host gives what it runs, as the hosts themselves were seen to (December 2026):
# Claude Code 2.1 to its Bash tool, its hooks and its MCP servers; Codex CLI 0.169 to its shell commands (not
# to its MCP servers); Gemini CLI 0.61 to its hooks only. A session is a claim's holder with the agent's name.
HOST_SESSIONS = ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID", "GEMINI_SESSION_ID")


def host_session(env: dict[str, str]) -> str:
    """The agent host's session id, when ghstate runs inside one that gives it ("": none, or not an id)."""
    for name in HOST_SESSIONS:
        value = env.get(name, "").strip()
        if value and len(value) <= MAX_SESSION and value.isprintable() and not any(c.isspace() for c in value):
            return value
    return ""


def _machine_dir(git_root: Path | None, state_dir: Path, env: dict[str, str]) -> Path:
    """Where this clone keeps what only this machine needs (see Settings.machine_dir)."""
    if env.get("GHSTATE_DIR") or git_root is None:
        return state_dir
    common = gitinfo.common_dir(git_root)
    return common / "ghstate" if common is not None else state_dir


NO_TOKEN = "no GitHub token: set GH_TOKEN or GITHUB_TOKEN, or run 'gh auth login'"


def no_token(api_url: str) -> str:
    """What to set when no token was found for the GitHub that ``api_url`` serves."""
    host = api_hosts(api_url)[0]
    if not enterprise_host(host):
        return NO_TOKEN
    return f"no GitHub token: set GH_ENTERPRISE_TOKEN (or GH_TOKEN), or run 'gh auth login --hostname {host}'"


def _fallback(asked: str, chosen: str, repo: str | None, elsewhere: "Elsewhere", policy: Policy,
              policy_file: str, api_url: str = "https://api.github.com") -> str:
    """Why ``--store auto`` settled on the local store although the checkpoints are on GitHub (a GitHub
    repository is named, or ``origin`` is on github.com, or ``init`` set the repository up for GitHub),
    in words that say what to set; "" when it did not. Where ``init`` set it up, that is an error."""
    if asked != "auto" or chosen != "local":
        return ""
    if repo:
        reason = no_token(api_url)
    elif elsewhere.said and (elsewhere.host == "github.com" or policy.github):
        reason = elsewhere.said
    elif policy.github:
        reason = "no GitHub repository: pass -R OWNER/NAME, set GH_REPO, or add a GitHub 'origin' remote"
    else:
        return ""
    if policy.github:
        raise ConfigError(f"this repository is set up for GitHub (github = true in {policy_file}), but {reason} "
                          "(or pass --store local for this machine's store)")
    return reason


_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?")


def _repository_and_api(given: str | None, env: dict[str, str]) -> tuple[str | None, str]:
    """The repository named outright (``--repo``, then ``GH_REPO``, then ``GITHUB_REPOSITORY``), and the
    API: ``GITHUB_API_URL``, else the GitHub host of ``[HOST/]OWNER/REPO`` or ``GH_HOST`` as ``gh``
    reads them (github.com's API, a GitHub Enterprise Server's ``https://HOST/api/v3``)."""
    host = ""
    repo = given or env.get("GH_REPO", "").strip() or None
    if repo is not None:
        where = "repository" if given else "GH_REPO"
        parts = repo.strip().split("/")
        if len(parts) == 3 and all(parts) and _HOST.fullmatch(parts[0]):
            host, repo = parts[0].lower(), "/".join(parts[1:])
        elif len(parts) != 2 or not all(parts):
            shape = "OWNER/NAME" if given else "[HOST/]OWNER/REPO"
            raise ConfigError(f"{where} must be {shape}, not {repo!r}")
    repo = repo or env.get("GITHUB_REPOSITORY") or None
    if not host and env.get("GH_HOST", "").strip():
        host = env["GH_HOST"].strip().lower()
        if not _HOST.fullmatch(host):
            raise ConfigError(f"GH_HOST must be a host name (such as ghe.example.com), not {env['GH_HOST']!r}")
    api_url = (env.get("GITHUB_API_URL") or api_of_host(host)).rstrip("/")
    if not api_url.startswith(("https://", "http://")):
        raise ConfigError(f"GITHUB_API_URL must be an http(s) URL, not {api_url!r}")
    return repo, api_url


def api_of_host(host: str) -> str:
    """The REST API of a GitHub host, as ``gh`` finds it: github.com's, a GHE.com tenant's
    ``api.HOST``, a GitHub Enterprise Server's ``https://HOST/api/v3``; ``""``: github.com."""
    if host in ("", "github.com", "api.github.com"):
        return DEFAULT_API
    if host.endswith(".ghe.com"):
        return f"https://api.{host}"
    return f"https://{host}/api/v3"


class Elsewhere(NamedTuple):
    """An ``origin`` that names OWNER/NAME on another host than the API's: the host, and what to set."""

    host: str = ""
    said: str = ""


def _repository(repo: str | None, git_root: Path | None, api_url: str,
                api_from: str = "") -> tuple[str | None, Elsewhere]:
    """OWNER/NAME given, or the ``origin`` remote's (when ``git_root`` is given and it is on the API's host);
    and, when it is a GitHub remote on another host, why it names no repository here."""
    elsewhere = Elsewhere()
    if repo is None and git_root is not None:
        url = gitinfo.origin_url(git_root)
        repo = gitinfo.repo_from_url(url, api_hosts(api_url)) if url else None
        elsewhere = _elsewhere(url, api_url, api_from) if url and repo is None else Elsewhere()
    if repo is not None:
        repo = repo.strip()
        parts = repo.split("/")
        if len(parts) != 2 or not all(parts):
            raise ConfigError(f"repository must be OWNER/NAME, not {repo!r}")
    return repo, elsewhere


def _elsewhere(url: str, api_url: str, api_from: str) -> Elsewhere:
    """Why a remote that names OWNER/NAME is not this API's: it is on another host (github.com against a
    GitHub Enterprise Server's GITHUB_API_URL or GH_HOST, or the other way round)."""
    m = re.match(r"^(?:[\w.+-]+://)?(?:[^@/]+@)?([^/:]+)", url.strip())
    host = m.group(1).lower() if m else ""
    if not host or gitinfo.repo_from_url(url, (host,)) is None:
        return Elsewhere()
    if host in ("github.com", "ssh.github.com"):
        return Elsewhere("github.com", f"the 'origin' remote is on github.com, but {api_from or 'GITHUB_API_URL'} "
                                       f"makes the API {api_url}: unset it to use github.com")
    return Elsewhere(host, f"the 'origin' remote is on {host}, but the API in use is {api_url}: for a GitHub "
                           f"Enterprise Server set GH_HOST={host} (or GITHUB_API_URL={api_of_host(host)})")


def _store_and_token(chosen: str, repo: str | None, env: dict[str, str], api_url: str, *, need_token: bool,
                     need_repo: bool, why: str = "") -> tuple[str, str]:
    """The store (``auto`` settled: GitHub with a token and a repository, else local) and the token."""
    token = ""
    if chosen == "github" or (chosen == "auto" and repo and need_token):
        token = read_token(env, api_hosts(api_url)[0])
    if chosen == "auto":
        chosen = "github" if token and repo else "local"
    if chosen == "github":
        if not repo and need_repo:
            if why:
                raise ConfigError(f"no GitHub repository: {why}, or pass -R OWNER/NAME")
            raise ConfigError("no GitHub repository: pass -R OWNER/NAME, set GITHUB_REPOSITORY, "
                              "or add a GitHub 'origin' remote")
        if not token:
            raise ConfigError(no_token(api_url))
    return chosen, token


def _project(given: str | None, env: dict[str, str], policy: Policy) -> str:
    if given:
        return check_project(given, "--project")
    if env.get("GHSTATE_PROJECT", "").strip():
        return check_project(env["GHSTATE_PROJECT"], "GHSTATE_PROJECT")
    return policy.project


def _stale_days(env: dict[str, str], policy: Policy) -> int:
    text = env.get("GHSTATE_STALE_DAYS", "").strip()
    if not text:
        return policy.stale_days
    if not text.isdigit() or int(text) < 1:
        raise ConfigError(f"GHSTATE_STALE_DAYS must be a whole number of days, at least 1, not {text[:40]!r}")
    return int(text)


def _cache_dir(env: dict[str, str]) -> str | None:
    from ghstate import __version__

    if env.get("GHSTATE_NO_CACHE") == "1":
        return None
    xdg = env.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(xdg):  # the XDG spec: a relative path is ignored (a cache never lands in a repository)
        xdg = ""
    base = xdg or (str(Path(env["HOME"]) / ".cache") if env.get("HOME") else "")
    if base and not os.path.isabs(base):
        return None
    return str(Path(base) / "ghstate" / f"templates-{__version__}") if base else None


def host_homes(env: dict[str, str] | None = None) -> dict[str, Path]:
    """Where each agent host keeps what a person installed for every repository (plugins, extensions):
    Claude Code's CLAUDE_CONFIG_DIR or ~/.claude, Codex's CODEX_HOME or ~/.codex, Gemini CLI's ~/.gemini."""
    env = dict(os.environ) if env is None else env
    home = Path(env.get("HOME") or Path.home())
    return {"claude": Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude"),
            "codex": Path(env.get("CODEX_HOME") or home / ".codex"), "gemini": home / ".gemini"}


def debugging() -> bool:
    """GHSTATE_DEBUG=1: failures show their traceback instead of one line."""
    return os.environ.get("GHSTATE_DEBUG") == "1"


class PullEvent(NamedTuple):
    """The pull request a ``pull_request`` (or ``pull_request_target``) event is about, from the event file."""

    number: int
    url: str = ""  # html_url
    action: str = ""  # opened, reopened, synchronize, closed, …
    state: str = "open"  # open, merged, or closed (closed unmerged)
    head_ref: str = ""  # the branch the pull request is made from
    head_repo: str = ""  # OWNER/NAME the head branch is in (a fork's, for a pull request from a fork)
    base_repo: str = ""  # OWNER/NAME the pull request is made to
    head_owner: str = ""  # the owner in the head's label (OWNER:BRANCH): what is left of a fork deleted since

    @property
    def from_fork(self) -> bool:
        if self.head_repo and self.base_repo:
            return self.head_repo.lower() != self.base_repo.lower()
        return bool(self.head_owner and self.base_repo) and \
            self.head_owner.lower() != self.base_repo.split("/")[0].lower()


class CiRun(NamedTuple):
    """What a GitHub Actions runner tells ``ghstate ci`` about the run, read once (``ci_run``)."""

    repository: str = ""
    sha: str = ""  # GITHUB_SHA: on pull requests a merge commit that is on no branch
    ref_name: str = ""
    head_ref: str = ""  # GITHUB_HEAD_REF: the PR's head branch, on pull_request events
    pr_head_ref: str = ""  # pull_request.head of the event file, when there is one
    pr_head_sha: str = ""
    run_id: str = ""
    server_url: str = "https://github.com"
    workflow: str = ""
    workspace: str = "."
    output_path: str = ""  # GITHUB_OUTPUT
    summary_path: str = ""  # GITHUB_STEP_SUMMARY
    debug: bool = False
    event_name: str = ""  # GITHUB_EVENT_NAME
    pull: PullEvent | None = None  # on pull_request events: the pull request
    deleted_branch: str = ""  # on a delete event of a branch: its name

    @property
    def branch(self) -> str:
        """The branch the run is about: the PR's head on pull requests, else the pushed ref."""
        return self.head_ref or self.pr_head_ref or self.ref_name

    @property
    def commit(self) -> str:
        """The commit tested: the PR's head on pull requests (GITHUB_SHA is then a merge commit)."""
        return self.pr_head_sha or self.sha

    @property
    def run_url(self) -> str:
        if not (self.run_id and self.repository):
            return ""
        return f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"


def ci_run(env: dict[str, str] | None = None) -> CiRun:
    """The runner's facts from its environment and its event file (a missing or broken one is no PR)."""
    import json

    env = dict(os.environ if env is None else env)
    event: dict[str, Any] = {}
    event_path = env.get("GITHUB_EVENT_PATH", "")
    if event_path and Path(event_path).is_file():
        try:
            event = json.loads(Path(event_path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            event = {}
    event = event if isinstance(event, dict) else {}

    def text(value: Any) -> str:
        return value if isinstance(value, str) else ""

    def table(value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else {}

    pr = table(event.get("pull_request"))
    head = table(pr.get("head"))
    name = env.get("GITHUB_EVENT_NAME", "")
    pull = None
    if name in ("pull_request", "pull_request_target") and isinstance(pr.get("number"), int) and pr["number"] > 0:
        closed = text(pr.get("state")) == "closed" or text(event.get("action")) == "closed"
        pull = PullEvent(pr["number"], text(pr.get("html_url")), text(event.get("action")),
                         ("merged" if pr.get("merged") is True else "closed") if closed else "open",
                         text(head.get("ref")), text(table(head.get("repo")).get("full_name")),
                         text(table(table(pr.get("base")).get("repo")).get("full_name")),
                         text(head.get("label")).partition(":")[0] if ":" in text(head.get("label")) else "")
    deleted = text(event.get("ref")).removeprefix("refs/heads/") \
        if name == "delete" and event.get("ref_type") == "branch" else ""

    return CiRun(
        repository=env.get("GITHUB_REPOSITORY", ""),
        sha=env.get("GITHUB_SHA", ""),
        ref_name=env.get("GITHUB_REF_NAME", ""),
        head_ref=env.get("GITHUB_HEAD_REF", ""),
        pr_head_ref=text(head.get("ref")),
        pr_head_sha=text(head.get("sha")),
        run_id=env.get("GITHUB_RUN_ID", ""),
        server_url=env.get("GITHUB_SERVER_URL") or "https://github.com",
        workflow=env.get("GITHUB_WORKFLOW", ""),
        workspace=env.get("GITHUB_WORKSPACE") or ".",
        output_path=env.get("GITHUB_OUTPUT", ""),
        summary_path=env.get("GITHUB_STEP_SUMMARY", ""),
        debug=env.get("GHSTATE_DEBUG") == "1",
        event_name=name,
        pull=pull,
        deleted_branch=deleted,
    )
