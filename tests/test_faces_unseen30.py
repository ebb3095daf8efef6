"""Faces sweep 30: a new user's everyday slips, without the test bed. Job states given in
lower case (`%diamond jobs --state running` was Python's "'running' is not a valid
JobState"; `diamond jobs` had no --state at all, while `GET jobs?state=running` had), the
status of a Flux array's task by the id `flux jobs` shows, a hedge no site can take ("only 0
site(s) can take a copy (none)"), paramiko's traceback printed in the cell of a kernel whose
sites file names an unreachable host, odd quoting in `%diamond`, begin times and exit codes.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import sweep_helpers
import yaml
from sweep_helpers import assert_magic_refused, cli_refusal, sbatch_calls

from diamond_jupyter.model import TASK_IDS, Job, JobSpec, JobState
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
STATES = "PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, UNKNOWN"
FLUX_ARRAY = {"1": "\u01922X4PLSfCDw", "2": "\u01922X4PLSfCDx", "3": "\u01922X4PLSfCDy"}


def _stored(user, job_id: str, state: JobState, spec: JobSpec | None = None) -> None:
    site, _, native = job_id.partition(":")
    store = Store(user.store_path)
    store.upsert_job(Job(id=job_id, site=site, native_id=native, name="sim", spec=spec))
    store.apply_state(job_id, state)
    store.close()


def _running_and_pending(user) -> None:
    _stored(user, "alpha:71", JobState.RUNNING)
    _stored(user, "alpha:72", JobState.PENDING)


def _alpha_only(user):
    """The user's sites file without its unreachable site."""
    data = yaml.safe_load(user.sites.read_text())
    data["sites"] = [s for s in data["sites"] if s["name"] == "alpha"]
    return user.write("alpha.yaml", yaml.safe_dump(data))


# ---- (1) a job state in lower case, on every face ----------------------------------------------

@pytest.mark.parametrize("given", ["running", "Running"])
def test_fault_the_magics_jobs_state_is_read_in_any_case(shell, user, capsys, given):
    _running_and_pending(user)
    shown = shell.run_line_magic("diamond", f"jobs --state {given}")
    assert "alpha:71" in str(shown) and "alpha:72" not in str(shown), shown
    assert "not a valid JobState" not in capsys.readouterr().err


def test_fault_a_magics_unknown_state_names_the_states(shell, user, capsys):
    """Was "cannot parse 'jobs --state bogus': 'bogus' is not a valid JobState"."""
    assert_magic_refused(shell, user, capsys, "jobs --state bogus", None,
                         f"argument --state: unknown state 'bogus'; expected {STATES}")


def test_fault_the_command_lines_jobs_take_a_state(user):
    """`diamond jobs --state running` was "unknown option --state (did you mean --site?)"."""
    _running_and_pending(user)
    res = user.run("jobs", "--state", "running", "--json", code=0)
    assert [(j["id"], j["state"]) for j in json.loads(res.stdout)] == [("alpha:71", "RUNNING")]
    res = user.run("jobs", "--state", "completed", code=0)
    assert res.stdout == "" and "diamond: no jobs COMPLETED in the store" in res.stderr


def test_fault_the_command_lines_unknown_state_is_exit_2_naming_the_states(user):
    res = user.run("jobs", "--state", "finished", code=2)
    assert f"unknown state 'finished'; expected {STATES}" in res.stderr.splitlines()[-1]
    assert res.stdout == ""


async def test_the_rest_apis_state_filter_matches_the_command_lines(rest):
    """(guard) `GET jobs?state=running` reads the case the others now read; a bad one is a
    400 naming the same states."""
    code, reply = await rest("GET", "jobs?state=running")
    assert code == 200 and reply["jobs"] == [], reply
    code, reply = await rest("GET", "jobs?state=bogus")
    assert code == 400 and STATES in reply["message"], reply


# ---- (2) a task of a job array by the id its scheduler shows ----------------------------------

