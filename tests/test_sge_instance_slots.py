"""Grid Engine: the slots a queue instance has free (`qstat -f`'s slots_total less its
slots_used and slots_resv) bind a job in that queue besides the host's own `slots`
complex (qhost -F): a host whose instance of the job's queue is full does not start it
while the host's other queue instances have room. On recorded-shape outputs (the
`kronos` site of test_sge_queue_memory_gpus: hosts s1 and s2)."""

from __future__ import annotations

from test_placement_cases import NOW, only, reasons, run
from test_placement_cases12 import _ge_job
from test_sge_queue_memory_gpus import hours, kronos

_SMP = "#$ -pe smp {}\n#$ -l h_rt=1:00:00"


def test_a_full_instance_waits_though_its_host_has_other_queues_free():
    # s1: all.q (8) full with bob's job until +2 h, short.q (8) empty, the host 16 slots;
    # s2: all.q (8) full until +3 h. Before, s1's 8 free host slots were all.q's: READY now
    site = kronos({"all.q": ({"s1": 8, "s2": 8}, "smp"), "short.q": ({"s1": 8}, "smp")},
                  {("all.q", "s1"): [_ge_job("1", 8, 2)], ("all.q", "s2"): [_ge_job("2", 8, 3)]})
    q = site[1].partitions[0]
    assert (q.instance_slots_taken, q.instance_slots_held) == (
        {"s1": 8, "s2": 8}, {"s1": {"1": 8}, "s2": {"2": 8}})
    v = only(run(_SMP.format(4) + "\n#$ -q all.q", site), "kronos", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert ("queue all.q: its instances on s1, s2 have fewer than 4 slots free (qstat -f: "
            "slots_total less used and reserved): the job waits there for that queue's own "
            "running jobs, whatever the host's other queues have free") in v.notes
    # a serial job too
    v = only(run("#$ -l h_rt=1:00:00\n#$ -q all.q", site), "kronos", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # free to use short.q: it starts there now
    v = only(run(_SMP.format(4), site), "kronos", "short.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_reserved_slots_of_an_instance_are_not_free():
    # all.q@s1: 6 of its 8 slots reserved (slots_resv: an advance reservation's), 2 used
    # by bob's job until +1 h; all.q@s2 has 2 used until +3 h and 2 reserved. -pe smp 4
    # -q all.q: s2 has 4 free now; -pe smp 6 fits neither now: s1 once bob's job ends
    # would still hold only 2 (6 reserved), s2 once its job ends 6 (+3 h)
    site = kronos({"all.q": ({"s1": 8, "s2": 8}, "smp")},
                  {("all.q", "s1"): [_ge_job("1", 2, 1)], ("all.q", "s2"): [_ge_job("2", 2, 3)]},
                  resv={("all.q", "s1"): 6, ("all.q", "s2"): 2})
    assert site[1].partitions[0].instance_slots_taken == {"s1": 8, "s2": 4}
    v = only(run(_SMP.format(4) + "\n#$ -q all.q", site), "kronos", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run(_SMP.format(6) + "\n#$ -q all.q", site), "kronos", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))


def test_the_host_slots_complex_binds_an_instance_with_room():
    # both hosts cap 8 slots (exec host complex slots=8); short.q fills s1 (+1 h) and
    # all.q fills s2 (+3 h): all.q's instance on s1 is empty but its host is full
    site = kronos({"all.q": ({"s1": 8, "s2": 8}, "smp"), "short.q": ({"s1": 8}, "smp")},
                  {("short.q", "s1"): [_ge_job("1", 8, 1)], ("all.q", "s2"): [_ge_job("2", 8, 3)]},
                  host_slots=8)
    v = only(run(_SMP.format(4) + "\n#$ -q all.q", site), "kronos", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))


def test_a_joined_queue_counts_what_each_of_its_instances_has_in_use():
    # s1: all.q 8 (4 used until +2 h), short.q 8 (2 used until +1 h), other.q 8 (no smp,
    # empty), the host 24 slots. -pe smp 12 on one host takes all.q's and short.q's
    # instances together: 10 free there now, 12 once the short.q job ends. Before, the
    # host's 18 free slots made it READY now
    site = kronos({"all.q": ({"s1": 8, "s2": 8}, "smp"), "short.q": ({"s1": 8}, "smp"),
                   "other.q": ({"s1": 8}, "mpi")},
                  {("all.q", "s1"): [_ge_job("1", 4, 2)], ("short.q", "s1"): [_ge_job("2", 2, 1)]},
                  host_slots=24)
    v = only(run(_SMP.format(12), site), "kronos")
    assert set(v.partition.split(",")) == {"all.q", "short.q"}
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))


