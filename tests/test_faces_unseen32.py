"""Faces sweep 32: a new user's everyday slips, without the test bed. `diamond cancel` of
several ids at once (it took one: "unrecognized arguments", nothing cancelled), a job array's
`diamond status` and `%diamond status` (its task counts were in `--json` alone), a store of
500 jobs (`diamond jobs` and `%diamond jobs` showed 50 and 20 rows without a word that more
were stored), the help of every subcommand (none named its exit statuses), unicode job names
on every face, an option given twice, `logs --follow` of a job that ended, the explain's
JSON and the exit codes 0/1/2.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import argparse
import json

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, sbatch_calls

from diamond_jupyter.cli.main import build_parser
from diamond_jupyter.model import Job, JobState
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
LISTS = "(`diamond jobs` lists the known ones)"  # the hint after an unknown id
NAME = "Lösung-β 計算 🚀"  # a job name a new user writes in their own language


def _scancels(user) -> list[str]:
    calls = user.fake / "calls"
    return [c for c in (calls.read_text() if calls.exists() else "").splitlines()
            if c.startswith("scancel")]


# ---- (1) `diamond cancel` of several ids -----------------------------------------------------

def test_fault_several_ids_are_each_cancelled_and_the_wrong_ones_named(user):
    """Was "unrecognized arguments: alpha:72 ..." and nothing cancelled."""
    user.job("alpha:71", JobState.RUNNING)
    user.job("alpha:72", JobState.PENDING)
    res = user.run("cancel", "alpha:71", "alpha:99", "alpha:72", "beta:1", code=2)
    assert _scancels(user) == ["scancel 71", "scancel 72"], _scancels(user)
    assert [ln.split("\t")[0] for ln in res.stdout.splitlines()] == ["alpha:71", "alpha:72"]
    lines = res.stderr.strip().splitlines()
    assert "diamond: alpha:99: no job 'alpha:99' in the store" in res.stderr, res.stderr
    assert "diamond: beta:1: no job 'beta:1' in the store" in res.stderr, res.stderr
    assert lines[-1] == "diamond: 2 of 4 jobs cancelled; 2 not: alpha:99, beta:1", lines


def test_fault_several_ids_with_json_are_the_jobs_cancelled_and_none_failed(user):
    user.job("alpha:71", JobState.RUNNING)
    user.job("alpha:72", JobState.PENDING)
    res = user.run("cancel", "alpha:71", "alpha:72", "--json", code=0)
    reply = json.loads(res.stdout)
    assert [j["id"] for j in reply["cancelled"]] == ["alpha:71", "alpha:72"], reply
    assert reply["failed"] == [], reply


def test_fault_several_ids_with_json_name_each_failed_one_with_its_reason(user):
    """Was: a list of the jobs cancelled alone, the ids that failed on stderr only, without
    the {"reason", "message"} a --json error promises."""
    user.job("alpha:71", JobState.RUNNING)
    user.job("ghost:5", JobState.RUNNING)  # its site does not answer
    res = user.run("cancel", "alpha:71", "alpha:99", "ghost:5", "--json", code=2)
    reply = json.loads(res.stdout)
    assert [j["id"] for j in reply["cancelled"]] == ["alpha:71"], reply
    assert _scancels(user) == ["scancel 71"]
    bad, down = reply["failed"]
    assert bad == {"job": "alpha:99", "reason": "bad-input",
                   "message": f"no job 'alpha:99' in the store {LISTS}"}, bad
    assert (down["job"], down["reason"]) == ("ghost:5", "failed"), down
    assert "ghost" in down["message"], down
    for failed in reply["failed"]:  # stderr says the same
        assert f"diamond: {failed['job']}: {failed['message']}" in res.stderr, res.stderr


def test_fault_several_ids_all_wrong_with_json_are_each_named(user):
    """Was `[]`: nothing said on stdout of why."""
    res = user.run("cancel", "alpha:1", "alpha:2", "--json", code=2)
    assert json.loads(res.stdout) == {"cancelled": [], "failed": [
        {"job": f"alpha:{n}", "reason": "bad-input",
         "message": f"no job 'alpha:{n}' in the store {LISTS}"} for n in (1, 2)]}
    assert _scancels(user) == []


def test_one_wrong_id_with_json_is_still_the_error(user):
    """(guard) one id keeps the shape of every --json error."""
    assert user.refused("cancel", "alpha:1", "--json") == \
        f"diamond: no job 'alpha:1' in the store {LISTS}"


def test_one_id_with_json_is_still_the_job(user):
    """(guard) one id: the Job, as DESIGN.md's shapes say, not a list of one."""
    user.job("alpha:71", JobState.RUNNING)
    assert json.loads(user.run("cancel", "alpha:71", "--json", code=0).stdout)["id"] == \
        "alpha:71"


