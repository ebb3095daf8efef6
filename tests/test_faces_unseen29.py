"""Faces sweep 29: a new user's everyday slips, without the test bed. A sites file edited
while the Jupyter server runs (its sites were those it read at start, unsaid); NO_COLOR in
the kernel (the magics' errors were red whatever it said); no command, `--version`, a missing
or a directory script, times, counts and option-like values the parser cannot take, a site
or job id off by a letter or a case, very long names, JSON errors and shapes, an ended job
waited on or cancelled, an unreachable site, an ASCII terminal, output piped to `head`.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import sweep_helpers
import yaml
from sweep_helpers import assert_magic_refused, cli_refusal, sbatch_calls

from diamond_jupyter.model import Job, JobState
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
STATES = {"PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "UNKNOWN"}
ASCII = {"PYTHONIOENCODING": "ascii", "LANG": "C", "LC_ALL": "C"}


def _ended(user, job_id: str = "alpha:79", state: JobState = JobState.FAILED) -> None:
    site, _, native = job_id.partition(":")
    store = Store(user.store_path)
    store.upsert_job(Job(id=job_id, site=site, native_id=native, name="sim"))
    store.apply_state(job_id, state)
    store.close()


def _run_env(user, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                          capture_output=True, text=True, cwd=user.root, timeout=120,
                          env={**user.env(user.sites), **env})


def _usage_error(res: subprocess.CompletedProcess[str], said: str) -> None:
    """An argparse refusal: exit 2, nothing on stdout, `said` on the last stderr line."""
    assert res.returncode == 2 and res.stdout == "", (res.returncode, res.stdout, res.stderr)
    assert said in res.stderr.strip().splitlines()[-1], res.stderr


# ---- (1) a sites file edited while the server runs -------------------------------------------

async def test_fault_a_sites_file_edited_while_the_server_runs_is_said(rest, tmp_path):
    """A site added to the file was missing from every listing, without a word: the
    server's engine keeps what it read at start."""
    code, reply = await rest("GET", "sites")
    assert code == 200 and "sites_file_changed" not in reply, reply
    sites = tmp_path / "sites.yaml"
    data = yaml.safe_load(sites.read_text())
    data["sites"].append({"name": "there", "transport": {"kind": "local"}, "workdir": "/w"})
    sites.write_text(yaml.safe_dump(data))
    for path in ("sites", "state"):
        code, reply = await rest("GET", path)
        assert code == 200, (code, reply)
        note = reply["sites_file_changed"]
        assert f"the sites file {sites} changed since this Jupyter server read it" in note
        assert "restart the Jupyter server" in note, note
    assert [s["name"] for s in (await rest("GET", "sites"))[1]["sites"]] == ["here"]


async def test_a_sites_file_saved_unchanged_is_not_said_changed(rest, tmp_path):
    """(guard) an editor saving the same bytes (a new mtime) changes nothing."""
    sites = tmp_path / "sites.yaml"
    sites.write_text(sites.read_text())
    reply = (await rest("GET", "sites"))[1]
    assert "sites_file_changed" not in reply and reply["sites"][0]["name"] == "here"


# ---- (2) NO_COLOR in the kernel --------------------------------------------------------------

def test_fault_a_magics_error_is_plain_under_no_color(shell, user, capsys, monkeypatch):
    """`%diamond` errors were red escape codes in the cell whatever NO_COLOR said."""
    monkeypatch.setenv("NO_COLOR", "1")
    assert_magic_refused(shell, user, capsys, "status nosuchjob", None, "diamond: ")
    shell.run_line_magic("diamond", "status nosuchjob")
    err = capsys.readouterr().err
    assert err.startswith("diamond: ") and "\x1b" not in err, repr(err)


def test_a_magics_error_is_red_without_no_color(shell, user, capsys, monkeypatch):
    """(guard) unset (or empty, as no-color.org says) the error line is red, reset after."""
    monkeypatch.setenv("NO_COLOR", "")
    shell.run_line_magic("diamond", "status nosuchjob")
    err = capsys.readouterr().err
    assert err.startswith("\x1b[31mdiamond: ") and "\x1b[0m" in err, repr(err)


# ---- (3) the command line's first minutes -----------------------------------------------------

def test_no_command_shows_the_commands_and_says_so(user):
    """(guard) `diamond` alone: the commands listed, exit 2, the reason last; with --json
    the error as JSON on stdout."""
    res = user.run()
    assert res.returncode == 2 and "workflow" in res.stderr and res.stdout == ""
    assert res.stderr.strip().splitlines()[-1].startswith("diamond: no command given")
    res = user.run("--json")
    assert res.returncode == 2 and json.loads(res.stdout)["reason"] == "bad-input"


def test_the_version_is_one_line(user):
    """(guard) `diamond --version`: exit 0, one line, digits and dots."""
    out = user.run("--version", code=0).stdout
    assert out.count("\n") == 1 and out.strip().replace(".", "").isalnum(), out


def test_a_missing_script_is_named(user):
    cli_refusal(user.run("submit", "nofile.sh"), "cannot read nofile.sh: No such file")
    assert sbatch_calls(user) == []


def test_a_directory_given_as_the_script_names_the_scripts_in_it(user):
    """(guard) `diamond submit .`: the scripts there are named."""
    cli_refusal(user.run("submit", "."), ". is a directory, not a job script",
                "script files in it: job.sh")


