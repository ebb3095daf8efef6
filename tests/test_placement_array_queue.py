"""A waiting job array's range record in the queue view stands for each of its tasks
(`placement_sim.array_lanes`): Slurm `123_[5-100]`, throttled `123_[1-50%4]`, Grid Engine
`9.6-10:1`. Each case is worked by hand on alpha (4 nodes of 32 CPUs)."""

from __future__ import annotations

from datetime import timedelta

from test_placement import NOW, H, alpha, node, pending, running, spec, verdict

from diamond_jupyter.dialects.outputs_common import array_record
from diamond_jupyter.model import JobState, JobStatus, Partition, SiteSnapshot
from diamond_jupyter.placement import place, site_nodes
from diamond_jupyter.placement_sim import (
    MAX_ARRAY_LANES,
    build_state,
    pending_demands,
    queue_starts,
)


def _queue(snap: SiteSnapshot):
    nodes = site_nodes(snap)
    members = {"compute": [n.name for n in nodes], "debug": [n.name for n in nodes]}
    part_max = {p.name: float(p.max_time_s) for p in snap.partitions if p.max_time_s}
    st = build_state(snap, nodes, members, NOW, part_max)
    return st, pending_demands(snap, st, members, NOW, part_max)


def test_the_record_forms_of_every_scheduler_read():
    assert array_record("123_[5-100]") == ("123", 96, None)
    assert array_record("123_[1-50%4]") == ("123", 50, 4)
    assert array_record("123_[1,3,5-7%2]") == ("123", 5, 2)
    assert array_record("9.6-10:1") == ("9", 5, None)
    assert array_record("9.1-9:2") == ("9", 5, None)
    assert array_record("9.4,5") == ("9", 2, None)
    assert array_record("123_7") == ("123", 1, None)
    assert array_record("500[3]") == ("500", 1, None)
    for plain in ("123", "123+1", "f3Xq9", "45[]", "123_[x]", "123_[9-1]"):
        assert array_record(plain) is None, plain


def test_a_probe_behind_a_96_task_range_starts_after_them():
    """alpha's four nodes are busy for another hour; `900_[5-100]` waits with 96 tasks of
    a whole node for an hour each. Four run at once, so its tasks take the four nodes for
    96 / 4 = 24 hours from the hour's end: a whole-node probe behind it starts after 25 h
    (read as one job it started after 1 h, beside the array's one task)."""
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=H) for i in range(1, 5)]
    cfg, snap = alpha([*jobs, pending("900_[5-100]", 1, 32, H)], alloc=(32,) * 4)
    v = verdict(place(spec(cpus=32, walltime=H), [(cfg, snap)], now=NOW), "alpha")
    assert v.start_source == "simulation"
    assert v.estimated_start == NOW + timedelta(hours=25)


def test_the_ranges_tasks_are_kept_in_its_place_in_the_queue():
    """A job queued behind the range starts after its tasks, one before it first."""
    jobs = [running(f"r{i}", f"a{i}", 32, left_s=H) for i in range(1, 5)]
    cfg, snap = alpha([*jobs, pending("800", 4, 128, H), pending("900_[1-8]", 1, 32, H),
                       pending("901", 4, 128, H)], alloc=(32,) * 4)
    st, queue = _queue(snap)
    assert [d.native_id for d in queue] == ["800", *["900_[1-8]"] * 4, "901"]
    starts = queue_starts(st, queue)
    # 800 on every node from 1 h to 2 h; the array's 8 tasks, 4 at once, 2 h to 4 h; 901
    assert starts == {"800": H, "900_[1-8]": 2 * H, "901": 4 * H}


def test_a_throttled_array_runs_only_its_limit_at_once():
    """`900_[1-8%1]`: eight whole-node tasks of an hour, one at a time, on an idle alpha.
    It holds one node for eight hours, so a three-node probe starts now; the same range
    without its throttle holds all four nodes for two hours."""
    cfg, snap = alpha([pending("900_[1-8%1]", 1, 32, H)])
    v = verdict(place(spec(nodes=3, cpus=32, walltime=H), [(cfg, snap)], now=NOW), "alpha")
    assert v.verdict == "READY" and v.estimated_start == NOW
    cfg, snap = alpha([pending("900_[1-8]", 1, 32, H)])
    v = verdict(place(spec(nodes=3, cpus=32, walltime=H), [(cfg, snap)], now=NOW), "alpha")
    assert v.estimated_start == NOW + timedelta(hours=2)


