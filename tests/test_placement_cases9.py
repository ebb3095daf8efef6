"""Placement cases worked by hand, ninth sweep: the parts of a job held together (Slurm
hetjob components, PBS chunks) leave the queued jobs ahead their room; LSF `PJOB_LIMIT`;
a Slurm reservation's end; PBS queue `Priority`; then more sites of every scheduler. Each
case asserts the verdict per site, the partition chosen, the start and that the reason
names the real cause."""

from __future__ import annotations

from datetime import timedelta

from test_placement_cases import NOW, has_note, hera, hours, only, reasons, run
from test_placement_cases5 import busy
from test_placement_cases6 import _pbs_job, kestrel

from diamond_jupyter.model import JobState, JobStatus

H = 3600


def queued(jid: str, partition: str, cpus: int, walltime_h: float, gpus: int = 0,
           nodes: int = 1) -> JobStatus:
    return JobStatus(native_id=jid, state=JobState.PENDING, nodes=nodes, cpus=cpus, gpus=gpus,
                     partition=partition, walltime_s=int(walltime_h * H), reason="Resources")


# --------------------------------------------------------------- held together, queue ahead

def test_hetjob_components_leave_a_queued_job_ahead_its_node():
    # g01's 4 A100 free at +1 h, g02's at +3 h; a job ahead (4 A100, 4 h) takes g01 from
    # +1 h to +5 h. Each component of 4 A100 alone starts at +3 h on g02; together the
    # other needs g01, held by the job ahead until +5 h (before: +3 h, counting running
    # jobs only, the job ahead delayed)
    jobs = [busy("11", "g01", 1, 64, "gpu", walltime_h=4, gpus=4),
            busy("12", "g02", 3, 64, "gpu", walltime_h=4, gpus=4),
            queued("20", "gpu", 8, 4, gpus=4)]
    v = only(run("#SBATCH -p gpu --gres=gpu:a100:4 -t 1:00:00\n#SBATCH hetjob\n"
                 "#SBATCH -p gpu --gres=gpu:a100:4",
                 hera(jobs=jobs, alloc={"g01": (64, 4), "g02": (64, 4)})), "hera", "gpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(5))
    assert has_note(v, "leaving the queued jobs ahead their room at +5:00:00")


def test_hetjob_components_that_share_the_node_left_are_not_moved_by_the_job_ahead():
    # the same queue, but two components of 2 A100 and 8 CPUs: the job ahead holds g01
    # from +1 h, and both components fit g02 together once it frees at +3 h
    jobs = [busy("11", "g01", 1, 64, "gpu", walltime_h=4, gpus=4),
            busy("12", "g02", 3, 64, "gpu", walltime_h=4, gpus=4),
            queued("20", "gpu", 8, 4, gpus=4)]
    v = run("#SBATCH -p gpu --gres=gpu:a100:2 -c 8 -t 1:00:00\n#SBATCH hetjob\n"
            "#SBATCH -p gpu --gres=gpu:a100:2 -c 8",
            hera(jobs=jobs, alloc={"g01": (64, 4), "g02": (64, 4)})).verdict("hera")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))


def test_pbs_chunks_leave_a_queued_job_ahead_its_host():
    # bob's 40-CPU jobs on k1-k4 free at +4 h; k5 and k6 free. A job ahead of 64 CPUs for
    # 10 h starts now on k5. Chunks 1x8 + 3x32 placed freely: k6 holds two 32s, the third
    # has no host until k1-k4 free at +4 h (before: READY now, sharing k5 with the job
    # ahead)
    jobs = (*(_pbs_job(str(i), "bob", "workq", 40, started_h=1, limit_h=5, host=f"k{i}")
              for i in range(1, 5)),
            _pbs_job("9", "carol", "workq", 64, state="Q", limit_h=10))
    v = only(run("#PBS -q workq\n#PBS -l select=1:ncpus=8+3:ncpus=32\n"
                 "#PBS -l walltime=1:00:00", kestrel(*jobs)), "kestrel", "workq")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(4))
    assert has_note(v, "leaving the queued jobs ahead their room at +4:00:00")


# --------------------------------------------------------------- LSF PJOB_LIMIT (JL/P)

