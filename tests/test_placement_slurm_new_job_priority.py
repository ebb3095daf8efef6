"""A new Slurm job's place among the waiting jobs from its own multifactor priority.

selene (PriorityType=priority/multifactor) read from its commands' outputs: `scontrol
show config`'s weights, the user's FairShare (`sshare -U`), the QOS priorities and the
default account (`sacctmgr`), the waiting jobs' priorities (`sprio`). n01-n03 are busy for
5 more hours; three jobs of 4 whole batch nodes and 10 hours wait (priorities 3000, 2000,
1500). alice's 4-node hour-long job goes behind those of a higher priority only: before,
it was put behind all three.
"""

from __future__ import annotations

from test_placement_cases import NOW, at, has_note, hours, run
from test_placement_cases13 import PARTITIONS, QOS, node_lines, running, slurm

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_priority import parse_job_priorities, parse_priority
from diamond_jupyter.placement_sim import Demand, SimState, earliest_start

CONFIG = "\n".join((
    "ClusterName = selene",
    "PriorityDecayHalfLife   = 7-00:00:00",
    "PriorityFavorSmall      = No",
    "PriorityFlags           = ",
    "PriorityMaxAge          = 7-00:00:00",
    "PriorityType            = priority/multifactor",
    "PriorityWeightAge       = 1000",
    "PriorityWeightAssoc     = 0",
    "PriorityWeightFairShare = 2000",
    "PriorityWeightJobSize   = 500",
    "PriorityWeightPartition = 1000",
    "PriorityWeightQOS       = 1000",
    "PriorityWeightTRES      = (null)",
    "SlurmdTimeout           = 300 sec",
)) + "\n"


def factors(fair_share: str = "0.620000", qos: str = "normal|0\nhigh|100\n") -> str:
    """`PRIORITY_PROBE`'s output: alice's sshare row (account proj), the QOS priorities,
    her default account."""
    return (f"#sshare\nproj|alice|{fair_share}|1.250000\n#qos\n{qos}"
            "#default_account\nproj\n")


SPRIO = "41|3000|batch\n42|2000|batch\n43|1500|batch\n"
BUSY = [running(str(20 + i), "bob", f"n0{i}", 64, 5, 10) for i in (1, 2, 3)]


def waiting(jid: str, user: str) -> str:
    """A job of 4 whole batch nodes and 10 hours waiting, as squeue prints it."""
    return (f"{jid}|PENDING|N/A|N/A|{at(-1)}|10:00:00|4|256|{user}|batch|N/A||Priority|"
            f"(null)|job{jid}")


QUEUE = [*BUSY, waiting("41", "carol"), waiting("42", "dave"), waiting("43", "erin")]
FOUR = "#SBATCH -p batch -N 4 --ntasks-per-node=64 -t 1:00:00"


def selene(probe: str | None = None, sprio: str = SPRIO, config: str = CONFIG):
    """selene read as the engine reads a snapshot, with its priority outputs."""
    outputs = {"partitions": PARTITIONS, "nodes": node_lines(alloc={"n01": 64, "n02": 64,
                                                                    "n03": 64}),
               "queue": "\n".join(QUEUE), "qos": QOS, "config": config,
               "reservations": "No reservations in the system\n",
               "assoc": "user|alice\nalice|proj||normal|normal,high\n"
                        "alice|other||normal|normal,high\n",
               "job_priorities": sprio}
    if probe is not None:
        outputs["priority_factors"] = probe
    snap = slurm.parse_snapshot("selene", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="selene", metadata={"architecture": "x86_64"}), snap


def _one(script: str, site) -> object:
    p = run(script, site)
    return p.verdict("selene"), p


def test_the_priority_outputs_are_read():
    prio = parse_priority(CONFIG, factors())
    assert prio is not None
    assert (prio.plugin, prio.weights, prio.favor_small, prio.tres_weights) == (
        "priority/multifactor",
        {"age": 1000, "assoc": 0, "fairshare": 2000, "jobsize": 500, "partition": 1000,
         "qos": 1000}, False, None)
    assert (prio.fair_share, prio.level_fs, prio.qos_priority, prio.default_account) == (
        {"proj": 0.62}, {"proj": "1.250000"}, {"normal": 0, "high": 100}, "proj")
    assert parse_priority("ClusterName = x\n", factors()) is None  # no PriorityType line
    # sprio: a job in two partitions counts at its highest; a site without the plugin
    assert parse_job_priorities("7|10|a\n7|30|b\n8_2|5|a\n") == {"7": 30, "8_2": 5}
    assert parse_job_priorities("sprio: error: You are not running a supported "
                                "priority plugin\n(priority/basic).\n") is None
    _, snap = selene(factors())
    assert [p.priority_job_factor for p in snap.partitions] == [1, 1, 1, 1, 1]
    assert snap.job_priorities == {"41": 3000, "42": 2000, "43": 1500}


