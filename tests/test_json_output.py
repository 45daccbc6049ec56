"""``gh`` habits for JSON: ``--json`` alone (every field) or ``--json FIELD,…`` (those), ``--jq EXPR`` to
filter it, on every command that prints JSON, done once in ``ghstate.commands.json_output``."""

from __future__ import annotations

import json

import click
import pytest
from conftest import SAMPLE

from ghstate.cli import COMMANDS, cli
from ghstate.commands.json_output import JSON_FIELDS, json_fields

PLAN = ("## Goal\nShip the parser.\n\n## Current status\n- [x] Phase 1: parser\n- [ ] Phase 2: matcher\n"
        "- [ ] Phase 3: config (after Phase 2)\n\n## Resume instruction\nStart at Phase 2.\n")
PRINTS_JSON = ("checkpoint", "resume", "show", "list", "log", "lint", "parse", "close", "push", "board", "ready",
               "doctor", "split", "claim", "release", "done")


def command(name: str) -> click.Command:
    return cli.get_command(click.Context(cli), name)


@pytest.fixture
def one(repo, run, sample_file):
    run("checkpoint", "--file", str(sample_file), "--title", "CLI refactor")
    return repo


@pytest.mark.parametrize("name", PRINTS_JSON)
def test_every_command_that_prints_json_takes_a_field_list_and_jq(name):
    options = {opt: p for p in command(name).params if isinstance(p, click.Option) for opt in p.opts}
    assert "--json" in options and "--jq" in options, f"ghstate {name}"
    assert options["--json"].metavar == "[FIELD,…]" and json_fields(name)
    assert set(json_fields(name)) == set(dict.fromkeys(json_fields(name)))  # no field twice


def test_the_commands_that_print_json_are_all_named_here():
    takes = {name for name in COMMANDS if any("--jq" in getattr(p, "opts", ()) for p in command(name).params)}
    assert takes == set(PRINTS_JSON)


@pytest.mark.parametrize(("args", "fields"), [
    (("list",), ("issue", "next_phase")),
    (("show", "1"), ("goal", "next_phase", "children")),  # children: a field it has only for a parent: null
    (("resume", "1"), ("next_phase", "fit")),
    (("log", "1"), ("revision", "event")),
    (("lint", "1"), ("errors", "warnings")),
    (("checkpoint", "--risk", "slow", "--dry-run"), ("result", "risks")),
    (("doctor",), ("check", "ok")),
])
def test_json_with_fields_prints_only_those_top_level_fields(one, run, args, fields):
    everything = json.loads(run(*args, "--json").stdout)
    chosen = json.loads(run(*args, "--json", ",".join(fields)).stdout)
    if isinstance(everything, list):
        assert chosen == [{f: row.get(f) for f in fields} for row in everything] and chosen
    else:
        assert list(chosen) == list(fields) and chosen == {f: everything.get(f) for f in fields}


def test_parse_takes_the_field_list_and_jq_too(one, run):
    assert json.loads(run("parse", ".git/ghstate/1.md", "--json", "goal").stdout) == {
        "goal": "Refactor the CLI parser to required options with strict matching."}
    assert run("parse", ".git/ghstate/1.md", "--jq", ".next_phase").stdout == "Phase 2: matcher abstraction\n"


def test_an_unknown_field_is_a_usage_error_naming_the_fields_and_nothing_is_written(one, run):
    before = (one / ".git" / "ghstate" / "1.md").read_text()
    result = run("checkpoint", "--risk", "new", "--json", "result,isue", code=2)
    assert "Invalid value for '--json': unknown field 'isue'; available fields: result, schema, title, issue" \
        in result.stderr
    assert (one / ".git" / "ghstate" / "1.md").read_text() == before
    result = run("list", "--json", "numbr", code=2)
    assert result.stderr.splitlines()[-1] == ("Error: Invalid value for '--json': unknown field 'numbr'; available "
                                              f"fields: {', '.join(JSON_FIELDS['list'])}")


def test_jq_filters_the_json_as_gh_prints_it(one, run):
    """Strings as their text, null as an empty line, numbers and booleans as JSON, objects and arrays as
    compact JSON when stdout is not a terminal; --jq alone is --json."""
    assert run("list", "--jq", ".[].title").stdout == "CLI refactor\n"
    assert run("show", "1", "--jq", ".phases[] | .name").stdout.splitlines() == [
        "Phase 1: parser changes", "Phase 2: matcher abstraction", "Phase 3: wire config"]
    assert run("show", "1", "--jq", ".issue, .verification, .phases[0].done").stdout == "1\n\ntrue\n"
    assert run("show", "1", "--jq", ".phases[0].steps[0]").stdout == '{"name": "add parser opts", "done": true}\n'
    assert run("resume", "--jq", ".next_phase").stdout == "Phase 2: matcher abstraction\n"  # --format json
    assert run("resume", "--format", "json", "--jq", ".issue").stdout == "1\n"
    # --json FIELD,… first, then --jq, as gh applies them
    assert run("list", "--json", "issue,title", "--jq", ".[0] | keys").stdout == '["issue", "title"]\n'


