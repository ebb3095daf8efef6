"""Faces sweep 23: what people type at each face, without the test bed. The command line's
ids, options and files given wrong (a second id, an option with no value, a time in the
wrong unit, a site name in another script, an id of a reused native id); the same mistakes
in REST bodies (wrong types, extra and missing fields, unicode, very long values), the
`%diamond` magics, the MCP tools and the agent's plan/approve path (its model answering at
the wire); workflow files with mistakes. Each is refused naming what was given, where, and
what would be accepted, and loses nothing. And `diamond logs` of a job the store knows has
not started answers from the store, asking its site only when that knowledge is stale.

Tests marked `fault` failed before this sweep's fixes; the others are guards."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timezone

import pytest
import sweep_helpers
from fake_llm import text, tool_results, tool_use
from sweep_helpers import sbatch_calls

from diamond_jupyter.model import JobSpec, JobState
from diamond_jupyter.store import Store

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")
user, shell, jp_server_config, rest = sweep_helpers.FACES_FIXTURES

SCRIPT = sweep_helpers.FACES_SCRIPT
LONG_AGO = datetime(2020, 1, 1, tzinfo=timezone.utc)


def _one_line_refusal(res, *said: str) -> str:
    """Exit 2, nothing on stdout, the last line on stderr holding each of `said`."""
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert res.stdout == "" or json.loads(res.stdout)["reason"] == "bad-input"
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("diamond"), res.stderr
    for s in said:
        assert s in last, res.stderr
    return last


def _stored_pending(user, job_id: str, reason: str | None = None, *, stale: bool = False):
    """Job `job_id` in the user's store, PENDING (for `reason`) as a poll saw it now or,
    `stale`, long ago."""
    user.job(job_id, JobState.UNKNOWN, workdir=str(user.root),
             stdout_path=str(user.root / "run.out"), stderr_path=str(user.root / "run.err"))
    Store(user.store_path).apply_state(job_id, JobState.PENDING, reason=reason, source="poll",
                                       at=LONG_AGO if stale else None)


def _calls(user) -> str:
    calls = user.fake / "calls"
    return calls.read_text() if calls.exists() else ""


def _squeue_calls(user) -> list[str]:
    calls = user.fake / "calls"
    return [c for c in calls.read_text().splitlines() if c.startswith("squeue")] \
        if calls.exists() else []


# ---- (0) `diamond logs` of a job not started: from the store while it is fresh -------------

def test_fault_logs_of_a_held_job_answer_from_the_store_without_reaching_its_site(user):
    """`ghost` cannot be reached: logs of its job the store has just seen held went to the
    site anyway, waited on it and failed (exit 1), though nothing could be there yet."""
    _stored_pending(user, "ghost:7", reason="held (u)")
    began = time.monotonic()
    res = user.run("logs", "ghost:7", code=0)
    assert time.monotonic() - began < 20  # no connection attempts, no timeouts
    assert res.stdout == ""
    assert f"stdout log {user.root / 'run.out'}: not there yet on ghost (the job has not " \
           "started); ghost:7 was PENDING (held (u)) " in res.stderr, res.stderr
    assert re.search(r"\(held \(u\)\) (just now|\d+ s ago)\n", res.stderr), res.stderr
    assert "stderr log" in res.stderr
    assert "ghost:7 has not started (PENDING): no logs to show yet, not an error (exit 0)" \
        in res.stderr


def test_fault_logs_json_of_a_pending_job_from_the_store_keeps_its_shape(user):
    _stored_pending(user, "ghost:8", reason="Priority")
    got = json.loads(user.run("logs", "ghost:8", "--json", code=0).stdout)
    assert got["stdout"] == got["stderr"] == "" and got["notes"] == ""
    assert [line.split(":")[0] for line in got["missing"].splitlines()] == \
        [f"stdout log {user.root / 'run.out'}", f"stderr log {user.root / 'run.err'}"]
    assert "was PENDING (Priority)" in got["missing"]


def test_fault_logs_of_a_job_whose_stored_state_is_stale_ask_its_scheduler_first(user):
    """A state learned long ago may be old news: the site's scheduler is asked (one squeue)
    before saying the job has not started."""
    _stored_pending(user, "alpha:4300", stale=True)
    res = user.run("logs", "alpha:4300", code=0)
    assert len(_squeue_calls(user)) == 1, _squeue_calls(user)
    assert "(the job has not started); alpha:4300 was PENDING just now" in res.stderr


def test_logs_of_a_fresh_pending_job_ask_no_scheduler(user):
    _stored_pending(user, "alpha:4301")
    user.run("logs", "alpha:4301", code=0)
    assert _squeue_calls(user) == []


def test_fault_logs_just_after_submit_ask_the_scheduler_before_saying_not_started(user):
    """A job's PENDING from its own submit is no observation (an idle cluster starts it at
    once): its scheduler is asked about it before it is said not started."""
    job_id = user.run("submit", "--site", "alpha", str(user.script), code=0).stdout.strip()
    asked = f"squeue -h -t all -j {job_id.split(':')[1]}"
    assert asked not in _squeue_calls(user)
    res = user.run("logs", job_id, code=0)
    assert asked in _squeue_calls(user)
    assert f"{job_id} was PENDING just now" in res.stderr, res.stderr


def test_logs_of_a_stale_pending_job_on_a_site_out_of_reach_fail_naming_it(user):
    """Stale knowledge is not passed off as an answer: the site is asked, and its silence is
    a failure of the site (exit 1), not a job that has not started."""
    _stored_pending(user, "ghost:9", stale=True)
    res = user.run("logs", "ghost:9", code=1)
    assert "ghost" in res.stderr.strip().splitlines()[-1], res.stderr
    assert "not an error" not in res.stderr


def test_logs_of_a_running_job_still_read_its_site(user):
    user.job("ghost:10", JobState.RUNNING, workdir=str(user.root),
             stdout_path=str(user.root / "run.out"))
    res = user.run("logs", "ghost:10", code=1)
    assert "not an error" not in res.stderr and "ghost" in res.stderr


# ---- (1) the command line ------------------------------------------------------------------

@pytest.mark.parametrize("args,said", [
    (["status", "alpha:4242", "alpha:1"],
     "unrecognized arguments: alpha:1 (1 more than diamond status takes: JOB)"),
    (["fetch", "alpha:1", "dest", "extra"],
     "unrecognized arguments: extra (1 more than diamond fetch takes: JOB [DEST])"),
    (["logs", "alpha:1", "--lines", "1e3"],
     "argument --lines: expected a whole number, 1 or more, not '1e3'"),
    (["submit", "--site", "alpha", "--time", "3h", "job.sh"],
     "(3h is --time 03:00:00), not '3h'"),
    (["submit", "--site", "alpha", "--gpus", "two", "job.sh"],
     "argument --gpus: expected a whole number, 0 or more, not 'two'"),
    (["submit", "--site", "alpha", "--memory", "4XB", "job.sh"],
     "--memory '4XB': expected a size such as 4G or 500M"),
    (["submit", "--site", "alpha", "--hedge", "0", "job.sh"],
     "--hedge takes a number of copies from 1 to 8, not '0'"),
    (["submit", "job.sh", "--site"], "argument --site: expected one argument"),
    (["submit", "--site", "\u03b1\u03bb\u03c6\u03b1", "job.sh"],
     "unknown site '\u03b1\u03bb\u03c6\u03b1' (known: alpha, ghost)"),
    (["place", "job.sh", "--explain", "--site", "alpha"],
     "unknown option --site (did you mean --time? accepted: --arch"),
    (["jobs", "--status", "RUNNING"], "unknown option --status (did you mean --state?"),
    (["wait", "alpha:1", "--timeout", "5m"],
     "argument --timeout: expected a number of seconds above 0 (e.g. 30), not '5m'"),
    (["translate", "--to", "pbs", "--from", "cobol", "job.sh"],
     "unknown dialect 'cobol'; expected one of slurm, pbs, lsf, flux, sge"),
])
def test_a_mistyped_command_line_is_one_line_naming_what_was_typed(user, args, said):
    _one_line_refusal(user.run(*args), said)
    assert sbatch_calls(user) == []


@pytest.mark.parametrize("queue", ["*@node01", "all.q,short.q", "!gpu.q", "a?.q"])
def test_grid_engine_queue_lists_keep_their_wildcards(queue):
    """Grid Engine's `-q` takes wildcard queue lists: no shell-syntax refusal for them."""
    from diamond_jupyter.federation import Federation

    spec = JobSpec(name="j", script="#!/bin/bash\nhostname\n")
    out = Federation.apply_options(spec, overrides={"queue": queue},
                                   said_as={"queue": "--partition"})
    assert out.queue == queue


