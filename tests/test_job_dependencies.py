"""What a job waits for, shown by every face (no test bed): `dependencies_of` over stored
jobs (each kind against each end, the scheduler's DependencyNeverSatisfied, a job that
started, a workflow's gate and upstream steps), `Federation.dependencies` on a real store,
`diamond status` (text, and `depends_on` in --json) against a local Slurm site whose
`squeue` lists the waiting job, `%diamond status` and the agent's job summary."""

from __future__ import annotations

import getpass
import json
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from local_slurm import LocalSlurmQueue

from diamond_jupyter.job_dependencies import (
    UpstreamStep,
    dependencies_json,
    dependencies_of,
    dependency_line,
)
from diamond_jupyter.model import Dependency, Job, JobSpec, JobState, utcnow
from diamond_jupyter.sites import token_tag
from diamond_jupyter.store import Store

T0 = utcnow() - timedelta(hours=1)


def _job(native: str, state: JobState = JobState.PENDING, *, deps: list[Dependency] = (),
         site: str = "alpha", reason: str | None = None, later_s: int = 0,
         origin: dict | None = None, token: str | None = None) -> Job:
    return Job(id=f"{site}:{native}", site=site, native_id=native, name=f"j{native}",
               state=state, reason=reason, submitted_at=T0 + timedelta(seconds=later_s),
               started_at=T0 if state == JobState.RUNNING else None, origin=origin,
               token=token, spec=JobSpec(command="true", dependencies=list(deps)))


def _finder(*jobs: Job):
    by_id = {j.id: j for j in jobs}
    return by_id.get


def _one(kind: str, upstream: JobState, **kw) -> tuple[bool, bool]:
    up = _job("10", upstream)
    down = _job("11", deps=[Dependency(kind=kind, job_ids=["10"])], later_s=5, **kw)
    [d] = dependencies_of(down, _finder(up, down))
    assert (d.job, d.type, d.state) == ("alpha:10", kind, upstream)
    return d.satisfied, d.never


@pytest.mark.parametrize(("kind", "upstream", "said"), [
    ("afterok", JobState.COMPLETED, (True, False)),
    ("afterok", JobState.RUNNING, (False, False)),
    ("afterok", JobState.FAILED, (False, True)),
    ("afterok", JobState.CANCELLED, (False, True)),
    ("afterok", JobState.TIMEOUT, (False, True)),
    ("afternotok", JobState.COMPLETED, (False, True)),
    ("afternotok", JobState.FAILED, (True, False)),
    ("afterany", JobState.FAILED, (True, False)),
    ("afterany", JobState.PENDING, (False, False)),
    ("after", JobState.RUNNING, (True, False)),
    ("after", JobState.PENDING, (False, False)),
])
def test_each_kind_against_each_end_of_the_job_waited_for(kind, upstream, said):
    assert _one(kind, upstream) == said


def test_the_schedulers_dependency_never_satisfied_makes_an_unknown_job_never():
    down = _job("11", deps=[Dependency(kind="afterok", job_ids=["99"])],
                reason="DependencyNeverSatisfied")
    [d] = dependencies_of(down, _finder(down))
    assert (d.job, d.state, d.satisfied, d.never) == ("alpha:99", None, False, True)
    assert dependency_line(d) == "afterok alpha:99: never satisfied"


def test_a_job_not_known_here_is_waited_for_and_said_so():
    down = _job("11", deps=[Dependency(kind="afterany", job_ids=["99"])], reason="Dependency")
    [d] = dependencies_of(down, _finder(down))
    assert (d.satisfied, d.never) == (False, False)
    assert dependency_line(d) == "afterany alpha:99: waiting (a job diamond does not know)"


def test_a_job_that_started_had_every_dependency_satisfied():
    up = _job("10", JobState.FAILED)
    down = _job("11", JobState.RUNNING, deps=[Dependency(kind="afterany", job_ids=["10"])],
                later_s=5)
    [d] = dependencies_of(down, _finder(up, down))
    assert (d.satisfied, d.never) == (True, False)


def test_a_native_id_reused_by_a_newer_job_is_not_the_one_waited_for():
    newer = _job("10", JobState.FAILED, later_s=60)  # took the id after the job was queued
    down = _job("11", deps=[Dependency(kind="afterok", job_ids=["10"])], later_s=5)
    [d] = dependencies_of(down, _finder(newer, down))
    assert (d.job, d.state, d.never) == ("alpha:10", None, False)


