"""Kept writes where they meet the rest (issue 58): a kept-write file that is not whole, a kept write GitHub
refuses for good, the checks a write kept without a read still passes, a kept write decided by the chain (never
by the writers' clocks); and what a repository ships is never this machine's kept write (issue 53): a
committed ``pending/`` is never sent, a kept write carries its GitHub."""

from __future__ import annotations

import json

import pytest
from conftest import store_of
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strategies import examples
from test_github_store import existing, gh, sleeps, state_of  # noqa: F401 - fixtures
from test_outage import pending


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


@settings(max_examples=examples(80))
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


# ----------------------------------------------------------------- checked before keeping; refused for good


SECRET = "ghp_" + ("a1B2c3D4e5F6g7H8i9J0" * 2)[:36]


def test_a_write_kept_without_github_is_checked_as_online_and_a_credential_is_never_kept(gh, run, repo):  # noqa: F811
    """Finding 1 of issue 58: a write kept while GitHub did not answer skipped the credential and size checks (they
    ran only on a round drafted after a read), so a credential was kept, and every later write to the checkpoint
    waited behind it. Checked before keeping, as online: refused, nothing kept."""
    from test_outage import refused

    existing(gh)
    run("resume", "7")  # seen here
    refused(gh)
    result = run("checkpoint", "7", "--decision", f"use the token {SECRET}", code=1)
    assert "refusing to write to GitHub" in result.stderr and "kept locally" not in result.stderr
    assert pending(repo) == []
    (repo / ".ghstate").mkdir(exist_ok=True)
    (repo / ".ghstate" / "config.toml").write_text("max_body_chars = 2000\n")
    result = run("checkpoint", "7", "--decision", "x" * 1500, code=1)
    assert "the limit is 2,000" in result.stderr and "kept locally" not in result.stderr and pending(repo) == []
    assert "kept locally" in run("checkpoint", "7", "--decision", "a fine one", code=1).stderr
    assert len(pending(repo)) == 1


def test_a_kept_write_github_refuses_for_good_is_set_aside_said_and_holds_nothing_back(gh, run, repo, tmp_path):  # noqa: F811
    """Finding 1 of issue 58: a kept write GitHub refused for good (here its body over the bound once rebased onto
    what another machine wrote meanwhile) stayed first in line, the error dropped, and every later write to its
    checkpoint was kept behind it and told it was safe. It is set aside, said by every command until a person
    acts (push names it and how to drop it), and later writes land."""
    from test_outage import refused

    (repo / ".ghstate").mkdir(exist_ok=True)
    (repo / ".ghstate" / "config.toml").write_text("max_body_chars = 3000\n")
    existing(gh)
    run("resume", "7")
    refused(gh)
    run("checkpoint", "7", "--decision", "kept: " + "k" * 1000, code=1)
    gh.faults.clear()
    other = {"GHSTATE_DIR": str(tmp_path / "other-machine")}
    run("checkpoint", "7", "--risk", "meanwhile: " + "m" * 1000, env=other)
    later = run("checkpoint", "7", "--question", "a later write")
    assert "refused by GitHub for good" in later.stderr and "set aside in" in later.stderr, later.stderr
    assert "delete the file to drop it" in later.stderr
    assert "a later write" in state_of(gh, 7).questions  # it landed: nothing waits behind the refused one
    assert pending(repo) == [] and len(list((store_of(repo) / "pending" / "aside").glob("*.json"))) == 1
    assert "refused by GitHub for good" in run("resume", "7").stderr  # said again, until a person acts
    pushed = run("push", code=1)
    assert "Set aside" in pushed.stderr and "delete the file to drop it" in pushed.stderr
    for path in (store_of(repo) / "pending" / "aside").glob("*.json"):
        path.unlink()  # the person drops it
    assert "for good" not in run("resume", "7").stderr and "Nothing to push." in run("push").stderr


# ----------------------------------------------------------------- decided by the chain, never by clocks


@pytest.mark.parametrize("how", ["seen, then kept without a read", "read, then its write refused",
                                 "never seen here"])
def test_a_kept_write_is_decided_by_the_chain_never_by_the_writers_clocks(gh, run, repo, monkeypatch, tmp_path,  # noqa: F811
                                                                          how):
    """Finding 13 of issue 58, confirmed twice: machine A's write of the resume instruction is kept while GitHub
    does not answer (#7 has no chain yet: a checkpoint an older ghstate wrote, or the issue form); machine B then
    writes the same field, lands and is told so, its clock 10 minutes slow. A's ``push`` replaced B's value,
    because the order came from the writers' clocks (with B's clock right, B's stood). By the chain: what landed
    after what A's write was made on stands, and A's change is said, its text and that it was not applied (and
    kept beside, as a person's edit would be)."""
    from test_outage import refused

    existing(gh)
    if how != "never seen here":
        run("resume", "7")  # A sees #7 (no chain yet)
    monkeypatch.setattr("ghstate.services.writer.utc_now", lambda: "2026-11-28T10:00:00Z")
    if how == "read, then its write refused":
        gh.fail_op("UpdateCheckpoint", 502, times=99)
        gh.fail_op("AppendCheckpoint", 502, times=99)
    else:
        refused(gh)
    run("checkpoint", "7", "--resume", "A's instruction, kept", code=1)
    gh.faults.clear()
    monkeypatch.setattr("ghstate.services.writer.utc_now", lambda: "2026-11-28T09:50:00Z")  # B's clock is slow
    landed = run("checkpoint", "7", "--resume", "B's instruction, later", env={"GHSTATE_DIR": str(tmp_path / "b")})
    assert landed.stdout.startswith("Updated checkpoint #7")
    monkeypatch.setattr("ghstate.services.writer.utc_now", lambda: "2026-11-28T10:05:00Z")
    pushed = run("push")
    cp = state_of(gh, 7)
    assert cp.resume == "B's instruction, later"
    assert any("A's instruction, kept" in extra.body for extra in cp.extra)
    said = pushed.stdout + pushed.stderr
    assert "Resume instruction of #7 changed after this write was kept, and that change stands" in said, said
    assert "this write's resume instruction (\"A's instruction, kept\") was not applied" in said