@pytest.mark.parametrize("partition,odd", [("gpu;rm", ";"), ("$(id)", "$"),
                                           ("gpu|cpu", "|"), ("'gpu'", "'")])
def test_fault_a_partition_holding_shell_syntax_is_refused_before_anything_is_sent(
        user, partition, odd):
    """`--partition 'gpu;rm'` was taken, written into the script (quoted), and sent to the
    scheduler, which refused it at submit as a partition that does not exist."""
    res = user.run("submit", "--site", "alpha", "--partition", partition, "job.sh")
    _one_line_refusal(res, f"--partition {partition!r} holds {odd!r}, and no scheduler's "
                           "partition or queue name holds one")
    assert sbatch_calls(user) == []


def test_an_id_one_digit_off_a_known_job_names_it(user):
    user.job("alpha:4242", JobState.PENDING)
    _one_line_refusal(user.run("status", "alpha:4242.0"), "no job 'alpha:4242.0' in the store "
                      "(did you mean alpha:4242?")


def test_a_very_long_job_id_is_named_shortened_on_one_line(user):
    res = user.run("logs", "alpha:" + "7" * 5000)
    line = _one_line_refusal(res, "no job 'alpha:777", "characters) in the store")
    assert len(line) < 300, line


def test_a_job_whose_native_id_slurm_gave_to_a_newer_job_is_not_released(user):
    """Slurm reused 4242 for a newer job: the older one, named by its own id, is not
    released (that would release the newer job), and the refusal names the newer one."""
    store = Store(user.store_path)
    store.record_intent("alpha", "aaaaaaaaaaaa", JobSpec(name="old", script="echo\n"))
    store.bind_native_id("aaaaaaaaaaaa", "4242")
    store.record_intent("alpha", "bbbbbbbbbbbb", JobSpec(name="new", script="echo\n"))
    store.bind_native_id("bbbbbbbbbbbb", "4242")
    old = store.job_by_token("aaaaaaaaaaaa")
    assert old.id != "alpha:4242" and old.reused_by == "alpha:4242"
    _one_line_refusal(user.run("release", old.id), f"not releasing {old.id}: it has left "
                      "alpha's queue and its native id 4242 now belongs to alpha:4242")
    assert "scontrol release" not in _calls(user)
    got = json.loads(user.run("status", "alpha:4242", "--json", code=0).stdout)
    assert got["name"] == "new"


