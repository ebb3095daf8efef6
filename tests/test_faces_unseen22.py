"""Faces sweep 22: a scientist's everyday day, without the test bed. The job ids and names
they mistype at each command (`status`, `logs`, `wait`, `cancel`, `release`, `fetch`), files
that are not there, dialects and sites that do not exist, each refused with exit 2 and one
line naming what was given and what would be accepted, nothing sent; the `--json` shapes
DESIGN promises (the Job with its `id` and `state`, the ranked sites of `place --explain`,
the workflow's ids); and tables a person reads lined up whatever their sites are called.
The same mistakes through the REST API, the `%diamond` magics and the MCP tools.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
import re

import pytest
import sweep_helpers
from sweep_helpers import sbatch_calls

from diamond_jupyter.model import JobState, describe_start

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES

SCRIPT = sweep_helpers.FACES_SCRIPT
STATES = {"PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "UNKNOWN"}
MALFORMED = "is malformed: expected SITE:NUMBER, e.g. alpha:42"


def _one_line_refusal(res, *said: str) -> None:
    """Exit 2, nothing on stdout, one line on stderr holding each of `said`."""
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("diamond: "), res.stderr
    for s in said:
        assert s in lines[0], res.stderr


def _submitted(user) -> dict:
    res = user.run("submit", "--site", "alpha", "--json", str(user.script), code=0)
    return json.loads(res.stdout)


# ---- (1) the command line: mistyped ids, names and files -----------------------------------

@pytest.mark.parametrize("command", ["status", "logs", "cancel", "release", "fetch", "wait"])
def test_a_job_id_without_its_site_is_refused_showing_the_shape(user, command):
    _one_line_refusal(user.run(command, "4242"), "job ID '4242'", MALFORMED)


@pytest.mark.parametrize("command", ["status", "cancel", "logs"])
def test_a_well_formed_id_of_no_known_job_points_at_diamond_jobs(user, command):
    _one_line_refusal(user.run(command, "alpha:9999"), "no job 'alpha:9999' in the store",
                      "`diamond jobs`")
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("args,said", [
    (("submit", "--site", "nosuch", "job.sh"), "unknown site 'nosuch' (known: alpha, ghost)"),
    (("submit", "nofile.sh"), "cannot read nofile.sh: No such file or directory"),
    (("place", "--explain", "nofile.sh"), "cannot read nofile.sh"),
    (("translate", "--to", "cobol", "job.sh"),
     "unknown dialect 'cobol'; expected one of slurm, pbs, lsf, flux, sge"),
    (("translate", "--to", "pbs", "--from", "cobol", "job.sh"), "unknown dialect 'cobol'"),
    (("translate", "--to", "pbs", "nofile.sh"), "cannot read nofile.sh"),
    (("workflow", "run", "nofile.yaml"), "cannot read nofile.yaml"),
    (("workflow", "run", "job.sh"), "expected a mapping with `name` and `steps`"),
    (("workflow", "status", "nope"), "no workflow 'nope' in the store"),
    (("workflow", "cancel", "nope"), "`diamond workflow list` lists them"),
])
def test_a_mistyped_name_or_file_is_one_line_naming_it(user, args, said):
    _one_line_refusal(user.run(*args), said)
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("option", ["--timeout", "--poll"])
def test_a_wait_time_that_is_no_number_says_what_is_expected(user, option):
    res = user.run("wait", option, "abc", "alpha:1", code=2)
    assert f"argument {option}: expected a number of seconds above 0 (e.g. 30), not 'abc'" \
        in res.stderr


def test_a_time_limit_that_is_no_duration_is_refused_before_anything_is_sent(user):
    res = user.run("submit", "--site", "alpha", "--time", "abc", "job.sh", code=2)
    assert "--time" in res.stderr.splitlines()[-1] and "'abc'" in res.stderr
    assert sbatch_calls(user) == []


# ---- (2) the command line: what the scientist reads ----------------------------------------

def test_submit_json_prints_the_job_with_a_copyable_id_and_a_documented_state(user):
    job = _submitted(user)
    assert job["id"] == "alpha:4242" and job["state"] in STATES
    assert re.fullmatch(r"[\w.-]+:\d+", job["id"])  # no blanks or quotes to trip a copy


def test_the_id_submit_prints_is_the_one_status_and_jobs_take(user):
    job = _submitted(user)
    status = json.loads(user.run("status", "--json", job["id"], code=0).stdout)
    listed = json.loads(user.run("jobs", "--json", code=0).stdout)
    assert status["id"] == job["id"] and status["state"] in STATES
    assert [j["id"] for j in listed] == [job["id"]]


def test_a_submission_token_is_taken_where_a_job_id_is(user):
    job = _submitted(user)
    status = json.loads(user.run("status", "--json", job["token"], code=0).stdout)
    assert status["id"] == job["id"]


def test_status_text_is_one_tab_separated_line_of_id_state_and_name(user):
    job = _submitted(user)
    out = user.run("status", job["id"], code=0).stdout
    assert out.splitlines() == [f"{job['id']}\t{job['state']}\tjob"]


def test_cancel_json_prints_the_job_and_says_the_cancel_is_on_its_way(user):
    job = _submitted(user)
    res = user.run("cancel", "--json", job["id"], code=0)
    assert json.loads(res.stdout)["id"] == job["id"]
    assert f"cancel of {job['id']} sent to alpha" in res.stderr
    assert f"`diamond status {job['id']}`" in res.stderr


def test_release_says_when_the_job_starts_and_how_to_follow_it(user):
    job = _submitted(user)
    res = user.run("release", job["id"], code=0)
    assert f"release of {job['id']} sent to alpha; it starts when alpha schedules it" \
        in res.stderr


def test_wait_past_its_timeout_exits_1_naming_the_job_and_its_state(user):
    job = _submitted(user)
    res = user.run("wait", "--timeout", "1", job["id"], code=1)
    assert f"timed out after 1s waiting for {job['id']} (state PENDING)" in res.stderr


def test_fault_logs_of_a_job_not_started_say_so_for_each_stream_and_exit_0(user):
    """Exit 1 is a failure of a site or the network (DESIGN); a job not started yet has
    nothing to show, which is no failure: exit 0, saying so."""
    job = _submitted(user)
    res = user.run("logs", job["id"], code=0)
    assert res.stdout == ""
    assert "stdout log" in res.stderr and "stderr log" in res.stderr
    assert res.stderr.count("(the job has not started)") == 2
    assert f"{job['id']} has not started (PENDING): no logs to show yet, not an error " \
           "(exit 0)" in res.stderr
    assert json.loads(user.run("logs", job["id"], "--json", code=0).stdout)["missing"]


def test_logs_missing_for_a_running_job_still_exit_1(user):
    """A running job's log not on its site is worth exit 1: the site lost or moved it."""
    user.job("alpha:4343", JobState.RUNNING, workdir=str(user.root),
             stdout_path=str(user.root / "gone.out"))
    res = user.run("logs", "alpha:4343", code=1)
    assert "is missing on alpha" in res.stderr and "not an error" not in res.stderr