def test_a_host_without_a_slots_complex_runs_what_its_instances_hold_together():
    # no exec host `slots` complex: s1 runs all.q's 8 and short.q's 8 at once. all.q@s1 is
    # full until +2 h; short.q's instance there is empty: a job in short.q starts now.
    # Before, the host's size was its largest instance's (8, all in use): +2 h
    site = kronos({"all.q": ({"s1": 8}, "smp"), "short.q": ({"s1": 8}, "smp")},
                  {("all.q", "s1"): [_ge_job("1", 8, 2)]}, host_slots=None)
    s1 = site[1].nodes[0]
    assert (s1.cpus, s1.cpus_allocated) == (16, 8)
    v = only(run(_SMP.format(4) + "\n#$ -q short.q", site), "kronos", "short.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run(_SMP.format(4) + "\n#$ -q all.q", site), "kronos", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def test_another_queues_job_ending_first_does_not_open_a_full_instance():
    # s1: all.q (8) full until +2 h; short.q runs 4 (the first case) or 8 (the second)
    # slots until +1 h. The short.q job's end frees host slots, none of all.q's: a job in
    # all.q starts at +2 h. Before, it took the host's slots freed at +1 h
    for short_slots in (4, 8):
        site = kronos({"all.q": ({"s1": 8}, "smp"), "short.q": ({"s1": 8}, "smp")},
                      {("all.q", "s1"): [_ge_job("1", 8, 2)],
                       ("short.q", "s1"): [_ge_job("2", short_slots, 1)]})
        v = only(run(_SMP.format(4) + "\n#$ -q all.q", site), "kronos", "all.q")
        assert (v.verdict, v.estimated_start) == ("BUSY", hours(2)), short_slots


# ------------------------------- a JOB consumable of a job of several hosts: its master's

def _hestia_job_complexes(monkeypatch, running: dict | None = None):
    """`hestia` (three hosts of 16 slots, PE mpi 8 a host) with h_vmem and gpu of type JOB
    and host consumables (qhost -F hc:): s1 64G and 2 GPUs, s2 and s3 4G and none."""
    import test_placement_cases12 as c12
    from test_sge_queue_memory_gpus import complexes
    monkeypatch.setattr(c12, "QCONF_SC", complexes(h_vmem="JOB", gpu="JOB"))
    hc = {"s1": {"h_vmem": "64G", "gpu": "2"}, "s2": {"h_vmem": "4G", "gpu": "0"},
          "s3": {"h_vmem": "4G", "gpu": "0"}}
    return c12.hestia({"all.q": (["s1", "s2", "s3"], "")}, running, rules={"mpi": "8"},
                      hc=hc)


_MPI16 = "#$ -pe mpi 16\n#$ -l h_rt=1:00:00\n#$ -l {}"


def test_job_h_vmem_and_gpus_of_several_hosts_are_the_master_hosts_alone(monkeypatch):
    # -pe mpi 16 takes two hosts; h_vmem=32G and gpu=2 are of type JOB: Grid Engine debits
    # them on the master task's host alone (s1 has them), the other host needs none.
    # Before, every host had to hold 32G (2 GPUs): no two hosts could run it
    site = _hestia_job_complexes(monkeypatch)
    for ask in ("h_vmem=32G", "gpu=2"):
        v = only(run(_MPI16.format(ask), site), "hestia", "all.q")
        assert (v.verdict, v.estimated_start) == ("READY", NOW), ask
    v = only(run(_MPI16.format("h_vmem=32G"), site), "hestia")
    assert ("h_vmem is a consumable of type JOB here (qconf -sc): the job's 32G is taken "
            "once, on its master task's host alone (the other 1 of its hosts need none)"
            ) in v.notes
    # more than the master's host can hold: refused, said of the master host
    assert reasons(run(_MPI16.format("h_vmem=80G"), site), "hestia") == (
        "needs 80G of host consumable h_vmem on its master host (once a job), the most a "
        "host has is 64G")
    assert reasons(run(_MPI16.format("gpu=3"), site), "hestia") == (
        "needs 3 of host consumable gpu on its master host (once a job), the most a host "
        "has is 2")


def test_job_h_vmem_waits_for_the_one_host_that_holds_it(monkeypatch):
    # s1, the only host with 32G, is busy until +2 h; s2 and s3 are free: the job waits
    # for s1 (its master task's host), though two hosts are free now
    site = _hestia_job_complexes(monkeypatch, {("all.q", "s1"): [_ge_job("1", 16, 2)]})
    v = only(run(_MPI16.format("h_vmem=32G"), site), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # without the JOB consumable it starts now on s2 and s3
    v = only(run("#$ -pe mpi 16\n#$ -l h_rt=1:00:00", site), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
