"""Waiting jobs' dependencies the plan approximated, now read as each scheduler documents
them (placement_deps, placement_sim, the dialects), on selene's nodes
(tests/test_placement_cases19_followups*):

- Grid Engine `-hold_jid` by job name or pattern (`prep*`): qstat -r lists what was
  asked (`predecessor_jobs_req`) and, where Grid Engine found them, the job numbers
  (`predecessor_jobs`). A name is now found among its owner's jobs of the listing
  submitted before it, as qsub does when the job is submitted; one naming no such job holds
  it back for nobody, and the snapshot's warnings say so (before: the job was left out).
- PBS `on:N`: the server counts N down as each job naming it with a before kind registers
  (and writes the mirror after kind on it), so a job still showing `on:N` waits for jobs
  not yet submitted: left out, its reason saying so (before: planned from the before jobs
  the listing named, as though none were to come). A server's `host\\:port` is no id.
- Slurm `singleton`: one job of a name and user runs at a time in submit order: its
  namesakes waiting with a smaller job id come first wherever they are listed, and one
  submitted after it does not (before: the namesakes listed ahead of it).
- Slurm `aftercorr` on a throttled array (`%N`): each task waits for the parent's task of
  its rank, which runs under the throttle, N at a time (before: every task past the N-th
  waited only for the first N); a child lane of several tasks waits until each of its tasks
  finds its parent task ended.
"""

from __future__ import annotations

import json

from test_placement_cases import NOW, at
from test_placement_cases13 import running
from test_placement_cases19 import BUSY, waiting
from test_placement_cases19_followups2 import _named, _queue
from test_placement_cases19_followups3 import STAGGERED, _pbs, _pbs_job, _starts

from diamond_jupyter.dialects.dependencies import ListedJob, pbs_dependencies, sge_named
from diamond_jupyter.dialects.sge_commands import SgeCommands

H = 3600.0


# ---- Grid Engine: -hold_jid by name ------------------------------------------------------

def _ge_job(jid: int, name: str, state: str = "qw", owner: str = "bob", slots: int = 256,
            req: tuple[str, ...] = (), found: tuple[str, ...] = ()) -> str:
    """One job_list of `qstat -f -xml -r` (running: state r, in a queue)."""
    holds = "".join(f"<predecessor_jobs_req>{r}</predecessor_jobs_req>" for r in req) + "".join(
        f"<predecessor_jobs>{f}</predecessor_jobs>" for f in found)
    where = "batch@n01" if state == "r" else ""
    return (f'<job_list state="{"running" if state == "r" else "pending"}">'
            f"<JB_job_number>{jid}</JB_job_number><JAT_prio>0.5</JAT_prio>"
            f"<JB_name>{name}</JB_name><JB_owner>{owner}</JB_owner><state>{state}</state>"
            f"<JB_submission_time>{at(-1)}</JB_submission_time>"
            f"<queue_name>{where}</queue_name><slots>{slots}</slots>"
            f'<hard_request name="h_rt" resource_contribution="0">36000</hard_request>'
            f"{holds}</job_list>")


def _ge(*jobs: str, skipped: list[str] | None = None):
    xml = ('<?xml version="1.0"?><job_info><queue_info>' + "".join(
        j for j in jobs if 'state="running"' in j) + "</queue_info><job_info>" + "".join(
        j for j in jobs if 'state="pending"' in j) + "</job_info></job_info>")
    return {j.native_id: j for j in SgeCommands().parse_status(xml, skipped)}


def test_a_grid_engine_hold_by_pattern_waits_for_the_owners_earlier_jobs_of_those_names():
    """bob's 30 holds on `job2*` and `nightly`: his running 21 and 22 (ending +2 h and
    +5 h) match, eve's 24 and his own 31 (submitted after 30) do not; `nightly` names no
    job and holds 30 back for nobody, said. 30 starts when 22 ends, +5 h (before: left
    out of the queue, however soon its parents end)."""
    said: list[str] = []
    jobs = _ge(_ge_job(21, "job21", "r", slots=64), _ge_job(22, "job22", "r", slots=64),
               _ge_job(24, "job24", owner="eve"),
               _ge_job(30, "main", "hqw", req=("job2*", "nightly")),
               _ge_job(31, "job29"), skipped=said)
    assert jobs["30"].dependency == "afterany:21:22(unfulfilled)"
    assert said == ["sge: qstat -r: job 30 (bob) holds on -hold_jid nightly, which names no "
                    "job of its owner submitted before it in the queue: it holds the job "
                    "back for nobody"]
    assert _starts([jobs["30"]], STAGGERED)["30"] == 5 * H