def test_fetch_of_a_job_without_results_says_so_and_writes_nothing(user):
    job = _submitted(user)
    res = user.run("fetch", job["id"], "out", code=0)
    assert f"{job['id']} has no result files to fetch (yet)" in res.stderr
    assert not (user.root / "out").exists()


def test_translate_writes_the_script_alone_on_stdout(user):
    res = user.run("translate", "--to", "pbs", "job.sh", code=0)
    assert res.stdout.startswith("#!/bin/bash\n#PBS ") and "echo hi" in res.stdout
    assert "#SBATCH" not in res.stdout


def test_place_explain_json_carries_each_site_with_its_estimates_and_reasons(user):
    res = user.run("place", "--explain", "--json", "job.sh")
    ranked = json.loads(res.stdout)["ranked"]
    assert {r["site"] for r in ranked} == {"alpha", "ghost"}
    for r in ranked:
        assert {"raw_start", "start_bound", "calibration_samples", "estimated_start"} <= set(r)
        assert not r["feasible"] and r["reasons"]


def test_fault_place_explain_lines_up_reasons_of_sites_no_column_fits(user):
    """Rows of sites that cannot run the job were padded to the header's widths only: a site
    name longer than SITE or a verdict longer than VERDICT pushed its reason along, so the
    reasons of `alpha` (INCOMPATIBLE) and `ghost` (UNREACHABLE) began at different columns."""
    out = user.run("place", "--explain", "job.sh").stdout
    rows = {ln.split()[0]: ln for ln in out.splitlines()[1:] if ln.split()
            and ln.split()[0] in {"SITE", "alpha", "ghost"}}
    starts = {name: rows[name].index(word) for name, word in
              [("alpha", "no nodes"), ("ghost", "site unreachable")]}
    assert len(set(starts.values())) == 1, out
    verdicts = {rows["SITE"].index("VERDICT"), rows["alpha"].index("INCOMPATIBLE"),
                rows["ghost"].index("UNREACHABLE")}
    assert len(verdicts) == 1, out


