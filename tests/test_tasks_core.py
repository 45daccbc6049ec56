"""Tasks that split, the pure part: what a phase line says it waits for, the split's plan and the checks
made before anything is written (phases that exist, no circle, GitHub's limits), leases with a given
clock, claim records, the claim a body shows, the children's states and their roll-up."""

from __future__ import annotations

import graphlib
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ghstate.core.claims import (
    Child,
    Claim,
    MirrorEdit,
    Summary,
    claimed,
    lease_of,
    mirror_in,
    mirror_of,
    rollup_lines,
    stamp,
    unblocked,
    with_mirror,
)
from ghstate.core.intent import Intent
from ghstate.core.marker import TaskLink
from ghstate.core.model import Checkpoint, Phase, Step
from ghstate.core.parse import is_child, parse
from ghstate.core.render import render_body
from ghstate.core.tasks import (
    MAX_CHILDREN,
    MAX_LINKS,
    Existing,
    TaskEdit,
    TaskError,
    after_refs,
    bare,
    child_checkpoint,
    creation_order,
    existing_children,
    followed,
    in_plan_order,
    linked_child,
    phase_named,
    phase_of,
    plan_split,
    title_of,
)
from ghstate.templating import environment

T0 = datetime(2026, 11, 22, 8, 0, tzinfo=timezone.utc)


def phases(*names: str, done: tuple[int, ...] = ()) -> tuple[Phase, ...]:
    return tuple(Phase(n, i in done) for i, n in enumerate(names))


PLAN = phases("Phase 1: parser", "Phase 2: matcher", "Phase 3: config (after Phase 2)",
              "Phase 4: docs (after Phase 2)", "Phase 5: release (after Phase 3, Phase 4)", done=(0,))


# ------------------------------------------------------------------------------ phase lines


def test_a_phase_line_says_what_it_waits_for_and_which_child_it_is():
    name = r"Phase 5: release \*now\* (after Phase 3, 4) (#31)"
    assert after_refs(name) == ("Phase 3", "4")
    assert linked_child(name) == 31 and linked_child("Phase 5: release") is None
    assert bare(name) == r"Phase 5: release \*now\*" and title_of(Phase(name)) == "Phase 5: release *now*"
    assert after_refs("Phase 2 (AFTER  Phase 1 )") == ("Phase 1",)


# ------------------------------------------------------------------------------ the plan


def test_every_open_phase_becomes_a_child_and_its_waits_become_links():
    plan = plan_split(PLAN, Existing())
    assert plan.new == (1, 2, 3, 4)
    assert set(plan.links) == {(2, 1), (3, 1), (4, 2), (4, 3)}
    order = creation_order(plan)
    assert all(order.index(j) < order.index(i) for i, j in plan.links)


def test_in_order_chains_the_open_phases_instead():
    plan = plan_split(PLAN, Existing(), in_order=True)
    assert plan.links == ((2, 1), (3, 2), (4, 3))


def test_chosen_phases_only_and_a_wait_for_a_done_phase_is_met():
    plan = plan_split(phases("P1", "P2 (after P1)", "P3", done=(0,)), Existing(), chosen=("P2",))
    assert plan.new == (1,) and plan.links == ()


def test_a_split_again_makes_only_what_is_missing():
    existing = Existing(children={1: 31, 2: 32}, links=frozenset({(32, 31)}), count=2)
    plan = plan_split(PLAN, existing)
    assert plan.new == (3, 4) and plan.children == {1: 31, 2: 32}
    assert set(plan.links) == {(3, 1), (4, 2), (4, 3)}  # (2, 1) is there already
    everything = Existing(children={1: 31, 2: 32, 3: 33, 4: 34}, count=4,
                          links=frozenset({(32, 31), (33, 31), (34, 32), (34, 33)}))
    assert plan_split(PLAN, everything) == (((), everything.children, ()))


def test_a_closed_child_is_waited_for_no_more():
    existing = Existing(children={1: 31}, closed=frozenset({31}), count=1)
    assert (2, 1) not in plan_split(PLAN, existing).links


