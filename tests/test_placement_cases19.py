"""Placement cases worked by hand, nineteenth sweep: selene (read from its Slurm outputs,
tests/test_placement_cases13.py) meeting the queue states and settings real centers show,
each against what Slurm documents.

Found misread and fixed:
- a job waiting for its begin time (reason BeginTime, squeue's StartTime its `--begin`)
  was left out of the queue as if held for good, though from then it is ahead of a newer
  job by priority;
- a job waiting for drained or down nodes (`ReqNodeNotAvail, UnavailableNodes:...`) was
  counted as taking any node of its partition, though it can start nowhere else;
- a job that can never start as asked (PartitionTimeLimit, PartitionNodeLimit,
  BadConstraints, InvalidQOS, InvalidAccount, AccountNotAllowed) was counted ahead,
  though Slurm passes over it;
- SchedulerParameters' bf_max_job_user was not read, so a user with that many jobs
  waiting had a new one backfilled that Slurm's backfill passes over;
- in a calibrated view, an array's lanes past its throttle (`%k`) waited for nothing.

Kept right: drained nodes with jobs, reserved nodes, pending reasons that hold a job or
not, array throttles, GPU types, MIG slices, shards and MPS, whole nodes, OverSubscribe,
memory per CPU past MaxMemPerCPU, constraints with `&`, `|` and `[...]`, node weights and
PriorityTier without preemption."""

from __future__ import annotations

import pytest
from test_placement_cases import NOW, at, hours, reasons, run
from test_placement_cases13 import PARTITIONS, node_lines, resv, running, selene, slurm

from diamond_jupyter.placement_sim import build_state, pending_demands, recalibrated


def _first(p):
    return p.ranked[0]


def _said(v, text: str) -> bool:
    return any(text in x for x in v.reasons + v.notes)


# n01-n03 (batch) full with bob's jobs for 5 more hours of their 10; n04-n06 idle
FULL = {"n01": 64, "n02": 64, "n03": 64}
BUSY = [running(str(20 + i), "bob", f"n0{i}", 64, 5, 10) for i in (1, 2, 3)]


def waiting(jid: str, reason: str, start: str = "N/A", nodes: int = 4, user: str = "bob",
            partition: str = "batch", limit_h: int = 10) -> str:
    """A waiting job of `nodes` whole batch nodes as squeue prints it; `start`: its %S."""
    return (f"{jid}|PENDING|{start}|N/A|{at(-1)}|{limit_h}:00:00|{nodes}|{nodes * 64}|{user}|"
            f"{partition}|N/A||{reason}|(null)|job{jid}")


FOUR = "#SBATCH -p batch -N 4 -t 1:00:00"


# ---- pending reasons: which jobs are ahead of the job -------------------------------------

def test_jobs_waiting_for_priority_or_resources_are_ahead():
    """bob's 4-node job waits for n01-n03 (+5 h) and runs 10 h: alice's 4 nodes come after
    it, +15 h."""
    for reason in ("Priority", "Resources"):
        v = _first(run(FOUR, selene(*BUSY, waiting("30", reason, at(5)), alloc=FULL)))
        assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "batch", hours(15))


def test_jobs_held_or_waiting_for_a_dependency_are_not_ahead():
    for reason in ("Dependency", "JobHeldUser", "JobHeldAdmin"):
        v = _first(run(FOUR, selene(*BUSY, waiting("30", reason), alloc=FULL)))
        assert v.estimated_start == hours(5), reason


def test_a_job_waiting_for_its_begin_time_is_ahead_from_then():
    """bob's job may begin at +2 h: at +5 h, when n01-n03 free, it is ahead of alice's by
    priority and takes the four nodes: alice +15 h (before: +5 h, the job taken as held
    for good), said. One beginning at +30 h is not ahead of a job that starts at +5 h."""
    v = _first(run(FOUR, selene(*BUSY, waiting("30", "BeginTime", at(2)), alloc=FULL)))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(15)), v.notes
    assert _said(v, "partition batch: job 30 waits for its begin time 2026-03-01 11:00 "
                    "(BeginTime): from then it takes its place in the queue by priority, "
                    "ahead of the job")
    v = _first(run(FOUR, selene(*BUSY, waiting("30", "BeginTime", at(30)), alloc=FULL)))
    assert v.estimated_start == hours(5) and not _said(v, "job 30"), v.notes
    # no begin time printed: nothing known of when it comes, held as before
    v = _first(run(FOUR, selene(*BUSY, waiting("30", "BeginTime"), alloc=FULL)))
    assert v.estimated_start == hours(5)


