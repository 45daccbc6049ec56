"""What a write asks for, as data: the one change type that is applied and kept.

An ``Intent`` is applied to the checkpoint at the head of its chain *now*, never to the one a writer
happened to read: a writer that loses its race to another applies it again on the new head, and that is
how concurrent writers compose. The same frozen value is a pending write kept while GitHub is
unreachable, rebased by ``push``. ``to_data``/``from_data`` are its one serialisation.

Pure: no I/O, no templates. CI's verification arrives already rendered (text and data).
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from ghstate.core.edits import Edits, apply_edits, apply_incoming, base_digests, with_steps
from ghstate.core.marker import Execution, PullRequest, digests_of, text, texts, verification_of
from ghstate.core.model import SECTION_KEYS, TEXT_SECTIONS, Checkpoint, Extra, Phase, Step, WorkTree, find_phase
from ghstate.core.tasks import TaskEdit

if TYPE_CHECKING:  # pragma: no cover
    from ghstate.core.verification import Verification

PACK_OVER = 16_000  # serialised intents larger than this are compressed (a comment holds 65,536 characters)


class CiResult(NamedTuple):
    """A CI result as the checkpoint keeps it: the section's text and the marker's data."""

    text: str
    data: Verification | None


class Applied(NamedTuple):
    checkpoint: Checkpoint
    conflicts: tuple[str, ...] = ()  # sections both the file and the checkpoint had changed (both kept)


@dataclass(frozen=True)
class Intent:
    """One write's change. ``incoming``/``present``: a body or state given with --file and the sections
    it names; ``base``: the section digests of what the file was made from (None: not known; see
    ``edit.base_digests``); ``force``: its sections replace, unmerged. ``edits``: the incremental flags.
    ``verification``/``tick``: a CI result and the phase it ticks. ``task``: a task's place in a plan and
    a claim shown in its body (``ghstate split``, ``claim``, ``done``). ``pull_request``: the branch's pull
    request as GitHub answers it now (linked, merged, closed)."""

    edits: Edits = field(default_factory=Edits)
    incoming: Checkpoint | None = None
    present: frozenset[str] = frozenset()
    base: tuple[tuple[str, str], ...] | None = None
    force: bool = False
    verification: CiResult | None = None
    tick: str = ""
    task: TaskEdit | None = None
    pull_request: PullRequest | None = None

    def __bool__(self) -> bool:
        return bool(self.edits) or self.incoming is not None or self.verification is not None or bool(self.tick) \
            or self.task is not None or self.pull_request is not None

    def apply(self, cp: Checkpoint, *, masked: frozenset[str] = frozenset(), lenient: bool = False) -> Applied:
        """This change on ``cp``. ``masked``: fields (see ``sets``) a later write already set, which a
        replay of this older one must not set back. ``lenient`` (a replay): a tick of a phase that is no
        longer there is left out instead of refused."""
        conflicts: list[str] = []
        if self.incoming is not None:
            base = None if self.force else base_digests(cp, self.incoming, dict(self.base) if self.base else None)
            present = frozenset(k for k in self.present if k not in masked)
            cp, found = apply_incoming(cp, self.incoming, present, base, force=self.force)
            conflicts.extend(found)
        if self.edits:
            cp = apply_edits(cp, _mask_edits(self.edits, masked, cp.phases, lenient))
        if self.verification is not None and "verification" not in masked:
            cp = cp._replace(verification=self.verification.text, verification_data=self.verification.data)
        if self.tick:
            try:
                index = find_phase(cp.phases, self.tick)
            except LookupError:
                index = -1  # CI names a phase the checkpoint no longer has: the result is recorded anyway
            if index >= 0 and not cp.phases[index].done and f"phase:{_norm(cp.phases[index].name)}" not in masked:
                phases = list(cp.phases)
                phases[index] = with_steps(phases[index], True)  # a phase done is its steps done too
                cp = cp._replace(phases=tuple(phases))
        if self.task is not None:
            cp = self.task.apply(cp, masked)
        if self.pull_request is not None and "pull_request" not in masked:
            cp = cp.with_meta(pull_request=self.pull_request)
        return Applied(cp, tuple(conflicts))

    def sets(self, cp: Checkpoint) -> frozenset[str]:
        """The single-valued fields this change sets on ``cp`` (a later write wins on each): the title,
        goal, resume instruction, verification, sections a file replaces, and each phase it ticks or
        unticks. Additions (items, phases) are not among them: they compose in any order."""
        out: set[str] = set()
        for name, value in (("title", self.edits.title), ("goal", self.edits.goal), ("resume", self.edits.resume)):
            if value is not None:
                out.add(name)
        for ref in (*self.edits.done, *self.edits.undo, *((self.tick,) if self.tick else ())):
            try:
                out.add(f"phase:{_norm(cp.phases[find_phase(cp.phases, ref)].name)}")
            except LookupError:
                continue
        if self.incoming is not None:
            out.update(k for k in self.present if k in TEXT_SECTIONS)
        if self.verification is not None:
            out.add("verification")
        if self.task is not None:
            out.update(self.task.sets())
        if self.pull_request is not None:
            out.add("pull_request")
        return frozenset(out)

    # --------------------------------------------------------------------------- serialisation

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        edits = {f.name: list(v) if isinstance(v, tuple) else v
                 for f in fields(Edits) if (v := getattr(self.edits, f.name))}
        if edits:
            data["edits"] = edits
        if self.incoming is not None:
            data["incoming"] = sections_to_data(self.incoming, self.present)
            data["present"] = sorted(self.present)
        if self.base is not None:
            data["base"] = dict(self.base)
        if self.force:
            data["force"] = True
        if self.verification is not None:
            v = self.verification.data
            data["verification"] = {"text": self.verification.text, "data": v.to_dict() if v is not None else None}
        if self.tick:
            data["tick"] = self.tick
        if self.task is not None:
            data["task"] = self.task.to_data()
        if self.pull_request is not None:
            data["pull_request"] = self.pull_request.to_data()
        return data

    @classmethod
    def from_data(cls, data: Any) -> Intent:
        """The inverse of ``to_data``; ValueError for data that is not an intent."""
        if not isinstance(data, dict):
            raise ValueError("an intent is a JSON object")
        edits_data = data.get("edits", {})
        if not isinstance(edits_data, dict):
            raise ValueError("'edits' is not an object")
        values: dict[str, Any] = {}
        for f in fields(Edits):
            value = edits_data.get(f.name)
            if value is None:
                continue
            if isinstance(value, list):
                if not all(isinstance(v, str) for v in value):
                    raise ValueError(f"'edits.{f.name}' holds something other than text")
                value = tuple(value)
            elif not isinstance(value, str):
                raise ValueError(f"'edits.{f.name}' is not text")
            values[f.name] = value
        incoming = None
        present: frozenset[str] = frozenset()
        if data.get("incoming") is not None:
            present = frozenset(k for k in data.get("present") or () if k in SECTION_KEYS or k == "extra")
            incoming = sections_from_data(data["incoming"])
        base = data.get("base")
        base_pairs = (tuple(sorted((str(k), v) for k, v in base.items() if isinstance(v, str)))
                      if isinstance(base, dict) else None)
        verification = None
        v = data.get("verification")
        if isinstance(v, dict):
            verification = CiResult(str(v.get("text") or ""), verification_of(v.get("data")))
        tick = data.get("tick")
        return cls(edits=Edits(**values), incoming=incoming, present=present, base=base_pairs,
                   force=data.get("force") is True, verification=verification,
                   tick=tick if isinstance(tick, str) else "", task=TaskEdit.from_data(data.get("task")),
                   pull_request=PullRequest.from_data(data.get("pull_request")))


def pack(data: dict[str, Any], over: int = PACK_OVER) -> dict[str, Any]:
    """``data`` as it goes into a comment, a body or a file: compressed when longer than ``over``."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if len(raw) <= over:
        return data
    return {"z": base64.b64encode(zlib.compress(raw.encode("utf-8"), 9)).decode("ascii")}


