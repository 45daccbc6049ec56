"""The local store's chain (``.ghstate/chain/N/G.json``): the same protocol as GitHub's, its compare-and-swap a
generation created only if nothing has it. Two writers on one folder without the machine's lock (the folder
shared between machines), a person editing ``N.md`` by hand, and a checkpoint of the log before chains."""

from __future__ import annotations

import contextlib
import json

from conftest import SAMPLE, store_of

from ghstate.core import chain
from ghstate.core.parse import parse
from ghstate.local.store import LocalStore


def test_two_writers_on_a_shared_folder_both_land_one_generation_each(repo, run, monkeypatch):
    """Writer A has read the head; B's write lands first (another machine: the lock does not reach it). A's
    next generation is taken: it is refused, reads again, and lands on top. Neither is lost."""
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    monkeypatch.setattr(LocalStore, "lock", lambda self: contextlib.nullcontext())
    real = LocalStore.append
    raced: list[bool] = []

    def b_first(self, stored, link, title=None, labels=None):
        if not raced:
            raced.append(True)
            run("checkpoint", "--store", "local", "1", "--decision", "from B")
        return real(self, stored, link, title, labels)

    monkeypatch.setattr(LocalStore, "append", b_first)
    run("checkpoint", "--store", "local", "1", "--decision", "from A")
    folder = repo / ".git" / "ghstate" / "chain" / "1"
    records = [json.loads((folder / f"{g}.json").read_text()) for g in (1, 2, 3)]  # 1: its creation
    assert [r["parent"] for r in records] == [None, 1, 2] and not (folder / "4.json").exists()
    cp = parse((repo / ".git" / "ghstate" / "1.md").read_text()).checkpoint
    assert {"from A", "from B"} <= set(cp.decisions)