def test_a_begin_time_holds_in_a_calibrated_view_too():
    """A calibration follows no scheduler estimate, but a begin time is the user's: the
    demand standing for job 30 starts no sooner in the calibrated view."""
    _, snap = selene(*BUSY, waiting("30", "BeginTime", at(2)), alloc=FULL)
    st = build_state(snap, snap.nodes, {}, NOW, {})
    queue = pending_demands(snap, st, {}, NOW, {})
    assert [(d.native_id, d.not_before, d.now_ok) for d in queue] == [("30", 7200.0, False)]
    _, cal = recalibrated(st, queue, lambda *_: 0.5)
    assert [(d.native_id, d.not_before) for d in cal] == [("30", 7200.0)]


def test_a_job_waiting_for_drained_nodes_holds_back_no_job():
    """bob's 3-node job needs n05 and n06 (ReqNodeNotAvail), drained: it can start nowhere
    else, so alice's 3 nodes start when n01-n03 free, +5 h (before: +15 h, behind it),
    said. Reserved nodes come back when their reservation ends: it still waits."""
    job = "#SBATCH -p batch -N 3 -t 1:00:00"
    out = waiting("30", "ReqNodeNotAvail, UnavailableNodes:n[05-06]", nodes=3)
    for state in ("DRAIN", "DOWN+DRAIN", "IDLE+DRAIN"):
        v = _first(run(job, selene(*BUSY, out, alloc=FULL,
                                   states={"n05": state, "n06": state})))
        assert (v.verdict, v.estimated_start) == ("BUSY", hours(5)), (state, v.notes)
        assert _said(v, "partition batch: job 30 waits for n05, n06 (ReqNodeNotAvail), down "
                        "or drained until an admin acts: it can start nowhere else, so it "
                        "holds back no job")
    # reserved, the nodes come back at the reservation's end (+3 h): the job still waits
    # in the queue, not said
    site = selene(*BUSY, out, alloc=FULL, states={"n05": "IDLE+RESERVED",
                                                  "n06": "IDLE+RESERVED"},
                  resv=resv("bobs", "n[05-06]", -1, 3, users="bob"))
    assert not _said(_first(run(job, site)), "ReqNodeNotAvail")
    _, snap = site
    queue = pending_demands(snap, build_state(snap, snap.nodes, {}, NOW, {}), {}, NOW, {})
    assert [d.native_id for d in queue] == ["30"]
    _, snap = selene(*BUSY, out, alloc=FULL, states={"n05": "DRAIN", "n06": "DRAIN"})
    assert pending_demands(snap, build_state(snap, snap.nodes, {}, NOW, {}), {}, NOW, {}) == []


@pytest.mark.parametrize("reason", ["PartitionTimeLimit", "PartitionNodeLimit",
                                    "BadConstraints", "InvalidQOS", "InvalidAccount",
                                    "AccountNotAllowed"])
def test_a_job_that_can_never_start_as_asked_holds_back_no_job(reason):
    """Slurm leaves such a job waiting until it is changed, and passes over it: alice's 4
    nodes start when n01-n03 free, +5 h (before: +15 h, behind it), said."""
    v = _first(run(FOUR, selene(*BUSY, waiting("30", reason), alloc=FULL)))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(5)), v.notes
    assert _said(v, f"partition batch: job 30 can never start as asked ({reason}): it holds "
                    "back no job")


def test_jobs_that_never_start_are_said_together():
    queue = [waiting("30", "PartitionTimeLimit"), waiting("31", "PartitionTimeLimit"),
             waiting("32", "ReqNodeNotAvail, UnavailableNodes:n06", nodes=1),
             waiting("33", "ReqNodeNotAvail, UnavailableNodes:n06", nodes=1)]
    v = _first(run(FOUR, selene(*BUSY, *queue, alloc=FULL, states={"n06": "DRAIN"})))
    # n06 drained: four nodes only once n01-n03 free, +5 h; none of the four ahead
    assert v.estimated_start == hours(5), v.notes
    assert _said(v, "partition batch: jobs 30, 31 can never start as asked "
                    "(PartitionTimeLimit): they hold back no job")
    assert _said(v, "partition batch: jobs 32, 33 wait for n06 (ReqNodeNotAvail), down or "
                    "drained until an admin acts: they can start nowhere else, so they hold "
                    "back no job")


