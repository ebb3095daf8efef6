"""Faces sweep 31: a new user's everyday slips, without the test bed. Several job states at
once (`diamond jobs --state running,pending` was "unknown state 'running,pending'" while
`GET jobs?state=running,pending` listed both), a job's output with Windows line ends or a
progress bar on a terminal (each line ended in a written-out `\\x0d`, a bar's redraws run
together on one line), `diamond workflow status` from a sites file that lacks the site a
step runs on (PENDING, without a word), `%diamond sites` after the sites file changed, exit
codes and words of the refusals, `--json` shapes and the help of every subcommand.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, on_a_terminal

from diamond_jupyter.cli.main import build_parser
from diamond_jupyter.model import JobState

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
STATES = "PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, UNKNOWN"
SEVERAL = "(several joined by commas, e.g. running,pending)"
SCRIPT = "#!/bin/bash\\n#SBATCH -n 1\\necho hi\\n"


def _three_jobs(user) -> None:
    user.job("alpha:71", JobState.RUNNING)
    user.job("alpha:72", JobState.PENDING)
    user.job("alpha:73", JobState.COMPLETED)


# ---- (1) several job states at once ----------------------------------------------------------

def test_fault_the_command_lines_jobs_take_several_states(user):
    """Was "unknown state 'running,pending'" (exit 2), while the REST API took the list."""
    _three_jobs(user)
    res = user.run("jobs", "--state", "running,Pending", "--json", code=0)
    assert sorted(j["id"] for j in json.loads(res.stdout)) == ["alpha:71", "alpha:72"]
    res = user.run("jobs", "--state", "failed,timeout", code=0)
    assert res.stdout == "" and "diamond: no jobs FAILED or TIMEOUT in the store" in res.stderr


def test_fault_the_magics_jobs_take_several_states(shell, user):
    _three_jobs(user)
    shown = str(shell.run_line_magic("diamond", "jobs --state running,completed"))
    assert "alpha:71" in shown and "alpha:73" in shown and "alpha:72" not in shown, shown


def test_fault_an_unknown_state_among_several_is_named(user):
    """Was "unknown state 'running,finished'" (which of them?), without the list form."""
    last = sweep_helpers.cli_refusal(user.run("jobs", "--state", "running,finished"))
    assert f"unknown state 'finished' in 'running,finished'; expected {STATES} {SEVERAL}" \
        in last, last


def test_fault_an_empty_state_in_a_list_is_named(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "jobs --state running,", None,
                         "unknown state '(empty)' in 'running,'")


def test_fault_the_jobs_help_says_states_join_by_commas(user):
    res = user.run("jobs", "--help", code=0)
    assert "joined by commas" in " ".join(res.stdout.split()), res.stdout


def test_a_state_given_twice_is_refused_saying_to_give_it_once(user):
    """(guard) `--state running --state pending`: refused, not the last one silently."""
    last = sweep_helpers.cli_refusal(user.run("jobs", "--state", "running", "--state",
                                              "pending"))
    assert "--state is given twice" in last, last


async def test_the_rest_apis_list_of_states_lists_what_the_command_line_lists(rest, tmp_path):
    """(guard) `GET jobs?state=running,pending` on a server: the same filter, a state
    repeated or in any case the same list."""
    from diamond_jupyter.model import Job
    from diamond_jupyter.store import Store

    store = Store(tmp_path / "store.sqlite3")
    for native, state in (("1", JobState.RUNNING), ("2", JobState.PENDING),
                          ("3", JobState.FAILED)):
        store.upsert_job(Job(id=f"here:{native}", site="here", native_id=native, name="s"))
        store.apply_state(f"here:{native}", state)
    store.close()
    code, reply = await rest("GET", "jobs?state=running,PENDING,running")
    assert code == 200 and sorted(j["id"] for j in reply["jobs"]) == ["here:1", "here:2"]
    assert reply["total"] == 2, reply


# ---- (2) a job's output on a terminal --------------------------------------------------------

def _output(user, text: str) -> None:
    out = user.write("out.txt", text)
    user.job("alpha:77", JobState.COMPLETED, stdout_path=str(out), workdir=str(user.root))


def test_fault_windows_line_ends_show_no_written_out_carriage_return(user):
    """Each line of a job writing CRLF ended in `\\x0d` on the terminal."""
    _output(user, "step 1 done\r\nstep 2 done\r\n")
    code, shown = on_a_terminal(user, "logs", "alpha:77")
    assert code == 0 and shown == "step 1 done\nstep 2 done\n", repr(shown)


def test_fault_a_progress_bars_redraws_show_one_a_line(user):
    """`10%\\r 50%\\r100%` was one line `10%\\x0d 50%\\x0d100%`; each redraw is a line now
    (nothing a carriage return would have written over is hidden)."""
    _output(user, "training\n 10%\r 50%\r100%\ndone\n")
    code, shown = on_a_terminal(user, "logs", "alpha:77")
    assert shown == "training\n 10%\n 50%\n100%\ndone\n", repr(shown)


def test_a_job_output_piped_keeps_its_bytes(user):
    """(guard) `diamond logs JOB > file`: the carriage returns as the job wrote them."""
    _output(user, "a\r\nb\rc\n")
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "logs", "alpha:77"],
                         capture_output=True, cwd=user.root, env=user.env(user.sites),
                         timeout=120)
    assert res.returncode == 0 and res.stdout == b"a\r\nb\rc\n", res


def test_plain_writes_out_colours_on_a_terminal_and_ends_lines_alike(user):
    """(guard) `--plain`: the colour written out too, carriage returns still line ends."""
    _output(user, "\x1b[31mred\x1b[0m\r\n")
    code, shown = on_a_terminal(user, "logs", "alpha:77", "--plain")
    assert shown == "\\x1b[31mred\\x1b[0m\n", repr(shown)


def test_fault_a_crlf_cut_between_two_followed_pieces_is_one_line_end():
    """`logs --follow` writes the log in the pieces it reads: a CRLF cut between two (the
    `\\r` ending one read, the `\\n` starting the next) showed a blank line after the
    line; a carriage return alone at a piece's end still ends its line."""
    from diamond_jupyter.cli.jobs import _write_output

    out, after = sweep_helpers.FakeTty(), False
    for piece in ("step 1 done\r", "\nstep 2 done\r", "", "\n 10%\r", " 50%\r\n"):
        after = _write_output(out, piece, after_return=after)
    assert out.text == "step 1 done\nstep 2 done\n 10%\n 50%\n", repr(out.text)
    piped = io.StringIO()
    assert not _write_output(piped, "a\r", after_return=True)
    assert piped.getvalue() == "a\r"  # (guard) piped: the bytes as written


