"""Grid Engine: a job's memory (`-l h_vmem`) and GPUs (`-l gpu`) against queue consumables
(`qconf -sq` complex_values, qc:), taken per slot or once as `qconf -sc`'s consumable
column says (YES: per slot, JOB: once a job, HOST: once a host), on recorded-shape
outputs (the `hestia` site of test_placement_cases12: three 16-slot hosts s1-s3 of 64G)."""

from __future__ import annotations

import pytest
import test_placement_cases12 as c12
from test_placement_cases import NOW, only, reasons, run
from test_placement_cases12 import _ge_job, hestia

G = 1024**3


def hours(h: float):
    from datetime import timedelta
    return NOW + timedelta(hours=h)


def complexes(h_vmem: str = "YES", gpu: str = "JOB") -> str:
    return f"""#name      shortcut   type        relop requestable consumable default  urgency
#-------------------------------------------------------------------------------
gpu        gpu        INT         <=    YES         {gpu:<11} 0        0
h_vmem     h_vmem     MEMORY      <=    YES         {h_vmem:<11} 0        0
lic        lic        INT         <=    YES         JOB        0        0
mem_free   mf         MEMORY      <=    YES         YES        0        0
slots      s          INT         <=    YES         YES        1        1000
tmpspace   ts         MEMORY      <=    YES         YES        0        0
# >#< starts a comment but comments are not saved across edits --------
"""


@pytest.fixture
def table(monkeypatch):
    """Sets the site's `qconf -sc` table for `hestia`."""
    def use(**kinds: str) -> None:
        monkeypatch.setattr(c12, "QCONF_SC", complexes(**kinds))
    use()
    return use


_VMEM = "#$ -pe smp 4\n#$ -l h_vmem={}\n#$ -l h_rt=1:00:00"


def test_h_vmem_per_slot_against_the_queue_instances_memory(table):
    # all.q's instances: 40G of h_vmem, s2's own 16G. bob's job in all.q@s1 holds 8 slots
    # x 3G = 24G until +2 h: 16G left there. Before, h_vmem was not checked against
    # queue consumables: each of these jobs was READY now
    site = hestia({"all.q": (["s1", "s2"], "complex_values h_vmem=40G,[s2=h_vmem=16G]")},
                  {("all.q", "s1"): [_ge_job("1", 8, 2, h_vmem="3G")]})
    q = site[1].partitions[0]
    assert q.queue_consumables_left == {"s1": {"h_vmem": 16 * G}, "s2": {"h_vmem": 16 * G}}
    # 4 slots x 4G = 16G: s2's instance has it now
    assert only(run(_VMEM.format("4G"), site), "hestia", "all.q").estimated_start == NOW
    # 4 x 6G = 24G: s2's instance never has it, s1's once bob's job gives back 24G (+2 h)
    v = only(run(_VMEM.format("6G"), site), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # 4 x 12G = 48G (the hosts have 64G): no instance holds that much
    assert reasons(run(_VMEM.format("12G"), site), "hestia") == (
        "queue all.q: needs 48G of queue consumable h_vmem per queue instance (4 slots x "
        "12G), the most an instance has is 40G")


def test_h_vmem_of_consumable_job_is_taken_once(table):
    # h_vmem is a JOB consumable here: -pe smp 4 -l h_vmem=12G takes 12G, not 48G.
    # all.q's instance on s2 has 16G: it starts there now. Read per slot (before), 48G
    # would be above every instance
    table(h_vmem="JOB")
    site = hestia({"all.q": (["s1", "s2"], "complex_values h_vmem=8G,[s2=h_vmem=16G]")})
    v = only(run(_VMEM.format("12G"), site), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert ("h_vmem is a consumable of type JOB here (qconf -sc): the job's 12G is taken "
            "once, not times its 4 slots") in v.notes
    assert reasons(run(_VMEM.format("20G"), site), "hestia") == (
        "queue all.q: needs 20G of queue consumable h_vmem per queue instance (once a job), "
        "the most an instance has is 16G")


def test_h_vmem_is_a_limit_of_every_queue_not_a_consumable_one_lacks(table):
    # only big.q (s2) has h_vmem in its complex_values; all.q (s1) has none: the job's
    # h_vmem is then a limit (INFINITY) there, not a missing attribute: it runs in all.q
    site = hestia({"all.q": (["s1"], ""), "big.q": (["s2"], "complex_values h_vmem=8G")})
    v = only(run(_VMEM.format("4G") + "\n#$ -q all.q", site), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert not any("offers no h_vmem" in n for n in v.notes)


_GPU = "#$ -l gpu={}\n#$ -l h_rt=1:00:00"


def test_gpus_offered_as_queue_consumables_only(table):
    # gpu.q's instances have 2 GPUs, s2's 4 (no hc:gpu: the hosts' GPUs are the queue's).
    # bob's job (JOB: once) holds 2 in gpu.q@s2 until +3 h. Before, the hosts had no GPUs:
    # every job asking one was refused
    site = hestia({"gpu.q": (["s1", "s2"], "complex_values gpu=2,[s2=gpu=4]")},
                  {("gpu.q", "s2"): [_ge_job("1", 1, 3, gpu="2")]})
    s1, s2 = site[1].nodes[:2]
    assert (s1.gpus, s1.gpus_allocated, s2.gpus, s2.gpus_allocated) == (2, 0, 4, 2)
    assert only(run(_GPU.format(2), site), "hestia", "gpu.q").estimated_start == NOW
    # 3: s1's instance never has them, s2's once bob's job ends
    v = only(run(_GPU.format(3), site), "hestia", "gpu.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    assert reasons(run(_GPU.format(5), site), "hestia") == \
        "needs 5 GPUs per host, largest host has 4"


def test_gpu_of_consumable_yes_is_per_slot(table):
    # gpu is consumable YES here: -pe smp 4 -l gpu=1 takes 1 per slot, 4 on the host.
    # gpu.q on s1 has 2, on s2 4: only s2; -pe smp 8 would take 8: refused
    table(gpu="YES")
    site = hestia({"gpu.q": (["s1", "s2"], "complex_values gpu=2,[s2=gpu=4]")})
    job = "#$ -pe smp {}\n#$ -l gpu=1\n#$ -l h_rt=1:00:00"
    v = only(run(job.format(4), site), "hestia", "gpu.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert ("-l gpu=1: gpu is a consumable of type YES here (qconf -sc): Grid Engine gives 1 "
            "per slot, 4 for the 4 slots on a host") in v.notes
    assert reasons(run(job.format(8), site), "hestia") == \
        "needs 8 GPUs per host, largest host has 4"
    # JOB (the reading without the table): 1 GPU for the 8 slots, s1 now
    table(gpu="JOB")
    site = hestia({"gpu.q": (["s1", "s2"], "complex_values gpu=2,[s2=gpu=4]")})
    assert only(run(job.format(8), site), "hestia", "gpu.q").estimated_start == NOW


def test_gpus_of_a_queue_only_one_queue_offers(table):
    # gpu.q (s2) offers gpu, all.q (s1) does not and s1 has no hc:gpu: a GPU job runs in
    # gpu.q only, named; its CPU-only sibling may use both
    site = hestia({"all.q": (["s1"], ""), "gpu.q": (["s2"], "complex_values gpu=4")})
    v = only(run(_GPU.format(1), site), "hestia", "gpu.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert reasons(run(_GPU.format(1) + "\n#$ -q all.q", site), "hestia").startswith(
        "queue all.q: ")
