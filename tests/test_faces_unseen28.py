"""Faces sweep 28: a new user's slips and a plain terminal, without the test bed. A
subcommand, a workflow command, a dialect, a choice or an MCP tool misspelt (the one meant is
named); a terminal that cannot write every character (LANG=C, a job named in another script);
Ctrl-C while the command line is still starting; output piped to `head`; every option of
every subcommand in its `--help`; an empty sites file; a very long job id; one site
unreachable while another answers; the JSON shapes DESIGN.md promises.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, cli_refusal, mcp_refusal, sbatch_calls
from test_cli_newuser import _interruptible

from diamond_jupyter.model import Job, JobState
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
SCRIPT = sweep_helpers.FACES_SCRIPT
JSON = {"Content-Type": "application/json"}
STATES = {"PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "UNKNOWN"}


def _usage_error(res: subprocess.CompletedProcess[str], said: str) -> None:
    """An argparse refusal: exit 2, nothing on stdout, `said` on the last stderr line."""
    assert res.returncode == 2 and res.stdout == "", (res.returncode, res.stdout, res.stderr)
    assert said in res.stderr.strip().splitlines()[-1], res.stderr


# ---- (1) a slip in a name: the one meant is named -------------------------------------------

@pytest.mark.parametrize("args,said", [
    (["sitez"], "invalid choice: 'sitez' (did you mean sites? choose from "),
    (["Jobs"], "invalid choice: 'Jobs' (did you mean jobs? choose from "),
    (["workflow", "runn", "wf.yaml"], "invalid choice: 'runn' (did you mean run? choose from "),
    (["transfer", "--via", "sftpp", "a", "b"],
     "invalid choice: 'sftpp' (did you mean sftp? choose from "),
])
def test_fault_a_misspelt_command_or_choice_names_the_one_meant(user, args, said):
    """`diamond sitez` listed the 21 commands and left the user to find `sites`."""
    _usage_error(user.run(*args), said)


def test_a_command_nothing_like_any_is_refused_without_a_guess(user):
    res = user.run("frobnicate")
    _usage_error(res, "invalid choice: 'frobnicate' (choose from ")
    assert "did you mean" not in res.stderr


def test_fault_a_misspelt_choice_in_a_magic_names_the_one_meant(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "transfer --via globbus a b", None,
                         "invalid choice: 'globbus' (did you mean globus? choose from ")


def test_a_misspelt_magic_command_names_the_one_meant(shell, user, capsys):
    """(guard) the magic's own top-level wording."""
    assert_magic_refused(shell, user, capsys, "sitez", None,
                         "no command 'sitez' (did you mean %diamond sites?)")


@pytest.mark.parametrize("given,meant", [("slurmm", "slurm"), ("pb", "pbs"), ("lfs", "lsf")])
def test_fault_a_misspelt_dialect_names_the_one_meant_on_the_command_line(user, given, meant):
    """`translate --to slurmm` listed the five dialects without the one meant."""
    cli_refusal(user.run("translate", "--to", given, "job.sh"),
                f"unknown dialect {given!r}; expected one of slurm, pbs, lsf, flux, sge "
                f"(did you mean {meant}?)")


async def test_fault_a_misspelt_dialect_names_the_one_meant_over_rest(rest):
    code, reply = await rest("POST", "translate", json.dumps(
        {"script": SCRIPT, "to": "lfs"}).encode(), headers=JSON)
    assert code == 400 and "did you mean lsf?" in reply["message"], (code, reply)


async def test_fault_a_misspelt_mcp_tool_names_the_one_meant(user):
    """The MCP package said "Unknown tool: SUBMIT" and nothing of the tools there are."""
    said = await mcp_refusal(user, "SUBMIT", {"script": SCRIPT, "site": "alpha"})
    assert "unknown skill 'SUBMIT' (did you mean submit? known: discover_resources, " in said
    assert sbatch_calls(user) == []


async def test_fault_an_unknown_mcp_tool_lists_the_tools(user):
    said = await mcp_refusal(user, "delete_everything", {})
    assert said.endswith("run_workflow, workflow_status)") and "did you mean" not in said, said


