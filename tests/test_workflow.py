"""Workflows on the real test bed: a data edge across two sites (checksum verified by the
downstream step), a same-site edge by the scheduler's afterok, a gang released together,
retries elsewhere, cancel, and an engine killed mid-workflow that the next one finishes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobState
from diamond_jupyter.store import Store

pytestmark = pytest.mark.testbed

EXAMPLE = textwrap.dedent("""\
    name: demo
    steps:
      - name: prep
        site: alpha
        script: |
          #!/bin/bash
          #SBATCH -N 1
          #SBATCH -t 5
          sleep {prep_sleep}
          head -c 3000000 /dev/urandom > out.bin
          sha256sum out.bin > out.sha
        outputs: [out.bin, out.sha]
      - name: train
        site: beta
        needs: [prep]
        inputs: [{{from: prep, path: out.bin}}, {{from: prep, path: out.sha}}]
        gang: g1
        retries: 1
        on_failure: resubmit-elsewhere
        script: |
          #!/bin/bash
          #SBATCH -t 5
          sha256sum -c out.sha || exit 7
          echo "trained $SLURM_CLUSTER_NAME" > model.txt
      - name: watch
        site: gamma
        needs: [prep]
        gang: g1
        script: |
          #!/bin/bash
          #SBATCH -t 5
          echo watching
      - name: analyse
        site: beta
        needs: [train]
        inputs: [{{from: train, path: model.txt}}]
        script: |
          #!/bin/bash
          #SBATCH -t 5
          cat model.txt
    """)


@pytest.fixture
def fed(testbed_fed):
    return testbed_fed


def steps_by_name(view) -> dict:
    return {s.name: s for s in view.steps}


async def test_the_example_across_two_sites(fed, tmp_path):
    view = await fed.run_workflow(EXAMPLE.format(prep_sleep=4))
    first = steps_by_name(view)
    # queue-ahead: every step is in a queue while prep has not even ended
    assert first["prep"].job and first["train"].job and first["watch"].job
    assert first["analyse"].job and first["analyse"].site == "beta"
    assert not first["prep"].state.terminal
    done = await fed.wait_workflow(view.id, timeout=300)
    assert done.state == JobState.COMPLETED, done
    s = steps_by_name(done)
    assert all(x.state == JobState.COMPLETED for x in s.values())
    assert (s["prep"].site, s["train"].site, s["watch"].site) == ("alpha", "beta", "gamma")
    # the data edge: the checksum written on alpha verified on beta
    assert "out.bin: OK" in (await fed.logs(s["train"].job))["stdout"]
    assert (await fed.logs(s["analyse"].job))["stdout"].strip() == "trained beta"
    evs = fed.events_since(0, kinds=["workflow.*", "job.state", "transfer.state"], limit=None)
    step_ev = [e for e in evs if e.kind == "workflow.step"]

    def first_of(step: str, **match) -> int:
        return next(e.seq for e in step_ev if e.data["step"] == step and
                    all(e.data.get(k) == v for k, v in match.items()))
    prep_done = next(e.seq for e in evs if e.kind == "job.state" and
                     e.job_id == s["prep"].job and e.data["state"] == "COMPLETED")
    train_sub = next(e for e in step_ev if e.data["step"] == "train" and "held" in e.data)
    assert train_sub.data["held"] is True and train_sub.seq < prep_done  # queued ahead, held
    analyse_sub = next(e for e in step_ev if e.data["step"] == "analyse" and "held" in e.data)
    assert analyse_sub.data["held"] is False  # same site as train: the scheduler's afterok
    assert analyse_sub.data["afterok"] and analyse_sub.seq < prep_done
    moved = first_of("train", phase="ready")
    assert prep_done < first_of("train", phase="moving") < moved
    # the gang: both released after both were ready, neither started before
    released = [first_of(m, phase="released") for m in ("train", "watch")]
    assert min(released) > max(moved, first_of("watch", phase="ready"))
    started = [next(e.seq for e in evs if e.kind == "job.state" and e.job_id == s[m].job
                    and e.data["state"] in ("RUNNING", "COMPLETED")) for m in ("train", "watch")]
    assert min(started) > max(released)
    xfers = [e for e in evs if e.kind == "transfer.state" and e.data["state"] == "SUCCEEDED"]
    assert {e.data["dst"].rsplit("/", 1)[1] for e in xfers} == {"out.bin", "out.sha"}
    assert all(e.data["src"].startswith("alpha:") and e.data["dst"].startswith("beta:")
               for e in xfers)


async def test_a_failed_step_is_retried_elsewhere(fed):
    text = textwrap.dedent("""\
        name: retry
        steps:
          - name: flaky
            site: alpha
            retries: 1
            on_failure: resubmit-elsewhere
            script: |
              #!/bin/bash
              #SBATCH -t 2
              [ "$SLURM_CLUSTER_NAME" = alpha ] && exit 3
              echo "ran on $SLURM_CLUSTER_NAME"
        """)
    view = await fed.run_workflow(text)
    done = await fed.wait_workflow(view.id, timeout=240)
    assert done.state == JobState.COMPLETED, done
    step = done.steps[0]
    assert step.attempt == 1 and step.site in ("beta", "gamma")
    assert (await fed.logs(step.job))["stdout"].strip() == f"ran on {step.site}"


async def test_a_step_out_of_retries_stops_the_workflow(fed):
    text = textwrap.dedent("""\
        name: stops
        steps:
          - {name: bad, site: alpha, script: "#!/bin/bash\\nexit 4\\n"}
          - {name: slow, site: beta, script: "#!/bin/bash\\nsleep 300\\n"}
          - {name: after, site: gamma, needs: [bad], script: "#!/bin/bash\\necho no\\n"}
        """)
    view = await fed.run_workflow(text)
    done = await fed.wait_workflow(view.id, timeout=240)
    s = steps_by_name(done)
    assert done.state == JobState.FAILED and "step 'bad' failed" in (done.reason or "")
    assert s["bad"].state == JobState.FAILED
    assert s["after"].state == JobState.CANCELLED  # was held on gamma: cancelled there
    slow = await fed.wait(s["slow"].job, timeout=120)
    assert slow.state == JobState.CANCELLED


async def test_a_step_runs_with_the_secret_its_script_sets(fed):
    """The engine submits each step from the store, which shows the script redacted; the
    step still runs as given (before: `export MY_API_TOKEN=***` ran, and the test exited 9),
    and the store file never holds the secret in clear."""
    secret = "tok-" + os.urandom(12).hex()
    text = textwrap.dedent(f"""\
        name: sealed
        steps:
          - name: use
            site: alpha
            script: |
              #!/bin/bash
              #SBATCH -t 5
              export MY_API_TOKEN={secret}
              test "$MY_API_TOKEN" = "{secret[:4]}""{secret[4:]}" || exit 9
        """)
    view = await fed.run_workflow(text)
    done = await fed.wait_workflow(view.id, timeout=240)
    assert done.state == JobState.COMPLETED, done
    job = fed.store.job_by_token(fed.store.get_workflow(view.id).step("use").token)
    assert "MY_API_TOKEN=***" in job.spec.script
    on_disk = b"".join(p.read_bytes() for p in fed.store.path.parent.glob("store.sqlite*")
                       if p.is_file() and not p.name.endswith(".key"))
    assert secret.encode() not in on_disk


async def test_a_python_step_gets_a_directory_from_another_site(fed):
    """A directory output on alpha reaches a Python step on beta whole (copied
    recursively), and the step runs as Python: bash makes its inputs, then the body runs
    with its own interpreter (before: the copy lines were put inside the Python body)."""
    text = textwrap.dedent("""\
        name: py
        steps:
          - name: make
            site: alpha
            script: |
              #!/bin/bash
              #SBATCH -t 5
              mkdir -p res/deep && echo 41 > res/deep/n.txt
            outputs: [res/]
          - name: use
            site: beta
            needs: [make]
            inputs: [{from: make, path: res/}]
            script: |
              #!/usr/bin/env python3
              #SBATCH -t 5
              print(int(open("res/deep/n.txt").read()) + 1)
        """)
    view = await fed.run_workflow(text)
    done = await fed.wait_workflow(view.id, timeout=240)
    assert done.state == JobState.COMPLETED, done
    use = steps_by_name(done)["use"]
    assert (await fed.logs(use.job))["stdout"].strip() == "42"


async def test_cancel_cancels_every_step(fed):
    text = textwrap.dedent("""\
        name: cancel-me
        steps:
          - {name: a, site: alpha, script: "#!/bin/bash\\nsleep 300\\n"}
          - {name: b, site: beta, needs: [a], script: "#!/bin/bash\\necho b\\n"}
          - {name: c, site: alpha, needs: [a], script: "#!/bin/bash\\necho c\\n"}
        """)
    view = await fed.run_workflow(text)
    assert all(s.job for s in view.steps)
    await fed.cancel_workflow(view.id)
    for s in view.steps:
        assert (await fed.wait(s.job, timeout=120)).state == JobState.CANCELLED
    done = fed.workflow(view.id)
    assert done.state == JobState.CANCELLED
    assert {s.state for s in done.steps} == {JobState.CANCELLED}


async def test_an_engine_killed_mid_workflow_is_finished_by_the_next(tb, tmp_path):
    """`diamond workflow run --wait` is SIGKILLed while the downstream step is held on
    another site; an engine started afterwards (a server) adopts and finishes it."""
    store = tmp_path / "store.sqlite"
    cfg = tmp_path / "sites.yaml"
    cfg.write_text(tb.config_path.read_text() + f"\nstore: {store}\n")
    wf = tmp_path / "demo.yaml"
    wf.write_text(EXAMPLE.format(prep_sleep=15))
    proc = subprocess.Popen([sys.executable, "-m", "diamond_jupyter.cli", "workflow", "run",
                             str(wf), "--wait", "--json", "--config", str(cfg)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "DIAMOND_CONFIG": str(cfg)})
    st = Store(store)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 120
    while True:  # the store is the only witness: wait for train to be queued, held
        held = [e for e in st.events_since(0, kinds=["workflow.step"], limit=None)
                if e.data["step"] == "train" and e.data.get("held")]
        if held:
            break
        assert proc.poll() is None, proc.communicate()
        assert loop.time() < deadline, "train was never submitted"
        await asyncio.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    wid = held[0].data["workflow_id"]
    assert st.get_workflow(wid).state in ("PENDING", "RUNNING")
    f = Federation(cfg, store=st, poll_interval_s=30, min_poll_s=0.5)
    await f.start()  # recovery adopts the workflow the dead engine drove
    try:
        done = await f.wait_workflow(wid, timeout=300)
        assert done.state == JobState.COMPLETED, done
        s = steps_by_name(done)
        assert "out.bin: OK" in (await f.logs(s["train"].job))["stdout"]
        jobs = f.jobs(limit=None)
        queued = [j for j in jobs if j.native_id]
        assert sorted((j.origin or {})["step"] for j in queued) == sorted(s)  # once each
        # killed between recording a submit and its answer: the record of a submit that
        # never reached its scheduler is kept, closed, and the scheduler has no such job
        for j in jobs:
            if not j.native_id:
                assert j.state == JobState.FAILED and "did not reach" in (j.reason or ""), j
                assert await f.sites[j.site].find_by_token(j.name, j.token or "") == []
    finally:
        await f.close()


def test_the_cli_runs_and_reports_the_contract(tb, tmp_path, data_dir):
    env = {**os.environ, "DIAMOND_CONFIG": str(tb.config_path),
           "DIAMOND_DATA_DIR": str(data_dir)}
    wf = tmp_path / "w.yaml"
    wf.write_text(textwrap.dedent("""\
        name: cli
        steps:
          - {name: one, site: alpha, script: "#!/bin/bash\\necho 1 > o.txt\\n"}
          - {name: two, site: gamma, needs: [one], inputs: [{from: one, path: o.txt}],
             script: "#!/bin/bash\\ncat o.txt\\n"}
        """))

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "workflow", *args],
                              capture_output=True, text=True, env=env, timeout=300)
    r = run("run", str(wf), "--wait", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["state"] == "COMPLETED"
    assert [(s["name"], s["site"], s["state"]) for s in out["steps"]] == [
        ("one", "alpha", "COMPLETED"), ("two", "gamma", "COMPLETED")]
    assert all(s["job"].split(":")[0] == s["site"] for s in out["steps"])
    st = json.loads(run("status", out["id"], "--json").stdout)
    assert st["id"] == out["id"] and st["state"] == "COMPLETED"
    assert set(st) >= {"id", "state", "steps"}
    assert set(st["steps"][0]) >= {"name", "site", "job", "state"}
    job = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "status",
                          st["steps"][1]["job"], "--json"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert json.loads(job.stdout)["state"] == "COMPLETED"
    wf.write_text(wf.read_text().replace('echo 1 > o.txt', 'exit 5'))
    r = run("run", str(wf), "--wait", "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["state"] == "FAILED"


async def test_a_running_engine_adopts_what_the_cli_left(fed, tb, tmp_path):
    """`diamond workflow run` without --wait exits after queueing the steps; the engine
    already running on the same store (a server) adopts the workflow on its sweep, follows
    the jobs it did not submit, and finishes it."""
    cfg = tmp_path / "sites.yaml"
    cfg.write_text(tb.config_path.read_text() + f"\nstore: {fed.store.path}\n")
    wf = tmp_path / "w.yaml"
    wf.write_text(textwrap.dedent("""\
        name: handed-over
        steps:
          - {name: one, site: alpha, script: "#!/bin/bash\\nsleep 3; echo 5 > o.txt\\n"}
          - {name: two, site: beta, needs: [one], inputs: [{from: one, path: o.txt}],
             script: "#!/bin/bash\\ncat o.txt\\n"}
        """))
    r = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "workflow", "run",
                        str(wf), "--json", "--config", str(cfg)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    wid = json.loads(r.stdout)["id"]

    async def ended() -> str:
        async for ev in fed.events(since=0):
            if ev.kind == "workflow.state" and ev.data["workflow_id"] == wid and \
                    ev.data["state"] in ("COMPLETED", "FAILED", "CANCELLED"):
                return ev.data["state"]
        return ""
    assert await asyncio.wait_for(ended(), 300) == "COMPLETED"
    two = fed.workflow(wid).steps[1]
    assert (await fed.logs(two.job))["stdout"].strip() == "5"


async def test_a_gated_step_keeps_its_place_in_a_busy_queue(fed):
    """gamma is full; the downstream step is queued there (behind its gate) before two jobs
    that want the whole cluster. When prep's data has arrived the gate is cancelled and the
    step starts ahead of both: a held step released now would queue behind them."""
    from diamond_jupyter.model import Constraints, JobSpec, Resources

    def whole_gamma(name: str, secs: int) -> JobSpec:
        return JobSpec(name=name, script=f"sleep {secs}\n", resources=Resources(
            nodes=2, walltime_s=300), constraints=Constraints(exclusive=True))
    blocker = await fed.submit(whole_gamma("blocker", 40), "gamma")
    await fed.wait(blocker.id, until=lambda j: j.started_at is not None or j.state.terminal,
                   timeout=300)
    view = await fed.run_workflow(textwrap.dedent("""\
        name: keeps-place
        steps:
          - name: prep
            site: alpha
            script: |
              #!/bin/bash
              sleep 2
              head -c 100000 /dev/urandom > d.bin
              sha256sum d.bin > d.sha
          - name: use
            site: gamma
            needs: [prep]
            inputs: [{from: prep, path: d.bin}, {from: prep, path: d.sha}]
            script: |
              #!/bin/bash
              #SBATCH -t 5
              sha256sum -c d.sha
        """))
    later = [await fed.submit(whole_gamma(f"later-{i}", 2), "gamma") for i in range(2)]
    done = await fed.wait_workflow(view.id, timeout=400)
    assert done.state == JobState.COMPLETED, done
    use = fed.job(steps_by_name(done)["use"].job)
    assert "d.bin: OK" in (await fed.logs(use.id))["stdout"]
    gate = next(j for j in fed.jobs(limit=None) if (j.origin or {}).get("gate"))
    gate = await fed.wait(gate.id, timeout=120)  # its cancel's end: the scheduler's to say
    assert gate.site == "gamma" and gate.state == JobState.CANCELLED
    blocker = await fed.wait(blocker.id, timeout=300)
    gone = next(e.at for e in fed.events_since(0, kinds=["job.state"], limit=None)
                if e.job_id == gate.id and e.data["state"] == "CANCELLED")
    assert gone < blocker.ended_at, "the gate went after gamma freed up: nothing to show"
    for j in later:
        j = await fed.wait(j.id, timeout=300)
        assert j.started_at is not None and use.started_at < j.started_at


async def test_a_gang_member_cannot_start_on_a_site_a_job_just_filled(fed):
    """The gang's all-or-nothing check asks the member's site now: a job that took all of
    gamma a moment ago (after the last cached view) and that calibrated runtimes expect to
    end early still holds it by the scheduler's own plan, so a member there cannot start now
    (found by the workflow benchmark: a gang was released onto a full gamma, 29.9 node-s
    wasted); once it has ended, the member can."""
    from diamond_jupyter.federation_workflow import _Ops
    from diamond_jupyter.model import Constraints, JobSpec, Resources

    member = fed.spec_from_text("#!/bin/bash\n#SBATCH -N 1\n#SBATCH -t 10\nsleep 5\n",
                                name="member")
    await fed.snapshots()  # a view cached before the blocker starts
    blocker = await fed.submit(JobSpec(
        name="blocker", script="sleep 20\n", resources=Resources(nodes=2, walltime_s=600),
        constraints=Constraints(exclusive=True)), "gamma")
    await fed.wait(blocker.id, until=lambda j: j.started_at is not None or j.state.terminal,
                   timeout=300)
    job = fed.job(blocker.id).model_copy(update={"spec": member, "site": "gamma"})
    ops = _Ops(fed)
    assert not await ops.can_start_now(job)
    await fed.wait(blocker.id, timeout=300)
    assert await ops.can_start_now(job)


async def test_a_gang_member_that_fails_runs_again_with_its_whole_gang(fed):
    """A gang member that fails is run again elsewhere with every other member: the one
    still running is cancelled and both are released together again, so no partial gang
    runs (before this, retrying a gang was tested with recorded site operations only). The
    partner runs long enough that its first run is still going when the flaky one fails."""
    text = textwrap.dedent("""\
        name: gang-retry
        steps:
          - name: flaky
            site: alpha
            gang: g
            retries: 1
            on_failure: resubmit-elsewhere
            script: |
              #!/bin/bash
              #SBATCH -t 2
              [ "$SLURM_CLUSTER_NAME" = alpha ] && exit 3
              echo "flaky ran on $SLURM_CLUSTER_NAME"
          - name: partner
            site: gamma
            gang: g
            script: |
              #!/bin/bash
              #SBATCH -t 2
              sleep 20
              echo "partner ran"
        """)
    view = await fed.run_workflow(text)
    done = await fed.wait_workflow(view.id, timeout=300)
    assert done.state == JobState.COMPLETED, done
    s = steps_by_name(done)
    assert s["flaky"].attempt == 1 and s["flaky"].site in ("beta", "gamma")
    assert (await fed.logs(s["flaky"].job))["stdout"].strip() == \
        f"flaky ran on {s['flaky'].site}"
    assert (await fed.logs(s["partner"].job))["stdout"].strip() == "partner ran"
    evs = fed.events_since(0, kinds=["workflow.step", "job.state"], limit=None)
    partner_jobs = list(dict.fromkeys(
        e.data["job"] for e in evs if e.kind == "workflow.step"
        and e.data["step"] == "partner" and e.data.get("job")))
    assert len(partner_jobs) == 2 and partner_jobs[-1] == s["partner"].job, partner_jobs
    # its cancel's end is the scheduler's to say, and may come after the workflow's end
    first = await fed.wait(partner_jobs[0], timeout=120)
    assert first.state == JobState.CANCELLED, first  # its first run did not go on alone
    # the second round: both members released after both were ready, neither started first
    rel = [e for e in evs if e.kind == "workflow.step" and e.data.get("phase") == "released"]
    last_release = {m: max(e.seq for e in rel if e.data["step"] == m)
                    for m in ("flaky", "partner")}
    starts = [next(e.seq for e in evs if e.kind == "job.state" and e.job_id == s[m].job
                   and e.data["state"] in ("RUNNING", "COMPLETED")) for m in ("flaky", "partner")]
    assert min(starts) > max(last_release.values())
