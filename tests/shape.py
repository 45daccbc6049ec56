"""The shape of the write path, module by module, for any checkout: run by hand, never collected by pytest.

    python tests/shape.py              # the checkout this script sits in
    python tests/shape.py PATH         # another checkout (a worktree, a scratch copy)
    python tests/shape.py BEFORE AFTER # side by side: each cell "before → after"

For each module of the write path (``MODULES``; one a checkout lacks shows "—"): its lines, its functions
(methods and nested functions included, lambdas not), the longest function and its name, the function
with the most branches and its name, and how many functions are longer than 40 lines or have more than 15
branches; then a total row.

A function's lines run from its ``def`` line (decorators excluded) to its last line (``end_lineno``),
inclusive; a module's lines are its physical lines.

A function's branches are counted as ruff counts them for PLR0912 (too-many-branches), after pylint's
R0912, in ruff's ``num_branches`` (crates/ruff_linter/src/rules/pylint/rules/too_many_branches.rs), over
the function's own body, nested functions and classes left out (each is counted on its own):

- ``if``: 1, plus 1 for each ``elif`` and for an ``else``, plus the branches inside each of them;
- ``for`` and ``while`` (``async for`` too): 1, plus 1 for an ``else``, plus the branches inside;
- ``try`` (and ``try``/``except*``): 1 for each ``except``, 1 for an ``else``, 1 for a ``finally``, plus the
  branches inside each and inside the ``try`` body (the ``try`` itself is no branch);
- ``match``: 1 for each ``case``, plus the branches inside;
- ``with`` (``async with`` too): no branch, but the branches inside count;
- anything else (expressions, comprehensions, conditional expressions, ``and``/``or``): none.

An ``else`` whose only statement is an ``if`` is told from an ``elif`` by its column (an ``elif``'s ``if``
node starts where its parent's does), so ``else:`` + ``if`` counts 2 where ``elif`` counts 1, as in ruff.

``offenders(root, modules)`` lists the functions over the limits, for a test to import by path
(``importlib.util.spec_from_file_location``: no dataclass here needs the module in ``sys.modules``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

MODULES = (
    "ghstate/store.py",
    "ghstate/services/writer.py",
    "ghstate/services/draft.py",
    "ghstate/services/reader.py",
    "ghstate/github/store.py",
    "ghstate/github/chain_ref.py",
    "ghstate/github/body.py",
    "ghstate/local/store.py",
    "ghstate/core/chain.py",
    "ghstate/core/saves.py",
    "ghstate/core/merge.py",
)
MAX_LINES = 40
MAX_BRANCHES = 15
MISSING = "—"


def branches(stmts: Iterable[ast.stmt]) -> int:
    """The branches in ``stmts`` as ruff's PLR0912 counts them (see the module's docstring)."""
    total = 0
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            total += 1 + branches(stmt.body)
            orelse = stmt.orelse
            if len(orelse) == 1 and isinstance(orelse[0], ast.If) and orelse[0].col_offset == stmt.col_offset:
                total += branches(orelse)  # an elif: counted as the if it is (1, its body, its own elif/else)
            elif orelse:
                total += 1 + branches(orelse)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            total += 1 + branches(stmt.body) + ((1 + branches(stmt.orelse)) if stmt.orelse else 0)
        elif isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            total += branches(stmt.body)
            total += sum(1 + branches(h.body) for h in stmt.handlers)
            total += (1 + branches(stmt.orelse)) if stmt.orelse else 0
            total += (1 + branches(stmt.finalbody)) if stmt.finalbody else 0
        elif isinstance(stmt, ast.Match):
            total += sum(1 + branches(case.body) for case in stmt.cases)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            total += branches(stmt.body)
    return total


def decisions(function: ast.AST) -> int:
    """The decision points of a function (its cyclomatic complexity less one, as radon counts it, boolean
    operators included): ``if``/``elif`` and conditional expressions, ``for``/``while`` (and their ``else``),
    each ``except`` and a ``try``'s ``else``, ``assert``, each ``case``, each comprehension and its ``if`` clauses, and
    each ``and``/``or`` beyond the first operand; nested functions, lambdas and classes left out. On the
    1,558 functions of ghstate/ it agrees with radon 6's ``cc`` (less one) but for 15, off by one or two
    (radon counts some lambdas' branches into the function around them, and some asserts not)."""
    total = 0
    todo = list(ast.iter_child_nodes(function))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.If, ast.IfExp, ast.Assert, ast.match_case)):
            total += 1
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            total += 1 + bool(node.orelse)
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            total += len(node.handlers) + bool(node.orelse)
        elif isinstance(node, ast.comprehension):
            total += 1 + len(node.ifs)
        elif isinstance(node, ast.BoolOp):
            total += len(node.values) - 1
        todo.extend(ast.iter_child_nodes(node))
    return total


class Function(NamedTuple):
    name: str  # qualified: Class.method, outer.inner
    line: int  # the def line
    lines: int
    branches: int
    decisions: int = 0  # cyclomatic complexity less one (radon's count, boolean operators included)


def functions(tree: ast.AST) -> Iterator[Function]:
    """Every function and method of a module, nested ones included, in source order."""

    def walk(node: ast.AST, prefix: str) -> Iterator[Function]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                end = child.end_lineno or child.lineno
                yield Function(name, child.lineno, end - child.lineno + 1, branches(child.body), decisions(child))
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


