"""Which variants of the fake GitHub a case runs under: the default and every variant that can change what the
case sees, and no other.

A variant of what GitHub leaves open turns one knob of the fake (a field of ``github_fake_tasks.Variant``, or
the edit history's ``coalesce_seconds`` and ``history_lag``). The fake notes in ``FakeGitHub.reached`` each
knob whose other value would have answered a request otherwise, or kept another state, at some point of its
life. A case whose run under the default never reaches a knob sees, under that knob's variant, the very same
answers to the very same requests: its outcome cannot change, and running it again under that variant tests
nothing new.

So a case says which knobs can change it (``@changed_by(...)``, from what its run reaches) and runs under the
default and those knobs' variants; a case that says nothing runs under every variant. Its run under the
default checks the claim: a case that reaches a knob it does not name fails, and says which one to add.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import pytest
from github_fake_tasks import Variant

EDIT_HISTORY = ("coalesce_seconds", "history_lag", "cursors")  # the fake's own knobs
KNOBS = frozenset([f.name for f in fields(Variant) if f.name != "name"] + list(EDIT_HISTORY))


def knob(variant: Variant) -> str | None:
    """The one knob ``variant`` turns away from the default (None: the default itself)."""
    turned = [f.name for f in fields(Variant) if f.name != "name" and getattr(variant, f.name) !=
              getattr(Variant(), f.name)]
    assert len(turned) <= 1, f"variant {variant.name} turns {turned}: a variant turns one knob"
    return turned[0] if turned else None


def changed_by(*knobs: str) -> Callable[[Callable], Callable]:
    """The knobs whose variants can change this case (what its run under the default reaches); it runs under the
    default and their variants only."""
    unknown = set(knobs) - KNOBS
    if unknown:
        raise ValueError(f"no such knob of the fake GitHub: {sorted(unknown)} (knobs: {sorted(KNOBS)})")

    def mark(test: Callable) -> Callable:
        test.changed_by = frozenset(knobs)
        return test

    return mark


@dataclass(frozen=True)
class Case:
    """One variant a case runs under: how the fixture sets the fake up, the knob it turns (None: the default),
    and the knobs of the variants the case does not run under."""

    how: Any
    knob: str | None
    skipped: frozenset[str]


def parametrize(metafunc: pytest.Metafunc, variants: list[tuple[str, Any, str | None]], fixture: str = "gh") -> None:
    """Parametrize ``fixture`` (indirectly) with ``variants`` ((id, how, knob) each) that can change the case."""
    if fixture not in metafunc.fixturenames:
        return
    named = getattr(metafunc.function, "changed_by", None)
    chosen = [(name, how, k) for name, how, k in variants if k is None or named is None or k in named]
    skipped = frozenset(k for _, _, k in variants if k is not None) - {k for _, _, k in chosen}
    # the default in every tier; the variants past it in the thorough one (tests/conftest.py)
    metafunc.parametrize(fixture, [pytest.param(Case(how, k, skipped), id=name,
                                                marks=[pytest.mark.thorough] if k is not None else [])
                                   for name, how, k in chosen], indirect=True)


def check(fake: Any, case: Case, test: str) -> None:
    """Under the default: the case reached no knob of a variant it does not run under."""
    if case.knob is not None:
        return
    missed = sorted(fake.reached & case.skipped)
    assert not missed, (f"{test} now reaches {missed}: a variant turning it can change what it sees; add it to "
                        "the case's @changed_by (tests/variants.py)")
