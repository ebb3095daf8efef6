"""Faces sweep 25: what people type at each face, without the test bed. On the command
line: an option given twice in its `=` and its spaced form, `--` before an id or a script
whose name starts with a dash, empty ids, ids thousands of characters long, numbers below
or far past their bound, script paths with blanks or letters beyond ASCII, a job cancelled
twice, a workflow's job cancelled directly; the REST API's query arguments given twice, NUL
bytes in ids, sites and scripts; the `%diamond` magics and the MCP tools given the same;
and a plan approved after the sites file changed. Each is refused naming what was given,
where, and what would be accepted, and loses nothing (nothing is submitted); what is
accepted runs exactly as given.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sweep_helpers
from sweep_helpers import cli_refusal, sbatch_calls

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, JobState
from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
SCRIPT = sweep_helpers.FACES_SCRIPT
LONG_ID = "alpha:" + "9" * 5000
TOO_MANY = "99999999999999999999999"
LISTED = "expected how many to list, a whole number from 1 to "  # a list's limit refused


def _calls(user) -> str:
    return (user.fake / "calls").read_text() if (user.fake / "calls").exists() else ""


# ---- (1) the command line: refused, naming what was typed ----------------------------------

@pytest.mark.parametrize("args,said", [
    (["submit", "--site=alpha", "--site=ghost", "job.sh"],
     "--site is given twice ('alpha' and 'ghost'); give it once"),
    (["submit", "--site", "alpha", "--site=ghost", "job.sh"],
     "--site is given twice ('alpha' and 'ghost'); give it once"),
    (["submit", "--site", "alpha", "-job.sh"], "unknown option -job.sh (accepted: "),
    (["submit", "--site", "alpha", "no such.sh"], "cannot read no such.sh: No such file"),
    (["submit", "--site", "alpha", "--name=", "job.sh"],
     "argument --name: expected a name, not '' (an empty or blank value"),
    (["submit", "--site", "alpha", "--nodes=0", "job.sh"],
     "argument --nodes: expected a whole number, 1 or more, not '0'"),
    (["submit", "--site", "alpha", "--gpus=-1", "job.sh"],
     "argument --gpus: expected a whole number, 0 or more, not '-1'"),
    (["submit", "--site", "auto", "--hedge=0", "job.sh"],
     "argument --hedge: --hedge takes a number of copies from 1 to 8, not '0'"),
    (["submit", "--site", "alpha", "--memory=-4G", "job.sh"],
     "--memory '-4G': expected a size such as 4G or 500M"),
    (["status", ""], "job ID '' is malformed: expected SITE:NUMBER, e.g. alpha:42"),
    (["status", LONG_ID], "(5006 characters) in the store (`diamond jobs` lists the known"),
    (["status", "alpha:77", "alpha:77"], "unrecognized arguments: alpha:77 (1 more than "
                                         "diamond status takes: JOB)"),
    (["cancel", "--", "-alpha:77"], "no job '-alpha:77' in the store (did you mean alpha:77?"),
    (["logs", "alpha:77", "--lines=-1"],
     "argument --lines: expected a whole number, 1 or more, not '-1'"),
    (["wait", "alpha:77", "--timeout", "1e400"],
     "argument --timeout: expected a number of seconds above 0 (e.g. 30), not '1e400'"),
    (["jobs", "--limit=0"], f"argument --limit: {LISTED}"
     f"{2**63 - 1}, not '0'"),
])
def test_a_mistyped_command_line_is_one_line_naming_what_was_typed(user, args, said):
    user.job("alpha:77", JobState.RUNNING)
    cli_refusal(user.run(*args), said)
    assert sbatch_calls(user) == [] and "scancel" not in _calls(user)
    assert user.job("alpha:77", JobState.UNKNOWN).state == JobState.RUNNING


@pytest.mark.parametrize("args", [["jobs", "--limit", TOO_MANY],
                                  ["workflow", "list", f"--limit={TOO_MANY}"]])
def test_fault_a_limit_past_its_bound_says_the_range_it_takes(user, args):
    """It said "limit must be a whole number from 0 to ...": 0, refused itself."""
    cli_refusal(user.run(*args), f"argument --limit: {LISTED}"
                                       f"{2**63 - 1}, not '{TOO_MANY}'")


# ---- (2) the command line: taken, and run as given -----------------------------------------

@pytest.mark.parametrize("name,args", [
    ("-job.sh", ["--"]),
    ("my job.sh", []),
    ("j\u00f6b-\u2713.sh", []),
    ("--.sh", ["--"]),
])
def test_a_script_with_blanks_unicode_or_a_leading_dash_is_submitted_as_written(user, name,
                                                                                 args):
    body = "#!/bin/bash\n#SBATCH -n 1\necho 'from " + name + "'\n"
    user.write(name, body)
    res = user.run("submit", "--site", "alpha", "--json", *args, name, code=0)
    assert json.loads(res.stdout)["id"] == "alpha:4242"
    [call] = sbatch_calls(user)
    assert f"echo 'from {name}'\n" in Path(call.split()[-1]).read_text()


def test_an_option_given_twice_with_one_value_in_both_forms_is_taken(user):
    res = user.run("submit", "--site=alpha", "--site", "alpha", "job.sh", code=0)
    assert res.stdout.strip() == "alpha:4242"
    assert len(sbatch_calls(user)) == 1


def test_an_id_after_a_double_dash_is_read_as_the_id(user):
    user.job("alpha:77", JobState.RUNNING)
    assert user.run("status", "--", "alpha:77", code=0).stdout.startswith("alpha:77\tRUNNING")


def test_cancelling_twice_sends_it_then_says_the_job_had_ended(user):
    user.job("alpha:77", JobState.RUNNING)
    first = user.run("cancel", "alpha:77", code=0)
    assert "cancel of alpha:77 sent to alpha" in first.stderr
    user.run("status", "alpha:77", code=0)  # the site no longer lists it: CANCELLED
    second = user.run("cancel", "alpha:77", code=0)
    assert "alpha:77 had already ended (CANCELLED): nothing to cancel" in second.stderr
    assert _calls(user).count("scancel") == 1


COUNTING_SBATCH = ('[ "$prog" = sbatch ] && {{ n=$(cat {d}/n 2>/dev/null || echo 500); '
                   'n=$((n+1)); echo $n > {d}/n; echo $n; }}')
TWO_STEPS = """\
name: w
steps:
  - name: a
    site: alpha
    script: "#!/bin/bash\\n#SBATCH -n 1\\necho a\\n"
  - name: b
    site: alpha
    needs: [a]
    script: "#!/bin/bash\\n#SBATCH -n 1\\necho b\\n"
