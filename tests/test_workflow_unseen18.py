"""Workflow files, eighteenth sweep: files and runs a real user writes. A fan-out/fan-in of
200 steps read at once with its slips named by line; a step's script in another dialect
than its site's; inputs with spaces, unicode and directories in their names, copied by the
real shell lines the engine puts before a step's body; an input its upstream never wrote;
`resubmit-elsewhere` when only one site may run the step; a gang member no site can run;
a cancel during a copy; an engine stopped midway through a gang's release; YAML slips whose
error must name where they began; names that differ only by a separator or case; `needs`
naming the step itself, written another way.

The runs are on the real engine and store (the operations below the facade recorded,
`workflow_ops`; no test bed), asserted as a user sees them (`workflow status --json`) and
that nothing is lost (`_nothing_lost`)."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sweep_helpers import load, refused
from test_workflow_unrunnable import PLAIN, _fed, refused_before_any_submit
from test_workflow_unseen import _Ops, _until
from test_workflow_unseen13 import _Run, runs_fixture  # noqa: F401 (the `runs` fixture)
from test_workflow_unseen15 import _nothing_lost, _shown
from test_workflow_unseen16 import _until_true
from workflow_ops import HeldCopy, next_engine

from diamond_jupyter.model import Job, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.workflow.engine import copy_lines

WIDE = 200


def _fan(width: int = WIDE) -> str:
    """split writes one part per worker; each worker reads its part; merge reads every
    worker's result, each under its own name."""
    parts = ", ".join(f"p{i}.dat" for i in range(width))
    rows = [f"  - {{name: split, site: alpha, script: ./split, outputs: [{parts}]}}"]
    rows += [f"  - {{name: w{i:03d}, site: auto, script: ./work, needs: [split], inputs: "
             f"[{{from: split, path: p{i}.dat}}], outputs: [r.dat]}}" for i in range(width)]
    needs = ", ".join(f"w{i:03d}" for i in range(width))
    ins = ", ".join(f"{{from: w{i:03d}, path: r.dat, as: r{i}.dat}}" for i in range(width))
    rows.append(f"  - {{name: merge, site: beta, script: ./merge, needs: [{needs}], "
                f"inputs: [{ins}]}}")
    return "name: fan\nsteps:\n" + "\n".join(rows) + "\n"


# -- 1. a fan-out/fan-in of 200 steps ------------------------------------------------------

def test_a_fan_out_and_in_of_200_steps_is_read_at_once():
    started = time.process_time()
    wf = load(_fan())
    took = time.process_time() - started
    assert took < 5, took  # CPU seconds (a busy machine stretches wall time): 0.13 s here
    assert len(wf.steps) == WIDE + 2
    assert wf.order()[0] == "split" and wf.order()[-1] == "merge"
    assert wf.upstream("merge") == {"split", *(f"w{i:03d}" for i in range(WIDE))}
    assert wf.downstream("w150") == {"merge"}


@pytest.mark.parametrize("slip,said", [
    # a need misspelt in the 151st worker: which step, which name, the one meant, its line
    (("needs: [split], inputs: [{from: split, path: p150.dat}]",
      "needs: [splt], inputs: [{from: split, path: p150.dat}]"),
     "step 'w150' needs unknown step 'splt' (did you mean 'split'? "),
    # a worker copied and not renamed: both places
    (("name: w150,", "name: w149,"),
     "step name 'w149' is used twice (steps[150] and steps[151]); rename one"),
    # two of merge's 200 inputs landing on one name
    (("as: r150.dat", "as: r149.dat"),
     "step 'merge': two inputs arrive as 'r149.dat' (inputs[149], w149's r.dat, and "
     "inputs[150], w150's r.dat)"),
])
def test_a_slip_among_200_steps_is_named_with_its_line(slip, said):
    text = _fan().replace(*slip)
    line = max(n for n, row in enumerate(text.splitlines(), 1) if slip[1] in row)
    msg = refused(text)
    assert said in msg and msg.endswith(f"(line {line})"), msg