def test_a_bad_jq_expression_is_a_usage_error_before_anything_is_written(one, run):
    before = (one / ".git" / "ghstate" / "1.md").read_text()
    result = run("checkpoint", "--risk", "new", "--jq", ".[", code=2)
    assert "Invalid value for --jq: jq: error: syntax error" in result.stderr
    assert (one / ".git" / "ghstate" / "1.md").read_text() == before
    result = run("show", "1", "--jq", ".goal.x", code=1)  # a run-time error: the one Error line
    assert result.stderr == 'Error: --jq: Cannot index string with string ("x")\n'


def test_json_before_an_argument_is_json_alone(one, run):
    """click would take the argument after --json for its value: an issue number, a path or '-' is not a
    field list, so it stays the command's argument."""
    assert json.loads(run("show", "--json", "1").stdout)["issue"] == 1
    assert json.loads(run("show", "--json", "#1").stdout)["issue"] == 1
    assert json.loads(run("lint", "--json", "-", input=SAMPLE).stdout)["errors"] == 0
    assert json.loads(run("lint", "--json", ".git/ghstate/1.md").stdout)["source"] == ".git/ghstate/1.md"
    assert json.loads(run("show", "--json", "goal", "1").stdout) == {"goal": SAMPLE.split("\n")[1]}


def test_the_declared_fields_are_the_fields_each_command_prints(one, run, tmp_path):
    """What --json FIELD,… accepts is what --json alone prints (a new field of a command's JSON is named in
    ``JSON_FIELDS`` or the state's FIELDS, or this fails)."""
    from ghstate.services.kept import Pushed

    (tmp_path / "plan.md").write_text(PLAN)
    run("checkpoint", "--file", str(tmp_path / "plan.md"), "--new", "--agent", "a", "--role", "editor",
        "--session", "s")
    split = json.loads(run("split", "2", "--json").stdout)
    claimed = json.loads(run("claim", "3", "--agent", "a", "--json").stdout)
    released = json.loads(run("release", "3", "--agent", "a", "--json").stdout)
    run("claim", "3", "--agent", "a")
    done = json.loads(run("done", "3", "--agent", "a", "--claim-next", "--json").stdout)
    printed = {
        "checkpoint": [json.loads(run("checkpoint", "1", "--risk", "r", "--json").stdout)],
        "show": [json.loads(run("show", str(n), "--json").stdout) for n in (1, 2, 3)],
        "resume": [json.loads(run("resume", str(n), "--json").stdout) for n in (1, 2, 3)],
        "parse": [json.loads(run("parse", ".git/ghstate/1.md").stdout)],
        "list": json.loads(run("list", "--json").stdout),
        "log": json.loads(run("log", "2", "--json").stdout),
        "lint": [json.loads(run("lint", "1", "--json").stdout)],
        "ready": json.loads(run("ready", "--json").stdout),
        "doctor": json.loads(run("doctor", "--json").stdout),
        "close": [json.loads(run("close", "1", "--json").stdout)],
        "push": [Pushed("f", "t", "created").data()],
        "split": [split], "claim": [claimed], "release": [released], "done": [done],
    }
    for name, rows in printed.items():
        assert rows, name
        keys = {key for row in rows for key in row}
        assert keys <= set(json_fields(name)), (name, keys - set(json_fields(name)))
    assert {"parent", "children", "provenance"} <= {k for row in printed["show"] for k in row}
    assert set(printed["log"][0]) == set(JSON_FIELDS["log"]) - {"author"}  # author: a GitHub login
    for name in ("split", "claim", "release", "done"):  # each prints every field it names
        assert list(printed[name][0]) == list(JSON_FIELDS[name]), name


def test_every_key_a_state_printing_command_prints_is_one_a_state_read_back_takes():
    """`show --json | jq … | checkpoint --file -` works as it stands: a key show, resume, checkpoint or parse
    may print is no unknown key to a state read back (which refuses those, issue 48)."""
    from ghstate.core.state_json import check_keys

    for name in ("show", "resume", "checkpoint", "parse"):
        check_keys(dict.fromkeys(json_fields(name)))