"""


def test_fault_a_workflows_job_cancelled_directly_stops_the_workflow(user):
    """Its step showed CANCELLED, while the workflow stayed PENDING and the next step's job
    waited, forever, on a dependency never to be met."""
    fake = user.fake / "slurm"
    fake.write_text(fake.read_text().replace('[ "$prog" = sbatch ] && echo 4242',
                                             COUNTING_SBATCH.format(d=user.fake)))
    user.write("w.yaml", TWO_STEPS)
    wid = json.loads(user.run("workflow", "run", "w.yaml", "--json", code=0).stdout)["id"]
    user.run("cancel", "alpha:501", code=0)
    view = json.loads(user.run("workflow", "status", wid, "--json", code=0).stdout)
    assert view["state"] == "CANCELLED", view
    assert view["reason"] == "step 'a' was cancelled outside the workflow"
    assert [s["state"] for s in view["steps"]] == ["CANCELLED", "CANCELLED"]
    assert "scancel 502" in _calls(user)  # the next step's job is not left queued


# ---- (3) the REST API ----------------------------------------------------------------------

JSON = {"Content-Type": "application/json"}


def _body(**fields) -> bytes:
    return json.dumps(fields).encode()


@pytest.mark.parametrize("query,said", [
    ("jobs?site=nosuch&site=here", "query argument 'site' is given twice ('nosuch' and "
                                   "'here'); give it once"),
    ("jobs?limit=1&limit=2", "query argument 'limit' is given twice ('1' and '2')"),
    ("events?kinds=job.state&kinds=job.submitted", "query argument 'kinds' is given twice"),
])
async def test_fault_a_query_argument_given_twice_is_a_400_naming_both(rest, query, said):
    """The last one silently won: `site=nosuch&site=here` listed here's jobs."""
    code, reply = await rest("GET", query)
    assert code == 400 and said in reply["message"], (code, reply)