def test_an_array_throttled_by_its_task_limit_leaves_a_free_node():
    """bob's array 40 runs 2 tasks (n04, n05, 2 h left); its other 18 wait. Throttled to
    2 at once (`%2`, JobArrayTaskLimit), none takes n06: alice starts there now.
    Unthrottled, its tasks take every node as it frees, ahead of her."""
    tasks = [running("40_1", "bob", "n04", 64, 2, 3), running("40_2", "bob", "n05", 64, 2, 3)]
    alloc = {**FULL, "n04": 64, "n05": 64}
    job = "#SBATCH -p batch -N 1 -t 1:00:00"

    def array(record: str, reason: str) -> str:
        return (f"{record}|PENDING|N/A|N/A|{at(-1)}|3:00:00|1|64|bob|batch|N/A||{reason}|"
                "(null)|arr")
    v = _first(run(job, selene(*BUSY, *tasks, array("40_[3-20%2]", "JobArrayTaskLimit"),
                               alloc=alloc)))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = _first(run(job, selene(*BUSY, *tasks, array("40_[3-20]", "Resources"), alloc=alloc)))
    assert v.verdict == "BUSY" and v.estimated_start > hours(5)


def test_a_throttled_lane_waits_for_the_tasks_calibrated_ends():
    """The array's running tasks 40_1 (1 of its 3 h run) and 40_2 (2 run) end at +2 h
    and +1 h by their limits: its lanes past `%2` wait for those. Calibrated (a job runs
    at least half its limit, else what it has run), they end at +0.5 h and at once: the
    lanes wait for those ends (before: for nothing, 4 tasks at once under `%2`)."""
    tasks = [running("40_1", "bob", "n04", 64, 2, 3), running("40_2", "bob", "n05", 64, 1, 3)]
    array = (f"40_[3-20%2]|PENDING|N/A|N/A|{at(-1)}|3:00:00|1|64|bob|batch|N/A||"
             "JobArrayTaskLimit|(null)|arr")
    _, snap = selene(*tasks, array, alloc={"n04": 64, "n05": 64})
    st = build_state(snap, snap.nodes, {}, NOW, {})
    queue = pending_demands(snap, st, {}, NOW, {})
    assert [d.not_before for d in queue] == [3600.0, 7200.0]
    _, cal = recalibrated(st, queue, lambda _p, _c, share, _w: max(0.5, share or 0.0))
    assert [d.not_before for d in cal] == [1.0, 1800.0]


# ---- bf_max_job_user: the backfill passes over a user's jobs past the cap ------------------

CONFIG = ("ClusterName = selene\nSchedulerParameters     = bf_max_job_user=2,bf_window=2880,"
          "default_queue_depth=200\nSlurmdTimeout           = 300 sec\n")


def _capped(*queue: str, config: str = CONFIG):
    """selene with `queue` and the SchedulerParameters of `config`, read as the engine
    reads a snapshot."""
    cfg, snap = selene(*queue, alloc=FULL)
    outputs = {"partitions": PARTITIONS, "nodes": node_lines(alloc=FULL),
               "queue": "\n".join(queue), "reservations": "No reservations in the system\n",
               "assoc": "user|alice\nalice|proj||normal|normal,short\n", "config": config}
    read = slurm.parse_snapshot("selene", outputs)
    return cfg, snap.model_copy(update={"bf_max_job_user": read.bf_max_job_user})


def test_bf_max_job_user_is_read_from_scheduler_parameters():
    read = slurm.parse_bf_max_job_user
    assert read(CONFIG) == 2
    assert read("SchedulerParameters = (null)\n") is None
    assert read("SchedulerParameters = bf_max_job_user=0\n") is None  # 0: no cap
    assert read("SchedulerParameters = bf_max_job_user_part=3,bf_continue\n") is None
    assert read("") is None
    assert _capped(config=CONFIG)[1].bf_max_job_user == 2


SHORT = "#SBATCH -p batch -N 1 -t 1:00:00"


def test_a_user_at_bf_max_job_user_is_not_backfilled():
    """alice's jobs 31 and 32 (4 nodes each) wait for n01-n03; bf_max_job_user=2: a short
    job of hers is not tested by the backfill, which would start it on n05 now. Once job 31
    starts (+5 h) only two of hers wait: tested then (before: READY now), said."""
    mine = [waiting("31", "Resources", user="alice"), waiting("32", "Priority", user="alice")]
    v = _first(run(SHORT, _capped(*BUSY, *mine)))
    assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "batch", hours(5)), v.notes
    assert _said(v, "partition batch: Slurm's backfill tests at most 2 waiting jobs of a user "
                    "(bf_max_job_user) and 2 of yours wait: it passes the job over until "
                    "enough of them have started, or the jobs waiting ahead in partition "
                    "batch have (in priority order): +5:00:00")
    # three waiting: two must start first, job 32 at +15 h (after job 31's 10 h)
    v = _first(run(SHORT, _capped(*BUSY, *mine, waiting("33", "Priority", user="alice"))))
    assert v.estimated_start == hours(15), v.notes