async def test_a_fan_out_and_in_of_200_steps_runs_with_each_copy_once(runs):
    """The workers go in behind split (placed beside it: their parts copied by their own
    jobs); merge, on beta, gets each worker's result copied once under its own name, and
    is released once, after the last worker."""
    started = time.monotonic()
    run = await runs(_fan())
    await run.end("split")
    await _until_true(run, lambda: len(run.ops.submits) == WIDE + 2)
    rec = run.store.get_workflow(run.wid)  # read once: each `run.job` reads every step
    workers = [run.store.job_by_token(st.token) for st in rec.steps if st.name[0] == "w"]
    for k in range(0, WIDE, 50):  # the workers end in bursts, each advanced once (as the
        for job in workers[k:k + 50]:  # engine's coalesced events do; 0.33 s an advance)
            run.store.apply_state(job.id, JobState.COMPLETED, exit_code=0)
        assert run.ops.releases == []  # merge waits for the last worker
        await run.eng.advance(run.wid)
    await _until(run.eng, run.wid, {"merge": "released"})
    assert run.ops.releases == [run.job("merge").id]
    dests = sorted(dst.rsplit("/", 1)[1] for _, dst, _ in run.ops.transfers)
    assert dests == sorted(f"r{i}.dat" for i in range(WIDE))
    assert {name: sum(1 for n, _, _ in run.ops.submits if n == name)
            for name in ("split", "w000", "w199", "merge")} == dict.fromkeys(
        ("split", "w000", "w199", "merge"), 1)
    await run.end("merge")
    assert run.state() == ("COMPLETED", None)
    _nothing_lost(run)
    assert time.monotonic() - started < 120  # a few seconds here


# -- 2. a step's script in another dialect than its site's ----------------------------------

PBS_ON_SLURM = """\
    name: mixed
    steps:
      - name: prep
        site: alpha
        script: |
          #!/bin/bash
          #PBS -l select=2:ncpus=8
          #PBS -l walltime=01:30:00
          ./prep
      - name: fit
        site: alpha
        needs: [prep]
        dialect: lsf
        script: |
          #!/bin/bash
          #BSUB -n 4
          #BSUB -W 00:20
          ./fit
    """


async def test_a_pbs_and_an_lsf_script_on_a_slurm_site_keep_what_they_ask(runs):
    """Each script is read in its own dialect (found, or named by `dialect:`): the jobs the
    site is given ask what the scripts asked, not a site default."""
    run = await runs(PBS_ON_SLURM)
    prep, fit = run.ops.specs["prep"], run.ops.specs["fit"]
    assert (prep.resources.nodes, prep.resources.walltime_s) == (2, 5400)
    assert (fit.resources.tasks, fit.resources.walltime_s) == (4, 1200)
    await run.finish("prep", "fit")
    assert run.state() == ("COMPLETED", None)
    assert _shown(run) == {"prep": ("COMPLETED", "alpha"), "fit": ("COMPLETED", "alpha")}


def test_a_dialect_named_over_another_dialects_directives_is_refused_naming_both():
    msg = refused(PBS_ON_SLURM.replace("dialect: lsf", "dialect: pbs"))
    assert msg.startswith("step 'fit': dialect: pbs, but its script's directives are lsf "
                          "(2 lines) and none is pbs's"), msg
    assert "write dialect: lsf" in msg and msg.endswith("(line 14)"), msg


# -- 3. inputs with spaces, unicode and directories in their names --------------------------

ODD_NAMES = """\
    name: odd
    steps:
      - {name: a, site: alpha, script: ./a,
         outputs: ["my run/out put.h5", "données/été $x.h5", "run dir/"]}
      - {name: b, site: alpha, needs: [a], script: ./b,
         inputs: [{from: a, path: "my run/out put.h5"}, {from: a, path: "données/été $x.h5",
                   as: "in/été.h5"}, {from: a, path: "run dir/", as: "all of it/"}]}
    """