def test_a_throttle_counts_the_arrays_running_tasks():
    """`900_[3-52%4]`: 50 tasks of 8 CPUs, 4 at once, and two (900_1, 900_2) already
    running on a1 with half an hour left of their hour. Four lanes of 13, 13, 12 and 12
    tasks: two may start now, the other two as the running tasks end."""
    cfg, snap = alpha([running("900_1", "a1", 8, left_s=H // 2, walltime_s=H),
                       running("900_2", "a1", 8, left_s=H // 2, walltime_s=H),
                       pending("900_[3-52%4]", 1, 8, H)], alloc=(16, 0, 0, 0))
    _, queue = _queue(snap)
    assert [(d.tasks, d.duration, d.not_before) for d in queue] == [
        (13, 13.0 * H, 0.0), (13, 13.0 * H, 0.0), (12, 12.0 * H, H / 2), (12, 12.0 * H, H / 2)]
    # the throttle already full: every lane waits for a running task's end
    cfg, snap = alpha([running("900_1", "a1", 8, left_s=H // 2, walltime_s=H),
                       running("900_2", "a1", 8, left_s=H, walltime_s=H),
                       pending("900_[3-6%2]", 1, 8, H)], alloc=(16, 0, 0, 0))
    _, queue = _queue(snap)
    assert [(d.tasks, d.not_before) for d in queue] == [(2, H / 2), (2, float(H))]


def test_a_grid_engine_range_of_waiting_tasks_counts_each():
    """qstat's `9.6-10:1`: five waiting tasks of 32 slots on alpha's four nodes: four
    lanes, one of two tasks."""
    cfg, snap = alpha([pending("9.6-10:1", 1, 32, H)])
    _, queue = _queue(snap)
    assert sorted(d.tasks for d in queue) == [1, 1, 1, 2]


def test_a_huge_range_is_simulated_as_a_bounded_number_of_demands():
    """`900_[1-100000]` of one CPU each: alpha holds 128 of them at once, so 128 lanes
    stand for the 100,000 tasks; on a site holding more at once than `MAX_ARRAY_LANES`,
    that many. The probe behind it still waits for the tasks: the lanes are of 782 tasks
    (the first 32, which fill a1) and 781 (the other 96), so a2-a4 come free after 781 h."""
    cfg, snap = alpha([pending("900_[1-100000]", 1, 1, H)])
    _, queue = _queue(snap)
    assert len(queue) == 128 and sum(d.tasks for d in queue) == 100_000
    v = verdict(place(spec(cpus=32, walltime=H), [(cfg, snap)], now=NOW), "alpha")
    assert v.estimated_start == NOW + timedelta(hours=781)

    nodes = [node(f"n{i}", 128, 256000, parts=["compute"]) for i in range(100)]
    big = SiteSnapshot(site="big", taken_at=NOW, nodes=nodes, jobs=[
        JobStatus(native_id="900_[1-100000]", state=JobState.PENDING, nodes=1, cpus=1,
                  walltime_s=H, partition="compute")],
        partitions=[Partition(name="compute", default=True, max_time_s=48 * H,
                              nodes=["n[0-99]"])])
    _, queue = _queue(big)
    assert len(queue) == MAX_ARRAY_LANES and sum(d.tasks for d in queue) == 100_000


def _pbs_array(jid: str, state: str, remaining: str, counts: str, limit: int | None = None):
    attrs = {"Job_Name": "sweep", "Job_Owner": "ann@login", "job_state": state,
             "queue": "compute", "array": "True", "array_indices_submitted": "1-40",
             "array_indices_remaining": remaining, "array_state_count": counts,
             "Resource_List": {"ncpus": 32, "nodect": 1, "walltime": "01:00:00"}}
    if limit is not None:
        attrs["max_run_subjobs"] = limit
    return {jid: attrs}


def test_a_pbs_array_record_counts_its_waiting_subjobs():
    """`qstat -f -F json` lists an array once, `123[].server`: queued (Q) with its 40
    subjobs waiting, or begun (B, read as running) with `array_indices_remaining` still
    waiting and `array_state_count` saying how many run, `max_run_subjobs` its throttle."""
    import json

    from diamond_jupyter.dialects.pbs_commands import PbsCommands

    out = json.dumps({"Jobs": {
        **_pbs_array("123[].pbs01", "Q", "1-40", "Queued:40 Running:0 Exiting:0 Expired:0"),
        **_pbs_array("124[].pbs01", "B", "9-40", "Queued:32 Running:2 Exiting:0 Expired:6",
                     limit=3),
        "125.pbs01": {"Job_Name": "plain", "job_state": "Q", "queue": "compute",
                      "Resource_List": {"ncpus": 1, "walltime": "01:00:00"}}}})
    jobs = {j.native_id.split(".")[0]: j for j in PbsCommands().parse_status(out)}
    a, b = jobs["123[]"], jobs["124[]"]
    assert (a.state, a.array_waiting, a.array_running, a.array_limit) == (
        JobState.PENDING, 40, 0, None)
    assert (b.state, b.array_waiting, b.array_running, b.array_limit) == (
        JobState.RUNNING, 32, 2, 3)
    assert jobs["125"].array_waiting is None
    # on alpha (its 4 nodes idle here): 123[] runs its 40 whole-node subjobs in 4 lanes
    # of 10; 124[]'s 32 waiting ones in 3 lanes (its throttle), one of them ready now and
    # two after its running subjobs (half their hour, their start unknown)
    cfg, snap = alpha(list(jobs.values()))
    _, queue = _queue(snap)
    assert [(d.native_id.split(".")[0], d.tasks, d.not_before) for d in queue] == [
        *[("123[]", 10, 0.0)] * 4,
        ("124[]", 11, 0.0), ("124[]", 11, H / 2), ("124[]", 10, H / 2), ("125", 1, 0.0)]