@pytest.mark.parametrize("args,said", [
    (["submit", "--time", "1 hour", "job.sh"],
     "argument --time: expected minutes, HH:MM:SS or D-HH[:MM[:SS]] (1 hour is --time "
     "01:00:00), not '1 hour'"),
    (["submit", "--nodes", "0", "job.sh"], "argument --nodes: expected a whole number, 1 or "
     "more, not '0'"),
    (["submit", "--nodes", "-1", "job.sh"], "argument --nodes: expected a whole number, 1 or "
     "more, not '-1'"),
    (["submit", "--site", "alpha", "--partition", "-x", "job.sh"],
     "if it is the value, write --partition=-x"),
    (["wait", "alpha:1", "--timeout", "abc"],
     "argument --timeout: expected a number of seconds above 0 (e.g. 30), not 'abc'"),
    (["jobs", "--limit", "0"], "argument --limit: expected how many to list"),
])
def test_a_value_the_parser_cannot_take_says_the_form_expected(user, args, said):
    """(guard) each refusal says what would be taken; nothing is submitted."""
    _usage_error(user.run(*args), said)
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("args,said", [
    (["submit", "--site", "ALPHA", "job.sh"], "unknown site 'ALPHA' (did you mean alpha?"),
    (["jobs", "--site", "alpah"], "unknown site 'alpah' (did you mean alpha?"),
    (["status", "alpah:79"], "no job 'alpah:79' in the store (did you mean alpha:79?"),
    (["status", "79"], "job ID '79' is malformed: expected SITE:NUMBER, e.g. alpha:42 (or a "
     "job's submission token); did you mean alpha:79?"),
])
def test_a_site_or_job_off_by_a_letter_or_a_case_names_the_one_meant(user, args, said):
    _ended(user)
    cli_refusal(user.run(*args), said)


def test_a_very_long_site_name_is_cut_in_its_refusal(user):
    """(guard) 10000 characters given as --site: one short line naming the length."""
    res = user.run("submit", "--site", "x" * 10_000, "job.sh")
    line = cli_refusal(res, "(10000 characters)", "(known: alpha, ghost)")
    assert len(res.stderr) < 300 and line.count("x") < 100, res.stderr


def test_a_sites_file_that_is_not_there_is_named_with_how_to_give_one(user):
    cli_refusal(user.run("sites", config=user.root / "nonexistent.yaml"),
                f"sites file {user.root / 'nonexistent.yaml'} not found (give --config FILE "
                "or set DIAMOND_CONFIG")


def test_an_empty_request_to_the_agent_says_what_to_write(user):
    cli_refusal(user.run("ask", ""), "ask: the request is empty: write what the agent should "
                "do, in quotes")


# ---- (4) JSON and exit codes ------------------------------------------------------------------

def test_an_unknown_job_with_json_is_a_json_error_and_a_line(user):
    """(guard) exit 2, `{"reason": "bad-input", "message"}` on stdout, the message on
    stderr too."""
    res = user.run("status", "alpha:97", "--json")
    assert res.returncode == 2, res
    reply = json.loads(res.stdout)
    assert reply == {"reason": "bad-input", "message": reply["message"]}
    assert "no job 'alpha:97' in the store" in reply["message"] in res.stderr


def test_an_unknown_workflow_with_json_is_a_json_error(user):
    res = user.run("workflow", "status", "nope", "--json")
    assert res.returncode == 2 and json.loads(res.stdout)["message"].startswith(
        "no workflow 'nope' in the store")


def test_waiting_on_an_ended_job_prints_the_job_at_once(user):
    """(guard) `wait --json` of a FAILED job: the Job (DESIGN.md's shape), exit 0."""
    _ended(user)
    job = json.loads(user.run("wait", "alpha:79", "--json", code=0).stdout)
    assert job["id"] == "alpha:79" and job["state"] == "FAILED" and job["state"] in STATES


def test_cancelling_an_ended_job_says_there_is_nothing_to_cancel(user):
    _ended(user, state=JobState.COMPLETED)
    res = user.run("cancel", "alpha:79", code=0)
    assert "alpha:79 had already ended (COMPLETED): nothing to cancel" in res.stderr
    assert not (user.fake / "calls").exists() or "scancel" not in (
        user.fake / "calls").read_text()


def test_jobs_of_an_unreachable_site_is_an_empty_list(user):
    """(guard) `jobs --site ghost --json`: the store answers, not the site: [] and exit 0."""
    assert json.loads(user.run("jobs", "--site", "ghost", "--json", code=0).stdout) == []


def test_describing_an_unreachable_site_is_a_site_failure_naming_it(user):
    """(guard) exit 1 (a site's failure, not the user's input), the site named."""
    res = user.run("describe", "ghost", code=1)
    assert res.stderr.startswith("diamond: ghost: ") and len(res.stderr.splitlines()) == 1


# ---- (5) a plain terminal, a pipe ----------------------------------------------------------------

@pytest.mark.parametrize("args", [("--help",), ("submit", "--help"), ("transfer", "--help"),
                                  ("place", "job.sh", "--explain")])
def test_help_and_explanations_print_on_an_ascii_terminal(user, args):
    """(guard) the `×` of the explanation's columns is written escaped, not a traceback."""
    res = _run_env(user, *args, env=ASCII)
    assert res.returncode in (0, 1) and "Traceback" not in res.stderr, res.stderr
    assert res.stdout.strip(), res


def test_a_long_translation_piped_to_head_ends_quietly(user):
    """(guard) `diamond translate --to pbs big.sh | head -c 20`: no BrokenPipeError."""
    user.write("big.sh", "#!/bin/bash\n#SBATCH -n 1\n" + "echo hi\n" * 200_000)
    cmd = f"{sys.executable} -m diamond_jupyter.cli translate --to pbs big.sh | head -c 20;" \
          " echo; echo rc=${PIPESTATUS[0]}"
    res = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120,
                         cwd=user.root, env=user.env(user.sites))
    assert res.stdout.startswith("#!/bin/bash\n#PBS") and res.stdout.strip().endswith("rc=0")
    assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr, res.stderr