def test_a_fair_share_between_theirs_puts_the_job_after_the_higher_only():
    """fair share 0.62 x 2000 + job size (4/11 nodes + 256/800 CPUs)/2 x 500 + partition
    1.0 x 1000 + QOS normal 0 = 2410: job 41 (3000) goes first (+5 h, to +15 h), the job
    then: +15 h; behind all three it started after job 43, at +35 h."""
    v, p = _one(FOUR, selene(factors()))
    assert v.estimated_start == hours(15), p.explain()
    assert has_note(v, "partition batch: your job's priority ~ 2410 (Slurm multifactor: "
                       "fair share 0.62\u00d72000, job size 0.34\u00d7500, partition "
                       "1.00\u00d71000, QOS 0.00\u00d71000, age 0): 1 waiting job goes "
                       "first, 2 wait behind it (of a lower priority, sprio)"), v.notes
    assert not v.not_checked, v.not_checked


def test_a_high_fair_share_puts_the_job_first_and_a_low_one_last():
    high, p = _one(FOUR, selene(factors("0.990000")))  # 1980 + 170.9 + 1000, cut to a whole number
    assert high.estimated_start == hours(5), p.explain()
    assert has_note(high, "~ 3150 ") and has_note(high, "0 waiting jobs go first, 3 wait")
    low, p = _one(FOUR, selene(factors("0.010000")))  # 20 + 170.9 + 1000
    assert low.estimated_start == hours(35), p.explain()
    assert has_note(low, "~ 1190 ") and has_note(low, "3 waiting jobs go first, 0 wait")


def test_the_job_s_qos_priority_counts_normalised():
    """--qos=high: Priority 100 of the highest 100 adds 1000: 3410, first."""
    v, p = _one(FOUR + " --qos=high", selene(factors()))
    assert v.estimated_start == hours(5), p.explain()
    assert has_note(v, "~ 3410 (") and has_note(v, "QOS 1.00\u00d71000")


def test_a_factor_not_read_is_said_and_the_job_keeps_its_place_behind_all():
    probe = factors().replace("proj|alice|0.620000|1.250000\n",
                              "sshare: error: Problem talking to the database\n"
                              "exit status 1\n")
    v, p = _one(FOUR, selene(probe))
    assert v.estimated_start == hours(35), p.explain()
    assert v.not_checked == [
        "priority factor fair share (sshare -U failed (exit 1): sshare: error: Problem "
        "talking to the database): the job was counted behind every job waiting in "
        "partition batch"], v.not_checked
    assert "selene not checked: priority factor fair share (sshare -U" in p.explain()
    # the job's account has no fair share row; the waiting jobs' priorities not read
    v, _ = _one(FOUR + " -A other", selene(factors()))
    assert v.estimated_start == hours(35)
    assert "sshare lists no row of yours under account other" in v.not_checked[0]
    v, _ = _one(FOUR, selene(factors(), sprio="sprio: error: Unable to contact slurm "
                                              "controller\n"))
    assert v.estimated_start == hours(35)
    assert v.not_checked == ["priority of the waiting jobs (sprio printed none): the job "
                             "was counted behind every job waiting in partition batch"]


def test_a_site_not_multifactor_keeps_today_s_order_silently():
    basic = CONFIG.replace("priority/multifactor", "priority/basic")
    v, p = _one(FOUR, selene(factors(), config=basic))
    assert v.estimated_start == hours(35), p.explain()
    assert not v.not_checked and not has_note(v, "your job's priority")


def test_slurm_s_plan_starts_the_probe_before_the_jobs_behind_it():
    """Two 1-node nodes, both busy for 100 s; a 2-node job of 1000 s waits. Behind it the
    probe (1 node) starts at 1100 s; ahead of it (probe_at 0), at 100 s."""
    st = SimState(names=["a", "b"], cap_c=[4, 4], cap_g=[0, 0], free_c=[0, 0],
                  free_g=[0, 0], releases=[(100.0, 0, 0, 4, 0), (100.0, 1, 1, 4, 0)])

    def queue() -> list[Demand]:
        return [Demand(2, 4, 0, 1000.0, [0, 1])]
    probe = Demand(1, 4, 0, 2000.0, [0, 1])
    assert earliest_start(st, queue(), probe, reservation="plan") == 1100.0
    assert earliest_start(st, queue(), probe, reservation="plan", probe_at=0) == 100.0


