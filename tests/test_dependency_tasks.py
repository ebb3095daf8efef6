"""A dependency on one task of a job array (`afterok:123_4`, LSF `123[4]`) is judged by
that task's own state, and Slurm's aftercorr task by task (task i of the waiting array on
task i of the other), from the task records the scheduler lists (squeue's and sacct's
per-task rows, folded into the array's status with each task's state kept). Where only
the array's state is known and it does not decide the task, the task is said unknown yet.
The status line, the `job.dependency` event and `--json` name the task and its state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from local_slurm import LocalSlurmQueue, alpha_job

from diamond_jupyter.dialects.outputs_common import TASKS_EXPANDED, fold_array_tasks
from diamond_jupyter.job_dependencies import dependencies_of, dependency_line
from diamond_jupyter.model import (
    Dependency,
    Job,
    JobState,
    JobStatus,
    job_json,
)
from diamond_jupyter.store import Store

C, F, R, P = JobState.COMPLETED, JobState.FAILED, JobState.RUNNING, JobState.PENDING


def _one(up: Job, written: str, kind: str = "afterok"):
    down = alpha_job("130", deps=[Dependency(kind=kind, job_ids=[written])], later_s=5)
    [d] = dependencies_of(down, {up.id: up, down.id: down}.get)
    return d


# -- folding keeps each task's state --------------------------------------------------------

def _array_of(native: str) -> str | None:
    return native.partition("_")[0] if "_" in native else None


def test_folding_an_arrays_records_keeps_each_tasks_state() -> None:
    records = [JobStatus(native_id="77_1", state=C), JobStatus(native_id="77_2", state=F),
               JobStatus(native_id="77_3", state=R),
               JobStatus(native_id="77_[4-6%2]", state=P)]
    [folded] = fold_array_tasks(records, _array_of)
    assert (folded.native_id, folded.state) == ("77", R)
    assert folded.tasks == {"1": C, "2": F, "3": R, "4": P, "5": P, "6": P}


def test_an_arrays_waiting_tasks_are_kept_up_to_a_bound() -> None:
    [folded] = fold_array_tasks([JobStatus(native_id="77_[1-4000000]", state=P)], _array_of)
    assert len(folded.tasks) == TASKS_EXPANDED and folded.tasks["1"] == P


def test_a_het_jobs_components_are_no_tasks() -> None:
    [folded] = fold_array_tasks([JobStatus(native_id="9+0", state=R),
                                 JobStatus(native_id="9+1", state=P)],
                                lambda n: n.partition("+")[0] if "+" in n else None)
    assert folded.tasks is None


# -- one task: its own state -----------------------------------------------------------------

@pytest.mark.parametrize(("array", "task", "kind", "said", "line"), [
    # the array runs on; task 4 already failed: never, said with the task's state
    (R, F, "afterok", (False, True), "(task FAILED, array RUNNING): never satisfied"),
    (R, C, "afterok", (True, False), "(task COMPLETED, array RUNNING): satisfied"),
    (R, F, "afternotok", (True, False), "(task FAILED, array RUNNING): satisfied"),
    (R, R, "after", (True, False), "(task RUNNING, array RUNNING): satisfied"),
    (R, P, "afterok", (False, False), "(task PENDING, array RUNNING): waiting"),
    # the array FAILED (another task did): task 4 succeeded, so its afterok is satisfied
    (F, C, "afterok", (True, False), "(task COMPLETED, array FAILED): satisfied"),
    # the array's state alone would say the opposite: task 4 is what counts
    (C, F, "afterok", (False, True), "(task FAILED, array COMPLETED): never satisfied"),
])
def test_one_task_is_judged_by_its_own_state(array, task, kind, said, line) -> None:
    up = alpha_job("123", array, tasks={"3": C, "4": task, "5": R})
    for written in ("123_4", "123[4]"):
        d = _one(up, written, kind)
        assert (d.task, d.task_state, d.state, (d.satisfied, d.never)) == \
            ("4", task, array, said)
    assert dependency_line(d) == f"{kind} task 4 of alpha:123 {line}"


def test_a_task_not_listed_is_unknown_yet_where_the_array_does_not_decide_it() -> None:
    """Task 4 left the queue unseen; the array FAILED (which task failed is not listed):
    waiting, said unknown yet, not guessed from the array."""
    d = _one(alpha_job("123", F, tasks={"3": F}), "123_4")
    assert (d.task_state, d.satisfied, d.never) == (None, False, False)
    assert dependency_line(d) == ("afterok task 4 of alpha:123 (task unknown yet, array "
                                  "FAILED): waiting (the task's state is unknown yet)")
    assert json.loads(json.dumps(d.model_dump(mode="json")))["task_state"] is None


# -- aftercorr: task i on task i ------------------------------------------------------------

def _corr(up: Job, array: str | None = "1-6"):
    dep = Dependency(kind="afterok", job_ids=[up.native_id], per_task=True, scheduler="slurm")
    down = alpha_job("131", deps=[dep], array=array, later_s=5)
    [d] = dependencies_of(down, {up.id: up, down.id: down}.get)
    return d


def test_aftercorr_says_how_each_corresponding_task_stands() -> None:
    up = alpha_job("123", R, tasks={"1": C, "2": C, "3": F, "4": R, "5": P})
    d = _corr(up)
    assert (d.type, d.satisfied, d.never) == ("aftercorr", False, True)
    assert d.tasks == "2 satisfied, 2 waiting, 1 unknown yet; never: 3 FAILED"
    assert dependency_line(d) == ("aftercorr alpha:123 RUNNING (tasks: 2 satisfied, 2 "
                                  "waiting, 1 unknown yet; never: 3 FAILED): never satisfied")


def test_aftercorr_is_satisfied_once_every_corresponding_task_succeeded() -> None:
    """The array FAILED (its task 9, which no task here waits on); tasks 1-3 succeeded."""
    d = _corr(alpha_job("123", F, tasks={"1": C, "2": C, "3": C, "9": F}), "1-3")
    assert (d.satisfied, d.never, d.tasks) == (True, False, "3 satisfied")


def test_aftercorr_of_a_job_with_no_array_is_judged_on_the_whole_array() -> None:
    assert (_corr(alpha_job("123", C), None).satisfied, _corr(alpha_job("123", R), None).tasks) == \
        (True, None)


# -- the store, the journal's event, the monitor and `diamond status --json` ---------------

def test_task_states_are_stored_and_only_move_forward(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    store.upsert_job(alpha_job("123", R))
    before, after = store.record_task_states("alpha:123", {"1": R, "2": P})
    assert before.tasks is None and after.tasks == {"1": R, "2": P}
    assert store.record_task_states("alpha:123", {"1": R}) is None  # nothing new
    _, after = store.record_task_states("alpha:123", {"1": F, "2": R})
    assert store.get_job("alpha:123").tasks == after.tasks == {"1": F, "2": R}
    # an ended task's state is final; a task listed PENDING again does not move it back
    assert store.record_task_states("alpha:123", {"1": C, "2": P}) is None
    assert store.jobs_with_ids(["alpha:123"])["alpha:123"].tasks == after.tasks
    assert "tasks" not in job_json(store.get_job("alpha:123"))  # not every face's business


async def test_a_task_ending_is_a_dependency_event_while_its_array_runs_on(
        tmp_path: Path) -> None:
    from diamond_jupyter.journal import Journal

    journal = Journal(Store(tmp_path / "s.sqlite3"), {})
    journal.store.upsert_job(alpha_job("123", R))
    journal.store.upsert_job(alpha_job("130", deps=[Dependency(kind="afterok", job_ids=["123_2"])],
                                  later_s=5))
    journal.store.upsert_job(alpha_job("131", deps=[Dependency(kind="afterok", job_ids=["123_3"])],
                                  later_s=6))
    assert journal.apply_tasks("alpha:123", {"2": R, "3": R})
    assert journal.apply_tasks("alpha:123", {"2": F, "3": R})
    assert not journal.apply_tasks("alpha:123", {"2": F})
    turns = [(e.job_id, e.data["outcome"], e.data["dependency"]["task"],
              e.data["dependency"]["task_state"], e.data["upstream_state"])
             for e in journal.store.events_since(0, kinds=["job.dependency"])]
    assert turns == [("alpha:130", "never", "2", "FAILED", "RUNNING")]


class Bed:
    """A local Slurm site whose squeue lists array 500's tasks (1 running, 2 failed, 3-4
    waiting) and job 501 waiting on task 2 of it, 502 on task 1; both in a real store."""

    def __init__(self, tmp: Path) -> None:
        self.queue = LocalSlurmQueue(tmp, "alpha")
        self.sites = tmp / "sites.yaml"
        self.sites.write_text(yaml.safe_dump({
            "sites": [self.queue.site.cfg.model_dump(mode="json")],
            "store": str(tmp / "store.sqlite3")}))
        self.sites.chmod(0o600)
        store = Store(tmp / "store.sqlite3")
        store.upsert_job(alpha_job("500", R, token="arr00001", array="1-4"))
        store.upsert_job(alpha_job("501", deps=[Dependency(kind="afterok", job_ids=["500_2"])],
                              later_s=5, token="down0001"))
        store.upsert_job(alpha_job("502", deps=[Dependency(kind="afterok", job_ids=["500_1"])],
                              later_s=6, token="down0002"))
        self.queue.lists([
            ("500_1", "RUNNING", "None", "arr00001", "arr"),
            ("500_2", "FAILED", "NonZeroExitCode", "arr00001", "arr"),
            ("500_[3-4]", "PENDING", "Resources", "arr00001", "arr"),
            ("501", "PENDING", "Dependency", "down0001", "j501"),
            ("502", "PENDING", "Dependency", "down0002", "j502")])


def test_diamond_status_reads_the_tasks_and_says_the_one_waited_for(
        tmp_path, monkeypatch, capsys) -> None:
    from diamond_jupyter.cli import main

    monkeypatch.setenv("DIAMOND_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DIAMOND_HANDOVER", "0")
    bed = Bed(tmp_path)
    assert main(["status", "--config", str(bed.sites), "alpha:500"]) == 0  # polls the array
    capsys.readouterr()
    assert main(["status", "--config", str(bed.sites), "alpha:501"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "  depends on afterok task 2 of alpha:500 (task FAILED, array RUNNING): never "
        "satisfied"]
    assert main(["status", "--config", str(bed.sites), "--json", "alpha:502"]) == 0
    [dep] = json.loads(capsys.readouterr().out)["depends_on"]
    assert (dep["job"], dep["task"], dep["task_state"], dep["state"], dep["satisfied"]) == \
        ("alpha:500", "1", "RUNNING", "RUNNING", False)
    events = Store(tmp_path / "store.sqlite3").events_since(0, kinds=["job.dependency"])
    assert [(e.job_id, e.data["outcome"], e.data["dependency"]["task"]) for e in events] == \
        [("alpha:501", "never", "2")]


_STATES = st.sampled_from([P, R, C, F, JobState.CANCELLED, JobState.TIMEOUT])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(0, 9).map(str), _STATES, max_size=6), st.integers(0, 9),
       st.sampled_from(["afterok", "afternotok", "afterany", "after"]))
def test_a_listed_task_decides_and_an_unlisted_one_of_a_running_array_is_unknown(
        tasks, index, kind) -> None:
    """Whatever the other tasks did: a listed task is judged by its own state alone (an
    afterok on it never once it ended other than COMPLETED); an unlisted task of an array
    still running is neither satisfied nor never, its state unknown yet."""
    d = _one(alpha_job("123", R, tasks=tasks or None), f"123_{index}", kind)
    state = tasks.get(str(index))
    assert d.task_state == state
    if state is None:
        assert (d.satisfied, d.never) == (False, False)
        assert dependency_line(d).endswith("waiting (the task's state is unknown yet)")
        return
    ended = state.terminal
    expected = {"afterok": (state == C, ended and state != C),
                "afternotok": (ended and state != C, state == C),
                "afterany": (ended, False),
                "after": (ended or state == R, False)}[kind]
    assert (d.satisfied, d.never) == expected


def test_a_task_changing_state_is_a_job_state_event_with_the_arrays_counts(
        tmp_path: Path) -> None:
    """Between full state reads the sidebar's counts follow this event: each change of a
    task's state is one `job.updated` carrying the counts then, valid against the schema."""
    from types import SimpleNamespace

    import jsonschema

    from diamond_jupyter.server.events import JOB_STATE, SCHEMA_DIR, to_emission

    store = Store(tmp_path / "s.sqlite3")
    store.upsert_job(alpha_job("123", R))
    store.record_task_states("alpha:123", {"1": R, "2": R, "3": P})
    store.record_task_states("alpha:123", {"1": C, "2": R, "3": R})
    assert store.record_task_states("alpha:123", {"1": C}) is None  # no change, no event
    said = store.events_since(0, kinds=["job.updated"])
    assert [e.data["array_tasks"] for e in said] == [
        {"total": 3, "states": {"PENDING": 1, "RUNNING": 2}},
        {"total": 3, "states": {"COMPLETED": 1, "RUNNING": 2}}]
    fed = SimpleNamespace(job=store.get_job, lookout=lambda _job_id: None)
    schema = yaml.safe_load((SCHEMA_DIR / "job-state.yaml").read_text())
    schema_id, payload = to_emission(said[-1], fed)
    jsonschema.validate(payload, schema)
    assert (schema_id, payload["state"], payload["array_tasks"]) == (
        JOB_STATE, "RUNNING", job_json(store.get_job("alpha:123"))["array_tasks"])
    # a job's other events say nothing of its tasks: a client keeps the counts it has
    state_event = store.apply_state("alpha:123", C)
    assert "array_tasks" not in to_emission(state_event, fed)[1]