@pytest.mark.parametrize("chosen, names, words", [
    (("Phase 9",), PLAN, "no phase"),
    (("Phase 1",), PLAN, "Phase 1 is done"),
    ((), phases("A", "B (after C)", "C"), None),
    ((), phases("A (after Z)"), "waits for 'Z', which names no single phase"),
    (("B",), phases("A", "B (after A)"), "waits for A, which is neither done nor split"),
])
def test_what_cannot_be_split_is_refused_before_anything_is_written(chosen, names, words):
    if words is None:
        assert plan_split(names, Existing(), chosen=chosen).links == ((1, 2),)
        return
    with pytest.raises(TaskError, match=words):
        plan_split(names, Existing(), chosen=chosen)


def test_a_circle_is_named():
    circle = phases("A (after C)", "B (after A)", "C (after B)", "D (after D)")
    with pytest.raises(TaskError, match=r"circle \(A → C → B → A\)"):
        plan_split(circle[:3], Existing())
    with pytest.raises(TaskError, match=r"circle \(D → D\)"):
        plan_split(circle[3:], Existing())


def test_githubs_limits_are_checked_before_anything_is_written():
    many = tuple(Phase(f"P{i}") for i in range(MAX_CHILDREN + 1))
    with pytest.raises(TaskError, match="101 sub-issues; GitHub keeps at most 100"):
        plan_split(many, Existing())
    assert len(plan_split(many[:10], Existing(count=90)).new) == 10
    with pytest.raises(TaskError, match="100"):
        plan_split(many[:10], Existing(count=91))
    wide = (Phase("Last (after " + ", ".join(f"P{i}" for i in range(MAX_LINKS + 1)) + ")"),
            *(Phase(f"P{i}") for i in range(MAX_LINKS + 1)))
    with pytest.raises(TaskError, match="Last waits for 51 issues; GitHub links an issue to at most 50"):
        plan_split(wide, Existing())
    hub = (Phase("Hub"), *(Phase(f"P{i} (after Hub)") for i in range(MAX_LINKS + 1)))
    with pytest.raises(TaskError, match="Hub is waited for by 51 issues"):
        plan_split(hub, Existing())
    assert plan_split(hub[:MAX_LINKS + 1], Existing()).links  # 50 is allowed


@given(st.lists(st.lists(st.integers(0, 7), max_size=3), min_size=1, max_size=8))
@example([[1], [0]])
@example([[0]])
@example([[], [0], [1, 0], [2]])
def test_a_split_is_refused_exactly_when_the_waits_make_a_circle(waits):
    """Judged by the standard library's topological sorter, not by the code under test."""
    n = len(waits)
    names = tuple(Phase(f"P{i}" + (f" (after {', '.join(f'P{j}' for j in sorted(set(w)) if j < n)})"
                                    if any(j < n for j in w) else "")) for i, w in enumerate(waits))
    graph = {i: {j for j in w if j < n} for i, w in enumerate(waits)}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
        circle = False
    except graphlib.CycleError:
        circle = True
    if circle:
        with pytest.raises(TaskError, match="circle"):
            plan_split(names, Existing())
        return
    plan = plan_split(names, Existing())
    assert set(plan.links) == {(i, j) for i, js in graph.items() for j in js}
    order = creation_order(plan)
    assert sorted(order) == list(range(n)) and all(order.index(j) < order.index(i) for i, j in plan.links)


# ------------------------------------------------------------------------------ the children


def test_a_child_is_its_phase_with_the_parents_locked_decisions():
    steps = (Step("write it"), Step("test it", True))
    parent = Checkpoint(title="CLI refactor", decisions=("required flags",), files=("`src/a.ts`",),
                        phases=(Phase("Phase 2: matcher (after Phase 1)", steps=steps),))
    child = child_checkpoint(parent, parent.phases[0], "#24")
    assert child.title == "Phase 2: matcher" and child.goal == "Phase 2: matcher"
    assert [p.name for p in child.phases] == ["write it", "test it"] and child.phases[1].done
    assert child.decisions == ("required flags",) and child.files == ("`src/a.ts`",)
    assert child.resume.startswith("Start with write it. This is Phase 2: matcher, a part of #24 (CLI refactor)")
    plain = child_checkpoint(parent, Phase("Phase 3: docs"), "#24")
    assert plain.phases == (Phase("Phase 3: docs"),)


