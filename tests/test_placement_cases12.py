"""Placement cases worked by hand, twelfth sweep: what the eleventh left unread. A Slurm
heterogeneous job component's own `--exclusive` and its own `--gres` entries beside its
GPUs (`nvme:1`), read, written back and placed per component; Grid Engine queue
consumables (`qconf -sq`'s `complex_values`, `qc:`) and a parallel job's slots outside its
`-masterq` queue. Each case asserts the verdict per site, the partition, the start and
that the reason names the real cause."""

from __future__ import annotations

import re
from datetime import timedelta

from test_placement_cases import NOW, hera, hours, only, reasons, run
from test_placement_cases3 import running

from diamond_jupyter.dialects.translate import get_script_dialect, translate

H = 3600


# --------------------------------------------------------------- Slurm hetjob components

_HET = ("#!/bin/bash\n#SBATCH -p cpu -N 1 -n 4 -t 1:00:00 {first}\n#SBATCH hetjob\n"
        "#SBATCH -p gpu -N 1 -n 4 {later}\nsrun ./a : ./b\n")


def _parts(script: str) -> list[list[str]]:
    """The #SBATCH lines of each component."""
    out: list[list[str]] = [[]]
    for line in script.splitlines():
        if line == "#SBATCH hetjob":
            out.append([])
        elif line.startswith("#SBATCH"):
            out[-1].append(line)
    return out


def test_a_components_own_exclusive_and_gres_are_read_and_written_back():
    # sbatch carries neither --exclusive nor --gres over to the components after the
    # first (heterogeneous_jobs.html lists the options it propagates; neither is one).
    # Before, a later component with either was kept as written, only the first read
    text = _HET.format(first="", later="--gres=gpu:a100:2,nvme:1 --exclusive")
    spec = get_script_dialect("slurm").parse_script(text)
    assert [(c.exclusive, c.gres, c.gpus_per_node) for c in spec.components] == \
        [(None, None, None), (True, "nvme:1", 2)]
    assert spec.unknown == [] and not spec.constraints.exclusive
    out, warnings, _ = translate(text, "slurm", "slurm")
    first, second = _parts(out)
    assert "#SBATCH --exclusive" not in first and "#SBATCH --exclusive" in second
    # its GPUs and its other entries on one --gres (sbatch keeps a component's last)
    assert "#SBATCH --gres=gpu:a100:2,nvme:1" in second
    assert not any(x.startswith("#SBATCH --gpus") for x in second)
    again = get_script_dialect("slurm").parse_script(out)
    assert [(c.exclusive, c.gres) for c in again.components] == [(None, None),
                                                                  (True, "nvme:1")]
    # the first exclusive, the later one not: shared (none carried over, none written)
    spec = get_script_dialect("slurm").parse_script(
        _HET.format(first="--exclusive", later="--gres=nvme:1"))
    assert [(c.exclusive, c.gres, c.gpus_per_node) for c in spec.components] == \
        [(None, None, None), (False, "nvme:1", None)]
    first, second = _parts(get_script_dialect("slurm").render_script(spec).script)
    assert "#SBATCH --exclusive" in first and "#SBATCH --exclusive" not in second
    assert "#SBATCH --gres=nvme:1" in second
    # the last --gres of a component is its own (the earlier one's GPUs are gone)
    spec = get_script_dialect("slurm").parse_script(
        _HET.format(first="", later="--gres=gpu:2\n#SBATCH --gres=nvme:1"))
    assert [(c.gres, c.gpus_per_node) for c in spec.components][1] == ("nvme:1", None)
    # --exclusive=user is still kept as written (no neutral form)
    kept = get_script_dialect("slurm").parse_script(
        _HET.format(first="", later="--exclusive=user"))
    assert kept.components == [] and "hetjob" in [d.option for d in kept.unknown]