def _bqueues_l(jl_p: str) -> str:
    return ("QUEUE: normal\n  -- For normal jobs\n\nPARAMETERS/STATISTICS\n"
            "PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV "
            "PJOBS\n"
            f" 30   20  Open:Active       -    -  {jl_p:>4}    -   36     0    36     0     0"
            "    0     0\n")


def test_lsf_pjob_limit_is_read_per_processor():
    from test_placement_cases8 import wren
    assert wren(queue_long=_bqueues_l("0.5"))[1].partitions[0].max_slots_per_processor == 0.5
    assert wren(queue_long=_bqueues_l("2"))[1].partitions[0].max_slots_per_processor == 2.0
    assert wren(queue_long=_bqueues_l("-"))[1].partitions[0].max_slots_per_processor is None


def test_lsf_pjob_limit_caps_the_queues_slots_on_each_host():
    # JL/P 0.5: the queue's jobs hold at most 16 slots on w1/w2 (32 CPUs), 32 on w3/w4
    # (64). 24 slots on one host: only w3 or w4. bob's 16 slots on w3 end at +1 h, his 20
    # on w4 at +2 h: 16 + 24 > 32 on w3 until +1 h. Before, JL/P was not read: READY now
    from test_placement_cases8 import _wjob, wren
    jobs = (_wjob("1", "bob", 16, "w3", 1), _wjob("2", "bob", 20, "w4", 2))
    site = wren(*jobs, queue_long=_bqueues_l("0.5"))
    v = only(run('#BSUB -n 24\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00', site), "wren",
             "normal")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    assert any("PJOB_LIMIT (JL/P) 0.5 allows 32 slots on w3 (0.5 x its 64 CPUs): its "
               "running jobs hold 16 and the job needs 24" in w for w in v.waits_for), \
        v.waits_for
    # without the limit both hosts have room now
    v = run('#BSUB -n 24\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00', wren(*jobs)).verdict("wren")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_lsf_pjob_limit_below_what_the_job_asks_of_every_host_refuses_it():
    from test_placement_cases8 import wren
    p = run('#BSUB -n 40\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00',
            wren(queue_long=_bqueues_l("0.5")))
    assert reasons(p, "wren") == (
        "needs 1 host, queue normal has 0 its host limits let it use (needs 40 slots on a "
        "host, queue normal's PJOB_LIMIT (JL/P) 0.5 allows 32 slots on w3 (0.5 x its 64 "
        "CPUs))")


# --------------------------------------------------------------- a reservation's end

def test_a_job_longer_than_what_is_left_of_its_reservation_is_refused():
    # course: n3-n4 for alice from +1 h to +5 h. 3 h fits (+1 h to +4 h); 5 h never ends
    # inside it: Slurm ends it at the reservation's end. Before: BUSY at +1 h
    from test_placement_cases8 import COURSE, rhea
    v = only(run("#SBATCH -p compute -N 2 -t 3:00:00 --reservation=course", rhea(COURSE)),
             "rhea")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    assert has_note(v, "reservation course ends at 2026-03-01 14:00: the job must start by "
                       "+2:00:00 to end inside it")
    p = run("#SBATCH -p compute -N 2 -t 5:00:00 --reservation=course", rhea(COURSE))
    assert reasons(p, "rhea") == (
        "walltime 5:00:00 runs past reservation course's end at 2026-03-01 14:00 (4:00:00 "
        "of it left from its start at 10:00): Slurm runs a job of a reservation inside it "
        "and ends the job at the reservation's end (after the site's ResvOverRun, if set); "
        "a FLEX reservation lets it run on")


