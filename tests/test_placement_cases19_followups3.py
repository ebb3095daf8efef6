"""Third follow-ups to the nineteenth sweep: jobs waiting on a dependency at the other
schedulers, read from their recorded-style outputs as each documents it (PBS Pro's and
Torque's `qsub -W depend`, LSF's `bsub -w`, Grid Engine's `-hold_jid` and `-hold_jid_ad`,
Flux's `--dependency`), on selene's nodes and running jobs (tests/test_placement_cases13).

Found misread and fixed (before, only Slurm's squeue field was read): a PBS job held by
its dependency (H, Hold_Types s), an LSF job pending on its dependency condition, a Grid
Engine job held on its predecessors (hqw) and a Flux job in DEPEND were left out of the
queue however soon their parents end, so a newer job was planned to start before them.
They are now counted from their parents' planned start or end, as Slurm's are (a Flux job
waiting for its begin time alone from then, as Slurm's BeginTime); where the output does
not say what a job waits for (a job name, a count, AND and OR mixed, a hold of another kind
on top), it is still left out, and the note says so. The notes also count a waiting job
of no queue (Flux's, Grid Engine's not yet in one) in every queue.
"""

from __future__ import annotations

import json

from test_placement_cases import NOW, at
from test_placement_cases13 import running
from test_placement_cases19 import BUSY
from test_placement_cases19_followups import _selene

from diamond_jupyter.dialects.dependencies import (
    flux_dependency,
    lsf_dependency,
    pbs_dependencies,
    sge_dependency,
)
from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.flux_ids import flux_f58
from diamond_jupyter.dialects.lsf_commands import BJOBS_FIELDS, LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.model import JobStatus
from diamond_jupyter.placement_ahead import _waiting_notes
from diamond_jupyter.placement_sim import build_state, pending_demands, queue_starts

H = 3600.0
# n01 frees at +2 h, n02 and n03 at +5 h (n04-n06 idle): a 4-node job fits from +2 h
STAGGERED = [running("21", "bob", "n01", 64, 2, 10), running("22", "bob", "n02", 64, 5, 10),
             running("23", "bob", "n03", 64, 5, 10)]


def _starts(waiting: list[JobStatus], lines=tuple(BUSY), rename: str = ""):
    """When selene's plan (Slurm's, walltimes) starts each of `waiting` (another dialect's
    records), with `lines` running (their ids + `rename`: the other scheduler's spelling)."""
    _, snap = _selene(*lines)
    ran = [j.model_copy(update={"native_id": j.native_id + rename}) for j in snap.jobs]
    snap = snap.model_copy(update={"jobs": ran + waiting})
    st = build_state(snap, snap.nodes, {}, NOW, {})
    return queue_starts(st, pending_demands(snap, st, {}, NOW, {}), "plan")


def _notes(waiting: list[JobStatus], lines=tuple(BUSY)) -> list[str]:
    """What a job starting +30 h in queue batch is told of `waiting` (an LSF site's)."""
    _, snap = _selene(*lines)
    snap = snap.model_copy(update={"jobs": snap.jobs + waiting})
    members = {"batch": [n.name for n in snap.nodes]}
    return _waiting_notes("batch", snap, members, 30 * H, NOW, where="queue batch")


# ---- PBS: depend on a job held by the system hold -------------------------------------

def _pbs_job(jid: str, depend: str | None, state: str = "H", holds: str = "s") -> dict:
    rec = {"Job_Name": f"job{jid}", "Job_Owner": "bob@login1", "job_state": state,
           "queue": "batch", "qtime": "Sun Mar  1 07:00:00 2026",
           "Resource_List": {"nodect": 4, "ncpus": 256, "walltime": "10:00:00",
                             "select": "4:ncpus=64"}}
    if state == "H":
        rec["Hold_Types"] = holds
    if depend is not None:
        rec["depend"] = depend
    return rec


def _pbs(jobs: dict[str, dict]) -> list[JobStatus]:
    """`qstat -f -F json` of `jobs` read by the PBS Pro dialect."""
    return PbsCommands().parse_status(json.dumps(
        {"timestamp": 1772348400, "pbs_version": "2022.1.3", "pbs_server": "pbs01",
         "Jobs": jobs}))


def test_a_pbs_job_held_on_its_dependency_is_counted_from_its_parents_end():
    """30 waits for running 21 (afterok, ends +5 h); 31 (submitted `on:1`) waits for 30,
    which names it `beforeok`: the server counted 31's `on` down to 0 and wrote the mirror
    `afterok:30` on it. 30 starts +5 h, 31 when 30 ends, +15 h (before: both left out)."""
    jobs = _pbs({"30.pbs01": _pbs_job("30", "afterok:21.pbs01@pbs01,beforeok:31.pbs01@pbs01"),
                 "31.pbs01": _pbs_job("31", "afterok:30.pbs01@pbs01")})
    assert {j.native_id: j.dependency for j in jobs} == {
        "30.pbs01": "afterok:21.pbs01(unfulfilled)",
        "31.pbs01": "afterok:30.pbs01(unfulfilled)"}
    assert _starts(jobs, rename=".pbs01") == {"30.pbs01": 5 * H, "31.pbs01": 15 * H}