# ---- (3) a workflow seen from a sites file that lacks its site -------------------------------

def _workflow_on_alpha(user) -> str:
    wf = user.write("w.yaml", f'name: w\nsteps:\n  - {{name: prep, site: alpha, script: '
                              f'"{SCRIPT}"}}\n')
    return json.loads(user.run("workflow", "run", str(wf), "--json", code=0).stdout)["id"]


def test_fault_workflow_status_says_a_step_is_on_a_site_this_file_lacks(user):
    """A step on alpha, seen with a sites file without alpha: shown PENDING without a word,
    as if it were queued and followed. Now it says its site is not in this file and its
    state is the one last recorded (JSON: the step's reason)."""
    wid = _workflow_on_alpha(user)
    other = user.write("other.yaml", f"sites:\n{user.ghost}store: {user.store_path}\n")
    view = json.loads(user.run("workflow", "status", wid, "--json", config=other,
                               code=0).stdout)
    [step] = view["steps"]
    assert {"id", "state", "steps"} <= set(view) and view["state"] in STATES.split(", ")
    assert {"name", "site", "job", "state"} <= set(step) and step["site"] == "alpha"
    assert step["reason"].startswith("its site alpha is not in this sites file (configured: "
                                     "ghost): its state is the one last recorded"), step
    text = user.run("workflow", "status", wid, config=other, code=0).stdout
    assert "(its site alpha is not in this sites file" in text, text