def test_fault_a_flux_array_tasks_own_id_points_at_its_array(user):
    """A Flux site runs an array as one job per task: `diamond status` of a task's id (as
    `flux jobs` lists it) was "no job" without a hint; it now names the array."""
    spec = JobSpec.model_validate({"script": "echo hi\n", "array": {"expression": "1-3"},
                                   "metadata": {TASK_IDS: FLUX_ARRAY}}, context={"stored": True})
    _stored(user, f"fl:{FLUX_ARRAY['1']}", JobState.RUNNING, spec)
    said = user.refused("status", f"fl:{FLUX_ARRAY['2']}")
    assert f"did you mean fl:{FLUX_ARRAY['1']}?" in said, said
    said = user.refused("status", "fl:\u01922X4PLSfCDz", "--json")  # (guard) no such task
    assert "did you mean" not in said, said


def test_a_slurm_array_tasks_id_points_at_its_array(user):
    """(guard) `alpha:4242_3` as squeue prints it names alpha:4242."""
    _stored(user, "alpha:4242", JobState.RUNNING)
    said = user.refused("status", "alpha:4242_3")
    assert "no job 'alpha:4242_3' in the store (did you mean alpha:4242?" in said, said


@pytest.mark.parametrize("job_id", ["alpha:", ":12", "alpha"])
def test_a_malformed_job_id_says_what_is_accepted(user, job_id):
    """(guard) what, and what would be accepted."""
    said = user.refused("status", job_id)
    assert f"job ID {job_id!r} is malformed: expected SITE:NUMBER, e.g. alpha:42" in said


# ---- (3) a hedge no site can take --------------------------------------------------------------

def test_fault_a_hedge_no_site_can_take_says_so_plainly(user):
    """Was "hedge 2: only 0 site(s) can take a copy (none)"."""
    said = user.refused("submit", "--hedge", "2", str(user.script), "--config",
                        str(_alpha_only(user)))
    assert "hedge 2: no site can take a copy, and hedging needs two" in said, said
    assert "0 site(s)" not in said and "alpha: no nodes reported" in said, said
    assert sbatch_calls(user) == []


def test_a_hedge_of_one_copy_is_refused_by_the_parser(user):
    """(guard) --hedge 0 or 9: the bounds said."""
    for n in ("0", "9"):
        res = user.run("submit", "--hedge", n, str(user.script), code=2)
        assert "--hedge takes a number of copies from 1 to 8" in res.stderr, res.stderr


# ---- (4) the magics in a kernel whose sites file names an unreachable host ---------------------

KERNEL = textwrap.dedent("""\
    import sys
    from IPython.core.interactiveshell import InteractiveShell
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "diamond_jupyter")
    for line in sys.argv[1:]:
        print("result:", sh.run_line_magic("diamond", line), flush=True)
    """)


def _kernel(user, *lines: str) -> subprocess.CompletedProcess[str]:
    """The magics run by a plain IPython shell in a process of its own (no logging set up,
    as in a kernel), its engine in that process."""
    env = {**user.env(user.sites), "DIAMOND_ENGINE": "local", "DIAMOND_NO_WIDGETS": "1",
           "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-c", KERNEL, *lines], capture_output=True,
                          text=True, cwd=user.root, env=env, timeout=180)


def test_fault_an_unreachable_site_prints_no_library_traceback_in_the_cell(user):
    """paramiko logged ghost's failed handshake as an ERROR with its traceback: Python's
    last-resort handler printed it (30 lines) under the cell, beside the engine's one line."""
    res = _kernel(user, f"submit {user.script} --site alpha", "sites")
    assert "result: <JobHandle alpha:4242" in res.stdout, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr and "paramiko" not in res.stderr, res.stderr
    assert "Exception (client)" not in res.stderr, res.stderr


def test_the_magics_still_say_an_unreachable_site_in_one_line(user):
    """(guard) `%diamond queue ghost`: one line naming the site and why."""
    res = _kernel(user, "queue ghost")
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("diamond: ghost"), res.stderr
    assert "SSH handshake" in lines[0], lines


# ---- (5) odd quoting in %diamond ---------------------------------------------------------------

