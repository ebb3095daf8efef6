"""Workflow files, twenty-first sweep: files and runs a real user writes. A script holding
another tool's placeholder (`{{ params.n }}`, `${{ inputs.mesh }}`: refused, nothing fills
it); a `script_file:` relative to the workflow file, read from another directory, and one
missing (named); `needs:` naming a step written later; a diamond whose middle step fails
(`on_failure: continue` refused, what is cancelled and why); a cancel while a step's submit
is under way; a name with a blank or a non-ASCII letter; two workflows of one name; fifty
steps in a chain on one site; `workflow status --json` against DESIGN.md's contract.

The runs are on the real engine and store (the operations below the facade recorded,
`workflow_ops`; no test bed), asserted as a user sees them (`workflow status --json`)."""

from __future__ import annotations

import asyncio

import pytest
from sweep_helpers import SITES, load, refused
from test_workflow_unseen import _Ops
from test_workflow_unseen13 import _Run, runs_fixture  # noqa: F401 (the `runs` fixture)
from test_workflow_unseen15 import _nothing_lost, _shown
from workflow_ops import Held

from diamond_jupyter.model import JobState
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.model import load_workflow


def _one_step(script_line: str) -> str:
    return ("name: w\nsteps:\n  - name: a\n    site: alpha\n    script: |\n"
            f"      #!/bin/bash\n      {script_line}\n")


# -- 1. another tool's placeholder in a script -------------------------------------------

@pytest.mark.parametrize("placeholder", ["{{ params.n }}", "${{ inputs.mesh }}",
                                         "{{matrix.size}}", "{{ item }}",
                                         "{{ inputs.parameters['n'] }}"])
def test_fault_a_placeholder_no_one_fills_is_refused_naming_it(placeholder):
    """Before: accepted, and the job ran `./solve --n {{ params.n }}` as written (a wrong
    run, or bash's `bad substitution` after the queue wait). Now refused before anything is
    submitted, naming the placeholder, its line and what to write instead."""
    msg = refused(_one_step(f"./solve --n {placeholder}"))
    assert f"the script holds {placeholder!r}" in msg or f'"{placeholder}"' in msg, msg
    assert "nothing fills it here" in msg and "write the value itself" in msg
    assert msg.startswith("the workflow: steps['a'].script:") and msg.endswith("(line 5)")


def test_fault_a_placeholder_in_a_script_file_is_refused_too(tmp_path):
    (tmp_path / "run.sh").write_text("#!/bin/bash\n./solve --size ${{ params.size }}\n")
    wf = tmp_path / "wf.yaml"
    wf.write_text("name: w\nsteps:\n  - {name: a, site: alpha, script_file: run.sh}\n")
    msg = refused(wf)
    assert "'${{ params.size }}'" in msg and "(line 3)" in msg


@pytest.mark.parametrize("line", ["docker ps --format '{{.ID}}'", "echo ${env}",
                                  "echo {{ job_name }}", "awk '{print $1}' in.txt"])
def test_braces_that_are_no_placeholder_of_a_workflow_tool_are_kept(line):
    """A Go template (`{{.ID}}`), a shell variable, a name outside the tools' words."""
    assert line in load(_one_step(line)).step("a").script


# -- 2. script_file relative to the workflow file -------------------------------------------