async def test_a_query_argument_given_twice_with_one_value_is_taken(rest):
    code, reply = await rest("GET", "jobs?limit=5&limit=5")
    assert code == 200 and reply["limit"] == 5, (code, reply)


@pytest.mark.parametrize("method,path,body,code,said", [
    ("GET", "jobs/here%3A7%007", None, 404, "no job 'here:7\\x007' in the store"),
    ("GET", "jobs/" + "here:" + "9" * 5000, None, 404, "(5005 characters) in the store"),
    ("POST", "jobs", _body(script=SCRIPT + "\x00", site="here"), 400,
     "the job script is a binary file (it contains NUL bytes at offset 33)"),
    ("POST", "jobs", _body(script=SCRIPT, site="here\x00"), 400,
     "unknown site 'here\\x00' (did you mean here? known: here)"),
    ("POST", "jobs", b'{"script": "echo hi", "site": "here", "site": "auto"}', 400,
     "the request body gives the key 'site' twice in one object; give each key once"),
    ("POST", "translate", _body(script=SCRIPT, to=""), 400,
     "unknown dialect ''; expected one of slurm, pbs, lsf, flux, sge"),
])
async def test_a_rest_request_with_nul_bytes_long_ids_or_keys_twice_names_it(
        rest, method, path, body, code, said):
    got, reply = await rest(method, path, body, headers=JSON if body else None)
    assert got == code and said in reply["message"], (got, reply)
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


async def test_cancelling_twice_over_rest_leaves_one_cancelled_job(rest):
    code, job = await rest("POST", "jobs", _body(script=SCRIPT, site="here"), headers=JSON)
    assert code == 201, job
    for _ in range(2):
        code, again = await rest("POST", f"jobs/{job['id']}/cancel")
        assert code in (200, 202) and again["id"] == job["id"], (code, again)
    assert [j["id"] for j in (await rest("GET", "jobs"))[1]["jobs"]] == [job["id"]]


# ---- (4) the magics ------------------------------------------------------------------------

@pytest.mark.parametrize("line,cell,said", [
    ("submit --site=alpha --site=ghost", SCRIPT, "--site is given twice"),
    ("submit --site alpha --name=", SCRIPT, "expected a name, not ''"),
    ("submit --site alpha --nodes=-1", SCRIPT, "expected a whole number, 1 or more, not '-1'"),
    (f"jobs --limit {TOO_MANY}", None, f"{LISTED}{2**63 - 1}"),
    ("status ''", None, "SITE:NUMBER"),
    (f"cancel {LONG_ID}", None, "(5006 characters)"),
])
def test_a_magic_given_a_value_twice_empty_or_out_of_bounds_names_it(shell, user, capsys,
                                                                     line, cell, said):
    """Marked fault: `--site=alpha --site=ghost` submitted to ghost, the last one, unsaid;
    and `--limit` past its bound said "from 0"."""
    sweep_helpers.assert_magic_refused(shell, user, capsys, line, cell, said)


# ---- (5) the MCP tools ---------------------------------------------------------------------