def test_below_the_cap_or_other_users_jobs_are_backfilled_as_before():
    mine = waiting("31", "Resources", user="alice")
    bobs = [waiting("31", "Resources"), waiting("32", "Priority")]
    # a job of hers held, or waiting for a dependency, is not tested: not counted
    held = [waiting("32", "JobHeldUser", user="alice"), waiting("33", "Dependency",
                                                               user="alice")]
    for site in (_capped(*BUSY, mine), _capped(*BUSY, *bobs), _capped(*BUSY, mine, *held),
                 _capped(*BUSY, mine, waiting("32", "Priority", user="alice"), config="")):
        v = _first(run(SHORT, site))
        assert (v.verdict, v.estimated_start) == ("READY", NOW), v.notes
        assert not _said(v, "bf_max_job_user")


# ---- node states ---------------------------------------------------------------------------

def test_drained_nodes_still_running_jobs_take_no_new_one():
    """n01-n03 ALLOCATED+DRAIN (or MIXED+DRAIN): their jobs run on, but no job starts there
    after: four batch nodes never come."""
    for state, cpus in (("ALLOCATED+DRAIN", 64), ("MIXED+DRAIN", 32)):
        site = selene(*BUSY, states={n: state for n in FULL}, alloc={n: cpus for n in FULL})
        assert reasons(run(FOUR, site), "selene") == \
            "needs 4 nodes, partition batch has only 3 usable (others draining n[01-03])"


def test_reserved_nodes_wait_for_the_reservation_to_end():
    """n01-n03 IDLE+RESERVED for bob until +5 h: alice's 4 nodes start at its end."""
    site = selene(states={n: "IDLE+RESERVED" for n in FULL},
                  resv=resv("bobs", "n[01-03]", -1, 5, users="bob"))
    v = _first(run(FOUR, site))
    assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "batch", hours(5))
    assert _first(run("#SBATCH -p batch -N 3 -t 1:00:00", site)).estimated_start == NOW


# ---- GPUs: types, MIG slices, shards and MPS -----------------------------------------------

def test_gpu_types_and_slices_are_told_apart():
    p = run("#SBATCH -p gpu --gres=gpu:v100:1 -t 1:00:00", selene())
    assert reasons(p, "selene") == "partition gpu: no GPU of type 'v100' (its nodes have: " \
        "a100, a100_1g.10gb, a100_3g.40gb, l40s)"
    for gres in ("gpu:l40s:1", "gpu:a100_3g.40gb:1"):
        v = _first(run(f"#SBATCH --gres={gres} -t 1:00:00", selene()))
        assert (v.verdict, v.partition) == ("READY", "gpu"), gres
        assert _said(v, "partition scav passed over: the job may be preempted")


def test_shards_and_mps():
    """g03's two L40S are shared as 16 shards; no node offers MPS."""
    v = _first(run("#SBATCH --gres=shard:4 -t 1:00:00", selene()))
    assert (v.verdict, v.partition) == ("READY", "gpu")
    assert _said(v, "partition batch: no node has gres 'shard' (its nodes have: none)")
    assert reasons(run("#SBATCH --gres=shard:20 -t 1:00:00", selene()), "selene") == \
        "needs shard:20 per node, the most a node has is 16"
    assert reasons(run("#SBATCH --gres=mps:50 -t 1:00:00", selene()), "selene") == \
        "no node has gres 'mps' (site has: shard)"


# ---- whole nodes and OverSubscribe ---------------------------------------------------------

def test_exclusive_waits_for_the_first_node_to_empty():
    """bob runs 8 CPUs on each batch node, n01's ending first (+1 h)."""
    jobs = [running(str(20 + i), "bob", f"n0{i}", 8, i, 10) for i in range(1, 7)]
    site = selene(*jobs, alloc={f"n0{i}": 8 for i in range(1, 7)})
    v = _first(run("#SBATCH -p batch --exclusive -N 1 -t 1:00:00", site))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    assert _first(run("#SBATCH -p batch -N 1 -n 8 -t 1:00:00", site)).estimated_start == NOW


