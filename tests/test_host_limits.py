"""The prompt reaches the model whole in every host (issue 55): one table of what each host takes (core/limits), the
fitter measuring as each host measures, the set-up asking Codex for the limit the prompt is fitted to, the MCP
resume tool's answer fitted to its host, and nothing changed for a checkpoint that fits every host. The hosts
themselves judge it in test_hosts_context_real.py."""

from __future__ import annotations

import json

import pytest
from conftest import SAMPLE
from large_task import sized_task_body

from ghstate.agents import hosts
from ghstate.core import fit, limits


def test_codex_counts_the_larger_of_a_quarter_of_the_bytes_and_the_words_and_marks():
    assert limits.codex_tokens("abcd " * 100) == 125  # 500 bytes / 4; 100 words of one token
    assert limits.codex_tokens(". " * 100) == 100  # 200 bytes: 50 by bytes, 100 marks by words
    assert limits.codex_tokens("déjà vu") == 3  # 9 bytes, ceil(9 / 4); "déjà" (6 bytes) 2 + "vu" 1 = 3
    assert limits.codex_tokens("") == 0


def test_claude_code_and_gemini_cli_count_as_javascript_does():
    assert limits.utf16_units("a\U0001f600b") == 4 and limits.characters("a\U0001f600b") == 3


def test_one_table_with_each_hosts_limits_units_and_sources():
    for agent, known in limits.HOSTS.items():
        assert known.agent == agent
        for limit in (known.hook, known.mcp):
            assert limit.size > 0 and limit.unit in ("characters", "tokens") and known.name in limit.source
    assert [a for a, k in limits.HOSTS.items() if k.hook.asked] == ["codex"]  # only Codex lets a hook raise it
    assert limits.of("cursor") is None


def test_what_init_and_the_plugin_ask_codex_for_is_what_the_prompt_is_fitted_to():
    session_start = next(h for h in hosts.CODEX_HOOKS if h.sub == "session-start")
    assert session_start.extra["additionalContextLimit"] == limits.HOSTS["codex"].hook.size == 8_000
    assert fit.host_budget("codex")[:2] == (8_000, "tokens")
    assert 0 < session_start.extra["additionalContextLimit"]  # never 0: Codex reads 0 as no limit at all


def test_a_configured_prompt_budget_under_a_hosts_limit_is_kept_in_characters():
    budget = fit.host_budget("codex", 5_000)
    assert budget[:2] == (5_000, "characters")
    assert budget.count("x" * 4_000) <= 5_000 < budget.count("x" * 5_001)
    assert fit.host_budget("codex", 50_000)[:2] == (8_000, "tokens")  # looser than Codex's: Codex's
    between = fit.host_budget("codex", 20_000)  # under 4 characters a token: both hold
    assert between.count(". " * 8_500) > 20_000  # 17,000 characters, but 8,500 of Codex's 8,000 tokens


@pytest.mark.parametrize("kilobytes", [11, 30])
@pytest.mark.parametrize("host", ["claude", "codex", "gemini"])
def test_each_hosts_hook_prompt_fits_its_limit_as_it_counts_and_says_what_it_left_out(repo, run, host, kilobytes):
    body = sized_task_body(kilobytes)
    run("checkpoint", "--file", "-", input=body)
    event = {"hook_event_name": "SessionStart", "source": "compact", "session_id": "s-1", "cwd": str(repo)}
    flags = [] if host == "claude" else ["--host", host]
    context = json.loads(run("hook", "session-start", *flags, input=json.dumps(event)).stdout)[
        "hookSpecificOutput"]["additionalContext"]
    limit = limits.HOSTS[hosts.AGENT_NAMES[host]].hook
    assert limit.count(context) <= limit.size
    whole = run("resume").stdout.rstrip("\n")
    if limit.count(whole) <= limit.size:
        assert context == whole  # it fits: nothing changes
    else:
        closing = context.splitlines()[-1]
        assert closing.startswith(f"Left out to fit {limit.size:,} {limit.unit}: ")
        assert closing.endswith("; `ghstate show 1` has all of it.")


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini-cli"])
def test_the_mcp_resume_tools_answer_fits_its_host_whole(repo, run, agent):
    from ghstate.agents.mcp_tools import call
    from ghstate.services.app import build_app

    run("checkpoint", "--file", "-", input=sized_task_body(50, risks=80))
    answer = call("resume", {}, lambda: build_app(agent=agent, store="local"))
    limit = limits.HOSTS[agent].mcp
    assert not answer.error and limit.count(answer.text) <= limit.size
    assert answer.text.rstrip().splitlines()[-1].startswith(f"Left out to fit {limit.size:,} {limit.unit}: ")
    smaller = call("resume", {"budget": 5_000}, lambda: build_app(agent=agent, store="local"))
    assert len(smaller.text) <= 5_000 + 200  # the budget given, when tighter (and the reading's line)


def test_nothing_changes_for_a_checkpoint_that_fits_every_host(repo, run):
    """The prompt bytes are the same in every host's hook, in the MCP answer and from `resume`."""
    from ghstate.agents.mcp_tools import call
    from ghstate.services.app import build_app

    run("checkpoint", "--file", "-", input=SAMPLE)
    whole = run("resume").stdout
    for n, host in enumerate(("claude", "codex", "gemini")):
        event = {"hook_event_name": "SessionStart", "source": "clear", "session_id": f"s-{n}", "cwd": str(repo)}
        flags = [] if host == "claude" else ["--host", host]
        context = json.loads(run("hook", "session-start", *flags, input=json.dumps(event)).stdout)
        assert context["hookSpecificOutput"]["additionalContext"] == whole.strip()
    for agent in ("claude-code", "codex", "gemini-cli", "cursor"):
        assert call("resume", {}, lambda a=agent: build_app(agent=a, store="local")).text == whole
    assert "Left out" not in whole