def test_an_id_given_twice_is_cancelled_once(user):
    user.job("alpha:71", JobState.RUNNING)
    user.run("cancel", "alpha:71", "alpha:71", code=0)
    assert _scancels(user) == ["scancel 71"]


def test_several_ids_all_wrong_send_nothing_and_exit_2(user):
    res = user.run("cancel", "alpha:1", "alpha:2", code=2)
    assert res.stdout == "" and _scancels(user) == []
    assert res.stderr.strip().splitlines()[-1] == \
        "diamond: 0 of 2 jobs cancelled; 2 not: alpha:1, alpha:2"


def test_no_id_is_refused_naming_what_is_wanted(user):
    sweep_helpers.cli_refusal(user.run("cancel"), "the following arguments are required: JOB")


# ---- (2) the help of every subcommand --------------------------------------------------------

def _leaf_parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    out, todo = [], [("diamond", build_parser())]
    while todo:
        name, p = todo.pop()
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        out.append((name, p))
        todo += [(f"{name} {n}", sp) for a in subs for n, sp in a.choices.items()]
    return out


def test_fault_every_help_names_the_exit_statuses():
    """None did: a script's author had to read DESIGN.md for what 1 and 2 mean."""
    for name, p in _leaf_parsers():
        text = " ".join(p.format_help().split())
        assert "exit status: 0 when done; 2 on bad input" in text, name
        assert "1 when a site, the network or the job failed" in text, name


def test_every_subcommands_help_names_json_and_config():
    """(guard) each subcommand takes --json and --config (DESIGN.md), and its help says so."""
    for name, p in _leaf_parsers():
        if name == "diamond" or name in ("diamond testbed", "diamond workflow"):
            continue
        text = p.format_help()
        assert "--json" in text and "--config" in text, name


def test_the_help_on_the_terminal_ends_with_the_exit_statuses(user):
    out = user.run("cancel", "--help", code=0).stdout
    assert "several cancel each" in " ".join(out.split())
    assert '{"cancelled": [jobs], "failed": [{"job", "reason", "message"}]}' in \
        " ".join(out.split()), out
    assert " ".join(out.split()).endswith('With --json an error is also {"reason", '
                                          '"message"} on stdout.'), out


# ---- (3) a job array's status ----------------------------------------------------------------

def _array(user) -> None:
    user.job("alpha:80", JobState.RUNNING)
    store = Store(user.store_path)
    store.record_task_states("alpha:80", {"1": JobState.RUNNING, "2": JobState.COMPLETED,
                                          "3": JobState.PENDING, "4": JobState.PENDING})
    store.close()


COUNTS = "array tasks: 4 (2 PENDING, 1 RUNNING, 1 COMPLETED)"


def test_fault_an_arrays_status_shows_its_task_counts(user):
    """Was `alpha:80 RUNNING sim`: how far the array is was in --json alone."""
    _array(user)
    assert COUNTS in user.run("status", "alpha:80", code=0).stdout
    assert COUNTS in user.run("jobs", code=0).stdout
    got = json.loads(user.run("status", "alpha:80", "--json", code=0).stdout)["array_tasks"]
    assert got == {"total": 4, "states": {"COMPLETED": 1, "PENDING": 2, "RUNNING": 1}}


def test_fault_an_arrays_status_in_the_notebook_shows_its_task_counts(shell, user):
    from IPython.lib.pretty import pretty

    _array(user)
    assert COUNTS in pretty(shell.run_line_magic("diamond", "status alpha:80"))
    table = shell.run_line_magic("diamond", "jobs")
    assert COUNTS in repr(table) and COUNTS in table._repr_html_()


