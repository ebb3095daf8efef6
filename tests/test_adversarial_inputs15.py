"""The fifteenth sweep of hostile inputs and careless hands, through the faces: the command
line (a subprocess on `test_cli_newuser.NewUser`'s fake Slurm site), the magics (an
in-process engine), the REST routes (a real Jupyter server with the extension, a local site),
MCP tool calls (the server's own `call_tool`), a fetch's destination, and workflow and sites
files.

The standard is the earlier sweeps': bad input is refused with one line naming what, where
and what would be accepted (exit 2 on the CLI, a 4xx with a JSON message on REST), and loses
nothing: no job reaches a scheduler, no file is written where it should not be, no
traceback. Tests marked `fault` failed before this sweep's fixes; the others are guards
(attacks that already failed safely)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import sweep_helpers
from sweep_helpers import assert_magic_refused, mcp_refusal, sbatch_calls, submitted_script
from test_cli_newuser import NewUser

from diamond_jupyter.model import BadInput

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

ZERO = ("a time limit of 0 is no limit to sbatch and flux but no time at all to PBS, LSF and "
        "Grid Engine; give 1 minute or more, or leave it out for the site's default limit")


user = sweep_helpers.new_user


# -- 1. the command line ----------------------------------------------------------------------

@pytest.mark.parametrize("args,said", [
    # fault: `--time 0` rendered `--time=00:00:00` (no limit to sbatch), `walltime=00:00:00`
    # on PBS, `-W 0:00` on LSF: a job with no time at all there
    (["submit", "--site", "alpha", "--time", "0", "job.sh"], f"argument --time: {ZERO}, not '0'"),
    (["submit", "--site", "alpha", "--time=00:00:00", "job.sh"], ZERO),
    (["submit", "--site", "alpha", "--time", "0-0", "job.sh"], ZERO),
    (["place", "--time", "0:0", "job.sh"], ZERO),
    # fault: said only "unknown site", as for a typo
    (["submit", "--site", "alpha,ghost", "job.sh"],
     "unknown site 'alpha,ghost' (one site is named here, not a list: name one of them, or "
     "give site auto with a hedge of 2 for copies on the best sites; known: alpha, ghost)"),
    (["submit", "--site", "alpha, alpha", "job.sh"], "with a hedge of 1"),
    # guards
    (["submit", "--site", "alpha", "--site", "ghost", "job.sh"],
     "--site is given twice ('alpha' and 'ghost'); give it once"),
    (["submit", "--site", "alpha", "--hedge", "0", "job.sh"],
     "--hedge takes a number of copies from 1 to 8, not '0'"),
    (["submit", "--hedge", "-1", "job.sh"], "--hedge takes a number of copies from 1 to 8, "
                                            "not '-1'"),
    (["submit", "--hedge", "1000", "job.sh"], "--hedge takes a number of copies from 1 to 8"),
    (["submit", "--site", "alpha", "--nodes", "-1", "job.sh"],
     "argument --nodes: expected a whole number, 1 or more, not '-1'"),
    (["submit", "--site", "alpha", "--nodes", "1.5", "job.sh"],
     "argument --nodes: expected a whole number, 1 or more, not '1.5'"),
    (["submit", "--site", "alpha", "--nodes", "0", "job.sh"],
     "argument --nodes: expected a whole number, 1 or more, not '0'"),
    (["submit", "--site", "alpha", "--time", "99999999999", "job.sh"], "is too long"),
    (["submit", "--site", "alpha", "--output", "/home/other/out", "job.sh"],
     "unknown option --output"),
    # fault: "no LLM configured" first, the empty request only once one was
    (["ask", " "], "ask: the request is empty: write what the agent should do, in quotes"),
    (["ask", "", "--json"], "ask: the request is empty"),
])
def test_a_cli_value_that_is_no_value_is_one_line_and_exit_2(user, args, said):
    line = user.refused(*args)
    assert said in line, line
    assert sbatch_calls(user) == []


def test_a_time_limit_of_a_hundred_years_is_slurms_own_form(user):
    """(guard) `--time 99999999` (minutes, under Slurm's largest limit) is submitted in
    sbatch's D-HH:MM:SS form, not cut nor wrapped."""
    user.run("submit", "--site", "alpha", "--time", "99999999", "job.sh", code=0)
    assert "#SBATCH --time=69444-10:39:00\n" in submitted_script(user)


@pytest.mark.parametrize("name,line", [
    ("$(touch pwned)", '#SBATCH --job-name="$(touch_pwned)"\n'),
    ("`touch pwned`", '#SBATCH --job-name="`touch_pwned`"\n'),
    ("a%jb%x", "#SBATCH --job-name=a%jb%x\n"),
])
def test_a_job_name_holding_shell_or_percent_syntax_runs_nothing(user, name, line):
    """(guard) A name with `$(...)`, backquotes or `%j` is a name: in a directive (which no
    shell runs), quoted as sbatch reads it; nothing is run on submitting it."""
    user.run("submit", "--site", "alpha", "--name", name, "job.sh", code=0)
    assert line in submitted_script(user)
    assert not (user.root / "pwned").exists() and not (user.home / "pwned").exists()


# -- 2. the magics ----------------------------------------------------------------------------

shell = sweep_helpers.magics_shell


@pytest.mark.parametrize("line,cell,said", [
    ("submit --site alpha --time 0", "echo hi\n", ZERO),  # fault
    ("submit --site alpha,ghost", "echo hi\n", "one site is named here, not a list"),  # fault
    ("ask", "   \n\t\n", "ask: write the request in the cell body (%%diamond ask)"),
    # fault: `--hedge 0` submitted one job (the CLI refuses it); `--nodes -2` was refused as
    # "resources.nodes -2 is negative: give 0 or more", and 0 nodes are none
    ("submit --site alpha --hedge 0", "echo hi\n",
     "argument --hedge: --hedge takes a number of copies from 1 to 8, not '0'"),
    ("submit --site alpha --hedge 9", "echo hi\n", "from 1 to 8, not '9'"),
    ("submit --site alpha --nodes -2", "echo hi\n",
     "argument --nodes: expected a whole number, 1 or more, not '-2'"),
    ("submit --site alpha --gpus -1", "echo hi\n", "argument --gpus: expected a whole number"),
    ("jobs --limit -1", None,
     "argument --limit: expected how many to list, a whole number from 1 to"),
])
def test_a_cell_the_magic_cannot_take_is_one_reason_and_nothing_runs(shell, user, capsys,
                                                                      line, cell, said):
    assert_magic_refused(shell, user, capsys, line, cell, said)


# -- 3. MCP tool calls ------------------------------------------------------------------------

@pytest.mark.parametrize("args,said", [
    # fault: a JobSpec's walltime_s 0 was rendered as a zero limit
    ({"site": "alpha", "spec": {"command": "x", "resources": {"walltime_s": 0}}},
     f"resources.walltime_s 0: {ZERO}"),
    ({"site": "alpha,ghost", "script": "echo hi"}, "one site is named here, not a list"),
    # guards: arguments of the wrong type
    ({"site": "alpha", "script": ["echo", "hi"]}, "script"),
    ({"site": "alpha", "script": "echo hi", "hedge": "two"}, "hedge"),
    ({"site": "alpha", "spec": "echo hi"}, "spec"),
])
async def test_a_tool_call_with_a_zero_limit_or_a_wrong_type_is_refused(user, args, said):
    msg = await mcp_refusal(user, "submit", args)
    assert said in msg, msg
    assert sbatch_calls(user) == []


# -- 4. the REST routes -----------------------------------------------------------------------

@pytest.fixture
def jp_server_config(tmp_path, data_dir):
    from server_conftest import diamond_config

    (tmp_path / "rest").mkdir()
    rest_user = NewUser(tmp_path / "rest")  # its fake Slurm site alpha takes jobs
    return diamond_config(str(rest_user.sites), str(rest_user.store_path))


rest = sweep_helpers.rest_caller


@pytest.mark.parametrize("query,said", [
    # fault: a misspelt filter was passed over, and every event came back as if filtered
    ("events?kind=job.state", "query argument 'kind' is not one this route reads (accepted: "
                              "since, limit, job_id, kinds, emissions)"),
    ("events?job=alpha:1", "query argument 'job' is not one this route reads"),
    ("events?after=3", "query argument 'after' is not one this route reads"),
    ("jobs?states=RUNNING", "query argument 'states' is not one this route reads (accepted: "
                            "site, state, name, limit, offset)"),
    # fault: a kind no event has matched nothing, without a word (a glob, a case)
    ("events?kinds=job*", "kinds: 'job*' is no event kind: a kind is lower-case words joined "
                          "by dots (job.state), matched as written, or a prefix ending in .* "
                          "(job.*); leave kinds out for every kind"),
    ("events?kinds=*", "kinds: '*' is no event kind"),
    ("events?kinds=JOB.STATE", "kinds: 'JOB.STATE' is no event kind"),
    ("events?kinds=job.state,job.%25", "kinds: 'job.%' is no event kind"),
    # fault: `emissions=true` was read as 0
    ("events?emissions=true", "emissions must be 0 or 1, not 'true'"),
    # guards
    ("events?since=-1", "since must be between 0 and"),
    ("events?limit=0", "limit: expected how many to list, a whole number from 1 to 10000, not '0'"),
])
async def test_fault_an_event_or_job_filter_that_is_no_filter_is_a_400(rest, query, said):
    code, reply = await rest("GET", query)
    assert code == 400 and reply["reason"] == "bad-input", (code, reply)
    assert said in reply["message"], reply


@pytest.mark.parametrize("job_id,said", [
    ("beta:42", "no job 'beta:42' in the store"),  # another store's job
    ("alpha:1", "no job 'alpha:1' in the store"),
    ("..%2Fx", "job ID '../x' is malformed"),
])
async def test_fault_events_of_a_job_no_one_here_submitted_are_a_404(rest, job_id, said):
    """An event replay for a job of another store (or no job) answered an empty list, as for
    a job with no events yet: the client waited on it for ever."""
    code, reply = await rest("GET", f"events?job_id={job_id}")
    assert code == 404 and reply["reason"] == "not-found" and said in reply["message"], reply


async def test_a_good_event_filter_still_replays(rest):
    """(guard for the checks) A job's events by exact kind and by prefix, with the server's
    token in the query, as the sidebar and the kernels ask."""
    code, job = await rest("POST", "jobs", json.dumps({"script": "#!/bin/sh\necho hi\n",
                                                       "site": "alpha"}).encode())
    assert code == 201, job
    code, all_ = await rest("GET", f"events?job_id={job['id']}&kinds=job.*&emissions=1")
    assert code == 200 and all_["events"], all_
    kinds = {e["kind"] for e in all_["events"]}
    assert all(k.startswith("job.") for k in kinds)
    one = sorted(kinds)[0]
    code, some = await rest("GET", f"events?job_id={job['id']}&kinds={one}&since=0&limit=5")
    assert code == 200 and {e["kind"] for e in some["events"]} == {one}, some
    code, page = await rest("GET", "jobs?state=PENDING,RUNNING,COMPLETED&limit=5&offset=0")
    assert code == 200, page


async def test_fault_a_spec_with_a_zero_time_limit_is_a_400(rest):
    code, reply = await rest("POST", "jobs", json.dumps({
        "site": "alpha", "spec": {"command": "echo hi", "resources": {"walltime_s": 0}}}).encode())
    assert code == 400 and reply["message"] == f"spec.resources.walltime_s 0: {ZERO}", reply
    assert (await rest("GET", "jobs"))[1]["total"] == 0


async def test_many_submits_at_once_lose_no_job_and_no_event(rest):
    """(guard) 24 submits at once over REST: each answered 201, each job in the store with
    its own submit event, and the replay's sequence numbers have no gap. (The fake site
    answers one native id, 4242, to every sbatch: the newest job holds `alpha:4242`, each
    older one is kept beside it under an id of its own.)"""
    import asyncio

    body = json.dumps({"script": "#!/bin/sh\necho hi\n", "site": "alpha"}).encode()
    answers = await asyncio.gather(*(rest("POST", "jobs", body) for _ in range(24)))
    assert [code for code, _ in answers] == [201] * 24, answers
    tokens = {job["token"] for _, job in answers}
    assert len(tokens) == 24
    code, listed = await rest("GET", "jobs?limit=100")
    assert code == 200 and listed["total"] == 24, listed
    assert {j["token"] for j in listed["jobs"]} == tokens
    code, replay = await rest("GET", "events?since=0&limit=10000")
    seqs = [e["seq"] for e in replay["events"]]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    submitted = [e["job_id"] for e in replay["events"] if e["kind"] == "job.submitted"]
    assert sorted(submitted) == sorted(j["id"] for j in listed["jobs"])


# -- 5. a fetch's destination -----------------------------------------------------------------

def _shared_dir_with_a_planted_link(tmp_path: Path) -> tuple[Path, Path]:
    """A sticky, world-writable directory (like /tmp) holding `results`, a link another
    user (uid 65534) made, leading to a directory of this user's."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    mine = tmp_path / "my-home"
    mine.mkdir()
    (shared / "results").symlink_to(mine)
    os.lchown(shared / "results", 65534, 65534)
    return shared, mine


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's link needs root")
async def test_fault_a_fetch_does_not_write_through_another_users_planted_link(tmp_path):
    """`diamond fetch JOB results` in a shared directory where another user had made
    `results -> ~victim`: the job's files were written into the victim's home. Refused now,
    before the site is asked, naming the link, its owner and where it leads."""
    from test_fetch_safe import HOSTILE, _job, _local_fed, _write

    wd = tmp_path / "site-home" / "run"
    _write(wd, HOSTILE)
    shared, mine = _shared_dir_with_a_planted_link(tmp_path)
    fed = _local_fed(tmp_path)
    try:
        job_id = _job(fed.store, wd)
        for dest in (shared / "results", shared / "results" / "deeper"):
            with pytest.raises(BadInput) as e:
                await fed.fetch(job_id, dest)
            where = "" if dest.name == "results" else f" (its part {shared / 'results'})"
            assert str(e.value) == (
                f"dest: {dest}{where} is a symbolic link another user (uid 65534) made in a "
                f"shared directory, leading to {mine}: a fetch does not write through it; "
                "give another directory")
        assert list(mine.iterdir()) == []
    finally:
        await fed.close()


async def test_a_fetch_through_the_users_own_link_still_writes(tmp_path):
    """(guard for the check) The user's own `results -> /scratch/me/results` is their
    choice: written through, as before."""
    from test_fetch_safe import HOSTILE, _job, _local_fed, _write

    wd = tmp_path / "site-home" / "run"
    _write(wd, HOSTILE)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (tmp_path / "results").symlink_to(scratch)
    fed = _local_fed(tmp_path)
    try:
        got = await fed.fetch(_job(fed.store, wd), tmp_path / "results")
        assert (scratch / "result.txt").read_text() == "job result\n"
        assert got.paths
    finally:
        await fed.close()


# -- 6. workflow and sites files --------------------------------------------------------------

def _wf_refused(text: str) -> str:
    from diamond_jupyter.workflow.model import load_workflow

    with pytest.raises(BadInput) as e:
        load_workflow(text, sites=["alpha", "beta"])
    msg = str(e.value)
    assert "\n" not in msg, msg
    return msg


LAUGHS = "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n"
                 for p, c in zip("abcdef", "bcdefg", strict=True))
LAUGHS = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + LAUGHS


@pytest.mark.parametrize("text,said", [
    (LAUGHS + "name: w\nsteps:\n  - name: a\n    script: ./a\n    outputs: *g\n",
     "anchors and aliases (&name, *name) make it hold more than 100,000 values"),
    ("name: w\nsteps:\n\t- name: a\n\t  script: ./a\n",
     "found character '\\t' that cannot start any token (indent with spaces"),
    ("name: w\nsteps:\n  - name: a\n    script: ./a\n    script: ./b\n",
     "key 'script' is given twice (first on line 4)"),
    ("name: w\nsteps:\n  - name: Prep\n    script: ./a\n  - name: prep\n    script: ./b\n",
     "step names 'Prep' and 'prep' differ only in case"),
    ("name: w\nsteps:\n  - name: caf\u00e9\n    script: ./a\n", "ASCII only"),
    ("name: w\nsteps:\n  - name: \uff41\n    script: ./a\n", "ASCII only"),
    ("name: w\nsteps:\n  - name: a\n    script: ./a\n    needs: [a]\n",
     "step 'a' needs itself (a cycle) (line 5)"),
])
def test_a_workflow_file_built_to_hurt_is_one_line_naming_where(text, said):
    """(guards) A billion-laughs alias, tabs, a key twice, names that collide in case or are
    other scripts' look-alikes, a step needing itself."""
    assert said in _wf_refused(text)


@pytest.mark.parametrize("transport,said", [
    ("{host: '-oProxyCommand=touch /tmp/pwned'}", "is not a host"),
    ("{host: 'h -oProxyCommand=x'}", "is not a host"),
    ("{host: h, user: '-oProxyCommand=x'}", "is not a login name"),
    ("{host: h, proxy_jump: '-oProxyCommand=x'}", "proxy_jump"),
])
def test_a_sites_file_host_written_as_an_ssh_option_is_refused(tmp_path, transport, said):
    """(guards) An option where a host, a login or a jump host belongs never reaches ssh."""
    from diamond_jupyter.config import load_config

    p = tmp_path / "sites.yaml"
    p.write_text(f"sites:\n  - name: x\n    transport: {transport}\n")
    p.chmod(0o600)
    with pytest.raises(BadInput) as e:
        load_config(p)
    assert said in str(e.value) and "(line 3)" in str(e.value), str(e.value)
    assert not Path("/tmp/pwned").exists()



# -- 7. the agent: an approval names the plan shown ---------------------------------------------



async def test_fault_a_stale_approval_does_not_approve_the_plan_the_task_came_to_next(
        user, fake_llm):
    """A task shown plan A (submit `echo A`) was approved; it went on and came to await plan
    B (`echo B`). A second approval meant for A (a client retrying its POST after a timeout,
    a double click, a card still showing A) approved B, which no one was shown, by task id
    alone. An approval now names the plan it approves (`plan_sha256`, in the task's
    `pending` as every face shows it); for another plan it is refused and nothing runs."""
    from agents import engine_and_agent
    from fake_llm import last_result, text, tool_use

    from diamond_jupyter.federation_plan import PlanChanged

    def then_b(body):
        assert last_result(body)["job"]["id"]
        return [tool_use("submit", {"script": "#!/bin/sh\necho B\n", "site": "alpha"})]

    fake_llm.script([tool_use("submit", {"script": "#!/bin/sh\necho A\n", "site": "alpha"})],
                    then_b, [text("both submitted")])
    async with engine_and_agent(user.sites, user.store_path) as (fed, service):
        task = await service.ask("submit A then B", approval="ask")
        shown_a = await service.wait(task["id"], settled=True, timeout=60)
        assert shown_a["state"] == "awaiting_approval", shown_a
        sha_a = shown_a["pending"]["plan_sha256"]
        assert len(sha_a) == 64 and "echo A" in json.dumps(shown_a["pending"]["plan"])
        await service.approve(task["id"], sha_a)
        shown_b = await service.wait(task["id"], states={"awaiting_approval"}, timeout=60)
        assert "echo B" in json.dumps(shown_b["pending"]["plan"])
        assert len(sbatch_calls(user)) == 1
        with pytest.raises(PlanChanged) as e:  # the stale approval of A
            await service.approve(task["id"], sha_a)
        sha_b = shown_b["pending"]["plan_sha256"]
        assert str(e.value) == (f"task {task['id']} now awaits another plan than the one "
                                f"approved (its plan_sha256 is now {sha_b}): show it again "
                                "before approving; nothing was approved")
        with pytest.raises(BadInput) as e:
            await service.approve(task["id"], "A" * 64)
        assert "is not a sha256 (64 hex digits" in str(e.value)
        assert fed.task(task["id"])["state"] == "awaiting_approval"
        assert len(sbatch_calls(user)) == 1  # B was not submitted
        await service.approve(task["id"], sha_b)
        done = await service.wait(task["id"], timeout=60)
        assert done["state"] == "done" and len(sbatch_calls(user)) == 2, done


async def test_fault_the_sidebar_was_shown_no_plan_sha256_to_approve_with(user, fake_llm):
    """The sidebar shows a waiting plan from GET /state (store records) and from agent
    events, neither of which carried the plan's sha256, so it could approve by task id only.
    Both now carry the `plan_sha256` that GET tasks/ID gives, and an approval naming it
    runs the plan."""
    from agents import engine_and_agent
    from fake_llm import text, tool_use

    from diamond_jupyter.server.views import agent_payload

    fake_llm.script([tool_use("submit", {"script": "#!/bin/sh\necho A\n", "site": "alpha"})],
                    [text("submitted")])
    async with engine_and_agent(user.sites, user.store_path) as (fed, service):
        task = await service.ask("submit A", approval="ask")
        shown = await service.wait(task["id"], settled=True, timeout=60)
        sha = shown["pending"]["plan_sha256"]
        listed = next(t for t in fed.tasks() if t["id"] == task["id"])  # GET /state's tasks
        assert listed["data"]["pending"]["plan_sha256"] == sha
        assert listed["data"]["pending"]["plan"] == shown["pending"]["plan"]
        with_plan = [agent_payload(ev) for ev in fed.store.events_since(0)
                     if ev.kind.startswith("agent.") and ev.data.get("task_id") == task["id"]
                     and "plan" in ev.data]
        # the approval step and the task's agent.approval event
        assert {p["kind"] for p in with_plan} == {"agent.step", "agent.approval"}, with_plan
        assert all(p["data"]["plan_sha256"] == sha for p in with_plan), with_plan
        await service.approve(task["id"], sha)
        done = await service.wait(task["id"], timeout=60)
        assert done["state"] == "done" and len(sbatch_calls(user)) == 1, done
        listed = next(t for t in fed.tasks() if t["id"] == task["id"])
        assert "plan_sha256" not in (listed["data"].get("pending") or {})  # no plan, no sha


def test_fault_an_approval_body_carrying_an_edited_plan_is_refused():
    """`POST tasks/ID/approve` with `{"plan": ...}` or `{"script": ...}` (a client editing
    what it approves) was ignored, and the task's own plan ran: refused now, naming the
    key; only `plan_sha256` is read."""
    from pydantic import ValidationError

    from diamond_jupyter.server.bodies import ApproveBody

    assert ApproveBody.model_validate({}).plan_sha256 is None
    for key in ("plan", "script"):
        with pytest.raises(ValidationError) as e:
            ApproveBody.model_validate({key: "echo other"})
        assert e.value.errors()[0]["loc"] == (key,)


async def test_jupyterlabs_cache_buster_is_no_unknown_filter(rest):
    """JupyterLab's `ServerConnection.makeRequest` adds the time in ms, bare, to every GET; a
    400 for it stopped the sidebar's heartbeat (a dead site stayed "reachable" there)."""
    for query in ("events?since=0&limit=500&emissions=1&1733400000000", "jobs?1733400000000"):
        code, reply = await rest("GET", query)
        assert code == 200, (query, reply)
    code, reply = await rest("GET", "events?since=0&1733400000000=x")  # a value: no buster
    assert code == 400 and "1733400000000" in reply["message"], reply