@pytest.mark.parametrize("start_s,bound_s,said", [
    (59.6, 100, "≈ 1 min (90%: < 2 min)"),
    (3590, 3599, "≈ 1.0 h (90%: < 1.0 h)"),
    (3 * 86400, 9 * 86400, "≈ 3.0 d (90%: < 9.0 d)"),
])
def test_fault_a_predicted_start_is_said_in_the_unit_it_rounds_to(start_s, bound_s, said):
    """The job card's, `place`'s and the agent's start said "≈ 60 s" for 59.6 s, "≈ 60 min"
    for 59.9 min, and "≈ 72.0 h (90%: < 216.0 h)" for a queue of days."""
    assert describe_start(start_s, bound_s) == said


@pytest.mark.parametrize("start_s,said", [(20, "≈ 20 s"), (170, "≈ 3 min"),
                                          (30 * 3600, "≈ 30.0 h")])
def test_a_predicted_start_within_its_unit_is_said_as_before(start_s, said):
    assert describe_start(start_s, None) == said


def test_fault_sites_keeps_its_columns_when_a_site_name_is_long(user):
    """Names were padded to ten characters: a longer one pushed its scheduler and state to
    the right of every other row's."""
    long_name = user.alpha.replace("name: alpha", "name: frontier-gpu-queue")
    user.write("sites.yaml", user.sites.read_text().replace("sites:\n", f"sites:\n{long_name}"))
    out = user.run("sites", "--offline", code=0).stdout.splitlines()
    assert [ln.split()[0] for ln in out] == ["frontier-gpu-queue", "alpha", "ghost"], out
    assert len({ln.index("not asked") for ln in out}) == 1, out
    schedulers = zip(out, ["slurm", "slurm", "pbs"], strict=True)
    assert len({ln.index(word) for ln, word in schedulers}) == 1, out


def test_fault_workflow_status_keeps_its_columns_when_a_step_name_is_long(user):
    """Step names were padded to sixteen characters: a longer one pushed its state, site and
    job to the right of the other steps'."""
    user.write("wf.yaml", "name: demo\nsteps:\n  - name: preprocess-the-raw-dataset\n"
                          "    site: alpha\n    script_file: job.sh\n  - name: fit\n"
                          "    site: alpha\n    script_file: job.sh\n"
                          "    needs: [preprocess-the-raw-dataset]\n")
    run = json.loads(user.run("workflow", "run", "--json", "wf.yaml", code=0).stdout)
    assert [s["name"] for s in run["steps"]] == ["preprocess-the-raw-dataset", "fit"]
    assert run["state"] in STATES and all(s["state"] in STATES for s in run["steps"])
    out = user.run("workflow", "status", run["id"], code=0).stdout.splitlines()
    assert out[0].startswith(f"{run['id']}\t"), out
    assert len({ln.index("PENDING") for ln in out[1:]}) == 1, out