class Shape(NamedTuple):
    lines: int
    functions: tuple[Function, ...]

    @property
    def longest(self) -> Function | None:
        return max(self.functions, key=lambda f: f.lines, default=None)

    @property
    def most_branched(self) -> Function | None:
        return max(self.functions, key=lambda f: f.branches, default=None)

    @property
    def most_decisions(self) -> Function | None:
        return max(self.functions, key=lambda f: f.decisions, default=None)

    def over(self, max_lines: int = MAX_LINES, max_branches: int = MAX_BRANCHES) -> tuple[int, int, int]:
        return (sum(f.lines > max_lines for f in self.functions),
                sum(f.branches > max_branches for f in self.functions),
                sum(f.decisions > max_branches for f in self.functions))


def shape(path: Path) -> Shape | None:
    """The shape of one module (None: the checkout has no such file)."""
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    return Shape(len(text.splitlines()), tuple(functions(ast.parse(text, filename=str(path)))))


def offenders(root: Path, modules: Iterable[str] = MODULES, max_lines: int = MAX_LINES,
              max_branches: int = MAX_BRANCHES) -> list[str]:
    """The functions of ``modules`` (paths under ``root``) longer than ``max_lines`` or with more than
    ``max_branches`` branches, one line each: ``path:line name: N lines > max``, ``… N branches > max``.
    Modules ``root`` lacks are passed over."""
    out = []
    for module in modules:
        found = shape(Path(root) / module)
        for f in found.functions if found is not None else ():
            if f.lines > max_lines:
                out.append(f"{module}:{f.line} {f.name}: {f.lines} lines > {max_lines}")
            if f.branches > max_branches:
                out.append(f"{module}:{f.line} {f.name}: {f.branches} branches > {max_branches}")
            if f.decisions > max_branches:
                out.append(f"{module}:{f.line} {f.name}: {f.decisions} decision points > {max_branches}")
    return out


# ---------------------------------------------------------------------------------------------- the table

HEADINGS = ("module", "lines", "functions", "longest", "most branches", "most decisions", f">{MAX_LINES} lines",
            f">{MAX_BRANCHES} branches", f">{MAX_BRANCHES} decisions")


def _cells(found: Shape | None) -> tuple[str, ...]:
    if found is None:
        return (MISSING,) * (len(HEADINGS) - 1)
    longest, most, decided = found.longest, found.most_branched, found.most_decisions
    over_lines, over_branches, over_decisions = found.over()
    return (str(found.lines), str(len(found.functions)),
            f"{longest.lines} {longest.name}" if longest else MISSING,
            f"{most.branches} {most.name}" if most else MISSING,
            f"{decided.decisions} {decided.name}" if decided else MISSING,
            str(over_lines), str(over_branches), str(over_decisions))


def _total(shapes: list[Shape | None]) -> tuple[str, ...]:
    present = [s for s in shapes if s is not None]
    if not present:
        return (MISSING,) * (len(HEADINGS) - 1)
    every = Shape(sum(s.lines for s in present), tuple(f for s in present for f in s.functions))
    return _cells(every)


def _described(root: Path) -> str:
    """The checkout and its commit (with "+ changes" when its tree differs from it), as git says."""
    try:
        run = lambda *args: subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,  # noqa: E731
                                           check=True).stdout.strip()
        commit = run("rev-parse", "--short", "HEAD")
        dirty = run("status", "--porcelain", "--untracked-files=normal", "--", "ghstate")
    except (OSError, subprocess.CalledProcessError):
        return str(root)
    return f"{root} at {commit}" + (" + uncommitted changes in ghstate/" if dirty else "")


def table(roots: list[Path], modules: Iterable[str] = MODULES) -> str:
    """The shape of ``modules`` in each checkout: one column block per checkout, cells "a → b → …"."""
    modules = list(modules)
    rows: list[tuple[str, ...]] = [HEADINGS]
    per_root = [[shape(root / m) for m in modules] for root in roots]
    for i, module in enumerate(modules):
        columns = zip(*(_cells(shapes[i]) for shapes in per_root), strict=True)
        rows.append((module, *(" → ".join(c) for c in columns)))
    totals = zip(*(_total(shapes) for shapes in per_root), strict=True)
    rows.append(("total", *(" → ".join(c) for c in totals)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADINGS))]
    numeric = {1, 2, 6, 7, 8}

    def line(row: tuple[str, ...]) -> str:
        cells = enumerate(zip(row, widths, strict=True))
        return "  ".join(c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in cells).rstrip()

    head = [("before" if len(roots) == 2 and k == 0 else "after" if len(roots) == 2 else "checkout") + ": "
            + _described(r) for k, r in enumerate(roots)]
    rule = "  ".join("-" * w for w in widths)
    body = [line(rows[0]), rule, *(line(r) for r in rows[1:-1]), rule, line(rows[-1])]
    notes = [f"lines: a function's, from its def line to its last; branches: as ruff's PLR0912 counts them; "
             f"decisions: its cyclomatic complexity less one, and/or included (see {Path(__file__).name}); "
             f"{MISSING}: no such module"]
    return "\n".join([*head, "", *body, "", *notes]) + "\n"


def main(argv: list[str]) -> int:
    roots = [Path(a).resolve() for a in argv] or [Path(__file__).resolve().parents[1]]
    for root in roots:
        if not (root / "ghstate").is_dir():
            print(f"shape.py: {root} is not a ghstate checkout (no ghstate/ in it)", file=sys.stderr)
            return 2
    sys.stdout.write(table(roots))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
