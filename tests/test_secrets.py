"""The credential scan: what it must catch, what it must let through, and what a report shows."""

from __future__ import annotations

import pytest

from ghstate.core.secrets import new_lines, redact, scan

FAKE = "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7d"  # 36 characters of token alphabet, made up

CAUGHT = [
    (f"token ghp_{FAKE}", "a GitHub token"),
    (f"github_pat_{FAKE}_{FAKE}", "a GitHub token"),
    ("key AKIAIOSFODNN7EXAMPLE in the config", "an AWS access key id"),
    ("-----BEGIN RSA PRIVATE KEY-----", "a private key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "a private key"),
    ("xoxb-123456789012-abcdefghijkl", "a Slack token"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "a JSON web token"),
    (f"Authorization: Bearer {FAKE}", "a bearer token"),
    (f"OPENAI key sk-proj-{FAKE}", "an API key"),
    ("clone https://deploy:s3cretVa1ue@git.example.com/repo.git", "a password in a URL"),
    ("password = hunter2hunter2", "a credential assigned to 'password'"),
    ('DB_PASSWORD: "correct-horse-battery"', "a credential assigned to 'DB_PASSWORD'"),
    (f"api_key={FAKE}", "a credential assigned to 'api_key'"),
]

ALLOWED = [
    "password = <your password>",
    "password: ${DB_PASSWORD}",
    "token = os.environ['GH_TOKEN']",
    "api_key = changeme",
    "set GH_TOKEN (or GITHUB_TOKEN) and -R OWNER/NAME",
    "commit 4f2c1e9aa1b2c3d4e5f60718293a4b5c6d7e8f90 fixed the parser",
    "the token: refresh it before the call",
    "https://github.com/octo/hello/issues/24",
    "secret = password",
    "api_key = required",
    "Phase 2: matcher abstraction (sk- prefixes are OpenAI's)",
]


@pytest.mark.parametrize("line, kind", CAUGHT)
def test_credentials_are_caught_and_reported_without_the_value(line, kind):
    [found] = scan(line)
    assert found.kind == kind and found.line == 1
    report = found.describe()
    assert report.startswith("line 1 looks like " + kind)
    value = line.split()[-1] if kind != "a password in a URL" else "s3cretVa1ue"
    if len(value) > 8:
        assert value not in report  # the report cuts the value short


@pytest.mark.parametrize("line", ALLOWED)
def test_placeholders_prose_and_commit_ids_pass(line):
    assert scan(line) == []


def test_lines_are_numbered_and_only_new_lines_are_scanned():
    before = "## Notes\npassword = hunter2hunter2\n"
    after = before + f"- new: token ghp_{FAKE}\n"
    found = scan(new_lines(before, after))
    assert [(s.line, s.kind) for s in found] == [(3, "a GitHub token")]


def test_redact_cuts_every_value_and_keeps_the_rest():
    text = f"E   assert token == 'ghp_{FAKE}'\nplain line\npassword = hunter2hunter2"
    out = redact(text)
    assert FAKE not in out and "hunter2hunter2" not in out and "plain line" in out
    assert out == "E   assert token == 'ghp_…'\nplain line\npassword = hunt…" and scan(out) == []