def test_a_plain_jobs_status_says_nothing_of_tasks(user):
    user.job("alpha:81", JobState.RUNNING)
    assert "array tasks" not in user.run("status", "alpha:81", code=0).stdout


# ---- (4) a store of 500 jobs -----------------------------------------------------------------

def _many(user, n: int = 500) -> None:
    store = Store(user.store_path)
    for i in range(n):
        store.upsert_job(Job(id=f"alpha:{1000 + i}", site="alpha", native_id=str(1000 + i),
                             name=f"run-{i}"))
    store.close()


MORE = "the store holds more (--limit N lists more; --state and --site narrow the list)"


def test_fault_jobs_of_a_large_store_say_more_are_stored(user):
    """Was 50 lines, nothing else: a new user took them for every job."""
    _many(user)
    res = user.run("jobs", code=0)
    assert len(res.stdout.splitlines()) == 50
    assert res.stderr.strip() == f"diamond: the 50 newest jobs shown; {MORE}", res.stderr
    res = user.run("jobs", "--limit", "500", code=0)
    assert len(res.stdout.splitlines()) == 500 and res.stderr == ""


def test_jobs_json_of_a_large_store_stays_one_list(user):
    """(guard) --json: stdout is the list alone (the note on stderr)."""
    _many(user)
    res = user.run("jobs", "--json", code=0)
    assert len(json.loads(res.stdout)) == 50 and "newest jobs shown" in res.stderr


def test_fault_the_notebooks_jobs_of_a_large_store_say_more_are_stored(shell, user):
    """Was 20 rows, nothing else, in the notebook's table and its text."""
    _many(user)
    table = shell.run_line_magic("diamond", "jobs")
    assert len(table.rows) == 20
    assert repr(table).splitlines()[-1] == f"(the 20 newest jobs shown; {MORE})"
    assert "<caption" in table._repr_html_() and "the 20 newest jobs shown" in \
        table._repr_html_()
    every = shell.run_line_magic("diamond", "jobs --limit 500")
    assert len(every.rows) == 500 and every.note == ""


# ---- (5) unicode job names on every face -----------------------------------------------------

def _named(store_path) -> None:
    store = Store(store_path)
    store.upsert_job(Job(id="alpha:90", site="alpha", native_id="90", name=NAME))
    store.close()


def test_a_unicode_name_is_shown_whole_by_the_command_line(user):
    _named(user.store_path)
    assert f"alpha:90\tUNKNOWN\t{NAME}" in user.run("jobs", code=0).stdout
    assert NAME in user.run("status", "alpha:90", code=0).stdout
    assert json.loads(user.run("status", "alpha:90", "--json", code=0).stdout)["name"] == NAME


def test_a_unicode_name_is_shown_whole_on_an_ascii_terminal(user):
    """(guard) LANG=C: the name written as escapes, no traceback, exit 0."""
    import subprocess
    import sys

    _named(user.store_path)
    env = {**user.env(user.sites), "LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "ascii"}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "jobs"],
                         capture_output=True, text=True, timeout=120, cwd=user.root, env=env)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    assert "alpha:90" in res.stdout and "\\xf6" in res.stdout, res.stdout


def test_a_unicode_name_is_shown_whole_by_the_magics(shell, user):
    _named(user.store_path)
    table = shell.run_line_magic("diamond", "jobs")
    assert NAME in repr(table) and "L&ouml;" not in table._repr_html_()
    assert NAME in table._repr_html_()


async def test_a_unicode_name_is_served_whole_by_the_rest_api(rest, tmp_path):
    store = Store(tmp_path / "store.sqlite3")
    store.upsert_job(Job(id="here:90", site="here", native_id="90", name=NAME))
    store.close()
    code, reply = await rest("GET", "jobs")
    assert code == 200 and [j["name"] for j in reply["jobs"]] == [NAME], reply


# ---- (6) an option given twice, an ended job followed, exit codes ----------------------------