# ---- (2) workflow files with mistakes ------------------------------------------------------

STEP = "name: w\nsteps:\n  - name: a\n    script: echo hi\n"


@pytest.mark.parametrize("text,said", [
    (STEP + "    needs: [a]\n", "step 'a' needs itself (a cycle) (line 5)"),
    (STEP + "    on_failure: retry\n", "on_failure: Input should be 'resubmit-elsewhere' or "
                                      "'stop', not 'retry': retries: N says how many times"),
    (STEP + "    site: [alpha, nosuch]\n", "unknown site 'nosuch' in its list of sites "
                                          "[alpha, nosuch] (known: alpha, ghost, or auto)"),
    (STEP + "    outputs: out.txt\n", "outputs is a list: write outputs: [out.txt], not "
                                     "'out.txt' (line 5)"),
    (STEP + "    depends_on: [b]\n", "depends_on: unknown field (accepted: name, script"),
    (STEP + "    inputs: [{from: b, path: x}]\n", "inputs[0] is from unknown step 'b' "
                                                 "(steps: a)"),
    (STEP + "  - name: a\n    script: echo ho\n", "step name 'a' is used twice (steps[0] "
                                                   "and steps[1]); rename one"),
    ("name: w\nsteps:\n  - name: a\n    script_file: nothere.sh\n",
     "script_file 'nothere.sh': no such file"),
])
def test_a_workflow_file_with_a_mistake_names_file_step_and_line(user, text, said):
    user.write("wf.yaml", text)
    _one_line_refusal(user.run("workflow", "run", "wf.yaml"), "wf.yaml: ", said)
    assert sbatch_calls(user) == []
    assert json.loads(user.run("workflow", "list", "--json", code=0).stdout) in ([], {
        "workflows": []})


