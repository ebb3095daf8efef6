"""Follow-ups of the eighteenth placement sweep, each against what Slurm documents.

QOS MinTRESPerJob and the DenyOnLimit flag (`sacctmgr show qos` format MinTRES, Flags): a
job asking less than the QOS's least pends until changed (QOSMinCpuNotSatisfied,
QOSMinGRES ...), or, with DenyOnLimit, is refused at submit, as is a job past one of the
QOS's Max limits (without the flag, it pends). Before, MinTRES was not read (the job was
READY) and a Max limit passed did not say which of the two Slurm does.

Suspended jobs resume (PreemptMode=SUSPEND): a job Slurm suspends for a higher tier's runs
again once the higher-tier jobs on its nodes end, and its time limit does not count the
time it was suspended, so it ends that much later. Before, a suspended job was planned to
end at its original end, and a job behind it to start then."""

from __future__ import annotations

import pytest
from test_placement_cases import NOW, hours, run
from test_placement_cases13 import PARTITIONS, running, selene

from diamond_jupyter.dialects.slurm_commands import QOS_FIELDS, parse_qos
from diamond_jupyter.placement_sim import build_state, recalibrated


def _first(p):
    return p.ranked[0]


# ---- QOS MinTRESPerJob and DenyOnLimit -----------------------------------------------------

# `sacctmgr -nP show qos format=QOS_FIELDS`: ..., MinTRES, Flags. alice's default QOS is
# normal; she may also use wide and gpuq.


def _qos(name: str, **fields: str) -> str:
    """One `sacctmgr -nP` line of QOS_FIELDS, the fields not given empty."""
    return "|".join(fields.get(f, name if f == "Name" else "") for f in QOS_FIELDS.split(","))


QOS = "".join(line + "\n" for line in (
    _qos("normal", MaxTRESPerUser="cpu=256", MinTRES="cpu=16"),
    _qos("wide", MaxTRES="node=2", MinTRES="node=2", Flags="DenyOnLimit,OverPartQOS"),
    _qos("gpuq", GrpTRES="gres/gpu=4", MinTRES="gres/gpu=1", Flags="DenyOnLimit"),
    _qos("short", MaxWall="04:00:00"),
))


def _site():
    cfg, snap = selene()
    snap.qos = parse_qos(QOS)
    return cfg, snap


def test_min_tres_and_flags_are_asked_and_read():
    assert ",MinTRES,Flags," in QOS_FIELDS  # the TRES-minutes fields follow
    q = parse_qos(QOS)
    assert (q["normal"].min_tres_per_job, q["normal"].flags) == ({"cpu": 16}, [])
    assert (q["wide"].min_tres_per_job, q["wide"].flags) == (
        {"node": 2}, ["DenyOnLimit", "OverPartQOS"])
    assert q["short"].min_tres_per_job == {} and q["short"].max_wall_s == 4 * 3600
    # a recording of the ten fields before them reads as before
    assert parse_qos("old|cpu=8||||||||\n")["old"].min_tres_per_job == {}


def test_a_job_below_min_tres_pends_until_changed():
    """normal takes jobs of at least 16 CPUs; 4 asked: Slurm keeps it pending
    (QOSMinCpuNotSatisfied). Before: READY on batch."""
    p = run("#SBATCH -p batch -n 4 -t 1:00:00", _site())
    v = p.verdict("selene")
    assert v.verdict == "INCOMPATIBLE", p.explain()
    assert any("asks 4 CPUs in all, the job's QOS normal takes only jobs of at least 16 "
               "(MinTRESPerJob cpu=16): Slurm keeps it pending (QOSMinCpuNotSatisfied) "
               "until it asks more" in r for r in v.reasons), v.reasons
    assert _first(run("#SBATCH -p batch -n 16 -t 1:00:00", _site())).verdict == "READY"


def test_deny_on_limit_refuses_below_min_at_submit():
    """gpuq (DenyOnLimit) takes jobs of at least one GPU: a CPU job under it is refused at
    submit; one asking a GPU runs."""
    v = run("#SBATCH -p gpu --qos=gpuq -n 4 -t 1:00:00", _site()).verdict("selene")
    assert v.verdict == "INCOMPATIBLE"
    assert any("asks 0 GPUs in all, the job's QOS gpuq takes only jobs of at least 1 "
               "(MinTRESPerJob gres/gpu=1): Slurm refuses it at submit (DenyOnLimit)" in r
               for r in v.reasons), v.reasons
    ok = _first(run("#SBATCH -p gpu --qos=gpuq -n 4 --gres=gpu:1 -t 1:00:00", _site()))
    assert ok.verdict == "READY", ok.reasons