@pytest.mark.parametrize("line", ["submit 'my job.sh' --site alpha",
                                  'submit "my job.sh" --site=alpha',
                                  "submit my\\ job.sh --site alpha"])
def test_a_script_name_with_a_blank_is_read_quoted_either_way(shell, user, line):
    """(guard) single, double or backslash quoting: the one file."""
    user.write("my job.sh", "#!/bin/bash\n#SBATCH -n 1\necho hi\n")
    handle = shell.run_line_magic("diamond", line)
    assert handle is not None and handle.id == "alpha:4242", handle
    assert len(sbatch_calls(user)) == 1


def test_an_unclosed_quote_says_so_without_a_traceback(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "submit 'my job.sh --site alpha", None,
                         "No closing quotation")


def test_a_command_in_capitals_names_the_commands(shell, user, capsys):
    assert_magic_refused(shell, user, capsys, "STATUS alpha:1", None,
                         "%diamond: no command 'STATUS'; the commands: sites")


def test_a_quoted_job_id_is_the_job(shell, user):
    """(guard) `%diamond status "alpha:71"` is alpha:71."""
    _stored(user, "alpha:71", JobState.RUNNING)
    for line in ('status "alpha:71"', "status 'alpha:71'"):
        assert shell.run_line_magic("diamond", line).id == "alpha:71"


# ---- (6) begin times, exit codes and JSON shapes -----------------------------------------------

def test_fault_a_scripts_begin_past_a_century_is_exit_2_in_one_line(user):
    script = user.write("later.sh", "#!/bin/bash\n#SBATCH --begin=now+9999999999999\n"
                                    "#SBATCH -n 1\necho hi\n")
    last = cli_refusal(user.run("submit", "--site", "alpha", str(script)),
                       "begin 'now+9999999999999' is 9999999999999 s after the submission")
    assert "give a nearer one" in last and sbatch_calls(user) == []


def test_a_begin_of_two_days_is_submitted(user):
    """(guard) the same script two days on: exit 0, its directive sent as written."""
    script = user.write("later.sh", "#!/bin/bash\n#SBATCH --begin=now+2days\n#SBATCH -n 1\n"
                                    "echo hi\n")
    user.run("submit", "--site", "alpha", str(script), code=0)
    assert "#SBATCH --begin=now+2days" in sweep_helpers.submitted_script(user)


@pytest.mark.parametrize("args,code,reason", [
    (["queue", "nosuch", "--json"], 2, "bad-input"),
    (["queue", "ghost", "--json"], 1, "failed"),
    (["workflow", "status", "nosuch", "--json"], 2, "bad-input"),
    (["status", "alpha:1", "--json"], 2, "bad-input")])
def test_exit_codes_and_json_errors_follow_the_contract(user, args, code, reason):
    """(guard) DESIGN.md: 2 for bad input, 1 for a site's or the network's failure, each
    with a one-line reason on stderr and the JSON error on stdout."""
    res = user.run(*args, code=code)
    reply = json.loads(res.stdout)
    assert reply["reason"] == reason and reply["message"], reply
    assert reply["message"] in res.stderr.strip().splitlines()[-1], res.stderr


def test_every_listed_jobs_state_is_of_the_contracts_vocabulary(user):
    """(guard) `diamond jobs --json`: objects with `id` and a state of the job vocabulary,
    a state filter included."""
    _running_and_pending(user)
    for args in ((), ("--state", "pending")):
        jobs = json.loads(user.run("jobs", *args, "--json", code=0).stdout)
        assert jobs and all(j["id"] and j["state"] in STATES.split(", ") for j in jobs), jobs


def test_translate_takes_the_dialect_in_any_case(user):
    """(guard) `--to FLUX`: the flux script, the dropped directive said on stderr."""
    script = user.write("spread.sh", "#!/bin/bash\n#SBATCH -n 64\n#SBATCH --spread-job\n"
                                     "echo hi\n")
    res = user.run("translate", "--to", "FLUX", str(script), code=0)
    assert "#flux: --nslots=64" in res.stdout, res.stdout
    assert "dropped: #SBATCH --spread-job (--spread-job: no flux equivalent)" in res.stderr