def test_a_job_of_a_reservation_whose_nodes_free_too_late_is_refused():
    # open: n3-n4 for alice, active now until +3 h; bob's jobs hold n3 until +2 h. A job of
    # 2 nodes for 2 h can start at +2 h at the soonest and would end at +4 h, past the end
    from test_placement_cases6 import running
    from test_placement_cases8 import _resv, rhea
    site = rhea(_resv("open", -1, 3, "n[3-4]", users="alice", state="ACTIVE"),
                queue=(running("1", "bob", "n3", 48, 2, 4),), alloc={"n3": 48})
    p = run("#SBATCH -p compute -N 2 -t 2:00:00 --reservation=open", site)
    assert reasons(p, "rhea") == (
        "its reservation open ends at 2026-03-01 12:00: the job can start at +2:00:00, but "
        "with its time limit 2:00:00 it must start by +1:00:00: Slurm runs a job of a "
        "reservation inside it and ends the job at the reservation's end (after the site's "
        "ResvOverRun, if set); a FLEX reservation lets it run on")
    # one hour fits before the end: +2 h to +3 h
    v = only(run("#SBATCH -p compute -N 2 -t 1:00:00 --reservation=open", site), "rhea")
    assert v.estimated_start == hours(2)
    # FLEX lets it end after
    site = rhea(_resv("open", -1, 3, "n[3-4]", flags="FLEX,SPEC_NODES", users="alice",
                      state="ACTIVE"), queue=(running("1", "bob", "n3", 48, 2, 4),),
                alloc={"n3": 48})
    assert run("#SBATCH -p compute -N 2 -t 2:00:00 --reservation=open", site).verdict(
        "rhea").feasible


# --------------------------------------------------------------- PBS queue Priority

def _prio_queues(workq: int | None, big: int | None) -> dict:
    from test_placement_cases6 import KESTREL_QUEUES
    out = {k: dict(v) for k, v in KESTREL_QUEUES.items()}
    for name, prio in (("workq", workq), ("big", big)):
        if prio is not None:
            out[name]["Priority"] = prio
    return out


def _full_kestrel(queues: dict):
    # k1 frees at +1 h, k2-k6 at +5 h; carol's 64-CPU job of 3 h waits in workq
    jobs = (_pbs_job("1", "bob", "workq", 64, started_h=3, limit_h=4, host="k1"),
            *(_pbs_job(str(i), "bob", "workq", 64, started_h=1, limit_h=6, host=f"k{i}")
              for i in range(2, 7)),
            _pbs_job("9", "carol", "workq", 64, state="Q", limit_h=3))
    return kestrel(*jobs, queues=queues)


def test_pbs_queue_priority_is_read():
    _, snap = _full_kestrel(_prio_queues(10, 100))
    assert {p.name: p.queue_priority for p in snap.partitions} == {
        "workq": 10, "big": 100, "gpu": None}


def test_pbs_a_job_of_a_higher_priority_queue_goes_before_the_jobs_waiting_in_a_lower_one():
    # big (Priority 100) above workq (10): a 64-CPU job of 1 h in big takes k1 when it
    # frees at +1 h, before carol's job waiting in workq. Before, Priority was not read:
    # carol's job took k1 until +4 h, and the job started at +4 h
    script = "#PBS -q big\n#PBS -l select=1:ncpus=64\n#PBS -l walltime=1:00:00"
    v = run(script, _full_kestrel(_prio_queues(10, 100))).verdict("kestrel")
    assert (v.partition, v.estimated_start) == ("big", hours(1))
    # the same priorities: the job waits behind carol's
    v = run(script, _full_kestrel(_prio_queues(10, 10))).verdict("kestrel")
    assert v.estimated_start == hours(4)
    # workq above big: behind carol's too
    v = run(script, _full_kestrel(_prio_queues(100, 10))).verdict("kestrel")
    assert v.estimated_start == hours(4)


# --------------------------------------------------------------- above every MaxTime, a DOWN one

def _rhea_long(state: str):
    from test_placement_cases8 import rhea
    cfg, snap = rhea()
    for p in snap.partitions:
        if p.name == "long":
            p.state = state
    return cfg, snap


def test_a_walltime_that_only_a_down_queue_takes_is_not_above_every_maxtime():
    # rhea: compute 2 days, long 7 days (DOWN here), the others 1 day or less. 3 days fits
    # long: the partitions that are up are too short and long would take it but is DOWN
    # (before: "above every partition's MaxTime here", as if no partition ever took it)
    p = run("#SBATCH -t 3-00:00:00", _rhea_long("DOWN"))
    assert reasons(p, "rhea") == (
        "walltime 3-00:00:00 above the MaxTime of every partition that is up (the longest: "
        "compute, 2-00:00:00); partition long (MaxTime 7-00:00:00) would take it but is DOWN")
    # up: it runs there
    only(run("#SBATCH -t 3-00:00:00", _rhea_long("UP")), "rhea", "long")