def test_a_grid_engine_hold_naming_no_job_holds_back_for_nobody():
    """bob's 32 holds only on `nothing`, which names no job of his: it takes its place in
    the queue now (1 node, free: starts at once), its reason saying why (before: left out,
    said nowhere)."""
    said: list[str] = []
    job = _ge(_ge_job(32, "solo", "hqw", slots=64, req=("nothing",)), skipped=said)["32"]
    assert (job.dependency, job.reason) == (
        None, "waits on -hold_jid nothing, which names no job in the queue: taken as met")
    assert len(said) == 1 and "-hold_jid nothing" in said[0]
    assert _starts([job], STAGGERED) == {"32": 0.0}


def test_a_name_holding_for_nobody_is_in_the_sites_warnings():
    """Through the site's snapshot (`qstat -f -xml -r`): the running job in its queue
    instance is matched by name, the name standing for none is said among the warnings."""
    xml = ('<?xml version="1.0"?><job_info><queue_info><Queue-List><name>all.q@n01</name>'
           "<qtype>BIP</qtype><slots_used>64</slots_used><slots_resv>0</slots_resv>"
           "<slots_total>64</slots_total><state></state>"
           + _ge_job(21, "prep_a", "r", slots=64) + "</Queue-List></queue_info><job_info>"
           + _ge_job(30, "main", "hqw", slots=64, req=("prep*", "nightly"))
           + "</job_info></job_info>")
    snap = SgeCommands().parse_snapshot("delta", {"queue": xml})
    assert {j.native_id: j.dependency for j in snap.jobs} == {
        "21": None, "30": "afterany:21(unfulfilled)"}
    assert snap.warnings == [
        "delta: sge: qstat -r: job 30 (bob) holds on -hold_jid nightly, which names no job "
        "of its owner submitted before it in the queue: it holds the job back for nobody"]


def test_the_job_numbers_grid_engine_found_are_believed_over_the_names():
    """33 asked `job2*`; Grid Engine found 22 when it was submitted (21 came later or
    ended): it waits for 22 alone. Numbers asked are read as they are."""
    jobs = _ge(_ge_job(21, "job21", "r", slots=64), _ge_job(22, "job22", "r", slots=64),
               _ge_job(33, "x", "hqw", req=("job2*",), found=("22",)),
               _ge_job(34, "y", "hqw", req=("22",)))
    assert (jobs["33"].dependency, jobs["34"].dependency) == (
        "afterany:22(unfulfilled)", "afterany:22(unfulfilled)")


def test_names_match_as_grid_engine_patterns_do():
    listed = [ListedJob("10", "prep_a", "bob"), ListedJob("11", "prepB", "bob"),
              ListedJob("12", "post", "bob"), ListedJob("13", "prep_c", "eve"),
              ListedJob("40", "prep_d", "bob")]
    assert sge_named(["prep?[a-z]", "p*t", "12", "gone"], "20", "bob", listed) == (
        ["10", "12"], ["gone"])
    assert sge_named(["prep*"], "20", None, listed) == ([], ["prep*"])  # owner not known


# ---- PBS: on:N and the before kinds ------------------------------------------------------

def test_a_pbs_job_still_counting_jobs_to_come_is_left_out_and_says_so():
    """31 was submitted `on:2`; 30 registered (`beforeok:31`, so the server wrote
    `afterok:30` on 31 and counted its `on` down to 1): one job naming it is still to be
    submitted. Not known when: left out, its reason saying so (before: planned from 30's
    end, as though nothing were to come)."""
    jobs = {j.native_id: j for j in _pbs({
        "30.pbs01": _pbs_job("30", "afterok:21.pbs01@pbs01,beforeok:31.pbs01@pbs01"),
        "31.pbs01": _pbs_job("31", "on:1,afterok:30.pbs01@pbs01")})}
    assert jobs["31.pbs01"].dependency is None
    assert jobs["31.pbs01"].reason == (
        "held (s); waits for 1 more job(s), not submitted yet, to name it with a before "
        "kind (depend=on:1): not known when")
    assert _starts(list(jobs.values()), rename=".pbs01") == {"30.pbs01": 5 * H}


def test_pbs_before_kinds_and_a_servers_port_read_as_pbs_writes_them():
    """A before kind on another job names this one's parent (beforenotok: it waits for a
    failure); `@pbs01\\:15001` (PBS escapes the port's colon) is the server, not job 15001
    (before: read as a parent 15001 not in the queue, the job left out)."""
    got = pbs_dependencies(
        {"30.pbs01": "beforenotok:32.pbs01@pbs01\\:15001,beforeany:33.pbs01@pbs01\\:15001",
         "32.pbs01": "afterany:21.pbs01@pbs01\\:15001",
         "33.pbs01": "afterany:30.pbs01@pbs01\\:15001"},
        ["32.pbs01", "33.pbs01"], ["21.pbs01"])
    assert got == {"32.pbs01": "afterany:21.pbs01(unfulfilled),afternotok:30.pbs01(unfulfilled)",
                   "33.pbs01": "afterany:30.pbs01(unfulfilled)"}