def test_a_dependency_read_from_another_schedulers_script_is_not_shown():
    """A PBS script's `-W depend=afterok:7` names the PBS site's job 7: sent to a Slurm site
    it was dropped at the submit (said then), so alpha:7 is not what the job waits for."""
    down = _job("11", deps=[Dependency(kind="afterok", job_ids=["7"], scheduler="pbs"),
                            Dependency(kind="afterany", job_ids=["8"], scheduler="slurm")])
    assert [d.job for d in dependencies_of(down, _finder(down), scheduler="slurm")] \
        == ["alpha:8"]


def test_a_workflow_step_shows_its_upstream_steps_not_its_gate():
    gate = _job("20", origin={"workflow": "wf-1", "step": "fit", "gate": True})
    same_site = _job("21", JobState.RUNNING)
    other_site = _job("7", JobState.FAILED, site="beta")
    step = _job("22", deps=[Dependency(kind="afterany", job_ids=["20"]),
                            Dependency(kind="afterok", job_ids=["21"])], later_s=5,
                origin={"workflow": "wf-1", "step": "fit"})
    deps = dependencies_of(step, _finder(gate, same_site, other_site, step), [
        UpstreamStep(name="prep", phase="queued", job=same_site),
        UpstreamStep(name="far", phase="failed", job=other_site),
        UpstreamStep(name="late", phase="waiting")])
    assert [dependency_line(d) for d in deps] == [
        "afterok alpha:21 RUNNING (step prep): waiting",
        "step far: beta:7 FAILED, held by its workflow: never satisfied",
        "step late: no job yet, held by its workflow: waiting"]
    assert dependencies_json(deps)[1] == {"job": "beta:7", "type": "workflow",
                                          "satisfied": False, "never": True,
                                          "state": "FAILED", "step": "far", "task": None,
                                          "task_state": None, "tasks": None}


# -- through the facade and the faces -----------------------------------------------------

class Bed:
    """A local Slurm site `alpha` whose squeue lists job 11 waiting on job 10 (FAILED, so
    never satisfied: Slurm's DependencyNeverSatisfied), with both jobs in a real store."""

    def __init__(self, tmp: Path) -> None:
        self.queue = LocalSlurmQueue(tmp, "alpha")
        self.store_path = tmp / "store.sqlite3"
        self.sites = tmp / "sites.yaml"
        self.sites.write_text(yaml.safe_dump({
            "sites": [self.queue.site.cfg.model_dump(mode="json")],
            "store": str(self.store_path)}))
        self.sites.chmod(0o600)
        store = Store(self.store_path)
        store.upsert_job(_job("10", JobState.FAILED, token="up0001"))
        store.upsert_job(_job("11", deps=[Dependency(kind="afterok", job_ids=["10"])],
                              later_s=5, token="down0001",
                              reason="DependencyNeverSatisfied"))
        store.upsert_job(_job("12", JobState.COMPLETED, token="solo0001"))
        self.queue.queue.write_text(
            f"11|PENDING|N/A|N/A|2026-01-01T00:00:00|10:00|1|1|{getpass.getuser()}|debug|N/A|"
            f"|DependencyNeverSatisfied|{token_tag('down0001')}|j11\n")


@pytest.fixture
def bed(tmp_path, monkeypatch) -> Bed:
    monkeypatch.setenv("DIAMOND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DIAMOND_HANDOVER", "0")
    return Bed(tmp_path)