def test_a_walltime_above_every_queue_counts_the_down_ones_too():
    # 8 days is above long's 7 days too: above every partition's MaxTime, long the longest
    p = run("#SBATCH -t 8-00:00:00", _rhea_long("DOWN"))
    assert reasons(p, "rhea") == (
        "walltime 8-00:00:00 above every partition's MaxTime here (the longest: long, "
        "7-00:00:00) | partition 'long' is DOWN")


# --------------------------------------------------------------- Slurm --begin and --deadline

def test_begin_in_the_future_holds_the_start():
    # an idle partition: the job starts at its --begin, +2 h (before: READY now)
    v = only(run("#SBATCH -p cpu -N 1 -t 1:00:00 --begin=now+2hours", hera()), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert has_note(v, "--begin 2026-03-01 11:00: it starts no sooner (+2:00:00)")
    v = only(run("#SBATCH -p cpu -N 1 -t 1:00:00 --begin=2026-03-01T10:30", hera()), "hera")
    assert v.estimated_start == hours(1.5)


def test_begin_loses_a_backfill_gap_the_job_had_now():
    # c03 is busy until +2 h; a job ahead waits for all four cpu nodes (3 h, from +2 h).
    # A 1 h job backfills on c01 now, ending before +2 h. With --begin now+90 min it would
    # run past +2 h into the job ahead's nodes: it starts after it, at +5 h (a start held
    # to the begin time alone, +1:30, would be wrong)
    jobs = [busy("1", "c03", 2, 128, "cpu", walltime_h=4), queued("2", "cpu", 0, 3, nodes=4)]
    site = hera(jobs=jobs, alloc={"c03": (128, 0)})
    v = only(run("#SBATCH -p cpu -N 1 -t 1:00:00", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run("#SBATCH -p cpu -N 1 -t 1:00:00 --begin=now+90minutes", site), "hera", "cpu")
    assert v.estimated_start == hours(5)


def test_begin_times_are_read_as_sbatch_reads_them():
    from diamond_jupyter.placement_time import slurm_time_at
    assert slurm_time_at("now+30", NOW) == NOW + timedelta(seconds=30)
    assert slurm_time_at("now+3days", NOW) == NOW + timedelta(days=3)
    assert slurm_time_at("16:00", NOW) == NOW.replace(hour=16)
    assert slurm_time_at("8:00", NOW) == NOW.replace(hour=8) + timedelta(days=1)  # gone by
    assert slurm_time_at("4:30 PM", NOW) == NOW.replace(hour=16, minute=30)
    assert slurm_time_at("teatime", NOW) == NOW.replace(hour=16)
    assert slurm_time_at("tomorrow", NOW) == NOW.replace(hour=0) + timedelta(days=1)
    assert slurm_time_at("03/05", NOW) == NOW.replace(day=5, hour=0)
    assert slurm_time_at("0228", NOW) == NOW.replace(year=2027, month=2, day=28, hour=0)
    assert slurm_time_at("2026-03-02T06:15:30", NOW) == NOW.replace(day=2, hour=6, minute=15,
                                                                    second=30)


def test_an_unreadable_begin_or_deadline_is_refused_naming_what_is_accepted():
    import pytest

    from diamond_jupyter.model import BadInput
    for bad in ("now+2fortnights", "25:00", "2026-02-30", "soon"):
        with pytest.raises(BadInput, match=r"--begin '.*': not a time sbatch reads \(accepted: "
                                           r"now\[\+N"):
            run(f"#SBATCH -t 1:00:00 --begin={bad}", hera())
    with pytest.raises(BadInput, match="--deadline 'later'"):
        run("#SBATCH -t 1:00:00 --deadline=later", hera())


def test_a_deadline_the_job_cannot_end_by_refuses_it():
    # idle: 2 h from now ends past a deadline 1 h away: Slurm removes it (before: READY)
    p = run("#SBATCH -p cpu -t 2:00:00 --deadline=now+1hour", hera())
    assert reasons(p, "hera") == (
        "--deadline 2026-03-01 10:00: the job can start at +0:00:00, but with its time limit "
        "2:00:00 it must start by +0:00:00 to end by then: Slurm removes a job that cannot "
        "(state DEADLINE)")
    # --time-min 30 min: Slurm cuts its limit to end by the deadline
    v = only(run("#SBATCH -p cpu -t 2:00:00 --time-min=0:30:00 --deadline=now+1hour", hera()),
             "hera", "cpu")
    assert v.verdict == "READY"
    assert has_note(v, "--deadline 2026-03-01 10:00: Slurm cuts its time limit to end by "
                       "then (1:00:00, at least its --time-min 0:30:00)")


def test_a_deadline_missed_because_the_nodes_free_too_late():
    # the gpu nodes' A100s free at +2 h and +3 h: a 2 h job of 4 A100 starts at +2 h and
    # ends at +4 h, past a deadline at +3 h; at +5 h it makes it
    jobs = [busy("11", "g01", 2, 64, "gpu", walltime_h=4, gpus=4),
            busy("12", "g02", 3, 64, "gpu", walltime_h=4, gpus=4)]
    site = hera(jobs=jobs, alloc={"g01": (64, 4), "g02": (64, 4)})
    p = run("#SBATCH -p gpu --gres=gpu:a100:4 -t 2:00:00 --deadline=now+3hours", site)
    assert reasons(p, "hera").startswith("--deadline 2026-03-01 12:00: the job can start at "
                                         "+2:00:00, but with its time limit 2:00:00 it must "
                                         "start by +1:00:00")
    v = only(run("#SBATCH -p gpu --gres=gpu:a100:4 -t 2:00:00 --deadline=now+5hours", site),
             "hera", "gpu")
    assert v.estimated_start == hours(2)
    assert has_note(v, "--deadline 2026-03-01 14:00: it must start by +3:00:00")


def test_time_min_lets_the_job_backfill_a_gap_shorter_than_its_limit():
    # c03 busy until +2 h, a job ahead waits for all four cpu nodes from +2 h for 3 h. A
    # 4 h job waits behind it (+5 h); with --time-min 1 h Slurm lowers its limit to fit
    # the gap on c01 before +2 h and starts it now (before: +5 h, --time-min was read only
    # against MaxTime); --time-min 3 h fits no gap: +5 h
    jobs = [busy("1", "c03", 2, 128, "cpu", walltime_h=4), queued("2", "cpu", 0, 3, nodes=4)]
    site = hera(jobs=jobs, alloc={"c03": (128, 0)})
    assert run("#SBATCH -p cpu -N 1 -t 4:00:00", site).verdict("hera").estimated_start \
        == hours(5)
    v = only(run("#SBATCH -p cpu -N 1 -t 4:00:00 --time-min=1:00:00", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert has_note(v, "partition cpu: --time-min 1:00:00: Slurm lowers its time limit (to "
                       "no less than that) to start it at +0:00:00, sooner than its full "
                       "limit lets it (+5:00:00)")
    v = run("#SBATCH -p cpu -N 1 -t 4:00:00 --time-min=3:00:00", site).verdict("hera")
    assert v.estimated_start == hours(5)


# --------------------------------------------------------------- PBS routing queue, walltime

def test_pbs_walltime_above_every_destination_of_a_routing_queue():
    # submit routes to small (12 h, 16 CPUs) and large (48 h, 64 CPUs at least); workq
    # (24 h) is not among them. 64 CPUs for 30 h: large takes it. For 60 h: above both
    # destinations, said of them (before: "above every partition's MaxTime here", though
    # the site has other queues)
    from test_placement_cases5 import pbsq
    v = only(run("#PBS -q submit\n#PBS -l select=1:ncpus=64\n#PBS -l walltime=30:00:00",
                 pbsq()), "pbsq", "large")
    assert has_note(v, "routing queue submit sends it to large")
    p = run("#PBS -q submit\n#PBS -l select=1:ncpus=64\n#PBS -l walltime=60:00:00", pbsq())
    assert reasons(p, "pbsq") == (
        "walltime 2-12:00:00 above the resources_max.walltime of every destination of "
        "routing queue submit "
        "(the longest: large, 2-00:00:00) | needs 64 ncpus in all, queue small allows a job "
        "at most 16")
    # 8 CPUs for 20 h: above small's 12 h, and below large's 64 CPUs
    p = run("#PBS -q submit\n#PBS -l select=1:ncpus=8\n#PBS -l walltime=20:00:00", pbsq())
    assert reasons(p, "pbsq") == ("walltime 20:00:00 above queue small "
                                  "resources_max.walltime 12:00:00 | "
                                  "needs 8 ncpus in all, queue large takes only jobs of at "
                                  "least 64")


def test_slurm_walltime_above_every_partition_a_list_names():
    # -p debug,gpu: 30 h is above both (30 min, 24 h); cpu (48 h) would take it but is not
    # named: said of the partitions named
    p = run("#SBATCH -p debug,gpu\n#SBATCH -t 30:00:00", hera())
    assert reasons(p, "hera") == ("walltime 1-06:00:00 above the MaxTime of every partition "
                                  "it names (the longest: gpu, 1-00:00:00)")
    only(run("#SBATCH -p debug,cpu\n#SBATCH -t 30:00:00", hera()), "hera", "cpu")


# --------------------------------------------------------------- Flux --requires hosts, ranks

def _flux_f2_drained():
    from test_placement_cases7 import flux4
    cfg, snap = flux4()  # f0-f3, 16 cores and one A100 each
    next(n for n in snap.nodes if n.name == "f2").state = "drained"
    return cfg, snap


def test_flux_requires_a_host_that_is_drained():
    # --requires=host:f2 keeps the job to f2, drained: refused, saying so (before: the
    # term was kept unread and the job was READY on f0)
    p = run("#flux: -N 1\n#flux: -n 1\n#flux: --requires=host:f2", _flux_f2_drained())
    assert reasons(p, "flux") == ("--requires host:f2 leaves f2: needs 1 node, 0 of them "
                                  "usable (f2 drained)")
    # two nodes of f[1-2]: only f1 usable
    p = run("#flux: -N 2\n#flux: -n 2\n#flux: --requires=host:f[1-2]", _flux_f2_drained())
    assert reasons(p, "flux") == ("--requires host:f[1-2] leaves f1, f2: needs 2 nodes, 1 of "
                                  "them usable (f2 drained)")
    # rank 2 is f2 too
    p = run("#flux: -N 1\n#flux: -n 1\n#flux: --requires=rank:2", _flux_f2_drained())
    assert "needs 1 node, 0 of them usable (f2 drained)" in reasons(p, "flux")


def test_flux_requires_hosts_taken_and_left_out():
    # one node of f[1-2]: f1, usable; -host:f[0-1] leaves f2 (drained) and f3
    v = only(run("#flux: -N 1\n#flux: -n 1\n#flux: --requires=host:f[1-2]",
                 _flux_f2_drained()), "flux", None)
    assert v.verdict == "READY"
    v = only(run("#flux: -N 1\n#flux: -n 1\n#flux: --requires=-host:f[0-1]",
                 _flux_f2_drained()), "flux", None)
    assert v.verdict == "READY"
    p = run("#flux: -N 2\n#flux: -n 2\n#flux: --requires=-host:f[0-1]", _flux_f2_drained())
    assert reasons(p, "flux") == ("--requires -host:f[0-1] leaves f2, f3: needs 2 nodes, 1 of "
                                  "them usable (f2 drained)")
    # a host the site does not have
    p = run("#flux: -N 1\n#flux: -n 1\n#flux: --requires=host:g1", _flux_f2_drained())
    assert reasons(p, "flux") == "--requires host:g1 leaves none: no node of the site is " \
        "one of them"


def test_flux_requires_host_terms_it_cannot_read_are_refused():
    import pytest

    from diamond_jupyter.model import BadInput
    with pytest.raises(BadInput, match=r"--requires 'host:f1 or host:f2': host and rank terms "
                                       r"joined by `\|` or in parentheses are not read"):
        run('#flux: -N 1\n#flux: --requires="host:f1 or host:f2"', _flux_f2_drained())
    with pytest.raises(BadInput, match=r"--requires 'rank:a-b': 'a-b' is not an idset"):
        run("#flux: -N 1\n#flux: --requires=rank:a-b", _flux_f2_drained())


# --------------------------------------------------------------- Slurm preemption by tier

def _preempt_site(mode: str, *queue: str, alloc: dict[str, int]):
    from test_placement_cases5 import PARTITIONS
    from test_placement_cases8 import rhea
    parts = PARTITIONS.replace(
        "PriorityTier=1 Hidden=NO OverSubscribe=NO PreemptMode=OFF State=UP TotalCPUs=192",
        f"PriorityTier=1 Hidden=NO OverSubscribe=NO PreemptMode={mode} State=UP "
        "TotalCPUs=192")
    return rhea(queue=queue, partitions=parts, alloc=alloc)


def test_a_job_of_a_higher_tier_preempts_requeueable_jobs_on_its_nodes():
    # high (PriorityTier 5) holds n1-n2, which compute (tier 1) shares; bob's compute jobs
    # fill n1 and n2 until +3 h. compute is PreemptMode=REQUEUE: a job in high requeues
    # them and starts now (before: it waited for them, +3 h). With PreemptMode=OFF: +3 h
    from test_placement_cases6 import running
    q = (running("1", "bob", "n1", 48, 1, 4), running("2", "bob", "n2", 48, 1, 4))
    alloc = {"n1": 48, "n2": 48}
    v = only(run("#SBATCH -p high -N 1 -t 1:00:00", _preempt_site("REQUEUE", *q, alloc=alloc)),
             "rhea", "high")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert has_note(v, "partition high: its jobs preempt the running jobs of partition "
                       "compute (PreemptMode=REQUEUE, PriorityTier 1) on its nodes (its "
                       "PriorityTier 5): they count as free")
    v = run("#SBATCH -p high -N 1 -t 1:00:00", _preempt_site("OFF", *q, alloc=alloc)).verdict(
        "rhea")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))


def test_a_job_of_the_lower_tier_preempts_nothing_and_is_told_it_may_be_preempted():
    # n1-n4 full of bob's compute jobs (+3 h); a compute job waits for them and may itself
    # be preempted by high's jobs on n1-n2
    from test_placement_cases6 import running
    q = tuple(running(str(i), "bob", f"n{i}", 48, 1, 4) for i in range(1, 5))
    alloc = {f"n{i}": 48 for i in range(1, 5)}
    v = run("#SBATCH -p compute -N 1 -t 1:00:00", _preempt_site("REQUEUE", *q, alloc=alloc)) \
        .verdict("rhea")
    assert v.estimated_start == hours(3)
    assert has_note(v, "the job may be preempted (PreemptMode=REQUEUE) by jobs of partition "
                       "high")


# --------------------------------------------------------------- Grid Engine s_rt vs h_rt

def _grebe_soft(queues: str):
    from test_placement_cases8 import grebe
    return grebe({}, queues=queues)


def test_grid_engine_a_queue_s_rt_below_the_jobs_h_rt_ends_it_first():
    # all.q: h_rt 24 h, s_rt 4 h, notify 2 min. A job of h_rt 10 h is taken (h_rt is
    # within the queue's), but Grid Engine warns it at 4 h and ends it 2 min later: its
    # runtime is cut to 4:02:00, said. Before, s_rt was not read: 10 h expected
    site = _grebe_soft("qname all.q\nh_rt 24:00:00\ns_rt 4:00:00\nnotify 00:02:00\n\n"
                       "qname short.q\nh_rt 1:00:00\ns_rt INFINITY\n")
    assert {p.name: (p.soft_time_s, p.notify_s) for p in site[1].partitions} == {
        "all.q": (4 * H, 120), "short.q": (None, None)}
    v = only(run("#$ -q all.q\n#$ -l h_rt=10:00:00", site), "grebe", "all.q")
    assert has_note(v, "queue all.q: its s_rt 4:00:00 ends the job at 4:02:00 (Grid "
                       "Engine sends SIGUSR1 at s_rt, then ends it after the queue's notify "
                       "0:02:00), before its h_rt 10:00:00")
    assert v.estimated_runtime_s == 4 * H + 120
    # a job of 2 h ends before s_rt: nothing said
    v = only(run("#$ -q all.q\n#$ -l h_rt=2:00:00", site), "grebe", "all.q")
    assert not has_note(v, "s_rt") and v.estimated_runtime_s == 2 * H