def test_workflow_status_from_the_file_that_lists_its_site_says_no_such_thing(user):
    """(guard) the same workflow from the file that lists alpha: no such reason."""
    wid = _workflow_on_alpha(user)
    view = json.loads(user.run("workflow", "status", wid, "--json", code=0).stdout)
    assert all("not in this sites file" not in (s["reason"] or "") for s in view["steps"])


# ---- (4) %diamond sites after the sites file changed ------------------------------------------

def test_the_magics_sites_say_the_file_was_removed_and_keep_the_sites(shell, user, capsys):
    """(guard) `%diamond sites`, then the file moved away: the sites as read, and what to
    do said once per listing."""
    shell.run_line_magic("diamond", "sites")
    capsys.readouterr()
    user.sites.rename(user.root / "sites.bak")
    shown = str(shell.run_line_magic("diamond", "sites"))
    err = capsys.readouterr().err
    assert "alpha" in shown, shown
    assert f"the sites file {user.sites} was removed since this kernel read it" in err, err
    (user.root / "sites.bak").rename(user.sites)  # put back as it was: said no more
    shell.run_line_magic("diamond", "sites")
    assert "sites file" not in capsys.readouterr().err


# ---- (5) exit codes, words of the refusals, help ---------------------------------------------

@pytest.mark.parametrize("command", ["status", "logs", "cancel", "release", "fetch", "wait"])
def test_every_command_taking_a_job_refuses_an_unknown_one_in_the_same_words(user, command):
    """(guard) exit 2, one line: what (the job), where (the store), what to do."""
    said = user.refused(command, "alpha:9", "--json")
    assert said.endswith("no job 'alpha:9' in the store (`diamond jobs` lists the known "
                         "ones)"), said


@pytest.mark.parametrize("args,said", [
    (["jobs", "--site", "nosuch"], "unknown site 'nosuch' (known: alpha, ghost)"),
    (["describe", "nosuch"], "unknown site 'nosuch' (known: alpha, ghost)"),
    (["queue", "nosuch"], "unknown site 'nosuch'"),
    (["translate", "--to", "cobalt", "job.sh"],
     "unknown dialect 'cobalt'; expected one of slurm, pbs, lsf, flux, sge"),
    (["workflow", "cancel", "wf-nosuch"], "no workflow 'wf-nosuch' in the store")])
def test_bad_input_is_exit_2_naming_what_and_what_is_accepted(user, args, said):
    """(guard) DESIGN.md: 2 for bad input, a one-line reason on stderr (and the JSON error
    on stdout with --json)."""
    assert said in user.refused(*args, "--json"), args


def test_a_site_that_cannot_be_reached_is_exit_1(user):
    """(guard) `diamond describe ghost`: the site's failure, exit 1, one line naming it."""
    said = user.refused("describe", "ghost", "--json", code=1)
    assert "ghost" in said, said


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield path + (name,), sub
                yield from _subcommands(sub, path + (name,))


def test_every_subcommands_help_names_each_of_its_options_with_words():
    """(guard) `diamond X --help` for every X: each option it takes is in its help, with a
    line saying what it does; --json and --config on every one (DESIGN.md)."""
    for path, sub in _subcommands(build_parser()):
        text = " ".join(sub.format_help().split())
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == "==SUPPRESS==":
                continue
            assert action.help, (path, action.option_strings or action.dest)
            for option in action.option_strings:
                assert option in text, (path, option)
        if not any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
            assert "--json" in text and "--config" in text, path


def test_jobs_json_carries_the_contracts_fields_with_a_list_of_states(user):
    """(guard) `diamond jobs --json --state ...`: objects with `id`, a `state` of the job
    vocabulary, and what each depends on."""
    _three_jobs(user)
    jobs = json.loads(user.run("jobs", "--state", "running,completed", "--json",
                               code=0).stdout)
    assert len(jobs) == 2 and all(j["id"] and j["state"] in STATES.split(", ")
                                  and "depends_on" in j for j in jobs), jobs