@pytest.mark.parametrize("nodes, said", [
    (3, "needs 3 nodes in all, the job's QOS wide allows 2 (MaxTRESPerJob node=2): Slurm "
        "refuses it at submit (DenyOnLimit)"),
    (1, "asks 1 node in all, the job's QOS wide takes only jobs of at least 2 "
        "(MinTRESPerJob node=2): Slurm refuses it at submit (DenyOnLimit)"),
])
def test_deny_on_limit_refuses_past_max_or_below_min_at_submit(nodes, said):
    v = run(f"#SBATCH -p batch --qos=wide -N {nodes} -t 1:00:00", _site()).verdict("selene")
    assert v.verdict == "INCOMPATIBLE"
    assert any(said in r for r in v.reasons), v.reasons
    assert _first(run("#SBATCH -p batch --qos=wide -N 2 -t 1:00:00", _site())).verdict \
        == "READY"


def test_past_max_without_deny_on_limit_is_not_said_to_be_refused():
    v = run("#SBATCH -p batch --qos=short -n 16 -t 5:00:00", _site()).verdict("selene")
    assert v.verdict == "INCOMPATIBLE"
    assert any("walltime 5:00:00 above the job's QOS short MaxWall 4:00:00" in r
               for r in v.reasons), v.reasons
    assert not any("DenyOnLimit" in r for r in v.reasons)


# ---- suspended jobs resume when the jobs that suspended them end ---------------------------

SUSPEND = PARTITIONS.replace("PreemptMode=REQUEUE", "PreemptMode=SUSPEND,GANG")


def _suspended_site(big_left_h: float = 3):
    """selene: bob's scav job 71 (PriorityTier 1, 12 h limit) started on m01 4 h ago and
    was suspended 2 h ago by carol's big job 81 (PriorityTier 10), which has `big_left_h`
    of its 5 h left. squeue still gives job 71 its end unsuspended (start + 12 h = +8 h);
    it has run 2 h, so it runs 10 h more once job 81 ends."""
    scav = running("71", "bob", "m01", 128, 8, 12, "scav").replace("|RUNNING|", "|SUSPENDED|")
    big = running("81", "carol", "m01", 128, big_left_h, big_left_h + 2, "big")
    return selene(scav, big, alloc={"m01": 128}, mem={"m01": 500000}, partitions=SUSPEND)


@pytest.mark.parametrize("big_left_h, start_h", [(3, 13), (5, 15)])
def test_a_job_behind_a_suspended_job_waits_for_its_resumed_end(big_left_h, start_h):
    """A scav job that needs m01 whole starts when job 71, resumed at job 81's end, has run
    its 10 h left (before: at +8 h, job 71's end had it not been suspended)."""
    v = _first(run("#SBATCH -p scav -w m01 -n 128 --mem=1G -t 1:00:00",
                   _suspended_site(big_left_h)))
    assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "scav", hours(start_h)), \
        v.notes


def test_the_suspended_jobs_cpus_free_only_when_it_ends():
    """Job 81's end gives m01's CPUs to job 71, not to the queue: a 64-CPU scav job on m01
    waits for job 71 too (before: it started at job 81's end, +3 h)."""
    v = _first(run("#SBATCH -p scav -w m01 -n 64 --mem=1G -t 1:00:00", _suspended_site()))
    assert v.estimated_start == hours(13), v.notes


def test_a_calibrated_view_resumes_the_suspended_job_after_its_suspenders_new_end():
    """With a ratio of one half (jobs end at half their limit, conditioned on what they
    ran), job 81's end moves and job 71's resumed end moves with it."""
    _, snap = _suspended_site()
    st = build_state(snap, snap.nodes, {}, NOW, {})
    m01 = st.names.index("m01")
    ends = sorted((r[0] / 3600, r[3]) for r in st.releases if r[2] == m01)
    # job 81 hands its 128 CPUs to job 71 at +3 h; job 71 gives them back at +13 h
    assert ends == [(3.0, 0), (13.0, 128)]

    def half(partition, cpus, share, limit):
        return max(0.5, share or 0.0)

    cal, _ = recalibrated(st, [], half)
    ends = sorted((r[0] / 3600, r[3]) for r in cal.releases if r[2] == m01)
    # job 81 (2 h of 5 run) ends at 2.5 h: +0.5 h; job 71 (2 h of 12 run) has 4 h left
    assert ends == [(0.5, 0), (4.5, 128)]


# ---- the time a job ran (squeue %M): exact over several suspend/resume cycles ---------------

def _used(line: str, used: str) -> str:
    """`line` (squeue fields before %M was read) with the job's time used (%M) added."""
    head, _, name = line.rpartition("|")
    return f"{head}|{used}|{name}"