def _run_lines(lines: str, cwd: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", lines], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


async def test_inputs_named_with_spaces_and_unicode_are_copied_by_the_shell_as_named(
        runs, tmp_path):
    """b runs where a did: its inputs are copied by lines before its body. Run by bash on a
    real directory, they copy each file by its exact name (the `$x` left as written) and
    the directory with everything in it, and the body runs after them."""
    run = await runs(ODD_NAMES, root=str(tmp_path))
    a_dir = Path(run.job("a").workdir)
    written = {"my run/out put.h5": "my run/out put.h5", "données/été $x.h5": "in/été.h5",
               "run dir/deep/x.txt": "all of it/deep/x.txt"}
    for name in written:
        (a_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (a_dir / name).write_text(name)
    await run.end("a")
    b_dir = Path(run.job("b").workdir)
    b_dir.mkdir(parents=True)
    script = run.ops.specs["b"].script
    assert script.endswith("\n./b"), script  # the copies, then the body
    done = _run_lines(script.removesuffix("./b") + "echo body ran\n", b_dir)
    assert done.returncode == 0 and done.stdout == "body ran\n", done.stderr
    assert {there: (b_dir / there).read_text() for there in written.values()} == \
        {there: name for name, there in written.items()}


def test_an_input_its_upstream_never_wrote_fails_the_job_naming_the_file(tmp_path):
    """The same lines when a never wrote the file: the job stops before its body, with a
    line on stderr naming the file (the workflow's on_failure follows from that job)."""
    (tmp_path / "up").mkdir()
    (tmp_path / "here").mkdir()
    lines = copy_lines([(f"{tmp_path}/up/my run/out put.h5", "my run/out put.h5")])
    done = _run_lines(lines + "echo body ran\n", tmp_path / "here")
    assert done.returncode == 1 and "body ran" not in done.stdout
    assert f"workflow input my run/out put.h5 could not be copied from {tmp_path}/up/my run/" \
           "out put.h5" in done.stderr, done.stderr


def test_a_glob_in_an_input_is_refused_naming_the_character_and_a_directory_is_taken():
    msg = refused(ODD_NAMES.replace('path: "run dir/"', 'path: "run dir/*.h5"'))
    assert "path 'run dir/*.h5' has the glob character '*'" in msg and "(line 7)" in msg, msg


# -- 4. YAML slips: where they began --------------------------------------------------------

@pytest.mark.parametrize("text,said", [
    # a quote never closed: PyYAML gives up at the end of the file
    ('name: w\nsteps:\n  - name: a\n    site: alpha\n    script: "./a\n  - name: b\n'
     '    site: alpha\n    script: ./b\n',
     "not valid YAML at line 9, column 1: found unexpected end of stream (the quoted value "
     "opened at line 5, column 13 is never closed before it)"),
    # a step's `{` not closed: PyYAML gives up at the next step's
    ("name: w\nsteps:\n  - {name: a, site: alpha, script: ./a\n"
     "  - {name: b, site: alpha, script: ./b}\n",
     "not valid YAML at line 4, column 5: expected ',' or '}', but got '{' (the `{` opened at "
     "line 3, column 5 is never closed before it)"),
    ("name: w\nsteps:\n  - {name: a, site: alpha, script: ./a, outputs: [x.h5\n"
     "  - {name: b, site: alpha, script: ./b}\n",
     "(the `[` opened at line 3, column 50 is never closed before it)"),
])
def test_an_unclosed_quote_or_bracket_names_the_line_it_opened_on(text, said):
    """Before: only the line where PyYAML gave up (the file's end, or the next step)."""
    assert said in refused(text)


def test_a_value_holding_colon_space_unquoted_is_shown_quoted():
    """Before: "mapping values are not allowed here", and nothing of what to write."""
    msg = refused("name: w\nsteps:\n  - name: a\n    site: alpha\n    script: echo a: b\n")
    assert msg.endswith("at line 5, column 19: mapping values are not allowed here (a value "
                        "holding ': ' must be quoted: script: \"echo a: b\")"), msg


# -- 5. names: a separator, case, the step itself ---------------------------------------------

async def test_names_differing_by_a_separator_are_three_steps_each_with_its_own_job(runs):
    """prep.1, prep_1 and prep-1 are no one name anywhere (no name is normalised): each is
    its own step, its own job and directory, and needs name each exactly."""
    run = await runs("""\
        name: seps
        steps:
          - {name: prep.1, site: alpha, script: ./a}
          - {name: prep_1, site: alpha, script: ./b}
          - {name: prep-1, site: beta, script: ./c, needs: [prep_1]}
        """)
    jobs = {n: run.job(n) for n in ("prep.1", "prep_1", "prep-1")}
    assert len({j.id for j in jobs.values()}) == len({j.workdir for j in jobs.values()}) == 3
    await run.end("prep.1")
    assert run.phases()["prep-1"] != "released"  # it waits for prep_1, not prep.1
    await run.finish("prep_1", "prep-1")
    assert run.state() == ("COMPLETED", None)
    _nothing_lost(run)


def test_names_differing_only_in_case_are_refused():
    msg = refused("name: w\nsteps:\n  - {name: prep, site: alpha, script: ./a}\n"
                  "  - {name: Prep, site: alpha, script: ./b, needs: [prep]}\n")
    assert "step names 'prep' and 'Prep' differ only in case; rename one" in msg, msg
    assert msg.endswith("(line 4)"), msg


@pytest.mark.parametrize("written", ["' prep'", "Prep", "prepp"])
def test_needs_naming_the_step_itself_written_another_way_says_so(written):
    """Before: "needs unknown step ' prep' (did you mean 'prep'?)": the fix offered was the
    step itself, which is refused next as a cycle."""
    msg = refused("name: w\nsteps:\n  - {name: other, site: alpha, script: ./a}\n"
                  f"  - {{name: prep, site: alpha, script: ./a, needs: [other, {written}]}}\n")
    assert msg.startswith(f"step 'prep': needs[1] {written.strip(chr(39))!r} names no step; "
                          "the nearest is the step itself, which it cannot need (a cycle)"), msg
    assert "did you mean" not in msg and msg.endswith("(line 4)"), msg


def test_needs_naming_the_step_itself_exactly_is_a_cycle_with_its_line():
    msg = refused("name: w\nsteps:\n  - name: a\n    site: alpha\n    script: ./a\n"
                  "    needs:\n      - a\n")
    assert msg == "step 'a' needs itself (a cycle) (line 7)", msg


def test_an_input_from_the_step_itself_written_another_way_says_so():
    msg = refused("name: w\nsteps:\n  - {name: up, site: alpha, script: ./a}\n"
                  "  - {name: fit, site: alpha, script: ./a, needs: [up],\n"
                  "     inputs: [{from: Fit, path: x.h5}]}\n")
    assert msg.startswith("step 'fit': inputs[0] is from 'Fit', which names no step; the "
                          "nearest is the step itself"), msg
    assert msg.endswith("(line 5)"), msg


# -- 6. an input the upstream never wrote, copied across sites --------------------------------

class _NeverWritten(_Ops):
    """Every copy finds no file at its source (the upstream wrote nothing)."""

    async def transfer(self, src: str, dst: str, **kw: Any) -> Any:
        self.transfers.append((src, dst, kw.get("recursive", False)))
        return SimpleNamespace(id=kw["transfer_id"], src=src, state="FAILED", bytes=0,
                               error=f"{src.partition(':')[2]}: No such file or directory")


UNWRITTEN = """\
    name: unwritten
    steps:
      - {name: a, site: alpha, script: ./a}
      - {name: b, site: [beta, gamma], needs: [a], inputs: [{from: a, path: "x 1.dat"}],
         script: ./b, retries: 1, on_failure: resubmit-elsewhere}
      - {name: c, site: alpha, needs: [b], script: ./c}
    """


async def test_an_input_never_written_fails_its_step_naming_the_file_and_follows_its_policy(
        runs):
    """a wrote no `x 1.dat` (not declared, so not looked for when a ended): the copy to b
    fails; b goes in again elsewhere (its policy), fails so again, and the workflow fails
    naming b and the file; b is never released, c never runs."""
    run = await runs(UNWRITTEN, _NeverWritten)
    await run.end("a")
    await _until_true(run, lambda: run.state()[0] == "FAILED")
    state, reason = run.state()
    assert reason.startswith("step 'b' failed") and "x 1.dat" in reason, reason
    assert run.submitted("b") == ["beta", "gamma"]
    assert [dst.split(":")[0] for _, dst, _ in run.ops.transfers] == ["beta", "gamma"]
    assert run.ops.releases == []
    shown = _shown(run)
    assert shown["a"] == ("COMPLETED", "alpha") and shown["b"] == ("FAILED", "gamma")
    assert shown["c"][0] == "CANCELLED"
    first = next(s for s in run.eng.view(run.wid).steps if s.name == "b")
    assert "x 1.dat" in (first.reason or ""), first
    _nothing_lost(run)


# -- 7. resubmit-elsewhere when only one site may run the step -------------------------------

async def test_resubmit_elsewhere_with_one_site_listed_runs_again_there_and_says_so(runs):
    """site: [alpha], retries 2, resubmit-elsewhere: no other site may be used, so each
    retry goes to alpha again (not a site outside its list), and the step says why."""
    run = await runs("""\
        name: one
        steps:
          - {name: a, site: [alpha], script: ./a, retries: 2, on_failure: resubmit-elsewhere}
        """)
    for tries in (2, 3):
        await run.end("a", JobState.FAILED)
        await _until_true(run, lambda n=tries: len(run.submitted("a")) == n)
    assert run.submitted("a") == ["alpha", "alpha", "alpha"]
    notes = [e.data for e in run.store.events_since(0, limit=None)
             if "every site of its list" in str(e.data)]
    assert notes, "the retry on the same site is not said"
    await run.end("a")
    assert run.state() == ("COMPLETED", None)
    _nothing_lost(run)


# -- 8. a gang member no site can run --------------------------------------------------------

async def test_a_gang_member_no_site_can_run_refuses_the_workflow_before_any_submit(
        tmp_path, monkeypatch):
    """ocean asks 9 nodes, more than any site has: the whole gang (and workflow) is refused
    before atmos is submitted, naming ocean, each site and why."""
    fed = _fed(tmp_path, monkeypatch)
    big = PLAIN.replace("#SBATCH -t 5\\n", "#SBATCH -t 5\\n#SBATCH -N 9\\n")
    text = ("name: esm\nsteps:\n"
            f"  - {{name: ocean, gang: esm, site: auto, script: \"{big}\"}}\n"
            f"  - {{name: atmos, gang: esm, site: alpha, script: \"{PLAIN}\"}}\n")
    try:
        said = await refused_before_any_submit(fed, text)
        assert "step 'ocean' cannot run on any of its sites" in said, said
        assert "alpha:" in said and "gamma:" in said and "atmos" not in said, said
        assert fed.store.list_workflows() == []
    finally:
        await fed.close()


# -- 9. a cancel during a copy whose copy then fails -----------------------------------------

class _HeldFailingCopy(HeldCopy, _NeverWritten):
    """Each copy held until `done`, then failing (no file at its source)."""


async def test_a_copy_failing_after_its_workflow_was_cancelled_runs_nothing_again(runs):
    """b's copy is under way when the user cancels; the copy then fails: b's retry policy is
    not followed (the workflow was cancelled), b is not released, nothing is submitted
    again, and every job ends cancelled."""
    run = await runs(UNWRITTEN, _HeldFailingCopy)
    await run.end("a")
    await asyncio.wait_for(run.ops.started.wait(), 10)
    await run.eng.cancel(run.wid)
    run.ops.done.set()
    await run.eng.advance(run.wid)
    assert run.state() == ("CANCELLED", "cancelled by request")
    assert run.submitted("b") == ["beta"] and run.ops.releases == []
    assert run.job("b").id in run.ops.cancels
    assert {state for state, _ in _shown(run).values()} <= {"COMPLETED", "CANCELLED"}
    _nothing_lost(run)


# -- 10. an engine stopped midway through a gang's release -----------------------------------

class _BetaReleaseHangs(_Ops):
    """A release on beta never answers (the engine stops meanwhile); elsewhere, recorded."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.hung = asyncio.Event()

    async def release(self, job: Job) -> None:
        if job.site == "beta":
            self.hung.set()
            await asyncio.Event().wait()
        await super().release(job)


GANG = """\
    name: coupled
    steps:
      - {name: prep, site: alpha, script: ./p}
      - {name: ocean, site: alpha, gang: esm, needs: [prep], script: ./o}
      - {name: atmos, site: beta, gang: esm, needs: [prep], script: ./a}
    """


async def test_an_engine_stopped_midway_through_a_gang_release_releases_each_once(tmp_path):
    """ocean was released, the engine stopped while atmos's release was asked: the next
    engine releases atmos, and ocean never again; both run, and the run completes."""
    with Store(tmp_path / "s.sqlite") as store:
        first = _Run(store, _BetaReleaseHangs(store))
        await first.start(GANG)
        await first.end("prep")
        await asyncio.wait_for(first.ops.hung.wait(), 10)
        await first.eng.close()
        ocean, atmos = first.job("ocean"), first.job("atmos")
        ops = _Ops(store)
        async with next_engine(ops, [first.wid]) as eng:
            second = _Run(store, ops, eng)
            second.wid = first.wid
            await _until(eng, first.wid, {"ocean": "released", "atmos": "released"})
            released = first.ops.releases + ops.releases
            assert sorted(released) == sorted([ocean.id, atmos.id]), released
            assert ops.submits == []
            await second.end("ocean")
            await second.end("atmos")
            assert second.state() == ("COMPLETED", None)
            _nothing_lost(second)


# -- 11. a directory named as a file, and a file as a directory ------------------------------

@pytest.mark.parametrize("out,path,said", [
    ("run dir/", "run dir", "path 'run dir' is a directory in a's outputs ('run dir/'), "
     "but a path ending with / is a directory (copied with everything in it) and one "
     "without is a file: write path: run dir/"),
    ("x.h5", "x.h5/", "path 'x.h5/' is a file in a's outputs ('x.h5'), but a path ending "
     "with / is a directory (copied with everything in it) and one without is a file: "
     "write path: x.h5"),
])
def test_an_input_naming_its_upstreams_output_as_the_other_kind_is_refused(out, path, said):
    """Before: `d` for a's directory `d/` was accepted and copied as one file, which fails
    only once a has run (cp omits a directory without -R)."""
    msg = refused("name: w\nsteps:\n"
                  f"  - {{name: a, site: alpha, script: ./a, outputs: [\"{out}\"]}}\n"
                  "  - {name: b, site: beta, script: ./b, needs: [a],\n"
                  f"     inputs: [{{from: a, path: \"{path}\"}}]}}\n")
    assert msg == f"step 'b': inputs[0] {said} (line 5)", msg


def test_an_input_inside_a_declared_directory_is_taken():
    wf = load("name: w\nsteps:\n  - {name: a, site: alpha, script: ./a, outputs: [d/]}\n"
              "  - {name: b, site: beta, script: ./b, needs: [a],\n"
              "     inputs: [{from: a, path: d/x.h5, as: x.h5}, {from: a, path: ./d/}]}\n")
    assert [i.is_dir for i in wf.step("b").inputs] == [False, True]