# ---- (3) the magics ------------------------------------------------------------------------

@pytest.mark.parametrize("line,cell,said", [
    ("submit --site alpha --time 3h", SCRIPT, "(3h is --time 03:00:00)"),
    ("submit --site \u00e4lpha", SCRIPT, "unknown site '\u00e4lpha'"),
    ("translate --to cobol", SCRIPT, "unknown dialect 'cobol'"),
    ("logs alpha:1 --lines ten", None, "--lines"),
    ("status alpha:1 alpha:2", None, "alpha:2"),
    ("status " + "9" * 3000, None, "characters)"),
    ("cancel here:1", None, "no job 'here:1' in the store"),
])
def test_a_magic_given_a_wrong_value_names_it(shell, user, capsys, line, cell, said):
    sweep_helpers.assert_magic_refused(shell, user, capsys, line, cell, said)


def test_fault_a_magic_submit_with_a_partition_of_shell_syntax_sends_nothing(shell, user,
                                                                              capsys):
    """(as the command line) `%%diamond submit --partition 'a|b'` reached the scheduler."""
    sweep_helpers.assert_magic_refused(shell, user, capsys, "submit --site alpha "
                                       "--partition a|b", SCRIPT, "holds '|'")


# ---- (4) the MCP tools ---------------------------------------------------------------------

@pytest.mark.parametrize("tool,args,said", [
    ("logs", {"job_id": "alpha:1", "lines": 0}, "lines"),
    ("logs", {"job_id": "alpha:1", "lines": "ten"}, "lines"),
    ("status", {"job_id": 4242}, "job_id"),
    ("status", {"job_id": "alpha:1", "verbose": True}, "verbose"),
    ("submit", {"site": "alpha"}, "script"),
    ("translate", {"script": SCRIPT, "to": "cobol"}, "cobol"),
    ("cancel", {"job_id": "\u0430lpha:1"}, "\u0430lpha:1"),
])
async def test_an_mcp_tool_given_a_wrong_type_or_field_names_it(user, tool, args, said):
    said_back = await sweep_helpers.mcp_refusal(user, tool, args)
    assert said in said_back, said_back
    assert sbatch_calls(user) == []


async def test_fault_the_mcp_logs_of_a_job_not_started_say_why_they_are_empty(user):
    """The tool answered {"stdout": "", "stderr": ""}: the engine's word that the job has
    not started (its "missing" lines) was dropped, and empty logs read as a fault."""
    from diamond_jupyter.mcp_server import build_server

    _stored_pending(user, "ghost:11", reason="Priority")
    server = build_server(str(user.sites), root=user.root)
    got = await server.call_tool("logs", {"job_id": "ghost:11"})
    text = json.dumps(got if isinstance(got, dict) else [getattr(c, "text", str(c))
                                                         for c in got])
    assert "the job has not started" in text and "was PENDING (Priority)" in text, text


