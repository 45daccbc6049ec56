"""Each claim docs/github.md makes about the write log is held by a test: the claim's words are in the page,
and the tests that hold it exist (a claim whose test was renamed or removed, or a test whose claim was
rewritten, fails here). Which tests: this table, kept beside the page."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "github.md").read_text(encoding="utf-8")

CLAIMS = {
    "A write that reports success is on the chain": [
        "test_write_log.py::test_of_two_writers_that_read_one_head_one_moves_it_and_the_other_builds_on_it",
        "test_write_log.py::test_writers_sharing_a_token_and_a_person_lose_nothing_whatever_github_keeps",
        "test_concurrent_writers.py::test_twenty_writers_on_four_machines_ci_and_two_people_lose_nothing",
        "test_interleavings.py::test_no_reported_write_is_lost_in_any_interleaving"],
    "A write is never applied twice": [
        "test_write_log.py::test_a_landed_update_whose_answer_was_lost_is_never_applied_again",
        "test_write_log.py::test_a_lost_answer_on_each_request_of_a_write_loses_nothing_and_doubles_nothing",
        "test_write_log.py::test_a_kept_write_that_landed_after_all_is_not_made_again"],
    "Later values stand": [
        "test_write_log.py::test_chain_order_decides_never_a_writers_clock",
        "test_writer.py::test_of_two_ci_results_at_once_the_later_on_the_chain_stands"],
    "A person's edit stands": [
        "test_write_log.py::test_what_a_person_deletes_stays_deleted",
        "test_write_log.py::test_a_save_without_the_marker_line_from_an_older_page_keeps_the_writes_since",
        "test_write_log.py::test_a_persons_save_between_a_writes_read_and_its_mirror_is_merged_as_theirs",
        "test_write_log.py::test_two_peoples_saves_read_by_a_plain_read_are_each_their_own_entry_and_credited",
        "test_local_chain.py::test_a_persons_edit_of_the_file_is_merged_as_theirs"],
    "A person's deletion stands": [
        "test_write_log.py::test_a_persons_later_save_undoes_their_earlier_one",
        "test_write_log.py::test_two_people_editing_the_resume_instruction_in_turn_is_no_concurrent_edit",
        "test_write_log.py::test_saves_in_turn_a_writes_mirror_replaced_are_merged_each_on_the_one_before"],
    "The body converges": [
        "test_interleavings.py::test_no_reported_write_is_lost_in_any_interleaving",
        "test_write_log.py::test_an_older_mirror_landing_after_a_newer_one_is_repaired_never_read_as_an_edit"],
    "The bound holds as stored": [
        "test_write_log.py::test_a_write_near_the_size_bound_survives_a_stale_page",
        "test_github_store.py::test_body_over_the_limit_is_refused_before_any_write"],
    "`ghstate push` publishes the kept writes": [
        "test_write_log.py::test_push_rebases_a_kept_write_what_came_after_its_base_stands_and_its_value_is_beside"],
    "GitHub is the record, this is a copy that stands in for it": [
        "test_outage.py::test_github_answering_is_trusted_over_this_machines_copy"],
    "A reader that falls back starts its answer with one line": [
        "test_outage.py::test_without_github_resume_the_hook_and_show_give_the_checkpoint_as_last_seen_with_kept_writes",
        "test_outage.py::test_the_mcp_resume_tool_falls_back_too"],
    "The hook falls back within its own budget": [
        "test_outage.py::test_the_hook_without_github_keeps_its_budget",
        "test_outage.py::test_resume_without_github_gives_up_within_15_seconds"],
    "A write to a checkpoint never lands over a kept write": [
        "test_outage.py::test_a_write_never_lands_over_a_kept_write_it_sends_it_first_in_order",
        "test_outage.py::test_when_github_is_back_resume_sends_the_kept_write_first",
        "test_outage.py::test_the_hook_sends_kept_writes_within_its_budget_else_says_how_many_wait"],
    "made on the head this machine last saw": [
        "test_outage.py::test_a_write_kept_without_any_read_is_built_on_the_head_this_machine_saw_not_on_clocks"],
    "decided by the chain, never by the writers' clocks": [
        "test_kept_writes.py::test_a_kept_write_is_decided_by_the_chain_never_by_the_writers_clocks",
        "test_write_log.py::test_a_write_kept_without_a_read_is_rebased_from_the_head_this_machine_saw"],
    "Checked before it is kept; set aside when refused for good": [
        "test_kept_writes.py::test_a_write_kept_without_github_is_checked_as_online_and_a_credential_is_never_kept",
        "test_kept_writes.py::test_a_kept_write_github_refuses_for_good_is_set_aside_said_and_holds_nothing_back"],
    "Without Contents: write": [
        "test_write_log.py::test_a_token_without_contents_write_still_writes_the_body_and_says_so_once",
        "test_write_log.py::test_a_body_written_without_the_chain_is_merged_into_it_as_an_edit",
        "test_write_log.py::test_a_github_without_update_refs_still_writes_the_body",
        "test_write_log.py::test_a_token_that_cannot_read_refs_still_reads_the_body"],
    "move to a chain on their first write": [
        "test_write_log.py::test_a_checkpoint_of_the_edit_history_log_moves_on_its_first_write",
        "test_local_chain.py::test_a_checkpoint_of_the_log_before_chains_keeps_its_history"],
    "the chain keeps writers apart wherever the folder is shared": [
        "test_local_chain.py::test_two_writers_on_a_shared_folder_both_land_one_generation_each",
        "test_local_chain.py::test_a_generation_once_made_is_never_made_again"],
    "An update takes **3** by number": [
        "test_github_store.py::test_update_by_number_costs_three_requests_and_notifies_no_one"],
    "**4** by branch": ["test_github_store.py::test_update_by_branch_costs_four_requests"],
    "A close folds the chain into `refs/ghstate/archive`": [
        "test_archive.py::test_a_hundred_made_and_ninety_closed_leave_the_refs_of_ten",
        "test_archive.py::test_two_closes_at_once_both_fold_into_the_archive"],
    "Still read whole": ["test_archive.py::test_log_and_show_of_an_archived_checkpoint_read_its_whole_history"],
    "A write that reported success is on the chain of its closed checkpoint": [
        "test_archive.py::test_a_write_whose_body_lagged_is_on_the_chain_of_its_closed_checkpoint"],
    "Reopened, its chain goes on": ["test_archive.py::test_a_reopened_checkpoint_gets_its_chain_ref_back_on_its_head"],
    "A write to a checkpoint that is still closed": [
        "test_outage.py::test_a_write_by_number_to_a_closed_checkpoint_is_said_and_its_refs_stay_folded"],
    "A branch's entry goes once its branch is gone and its checkpoint closed": [
        "test_lifecycle_github.py::test_a_branch_deleted_after_its_checkpoint_closed_takes_its_entry_with_it"],
    "A branch's checkpoint is found in **2** requests however many are open": [
        "test_branch_index.py::test_a_branch_is_found_in_two_requests_at_any_count_and_none_in_two"],
    "Checkpoints it did not make are found by search": [
        "test_branch_index.py::test_a_checkpoint_made_with_the_issue_form_after_the_index_is_found_by_its_branch",
        "test_branch_index.py::test_an_older_ghstates_checkpoint_without_an_entry_is_found_after_the_flag",
        "test_branch_index.py::test_a_thousand_checkpoints_the_index_does_not_hold_cost_the_same_as_ten"],
    "checked on your GitHub by `ghstate doctor --github`": [
        "test_doctor.py::test_every_behaviour_holds_on_a_faithful_github_and_the_probe_cleans_up",
        "test_doctor.py::test_what_github_leaves_open_fails_no_row_and_each_row_says_what_it_saw"],
}


def _tests(file: str) -> set[str]:
    tree = ast.parse((ROOT / "tests" / file).read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_each_claim_of_the_page_is_held_by_tests_that_exist(claim):
    assert claim in PAGE, f"docs/github.md no longer says {claim!r}: update the table"
    for held in CLAIMS[claim]:
        file, name = held.split("::")
        assert name in _tests(file), f"{held} holds {claim!r} and is not there"


# ------------------------------------------------------------------------ the cost tables, measured
# Each row of docs/github.md's "What a command costs" and docs/action.md's "What a result costs" is run
# against the fake GitHub, its requests counted, and compared with the figure the row states: a count that
# goes stale fails here. A row is named by its first cell (rename a row here when its words change).

ACTION = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")


def table(page: str, heading: str) -> dict[str, str]:
    """The first table after ``heading`` (a heading, or the table's own header row): first cell → second."""
    lines = page.split(heading, 1)[1].splitlines()[1:]
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    block = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        block.append([c.strip() for c in line.strip().strip("|").split("|")])
    rows = [cells for cells in block if not set("".join(cells)) <= {"-", " "}]
    if not heading.startswith("|"):
        rows = rows[1:]  # its header
    return {cells[0]: cells[1] for cells in rows}


def figure(cell: str) -> int:
    return int(cell.lstrip("+").split()[0])


def requests(gh, run, *args, env=None, code=0) -> int:
    before = len(gh.calls)
    run(*args, env=env, code=code)
    return len(gh.calls) - before


def measured_commands(gh, run, sample_file, repo) -> dict[str, list[int]]:
    """Each row of docs/github.md's table, run on a repository that never had a checkpoint nor a chain (the
    first update writes the tree), in the order a person would."""
    from conftest import git

    first = requests(gh, run, "checkpoint", "--file", str(sample_file))
    created = requests(gh, run, "checkpoint", "--new", "--file", str(sample_file))  # #2, the branch's now
    requests(gh, run, "checkpoint", "1", "--risk", "the first update")
    by_number = requests(gh, run, "checkpoint", "1", "--risk", "an update by number")
    by_branch = requests(gh, run, "checkpoint", "--risk", "an update by branch")
    git(repo, "checkout", "-q", "-b", "feature/none")
    none = requests(gh, run, "resume", code=1)
    by_branch_create = requests(gh, run, "checkpoint", "--file", str(sample_file))
    gh.add_issue(len(gh.issues) + 1, "### Branch\n\nfeature/form\n\n### Goal\n\nx\n\n### Current status\n\n- [ ] "
                 "Phase 1: x\n\n### Resume instruction\n\nStart at Phase 1.", title="Checkpoint: made by a person")
    git(repo, "checkout", "-q", "-b", "feature/form")
    unindexed = requests(gh, run, "resume")
    git(repo, "checkout", "-q", "feature/x")
    return {
        "`resume N`, `show N` (by number; the hooks and the MCP `resume` tool read the same way)": [
            requests(gh, run, "resume", "1"), requests(gh, run, "show", "1")],
        "`resume` (by branch: its entry in the branch index, then the checkpoint it names)": [
            requests(gh, run, "resume")],
        "`resume` on a branch with none (its entry, none; GitHub's issue search, none)": [none],
        "`resume` on a branch whose checkpoint the branch index does not hold (made with the issue form, by a person "
        "or by an older ghstate: its entry, none; the search; the checkpoint)": [unindexed],
        "`list` (the first page: 10 open checkpoints with their bodies, no chain heads)": [requests(gh, run, "list")],
        "`checkpoint --new --file F` (a new checkpoint: its branch's entry, create, the entry's commit and ref)": [
            created],
        "`checkpoint --file F` on a branch with none (its entry, the search, create, the entry's commit and ref)": [
            by_branch_create],
        "a repository's first checkpoint (the tree ghstate's commits share, written once)": [first - by_branch_create],
        "`checkpoint N --risk R` (an update by number: read, the commit, `AppendCheckpoint`)": [by_number],
        "`checkpoint --risk R` (an update by branch: its entry, then as by number)": [by_branch],
        "`log N` (the checkpoint, then its chain)": [requests(gh, run, "log", "1")],
        "`resume N` on a body people edited since the last write (the checkpoint, its edit history: each person's "
        "save its own)": [edited_read(gh, run)],
        "`close N` (read, `closeIssue` with the state reason COMPLETED; its chain folded into the archive: what is "
        "there, the archive's commit, one `updateRefs`)": [requests(gh, run, "close", "1")],
        "`show N` of a closed checkpoint (the checkpoint, its head from the archive)": [requests(gh, run, "show", "1")],
        "`log N` of a closed checkpoint (the checkpoint, its head, its chain from the archive)": [
            requests(gh, run, "log", "1")],
    }


def edited_read(gh, run) -> int:
    """Mona, then Lisa, save the body of #1 on github.com; then it is read (and a write merges their saves)."""
    for login, item in (("mona", "- a risk\n"), ("lisa", "- another\n")):
        gh.edit(1, gh.issues[1]["body"].replace("## Remaining risks\n", "## Remaining risks\n" + item), login=login)
    measured = requests(gh, run, "resume", "1")
    run("checkpoint", "1", "--risk", "their saves merged")  # the body ghstate's again, for the rows after
    return measured


def measured_results(gh, run, sample_file, tmp_path) -> dict[str, list[int]]:
    """Each row of docs/action.md's table: CI results on a checkpoint whose chain has begun."""
    run("checkpoint", "--file", str(sample_file))
    run("checkpoint", "--risk", "its chain begins")
    (tmp_path / "out").write_text("")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "7", "GITHUB_REF_NAME": "feature/x",
           "GITHUB_SERVER_URL": "https://github.com", "GITHUB_OUTPUT": str(tmp_path / "out"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary")}

    def result(outcome: str, sha: str, *more: str) -> int:
        return requests(gh, run, "ci", "--result", outcome, *more, env={**env, "GITHUB_SHA": sha * 40})

    passed, again = result("success", "1"), result("success", "2")
    failing_unlabelled = result("failure", "3")  # the repository has no ghstate:ci-failing label yet
    failed_again = result("failure", "4")
    blocked_unlabelled = result("failure", "5", "--post-prompt", "true")  # the third: blocked, no such label yet
    recovered = result("success", "6")
    failing, failed_once_more = result("failure", "7"), result("failure", "8")
    blocked = result("failure", "9", "--post-prompt", "true")
    everything = [passed, again, failing_unlabelled, failed_again, blocked_unlabelled, recovered, failing,
                  failed_once_more, blocked]
    return {
        "that passes, or fails again (no comment)": [passed, again, failed_again, recovered, failed_once_more],
        "that turns failing or blocked (the one comment a person should act on)": [failing, blocked],
        "that sets a label the repository does not have yet (REST: the issue's labels)": [
            failing_unlabelled - failing, blocked_unlabelled - blocked],
        "at most": [max(everything)],
    }


@pytest.mark.parametrize("page", ["docs/github.md", "docs/action.md"])
def test_every_row_of_the_cost_tables_is_what_the_fake_github_counts(gh, run, sample_file, repo, tmp_path, page):
    if page == "docs/github.md":
        rows, counts = table(PAGE, "### What a command costs"), measured_commands(gh, run, sample_file, repo)
    else:
        rows, counts = table(ACTION, "### What a result costs"), measured_results(gh, run, sample_file, tmp_path)
    assert set(rows) == set(counts), f"a row of {page}'s cost table is not measured here, or the other way"
    for row, seen in counts.items():
        assert set(seen) == {figure(rows[row])}, f"{page} says {rows[row]} for {row!r}; measured {seen}"


def test_the_doctor_table_has_a_row_for_each_probe_in_its_order(gh, run):
    import json

    rows = list(table(PAGE, "| row | if it fails |"))
    checks = [r["check"] for r in json.loads(run("doctor", "--github", "--json").stdout)]
    probes = checks[checks.index(rows[0]):] if rows and rows[0] in checks else checks
    assert rows == probes[:len(rows)] and len(probes) - len(rows) == 2  # then the clean-up's two rows