def test_children_come_in_their_parents_order_named_by_their_phase():
    names = phases("Phase 1: a (#33)", "Phase 2: b (#31)")
    found = in_plan_order(names, (Child(31, "b"), Child(40, "by hand"), Child(33, "a")))
    assert [(c.number, c.phase) for c in found] == [(33, "Phase 1: a"), (31, "Phase 2: b"), (40, "")]
    assert phase_of(names, 31) == 1 and phase_of(names, 99) is None


def test_a_parents_phase_lines_link_their_children_once():
    cp = Checkpoint(phases=phases("Phase 2: matcher", "Phase 3: config (after Phase 2)"))
    edit = TaskEdit(links=(("Phase 2", 31), ("Phase 3: config (after Phase 2)", 32), ("Phase 9", 40)))
    linked = Intent(task=edit).apply(cp).checkpoint
    assert [p.name for p in linked.phases] == ["Phase 2: matcher (#31)", "Phase 3: config (after Phase 2) (#32)"]
    assert Intent(task=edit).apply(linked).checkpoint == linked


def test_a_task_edit_is_data_that_a_log_replays():
    claim = Claim("a1", "2026-11-22T08:30:00Z", "2026-11-22T08:00:00Z", "s-1", 31)
    edit = TaskEdit(link=TaskLink(24, "Phase 2", (30,)), links=(("Phase 2", 31),), after=(29,),
                    closed="2026-11-22T09:00:00Z", mirror=MirrorEdit(claim, "a1"))
    intent = Intent(task=edit)
    assert Intent.from_data(intent.to_data()) == intent
    assert intent.sets(Checkpoint()) == {"claim"}
    cp = intent.apply(Checkpoint()).checkpoint
    assert cp.meta.task == TaskLink(24, "Phase 2", (29, 30), "2026-11-22T09:00:00Z") and mirror_of(cp) == claim


def test_the_task_link_is_kept_in_the_marker_and_makes_a_child():
    cp = Checkpoint(title="child", phases=(Phase("x"),), resume="go").with_meta(task=TaskLink(24, "Phase 2", (30,)))
    body = render_body(cp, environment())
    assert parse(body).checkpoint.meta.task == TaskLink(24, "Phase 2", (30,))
    assert is_child(body) and not is_child(render_body(cp.with_meta(task=None), environment()))


# ------------------------------------------------------------------------------ leases and claims


@pytest.mark.parametrize("text, seconds", [("90s", 90), ("30m", 1800), ("2h", 7200), ("1d", 86400), (" 5M ", 300)])
def test_a_lease_is_a_duration(text, seconds):
    assert lease_of(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "30", "m30", "0m", "-5m", "1.5h", "8d", "1w"])
def test_what_is_no_lease_is_refused(text):
    with pytest.raises(ValueError):
        lease_of(text)


def test_a_claim_is_live_until_its_lease_ends():
    claim = claimed("a1", "s-1", T0, lease_of("30m"), 31)
    assert claim.until == "2026-11-22T08:30:00Z" and claim.at == stamp(T0)
    assert claim.live(T0 + timedelta(minutes=29, seconds=59)) and not claim.live(T0 + timedelta(minutes=30))
    assert Claim.from_message(claim.message()) == claim
    assert claim.message().startswith("ghstate claim of #31 by a1 until 2026-11-22T08:30:00Z\n")
    assert Claim.from_message("Merge branch 'x'") is None and Claim.from_data({"agent": "", "until": "x"}) is None


def test_a_claim_shows_in_the_body_for_people_and_reads_back():
    claim = claimed("a1 --> <b>", "s-1", T0, lease_of("30m"), 31)
    cp = Checkpoint(title="t", phases=(Phase("x"),), resume="go")
    body = render_body(with_mirror(cp, claim), environment())
    assert "> **Claimed** by `a1 --> <b>` (session `s-1`) until 2026-11-22 08:30 UTC" in body
    comment = next(line for line in body.splitlines() if line.startswith("<!-- ghstate:claim"))
    assert comment.count("-->") == 1  # its own end: the agent's "-->" cannot end it early
    assert mirror_of(parse(body).checkpoint) == claim and mirror_in(body) == claim
    assert mirror_of(with_mirror(parse(body).checkpoint, None)) is None