# ---- (5) the REST API ----------------------------------------------------------------------

def _body(**fields) -> bytes:
    return json.dumps(fields).encode()


@pytest.mark.parametrize("body,said", [
    (_body(script=SCRIPT, site=5), "site"),
    (_body(script=SCRIPT, site="here", partition="gpu"), "partition"),
    (_body(site="here"), "script"),
    (_body(script=SCRIPT, site="here", hedge="two"), "hedge"),
    (_body(script=SCRIPT, site="here", hold="yes please"), "hold"),
    (_body(script=["echo hi"], site="here"), "script"),
    (_body(script=SCRIPT, site="h\u00e9re"), "unknown site 'h\u00e9re'"),
    (b"[1, 2]", "JSON object"),
])
async def test_a_rest_submit_body_with_a_wrong_field_is_a_400_naming_it(rest, body, said):
    code, reply = await rest("POST", "jobs", body)
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert said in reply["message"], reply
    assert (await rest("GET", "jobs"))[1]["jobs"] == []  # nothing submitted


@pytest.mark.parametrize("method,path,body,said", [
    ("POST", "translate", _body(script=SCRIPT, to=["slurm"]), "to"),
    ("POST", "tasks", _body(prompt=5), "prompt"),
    ("POST", "tasks", _body(prompt="hi", approval="sometimes"), "approval"),
])
async def test_a_rest_request_with_a_wrong_value_is_a_400_naming_it(rest, method, path, body,
                                                                     said):
    code, reply = await rest(method, path, body)
    assert code == 400 and said in reply["message"], (code, reply)


async def test_a_rest_submit_of_a_huge_script_is_refused_naming_the_limit(rest):
    code, reply = await rest("POST", "jobs", _body(script="#!/bin/bash\n" + "echo x\n" * 600_000,
                                                   site="here"))
    assert code in (400, 413), (code, reply)
    assert "bytes" in str(reply) or "large" in str(reply), reply
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


@pytest.mark.parametrize("lines", ["ten", "-3", "0", "1.5"])
async def test_a_rest_logs_lines_that_is_no_count_is_a_400_naming_it(rest, lines):
    code, job = await rest("POST", "jobs", _body(script=SCRIPT, site="here"))
    assert code == 201, job
    code, reply = await rest("GET", f"jobs/{job['id']}/logs?lines={lines}")
    assert code == 400 and "lines" in reply["message"], (code, reply)


@pytest.mark.parametrize("path,body,typo,meant", [
    ("translate", _body(script=SCRIPT, to="pbs", form="lsf"), "form", "from"),
    ("jobs", _body(script=SCRIPT, stie="here"), "stie", "site"),
    ("place", _body(script=SCRIPT, dialekt="slurm"), "dialekt", "dialect"),
])
async def test_fault_a_rest_body_field_misspelt_is_a_400_naming_the_field_meant(
        rest, path, body, typo, meant):
    """`{"form": "lsf"}` for `from` was passed over: the script was read as another dialect
    (or submitted to another site) without a word."""
    code, reply = await rest("POST", path, body)
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert f"unknown field '{typo}' in the body (did you mean '{meant}'?" in reply["message"]
    assert (await rest("GET", "jobs"))[1]["jobs"] == []


async def test_a_rest_body_field_of_a_newer_client_is_refused_naming_it(rest):
    """No field is passed over (DESIGN.md allows no extra ones): a newer client's too is
    refused, naming it and the accepted fields (test_rest_unknown_fields_memory)."""
    code, reply = await rest("POST", "translate", _body(script=SCRIPT, to="pbs",
                                                        client_build="2027.1"))
    assert code == 400, (code, reply)
    assert reply["message"].startswith("unknown field 'client_build' in the body (accepted: ")