def test_a_pbs_job_held_otherwise_or_waiting_for_children_to_come_is_left_out():
    """A user hold on top of the system hold (Hold_Types us) keeps it for good; `on:2`
    with one `before` job seen waits for a job not submitted yet: neither is read."""
    jobs = _pbs({"30.pbs01": _pbs_job("30", "afterok:21.pbs01@pbs01", holds="us"),
                 "31.pbs01": _pbs_job("31", "on:2"),
                 "32.pbs01": _pbs_job("32", "beforeany:31.pbs01@pbs01", state="Q")})
    assert [j.dependency for j in jobs] == [None, None, None]
    assert "30.pbs01" not in _starts(jobs, rename=".pbs01")


def test_pbs_depend_kinds_read_as_pbs_means_them():
    """Torque's array kinds on the array's record, `after` its start, a parent's server
    name spelled as the queue spells it; a count on an array (`[][5]`) is not read."""
    got = pbs_dependencies(
        {"40.srv": "afterokarray:12[].srv.example.org@srv,after:13.srv",
         "41.srv": "afterok:12[][5].srv"}, ["40.srv", "41.srv"], ["12[].srv", "13.srv"])
    assert got == {"40.srv": "afterok:12[].srv(unfulfilled),after:13.srv(unfulfilled)"}


# ---- LSF: bjobs -o dependency, an AND waits for the last, an OR the first --------------

def _lsf(jid: str, dependency: str | None,
         reason: str = "Job dependency condition not satisfied") -> JobStatus:
    rec = {"JOBID": jid, "STAT": "PEND", "USER": "bob", "QUEUE": "batch",
           "JOB_NAME": f"job{jid}", "PEND_REASON": reason, "SLOTS": "256",
           "RUNTIMELIMIT": "600.0 min", "SUBMIT_TIME": "Mar  1 08:00",
           "DEPENDENCY": dependency or ""}
    text = json.dumps({"COMMAND": "bjobs", "JOBS": 1, "RECORDS": [rec]})
    [job] = LsfCommands(now=lambda: NOW).parse_status(text)
    return job


def test_an_lsf_and_waits_for_its_last_parent_an_or_for_its_first():
    """21 ends +2 h, 22 +5 h: `done(21) && ended(22)` starts +5 h, `done(21) || done(22)`
    +2 h (before: both left out)."""
    assert BJOBS_FIELDS.endswith(" dependency")
    both, first = _lsf("30", "done(21) && ended(22)"), _lsf("30", "done(21) || done(22)")
    assert (both.dependency, first.dependency) == (
        "afterok:21(unfulfilled),afterany:22(unfulfilled)",
        "afterok:21(unfulfilled)?afterok:22(unfulfilled)")
    assert _starts([both], STAGGERED) == {"30": 5 * H}
    assert _starts([first], STAGGERED) == {"30": 2 * H}


def test_lsf_conditions_read_as_bsub_w_means_them():
    assert lsf_dependency("started(21) && exit(22, !=0) && post_done(23[4]) && 24") == (
        "after:21(unfulfilled),afternotok:22(unfulfilled),afterok:23[4]:24(unfulfilled)")
    assert lsf_dependency("(done(21) && done(22)) && ended(23)") == \
        "afterok:21:22(unfulfilled),afterany:23(unfulfilled)"
    for unread in ("(done(21) && done(22)) || done(23)", 'done("nightly")', "!done(21)",
                   "numdone(21, >= 4)", "done(21", ""):
        assert lsf_dependency(unread) is None, unread


def test_an_lsf_job_pending_for_another_reason_or_unread_is_left_out_and_said():
    """A job pending on its queue's limit has no dependency read; one whose condition is
    not read is left out, and the note says so."""
    assert _lsf("30", "done(21)", reason="The queue has reached its job slot limit"
                ).dependency is None
    unread = _lsf("31", 'done("nightly")')
    assert "31" not in _starts([unread])
    assert ("queue batch: job 31 waits on a dependency that the queue's output does not say "
            "in full (or on a job not in the queue): not known when, so it is left out, "
            "not counted ahead of the job") in _notes([unread])
    said = _notes([_lsf("30", "ended(21)")])
    assert any(n.startswith("queue batch: job 30 waits for job 21 to end (Dependency "
                            "afterany:21(unfulfilled)): from its planned end, +5:00:00")
               for n in said), said