UNPACKED_MAX = 1_000_000  # characters a packed intent may unpack to: what a 65,536-character body needs, and more


def unpack(data: Any) -> Any:
    if isinstance(data, dict) and set(data) == {"z"} and isinstance(data["z"], str):
        try:
            inflate = zlib.decompressobj()
            raw = inflate.decompress(base64.b64decode(data["z"], validate=True), UNPACKED_MAX)
            if inflate.unconsumed_tail:
                raise ValueError(f"it unpacks to more than {UNPACKED_MAX:,} bytes")
            return json.loads(raw.decode("utf-8"))
        except (ValueError, zlib.error, RecursionError) as exc:
            raise ValueError(f"a packed intent does not unpack ({type(exc).__name__})") from None
    return data


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _mask_edits(edits: Edits, masked: frozenset[str], phases: tuple[Phase, ...], lenient: bool) -> Edits:
    if not masked and not lenient:
        return edits

    def keep(ref: str) -> bool:
        try:
            return f"phase:{_norm(phases[find_phase(phases, ref)].name)}" not in masked
        except LookupError:
            return not lenient  # apply_edits reports the unknown phase, unless this is a replay

    return replace(  # what is added to a list (phases and the lists) is never masked: only what is set
        edits,
        title=None if "title" in masked else edits.title,
        goal=None if "goal" in masked else edits.goal,
        resume=None if "resume" in masked else edits.resume,
        done=tuple(r for r in edits.done if keep(r)),
        undo=tuple(r for r in edits.undo if keep(r)),
    )