def test_diamond_status_says_what_the_job_waits_for_in_text_and_json(bed, capsys):
    from diamond_jupyter.cli import main

    assert main(["status", "--config", str(bed.sites), "alpha:11"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("alpha:11\tPENDING\tj11 (DependencyNeverSatisfied)")
    assert lines[1:] == ["  depends on afterok alpha:10 FAILED: never satisfied"]

    assert main(["status", "--config", str(bed.sites), "--json", "alpha:11"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["id"] == "alpha:11" and shown["state"] == "PENDING"
    assert shown["depends_on"] == [{"job": "alpha:10", "type": "afterok", "satisfied": False,
                                    "never": True, "state": "FAILED", "step": None,
                                    "task": None, "task_state": None, "tasks": None}]


def test_a_job_without_dependencies_shows_one_line_and_an_empty_list(bed, capsys):
    from diamond_jupyter.cli import main

    assert main(["status", "--config", str(bed.sites), "alpha:12"]) == 0
    assert capsys.readouterr().out.splitlines() == ["alpha:12\tCOMPLETED\tj12"]
    assert main(["status", "--config", str(bed.sites), "--json", "alpha:12"]) == 0
    assert json.loads(capsys.readouterr().out)["depends_on"] == []


async def test_the_agents_job_summary_carries_what_it_waits_for(bed):
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.skills import SkillContext, summary

    fed = Federation(bed.sites, store=Store(bed.store_path), poll_interval_s=3600,
                     min_poll_s=3600)
    try:
        out = summary(SkillContext(fed=fed), fed.job("alpha:11"))
        [d] = out.depends_on
        assert (d.job, d.type, d.never) == ("alpha:10", "afterok", True)
        with pytest.raises(Exception, match="alpha:404"):
            fed.dependencies("alpha:404")
    finally:
        await fed.close()


def test_the_status_magic_prints_a_line_per_dependency(bed, monkeypatch, capsys, tmp_path):
    from sweep_helpers import in_process_shell

    shells = in_process_shell(monkeypatch, bed.sites, tmp_path / "data", tmp_path)
    shell = next(shells)
    try:
        shell.run_line_magic("diamond", "status alpha:11")
        assert "alpha:11 depends on afterok alpha:10 FAILED: never satisfied" \
            in capsys.readouterr().out
    finally:
        next(shells, None)


async def test_a_workflow_steps_upstreams_come_from_its_workflow_record(tmp_path):
    from diamond_jupyter.federation import Federation

    queue = LocalSlurmQueue(tmp_path, "alpha")
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [queue.site.cfg.model_dump(mode="json")]}))
    store = Store(tmp_path / "store.sqlite3")
    spec = {"name": "wf", "steps": [
        {"name": "prep", "site": "alpha", "script": "true"},
        {"name": "far", "site": "alpha", "script": "true"},
        {"name": "fit", "site": "alpha", "script": "true", "needs": ["prep", "far"]}]}
    rec = store.create_workflow("wf", spec, ["prep", "far", "fit"])
    store.upsert_job(_job("30", JobState.COMPLETED, token="prep0001"))
    store.update_step(rec.id, "prep", phase="done", token="prep0001")
    store.upsert_job(_job("31", deps=[Dependency(kind="afterok", job_ids=["30"])],
                          later_s=5, token="fit00001",
                          origin={"workflow": rec.id, "step": "fit"}))
    store.update_step(rec.id, "fit", phase="queued", token="fit00001")
    fed = Federation(sites, store=store, poll_interval_s=3600, min_poll_s=3600)
    try:
        assert [dependency_line(d) for d in fed.dependencies("alpha:31")] == [
            "afterok alpha:30 COMPLETED (step prep): satisfied",
            "step far: no job yet, held by its workflow: waiting"]
        store.update_step(rec.id, "far", phase="failed")
        assert dependency_line(fed.dependencies("alpha:31")[1]) == \
            "step far: no job yet, held by its workflow: never satisfied"
    finally:
        await fed.close()


# -- an id as the scheduler reads it: Flux's spellings, one task of an array ----------------

FLUX_VALUE = 123456789012  # ƒ4F6TKCo


@pytest.mark.parametrize("written", [
    "f4F6TKCo",  # F58 with the ASCII prefix (flux's f58plain)
    str(FLUX_VALUE),
    f"0x{FLUX_VALUE:x}",
    "0000.001c.be99.1a14",  # dotted hex
    "job.0000.001c.be99.1a14",
])
def test_a_flux_id_in_another_spelling_names_the_stored_job(written):
    """Flux reads every spelling of its ids: `--dependency=afterok:0x1cbe991a14` waits for
    the job stored under the F58 id its submit printed."""
    assert f"{FLUX_VALUE:016x}" == "0000001cbe991a14"
    up = _job("\u01924F6TKCo", JobState.COMPLETED, site="lassen")
    down = _job("\u01925Abc", deps=[Dependency(kind="afterok", job_ids=[written],
                                               scheduler="flux")], site="lassen", later_s=5)
    [d] = dependencies_of(down, _finder(up, down), scheduler="flux")
    assert (d.job, d.state, d.satisfied, d.never) == (up.id, JobState.COMPLETED, True, False)


def test_a_flux_spelling_is_no_other_schedulers_job():
    """On a Slurm site, `afterok:0x10` is not job 16 (sbatch reads no hex)."""
    up = _job("16", JobState.COMPLETED)
    down = _job("17", deps=[Dependency(kind="afterok", job_ids=["0x10"])], later_s=5)
    [d] = dependencies_of(down, _finder(up, down), scheduler="slurm")
    assert (d.job, d.state, d.satisfied) == ("alpha:0x10", None, False)


@pytest.mark.parametrize(("array", "kind", "said"), [
    (JobState.COMPLETED, "afterok", (True, False)),  # every task succeeded
    (JobState.COMPLETED, "afternotok", (False, True)),
    (JobState.FAILED, "afterok", (False, False)),  # which task failed is not known here
    (JobState.FAILED, "afterany", (True, False)),
    (JobState.RUNNING, "afterok", (False, False)),
])
def test_one_task_of_an_array_no_task_listed_is_judged_on_its_array(array, kind, said):
    """`afterok:123_4` (Slurm) names task 4 of array job 123: with no task listed, the
    dependency is decided only where the array's state decides it for every task, else
    its task's state is said unknown yet (tests/test_dependency_tasks.py: listed tasks)."""
    up = _job("123", array)
    for written in ("123_4", "123[4]"):
        down = _job("130", deps=[Dependency(kind=kind, job_ids=[written])], later_s=5)
        [d] = dependencies_of(down, _finder(up, down))
        assert (d.job, d.task, d.state) == ("alpha:123", "4", array)
        assert (d.satisfied, d.never) == said
    assert dependency_line(d).startswith(f"{kind} task 4 of alpha:123 (task ")
    assert dependency_line(d).endswith(
        "waiting (the task's state is unknown yet)" if said == (False, False) else
        "satisfied" if said[0] else "never satisfied")


def test_a_task_by_task_dependency_is_said_as_aftercorr():
    """`--dependency=aftercorr:123`: each task after the same task of 123 succeeded; the
    whole array COMPLETED satisfies every one, a running one not yet."""
    dep = Dependency(kind="afterok", job_ids=["123"], per_task=True, scheduler="slurm")
    down = _job("131", deps=[dep], later_s=5)
    [d] = dependencies_of(down, _finder(_job("123", JobState.RUNNING), down))
    assert (d.type, d.satisfied, d.never) == ("aftercorr", False, False)
    [d] = dependencies_of(down, _finder(_job("123", JobState.COMPLETED), down))
    assert dependency_line(d) == "aftercorr alpha:123 COMPLETED: satisfied"


# -- every listed job, in one pass; an event when one turns --------------------------------

def test_diamond_jobs_json_carries_what_each_job_waits_for(bed, capsys):
    from diamond_jupyter.cli import main

    assert main(["jobs", "--config", str(bed.sites), "--json"]) == 0
    listed = {j["id"]: j["depends_on"] for j in json.loads(capsys.readouterr().out)}
    assert listed["alpha:12"] == [] and listed["alpha:10"] == []
    assert [(d["job"], d["type"], d["never"]) for d in listed["alpha:11"]] == [
        ("alpha:10", "afterok", True)]


async def test_listed_jobs_dependencies_take_the_same_reads_for_4_jobs_or_40(tmp_path,
                                                                            monkeypatch):
    """A chain of jobs (each afterok on the one before), some of them workflow steps: what
    each waits for is read in one pass, not one read per job."""
    from diamond_jupyter.federation import Federation

    queue = LocalSlurmQueue(tmp_path, "alpha")
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [queue.site.cfg.model_dump(mode="json")]}))
    store = Store(tmp_path / "store.sqlite3")
    steps = {"name": "wf", "steps": [{"name": "a", "site": "alpha", "script": "true"},
                                     {"name": "b", "site": "alpha", "script": "true",
                                      "needs": ["a"]}]}
    for n in range(40):
        origin = None
        if n % 10 == 1:  # a workflow's step b, after its step a (the job before)
            rec = store.create_workflow(f"wf{n}", steps, ["a", "b"])
            store.update_step(rec.id, "a", phase="done", token=f"job{n - 1:05d}")
            origin = {"workflow": rec.id, "step": "b"}
        store.upsert_job(_job(str(100 + n), JobState.COMPLETED if n % 3 else JobState.PENDING,
                              deps=[Dependency(kind="afterok", job_ids=[str(99 + n)])] if n
                              else [], later_s=n, token=f"job{n:05d}", origin=origin))
    fed = Federation(sites, store=store, poll_interval_s=3600, min_poll_s=3600)
    reads = 0
    opened = store._conn

    def counted():
        nonlocal reads
        reads += 1
        return opened()

    monkeypatch.setattr(store, "_conn", counted)
    try:
        few, many = fed.jobs(limit=4, offset=17), fed.jobs(limit=40)  # 122..119
        reads = 0
        deps = fed.dependencies_of_jobs(few)
        reads_for_few, reads = reads, 0
        all_deps = fed.dependencies_of_jobs(many)
        assert reads == reads_for_few == 3, (reads, reads_for_few)  # jobs, workflows, steps
        assert [d.job for d in all_deps["alpha:139"]] == ["alpha:138"]
        assert [(d.job, d.step, d.state) for d in all_deps["alpha:131"]] == [
            ("alpha:130", "a", JobState.PENDING)]
        assert all_deps["alpha:100"] == [] and set(deps) == {j.id for j in few}
        assert {k: v for k, v in all_deps.items() if k in deps} == deps
        assert fed.dependencies("alpha:131") == all_deps["alpha:131"]
    finally:
        await fed.close()