def test_priority_favor_small_turns_the_job_size_factor_over():
    """PriorityFavorSmall=Yes: 1 - 0.34 = 0.66 of 500 (329.1): 1240 + 329.1 + 1000, still
    between jobs 41 and 42."""
    small = CONFIG.replace("PriorityFavorSmall      = No", "PriorityFavorSmall      = Yes")
    v, p = _one(FOUR, selene(factors(), config=small))
    assert v.estimated_start == hours(15), p.explain()
    assert has_note(v, "~ 2569 (") and has_note(v, "job size 0.66\u00d7500")


def test_weights_it_does_not_model_are_said_not_checked():
    tres = CONFIG.replace("PriorityWeightTRES      = (null)",
                          "PriorityWeightTRES      = CPU=1000,Mem=2000")
    v, _ = _one(FOUR, selene(factors(), config=tres))
    assert v.estimated_start == hours(35)
    assert v.not_checked == ["priority factor TRES (PriorityWeightTRES=CPU=1000,Mem=2000 "
                             "is not modelled): the job was counted behind every job "
                             "waiting in partition batch"]
    assoc = CONFIG.replace("PriorityWeightAssoc     = 0", "PriorityWeightAssoc     = 100")
    v, _ = _one(FOUR, selene(factors(), config=assoc))
    assert v.estimated_start == hours(35)
    assert "priority factor association (your association's Priority is not read)" \
        in v.not_checked[0]


def test_on_a_big_site_the_jobs_behind_the_probe_are_left_out_of_its_plan():
    """500 nodes busy for 100 s and 20 jobs of all 500 waiting: past PLAN_WORK, the bounded
    plan. Behind them the probe starts when the last has run (+20,100 s); ahead of them,
    at 100 s."""
    n = 500
    st = SimState(names=[f"n{i}" for i in range(n)], cap_c=[4] * n, cap_g=[0] * n,
                  free_c=[0] * n, free_g=[0] * n,
                  releases=[(100.0, i, i, 4, 0) for i in range(n)])

    def queue() -> list[Demand]:
        every = list(range(n))
        return [Demand(n, 4, 0, 1000.0, every) for _ in range(20)]
    probe = Demand(1, 4, 0, 500.0, list(range(n)))
    assert earliest_start(st, queue(), probe, reservation="plan") == 20100.0
    assert earliest_start(st, queue(), probe, reservation="plan", probe_at=0) == 100.0


def test_a_priority_that_is_a_mark_of_none_is_not_known_and_said_so():
    # sprio prints NO_VAL (4294967294) for job 42: not a priority above all, not known; it
    # is kept ahead (not known to go behind) and the note says why. A QOS priority of a
    # mark is none. Before: 42 read as 4294967294, the QOS high as 4294967294
    assert parse_job_priorities("41|3000|batch\n42|4294967294|batch\n") == {"41": 3000}
    prio = parse_priority(CONFIG, factors(qos="normal|0\nhigh|4294967294\nlow|10\n"))
    assert prio is not None and prio.qos_priority == {"normal": 0, "low": 10}
    sprio = "41|3000|batch\n42|4294967294|batch\n43|1500|batch\n"
    v, p = _one(FOUR, selene(factors(), sprio=sprio))
    assert v.estimated_start == hours(25), p.explain()
    assert has_note(v, "2 waiting jobs go first (1 of them of a priority sprio does not "
                       "say, it might go behind), 1 waits behind it (of a lower priority, "
                       "sprio)"), v.notes


def test_a_weight_that_is_a_mark_of_none_is_left_out_and_said():
    # PriorityWeightQOS printed as INFINITE (4294967295) and PriorityWeightAge as no
    # number: no weight read from either, the shared marker reader's way, and said once
    # in the snapshot's warnings. Before: the QOS weight read as 4294967295, the other
    # dropped without a word
    config = CONFIG.replace("PriorityWeightQOS       = 1000",
                            "PriorityWeightQOS       = 4294967295").replace(
        "PriorityWeightAge       = 1000", "PriorityWeightAge       = lots")
    prio = parse_priority(config, factors())
    assert prio is not None
    assert prio.weights == {"assoc": 0, "fairshare": 2000, "jobsize": 500,
                            "partition": 1000}
    assert prio.unread["weights"] == (
        "not a weight (a mark of none or no whole number): PriorityWeightAge = lots, "
        "PriorityWeightQOS = 4294967295")
    _, snap = selene(factors(), config=config)
    assert snap.warnings == [
        "selene: scontrol show config: priority weights left out, not a weight (a mark "
        "of none or no whole number): PriorityWeightAge = lots, PriorityWeightQOS = "
        "4294967295"]
    assert "weights" not in parse_priority(CONFIG, factors()).unread