def test_one_exclusivity_schedulers_say_each_components_own():
    text = _HET.format(first="", later="--gres=gpu:a100:2,nvme:1 --exclusive")
    for target, shown in (("pbs", "PBS"), ("lsf", "LSF"), ("sge", "Grid Engine"),
                          ("flux", "flux")):
        warnings = translate(text, target, "slurm")[1]
        assert f"approximated: exclusive nodes of component 1 as the job's shared ones " \
            f"({shown} has one exclusivity per job)" in warnings, (target, warnings)
        assert "dropped: --gres nvme:1 of component 1 (Slurm generic resources: no neutral " \
            "form)" in warnings, (target, warnings)
    from diamond_jupyter.dialects.slurm_rest import job_description
    spec = get_script_dialect("slurm").parse_script(text)
    spec.working_directory = "/home/u/run"
    assert any(w.startswith("approximated: exclusive nodes of component 1") for w in
               job_description(spec)[1])


def _run_het(first: str, later: str, site):
    """`_HET` placed on `site` alone."""
    return run(_HET.format(first=first, later=later).removeprefix("#!/bin/bash\n"), site)


def _gpu_busy():
    """hera: g01 holds r1 (8 CPUs, 1 GPU) until +2 h, g02 holds r2 (8 CPUs, 1 GPU) until
    +3 h; v01 (v100) idle."""
    return hera(jobs=[running("r1", "g01", 2, 8, 1, partition="gpu"),
                      running("r2", "g02", 3, 8, 1, partition="gpu")],
                alloc={"g01": (8, 1), "g02": (8, 1)})