def _journal(tmp_path, *jobs: Job):
    from diamond_jupyter.journal import Journal

    journal = Journal(Store(tmp_path / "s.sqlite3"), {})
    for job in jobs:
        journal.store.upsert_job(job)
    return journal


def _turns(journal) -> list[dict]:
    return [{"job": e.job_id, **e.data} for e in journal.store.events_since(
        0, kinds=["job.dependency"])]


async def test_a_dependency_turning_satisfied_or_never_is_an_event_once(tmp_path):
    """Job 10 ends COMPLETED: 11 (afterok) is told satisfied, 12 (afternotok) never, 13
    (afterok on another job) nothing; 10 told again, no second event."""
    import jsonschema

    from diamond_jupyter.server.events import JOB_DEPENDENCY, SCHEMA_DIR, to_emission

    journal = _journal(tmp_path, _job("10", JobState.RUNNING),
                       _job("11", deps=[Dependency(kind="afterok", job_ids=["10"])], later_s=1),
                       _job("12", deps=[Dependency(kind="afternotok", job_ids=["10"])],
                            later_s=2),
                       _job("13", deps=[Dependency(kind="afterok", job_ids=["99"])], later_s=3))
    journal.apply("alpha:10", JobState.RUNNING, source="poll")
    assert _turns(journal) == []
    journal.apply("alpha:10", JobState.COMPLETED, exit_code=0, source="poll")
    journal.apply("alpha:10", JobState.COMPLETED, exit_code=0, source="poll")
    turns = _turns(journal)
    assert [(t["job"], t["outcome"], t["dependency"]["job"], t["upstream_state"])
            for t in turns] == [("alpha:11", "satisfied", "alpha:10", "COMPLETED"),
                                ("alpha:12", "never", "alpha:10", "COMPLETED")]
    assert turns[1]["dependency"] == {"job": "alpha:10", "type": "afternotok",
                                      "satisfied": False, "never": True, "state": "COMPLETED",
                                      "step": None, "task": None, "task_state": None,
                                      "tasks": None}
    ev = journal.store.events_since(0, kinds=["job.dependency"])[0]
    schema_id, payload = to_emission(ev, None)
    schema = yaml.safe_load((SCHEMA_DIR / "job-dependency.yaml").read_text())
    assert schema_id == JOB_DEPENDENCY == schema["$id"] and schema["version"] == "1"
    jsonschema.validate(payload, schema)
    assert payload["outcome"] == "satisfied" and payload["seq"] == ev.seq


async def test_a_start_satisfies_an_after_and_a_flux_spelling_is_followed(tmp_path):
    """`after` turns when the job waited for starts; a Flux job written in hex is the stored
    F58 one."""
    up = _job("\u01924F6TKCo", site="lassen")
    journal = _journal(tmp_path, up, _job(
        "\u01925Abc", site="lassen", later_s=5,
        deps=[Dependency(kind="after", job_ids=[f"0x{FLUX_VALUE:x}"], scheduler="flux")]))
    journal.apply(up.id, JobState.RUNNING, source="poll")
    assert [(t["job"], t["outcome"]) for t in _turns(journal)] == [
        ("lassen:\u01925Abc", "satisfied")]