def test_a_misspelt_site_names_the_one_meant_everywhere_on_the_command_line(user):
    """(guard) describe, queue and submit take a site: each names alpha for alpah."""
    for args in (["describe", "alpah"], ["queue", "alpah"],
                 ["submit", "--site", "alpah", "job.sh"]):
        cli_refusal(user.run(*args), "unknown site 'alpah' (did you mean alpha? known: ")
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("path", ["sites/hre", "sites/hre/describe", "sites/Here/snapshot"])
async def test_fault_a_misspelt_site_in_a_rest_path_names_the_one_meant(rest, path):
    """It was "unknown site 'hre'": not the site meant, nor the known ones, as every other
    face says them."""
    code, reply = await rest("GET", path)
    site = path.split("/")[1]
    assert (code, reply["message"]) == (
        404, f"unknown site {site!r} (did you mean here? known: here)"), (code, reply)


# ---- (2) a plain terminal --------------------------------------------------------------------

ASCII = {"PYTHONIOENCODING": "ascii", "LANG": "C", "LC_ALL": "C"}


def _run_env(user, *args: str, env: dict[str, str] | None = None, **kw
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                          capture_output=True, text=True, cwd=user.root, timeout=120,
                          env={**user.env(user.sites), **(env or {})}, **kw)


def _named(user, job_id: str, name: str) -> None:
    site, _, native = job_id.partition(":")
    store = Store(user.store_path)
    store.upsert_job(Job(id=job_id, site=site, native_id=native, name=name))
    store.apply_state(job_id, JobState.RUNNING)


@pytest.mark.parametrize("args", [("status", "alpha:79"), ("jobs",), ("jobs", "--json")])
def test_fault_a_terminal_that_cannot_write_a_name_shows_it_escaped(user, args):
    """`diamond status` of a job named `résumé-計算` on an ASCII terminal ended in a
    UnicodeEncodeError traceback instead of the job."""
    _named(user, "alpha:79", "r\u00e9sum\u00e9-\u8a08\u7b97")
    res = _run_env(user, *args, env=ASCII)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    if "--json" in args:  # JSON writes it escaped its own way, read back as it was
        assert json.loads(res.stdout)[0]["name"] == "r\u00e9sum\u00e9-\u8a08\u7b97"
    else:
        assert "alpha:79" in res.stdout
        assert "r\\xe9sum\\xe9-\\u8a08\\u7b97" in res.stdout, res.stdout


def test_fault_a_refusal_naming_an_unwritable_character_is_one_line_on_an_ascii_terminal(
        user):
    res = _run_env(user, "status", "alpha:\u0667\u0667", env=ASCII)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.startswith("diamond: ") and len(res.stderr.splitlines()) == 1


