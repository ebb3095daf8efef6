"""PBS's subjobs read per task: `qstat -t` lists an array's subjobs (`123[4].server`) under
the array (`123[].server`); their states become the array's task states, so a dependency
on one subjob (`-W depend=afterok:123[4].server`) is judged by that subjob's own state, as
Slurm's and LSF's tasks are. PBS Pro lists the array's own record above its subjobs
(`B` once begun, a finished subjob `X`); Torque's listing of the array beside its subjobs
(a finished one `C`) is read the same way. Each subjob stays a record of its own (the
queue's view counts what it runs). Flux has no array tasks: each
copy of `--cc`/`flux bulksubmit` is a job of its own id, judged by its own state.
Recorded outputs in the documented formats; no test bed."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from diamond_jupyter.dialects.pbs_commands import PbsCommands, fold_subjobs, subjob_of
from diamond_jupyter.job_dependencies import dependencies_of, dependency_line, upstream_ids
from diamond_jupyter.model import Dependency, Job, JobSpec, JobState, JobStatus, utcnow

C, F, R, P = JobState.COMPLETED, JobState.FAILED, JobState.RUNNING, JobState.PENDING
T0 = utcnow() - timedelta(hours=1)


def _subjob(index: int, state: str, exit_status: int | None = None) -> dict[str, object]:
    attrs: dict[str, object] = {
        "Job_Name": "sweep", "Job_Owner": "bob@login01", "job_state": state,
        "queue": "workq", "array_index": index, "Resource_List": {"ncpus": 1,
                                                                   "walltime": "01:00:00"}}
    if exit_status is not None:
        attrs["Exit_status"] = exit_status
    return attrs


# `qstat -f -F json -x -t 123[].pbs01` (PBS Pro 2022): the array, then each subjob
PRO_SUBJOBS = json.dumps({
    "timestamp": 1796000000, "pbs_version": "2022.1.3", "pbs_server": "pbs01", "Jobs": {
        "123[].pbs01": {"Job_Name": "sweep", "Job_Owner": "bob@login01", "job_state": "B",
                        "queue": "workq", "array": "True", "array_indices_submitted": "1-4",
                        "array_indices_remaining": "4",
                        "array_state_count": "Queued:1 Running:1 Exiting:0 Expired:2 ",
                        "Resource_List": {"ncpus": 1, "walltime": "01:00:00"}},
        "123[1].pbs01": _subjob(1, "X", 0),
        "123[2].pbs01": _subjob(2, "X", 3),
        "123[3].pbs01": _subjob(3, "R"),
        "123[4].pbs01": _subjob(4, "Q"),
        "130.pbs01": {"Job_Name": "after2", "Job_Owner": "bob@login01", "job_state": "H",
                      "queue": "workq", "depend": "afterok:123[2].pbs01@pbs01"}}}, indent=4)

# Torque's `qstat -f -x`: the array's summary and its subjobs
TORQUE_SUBJOBS = "<Data><Job><Job_Id>548[].moab</Job_Id><Job_Name>sweep</Job_Name>" \
    "<Job_Owner>bob@login01</Job_Owner><job_state>R</job_state><queue>batch</queue></Job>" \
    + "".join(
    f"<Job><Job_Id>548[{i}].moab</Job_Id><Job_Name>sweep-{i}</Job_Name>"
    f"<Job_Owner>bob@login01</Job_Owner><job_state>{state}</job_state><queue>batch</queue>"
    f"{f'<exit_status>{code}</exit_status>' if code is not None else ''}</Job>"
    for i, state, code in ((0, "C", 0), (1, "C", 1), (2, "R", None), (3, "Q", None))
) + "</Data>"


def test_pro_subjobs_become_the_arrays_task_states() -> None:
    records = PbsCommands().parse_status(PRO_SUBJOBS)
    assert [r.native_id for r in records] == [
        "123[].pbs01", "123[1].pbs01", "123[2].pbs01", "123[3].pbs01", "123[4].pbs01",
        "130.pbs01"]
    assert (records[0].state, records[0].tasks) == (R, {"1": C, "2": F, "3": R, "4": P})
    assert [r.tasks for r in records[1:]] == [None] * 5


def test_torque_subjobs_beside_their_array_are_its_task_states() -> None:
    array = PbsCommands(flavor="torque").parse_status(TORQUE_SUBJOBS)[0]
    assert (array.native_id, array.state) == ("548[].moab", R)
    assert array.tasks == {"0": C, "1": F, "2": R, "3": P}


def test_a_subjob_whose_array_is_unlisted_and_plain_jobs_pass() -> None:
    plain = JobStatus(native_id="7.pbs01", state=R)
    alone = JobStatus(native_id="9[2].pbs01", state=F)
    assert fold_subjobs([plain, alone]) == [plain, alone]
    assert subjob_of("123[4].pbs01") == ("123[].pbs01", "4")
    assert subjob_of("123[4]") == ("123[]", "4")
    assert subjob_of("123[].pbs01") is None and subjob_of("123.pbs01") is None


def test_subjobs_are_asked_for_only_where_an_array_is_followed() -> None:
    assert PbsCommands().status_argv(["123[].pbs01", "7.pbs01"]) == [
        "qstat", "-f", "-F", "json", "-x", "-t", "123[].pbs01", "7.pbs01"]
    assert PbsCommands().status_argv(["7.pbs01"]) == [
        "qstat", "-f", "-F", "json", "-x", "7.pbs01"]
    assert PbsCommands(flavor="torque").status_argv(["548[].moab"]) == [
        "qstat", "-f", "-x", "548[].moab"]


def _job(native: str, state: JobState = P, *, deps: list[Dependency] = (),
         tasks: dict[str, JobState] | None = None, later_s: int = 0) -> Job:
    return Job(id=f"beta:{native}", site="beta", native_id=native, state=state, tasks=tasks,
               submitted_at=T0 + timedelta(seconds=later_s),
               spec=JobSpec(command="true", dependencies=list(deps)))


@pytest.mark.parametrize(("written", "task", "said"), [
    ("123[2].pbs01", F, "afterok task 2 of beta:123[].pbs01 (task FAILED, array RUNNING): "
                        "never satisfied"),
    ("123[1].pbs01", C, "afterok task 1 of beta:123[].pbs01 (task COMPLETED, array RUNNING): "
                        "satisfied"),
    ("123[4].pbs01", P, "afterok task 4 of beta:123[].pbs01 (task PENDING, array RUNNING): "
                        "waiting"),
])
def test_a_dependency_on_one_subjob_is_judged_by_its_own_state(written, task, said) -> None:
    [array] = PbsCommands().parse_status(PRO_SUBJOBS)[:1]
    up = _job(array.native_id, array.state, tasks=array.tasks)
    down = _job("130.pbs01", deps=[Dependency(kind="afterok", job_ids=[written],
                                              scheduler="pbs")], later_s=5)
    [d] = dependencies_of(down, {up.id: up, down.id: down}.get, scheduler="pbs")
    assert (d.job, d.task, d.task_state) == ("beta:123[].pbs01", written[4], task)
    assert dependency_line(d) == said


def test_a_flux_copy_is_a_job_of_its_own_id_not_a_task() -> None:
    """`flux submit --cc=1-4` gives each copy its own job id: a dependency names one copy's
    id and is judged by that job alone (no task part read from a Flux id)."""
    ids = upstream_ids("gamma", "ƒBq2XsHaw7Z", "flux")
    assert len(ids) > 1 and all(task is None for _, task in ids)
    up = _job("ƒBq2XsHaw7Z", F)
    down = _job("ƒBq2XsHaw80", deps=[Dependency(kind="afterok", job_ids=["ƒBq2XsHaw7Z"])],
                later_s=5)
    [d] = dependencies_of(down, {up.id: up}.get, scheduler="flux")
    assert (d.task, d.satisfied, d.never) == (None, False, True)
