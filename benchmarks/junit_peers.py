"""How ghstate counts other readers' own JUnit fixtures, against what those readers expect of them.

Give it the folders of fetched snapshots of the readers' repositories (a checkout, or a bare git
folder: files are read from its HEAD); each is recognised by its layout:

- dorny/test-reporter: ``__tests__/__outputs__/*.md``, the report each fixture renders to (passed,
  failed, skipped);
- mikepenz/action-junit-report: ``__tests__/testParser.test.ts``, the counts its tests assert for
  each fixture, with the options they pass (``check_retries`` becomes ``--retries``);
- EnricoMi/publish-unit-test-result-action: ``python/test/files/**/*.results``, the test cases its
  parser reads from each fixture (converted formats through their ``.junit-xml``), each with a result;
- jenkinsci/junit-plugin: ``TestResultTest.java``'s total and failed counts of single reports.

For each fixture it prints whether ghstate's counts (tests, failed = failures + errors, skipped)
agree with every figure the reader's expectation states, then the tally. Snapshots that are absent
are skipped with a word. Known conventions that differ are marked ``convention`` with their reason
(docs/ci-reports.md); anything else that differs is ``DISAGREES``, and the exit status is 1.

    python benchmarks/junit_peers.py SNAPSHOT...   (e.g. the folders `git clone --bare` made)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ghstate.ci.junit import JUnitError, count, parse_report  # noqa: E402

# (peer, fixture) whose difference is a convention of that reader, not a reading of the report: why
WEB_TEST = ("not well-formed XML (time=\"<<computed>>\": a template of an expected report, with a raw < in an "
            "attribute): ghstate's XML parser refuses it, with a warning; mikepenz's xml-js reads it leniently")
CONVENTIONS = {
    ("EnricoMi", "python/test/files/junit-xml/no-cases-but-tests.xml"):
        "no <testcase>: EnricoMi takes the suite's summary attributes; ghstate counts test cases only",
    ("mikepenz", "test_results/issues/testFailedDisabled.xml (check_retries)"):
        "status=\"disabled\" beside a <failure>: mikepenz counts it skipped; EnricoMi and ghstate failed",
    ("mikepenz", "test_results/junit-web-test/expected.xml"): WEB_TEST,
    ("mikepenz", "test_results/junit-web-test/expectedRetries.xml"): WEB_TEST,
    ("mikepenz", "test_results/junit-web-test/expectedRetries.xml (check_retries)"): WEB_TEST,
}


class Expectation(NamedTuple):
    peer: str
    fixture: str  # the path in the peer's repository (or a glob of paths)
    files: tuple[str, ...]
    expected: dict[str, int]  # the figures the peer states: some of tests, failed, skipped; {} = refused
    retries: bool = False
    note: str = ""  # said beside the verdict, not judged


class Snapshot:
    """A fetched repository: a work tree, or a bare git folder read at HEAD."""

    def __init__(self, root: Path):
        self.root = root
        self.bare = not (root / ".git").exists() and (root / "HEAD").is_file()

    def files(self, prefix: str) -> list[str]:
        if self.bare:
            out = subprocess.run(["git", "--git-dir", str(self.root), "ls-tree", "-r", "--name-only", "HEAD", "--",
                                  prefix], capture_output=True, text=True, check=False).stdout
            return out.splitlines()
        base = self.root / prefix
        return sorted(str(p.relative_to(self.root)) for p in base.rglob("*") if p.is_file()) if base.exists() else []

    def read(self, path: str) -> bytes | None:
        if self.bare:
            done = subprocess.run(["git", "--git-dir", str(self.root), "show", f"HEAD:{path}"], capture_output=True,
                                  check=False)
            return done.stdout if done.returncode == 0 else None
        full = self.root / path
        return full.read_bytes() if full.is_file() else None

    def text(self, path: str) -> str:
        return (self.read(path) or b"").decode("utf-8", "replace")


# ------------------------------------------------------------------------------------- the peers


def dorny(snap: Snapshot) -> list[Expectation]:
    """The report each fixture renders to (``__outputs__``), and the counts its tests assert."""
    stated: dict[str, dict[str, int]] = {}
    for output in snap.files("__tests__/__outputs__"):
        row = re.search(r"^\|\[([^\]]+)\]\([^)]*\)\|([^|]*)\|([^|]*)\|([^|]*)\|", snap.text(output), re.M)
        if row:
            passed, failed, skipped = (int(re.sub(r"\D", "", cell) or 0) for cell in row.groups()[1:])
            stated.setdefault(f"__tests__/{row.group(1)}", {}).update(
                {"tests": passed + failed + skipped, "failed": failed, "skipped": skipped})
    for test in snap.files("__tests__"):
        if not test.endswith(".test.ts"):
            continue
        for block in _blocks(snap.text(test)):
            where = re.search(r"path\.join\(__dirname, ((?:'[^']+'(?:, )?)+)\)", block)
            counts = dict(re.findall(r"expect\(result\.(tests|failed|skipped)\)\.toBe\((\d+)\)", block))
            if where and counts:
                fixture = "__tests__/" + "/".join(re.findall(r"'([^']+)'", where.group(1)))
                stated.setdefault(fixture, {}).update({k: int(v) for k, v in counts.items()})
    return [Expectation("dorny", fixture, (fixture,), expected) for fixture, expected in stated.items()
            if fixture.endswith(".xml") and _is_junit(snap.read(fixture))]  # not NUnit and the like


def _blocks(source: str) -> list[str]:
    """The ``it(…)`` blocks of a jest test file."""
    starts = [m.start() for m in re.finditer(r"^\s*it\(", source, re.M)]
    return [source[a:b] for a, b in zip(starts, [*starts[1:], len(source)], strict=True)]


def _arguments(call: str) -> list[str]:
    """The top-level arguments of the call whose text starts right after its ``(``."""
    args, depth, current, quote = [], 0, "", ""
    for ch in call:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(current.strip())
            current = ""
            continue
        current += ch
    return [*args, current.strip()] if current.strip() else args


def mikepenz(snap: Snapshot) -> list[Expectation]:
    found: dict[tuple[str, bool], Expectation] = {}
    for block in _blocks(snap.text("__tests__/testParser.test.ts")):
        call = re.search(r"\b(parseFile|parseTestReports)\(", block)
        if not call:
            continue
        args = _arguments(re.sub(r"//[^\n]*", "", block[call.end():]))
        if call.group(1) == "parseFile":
            pattern, retries, limited = args[0], len(args) > 4 and args[4] == "true", len(args) > 11
        else:
            pattern, retries, limited = args[2], len(args) > 6 and args[6] == "true", False
        if limited or not pattern.startswith("'"):
            continue  # an annotations limit stops counting; a computed path is not a fixture
        pattern = pattern.strip("'")
        expected = {}
        for name, key in (("totalCount", "tests"), ("skippedCount", "skipped"), ("skipped", "skipped"),
                          ("failedCount", "failed"), ("failed", "failed")):
            stated = re.search(rf"expect\({name}\)\.toBe\((\d+)\)", block) or re.search(rf"\b{name}: (\d+),", block)
            if stated:
                expected[key] = int(stated.group(1))
        files = tuple(f for f in snap.files("test_results") if _glob_match(pattern, f))
        if expected and files and (pattern, retries) not in found:
            found[(pattern, retries)] = Expectation("mikepenz", pattern + (" (check_retries)" if retries else ""),
                                                    files, expected, retries)
    return list(found.values())


def _glob_match(pattern: str, path: str) -> bool:
    regex = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*", "[^/]*")
    return re.fullmatch(regex, path) is not None


def enricomi(snap: Snapshot) -> list[Expectation]:
    """The test cases its parser reads from each fixture (``.results``), each with a result; where it
    lists none, the figures it publishes (``.results.json``: then its suites' summary attributes)."""
    found = []
    for results in snap.files("python/test/files"):
        if not results.endswith(".results"):
            continue
        stem = results.removesuffix(".results")
        fixture = f"{stem}.xml" if "/junit-xml/" in stem else f"{stem}.junit-xml"
        if snap.read(fixture) is None:
            continue
        text = snap.text(results)
        if "ParseError(" in text and "cases=[]" in text:
            found.append(Expectation("EnricoMi", fixture, (fixture,), {}))
            continue
        outcomes = re.findall(r"^\s+result='(\w+)',$", text, re.M)
        expected = {"tests": len(outcomes), "failed": sum(o in ("failure", "error") for o in outcomes),
                    "skipped": sum(o in ("skipped", "disabled") for o in outcomes)}
        published = json.loads(snap.read(f"{stem}.results.json") or b"{}").get("stats")
        if not outcomes and published:
            expected = {"tests": published["tests"], "failed": published["tests_fail"] + published["tests_error"],
                        "skipped": published["tests_skip"]}
        found.append(Expectation("EnricoMi", fixture, (fixture,), expected, note=_deduplicated(published, expected)))
    return found


def _deduplicated(published: dict | None, cases: dict[str, int]) -> str:
    """EnricoMi's headline ``tests`` counts distinct class and test names: say where that differs."""
    if published and published["tests"] != cases["tests"]:
        return f"(its headline: {published['tests']} distinct names of {cases['tests']} test cases)"
    return ""


JENKINS_TESTS = "src/test/java/hudson/tasks/junit"
JENKINS_DATA = "src/test/resources/hudson/tasks/junit"


def jenkins(snap: Snapshot) -> list[Expectation]:
    """Counts that TestResultTest asserts of the reports a test parses (by name, or through a directory
    scanner), and SuiteResultTest's number of test cases of one report."""
    found = []
    methods = [(m, r"testResult\.parse\(getDataFile\(\"([^\"]+)\"\)", r"testResult\.")
               for m in re.split(r"\n\s*@Test\b", snap.text(f"{JENKINS_TESTS}/TestResultTest.java"))[1:]]
    methods += [(m, r"parseOne\(getDataFile\(\"([^\"]+)\"\)\)", r"\w+\.")
                for m in re.split(r"\n\s*@Test\b", snap.text(f"{JENKINS_TESTS}/SuiteResultTest.java"))[1:]]
    for method, parse, subject in methods:
        files = tuple(f"{JENKINS_DATA}/{name}" for name in re.findall(parse, method)) or _scanned(snap, method)
        expected = {}
        for name, key in (("getTotalCount\\(\\)", "tests"), ("getCases\\(\\)\\.size\\(\\)", "tests"),
                          ("getFailCount\\(\\)", "failed"), ("getSkipCount\\(\\)", "skipped")):
            stated = re.findall(rf"assertEquals\((\d+), {subject}{name}", method)
            if len(stated) == 1:  # asserted once: not a figure that changes within the test
                expected[key] = int(stated[0])
        if files and expected and all(_is_junit(snap.read(f)) for f in files):
            found.append(Expectation("jenkins", " + ".join(files), files, expected))
    return found


def _scanned(snap: Snapshot, method: str) -> tuple[str, ...]:
    """The reports a test hands to TestResult through a DirectoryScanner (its base folder and one include
    pattern), unless it sets files' times: which of them Jenkins then reads depends on the clock."""
    base = re.search(r'setBasedir\(new File\("([^"]+?)/?"\)\)', method)
    include = re.search(r'setIncludes\(new String\[\] \{"([^"]+)"\}\)', method)
    if not (base and include) or "setLastModifiedTime" in method:
        return ()
    return tuple(f for f in snap.files(base.group(1)) if f.rpartition("/")[0] == base.group(1)
                 and _glob_match(f"{base.group(1)}/{include.group(1)}", f))


PEERS = {"__tests__/__outputs__": dorny, "__tests__/testParser.test.ts": mikepenz,
         "python/test/files": enricomi, f"{JENKINS_TESTS}/TestResultTest.java": jenkins}


def _is_junit(data: bytes | None) -> bool:
    if not data:
        return False
    head = re.sub(rb"<\?.*?\?>|<!--.*?-->|\s", b"", data.removeprefix(b"\xef\xbb\xbf")[:4000], flags=re.S)
    return head.startswith((b"<testsuites", b"<testsuite", b"<testcase"))


# ------------------------------------------------------------------------------------- the judging


def ghstate_counts(snap: Snapshot, expectation: Expectation) -> tuple[dict[str, int], int]:
    """ghstate's figures for the fixture's files, and how many of them it refuses (``ghstate ci``
    warns of those and counts nothing from them)."""
    cases, refused = [], 0
    for path in expectation.files:
        try:
            cases.extend(parse_report(snap.read(path) or b"", path).cases)
        except JUnitError:
            refused += 1
    counted = count(cases, expectation.retries)
    return {"tests": counted["tests"], "failed": counted["failed"] + counted["errors"],
            "skipped": counted["skipped"]}, refused


def judge(snap: Snapshot, expectation: Expectation) -> tuple[str, str]:
    ours, refused = ghstate_counts(snap, expectation)
    if not expectation.expected:
        return ("agrees", "both refuse it") if refused else ("DISAGREES", f"the peer refuses it; ghstate {ours}")
    differ = {k: (v, ours[k]) for k, v in expectation.expected.items() if ours[k] != v}
    if not differ:
        said = ", ".join(f"{k} {v}" for k, v in expectation.expected.items())
        return "agrees", " ".join(x for x in (said, "(refused by both: nothing counted)" * bool(refused),
                                              expectation.note) if x)
    said = ", ".join(f"{k}: peer {a}, ghstate {b}" for k, (a, b) in differ.items())
    if refused:
        said += " (ghstate refuses the report)"
    reason = CONVENTIONS.get((expectation.peer, expectation.fixture))
    return ("convention", f"{said}: {reason}") if reason else ("DISAGREES", said)


def main(argv: list[str]) -> int:
    roots = [Path(a) for a in argv]
    tally = {"agrees": 0, "convention": 0, "DISAGREES": 0}
    for root in roots:
        snap = Snapshot(root)
        readers = [reader for marker, reader in PEERS.items() if snap.read(marker) is not None or snap.files(marker)]
        if not root.exists() or not readers:
            print(f"skipped {root}: not a snapshot of a reader this script knows", file=sys.stderr)
            continue
        for expectation in (e for reader in readers for e in reader(snap)):
            verdict, how = judge(snap, expectation)
            tally[verdict] += 1
            print(f"{verdict:10} {expectation.peer:9} {expectation.fixture}: {how}")
    total = sum(tally.values())
    if not total:
        print("no snapshot of a known reader given; nothing compared", file=sys.stderr)
        return 0
    print(json.dumps({"fixtures": total, **tally}))
    print(f"{tally['agrees']} of {total} agree; {tally['convention']} differ by a documented convention; "
          f"{tally['DISAGREES']} disagree")
    return 1 if tally["DISAGREES"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