def test_a_components_own_exclusive_is_placed_with_it():
    # the gpu component asks 4 CPUs and an a100: g01 has 56 CPUs and 3 GPUs free, so it
    # starts now sharing g01; with its own --exclusive it needs an a100 node nobody uses:
    # g01 once r1 ends (+2 h). The cpu component starts now on c01-c04. Before, the
    # component was kept as written and only the first (cpu) placed: READY now
    site = _gpu_busy()
    v = only(_run_het("", "--gres=gpu:a100:1", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(_run_het("", "--gres=gpu:a100:1 --exclusive", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert "hetjob component 1 runs in partition gpu, can start +2:00:00" in " ".join(v.notes)
    # the first exclusive, the gpu one not: that one shares g01 at once (the cpu nodes
    # are empty): now. Before: kept as written (the first's exclusivity not carried)
    v = only(_run_het("--exclusive", "--gres=gpu:a100:1", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def _nvme_site():
    """hera with g01 (4 GPUs, 1 nvme) busy whole until +2 h (r1), g02 (4 GPUs, no nvme)
    idle, the cpu nodes one nvme each."""
    cfg, snap = hera(jobs=[running("r1", "g01", 2, 64, 4, partition="gpu")],
                     alloc={"g01": (64, 4)})
    gres = {"g01": {"gpu": 4, "nvme": 1}, "g02": {"gpu": 4}, "v01": {"gpu": 2}}
    nodes = [n.model_copy(update={"gres": gres.get(n.name, {"nvme": 1})}) for n in snap.nodes]
    return cfg, snap.model_copy(update={"nodes": nodes})


def test_a_components_own_gres_is_placed_with_it():
    site = _nvme_site()
    het = "#SBATCH -p cpu -N 1 -n 4 -t 1:00:00 {first}\n#SBATCH hetjob\n#SBATCH -p gpu {later}"
    # one a100: g02 now
    v = only(run(het.format(first="", later="-n 1 --gres=gpu:a100:1"), site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # one a100 and an nvme: g01 only, once r1 ends (+2 h). Before: kept as written, only
    # the cpu component placed: READY now
    v = only(run(het.format(first="", later="-n 1 --gres=gpu:a100:1,nvme:1"), site), "hera",
             "cpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # two such nodes: the gpu partition has one with nvme
    p = run(het.format(first="", later="-N 2 -n 2 --gres=gpu:a100:1,nvme:1"), site)
    assert reasons(p, "hera").startswith(
        "hetjob component 1: needs 2 nodes, partition gpu has only 1 that can run it")
    assert "(others: no node has gres 'nvme'" in reasons(p, "hera")
    # the first's nvme is its own (sbatch does not carry --gres over): the gpu component
    # starts on g02 now. Before, the first's kept --gres went with every component: it
    # waited for g01 (+2 h)
    v = only(run(het.format(first="--gres=nvme:1", later="-n 1 --gres=gpu:a100:1"), site),
             "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)




# --------------------------------------------------------------- Grid Engine queue consumables

QCONF_SC = """#name      shortcut   type        relop requestable consumable default  urgency
#-------------------------------------------------------------------------------
lic        lic        INT         <=    YES         JOB        0        0
tmpspace   ts         MEMORY      <=    YES         YES        0        0
slots      s          INT         <=    YES         YES        1        1000
"""


def _ge_job(jid: str, slots: int, left_h: float, limit_h: int = 4, **asks: str) -> str:
    """A running job's `qstat -f -xml -r` entry in one queue instance: `slots` slots
    there, h_rt `limit_h` hours of which `left_h` are left, its other hard requests."""
    start = (NOW + timedelta(hours=left_h - limit_h)).strftime("%Y-%m-%dT%H:%M:%S")
    reqs = "".join(f'<hard_request name="{k}" resource_contribution="0.000000">{v}'
                   "</hard_request>" for k, v in {"h_rt": str(limit_h * H), **asks}.items())
    return (f'<job_list state="running"><JB_job_number>{jid}</JB_job_number>'
            f"<JB_name>j{jid}</JB_name><JB_owner>bob</JB_owner><state>r</state>"
            f"<JAT_start_time>{start}</JAT_start_time><slots>{slots}</slots>{reqs}"
            "</job_list>")


def hestia(queues: dict[str, tuple[list[str], str]],
           jobs: dict[tuple[str, str], list[str]] | None = None,
           groups: str = "", rules: dict[str, str] | None = None,
           hc: dict[str, dict[str, str]] | None = None):
    """A Grid Engine site of three 16-slot hosts (s1-s3). `queues`: each queue's hosts and
    `qconf -sq` lines beyond its name and h_rt (24 h), e.g. its complex_values; `jobs`:
    the running jobs' entries in each (queue, host) instance; `groups`: the host groups
    as the snapshot's `qconf -shgrp_resolved` loop prints them; `rules`: the PEs and their
    allocation_rule; `hc`: each host's host consumables left, as `qhost -F` prints them."""
    from datetime import timezone

    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.dialects.sge_commands import SgeCommands
    jobs = jobs or {}
    slots = {k: sum(int(x) for j in js for x in re.findall(r"<slots>(\d+)</slots>", j))
             for k, js in jobs.items()}
    used = {h: sum(n for (_, host), n in slots.items() if host == h)
            for h in ("s1", "s2", "s3")}
    inst = "".join(
        f"<Queue-List><name>{q}@{h}</name><qtype>BIP</qtype><slots_used>"
        f"{slots.get((q, h), 0)}</slots_used><slots_resv>0</slots_resv><slots_total>16"
        "</slots_total><load_avg>0.5</load_avg><arch>lx-amd64</arch>"
        f"{''.join(jobs.get((q, h), []))}</Queue-List>"
        for q, (hosts, _) in queues.items() for h in hosts)
    qstat = f"<?xml version='1.0'?><job_info><queue_info>{inst}</queue_info>" \
        "<job_info></job_info></job_info>"
    qhost = "<?xml version='1.0'?><qhost><host name='global'></host>" + "".join(
        f"<host name='{h}'><hostvalue name='arch_string'>lx-amd64</hostvalue>"
        "<hostvalue name='num_proc'>16</hostvalue><hostvalue name='load_avg'>0.5"
        "</hostvalue><hostvalue name='mem_total'>64.0G</hostvalue><resourcevalue "
        f"name='slots' dominance='hf'>{16 - used[h]}</resourcevalue>"
        + "".join(f"<resourcevalue name='{k}' dominance='hc'>{x}</resourcevalue>"
                  for k, x in (hc or {}).get(h, {}).items()) + "</host>"
        for h in ("s1", "s2", "s3")) + "</qhost>"
    rules = rules or {"smp": "$pe_slots", "mpi": "8"}
    conf = "\n".join(f"qname {q}\nhostlist {' '.join(hosts)}\npe_list {' '.join(rules)}\n"
                     f"h_rt 24:00:00\n{lines}\n" for q, (hosts, lines) in queues.items())
    snap = SgeCommands(tz=timezone.utc).parse_snapshot(
        "hestia", {"queue": qstat, "hosts": qhost, "queues": conf, "complexes": QCONF_SC,
                   "hostgroups": groups, "pes": "\n".join(rules) + "\n",
                   "pe_rules": "".join(f"pe_name {p}\nallocation_rule {r}\n\n"
                                       for p, r in rules.items())})
    return SiteConfig(name="hestia", scheduler="sge"), snap.model_copy(
        update={"taken_at": NOW})


_TS = "#$ -pe smp 4\n#$ -l ts={}\n#$ -l h_rt=1:00:00"


def test_grid_engine_queue_consumables_are_per_queue_instance():
    # all.q on s1 and s2, complex_values tmpspace=100G with s2's own 40G (queue_conf(5):
    # a host's value replaces the default for its instance). bob's job in all.q@s1 holds
    # 8 slots x 10G (80G) until +2 h: 20G left there; s2 is empty (40G); s3 is in no
    # queue. Before, complex_values was not read: every case READY now
    site = hestia({"all.q": (["s1", "s2"], "complex_values tmpspace=100G,[s2=tmpspace=40G]")},
                  {("all.q", "s1"): [_ge_job("1", 8, 2, ts="10G")]})
    q = site[1].partitions[0]
    G = 1024**3
    assert q.queue_consumables == {"s1": {"tmpspace": 100 * G}, "s2": {"tmpspace": 40 * G}}
    assert q.queue_consumables_left == {"s1": {"tmpspace": 20 * G},
                                        "s2": {"tmpspace": 40 * G}}
    assert q.queue_consumables_held == {"s1": {"1": {"tmpspace": 80 * G}}}
    # 4 slots x 8G = 32G: s1's instance has 20G left, s2's 40G: now on s2
    v = only(run(_TS.format("8G"), site), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # 4 x 12G = 48G: s2's instance never has it (40G); s1's once bob's job ends (+2 h),
    # though s1 has 8 slots free and s2 16 now
    v = only(run(_TS.format("12G"), site), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # 4 x 30G = 120G: no instance of all.q has that much
    assert reasons(run(_TS.format("30G"), site), "hestia") == (
        "queue all.q: needs 120G of queue consumable tmpspace per queue instance (4 slots "
        "x 30G), the most an instance has is 100G")
    # 16 slots of PE mpi (8 a host: two hosts) x 8G: 64G on each host; s2's 40G is too
    # little, and all.q has no other host
    assert reasons(run("#$ -pe mpi 16\n#$ -l ts=8G\n#$ -l h_rt=1:00:00", site),
                   "hestia") == (
        "queue all.q: needs 64G of queue consumable tmpspace per queue instance (8 slots x "
        "8G), too little on s2 (40G)")


def test_grid_engine_queue_consumable_frees_with_the_job_holding_it():
    # s1 runs bob's job 1 in all.q (8 slots x 10G of the instance's 100G) until +2 h and
    # job 2 in long.q (4 slots, no tmpspace) until +5 h: 4 slots free. A job of 12 slots
    # x 4G (48G; s2's instance has 40G) waits for all.q@s1's tmpspace, which job 1 gives
    # back at +2 h with its 8 slots: 12 free then. Held until the host's last job (job 2,
    # +5 h), as a host consumable is, its 4 free slots would wait for +5 h too
    site = hestia({"all.q": (["s1", "s2"], "complex_values tmpspace=100G,[s2=tmpspace=40G]"),
                   "long.q": (["s1"], "")},
                  {("all.q", "s1"): [_ge_job("1", 8, 2, ts="10G")],
                   ("long.q", "s1"): [_ge_job("2", 4, 5, limit_h=8)]})
    job = "#$ -pe smp 12\n#$ -l ts=4G\n#$ -l h_rt=1:00:00\n#$ -q all.q"
    v = only(run(job, site), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def test_grid_engine_queue_consumable_a_queue_lacks_keeps_the_job_out_of_it():
    # lic (a JOB consumable) is a queue consumable of lic.q alone (s2, 2 licences); no host
    # or the cluster offers it: a job asking lic=1 cannot run in all.q (Grid Engine: the
    # instance does not offer the attribute asked). lic.q's instance on s2 holds bob's
    # job (1 licence, until +3 h): 1 left. Before: all.q (s1 free) READY now
    site = hestia({"all.q": (["s1"], ""), "lic.q": (["s2"], "complex_values lic=2")},
                  {("lic.q", "s2"): [_ge_job("1", 2, 3, lic="1")]})
    job = "#$ -pe smp 4\n#$ -l lic={}\n#$ -l h_rt=1:00:00"
    v = only(run(job.format(1), site), "hestia", "lic.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "queue all.q: offers no lic (a queue consumable of lic.q)" in v.notes
    # 2 licences: lic.q once bob's job ends (+3 h)
    v = only(run(job.format(2), site), "hestia", "lic.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    # 3: no instance has that many (JOB: once, not x 4 slots)
    assert reasons(run(job.format(3), site), "hestia") == (
        "queue all.q: offers no lic (a queue consumable of lic.q) | queue lic.q: needs 3 "
        "of queue consumable lic per queue instance (once a job), the most an instance "
        "has is 2")


def test_grid_engine_queue_consumable_values_of_host_groups():
    # complex_values NONE,[@big=tmpspace=200G]: the instances on @big's hosts (s2, as
    # `qconf -shgrp_resolved @big` says) have 200G, the others none of it: a job of 4 x
    # 40G (160G) runs on s2 only; bob's 16 slots there until +1 h. Without the host
    # groups read, no instance would have it
    groups = "group_name @big\ns2\ngroup_name @all\ns1 s2\n"
    site = hestia({"all.q": (["s1", "s2"], "complex_values NONE,[@big=tmpspace=200G]")},
                  {("all.q", "s2"): [_ge_job("1", 16, 1)]}, groups=groups)
    assert site[1].partitions[0].queue_consumables == {"s2": {"tmpspace": 200 * 1024**3}}
    v = only(run(_TS.format("40G"), site), "hestia", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    # a host's own value over its group's: s2's 100G
    site = hestia({"all.q": (["s1", "s2"], "complex_values NONE,[@big=tmpspace=200G],"
                                           "[s2=tmpspace=100G]")}, groups=groups)
    assert reasons(run(_TS.format("40G"), site), "hestia") == (
        "queue all.q: needs 160G of queue consumable tmpspace per queue instance (4 slots "
        "x 40G), the most an instance has is 100G")


# --------------------------------------------------------------- Grid Engine -masterq

def _mq(jobs=None):
    """hestia: master.q on s1, compute.q on s2 and s3, both offering PE mpi (8 slots a
    host)."""
    return hestia({"master.q": (["s1"], ""), "compute.q": (["s2", "s3"], "")}, jobs,
                  rules={"mpi": "8"})


_MPI = "#$ -pe mpi {}\n#$ -masterq master.q\n#$ -l h_rt=1:00:00"


def test_grid_engine_masterq_slots_go_to_the_other_queues_of_the_pe():
    # qsub(1) -masterq binds the master task's queue only; the scheduler gives the other
    # slots any queue instance that offers the PE (and is in -q, where given). 24 slots,
    # 8 a host: the master's 8 on s1 (master.q), 16 on s2 and s3 (compute.q). Before, the
    # whole job was placed in master.q: "needs 3 nodes, partition master.q has only 1"
    v = only(run(_MPI.format(24), _mq()), "hestia", "master.q,compute.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert "-masterq master.q: its master task in master.q (on s1), its other slots in any " \
        "of master.q, compute.q (the queues offering parallel environment 'mpi'): " \
        "submitted with -q master.q,compute.q" in v.notes
    # 32 slots: 4 hosts, the site has 3
    assert "needs 4 hosts" in reasons(run(_MPI.format(32), _mq()), "hestia")


def test_grid_engine_masterq_the_master_host_must_find_room():
    # s1 (master.q's only host) runs bob's 12 slots until +2 h: 4 free, less than the
    # master's 8. 16 slots need 2 hosts: s2 and s3 are free now, but one of the two must
    # be s1 (the master task's): +2 h. Placed as one queue without the master's host
    # it would start now
    site = _mq({("master.q", "s1"): [_ge_job("1", 12, 2)]})
    v = only(run(_MPI.format(16), site), "hestia", "master.q,compute.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert any(n.startswith("queue master.q,compute.q: a host of its master queue finds "
                            "room with the others it asks at +2:00:00") for n in v.notes)


def test_grid_engine_masterq_and_the_q_list():
    # sge_select_queue: every queue instance of the job, the master's too, must be in its
    # hard -q list. -q compute.q with -masterq master.q: the master task has no queue
    # (qsub takes it, the job never starts): refused, said
    p = run(_MPI.format(16) + "\n#$ -q compute.q", _mq())
    assert reasons(p, "hestia") == (
        "-masterq master.q: none of its queues (master.q) is in the job's -q list "
        "(compute.q): Grid Engine puts every slot, the master task's too, in a queue -q "
        "names")
    # -q naming both: as without -q
    v = only(run(_MPI.format(16) + "\n#$ -q master.q,compute.q", _mq()), "hestia",
             "master.q,compute.q")
    assert v.estimated_start == NOW
    # -q master.q alone: every slot in master.q, whose one host cannot hold 16 of 8 a host
    assert "needs 2 hosts" in reasons(run(_MPI.format(16) + "\n#$ -q master.q", _mq()),
                                      "hestia")


def test_grid_engine_masterq_job_is_submitted_to_the_queues_placed():
    # the placement's queue becomes the job's -q list: the master and compute queues,
    # with -masterq kept as written
    from diamond_jupyter.federation import Federation
    spec = Federation.parse("#!/bin/bash\n" + _MPI.format(24) + "\n./app\n")
    spec = spec.model_copy(update={"queue": "master.q,compute.q"})
    script = get_script_dialect("sge").render_script(spec).script.splitlines()
    assert "#$ -q master.q,compute.q" in script and "#$ -masterq master.q" in script


def test_grid_engine_masterq_queue_consumables_of_the_master_queue():
    # master.q's instance on s1 has 10G of tmpspace, compute.q's 100G each: a job of 16
    # slots (8 a host) asking 4G a slot needs 32G on each host, the master's too: s1
    # can never hold its share. 1G a slot (8G): now
    site = hestia({"master.q": (["s1"], "complex_values tmpspace=10G"),
                   "compute.q": (["s2", "s3"], "complex_values tmpspace=100G")},
                  rules={"mpi": "8"})
    job = _MPI.format(16) + "\n#$ -l ts={}"
    assert reasons(run(job.format("4G"), site), "hestia") == (
        "-masterq: no host of its master queue (s1) can run the master task's share of the "
        "job (8 slots); queue master.q,compute.q: needs 32G of queue consumable tmpspace "
        "per queue instance (8 slots x 4G), too little on s1 (10G)")
    v = only(run(job.format("1G"), site), "hestia", "master.q,compute.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_grid_engine_masterq_job_consumable_on_the_master_host():
    # lic is a JOB consumable (taken once, on the master task's host: sge_complex(5)), a
    # host consumable of s2 (2) alone. With -masterq master.q the master task runs on s1,
    # which has none: the job can never start. Before, any host holding it was enough
    hc = {"s2": {"lic": "2"}}
    site = hestia({"master.q": (["s1"], ""), "compute.q": (["s2", "s3"], "")},
                  rules={"mpi": "8"}, hc=hc)
    assert reasons(run(_MPI.format(16) + "\n#$ -l lic=1", site), "hestia") == (
        "-masterq: its master task's host takes 1 of host consumable lic (once a job), the "
        "most a host of its master queue has is 0")
    # s1 with a licence: it starts now
    site = hestia({"master.q": (["s1"], ""), "compute.q": (["s2", "s3"], "")},
                  rules={"mpi": "8"}, hc={"s1": {"lic": "1"}, **hc})
    v = only(run(_MPI.format(16) + "\n#$ -l lic=1", site), "hestia", "master.q,compute.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