def test_workflow_cancel_says_each_step_is_cancelled_and_status_agrees(user):
    user.write("wf.yaml", "name: demo\nsteps:\n  - name: a\n    site: alpha\n"
                          "    script_file: job.sh\n")
    wid = json.loads(user.run("workflow", "run", "--json", "wf.yaml", code=0).stdout)["id"]
    cancelled = user.run("workflow", "cancel", wid, code=0).stdout
    assert f"{wid}\tCANCELLED\tdemo (cancelled by request)" in cancelled
    status = json.loads(user.run("workflow", "status", "--json", wid, code=0).stdout)
    assert status["state"] == "CANCELLED"
    assert [(s["name"], s["state"]) for s in status["steps"]] == [("a", "CANCELLED")]


# ---- (3) the REST API ----------------------------------------------------------------------

@pytest.mark.parametrize("method,path", [
    ("GET", "jobs/4242"), ("POST", "jobs/4242/cancel"), ("POST", "jobs/4242/release"),
    ("GET", "jobs/4242/logs"),
])
async def test_a_rest_job_id_without_its_site_names_the_shape(rest, method, path):
    code, reply = await rest(method, path, b"" if method == "POST" else None)
    assert code in (400, 404), (code, reply)
    assert "job ID '4242'" in reply["message"] and "SITE:NUMBER" in reply["message"]


async def test_fault_a_rest_delete_of_a_job_is_a_json_405_pointing_at_cancel(rest):
    """DELETE jobs/ID answered a bare 405: which method cancels was left to guess."""
    code, job = await rest("POST", "jobs", json.dumps(
        {"script": "echo hi\n", "site": "here"}).encode())
    assert code == 201, job
    code, reply = await rest("DELETE", f"jobs/{job['id']}")
    assert code == 405 and reply["reason"] == "method-not-allowed", (code, reply)
    assert f"POST jobs/{job['id']}/cancel" in reply["message"], reply
    code, again = await rest("GET", f"jobs/{job['id']}")
    assert code == 200 and again["state"] == job["state"]  # nothing was done to it


async def test_a_rest_delete_of_a_job_says_which_methods_the_route_allows(
        http_server_client, jp_base_url, jp_auth_header):
    resp = await http_server_client.fetch(
        jp_base_url.rstrip("/") + "/diamond/api/jobs/here:1", method="DELETE",
        headers=jp_auth_header, raise_error=False)
    assert resp.code == 405 and resp.headers.get("Allow") == "GET", (resp.code, resp.headers)
    assert resp.headers["Content-Type"].startswith("application/json")


async def test_a_rest_delete_of_a_job_keeps_jupyters_token_and_xsrf_checks(rest):
    """(guard) Without the token, or with a cookie but no XSRF token: 403, not the 405."""
    code, reply = await rest("DELETE", "jobs/here:1", auth=False)
    assert code == 403 and reply["reason"] == "forbidden", (code, reply)
    code, reply = await rest("DELETE", "jobs/here:1", auth=False,
                             headers={"Cookie": "_xsrf=abc"})
    assert code == 403 and "_xsrf" in reply["message"], (code, reply)


async def test_a_rest_unknown_job_is_a_404_naming_it(rest):
    code, reply = await rest("GET", "jobs/here:9999")
    assert code == 404 and "here:9999" in reply["message"], (code, reply)


async def test_a_rest_submit_to_an_unknown_site_lists_the_known_ones(rest):
    code, reply = await rest("POST", "jobs", json.dumps(
        {"script": "echo hi\n", "site": "hree"}).encode())
    said = "unknown site 'hree' (did you mean here? known: here)"
    assert code == 400 and said in reply["message"], reply
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


async def test_a_rest_submit_returns_the_job_status_then_reads_back(rest):
    code, job = await rest("POST", "jobs", json.dumps(
        {"script": "echo hi\n", "site": "here"}).encode())
    assert code == 201 and job["state"] in STATES, job
    code, again = await rest("GET", f"jobs/{job['id']}")
    assert code == 200 and again["id"] == job["id"]


async def test_a_rest_body_that_is_not_json_is_a_400_saying_so(rest):
    code, reply = await rest("POST", "jobs", b"script: echo hi")
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert "JSON" in reply["message"]


