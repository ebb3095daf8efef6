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


# ------------------------------------------- a parallel job's slots from several queue instances

def kronos(queues: dict[str, tuple[dict[str, int], str]], running: dict | None = None,
           host_slots: int | None = 16, resv: dict[tuple[str, str], int] | None = None):
    """A Grid Engine site of two hosts (s1, s2) of `host_slots` slots each (their exec
    host `slots` complex; None: they set none). `queues`: each queue's instances (host ->
    its slots_total) and pe_list; `running`: (queue, host) -> running jobs' entries
    (`_ge_job`); `resv`: the slots reserved in an instance (slots_resv)."""
    import re
    from datetime import timezone

    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.dialects.sge_commands import SgeCommands
    running = running or {}
    used = {k: sum(int(x) for j in js for x in re.findall(r"<slots>(\d+)</slots>", j))
            for k, js in running.items()}
    inst = "".join(
        f"<Queue-List><name>{q}@{h}</name><qtype>BIP</qtype><slots_used>"
        f"{used.get((q, h), 0)}</slots_used><slots_resv>{(resv or {}).get((q, h), 0)}"
        f"</slots_resv><slots_total>{n}"
        "</slots_total><load_avg>0.5</load_avg><arch>lx-amd64</arch>"
        f"{''.join(running.get((q, h), []))}</Queue-List>"
        for q, (hosts, _) in queues.items() for h, n in hosts.items())
    qstat = f"<?xml version='1.0'?><job_info><queue_info>{inst}</queue_info>" \
        "<job_info></job_info></job_info>"
    qhost = "<?xml version='1.0'?><qhost><host name='global'></host>" + "".join(
        f"<host name='{h}'><hostvalue name='arch_string'>lx-amd64</hostvalue>"
        "<hostvalue name='num_proc'>16</hostvalue><hostvalue name='load_avg'>0.5"
        "</hostvalue><hostvalue name='mem_total'>64.0G</hostvalue>"
        + ("" if host_slots is None else "<resourcevalue name='slots' dominance='hf'>"
           f"{host_slots - sum(n for (_, x), n in used.items() if x == h)}</resourcevalue>")
        + "</host>" for h in ("s1", "s2")) + "</qhost>"
    conf = "\n".join(f"qname {q}\nhostlist {' '.join(hosts)}\npe_list {pes}\n"
                     "h_rt 24:00:00\nslots 8\n" for q, (hosts, pes) in queues.items())
    rules = {"smp": "$pe_slots", "mpi": "$fill_up"}
    snap = SgeCommands(tz=timezone.utc).parse_snapshot(
        "kronos", {"queue": qstat, "hosts": qhost, "queues": conf,
                   "complexes": complexes(), "pes": "smp\nmpi\n",
                   "pe_rules": "".join(f"pe_name {p}\nallocation_rule {r}\n\n"
                                       for p, r in rules.items())})
    return SiteConfig(name="kronos", scheduler="sge"), snap.model_copy(
        update={"taken_at": NOW})


_SMP = "#$ -pe smp {}\n#$ -l h_rt=1:00:00"


def test_pe_slots_of_one_host_from_two_queue_instances():
    # s1 has all.q (8 slots) and short.q (8), both offering smp; s2 all.q alone (8).
    # -pe smp 12 ($pe_slots: one host) fits no instance alone: on s1 the two give 12 of
    # their 16. Before, the host's 16 slots were all.q's: submitted with -q all.q, where
    # Grid Engine never starts it
    site = kronos({"all.q": ({"s1": 8, "s2": 8}, "smp mpi"), "short.q": ({"s1": 8}, "smp")})
    assert site[1].partitions[0].instance_slots == {"s1": 8, "s2": 8}
    v = only(run(_SMP.format(12), site), "kronos")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert v.partition in ("all.q,short.q", "short.q,all.q")
    first = v.partition.split(",")[0]
    assert (f"queue {first}: no instance of it has 12 slots; Grid Engine takes a parallel "
            "job's slots on a host from every queue instance there that offers parallel "
            f"environment 'smp' (on s1: all.q 8 + short.q 8): submitted with -q "
            f"{v.partition}") in [n.replace("short.q 8 + all.q 8", "all.q 8 + short.q 8")
                                  for n in v.notes]
    # the job goes to Grid Engine with -q naming both queues
    from diamond_jupyter.dialects.translate import get_script_dialect
    sge = get_script_dialect("sge")
    spec = sge.parse_script("#!/bin/bash\n" + _SMP.format(12) + "\n./app\n")
    assert f"#$ -q {v.partition}\n" in sge.render_script(
        spec.model_copy(update={"queue": v.partition})).script
    # 8 slots: all.q's instance alone holds them
    assert only(run(_SMP.format(8), site), "kronos").partition in ("all.q", "short.q")


def test_pe_slots_only_queues_offering_the_pe_add_up():
    # short.q offers mpi only: smp's 12 slots find at most 8 on a host
    site = kronos({"all.q": ({"s1": 8, "s2": 8}, "smp mpi"), "short.q": ({"s1": 8}, "mpi")})
    assert reasons(run(_SMP.format(12), site), "kronos") == (
        "queue all.q: needs 12 slots on a host, its instances have at most 8 | queue short.q "
        "does not offer parallel environment 'smp' (its pe_list: mpi)")


def test_pe_slots_within_the_q_list():
    # -q all.q: short.q's instance is not the job's to use
    site = kronos({"all.q": ({"s1": 8, "s2": 8}, "smp"), "short.q": ({"s1": 8}, "smp")})
    assert reasons(run(_SMP.format(12) + "\n#$ -q all.q", site), "kronos") == (
        "queue all.q: needs 12 slots on a host, its instances have at most 8")
    # both named: joined
    v = only(run(_SMP.format(12) + "\n#$ -q all.q,short.q", site), "kronos")
    assert set(v.partition.split(",")) == {"all.q", "short.q"}


def test_pe_slots_a_host_whose_instance_is_too_small_is_passed_over():
    # all.q has 12 slots on s2, 4 on s1: -pe smp 10 runs on s2 alone, even while s2 is
    # busy (bob's 8 slots until +2 h) and s1 idle
    site = kronos({"all.q": ({"s1": 4, "s2": 12}, "smp")},
                  {("all.q", "s2"): [_ge_job("1", 8, 2)]})
    v = only(run(_SMP.format(10), site), "kronos", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