def test_a_generation_once_made_is_never_made_again():
    """The compare-and-swap itself: of two appends from one head, the second is refused."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        stored = store.create("t", "<!-- ghstate:v1 {\"revision\":1} -->\n## Goal\ng\n")
        first = store.append(stored, chain.Link(1, "<!-- ghstate:v1 {\"revision\":2} -->\n## Goal\none\n"))
        second = store.append(stored, chain.Link(1, "<!-- ghstate:v1 {\"revision\":2} -->\n## Goal\ntwo\n"))
        assert first.landed and not second.landed and second.stored.head.oid == "2"  # 1: its creation
        assert "one" in store.get(1).body


def test_a_persons_edit_of_the_file_is_merged_as_theirs(repo, run):
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    run("checkpoint", "--store", "local", "1", "--decision", "to be deleted by hand")
    path = repo / ".git" / "ghstate" / "1.md"
    path.write_text(path.read_text().replace("- to be deleted by hand\n", "").replace(
        "## Open questions\n", "## Open questions\n- asked in the file\n"))
    state = json.loads(run("resume", "--store", "local", "1", "--format", "json").stdout)
    assert "to be deleted by hand" not in state["decisions"] and "asked in the file" in state["questions"]
    run("checkpoint", "--store", "local", "1", "--risk", "next")
    cp = parse(chain.split(path.read_text())[0]).checkpoint
    assert "to be deleted by hand" not in cp.decisions and "asked in the file" in cp.questions
    assert "next" in cp.risks
    log = run("log", "--store", "local", "1").stdout
    assert "a person (edited the body): -1 decision; +1 question" in log


def test_a_checkpoint_of_the_log_before_chains_keeps_its_history(repo, run):
    """``log/N.jsonl`` of an earlier ghstate: ``log`` still shows its lines, and the chain goes on after them."""
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    old = repo / ".git" / "ghstate" / "log"
    old.mkdir()
    (old / "1.jsonl").write_text(json.dumps({"revision": 1, "at": "2026-11-01T00:00:00Z", "event": "checkpoint",
                                             "changes": ["created with 3 phases (1 done)"], "agent": "old"}) + "\n")
    run("checkpoint", "--store", "local", "1", "--risk", "on the chain")
    lines = run("log", "--store", "local", "1").stdout.splitlines()
    assert lines[0].startswith("r1") and "old" in lines[0] and lines[1].startswith("r2")


def test_an_emptied_or_deleted_file_is_read_from_its_chain_and_written_again(repo, run):
    """Found by a newcomer: ``N.md`` truncated (an editor's crash) or deleted while its chain held the checkpoint
    made it vanish (list dropped it, ``show 1`` said 'no local checkpoint #1 …; local checkpoints are 1'). It
    is read from its chain's head, said once, and the next write writes the file again, as a plain write:
    the empty file is no person's edit."""
    from conftest import store_of

    run("checkpoint", "--title", "My task", "--goal", "g", "--phase", "Phase 1: a", "--resume", "Start Phase 1")
    run("checkpoint", "--decision", "d1")
    path = store_of(repo) / "1.md"
    path.write_text("")
    listed = run("list")
    assert "My task" in listed.stdout and listed.stderr.count("1.md is empty; read from its chain") == 1
    written = run("checkpoint", "--risk", "r")
    assert written.stdout.startswith("Updated checkpoint local #1 (revision 3): +1 risk")
    assert "Warning: #1's body was saved without" not in written.stderr
    state = json.loads(run("show", "--json").stdout)
    assert (state["title"], state["decisions"], state["risks"]) == ("My task", ["d1"], ["r"])
    assert path.read_text().startswith("<!-- ghstate:v1 ")
    assert [line.split()[0] for line in run("log", "1").stdout.splitlines()] == ["r1", "r2", "r3"]
    path.unlink()
    shown = run("show", "1")
    assert "My task" in shown.stdout and "1.md is gone; read from its chain" in shown.stderr
    run("checkpoint", "1", "--question", "q")
    assert "- q" in path.read_text()


def test_a_close_waits_for_a_write_under_way_and_stays_closed(repo, run, monkeypatch):
    """Found by a newcomer (1 run in 5 to 14): ``close`` moved N.md to closed/ without the store's lock, while a
    write that had read the checkpoint open then wrote its mirror to N.md again: both files, and list showed it
    open. A close now takes the lock: here it is asked while a write is between its read and its mirror."""
    import threading

    from conftest import store_of

    from ghstate.services.app import build_app

    run("checkpoint", "--goal", "g", "--phase", "Phase 1: a", "--resume", "Start.")
    reached, go = threading.Event(), threading.Event()
    mirror = LocalStore.mirror

    def slow_mirror(self, *args, **kwargs):
        reached.set()
        go.wait(10)
        return mirror(self, *args, **kwargs)

    monkeypatch.setattr(LocalStore, "mirror", slow_mirror)
    writing = threading.Thread(target=lambda: run("checkpoint", "--risk", "written while closing"))
    writing.start()
    assert reached.wait(10)
    closer = build_app(store="local")
    closing = threading.Thread(target=lambda: closer.store.close(closer.store.get(1)))
    closing.start()
    closing.join(0.5)
    assert closing.is_alive()  # it waits for the write's lock
    go.set()
    writing.join(10)
    closing.join(10)
    folder = store_of(repo)
    assert not (folder / "1.md").exists() and "written while closing" in (folder / "closed" / "1.md").read_text()
    assert run("list").stdout == ""  # none open (said on stderr)


def test_a_marker_broken_by_hand_before_the_second_write_loses_nothing(repo, run):
    """Found by a newcomer: the local chain began at the second write, so until then N.md's marker was the only
    record. A typo in it made the next write start over (revision 1 again, the title, the first author and the
    creation's log entry gone), and a person's edit then was credited to the next writer. The chain now begins
    with the creation: the record stands, and the edit is the person's."""
    from conftest import store_of

    run("checkpoint", "--title", "My task", "--goal", "g", "--phase", "Phase 1: a", "--decision", "use pg",
        "--resume", "Start Phase 1", "--agent", "alice")
    path = store_of(repo) / "1.md"
    text = path.read_text()
    path.write_text(text.replace('"revision":1', '"revision":1,oops', 1).replace("- use pg\n",
                                                                                 "- use pg\n- person decision\n"))
    assert "My task" in run("show").stdout
    run("checkpoint", "--risk", "r", "--agent", "bot")
    state = json.loads(run("show", "--json").stdout)
    assert state["title"] == "My task" and state["meta"]["revision"] == 3
    assert {"use pg", "person decision"} <= set(state["decisions"]) and state["risks"] == ["r"]
    log = run("log", "1").stdout.splitlines()
    assert log[0].startswith("r1 ") and "alice (editor): created with 1 phase" in log[0]
    assert "a person (edited the body)" in log[1] and "bot (editor): +1 risk" in log[2]


def test_a_write_whose_file_lagged_is_on_the_chain_of_its_closed_checkpoint(repo, run):
    """Finding 5 of issue 58, on the local store: ``1.md`` an older mirror than its chain (a stash or a hand took
    it back) when the checkpoint closes; ``show``, ``log`` and ``resume`` of the closed checkpoint read its
    chain's head, and a write after it reopens builds on it."""
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    older = (store_of(repo) / "1.md").read_text()
    run("checkpoint", "1", "--store", "local", "--risk", "written before the file went back")
    (store_of(repo) / "1.md").write_text(older)
    run("close", "1", "--store", "local")
    assert "written before the file went back" in json.loads(run("show", "1", "--store", "local", "--json").stdout)[
        "risks"]
    assert "+1 risk" in run("log", "1", "--store", "local").stdout.splitlines()[-1]
    assert "written before the file went back" in run("resume", "1", "--store", "local").stdout
    out = run("checkpoint", "1", "--store", "local", "--decision", "written to the closed one")
    assert "local #1 is closed: this write is on its log, and it stays closed" in out.stderr
    shown = json.loads(run("show", "1", "--store", "local", "--json").stdout)
    assert "written before the file went back" in shown["risks"] and "written to the closed one" in shown["decisions"]


def test_a_closed_checkpoint_never_hides_an_open_one_of_its_branch(repo, run):
    """Finding 4 of issue 58, on the local store: the branch's checkpoint closed (``closed/1.md``), an open one for
    the branch made since (an older ghstate's file, ``2.md``): ``resume`` and a write by branch take the open one."""
    run("checkpoint", "--store", "local", "--file", "-", input=SAMPLE)
    run("close", "1", "--store", "local")
    text = "<!-- ghstate:v1 {\"revision\": 1, \"branch\": \"feature/x\"} -->\n## Goal\nThe open one.\n" \
           "## Resume instruction\ngo\n"
    (store_of(repo) / "2.md").write_text(text)
    assert "local checkpoint #2" in run("resume", "--store", "local").stdout
    run("checkpoint", "--store", "local", "--risk", "on the open one")
    assert sorted(p.name for p in store_of(repo).glob("*.md")) == ["2.md"]
    assert "on the open one" in json.loads(run("show", "2", "--store", "local", "--json").stdout)["risks"]