async def test_a_rest_approve_without_an_llm_says_how_to_configure_one(rest):
    code, reply = await rest("POST", "tasks/t-nope-23/approve", b"{}")
    assert code == 503 and reply["reason"] == "llm-not-configured", (code, reply)
    assert "ANTHROPIC_API_KEY" in reply["message"]


# ---- (6) the agent: `%%diamond ask`, its plan, approve and reject (the model at the wire) --

def _asked(shell, fake_llm, *steps) -> tuple[str, object]:
    """`%%diamond ask` with the model answering `steps`: the task's id, once it has
    settled (awaiting approval, or done), and the magics' engine."""
    from diamond_jupyter.kernel import magics

    fake_llm.script(*steps)
    handle = shell.run_cell_magic("diamond", "ask", "run echo hi on alpha")
    engine = magics._magics.engine

    async def settled():
        return await (await engine.agent()).wait(handle.id, settled=True, timeout=60)

    engine.call(settled())
    return handle.id, engine


def _task(engine, task_id: str) -> dict:
    async def get():
        return (await engine.fed()).task(task_id)
    return engine.call(get())


SUBMIT_ALPHA = [tool_use("submit", {"script": "echo hi\n", "site": "alpha"})]


def test_an_approval_of_another_plan_is_refused_and_nothing_runs(shell, user, capsys,
                                                                 fake_llm):
    task_id, engine = _asked(shell, fake_llm, SUBMIT_ALPHA)
    assert _task(engine, task_id)["state"] == "awaiting_approval"
    sweep_helpers.assert_magic_refused(shell, user, capsys,
                                       f"approve {task_id} --plan {'0' * 64}", None,
                                       "plan")
    assert _task(engine, task_id)["state"] == "awaiting_approval"  # still there to approve


def test_a_plan_hash_that_is_no_sha256_says_what_one_looks_like(shell, user, capsys,
                                                                fake_llm):
    task_id, engine = _asked(shell, fake_llm, SUBMIT_ALPHA)
    sweep_helpers.assert_magic_refused(shell, user, capsys, f"approve {task_id} --plan xyz",
                                       None, "xyz")
    assert _task(engine, task_id)["state"] == "awaiting_approval"


def test_approving_a_task_that_does_not_exist_names_it(shell, user, capsys, fake_llm):
    _asked(shell, fake_llm, SUBMIT_ALPHA)
    sweep_helpers.assert_magic_refused(shell, user, capsys, "approve t-no-such-23", None,
                                       "t-no-such-23")


def test_approving_a_rejected_task_says_it_awaits_nothing(shell, user, capsys, fake_llm):
    task_id, engine = _asked(shell, fake_llm, SUBMIT_ALPHA)
    shell.run_line_magic("diamond", f"reject {task_id}")
    capsys.readouterr()
    sweep_helpers.assert_magic_refused(shell, user, capsys, f"approve {task_id}", None,
                                       "not awaiting approval")
    assert _task(engine, task_id)["state"] == "rejected"


@pytest.mark.parametrize("tool,args,said", [
    ("submit", {"script": "echo hi\n", "site": "nosuch"}, "unknown site 'nosuch'"),
    ("logs", {"job_id": "alpha:1", "lines": "ten"}, "lines"),
    ("status", {"job_id": "4242"}, "SITE:NUMBER"),
    ("translate", {"script": SCRIPT, "to": "cobol"}, "unknown dialect 'cobol'"),
])
def test_a_model_calling_a_skill_wrongly_is_told_what_it_wrote(shell, user, fake_llm,
                                                               tool, args, said):
    """The agent's user is the model: its wrong call comes back as an error naming what it
    wrote, and the task goes on (nothing submitted)."""
    answered = {}

    def answer(body):
        answered["result"] = tool_results(body)[-1]
        return [text("noted")]

    task_id, engine = _asked(shell, fake_llm, [tool_use(tool, args)], answer)
    _, content, is_error = answered["result"]
    assert is_error and said in str(content), content
    assert _task(engine, task_id)["state"] == "done"
    assert sbatch_calls(user) == []