def test_a_script_file_is_read_beside_the_workflow_from_any_directory(tmp_path, monkeypatch):
    proj = tmp_path / "proj"
    (proj / "scripts").mkdir(parents=True)
    (proj / "scripts" / "prep.sh").write_text("#!/bin/bash\necho prep\n")
    (proj / "wf.yaml").write_text(
        "name: w\nsteps:\n  - {name: prep, site: alpha, script_file: scripts/prep.sh}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    wf = load_workflow(proj / "wf.yaml", sites=SITES)
    assert wf.step("prep").script == "#!/bin/bash\necho prep\n"


def test_a_script_file_moved_away_is_named_with_where_it_was_looked_for(tmp_path):
    (tmp_path / "wf.yaml").write_text(
        "name: w\nsteps:\n  - {name: prep, site: alpha, script: x}\n"
        "  - {name: post, site: alpha, needs: [prep], script_file: scripts/post.sh}\n")
    msg = refused(tmp_path / "wf.yaml")
    assert (f"step 'post': script_file 'scripts/post.sh': no such file "
            f"({tmp_path / 'scripts' / 'post.sh'}) (line 4)") in msg


# -- 3. needs: a step written later --------------------------------------------------------

async def test_needs_naming_a_step_written_later_runs_it_first(runs):
    run = await runs("""\
        name: later
        steps:
          - {name: post, site: alpha, needs: [prep], script: ./post}
          - {name: prep, site: alpha, script: ./prep}
        """)
    await run.finish("prep", "post")
    assert run.state() == ("COMPLETED", None)
    assert [name for name, _, _ in run.ops.submits] == ["prep", "post"]


# -- 4. a diamond whose middle step fails ----------------------------------------------------

DIAMOND = """\
    name: dia
    steps:
      - {name: top, site: alpha, script: ./top}
      - {name: left, site: alpha, needs: [top], script: ./left}
      - {name: right, site: beta, needs: [top], script: ./right}
      - {name: bottom, site: alpha, needs: [left, right], script: ./bottom}
    """


def test_on_failure_continue_is_refused_saying_there_is_no_going_on():
    msg = refused(DIAMOND.replace("script: ./left}", "script: ./left, on_failure: continue}"))
    assert "not 'continue'" in msg and "there is no going on past it" in msg
    assert "have the script exit 0" in msg and "(line 4)" in msg


async def test_a_diamond_whose_middle_step_fails_cancels_the_rest_naming_why(runs):
    run = await runs(DIAMOND)
    await run.end("top")
    await run.end("left", JobState.FAILED)
    assert run.state() == ("FAILED", "step 'left' failed: failed (exit code 1)")
    assert _shown(run) == {"top": ("COMPLETED", "alpha"), "left": ("FAILED", "alpha"),
                           "right": ("CANCELLED", "beta"), "bottom": ("CANCELLED", "alpha")}
    steps = {s["name"]: s for s in run.eng.view(run.wid).contract()["steps"]}
    assert steps["right"]["reason"] == steps["bottom"]["reason"] == run.state()[1]
    _nothing_lost(run)


# -- 5. a cancel while a step's submit is under way -------------------------------------------

class _HeldSubmit(Held, _Ops):
    """Step b's submit reaches its site (its intent recorded) and waits there for `done`."""

    async def submit(self, spec, site, **kw):
        if kw["origin"]["step"] != "b":
            return await super().submit(spec, site, **kw)
        self.store.record_intent(site, kw["token"], spec, origin=kw["origin"],
                                 fence=kw.get("fence"))
        await self.held_until_done()
        job = self.store.bind_native_id(kw["token"], "999")
        self.store.apply_state(job.id, JobState.PENDING)
        return self.store.get_job(job.id)


async def test_a_cancel_while_a_step_is_in_submit_cancels_its_job_once_it_has_one(tmp_path):
    chain = ("name: w\nsteps:\n  - {name: a, site: alpha, script: x}\n"
             "  - {name: b, site: alpha, needs: [a], script: x}\n"
             "  - {name: c, site: alpha, needs: [b], script: x}\n")
    with Store(tmp_path / "s.sqlite") as store:
        run = _Run(store, _HeldSubmit(store))
        try:
            start = asyncio.create_task(run.start(chain))
            await asyncio.wait_for(run.ops.started.wait(), 10)
            run.wid = store.list_workflows(limit=None)[0].id
            await asyncio.wait_for(run.eng.cancel(run.wid), 10)
            assert run.state() == ("CANCELLED", "cancelled by request")
            run.ops.done.set()  # the site answers b's submit now
            assert await asyncio.wait_for(start, 10) == run.wid
            b = store.get_job("alpha:999")
            assert b.state == JobState.CANCELLED and "alpha:999" in run.ops.cancels
            assert {s: st for s, (st, _) in _shown(run).items()} == dict.fromkeys(
                "abc", "CANCELLED")
            assert [n for n, _, _ in run.ops.submits] == ["a"]  # c never submitted
        finally:
            await run.eng.close()


# -- 6. names ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "said"), [("my run", "' ' is not one of them (use - or _"),
                                            ("lösung", "'ö' is not one of them")])
def test_a_workflow_name_with_a_blank_or_a_non_ascii_letter_is_refused_naming_it(name, said):
    msg = refused(f"name: {name}\nsteps:\n  - {{name: a, site: alpha, script: x}}\n")
    assert f"name: {name!r} is not a valid name" in msg and said in msg and "(line 1)" in msg


async def test_two_workflows_of_one_name_are_two_and_the_name_alone_is_said_ambiguous(runs):
    from diamond_jupyter.model import BadInput
    from diamond_jupyter.workflow.engine import workflow_view

    run = await runs("name: same\nsteps:\n  - {name: a, site: alpha, script: x}\n")
    second = await run.eng.run(load("name: same\nsteps:\n  - {name: a, site: alpha, "
                                    "script: x}\n"))
    assert second != run.wid and run.job("a").id != run.store.job_by_token(
        run.store.get_workflow(second).step("a").token).id
    with pytest.raises(BadInput) as e:
        workflow_view(run.store, "same")
    assert run.wid in str(e.value) and second in str(e.value)


# -- 7. fifty steps in a chain on one site -------------------------------------------------------