def test_a_suspended_job_runs_its_limit_less_the_time_squeue_says_it_ran():
    """Job 71 was suspended once before (resumed since): squeue's %M says it ran 1 h of its
    4 h since start, so it has 11 h left once job 81 ends at +3 h (before: 10 h, from its
    start to job 81's start, which counted the earlier suspension as run)."""
    scav = _used(running("71", "bob", "m01", 128, 8, 12, "scav")
                 .replace("|RUNNING|", "|SUSPENDED|"), "1:00:00")
    big = running("81", "carol", "m01", 128, 3, 5, "big")
    site = selene(scav, big, alloc={"m01": 128}, mem={"m01": 500000}, partitions=SUSPEND)
    v = _first(run("#SBATCH -p scav -w m01 -n 128 --mem=1G -t 1:00:00", site))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(14)), v.notes


def test_a_resumed_job_ends_its_limit_less_the_time_it_ran_after_now():
    """Job 71 runs again after a suspension: started 4 h ago, it ran 2 h (%M 2:00:00), so of
    its 12 h it has 10 h left (before: 8 h, the time since its start counted as run)."""
    line = _used(running("71", "bob", "m01", 128, 8, 12, "scav"), "2:00:00")
    site = selene(line, alloc={"m01": 128}, mem={"m01": 500000}, partitions=SUSPEND)
    v = _first(run("#SBATCH -p scav -w m01 -n 128 --mem=1G -t 1:00:00", site))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(10)), v.notes


def test_squeue_time_used_is_read_and_older_lines_without_it_read_as_before():
    from diamond_jupyter.dialects.slurm_commands import SQUEUE_FIELDS, SlurmCommands
    assert "%M" in SQUEUE_FIELDS
    old = running("71", "bob", "m01", 128, 8, 12, "scav")
    piped = old.replace("|job71", "|a|b")  # a name holding '|', in the older layout
    new = _used(running("72", "bob", "m02", 128, 8, 12, "scav"), "1-02:03:04")
    jobs = {j.native_id: j for j in SlurmCommands().parse_status(
        "\n".join([old, piped.replace("71|", "73|", 1), new]))}
    assert (jobs["71"].time_used_s, jobs["71"].name) == (None, "job71")
    assert (jobs["73"].time_used_s, jobs["73"].name) == (None, "a|b")
    assert (jobs["72"].time_used_s, jobs["72"].name) == (93784, "job72")


# ---- what the decision says of the suspended jobs it meets ----------------------------------

def test_a_job_suspended_by_hand_is_held_and_said_to_resume_at_a_time_not_known():
    """Job 71 is suspended and no higher-tier job runs on m01 (scontrol suspend): when it
    resumes is not known, so its CPUs are held for all its limit left from now, 11 h (%M:
    it ran 1 h), the safe side, and the notes say so. Before: planned as if running, it
    freed m01 at +8 h (start + 12 h) and nothing was said."""
    scav = _used(running("71", "bob", "m01", 128, 8, 12, "scav")
                 .replace("|RUNNING|", "|SUSPENDED|"), "1:00:00")
    site = selene(scav, alloc={"m01": 128}, mem={"m01": 500000}, partitions=SUSPEND)
    v = _first(run("#SBATCH -p scav -w m01 -n 128 --mem=1G -t 1:00:00", site))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(11)), v.notes
    said = [n for n in v.notes if "job 71" in n]
    assert len(said) == 1 and "resumes at a time not known" in said[0] \
        and "held (not free)" in said[0] and "11:00:00" in said[0], v.notes


def test_the_notes_name_the_suspended_job_the_job_waits_for_and_its_planned_resumption():
    """The job waits for job 71 on m01: the notes name it, its resumption at job 81's end
    (+3 h) and its end (+13 h). Before: nothing said of it."""
    v = _first(run("#SBATCH -p scav -w m01 -n 128 --mem=1G -t 1:00:00", _suspended_site()))
    said = [n for n in v.notes if "job 71" in n]
    assert said == ["partition scav: job 71 on m01 is suspended: the job waits for it, "
                    "planned to resume in 3:00:00 (when the jobs that suspended it end) and "
                    "end in 13:00:00"], v.notes


def test_a_suspended_job_the_job_does_not_wait_for_is_not_said():
    """A job on m02 (free) does not wait for job 71 on m01: no note names job 71."""
    v = _first(run("#SBATCH -p scav -w m02 -n 16 --mem=1G -t 1:00:00", _suspended_site()))
    assert v.estimated_start is not None and v.estimated_start < hours(1), v.notes
    assert not any("job 71" in n for n in v.notes), v.notes