def test_fault_ctrl_c_while_the_command_line_starts_is_one_line_and_exit_130(user,
                                                                             tmp_path):
    """Ctrl-C while the modules load (seconds on a busy machine): a traceback of the
    imports, exit -2. A real SIGINT arrives as the command line's own modules are imported
    (the engine's, paramiko's among them, load later, in the commands that use them)."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import os, signal, sys\n"
        "class _CtrlC:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'diamond_jupyter.cli.main':\n"
        "            sys.meta_path.remove(self)\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, _CtrlC())\n")
    path = os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")])
    res = _run_env(user, "wait", "alpha:77", env={"PYTHONPATH": path},
                   preexec_fn=_interruptible)
    assert res.returncode == 130, (res.returncode, res.stderr)
    assert res.stderr == "diamond: interrupted while starting: nothing was done\n"
    assert not (user.fake / "calls").exists()


@pytest.mark.parametrize("args", [("jobs",), ("jobs", "--json"), ("sites", "--json")])
def test_output_piped_to_head_ends_quietly(user, args):
    """(guard) `diamond jobs | head -1`: the reader leaves; no BrokenPipeError, exit 0."""
    for n in range(400):
        _named(user, f"alpha:{1000 + n}", "x" * 60)
    cmd = f"{sys.executable} -m diamond_jupyter.cli {' '.join(args)} | head -c 20; " \
          "echo; echo rc=${PIPESTATUS[0]}"
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120,
                         cwd=user.root, env=user.env(user.sites))
    assert res.stdout.strip().endswith("rc=0"), (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr, res.stderr


# ---- (3) what the command line promises ------------------------------------------------------

def test_every_subcommands_help_names_every_option():
    """(guard) each option string of each subcommand (and sub-subcommand) is in its
    `--help`, and each names what it is for."""
    import argparse

    from diamond_jupyter.cli.main import build_parser

    def walk(parser: argparse.ArgumentParser, prog: str):
        yield prog, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, f"{prog} {name}")

    seen = 0
    for prog, parser in walk(build_parser(), "diamond"):
        text = parser.format_help()
        for action in parser._actions:
            for option in action.option_strings:
                assert option in text, (prog, option)
                assert action.help, (prog, option)
                seen += 1
    assert seen > 100


def test_an_empty_sites_file_says_what_to_write_on_every_command(user):
    """(guard) `sites: []`: exit 2, one line saying what an entry looks like; with --json
    the error as JSON too."""
    empty = user.write("none.yaml", "sites: []\n")
    for args in (["sites"], ["jobs"], ["submit", "job.sh"]):
        line = cli_refusal(user.run(*args, config=empty))
        assert "lists no sites (expected `sites:` followed by entries such as" in line
    res = user.run("sites", "--json", config=empty)
    assert res.returncode == 2 and json.loads(res.stdout)["reason"] == "bad-input"


def test_a_very_long_job_id_is_cut_in_a_one_line_refusal(user):
    res = user.run("status", "alpha:" + "7" * 100_000)
    line = cli_refusal(res, "(100006 characters) in the store")
    assert len(res.stderr) < 500, len(res.stderr)
    assert line.count("7") < 100


def test_one_unreachable_site_does_not_hide_the_others(user):
    """(guard) `ghost` does not answer: `sites` lists alpha as it is and ghost as
    unreachable, exit 0, in text and JSON."""
    text = user.run("sites", code=0).stdout
    assert text.startswith("alpha") and "ghost" in text and "unreachable" in text, text
    listed = json.loads(user.run("sites", "--json", code=0).stdout)
    by_name = {s["name"]: s for s in listed}
    assert set(by_name) == {"alpha", "ghost"}
    assert by_name["ghost"]["reachable"] is False and by_name["alpha"].get("reachable", True)


def test_the_json_shapes_of_jobs_and_status_are_the_contracts(user):
    """(guard) `jobs --json` is a list of Jobs, `status --json` a Job: `id` usable as JOB
    elsewhere, `state` from the job vocabulary."""
    _named(user, "alpha:79", "sim")
    listed = json.loads(user.run("jobs", "--json", code=0).stdout)
    assert isinstance(listed, list) and [j["id"] for j in listed] == ["alpha:79"]
    assert {j["state"] for j in listed} <= STATES
    job = json.loads(user.run("status", listed[0]["id"], "--json", code=0).stdout)
    assert job["id"] == "alpha:79" and job["state"] in STATES


def test_a_misspelt_option_names_the_one_meant(user):
    """(guard) `--partiton`: the option meant and those accepted."""
    _usage_error(user.run("submit", "--partiton", "debug", "job.sh"),
                 "unknown option --partiton (did you mean --partition? accepted: ")
    assert sbatch_calls(user) == []


def test_a_non_utf8_script_on_standard_input_is_said_approximated(user):
    """(guard) bytes of Latin-1 piped in: the job gets U+FFFD for them, and the user is told
    which line and how to keep the text."""
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "submit", "--site",
                          "alpha", "-"], input=b"#!/bin/bash\necho caf\xe9\n",
                         capture_output=True, cwd=user.root, env=user.env(user.sites),
                         timeout=120)
    err = res.stderr.decode()
    assert res.returncode == 0 and "bytes that were not UTF-8" in err, err
    assert "save the script as UTF-8" in err


def test_no_job_is_shown_of_a_path_given_as_a_job(user):
    """(guard) a job script's path given where a job id goes: said as no job, with the
    form expected, not looked up on a site."""
    res = user.run("status", "job.sh")
    assert res.returncode == 2 and "job.sh" in res.stderr, res.stderr
    assert not Path(user.fake / "calls").exists() or "squeue" not in (
        user.fake / "calls").read_text()