@pytest.mark.parametrize("tool,args,said", [
    ("status", {"job_id": "alpha:7\x007"}, "alpha:7\\x007"),
    ("cancel", {"job_id": LONG_ID}, "(5006 characters)"),
    ("submit", {"script": SCRIPT, "site": ""}, "site"),
    ("submit", {"script": SCRIPT + "\x00", "site": "alpha"}, "NUL bytes"),
    ("logs", {"job_id": "alpha:77", "lines": -1}, "lines"),
])
async def test_an_mcp_tool_given_nul_bytes_long_ids_or_bad_numbers_names_it(user, tool, args,
                                                                            said):
    said_back = await sweep_helpers.mcp_refusal(user, tool, args)
    assert said in said_back, said_back
    assert sbatch_calls(user) == []


# ---- (6) a plan approved after the sites file changed --------------------------------------

ASKED = {"script": "#!/bin/bash\n#SBATCH -J approved\necho 'as shown'\n", "site": "here"}


async def _plan_then_engine_on(tmp_path: Path, sites: str) -> tuple[dict, Federation]:
    """The plan an engine on `here_sites_file` showed, and an engine on the same store whose
    sites file was rewritten to `sites` (YAML) meanwhile (the server restarted on it)."""
    first = Federation(sweep_helpers.here_sites_file(tmp_path, tmp_path / "work"),
                       store=Store(tmp_path / "store.sqlite3"), poll_interval_s=3600,
                       min_poll_s=3600)
    await first.start(recover=False)
    try:
        with pytest.raises(NeedsApproval) as asked:
            await run_skill(SkillContext(first, approval="ask"), "submit", ASKED)
    finally:
        await first.close()
    (tmp_path / "sites.yaml").write_text(sites)
    second = Federation(tmp_path / "sites.yaml", store=Store(tmp_path / "store.sqlite3"),
                        poll_interval_s=3600, min_poll_s=3600)
    await second.start(recover=False)
    return asked.value.plan, second


def _here(tmp_path: Path, workdir: str, name: str = "here") -> str:
    commands = sweep_helpers.fake_slurm_commands(tmp_path / "here-slurm")
    return json.dumps({"sites": [{"name": name, "transport": {"kind": "local"},
                                  "workdir": workdir, "commands": commands}]})


async def test_a_plan_approved_after_its_sites_workdir_changed_is_asked_again(tmp_path):
    plan, engine = await _plan_then_engine_on(tmp_path, _here(tmp_path, str(tmp_path / "new")))
    try:
        with pytest.raises(NeedsApproval) as again:
            await run_skill(SkillContext(engine, approved=plan), "submit", ASKED)
        assert again.value.plan["changed"] == "the batch script for here would differ from " \
                                              "the approved one", again.value.plan
        assert f"--chdir={tmp_path / 'new'}/" in again.value.plan["script"]  # shown anew
        assert sweep_helpers.here_sbatch_calls(tmp_path) == []
        assert engine.jobs() == []
    finally:
        await engine.close()


async def test_a_plan_approved_after_its_site_left_the_sites_file_names_the_site(tmp_path):
    plan, engine = await _plan_then_engine_on(tmp_path, _here(tmp_path, str(tmp_path / "work"),
                                                              name="there"))
    try:
        with pytest.raises(BadInput, match=r"^unknown site 'here' \(did you mean there\? "
                                           r"known: there\)"):
            await run_skill(SkillContext(engine, approved=plan), "submit", ASKED)
        assert sweep_helpers.here_sbatch_calls(tmp_path) == []
        assert engine.jobs() == []
    finally:
        await engine.close()


async def test_a_plan_approved_on_unchanged_sites_runs_the_script_it_showed(tmp_path):
    plan, engine = await _plan_then_engine_on(tmp_path, _here(tmp_path, str(tmp_path / "work")))
    try:
        out = await run_skill(SkillContext(engine, approved=plan), "submit", ASKED)
        [call] = sweep_helpers.here_sbatch_calls(tmp_path)
        assert Path(call.split()[-1]).read_text() == plan["script"]
        assert out.job.id == "here:4242"
    finally:
        await engine.close()