@pytest.mark.parametrize("args", [("submit", "--site", "alpha", "--site", "ghost", "job.sh"),
                                  ("jobs", "--site", "alpha", "--site", "ghost"),
                                  ("queue", "alpha", "--config", "a.yaml", "--config",
                                   "b.yaml")])
def test_an_option_given_twice_is_refused_saying_give_it_once(user, args):
    last = sweep_helpers.cli_refusal(user.run(*args), "is given twice")
    assert last.endswith("give it once"), last
    assert sbatch_calls(user) == []


def test_the_magics_refuse_a_site_given_twice(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "jobs --site alpha --site ghost", None,
                         "--site is given twice")


@pytest.mark.parametrize("state,code", [(JobState.COMPLETED, 0), (JobState.FAILED, 1)])
def test_following_the_logs_of_a_job_that_ended_writes_them_and_exits_by_its_end(
        user, state, code):
    """(guard) `logs --follow` of a job that already ended: its whole stdout, its end
    state on stderr, exit 0 when it COMPLETED, else 1: no wait for more."""
    out = user.write("out.txt", "step 1\nstep 2 ✓\n")
    user.job("alpha:77", state, stdout_path=str(out), workdir=str(user.root))
    res = user.run("logs", "--follow", "alpha:77", code=code)
    assert res.stdout == "step 1\nstep 2 ✓\n"
    assert state.value in res.stderr, res.stderr


def test_an_unreachable_site_is_exit_1_with_its_reason(user):
    """(guard) a site that does not answer: exit 1 (not 2: nothing the user typed is
    wrong), the site named; with --json the reason "failed"."""
    res = user.run("queue", "ghost", "--json", code=1)
    assert json.loads(res.stdout)["reason"] == "failed"
    assert "ghost" in res.stderr.strip().splitlines()[-1], res.stderr


def test_an_unknown_job_is_said_alike_by_the_command_line_and_the_magics(shell, user,
                                                                        capsys):
    """(guard) the same words, what was given and where to look, on both faces."""
    last = sweep_helpers.cli_refusal(user.run("status", "alpha:404"))
    assert "no job 'alpha:404' in the store (`diamond jobs` lists the known ones)" in last
    assert_magic_refused(shell, user, capsys, "status alpha:404", None,
                         "no job 'alpha:404' in the store")


def test_the_explains_json_carries_what_design_md_names(user):
    """(guard) `place --explain --json`: each ranked site with its raw scheduler estimate,
    the calibrated one, a 90% bound and the sample count."""
    plan = json.loads(user.run("place", "job.sh", "--explain", "--json", code=1).stdout)
    assert [r["site"] for r in plan["ranked"]] == ["alpha", "ghost"], plan
    for r in plan["ranked"]:
        assert {"raw_start", "estimated_start", "start_bound",
                "calibration_samples"} <= set(r), sorted(r)
        assert isinstance(r["calibration_samples"], int)


@pytest.mark.parametrize("more", [(), ("--explain",), ("--explain", "--json")])
def test_fault_a_placement_without_a_site_says_why_on_stderr(user, more):
    """`place --explain` with no site able to run the job ended 1 with nothing on stderr
    (every other failure says its reason there): now the reason, one line, last."""
    res = user.run("place", "job.sh", *more, code=1)
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("diamond: no site can run this job: alpha: no nodes reported"), \
        res.stderr
    assert "ghost: site unreachable" in last


async def test_a_unicode_name_is_given_whole_by_mcp(user):
    """(guard) an MCP client (another agent) asking a job's status: its name whole."""
    from diamond_jupyter.mcp_server import build_server

    _named(user.store_path)
    server = build_server(str(user.sites), root=user.root)
    got = await server.call_tool("status", {"job_id": "alpha:90"})
    assert NAME in json.dumps(got, default=str, ensure_ascii=False), got


def test_the_version_says_the_packages_own(user):
    """(guard) `diamond --version`: the installed package's version, exit 0, nothing on
    stderr; after a subcommand it is an unknown option, said as such."""
    from importlib.metadata import version

    res = user.run("--version", code=0)
    assert res.stdout.strip() == version("diamond-jupyter") and res.stderr == ""
    sweep_helpers.cli_refusal(user.run("jobs", "--version"), "unknown option --version")