# ------------------------------------------------------------------------ sections as plain data
# The markdown of each section exactly as the model holds it: not the JSON state of the contract,
# whose strings are a person's literal text.


def sections_to_data(cp: Checkpoint, keys: frozenset[str]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if cp.title:
        data["title"] = cp.title
    for key in sorted(keys - {"extra"}):  # the sections; the unknown ones below
        value = getattr(cp, key)
        if key == "phases":
            data[key] = [[p.name, p.done, [[s.text, s.done] for s in p.steps], p.detail] for p in value]
        elif isinstance(value, tuple):
            data[key] = list(value)
        else:
            data[key] = value
    if "verification" in keys and cp.verification_data is not None:
        data["verification_data"] = cp.verification_data.to_dict()
    extra = [[e.heading, e.body, e.level, e.after] for e in cp.extra]
    if extra:
        data["extra"] = extra
    if cp.meta.id:
        data["id"] = cp.meta.id
    if cp.meta.digests is not None:
        data["digests"] = cp.meta.digests  # what the file was made from, when ghstate wrote it (see base_digests)
    return data


def sections_from_data(data: Any) -> Checkpoint:
    if not isinstance(data, dict):
        raise ValueError("'incoming' is not an object")
    try:
        values: dict[str, Any] = {}
        for key in SECTION_KEYS:
            if key not in data:
                continue
            value = data[key]
            if key == "phases":
                values[key] = tuple(Phase(str(n), bool(d), tuple(Step(str(t), sd if sd is None else bool(sd))
                                                                 for t, sd in steps), str(detail))
                                    for n, d, steps, detail in value)
            elif isinstance(value, list):
                values[key] = tuple(str(v) for v in value)
            else:
                values[key] = str(value)
        extra = tuple(Extra(h if h is None else str(h), str(b), int(level), a if a is None else str(a))
                      for h, b, level, a in data.get("extra") or ())
        cp = Checkpoint(title=str(data.get("title") or ""), extra=extra,
                        verification_data=verification_of(data.get("verification_data")), **values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"'incoming' is malformed ({exc})") from None
    return cp.with_meta(id=text(data.get("id")), digests=digests_of(data.get("digests")))


# ------------------------------------------------------------------------------------ the write


class LabelRule(NamedTuple):
    """Labels a write keeps in step with CI's status: ``failing`` while CI fails or the task is blocked,
    ``blocked`` while it is blocked; other labels are left as they are."""

    failing: str
    blocked: str

    def apply(self, current: tuple[str, ...], cp: Checkpoint) -> tuple[str, ...]:
        status = cp.verification_data.status if cp.verification_data else ""
        kept = [x for x in current if x not in (self.failing, self.blocked)]
        if status in ("failing", "blocked"):
            kept.append(self.failing)
        if status == "blocked":
            kept.append(self.blocked)
        return tuple(kept)


@dataclass(frozen=True)
class WriteSpec:
    """One write, whole: what it changes (``intent``), where (``number`` None: the branch's open
    checkpoint when ``lookup``, else a new one when ``create``), and what it records of who and where
    it was made. ``record_tree`` False (CI, hooks, reviewers): keep the branch, commit and dirty files
    that drift compares with. ``labels``: the labels to keep in step with CI's result.

    A write GitHub cannot take is kept as this value (``to_data``), with the head it was made on, and
    rebased by ``push`` onto the head then: nothing it would have recorded is lost on the way. Only an
    intent given as data can be kept; one made from the checkpoint as read (CI's result) is a function,
    and is never kept."""

    intent: Intent | Callable[[Checkpoint], Intent]
    number: int | None = None
    tree: WorkTree = WorkTree()
    fingerprints: dict[str, str] = field(default_factory=dict)
    execution: Execution | None = None
    event: str = "checkpoint"
    title: str | None = None
    create: bool = True
    lookup: bool = True
    record_tree: bool = True
    dry_run: bool = False
    allow_secrets: bool = False
    new_id: str = ""  # the marker id a new checkpoint gets (a replayed create keeps the lost one's)
    labels: LabelRule | None = None
    write_id: str = ""  # the id its chain entry carries (a kept write keeps it: ``push`` finds it if it landed)
    made_at: str = ""  # when it was made
    base: str = ""  # the head of the chain it was made on (a kept write is rebased from it by ``push``)
    base_body: str = ""  # the state it was made on where no commit names it (a checkpoint without a chain yet)
    # a look for people's saves a body written earlier may have replaced (the history did not show it yet): the
    # body that write read, when it was saved, and the body it wrote (``store.Unchecked``)
    look_back: tuple[str, str, str] = ()
    move: bool = False  # a write by number from another branch makes it this branch's checkpoint
    adopt: bool = False  # a write by number to an issue that is no checkpoint makes it one
    saves: tuple[tuple[str, str, str], ...] = ()  # people's saves to merge (body, editor, when), kept for push

    def to_data(self) -> dict[str, Any]:
        if not isinstance(self.intent, Intent):
            raise ValueError("a write whose change is made when it is applied cannot be kept")
        return {
            "intent": pack(self.intent.to_data()), "number": self.number,
            "tree": {"branch": self.tree.branch, "commit": self.tree.commit, "dirty": list(self.tree.dirty)},
            "fingerprints": dict(self.fingerprints),
            "execution": self.execution.to_data() if self.execution else None, "event": self.event,
            "title": self.title, "create": self.create, "lookup": self.lookup, "record_tree": self.record_tree,
            "allow_secrets": self.allow_secrets, "new_id": self.new_id,
            "labels": list(self.labels) if self.labels else None,
            "write_id": self.write_id, "made_at": self.made_at, "base": self.base, "move": self.move,
            "adopt": self.adopt, "saves": [list(save) for save in self.saves],
            **({"base_body": self.base_body} if self.base_body else {}),
            **({"look_back": list(self.look_back)} if self.look_back else {}),
        }

    @classmethod
    def from_data(cls, data: Any) -> WriteSpec:
        """The inverse of ``to_data``; ValueError for data that is not a write."""
        if not isinstance(data, dict):
            raise ValueError("a write is a JSON object")
        tree = data.get("tree") if isinstance(data.get("tree"), dict) else {}
        number = data.get("number")
        fingerprints = data.get("fingerprints")
        labels = data.get("labels")
        execution = data.get("execution")
        return cls(
            intent=Intent.from_data(unpack(data.get("intent") or {})),
            number=number if isinstance(number, int) and not isinstance(number, bool) and number > 0 else None,
            tree=WorkTree(text(tree.get("branch")), text(tree.get("commit")), texts(tree.get("dirty"))),
            fingerprints={k: v for k, v in fingerprints.items() if isinstance(v, str)}
            if isinstance(fingerprints, dict) else {},
            execution=Execution.from_data(execution) if isinstance(execution, dict) else None,
            event=text(data.get("event")) or "checkpoint",
            title=data["title"] if isinstance(data.get("title"), str) and data["title"] else None,
            create=data.get("create", True) is not False, lookup=data.get("lookup", True) is not False,
            record_tree=data.get("record_tree", True) is not False,
            allow_secrets=data.get("allow_secrets") is True, new_id=text(data.get("new_id")),
            labels=LabelRule(*labels) if isinstance(labels, list) and len(labels) == 2
            and all(isinstance(x, str) for x in labels) else None,
            write_id=text(data.get("write_id")), made_at=text(data.get("made_at")), base=text(data.get("base")),
            base_body=text(data.get("base_body")), look_back=_look_back(data.get("look_back")),
            move=data.get("move") is True, adopt=data.get("adopt") is True, saves=_saves(data.get("saves")),
        )


def _look_back(data: Any) -> tuple[str, str, str]:
    """A kept look for replaced saves, as kept (three texts), or none."""
    if isinstance(data, list) and len(data) == 3 and all(isinstance(x, str) for x in data):
        return (data[0], data[1], data[2])
    return ()


def _saves(data: Any) -> tuple[tuple[str, str, str], ...]:
    """People's saves a kept write carries, as kept: [body, editor, when] each; what is not that is left out."""
    if not isinstance(data, list):
        return ()
    return tuple((save[0], save[1], save[2]) for save in data
                 if isinstance(save, list) and len(save) == 3 and all(isinstance(x, str) for x in save))
