"""Security sweep 43: a hostile site's JSON (squeue --json, slurmrestd, `flux jobs`) of wrong
types and numbers past any status, a slurmrestd that quotes its token back, begin times past
any clock, the names sbatch and bsub take as lists, and an approved move of a job that has
changed since its approval.

A `job_state` that was an object or a number (or a list holding one) ended the status query
in a pydantic error, not a site's error; an exit code past 64 bits ended it in SQLite's
OverflowError: the job was never read again. A `flux jobs` id given as text was kept as
written (`5 --uid=0`). A slurmrestd error quoting the JWT sent was kept
in the job's reason in the store. `now+99999999999999999999` reached `#SBATCH --begin=` and
flux's `--begin-time=+...s` (numbers both wrap or clip: a start at once). An approved move of a
job that ended meanwhile submitted it again elsewhere (the work run twice), and one that
started meanwhile was cancelled running.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import sweep_helpers
import test_dependency_sites
from stand_in_slurmrestd import StandInSlurmrestd
from sweep_helpers import here_spec, mcp_refusal, rest_refused, sbatch_calls
from test_dependency_sites import submits
from test_slurmrest_submit_lost import JOB, _fed

from diamond_jupyter.dialects import get_commands, get_script_dialect
from diamond_jupyter.dialects.begin_time import MOST_BEGIN_AFTER_S
from diamond_jupyter.federation import Federation
from diamond_jupyter.federation_plan import PlanChanged
from diamond_jupyter.model import BadInput, JobSpec, JobState, SiteError

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES
engine = sweep_helpers.here_engine
fed = test_dependency_sites.fed
SCRIPT = sweep_helpers.FACES_SCRIPT
SUBMITTED = '{"job_id": 4243, "errors": [], "warnings": []}'


def _sent_script(tmp_path: Path) -> str:
    [call] = sweep_helpers.here_sbatch_calls(tmp_path)
    return Path(call.split()[-1]).read_text()


class HostileCtld:
    """A slurmrestd stand-in's answers: a submit is job 4243; `GET jobs` lists it with the
    fields of `listed` (the next of them at each query, the last kept)."""

    def __init__(self, *listed: dict[str, Any]) -> None:
        self.listed = list(listed)
        self.submitted: dict[str, Any] | None = None

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, str]:
        if path.endswith("/job/submit"):
            job = json.loads(body)["job"]
            self.submitted = {**JOB, "job_id": 4243, "name": job.get("name"),
                              "comment": job.get("comment"), "user_name": "u",
                              "job_state": "PENDING", "start_time": 0}
            return 200, SUBMITTED
        if path.endswith("/jobs"):
            fields = self.listed.pop(0) if len(self.listed) > 1 else self.listed[0]
            jobs = [{**self.submitted, **fields}] if self.submitted else []
            return 200, json.dumps({"meta": {}, "errors": [], "jobs": jobs})
        return 500, json.dumps({"errors": [{"error": f"no {path} here"}]})


async def _refreshed_through(tmp_path: Path, ctld: HostileCtld, queries: int) -> list[Any]:
    """A job submitted to the stand-in, then its status asked afresh `queries` times: what
    each query gave (the Job, or the exception), the store kept in tmp_path."""
    seen: list[Any] = []
    async with StandInSlurmrestd(answer=ctld.answer) as srv:
        engine = await _fed(tmp_path, srv.url)
        await engine.start(recover=False)
        try:
            job = await engine.submit(JobSpec(name="x", command="true",
                                              working_directory="/home/u/run"), "rest",
                                      force=True)
            for _ in range(queries):
                try:
                    seen.append(await engine.status(job.id, refresh=True))
                except Exception as e:  # noqa: BLE001 (what the query ended in is the point)
                    seen.append(e)
        finally:
            await engine.close()
    return seen


# ---- (1) a hostile site's JSON of wrong types and numbers ----------------------------------------

@pytest.mark.parametrize("state", [{"current": "RUNNING"}, 7, ["RUNNING", {"x": 1}], [3]])
async def test_fault_a_job_state_of_another_type_leaves_the_job_read_again(tmp_path, state):
    """slurmrestd's `job_state` as an object, a number or a list holding one: the status
    query raised pydantic's ValidationError (a TypeError for the list), not a site's error.
    Now the record says no state (the job stays as it was), and the next answer is read."""
    seen = await _refreshed_through(tmp_path, HostileCtld({"job_state": state},
                                                          {"job_state": ["COMPLETED"]}), 2)
    assert [type(s).__name__ for s in seen] == ["Job", "Job"], seen
    assert seen[0].state == JobState.PENDING and seen[1].state == JobState.COMPLETED, seen


@pytest.mark.parametrize("exit_code", [
    {"status": ["FAILED"], "return_code": {"set": True, "number": 10**30}},
    {"status": ["FAILED"], "return_code": -(10**25)}])
async def test_fault_an_exit_code_past_64_bits_fails_the_job_without_a_code(tmp_path,
                                                                          exit_code):
    """A FAILED job whose return code passed 64 bits: SQLite's OverflowError on each query,
    the job never recorded as ended."""
    [job] = await _refreshed_through(tmp_path, HostileCtld(
        {"job_state": ["FAILED"], "exit_code": exit_code}), 1)
    assert job.state == JobState.FAILED and job.exit_code is None, job


def test_fault_flux_jobs_return_code_past_any_status_is_no_exit_code():
    """(the same at `flux jobs --json`: its returncode was kept, then not storable)"""
    flux = get_commands("flux")
    [st] = flux.parse_status(json.dumps({"jobs": [
        {"id": 1234, "state": 64, "result": 2, "returncode": 10**40}]}))
    assert st.state == JobState.FAILED and st.exit_code is None, st
    [ok] = flux.parse_status(json.dumps({"jobs": [
        {"id": 1234, "state": 64, "result": 2, "returncode": 3}]}))
    assert ok.exit_code == 3  # (guard) a real code is kept


@pytest.mark.parametrize("job_id", [1e400, 10**40, -5, True, {"id": 5}])
def test_a_flux_job_id_that_is_no_fluid_is_left_out_and_said(job_id):
    """(guard) ids flux never prints (infinite, past 64 bits, negative, a boolean, an
    object): left out, each said, never an id sent back to flux."""
    _flux_id_left_out(job_id)


@pytest.mark.parametrize("job_id", ["5 --uid=0", "../../x", "12;id"])
def test_fault_a_flux_job_id_of_text_no_id_spelling_reads_is_left_out(job_id):
    """Text ids were kept as given (`5 --uid=0` a job's native id, stopped only later by
    the site's own check of the ids it is sent)."""
    _flux_id_left_out(job_id)


def _flux_id_left_out(job_id: Any) -> None:
    skipped: list[str] = []
    out = get_commands("flux").parse_status(json.dumps({"jobs": [
        {"id": job_id, "state": 8}, {"id": 77, "state": 8}]}), skipped)
    assert [s.native_id for s in out] == ["77"], out
    assert len(skipped) == 1 and "not a job with an id" in skipped[0], skipped


@pytest.mark.parametrize("command,what", [("flux", "flux jobs --json"),
                                          ("slurm", "squeue --json")])
def test_json_nested_a_hundred_thousand_deep_is_a_sites_error(command, what):
    """(guard) no RecursionError: a SiteError saying the nesting."""
    parse = get_commands(command)
    text = '{"jobs": [{"id": 5, "job_id": 5, "x": ' + "[" * 100000 + "]" * 100000 + "}]}"
    reader = parse.parse_status if command == "flux" else parse.parse_status_json
    with pytest.raises(SiteError, match="nested too deeply"):
        reader(text)


# ---- (2) a slurmrestd that quotes its token back ----------------------------------------------

async def test_fault_a_token_quoted_back_in_a_refusal_is_kept_nowhere(tmp_path):
    """slurmrestd (or a proxy before it) refusing the submit with the JWT in its words: the
    job's reason in the store held the token. Now every face's words and the store have it
    redacted."""
    def refuse(method: str, path: str, body: bytes) -> tuple[int, str]:
        token = (tmp_path / "jwt").read_text()
        return 500, json.dumps({"errors": [{"error": f"token {token} refused",
                                            "description": f"X-SLURM-USER-TOKEN: {token}"}]})
    async with StandInSlurmrestd(answer=refuse) as srv:
        engine = await _fed(tmp_path, srv.url)
        await engine.start(recover=False)
        try:
            with pytest.raises(BadInput) as e:
                await engine.submit(JobSpec(name="x", command="true",
                                            working_directory="/home/u/run"), "rest",
                                    force=True)
        finally:
            await engine.close()
    token = (tmp_path / "jwt").read_text()
    said = Federation.error_said(e.value)
    assert token not in said and "refused" in said, said
    assert token.split(".")[1].encode() not in sweep_helpers.store_files(tmp_path)


# ---- (3) begin times past any clock -------------------------------------------------------------

@pytest.mark.parametrize("begin", ["now+99999999999999999999", "now+9999999999weeks"])
async def test_fault_a_begin_time_past_a_century_is_refused_over_rest(rest, begin):
    """Reached `#SBATCH --begin=` as written: sbatch's numbers wrap past 64 bits."""
    said = await rest_refused(rest, here_spec({"begin": begin}), "begin")
    assert "after the submission, past the" in said and "(100 years)" in said, said
    assert "now+2days" in said, said


async def test_fault_a_flux_begin_time_past_a_century_is_refused_by_the_cli(user):
    """A flux script's `--begin-time=+...d` read into a begin 10**20 days on: refused with
    exit 2 before anything is sent."""
    script = user.write("flux.sh", "#!/bin/bash\n#flux: -n 1\n"
                                   "#flux: --begin-time=+99999999999999999999d\necho hi\n")
    said = user.refused("submit", "--site", "alpha", str(script))
    assert "past the" in said and "begin" in said, said
    assert sbatch_calls(user) == []


async def test_a_begin_time_of_a_few_days_still_reaches_sbatch(engine, tmp_path):
    """(guard) now+2days and a date are rendered as given."""
    await engine.submit(JobSpec(script="echo hi\n", begin="now+2days"), "here")
    assert "#SBATCH --begin=now+2days" in _sent_script(tmp_path)
    assert MOST_BEGIN_AFTER_S >= 100 * 365 * 86400


async def test_a_begin_time_no_scheduler_reads_is_refused_by_mcp(user):
    """(guard) `--uid=0` as a begin: refused, never dropped (the job would start at once)."""
    said = await mcp_refusal(user, "submit", {"spec": {"script": SCRIPT, "begin": "--uid=0"},
                                              "site": "alpha"})
    assert "begin '--uid=0' is not a start time" in said, said
    assert sbatch_calls(user) == []


# ---- (4) names sbatch and bsub take as lists ----------------------------------------------------

@pytest.mark.parametrize("field,value,directive", [
    ("reservation", "r1,--uid=0", "--reservation"), ("queue", "q,--uid=0", "--partition"),
    ("mail_user", "me@x,--uid=0", "--mail-user"), ("qos", "n'x", "--qos")])
async def test_an_option_after_a_comma_stays_one_directives_value(engine, tmp_path, field,
                                                                  value, directive):
    """(guard) a list entry spelled as an option is inside `--opt=VALUE` (one argv word to
    sbatch), on its one line: no second option."""
    await engine.submit(JobSpec.model_validate({"script": "echo hi\n", field: value}), "here")
    lines = [ln for ln in _sent_script(tmp_path).splitlines() if "uid=0" in ln or "n'x" in ln]
    assert len(lines) == 1 and lines[0].startswith(f"#SBATCH {directive}="), lines


@pytest.mark.parametrize("dialect,line", [("lsf", "#BSUB -U r1,--uid=0"),
                                          ("pbs", None), ("flux", None), ("sge", None)])
def test_a_reservation_list_entry_spelled_as_an_option_is_one_word_or_dropped(dialect, line):
    """(guard) bsub's `-U` takes the list as one word; the schedulers without a reservation
    by name drop it, saying so."""
    out = get_script_dialect(dialect).render_script(
        JobSpec(script="echo hi\n", reservation="r1,--uid=0"))
    said = [ln for ln in out.script.splitlines() if "uid=0" in ln]
    assert said == ([line] if line else []), said
    if line is None:
        assert any("reservation r1,--uid=0" in w for w in out.warnings), out.warnings


@pytest.mark.parametrize("feature", ["a' -q x", 'a"b', "a;b", "a b"])
def test_a_constraint_with_quotes_or_words_is_refused_naming_its_position(feature):
    """(guard) a constraint expression is features joined by & | with groups: anything
    else is refused with where it stands."""
    with pytest.raises(BadInput, match="expected features joined by & or |"):
        get_script_dialect("slurm").render_script(
            JobSpec(script="echo hi\n", constraints={"features": [feature]}))


async def test_shell_syntax_in_a_reservation_or_qos_never_runs(engine, tmp_path):
    """(guard) the rendered script, run by bash, makes no file of the value."""
    await engine.submit(JobSpec.model_validate({
        "script": "echo hi\n", "reservation": "r$(touch${IFS}PWNED)",
        "qos": "`touch${IFS}PWNED`"}),
        "here")
    run = tmp_path / "run"
    run.mkdir()
    res = subprocess.run(["bash", "-c", _sent_script(tmp_path)], cwd=run,
                         capture_output=True, text=True, timeout=60)
    assert "hi" in res.stdout, res.stderr
    assert not list(tmp_path.rglob("PWNED"))


# ---- (5) an approved move of a job that changed since --------------------------------------------

async def _planned_move(fed) -> tuple[str, dict[str, Any]]:
    job = await fed.submit(JobSpec(command="echo hi", resources={"tasks": 1}), "alpha")
    plan = await fed.plan_resubmit(job.id)
    assert plan["job_state"] == "PENDING" and plan["cancel"] == job.id, plan
    return job.id, plan


def _scancels(root: Path, site: str) -> list[str]:
    calls = root / f"fake-{site}" / "calls"
    return [c for c in calls.read_text().splitlines() if c.startswith("scancel")]


@pytest.mark.parametrize("meanwhile", [JobState.COMPLETED, JobState.RUNNING])
async def test_fault_an_approved_move_of_a_job_that_changed_since_runs_nothing(
        fed, tmp_path, meanwhile):
    """The user approved moving a waiting job; it then ended (the move submitted it again
    elsewhere: its work run twice) or started (the move cancelled it running). Now the
    move is refused as changed, nothing sent anywhere."""
    job_id, plan = await _planned_move(fed)
    fed.journal.apply(job_id, meanwhile, exit_code=0 if meanwhile.terminal else None,
                      source="wrapper")
    with pytest.raises(PlanChanged) as e:
        await fed.resubmit(job_id, plan=plan)
    said = str(e.value)
    assert f"{job_id} is {meanwhile.value} now (it was PENDING when the move was shown)" \
        in said, said
    assert "nothing was submitted or cancelled" in said, said
    assert submits(tmp_path, plan["site"]) == [] and _scancels(tmp_path, "alpha") == []


async def test_fault_an_approved_move_of_one_job_cannot_move_another(fed, tmp_path):
    """The approval names the job it moves: given for another job, it runs nothing."""
    job_id, plan = await _planned_move(fed)
    other = test_dependency_sites.known(fed, "alpha", "1234")
    with pytest.raises(PlanChanged, match=f"the approved move was of {job_id}, not alpha:1234"):
        await fed.resubmit(other.id, plan=plan)
    assert submits(tmp_path, plan["site"]) == [] and _scancels(tmp_path, "alpha") == []


async def test_an_approved_move_of_a_job_still_waiting_runs_what_was_shown(fed, tmp_path):
    """(guard) the move goes ahead: the script shown is the one sent, the old job
    cancelled after."""
    job_id, plan = await _planned_move(fed)
    new, old, kept = await fed.resubmit(job_id, plan=plan)
    assert new.site == plan["site"] and old.id == job_id and kept is None
    [sent] = submits(tmp_path, plan["site"])
    assert sent.split()[-1].endswith("job.sh")
    assert hashlib.sha256(Path(sent.split()[-1]).read_bytes()).hexdigest() == \
        plan["submit"]["script_sha256"]
    assert _scancels(tmp_path, "alpha")


async def test_an_approved_move_of_a_job_that_starts_during_the_submit_keeps_both(
        fed, tmp_path, monkeypatch):
    """The job was still waiting when the move was checked and started while the new job
    was being submitted: it is not cancelled running (the approval was to cancel a
    waiting job); both jobs are kept and the answer names both and how to cancel one."""
    job_id, plan = await _planned_move(fed)
    submit_approved = fed.submit_approved

    async def started_meanwhile(*args, **kw):
        new = await submit_approved(*args, **kw)
        fed.journal.apply(job_id, JobState.RUNNING, source="wrapper")  # its start, arriving
        return new

    monkeypatch.setattr(fed, "submit_approved", started_meanwhile)
    new, old, kept = await fed.resubmit(job_id, plan=plan)
    assert len(submits(tmp_path, plan["site"])) == 1 and _scancels(tmp_path, "alpha") == []
    assert old.id == job_id and old.state == JobState.RUNNING
    assert fed.job(job_id).state == JobState.RUNNING and fed.job(new.id).state != \
        JobState.CANCELLED
    assert f"{job_id} became RUNNING on alpha while {new.id} was submitted" in kept, kept
    assert f"cancel {job_id} or cancel {new.id}" in kept, kept


# ---- (6) a sites file swapped while an approval waits; outputs globs that climb ----------------

async def test_a_sites_file_swapped_before_the_approved_submit_runs_what_was_shown(engine,
                                                                                    tmp_path):
    """(guard) between the plan and its approval `here` is pointed at other commands: the
    approved submit runs on the site as planned (the engine keeps what it read), with the
    script shown, and the engine says the file changed."""
    plan = await engine.plan_submit(JobSpec(script="echo hi\n"), "here")
    sites = tmp_path / "sites.yaml"
    other = sweep_helpers.fake_slurm_commands(tmp_path / "other-slurm")
    sites.write_text(sites.read_text().replace(str(tmp_path / "here-slurm"),
                                               str(tmp_path / "other-slurm")))
    assert str(tmp_path / "other-slurm") in sites.read_text() and other
    job = await engine.submit_approved(JobSpec(script="echo hi\n"), plan)
    assert job.token == plan["submission"]
    sent = _sent_script(tmp_path)
    assert hashlib.sha256(sent.encode()).hexdigest() == plan["script_sha256"]
    assert sweep_helpers.fake_sbatch_calls(tmp_path / "other-slurm") == []
    assert "changed since" in (engine.sites_file_changed() or ""), engine.sites_file_changed()


@pytest.mark.parametrize("output,said", [
    ("a/**/../../../x", "no '..'"), ("*/../../*", "no '..'"), ("[!a]/../../x", "no '..'"),
    ("~/.ssh/*", "no leading /, ~ or -"), ("/etc/*", "no leading /, ~ or -"),
    ("a/{..,b}/x", "a brace expansion"), ("$HOME/.ssh/id_*", "never expanded")])
def test_an_outputs_glob_climbing_out_of_the_step_is_refused_with_its_line(output, said):
    """(guard) a glob's `..` behind a wildcard, a home or root, a brace list holding `..`,
    a variable: each refused, the line named."""
    msg = sweep_helpers.refused(f"name: wf\nsteps:\n  - {{name: s, site: alpha, script: "
                                f"'echo hi', outputs: ['{output}']}}\n")
    assert said in msg and "(line 3)" in msg, msg