def test_in_the_body_the_first_of_two_racing_claims_stands():
    """Replayed in log order, a claim does not displace one that is live at its own time (unless forced)."""
    first = claimed("a1", "", T0, lease_of("30m"), 31)
    second = claimed("a2", "", T0 + timedelta(seconds=5), lease_of("30m"), 31)
    cp = MirrorEdit(first, "a1").apply(Checkpoint())
    assert mirror_of(MirrorEdit(second, "a2").apply(cp)) == first
    assert mirror_of(MirrorEdit(second, "a2", force=True).apply(cp)) == second
    late = claimed("a2", "", T0 + timedelta(hours=1), lease_of("30m"), 31)
    assert mirror_of(MirrorEdit(late, "a2").apply(cp)) == late  # the first ran out
    assert mirror_of(MirrorEdit(None, "a2").apply(cp)) == first  # only its holder takes it away
    assert mirror_of(MirrorEdit(None, "a1").apply(cp)) is None


def test_a_childs_state_and_the_roll_up():
    live = claimed("a1", "", T0, lease_of("30m"), 32)
    ended = claimed("a2", "", T0 - timedelta(hours=1), lease_of("30m"), 35)
    children = (Child(31, "one", open=False), Child(32, "two", claim=live), Child(33, "three", blocked_by=(32,)),
                Child(34, "four"), Child(35, "five", claim=ended))
    assert [c.state(T0) for c in children] == ["done", "claimed", "blocked", "ready", "ready"]
    assert [c.state(T0 + timedelta(hours=1)) for c in children][1] == "ready"
    assert children[1].to_json(T0) == {"number": 32, "title": "two", "state": "claimed", "blocked_by": [],
                                       "claimed_by": "a1", "claimed_session": None,
                                       "lease_until": "2026-11-22T08:30:00Z", "phase": None,
                                       "url": None, "moved": False, "moved_to": None}
    assert children[4].to_json(T0)["claimed_by"] is None  # its lease ran out
    assert rollup_lines(children, Summary(5, 1), T0) == [
        "Sub-tasks: 1 of 5 done (20%)",
        "ready: #34 four; #35 five",
        "claimed: #32 two (by a1 until 2026-11-22 08:30 UTC)",
        "blocked: #33 three (waits for #32)",
        "done: #31 one",
    ]
    assert rollup_lines((), Summary(), T0) == []
    assert [c.number for c in unblocked(children, 32, T0)] == [33]
    assert unblocked(children, 34, T0) == ()


# ------------------------------------------------------------------------------ a family people rearrange


def test_a_child_knows_its_phase_by_its_line_or_by_its_marker():
    plan = PLAN[:2] + (Phase("Phase 3: configuration, reworded (after Phase 2)"), *PLAN[3:])
    assert phase_named(plan, "Phase 2: matcher") == 1
    assert phase_named(plan, "Phase 3: config") == 2  # reworded since: its label is the one there
    assert phase_named(plan, "Phase 9: gone") is None and phase_named(plan, "") is None
    assert phase_named(phases("Phase 2: a", "Phase 2: b"), "Phase 2: c") is None  # two of that label: neither
    linked = (Phase("Phase 1: parser (#7)"), *PLAN[1:])
    children = (Child(7, "renamed by hand"), Child(8, "The matcher", phase="Phase 2: matcher"),
                Child(9, "Phase 4: docs"), Child(10, "Phase 5: release", phase="Phase 1: parser"))
    # #7 by its line, #8 by its marker whatever its title, #9 (no marker) by its title, #10's phase has #7
    assert existing_children(linked, children) == {0: 7, 1: 8, 3: 9}


def test_a_phase_whose_child_is_closed_is_done_whatever_its_box_says():
    plan = phases("Phase 1: a (#2)", "Phase 2: b (#3)", "Phase 3: c", "Phase 4: d (#5)")
    children = (Child(2, "a", open=False), Child(3, "b"), Child(4, "c", open=False, phase="Phase 3: c"),
                Child(5, "d", open=False, moved=True, moved_to=9))  # moved elsewhere, and done there
    assert [p.done for p in followed(plan, children)] == [True, False, True, True]
    assert followed(plan, ()) == plan


