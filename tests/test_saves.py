"""The one rule for the saves a write replaced (``ghstate.core.saves``), on plain lists of versions."""

from __future__ import annotations

from bodies import render_body
from conftest import SAMPLE
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from ghstate.core import chain
from ghstate.core.model import with_digests
from ghstate.core.parse import parse
from ghstate.core.saves import Version, body_digest, is_save, replaced_saves, saves_in

PAGE = render_body(with_digests(parse(SAMPLE).checkpoint.with_meta(revision=1)))  # as a write renders it


def render(k: int) -> str:
    """A mirror ghstate wrote (commit ``k``)."""
    return chain.embed(PAGE.replace("## Open questions\n", f"## Open questions\n- by ghstate {k}\n"), f"{k:040x}")


def save(k: int) -> str:
    """A person's save: a question added to a mirror's text."""
    return render(k).replace("## Remaining risks\n", f"## Remaining risks\n- by a person {k}\n")


def alone(k: int) -> str:
    """A body written alone beside the chain (no Contents: write): ghstate's text (its sections' digests its
    own), the head it was built on without a mirror's digest."""
    cp = parse(SAMPLE).checkpoint
    cp = cp._replace(questions=(*cp.questions, f"alone {k}")).with_meta(revision=k + 1)
    return chain.embed(render_body(with_digests(cp)), f"{k:040x}", protected=False)


def at(k: int) -> str:
    return f"2026-11-22T08:00:{k:02d}Z"


def history(*texts: str) -> list[Version]:
    """Versions oldest first as given, listed newest first as GitHub lists them."""
    return [Version(t, "mona" if is_save(t) else "octocat", at(k)) for k, t in enumerate(texts)][::-1]


def found(listed: list[Version], written: str, read: int, merged=()) -> list[str]:
    old = listed[::-1]
    return [v.text for v in replaced_saves(listed, written, old[read], merged)]


def test_a_persons_save_a_render_replaced_is_found_and_a_render_is_not():
    listed = history(render(0), save(1), render(2))
    assert found(listed, render(2), 0) == [save(1)]
    assert found(history(render(0), render(1), render(2)), render(2), 0) == []


def test_the_read_is_found_when_a_render_replaced_it_unless_it_is_merged():
    listed = history(render(0), save(1), render(2))
    assert found(listed, render(2), 1) == [save(1)]
    assert found(listed, render(2), 1, {body_digest(save(1))}) == []


def test_two_people_saving_in_turn_are_two_saves_oldest_first():
    a, b = save(1), save(2).replace("## Goal\n", "## Goal\nby lisa too\n")
    assert found(history(render(0), a, b, render(3)), render(3), 0) == [a, b]


def test_the_read_under_peoples_saves_is_theirs_to_carry():
    """The read (a body without ghstate's digests, as an issue a person opened) under a save made from it: the
    save holds what the read held, so the read is not merged again (it would read as deleting the save)."""
    opened = SAMPLE  # no marker digests: not a render
    assert found(history(opened, save(1), render(2)), render(2), 0) == [save(1)]


def test_versions_older_than_the_read_are_not_this_writes_business():
    assert found(history(save(0), render(1), save(2), render(3)), render(3), 2) == [save(2)]


def test_the_writes_own_version_not_listed_yet_is_above_all():
    listed = history(render(0), save(1))
    assert found(listed, render(2), 0) == [save(1)]


def test_a_body_written_alone_that_a_mirror_replaced_is_a_save():
    assert chain.as_written(alone(1)) and is_save(alone(1))  # ghstate's text, yet not on the chain
    assert not is_save(render(1)) and is_save(save(1))
    assert found(history(render(0), alone(1), render(2)), render(2), 0) == [alone(1)]


def test_a_version_deleted_from_the_history_keeps_the_run():
    listed = history(render(0), save(1), save(2), render(3))
    listed[1] = listed[1]._replace(text=None)  # save(2) deleted
    assert found(listed, render(3), 0) == [save(1)]


KINDS = st.sampled_from(("render", "save", "alone", "deleted"))


@settings(max_examples=examples(200))
@given(kinds=st.lists(KINDS, min_size=1, max_size=12), read=st.integers(0, 11), merged=st.sets(st.integers(0, 11)))
def test_what_is_found_is_a_save_since_the_read_not_merged_and_found_once(kinds, read, merged):
    made = {"render": render, "save": save, "alone": alone, "deleted": save}
    texts = [made[kind](k) for k, kind in enumerate(kinds)]
    listed = history(*texts)
    for k, kind in enumerate(kinds):
        if kind == "deleted":
            listed[len(kinds) - 1 - k] = listed[len(kinds) - 1 - k]._replace(text=None)
    read = min(read, len(kinds) - 1)
    digests = {body_digest(texts[k]) for k in merged if k < len(texts)}
    result = replaced_saves(listed, render(99), listed[::-1][read], digests)
    assert len({v.text for v in result}) == len(result)
    for v in result:
        assert v.text is not None and is_save(v.text) and body_digest(v.text) not in digests
        assert v.at >= at(read)
    assert [v.at for v in result] == sorted(v.at for v in result)  # oldest first


# ------------------------------------------------------------------------------ the saves an edited body is made of


def made_of(listed: list[Version], body: Version, merged=(), complete: bool = False) -> list[tuple[str, bool]]:
    return [(v.text, mixed) for v, mixed in saves_in(listed, body, merged, complete)]


def test_an_edited_body_is_the_saves_since_the_last_render_each_its_own_oldest_first():
    """Issue 44, part 2: saves in turn on a mirror (two people, no write between) are each their own."""
    one, two = save(1), save(1).replace("## Goal\n", "## Goal\nlisa's\n")
    listed = history(render(0), render(1), one, two)
    assert made_of(listed, listed[0]) == [(one, False), (two, False)]
    assert made_of(listed, listed[1]) == [(one, False)]  # read before the second: not its business
    assert made_of(listed, listed[0], merged={body_digest(one)}) == [(two, False)]  # merged already: a boundary


def test_saves_no_history_tells_apart_are_one_said_to_hold_others():
    one, two = save(1), save(1).replace("## Goal\n", "## Goal\nlisa's\n")
    body = Version(two, "lisa", at(9))
    assert made_of([], body) == [(two, True)]  # no history: the body alone, under its last editor
    listed = history(render(0), render(1), one, two)
    deleted = [listed[0], listed[1]._replace(text=None), *listed[2:]]
    assert made_of(deleted, listed[0]) == [(two, True)]  # a save deleted from it went into the one after
    assert made_of(listed[:2], listed[0]) == [(one, True), (two, False)]  # the page stops before a render
    original = history(one, two)  # an issue a person opened (the form) and edited: its whole history
    assert made_of(original, original[0], complete=True) == [(one, False), (two, False)]
    assert made_of(history(two), Version(two, "lisa", at(5))) == [(two, True)]  # one save, no render: not whole