async def test_fifty_steps_in_a_chain_on_one_site_run_in_order_each_once(runs):
    names = [f"s{i:02d}" for i in range(50)]
    text = "name: fifty\nsteps:\n" + "".join(
        f"  - {{name: {n}, site: alpha, script: x"
        f"{f', needs: [{names[i - 1]}]' if i else ''}}}\n" for i, n in enumerate(names))
    run = await runs(text)
    for n in names:
        await run.end(n)
    assert run.state() == ("COMPLETED", None)
    assert [n for n, _, _ in run.ops.submits] == names  # in order, none twice
    jobs = [run.job(n) for n in names]
    assert len({j.id for j in jobs}) == 50 and all(j.state == JobState.COMPLETED for j in jobs)


# -- 8. status --json against the contract ---------------------------------------------------

async def test_status_json_holds_the_contract_fields_in_the_job_vocabulary(runs):
    """DESIGN.md: {"id", "state", "steps": [{"name", "site", "job", "state"}]}, states from
    the job vocabulary."""
    vocabulary = {"PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                  "UNKNOWN"}
    run = await runs(DIAMOND)
    await run.end("top")
    out = run.eng.view(run.wid).contract()
    assert {"id", "state", "steps"} <= out.keys() and out["id"] == run.wid
    assert out["state"] in vocabulary
    for step in out["steps"]:
        assert {"name", "site", "job", "state"} <= step.keys()
        assert step["state"] in vocabulary
        assert step["job"] == run.job(step["name"]).id


def test_a_key_not_read_is_named_before_the_placeholder_its_script_uses():
    """`env: {N: 4}` and `${{ env.N }}`: the key not read is what to fix first."""
    msg = refused("name: w\nsteps:\n  - {name: a, site: alpha, env: {N: 4}, "
                  "script: 'echo ${{ env.N }}'}\n")
    assert "steps['a'].env: not supported" in msg and "placeholder" not in msg


# -- 9. a shell variable in a script_file written inside braces ------------------------------

def test_fault_a_shell_variable_unquoted_inside_braces_is_shown_quoted(tmp_path):
    """`{name: a, script_file: ${SCRIPTS}/a.sh}`: YAML reads the variable's `{` as a mapping.
    Before: PyYAML's "expected ',' or '}', but got '{'" alone; now the value shown quoted."""
    wf = tmp_path / "wf.yaml"
    wf.write_text("name: w\nsteps:\n  - {name: a, site: alpha, script_file: ${SCRIPTS}/a.sh}\n")
    msg = refused(wf)
    assert "not valid YAML at line 3" in msg
    assert msg.endswith("(inside { } a value holding a shell variable's braces is quoted: "
                        'script_file: "${SCRIPTS}/a.sh")'), msg


def test_the_shell_variable_quoted_as_shown_is_expanded(tmp_path, monkeypatch):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "a.sh").write_text("#!/bin/bash\necho a\n")
    monkeypatch.setenv("SCRIPTS", str(tmp_path / "scripts"))
    wf = tmp_path / "wf.yaml"
    wf.write_text('name: w\nsteps:\n  - {name: a, site: alpha, '
                  'script_file: "${SCRIPTS}/a.sh"}\n')
    assert load_workflow(wf, sites=SITES).step("a").script == "#!/bin/bash\necho a\n"


# -- 10. a batch template given unrendered ---------------------------------------------------

def test_fault_a_jinja_batch_template_given_unrendered_is_refused_naming_its_placeholder(
        tmp_path):
    """A center's Jinja template (`#PBS -N {{job_name}}`, `walltime={{job_walltime}}`) as a
    step's script_file. Before: accepted, the job named `{{job_name}}` and its walltime
    dropped. Now refused at the first directive's placeholder."""
    (tmp_path / "job.pbs.j2").write_text(
        "#!/bin/bash\n#PBS -N {{job_name}}\n#PBS -l walltime={{job_walltime}}\n"
        "{% raw %}echo $PBS_JOBID{% endraw %}\n")
    wf = tmp_path / "wf.yaml"
    wf.write_text("name: w\nsteps:\n  - {name: a, site: alpha, script_file: job.pbs.j2}\n")
    msg = refused(wf)
    assert "the script holds '{{job_name}}'" in msg and "a Jinja batch template" in msg


def test_braces_in_a_script_body_beside_directives_are_kept():
    """`{{.ID}}` in a command, a shell `${X}` in a directive's neighbour: not a template."""
    text = ("#!/bin/bash\\n#SBATCH -J run\\n#SBATCH -t 10\\ndocker ps --format '{{.ID}}'\\n"
            "echo ${SLURM_JOB_ID}\\n")
    wf = load(f'name: w\nsteps:\n  - {{name: a, site: alpha, script: "{text}"}}\n')
    assert wf.step("a").spec().name == "run"


def test_a_flux_output_template_is_flux_s_own_and_kept():
    """`#flux: --output=run.{{id}}.out`: Flux fills it in, as its documentation says."""
    wf = load('name: w\nsteps:\n  - {name: a, site: alpha, script: "#!/bin/bash\\n'
              '#flux: -N 1\\n#flux: --output=run.{{id}}.out\\nflux run ./a\\n"}\n')
    assert "#flux: --output=run.{{id}}.out" in wf.step("a").script
