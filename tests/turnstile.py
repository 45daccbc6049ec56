"""Agents racing against the fake GitHub, one request at a time, in an order the test chooses.

Each agent runs in a thread of its own; every request it sends to the fake waits at the turnstile until
the test's ``choose`` picks it among the requests waiting (once every agent still running waits at the
turnstile, so that the choice never depends on how fast a thread happens to be). A schedule is a way of
choosing: the same schedule gives the same interleaving every run. No sleeps, no wall clock.
"""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Callable
from typing import Any


class Turnstile:
    def __init__(self, fake: Any) -> None:
        self.fake = fake
        self.cond = threading.Condition()
        self.agents: set[str] = set()
        self.waiting: set[str] = set()
        self.finished: set[str] = set()
        self.turn: str | None = None
        self.order: list[str] = []  # who sent each request, in the order they were answered
        original = fake._dispatch

        def dispatch(request: Any, graphql: bool = False) -> Any:
            name = threading.current_thread().name
            if name not in self.agents:
                return original(request, graphql)
            with self.cond:
                self.waiting.add(name)
                self.cond.notify_all()
                self.cond.wait_for(lambda: self.turn == name)
                self.waiting.discard(name)
            try:
                return original(request, graphql)
            finally:
                with self.cond:
                    self.order.append(name)
                    self.turn = None
                    self.cond.notify_all()

        fake._dispatch = dispatch

    def run(self, agents: dict[str, Callable[[], Any]], choose: Callable[[list[str]], str]) -> dict[str, Any]:
        """Run every agent to its end; each one's result, or the exception it raised. The agents stand for
        processes on machines of their own: this machine's turn at writing (``Pacer.writing``, a file lock
        one process holds for a whole write) is not theirs to share, or one would wait for another outside
        the turnstile."""
        from ghstate.local.pace import Pacer

        writing = Pacer.writing
        Pacer.writing = lambda self: contextlib.nullcontext()  # type: ignore[method-assign]
        try:
            return self._run(agents, choose)
        finally:
            Pacer.writing = writing  # type: ignore[method-assign]

    def _run(self, agents: dict[str, Callable[[], Any]], choose: Callable[[list[str]], str]) -> dict[str, Any]:
        results: dict[str, Any] = {}
        self.agents = set(agents)

        def body(name: str, fn: Callable[[], Any]) -> None:
            try:
                results[name] = fn()
            except BaseException as exc:  # noqa: BLE001 - the race's outcome, for the test to judge
                results[name] = exc
            finally:
                with self.cond:
                    self.finished.add(name)
                    self.cond.notify_all()

        threads = [threading.Thread(target=body, args=(n, f), name=n, daemon=True) for n, f in agents.items()]
        for thread in threads:
            thread.start()
        with self.cond:
            while True:
                self.cond.wait_for(lambda: self.turn is None and self.agents <= self.waiting | self.finished,
                                   timeout=60)
                if self.finished == self.agents:
                    break
                assert self.turn is None and self.agents <= self.waiting | self.finished, "an agent is stuck"
                self.turn = choose(sorted(self.waiting))
                self.cond.notify_all()
        for thread in threads:
            thread.join(timeout=60)
        self.agents = set()
        return results


def seeded(seed: int) -> Callable[[list[str]], str]:
    rng = random.Random(seed)
    return lambda waiting: rng.choice(waiting)


def round_robin() -> Callable[[list[str]], str]:
    last: list[str] = []

    def choose(waiting: list[str]) -> str:
        later = [w for w in waiting if not last or w > last[-1]]
        last.append((later or waiting)[0])
        return last[-1]

    return choose


def one_by_one(waiting: list[str]) -> str:
    return waiting[0]


SCHEDULES = {"one-by-one": lambda: one_by_one, "round-robin": round_robin,
             **{f"seed-{n}": (lambda n=n: seeded(n)) for n in range(3)}}
