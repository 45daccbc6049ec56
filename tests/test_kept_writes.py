"""Kept writes where they meet the rest (issue 58): a kept-write file that is not whole, a kept write GitHub
refuses for good, the checks a write kept without a read still passes, a kept write decided by the chain (never
by the writers' clocks); and what a repository ships is never this machine's kept write (issue 53): a
committed ``pending/`` is never sent, a kept write carries its GitHub."""

from __future__ import annotations

import json

from conftest import store_of
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_github_store import existing, gh, sleeps, state_of  # noqa: F401 - fixtures


def kept_file(repo, data, name: str = "00000000000000000001-7-1-abcdef.json"):
    folder = store_of(repo) / "pending"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# ------------------------------------------------------------------- a kept-write file that is not whole


def test_a_kept_write_file_without_its_write_is_reported_not_an_internal_error(gh, run, repo):  # noqa: F811
    """Finding 8: ``{"kind": "ghstate-pending", "version": 3, "repo": "octo/hello"}`` in ``pending/`` made
    ``resume`` and ``push`` fail with "internal error (KeyError: 'write')". ``resume`` reads the checkpoint;
    ``push`` names the file and what is wrong with it, and exits 1."""
    existing(gh)
    path = kept_file(repo, {"kind": "ghstate-pending", "version": 3, "repo": "octo/hello"})
    resumed = run("resume", "7")
    assert "internal error" not in resumed.stderr and "Phase 2" in resumed.stdout
    pushed = run("push", code=1)
    assert f"Could not publish {path.relative_to(repo)}: the kept write is malformed (it holds no write)" \
        in pushed.stderr
    assert "internal error" not in pushed.stderr and "Traceback" not in pushed.stderr
    assert path.exists()  # a person's to look at


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)


@settings(max_examples=80)
@example(data={"kind": "ghstate-pending", "version": 3, "repo": "octo/hello"})
@example(data={"kind": "ghstate-pending", "version": 3, "write": {"intent": {"edits": {"decisions": 5}}}})
@example(data={"kind": "ghstate-pending", "version": 2, "intent": {"incoming": {"state": 5}}})
@given(st.fixed_dictionaries({"kind": st.just("ghstate-pending"), "version": st.sampled_from([1, 2, 3, 4])},
                             optional={"repo": JSON, "api_url": JSON, "write": JSON, "intent": JSON,
                                       "issue": JSON, "saved_at": JSON}) | JSON)
def test_any_kept_write_file_is_read_or_reported_never_raised(tmp_path_factory, data):
    from ghstate.errors import InputError
    from ghstate.local.store import LocalStore, PendingWrite

    store = LocalStore(tmp_path_factory.mktemp("store"))
    store.pending_dir.mkdir()
    (store.pending_dir / "1.json").write_text(json.dumps(data))
    [(_, record)] = store.pending()
    assert isinstance(record, (PendingWrite, InputError))