async def test_a_rest_translate_to_an_unknown_dialect_lists_the_accepted(rest):
    code, reply = await rest("POST", "translate", json.dumps(
        {"script": SCRIPT, "to": "cobol"}).encode())
    assert code == 400 and "unknown dialect 'cobol'" in reply["message"], (code, reply)
    assert "slurm, pbs, lsf, flux, sge" in reply["message"]


async def test_a_rest_place_ranks_every_site_with_a_reason(rest):
    code, reply = await rest("POST", "place", json.dumps({"script": SCRIPT}).encode())
    assert code == 200, (code, reply)
    [here] = reply["ranked"]
    assert here["site"] == "here" and (here["feasible"] or here["reasons"]), here


async def test_a_rest_unknown_workflow_is_a_404_naming_it(rest):
    code, reply = await rest("GET", "workflows/wf-nope")
    assert code == 404 and "wf-nope" in reply["message"], (code, reply)


# ---- (4) the magics ------------------------------------------------------------------------

@pytest.mark.parametrize("line,said", [
    ("status 4242", MALFORMED),
    ("cancel alpha:9999", "no job 'alpha:9999' in the store"),
    ("logs nope", MALFORMED),
])
def test_a_magic_with_a_mistyped_job_says_which(shell, user, capsys, line, said):
    sweep_helpers.assert_magic_refused(shell, user, capsys, line, None, said)


def test_a_magic_submit_to_an_unknown_site_lists_the_known_ones(shell, user, capsys):
    sweep_helpers.assert_magic_refused(shell, user, capsys, "submit --site nosuch", SCRIPT,
                                       "unknown site 'nosuch' (known: alpha, ghost)")


def test_fault_a_magic_place_takes_the_command_lines_explain(shell, user, capsys):
    """`%%diamond place --explain` (as `diamond place FILE --explain` is written) was refused
    as an unknown option with an empty list of accepted ones."""
    shell.run_cell_magic("diamond", "place --explain", SCRIPT)
    said = capsys.readouterr()
    assert "unknown option" not in said.err, said.err
    assert "SITE" in said.out and "VERDICT" in said.out and "alpha" in said.out, said.out
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("line,nearest", [
    ("wait alpha:1", "(did you mean %diamond status? its card follows the job live until it "
                     "ends)"),
    ("stauts alpha:1", "(did you mean %diamond status?)"),
    ("frobnicate", "no command 'frobnicate'; the commands"),
])
def test_fault_a_magic_that_is_no_command_lists_them_and_the_nearest(shell, user, capsys,
                                                                     line, nearest):
    """`%diamond wait` (a command of the command line only) got argparse's "argument cmd:
    invalid choice" and no word of which magic does that."""
    word = line.split()[0]
    sweep_helpers.assert_magic_refused(shell, user, capsys, line, None,
                                       f"diamond: %diamond: no command {word!r}")
    shell.run_line_magic("diamond", line)
    err = capsys.readouterr().err
    assert nearest in err and "invalid choice" not in err, err
    assert "the commands: sites, engine, help, queue, jobs, status, cancel, " in err, err
    assert err.rstrip().endswith("(`%diamond help` shows each)\x1b[0m"), repr(err)


def test_fault_a_magic_command_taking_no_options_says_none_are_accepted(shell, user, capsys):
    sweep_helpers.assert_magic_refused(shell, user, capsys, "status alpha:1 --json", None,
                                       "unknown option --json (accepted: none)")


# ---- (5) the MCP tools ---------------------------------------------------------------------

@pytest.mark.parametrize("tool,args,said", [
    ("status", {"job_id": "4242"}, MALFORMED),
    ("submit", {"spec": {"script": "echo hi\n"}, "site": "nosuch"}, "unknown site 'nosuch'"),
    ("cancel", {"job_id": "alpha:9999"}, "no job 'alpha:9999'"),
    ("logs", {"job_id": "alpha"}, MALFORMED),
])
async def test_an_mcp_tool_given_a_mistyped_id_or_site_says_which(user, tool, args, said):
    said_back = await sweep_helpers.mcp_refusal(user, tool, args)
    assert said in said_back, said_back
    assert sbatch_calls(user) == []