def test_a_pbs_listing_through_qstat_json_with_a_port():
    text = json.dumps({"pbs_server": "pbs01:15001", "Jobs": {
        "31.pbs01": _pbs_job("31", "afterok:21.pbs01@pbs01\\:15001")}})
    assert "\\\\:" in text  # the value holds one backslash, as qstat -F json prints it
    [job] = _pbs(json.loads(text)["Jobs"])
    assert job.dependency == "afterok:21.pbs01(unfulfilled)"


# ---- Slurm: singleton in submit order ----------------------------------------------------

def test_a_singleton_waits_for_its_namesakes_submitted_before_it_wherever_listed():
    """bob's `step`s: 21 runs (ends +5 h); 32 (20 h) is listed first but submitted after
    31, 31 (singleton) next, 30 (10 h) last but submitted first. slurmctld holds 31 for
    21 and 30 (a smaller id), not 32: it starts when 30 ends, +10 h (before: for 21 and 32,
    listed ahead, +20 h)."""
    lines = (_named(BUSY[0], "step"), *BUSY[1:],
             _named(waiting("32", "Priority", nodes=1, limit_h=20), "step"),
             _named(waiting("31", "Dependency", nodes=1), "step"),
             _named(waiting("30", "Priority", nodes=1), "step"))
    _, starts = _queue(*lines, depends={"31": "singleton(unfulfilled)"})
    assert starts == {"32": 0.0, "31": 10 * H, "30": 0.0}


def test_singletons_run_one_at_a_time_in_submit_order():
    """bob's `step` 21 runs (ends +5 h); singletons 34 and 35 of the name (10 h each) are
    listed newest first: 34 starts when 21 ends, 35 when 34 ends (before: 35, listed
    ahead, waited for 21 alone and 34 for 21 and 35: +5 h and +15 h the other way)."""
    lines = (_named(BUSY[0], "step"), *BUSY[1:],
             *(_named(waiting(j, "Dependency", nodes=1), "step") for j in ("35", "34")))
    _, starts = _queue(*lines, depends={"34": "singleton(unfulfilled)",
                                        "35": "singleton(unfulfilled)"})
    assert starts == {"35": 15 * H, "34": 5 * H}


# ---- Slurm: aftercorr on a throttled array -----------------------------------------------

def test_aftercorr_on_a_throttled_array_waits_for_each_task_under_the_throttle():
    """Array 40 (4 tasks of 10 h, `%2`) runs two at a time: tasks 1-2 end +10 h, 3-4 +20 h.
    41's tasks (1 node each) wait each for its own: two from +10 h, two from +20 h (before:
    all four from +10 h)."""
    lines = (*BUSY, waiting("40_[1-4%2]", "JobArrayTaskLimit", nodes=1),
             waiting("41_[1-4]", "Dependency", nodes=1))
    queue, starts = _queue(*lines, depends={"41_[1-4]": "aftercorr:40_*(unfulfilled)"})
    child = sorted(d.start for d in queue if d.native_id == "41_[1-4]")
    assert child == [10 * H, 10 * H, 20 * H, 20 * H]


def test_a_throttled_child_lane_waits_until_each_of_its_tasks_finds_its_parent_ended():
    """41 (`%2`, 4 tasks of 1 h) runs in two lanes of two tasks; its tasks 3 and 4 wait
    for 40's, which end +20 h: each lane starts +19 h, so that its second task starts as
    its parent task ends (before: +10 h, its second task before its parent's end)."""
    lines = (*BUSY, waiting("40_[1-4%2]", "JobArrayTaskLimit", nodes=1),
             waiting("41_[1-4%2]", "Dependency", nodes=1, limit_h=1))
    queue, _ = _queue(*lines, depends={"41_[1-4%2]": "aftercorr:40_*(unfulfilled)"})
    child = sorted(d.start for d in queue if d.native_id == "41_[1-4%2]")
    assert child == [19 * H, 19 * H]


def test_aftercorr_on_running_tasks_is_unchanged():
    """Tasks 40_1 (ends +2 h) and 40_2 (+5 h) run: 41's lanes from +2 h and +5 h."""
    lines = (running("40_1", "bob", "n01", 64, 2, 10), running("40_2", "bob", "n02", 64, 5, 10),
             waiting("41_[1-2]", "Dependency", nodes=1))
    queue, _ = _queue(*lines, depends={"41_[1-2]": "aftercorr:40_*(unfulfilled)"})
    assert sorted(d.not_before for d in queue) == [2 * H, 5 * H]
    assert NOW  # selene's moment