def test_a_moved_child_is_named_apart_with_where_it_went():
    children = (Child(31, "one", open=False), Child(32, "two", moved=True, moved_to=40),
                Child(33, "three", moved=True, open=False))
    assert rollup_lines(children, Summary(1, 1), T0) == [
        "Sub-tasks: 1 of 1 done (100%)", "done: #31 one", "moved: #32 two (to #40); #33 three (no sub-issue any "
        "more, done)"]
    assert children[1].to_json(T0)["moved_to"] == 40 and children[2].to_json(T0)["moved"] is True
    assert children[1].where(lambda n: f"#{n}", 8) == "moved to #40"
    assert children[2].where(lambda n: f"#{n}", 8) == "is no sub-issue of #8 any more"


def test_a_body_that_shows_another_claim_than_its_ref_is_worth_repairing_only_when_one_is_live():
    live = claimed("a1", "", T0, lease_of("30m"), 32)
    ended = claimed("a0", "", T0 - timedelta(hours=2), lease_of("30m"), 32)
    assert Child(32, "two", claim=live, shown=None, from_ref=True).shows_wrong(T0)  # never written
    assert Child(32, "two", claim=live, shown=ended, from_ref=True).shows_wrong(T0)  # an older one
    assert Child(32, "two", claim=None, shown=live, from_ref=True).shows_wrong(T0)  # released, still shown
    assert not Child(32, "two", claim=live, shown=live, from_ref=True).shows_wrong(T0)
    assert not Child(32, "two", claim=ended, shown=None, from_ref=True).shows_wrong(T0)  # both say: free
    assert not Child(32, "two", claim=live, shown=None).shows_wrong(T0)  # the body is the claim (no ref)
    assert not Child(32, "two", open=False, claim=live, from_ref=True).shows_wrong(T0)
    lines = rollup_lines((Child(32, "two", claim=live, from_ref=True),), Summary(1, 0), T0)
    assert lines[1] == ("claimed: #32 two (by a1 until 2026-11-22 08:30 UTC; its body does not show it yet: "
                        "'ghstate ready' shows it)")


def test_a_claim_is_read_only_from_the_bodys_own_place_and_taken_away_alone():
    """Issue 57: the record was searched for anywhere in a body, but only the copy at the top was ever taken
    away. Only the first lines (after the hidden marker) hold a claim; what a person wrote beside the mirror,
    a record they pasted included, stays when it is taken away."""
    claim = claimed("a1", "s-1", T0, lease_of("30m"), 31)
    cp = Checkpoint(title="t", goal="g", phases=(Phase("x"),), resume="go")
    shown = render_body(with_mirror(cp, claim), environment())
    pasted = shown.replace("## Goal\ng", "## Goal\n" + shown.splitlines()[1] + "\ng")
    person = shown.replace("ghstate done`)\n", "ghstate done`)\nA note of mona's.\n")
    assert mirror_in(pasted) == claim == mirror_of(parse(pasted).checkpoint)
    goal_only = render_body(cp, environment()).replace("## Goal\ng", "## Goal\n" + shown.splitlines()[1] + "\ng")
    assert mirror_in(goal_only) is None and mirror_of(parse(goal_only).checkpoint) is None
    freed = render_body(with_mirror(parse(person).checkpoint, None), environment())
    assert "A note of mona's." in freed and "ghstate:claim" not in freed
    freed = render_body(with_mirror(parse(pasted).checkpoint, None), environment())
    assert freed.count("ghstate:claim") == 1 and mirror_in(freed) is None  # the goal's copy is the person's


def test_a_lease_is_measured_from_when_github_dated_it_and_holds_a_week_at_most():
    hint = Claim("ghost", "2099-01-01T00:00:00Z", stamp(T0))
    assert hint.span() == (T0, T0 + timedelta(days=7)) and hint.ends() == "2026-11-29T08:00:00Z"
    assert not Claim("ghost", "2099-01-01T00:00:00Z").live(T0)  # no time to measure from: none
    assert Claim("ghost", "2099-01-01T00:00:00Z", "2099-01-01T00:00:00Z").future(T0)
    dated = claimed("a1", "", T0 - timedelta(minutes=20), lease_of("30m"), 3)._replace(dated=stamp(T0))
    assert dated.ends() == "2026-11-22T08:30:00Z" and dated.live(T0 + timedelta(minutes=29))
    assert dated.record() == dated._replace(dated="").record() and Claim.from_message(dated.message()).dated == ""