def _excl_full(mode: str):
    jobs = [running("25", "bob", "n05", 64, 3, 6, "excl"),
            running("26", "bob", "n06", 64, 3, 6, "excl")]
    return selene(*jobs, alloc={"n05": 64, "n06": 64},
                  partitions=PARTITIONS.replace("OverSubscribe=EXCLUSIVE", mode))


def test_oversubscribe_force_shares_full_nodes_yes_does_not_by_itself():
    job = "#SBATCH -p excl -N 1 -n 8 -t 1:00:00"
    v = _first(run(job, _excl_full("OverSubscribe=FORCE:4")))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert _said(v, "partition excl: it starts now on n05, n06, sharing CPUs with the jobs "
                    "there (OverSubscribe=FORCE:4, time-sliced or oversubscribed)")
    # YES:4 shares only among jobs that ask to; bob's did not say so: their end, +3 h
    v = _first(run(job, _excl_full("OverSubscribe=YES:4")))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))


# ---- memory per CPU and per node -----------------------------------------------------------

def test_memory_per_cpu_past_the_cap_and_memory_past_a_batch_node():
    v = _first(run("#SBATCH -p batch -n 2 --mem-per-cpu=6000 -t 1:00:00", selene()))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert _said(v, "partition batch: 6000 MB per CPU is above its MaxMemPerCPU 4000 MB, so "
                    "each task gets 2 CPUs (4 a node, 3000 MB each)")
    v = _first(run("#SBATCH --mem=300G -t 1:00:00", selene()))
    assert (v.verdict, v.partition) == ("READY", "big")
    assert _said(v, "partition batch: needs 77 CPUs per node, largest node has 64; needs "
                    "307200 MB memory per node, largest node has 256000 MB")


# ---- features: & | [...] ------------------------------------------------------------------

def test_constraints_with_and_or_and_matching_or():
    """rackA: n01-n03 (ib); rackB: n04-n06, of which only n04 has ib."""
    def job(c: str, n: int) -> str:
        return f'#SBATCH -p batch -N {n} -C "{c}" -t 1:00:00'
    assert _first(run(job("rackA&ib", 3), selene())).verdict == "READY"
    assert "needs 4 nodes, partition batch has only 3 that can run it (others: missing " \
        "feature 'rackA'" in reasons(run(job("rackA&ib", 4), selene()), "selene")
    assert "needs 2 nodes, partition batch has only 1 that can run it" in reasons(
        run(job("rackB&ib", 2), selene()), "selene")
    assert _first(run(job("rackA|rackB", 4), selene())).verdict == "READY"
    assert reasons(run(job("[rackA|rackB]", 4), selene()), "selene") == \
        "constraint '[rackA|rackB]' needs all 4 nodes with the same one of them, partition " \
        "batch has at most 3 (rackA: 3, rackB: 3)"


# ---- node weights and PriorityTier ---------------------------------------------------------

def test_the_lowest_weight_nodes_are_said_to_be_used_first():
    cfg, snap = selene()
    weights = {"n01": 10, "n02": 10, "n03": 10, "n04": 1, "n05": 5, "n06": 5}
    for n in snap.nodes:
        n.weight = weights.get(n.name, n.weight)
    v = _first(run("#SBATCH -p batch -N 1 -t 1:00:00", (cfg, snap)))
    assert _said(v, "partition batch: nodes of the lowest Weight are used first: it starts "
                    "on n04 (Weight 1)")


NO_PREEMPT = PARTITIONS.replace("PreemptMode=REQUEUE", "PreemptMode=OFF")


def test_a_lower_tier_job_waiting_is_not_ahead_a_higher_tiers_is():
    """bob's 3-node job (10 h) waits; scav has PriorityTier 1, batch 10, no preemption.
    Waiting in scav it is behind alice's batch job, which starts now on n04-n06; waiting
    in batch, it takes them first: alice at +5 h; and alice's scav job on n04 after it,
    +10 h."""
    job = "#SBATCH -p batch -N 3 -t 1:00:00"
    scav = waiting("50", "Priority", nodes=3, partition="scav")
    v = _first(run(job, selene(*BUSY, scav, alloc=FULL, partitions=NO_PREEMPT)))
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    batch = waiting("50", "Priority", nodes=3)
    v = _first(run(job, selene(*BUSY, batch, alloc=FULL, partitions=NO_PREEMPT)))
    assert v.estimated_start == hours(5)
    v = _first(run("#SBATCH -p scav -w n04 -N 1 -t 20:00:00",
                   selene(*BUSY, batch, alloc=FULL, partitions=NO_PREEMPT)))
    assert (v.partition, v.estimated_start) == ("scav", hours(10))