# ---- Grid Engine: qstat -f -xml -r predecessor_jobs, ad_predecessor_jobs --------------

def _sge(jid: str, state: str = "hqw", pred: tuple[str, ...] = (), ad: tuple[str, ...] = (),
         tasks: str = "") -> JobStatus:
    more = "".join(f"<predecessor_jobs>{p}</predecessor_jobs>" for p in pred) + "".join(
        f"<ad_predecessor_jobs>{p}</ad_predecessor_jobs>" for p in ad)
    xml = (f'<?xml version="1.0"?><job_info><queue_info/><job_info>'
           f'<job_list state="pending"><JB_job_number>{jid}</JB_job_number>'
           f"<JAT_prio>0.5</JAT_prio><JB_name>job{jid}</JB_name><JB_owner>bob</JB_owner>"
           f"<state>{state}</state><JB_submission_time>{at(-1)}</JB_submission_time>"
           f"<queue_name></queue_name><slots>256</slots>"
           + (f"<tasks>{tasks}</tasks>" if tasks else "")
           + f'<hard_request name="h_rt" resource_contribution="0">36000</hard_request>'
           f"{more}</job_list></job_info></job_info>")
    [job] = SgeCommands().parse_status(xml)
    return job


def test_a_grid_engine_job_held_on_predecessors_starts_when_the_last_ends():
    """-hold_jid 21,22 (ending +2 h and +5 h): +5 h (before: left out); queued without the
    hold (qw), no dependency is read."""
    job = _sge("30", pred=("21", "22"))
    assert job.dependency == "afterany:21:22(unfulfilled)"
    assert _starts([job], STAGGERED) == {"30": 5 * H}
    assert _sge("31", state="qw", pred=("21",)).dependency is None


def test_grid_engine_hold_jid_ad_is_read_task_by_task():
    assert sge_dependency(["21"], ["40"]) == \
        "afterany:21(unfulfilled),aftercorr:40(unfulfilled)"
    assert _sge("41", ad=("40",), tasks="1-4:1").dependency == "aftercorr:40(unfulfilled)"
    assert sge_dependency(["nightly"], []) is None


# ---- Flux: flux jobs --json dependencies ------------------------------------------------

def _flux(jid: int, deps: list[str], urgency: int = 16) -> JobStatus:
    rec = {"id": jid, "userid": 1001, "username": "bob", "urgency": urgency,
           "state": "DEPEND", "name": f"job{jid}", "nnodes": 4, "ncores": 256,
           "duration": 36000.0, "t_submit": NOW.timestamp() - 3600, "dependencies": deps}
    [job] = FluxCommands().parse_status(json.dumps({"jobs": [rec]}))
    return job


def test_a_flux_job_in_depend_is_counted_from_its_parents():
    """after-success on 21 (in F58, as the user wrote it) and after-start on 22: it starts
    once 21 ends, +5 h (before: left out)."""
    job = _flux(30, [f"after-success={flux_f58(21)}", "after-start=22"])
    assert job.dependency == "afterok:21(unfulfilled),after:22(unfulfilled)"
    assert _starts([job]) == {"30": 5 * H}


def test_flux_dependencies_not_read_and_held_jobs_are_left_out():
    """A begin-time, another plugin's dependency, an id in words: not read; a job held
    (urgency 0) has no dependency read."""
    for deps in (["begin-time=1772360000.000"], ["after-finish=21", "singleton=job"],
                 ["after-finish=ant-ant-ant--ant-ant-ant"]):
        assert flux_dependency(deps) is None, deps
    assert flux_dependency(["after-finish=0x15", "after-except=21"]) == \
        "afterany:21(unfulfilled),afternotok:21(unfulfilled)"
    assert _flux(30, ["after-finish=21"], urgency=0).dependency is None


def test_a_flux_job_waiting_for_its_begin_time_alone_is_ahead_from_then():
    """begin-time (flux's plugin: seconds since the epoch) +8 h: it takes its place then,
    and a job starting later is told so (before: left out); with an after* dependency
    too, it is not read."""
    begin = NOW.timestamp() + 8 * H
    job = _flux(30, [f"begin-time={begin:.3f}"])
    assert (job.dependency, job.estimated_start.timestamp()) == (None, begin)
    assert _starts([job]) == {"30": 8 * H}
    assert any(n.startswith("queue batch: job 30 waits for its begin time 2026-03-01 17:00 "
                            f"(dependency: begin-time={begin:.3f}): from then")
               for n in _notes([job])), _notes([job])
    both = _flux(31, [f"begin-time={begin:.3f}", "after-finish=21"])
    assert (both.dependency, both.estimated_start) == (None, None)
    assert "31" not in _starts([both])
