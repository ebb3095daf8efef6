"""Placement cases worked by hand, twenty-fifth sweep. First a federation of five schedulers
read whole from their recorded outputs (tests/fixtures/outputs: Slurm's capture, PBS Pro's
vbox, LSF, flux and Grid Engine): GPUs asked by type and count in each dialect, memory a
node against memory a CPU, time limits, queues named in one dialect, throttled arrays.
Then lyra (test_placement_cases24's Slurm center) under QOS limits its user's and
everyone's running jobs have used up, maintenance reservations ahead of and around a job,
nodes DRAINED, DOWN and MIXED, a probe whose queue was not read or that did not answer,
and jobs asking more than any node has. Each case asserts the decision and what `place
--explain` (Placement.explain) tells the user."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from outputs_helpers import flux, lsf, pbs, sge, slurm
from test_placement_cases import NOW, hours, reservation, run
from test_placement_cases24 import PARTITIONS, job, node_lines, running

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import QOS_FIELDS
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import SiteSnapshot
from diamond_jupyter.placement import Placement, place

OUT = Path(__file__).parent / "fixtures" / "outputs"
# between the capture's jobs starting (17:18-17:20) and the first of them ending
RECORDED_AT = datetime(2026, 11, 29, 17, 25, tzinfo=timezone.utc)


def _read(kind: str, name: str) -> str:
    return (OUT / kind / name).read_text()


def recorded() -> list[tuple[SiteConfig, SiteSnapshot]]:
    """The five sites as their dialects read the recorded outputs:
    capture (Slurm): c1, c2 8 CPUs 16000 MB; g1 16 CPUs 64000 MB 2 GPUs (1 in use);
      debug (default, 1 h, 2 nodes), long (2 days, accounts physics, chem), gpu
    vbox (PBS Pro): node1 8 CPUs 15884 MB (queue workq, all in use), node2 32 CPUs 128000 MB
      4 A100 and node3 (down, offline), of no queue; workq (1 day), gpu (NOT_STARTED)
    lsf: hostA (closed), hostB 16 CPUs 4 GPUs, hostC (unavail); normal 12 h, short 1 h,
      night (INACTIVE)
    flux: node0-node3 (node1 4 GPUs, node3 down), no memory reported; batch 8 h, debug DOWN
    sge: dn1, dn2 8 CPUs 24166 MB; all.q (1 day), short.q (30 min)."""
    recorded = {  # site: (scheduler, its dialect, the recorded output each query parses)
        "capture": ("slurm", slurm, {"partitions": "scontrol_partition.txt",
                                     "nodes": "scontrol_node.txt",
                                     "queue": "squeue_queue.txt"}),
        "vbox": ("pbs", pbs, {"nodes": "pbsnodes_json.json", "queues": "qstat_Qf_json.json",
                              "server": "qstat_Bf_json.json", "queue": "qstat_f_json.json"}),
        "lsf": ("lsf", lsf, {"hosts": "bhosts_json.json", "lshosts": "lshosts_json.json",
                             "queues": "bqueues_json.json", "queue": "bjobs_json.json"}),
        "flux": ("flux", flux, {"resources": "flux_resource_list.txt",
                                "queues": "flux_queue_list.txt",
                                "queue": "flux_jobs_json.json"}),
        "sge": ("sge", sge, {"pes": "qconf_spl.txt", "queues": "qconf_sq_all.txt",
                             "hosts": "qhost_xml.xml", "queue": "qstat_f_xml.xml"}),
    }
    sites = [(name, kind, dialect.parse_snapshot(
                  name, {query: _read(kind, file) for query, file in files.items()}))
             for name, (kind, dialect, files) in recorded.items()]
    return [(SiteConfig(name=name, scheduler=kind),
             snap.model_copy(update={"taken_at": RECORDED_AT})) for name, kind, snap in sites]


def federated(script: str, sites: list[tuple[SiteConfig, SiteSnapshot]] | None = None
              ) -> tuple[Placement, str]:
    """The placement of `script` over the five recorded sites, and its explanation."""
    spec = Federation.parse("#!/bin/bash\n" + script.strip() + "\n./app\n")
    p = place(spec, sites or recorded(), now=RECORDED_AT)
    return p, p.explain()


def feasible(p: Placement) -> set[str]:
    return {v.site for v in p.ranked if v.feasible}


def row(said: str, site: str) -> str:
    """The explanation's table row of `site`, its spaces squeezed."""
    line = next(x for x in said.splitlines() if x.split()[:2] in (["*", site], [site]) or
                x.split()[:1] == [site])
    return " ".join(line.split())


def test_the_five_schedulers_are_read_from_their_recorded_outputs():
    """The vnodes of vbox that name no queue (node2, node3) are the gpu queue's, the one
    queue no vnode names (PBS Pro: a queue without vnodes runs on the vnodes without a
    queue); before, it had none."""
    sites = {cfg.name: (cfg.scheduler, snap) for cfg, snap in recorded()}
    assert {n: (k, len(s.nodes)) for n, (k, s) in sites.items()} == {
        "capture": ("slurm", 3), "vbox": ("pbs", 3), "lsf": ("lsf", 3), "flux": ("flux", 4),
        "sge": ("sge", 2)}
    queues = {p.name: p.nodes for p in sites["vbox"][1].partitions}
    assert queues == {"workq": [], "gpu": ["node2", "node3"], "route": []}


def test_a_small_cpu_job_may_run_under_every_scheduler():
    """capture's debug has the CPUs, but job 17 (16 CPUs, pending) is due there at 17:40:54
    by squeue --start: an hour would delay it, so the job waits behind it."""
    p, said = federated("#SBATCH -c 4 -t 1:00:00")
    assert feasible(p) == {"capture", "vbox", "lsf", "flux", "sge"}, said
    assert p.choice == "lsf" and row(said, "lsf").startswith("* lsf READY normal +0:00:00")
    assert row(said, "capture").startswith("capture BUSY debug +0:13:42")


def test_a100s_asked_by_gres_are_refused_saying_what_each_site_has():
    """vbox's A100s are on node2, of queue gpu, which is not started: the refusal names
    that (before: also "needs 1 vnode, largest queue has 0", as if gpu had no vnode)."""
    p, said = federated("#SBATCH --gres=gpu:a100:2 -t 1:00:00")
    assert p.choice is None and feasible(p) == set()
    assert "3 sites INCOMPATIBLE no GPU of type 'a100' (site has: none) (capture, lsf, flux)" \
        in said
    assert p.verdict("vbox").reasons == [
        "queue workq: no GPU of type 'a100' (its vnodes have: none); no GPUs on any node",
        "queue 'gpu' is not started: takes jobs, runs none until started"]
    assert "largest queue has 0" not in said


def test_pbs_a100_on_a_vnode_of_no_queue_runs_once_the_gpu_queue_is_started():
    """The same job in PBS words, once vbox's gpu queue is started: node2 runs it now
    (before: refused, "needs 1 vnode, largest queue has 0")."""
    sites = recorded()
    cfg, snap = sites[1]
    started = [q.model_copy(update={"state": "UP"}) if q.name == "gpu" else q
               for q in snap.partitions]
    sites[1] = (cfg, snap.model_copy(update={"partitions": started}))
    p, said = federated("#PBS -l select=1:ncpus=4:ngpus=1:gpu_model=a100\n"
                        "#PBS -l walltime=1:00:00", sites)
    assert feasible(p) == {"vbox"} and p.choice == "vbox", said
    assert row(said, "vbox").startswith("* vbox READY gpu +0:00:00")


def test_four_gpus_in_one_pbs_chunk_go_where_a_host_has_four():
    p, said = federated("#PBS -l select=1:ncpus=2:ngpus=4\n#PBS -l walltime=2:00:00")
    assert feasible(p) == {"lsf", "flux"} and p.choice == "lsf", said
    assert row(said, "capture") == "capture INCOMPATIBLE needs 4 GPUs per node, largest node " \
        "has 2"
    assert row(said, "sge") == "sge INCOMPATIBLE no GPUs on any node"


def test_an_lsf_gpu_count_is_weighed_on_every_site():
    p, said = federated("#BSUB -gpu num=3\n#BSUB -W 1:00")
    assert feasible(p) == {"lsf", "flux"}, said
    assert row(said, "capture") == "capture INCOMPATIBLE needs 3 GPUs per node, largest node " \
        "has 2"


def test_a_flux_gpu_job_waits_for_the_busy_gpu_on_slurm():
    """g1 has one GPU free of 2 but its CPUs' partition debug is full until a job ends."""
    p, said = federated("#FLUX: -N1 -n2 -g1 -t 30m")
    assert feasible(p) == {"lsf", "flux", "capture"}, said
    assert p.verdict("capture").verdict == "BUSY"
    assert row(said, "sge") == "sge INCOMPATIBLE no GPUs on any node"


def test_five_gpus_on_a_node_is_more_than_any_site_has_said_in_each_ones_words():
    p, said = federated("#SBATCH --gres=gpu:5 -t 1:00:00")
    assert str(p.no_choice()) == (
        "no site can run this job: capture: needs 5 GPUs per node, largest node has 2 | "
        "vbox: needs 5 GPUs per vnode, largest vnode has 4 | lsf: needs 5 GPUs per host, "
        "largest host has 4 | flux: needs 5 GPUs per node, largest node has 4 | sge: no GPUs "
        "on any node")


def test_memory_flux_does_not_report_is_said_not_checked():
    """flux resource list shows no memory: 200 GB runs there as far as is known, and the
    user is told it was not checked (before: READY, not a word of it)."""
    p, said = federated("#SBATCH --mem=200G -t 1:00:00")
    assert feasible(p) == {"flux", "lsf"}, said
    assert ("  flux not checked: the job's memory, 204800 MB a node: node0, node1, node2, "
            "node3 report no memory (flux resource list shows none), so it may not fit "
            "there") in said.splitlines()
    assert row(said, "sge") == "sge INCOMPATIBLE needs 204800 MB memory per host, largest " \
        "host has 24166 MB"
    assert not any("memory" in n for n in p.verdict("lsf").not_checked)


def test_memory_a_cpu_counts_for_the_whole_node():
    """4 CPUs x 4 GB = 16384 MB a node, above vbox's 15884 MB; 15 GB a node fits it."""
    p, said = federated("#SBATCH -c 4 --mem-per-cpu=4G -t 1:00:00")
    assert "vbox" not in feasible(p)
    assert p.verdict("vbox").reasons == [
        "queue workq: needs 16384 MB memory per vnode, largest vnode has 15884 MB",
        "queue 'gpu' is not started: takes jobs, runs none until started"]
    p, said = federated("#SBATCH -c 4 --mem=15G -t 1:00:00")
    assert "vbox" in feasible(p), said


def test_ten_hours_is_above_the_flux_queues():
    p, said = federated("#SBATCH -t 10:00:00")
    assert "flux" not in feasible(p) and p.choice == "lsf"
    assert row(said, "flux") == ("flux INCOMPATIBLE walltime 10:00:00 above every queue's "
                                 "TLIMIT here (the longest: batch, 8:00:00); queue 'debug' is "
                                 "DOWN")


def test_thirteen_hours_lsf_names_the_inactive_queue_that_would_take_it():
    p, said = federated("#SBATCH -t 13:00:00")
    assert feasible(p) == {"sge", "vbox", "capture"} and p.choice == "sge", said
    assert row(said, "lsf") == (
        "lsf INCOMPATIBLE walltime 13:00:00 above the RUNLIMIT of every queue that is up (the "
        "longest: normal, 12:00:00); queue night (no RUNLIMIT) would take it but is INACTIVE")


@pytest.mark.parametrize("script, site, queue, others_say", [
    ("#BSUB -n 4\n#BSUB -W 30\n#BSUB -q short", "lsf", "short",
     "queue 'short' not found (site has: workq, gpu, route)"),
    ("#$ -pe smp 4\n#$ -l h_rt=0:20:00\n#$ -q short.q", "sge", "short.q",
     "queue 'short.q' not found (site has: workq, gpu, route)"),
])
def test_a_queue_named_in_one_dialect_binds_the_job_to_the_site_that_has_it(
        script, site, queue, others_say):
    p, said = federated(script)
    assert feasible(p) == {site} and p.verdict(site).partition == queue, said
    assert p.verdict("vbox").reasons == [others_say]


def test_a_throttled_array_says_how_many_rounds_it_takes():
    """100 tasks, 4 at a time: START and FINISH are the first task's, and the explanation
    says so, with the 25 rounds (before: FINISH +1:00:00 and not a word of the rest)."""
    p, said = federated("#SBATCH -t 1:00:00 --array=0-99%4")
    assert said.splitlines()[0] == (
        "policy diamond; choice lsf; now 2026-11-29T17:25:00+00:00; needs array of 100 tasks "
        "(START and FINISH are its first task's; %4: 4 at a time, 25 rounds, all done at "
        "least 1-01:00:00 after it starts); runtime: the walltime (nothing to learn from)")


@pytest.mark.parametrize("array, said", [
    ("1-5", "array of 5 tasks (START and FINISH are its first task's)"),
    ("1-5%8", "array of 5 tasks (START and FINISH are its first task's)"),  # no limit
    ("1-9:2%2", "array of 5 tasks (START and FINISH are its first task's; %2: 2 at a time, "
     "3 rounds, all done at least 3:00:00 after it starts)"),
    ("3", None),  # one task: the job itself
])
def test_what_an_array_is_said_to_be(array, said):
    p, _ = federated(f"#SBATCH -t 1:00:00 --array={array}")
    assert [n for n in p.needs if n.startswith("array")] == ([said] if said else [])


# ---- lyra: QOS limits, reservations, node states, stale probes, too big -------------------

def qos(name: str, **limits: str) -> str:
    """One `sacctmgr -nP show qos format=QOS_FIELDS` line, the limits not given empty."""
    return "|".join(limits.get(f, name if f == "Name" else "")
                    for f in QOS_FIELDS.split(",")) + "\n"


def lyra(*jobs: tuple, states: dict[str, str] | None = None, qos_line: str | None = None,
         reservations: str | None = None) -> tuple[SiteConfig, SiteSnapshot]:
    """lyra (test_placement_cases24) probed as alice, its running `jobs` (`job()`) all under
    QOS normal of account proj (squeue -O's QOS and Account), with QOS normal's limits
    (`qos_line`) and `scontrol show reservation` (`reservations`) as given."""
    alloc: dict[str, int] = {}
    galloc: dict[str, int] = {}
    amem: dict[str, int] = {}
    for _, node, cpus, _, more in jobs:
        alloc[node] = alloc.get(node, 0) + cpus
        galloc[node] = galloc.get(node, 0) + more.get("gpus", 0)
        amem[node] = amem.get(node, 0) + cpus * 1000
    outputs = {
        "partitions": PARTITIONS, "nodes": node_lines(alloc, galloc, amem, states or {}),
        "queue": "\n".join(running(j, n, c, h, **m) for j, n, c, h, m in jobs),
        "queue_qos": "\n".join(f"{j[0]}|normal|proj|OK" for j in jobs),
        "reservations": reservations or "No reservations in the system\n",
        "qos": qos_line or qos("normal"), "assoc": "user|alice\nalice|proj||normal|normal\n"}
    snap = slurm.parse_snapshot("lyra", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="lyra", metadata={"architecture": "x86_64"}), snap


def on_lyra(script: str, site: tuple[SiteConfig, SiteSnapshot] | None = None):
    """lyra's verdict on `script`, and the explanation."""
    p = run(script, site or lyra())
    v = p.verdict("lyra")
    assert v is not None
    return v, p.explain()


def waits(said: str) -> list[str]:
    return [x.removeprefix("  lyra waits: ") for x in said.splitlines()
            if x.startswith("  lyra waits: ")]


def test_max_tres_per_user_used_by_your_running_jobs_makes_the_job_wait():
    """48 of the 64 CPUs MaxTRESPerUser gives alice are held by her job ending at +3 h: 32
    more wait for it."""
    v, said = on_lyra("#SBATCH -c 32 -t 2:00:00",
                      lyra(job("1", "c01", 48, 3, user="alice"),
                           qos_line=qos("normal", MaxTRESPerUser="cpu=64")))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3)), said
    assert waits(said) == [
        "QOS normal's MaxTRESPerUser cpu=64 is in use: your running jobs under it hold 48 "
        "CPUs, the job needs 32: it waits until enough of them end (QOSMaxCpuPerUserLimit)"]


def test_max_tres_per_user_is_not_used_by_other_users_jobs():
    v, said = on_lyra("#SBATCH -c 32 -t 2:00:00",
                      lyra(job("1", "c01", 48, 3, user="bob"),
                           qos_line=qos("normal", MaxTRESPerUser="cpu=64")))
    assert (v.verdict, v.estimated_start) == ("READY", NOW), said
    assert waits(said) == []


def test_a_job_alone_above_max_tres_per_user_is_refused_first_for_it():
    v, said = on_lyra("#SBATCH -c 96 -t 2:00:00",
                      lyra(qos_line=qos("normal", MaxTRESPerUser="cpu=64")))
    assert not v.feasible
    assert v.reasons[0] == ("needs 96 CPUs in all, the job's QOS normal allows 64 "
                            "(MaxTRESPerUser cpu=64)")
    assert "  lyra refused: needs 96 CPUs in all, the job's QOS normal allows 64 " \
        "(MaxTRESPerUser cpu=64)" in said.splitlines()


def test_max_jobs_per_user_reached_waits_for_the_first_of_yours_to_end():
    v, said = on_lyra("#SBATCH -c 4 -t 2:00:00",
                      lyra(job("1", "c01", 4, 3, user="alice"),
                           job("2", "c02", 4, 1, user="alice"),
                           qos_line=qos("normal", MaxJobsPerUser="2")))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1)), said
    assert waits(said) == ["QOS normal's MaxJobsPerUser is 2 and 2 of your jobs run under it: "
                           "it waits until one of them ends (QOSMaxJobsPerUserLimit)"]


def test_grp_tres_gpus_held_by_everyones_jobs_make_a_gpu_job_wait():
    """GrpTRES gres/gpu=8: bob's jobs hold all 8 (A100s until +3 h, H100s until +5 h),
    though two GPU nodes stand idle."""
    v, said = on_lyra("#SBATCH --gres=gpu:4 -t 2:00:00",
                      lyra(job("1", "g01", 8, 3, partition="gpu", gpus=4, gtype="a100"),
                           job("2", "h01", 8, 5, partition="gpu", gpus=4, gtype="h100"),
                           qos_line=qos("normal", GrpTRES="gres/gpu=8")))
    assert (v.verdict, v.partition, v.estimated_start) == ("BUSY", "gpu", hours(3)), said
    assert waits(said) == [
        "QOS normal's GrpTRES gres/gpu=8 is in use: running jobs under it hold 8 GPUs, the "
        "job needs 4: it waits until enough of them end (QOSGrpGRES)"]


def test_a_job_alone_above_grp_tres_is_refused():
    v, _ = on_lyra("#SBATCH --gres=gpu:4 -N 3 -t 2:00:00",
                   lyra(qos_line=qos("normal", GrpTRES="gres/gpu=8")))
    assert not v.feasible
    assert v.reasons[0] == ("needs 12 GPUs in all, the job's QOS normal allows 8 (GrpTRES "
                            "gres/gpu=8)")


def _maintenance(start_h: float, end_h: float) -> str:
    return reservation("maint", "m[01-02]", start_h, end_h, flags="MAINT,SPEC_NODES",
                       node_count=2, cores=128)


def test_a_job_that_would_run_into_a_maintenance_waits_and_the_explanation_says_why():
    """The bigmem nodes go into maintenance from +4 h to +10 h: a 12-hour job starts after
    it, and `place --explain` names the reservation as what it waits for (before: BUSY
    +10:00:00 and no word why, the reason kept in the notes)."""
    v, said = on_lyra("#SBATCH -p bigmem --mem=900G -t 12:00:00",
                      lyra(reservations=_maintenance(4, 10)))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(10)), said
    assert waits(said) == [
        "reservation maint (MAINT,SPEC_NODES) takes m[01-02] from 2026-03-01 13:00 to "
        "2026-03-01 19:00: the job, of a time limit of 12:00:00, would run into it, so Slurm "
        "starts it there only after it ends"]


def test_a_job_that_ends_before_the_maintenance_runs_now():
    v, said = on_lyra("#SBATCH -p bigmem --mem=900G -t 2:00:00",
                      lyra(reservations=_maintenance(4, 10)))
    assert (v.verdict, v.estimated_start) == ("READY", NOW), said
    assert waits(said) == []


def test_a_maintenance_under_way_holds_the_job_until_it_ends():
    v, said = on_lyra("#SBATCH -p bigmem --mem=900G -t 2:00:00",
                      lyra(reservations=_maintenance(-1, 3),
                           states={"m01": "MAINT", "m02": "MAINT"}))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3)), said
    assert waits(said) == ["reservation maint (MAINT,SPEC_NODES) holds m[01-02] in maintenance "
                           "until 2026-03-01 12:00: it takes no job before then"]


def test_a_busy_job_with_no_reservation_on_its_nodes_is_not_said_to_wait_for_one():
    """The maintenance holds the bigmem nodes; a CPU job waiting for the full CPU nodes
    waits for them, not for it."""
    full = [job(str(i), f"c0{i}", 64, 2) for i in range(1, 5)]
    v, said = on_lyra("#SBATCH -p cpu -c 64 -t 2:00:00",
                      lyra(*full, reservations=_maintenance(1, 10)))
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2)), said
    assert waits(said) == []


def test_a_walltime_above_the_named_partitions_max_time_is_refused():
    v, said = on_lyra("#SBATCH -p legacy --gres=gpu:v100:1 -t 20:00:00")
    assert v.reasons == ["walltime 20:00:00 above partition legacy MaxTime 12:00:00"], said


def test_a_walltime_above_every_partition_names_the_longest():
    v, _ = on_lyra("#SBATCH -t 3-00:00:00")
    assert v.reasons == ["walltime 3-00:00:00 above every partition's MaxTime here (the "
                         "longest: cpu, 2-00:00:00)"]


def test_bigmem_nodes_draining_and_down_take_no_job():
    v, said = on_lyra("#SBATCH -p bigmem --mem=900G -t 2:00:00",
                      lyra(states={"m01": "DRAINING", "m02": "DOWN*"}))
    assert v.reasons == ["needs 1 node, partition bigmem has only 0 usable (others draining "
                         "m01; down m02)"], said


def test_one_bigmem_node_drained_the_other_mixed_runs_on_the_mixed_one():
    v, said = on_lyra("#SBATCH -p bigmem --mem=900G -t 2:00:00",
                      lyra(states={"m01": "DRAINED", "m02": "MIXED"}))
    assert (v.verdict, v.estimated_start) == ("READY", NOW), said


def test_h100_nodes_down_and_drained_leave_no_partition_for_an_h100_job():
    v, _ = on_lyra("#SBATCH --gres=gpu:h100:1 -t 2:00:00",
                   lyra(states={"h01": "DOWN", "h02": "DRAINED"}))
    assert not v.feasible
    assert "needs 1 node, partition gpu has only 0 usable (others down h01; drained h02)" \
        in v.reasons


@pytest.mark.parametrize("cpus, verdict, start", [(8, "READY", 0), (16, "BUSY", 3)])
def test_mixed_nodes_take_what_fits_in_their_free_cpus(cpus, verdict, start):
    """Each CPU node has 8 of 64 CPUs free until +3 h."""
    site = lyra(*(job(str(i), f"c0{i}", 56, 3) for i in range(1, 5)))
    v, said = on_lyra(f"#SBATCH -p cpu -c {cpus} -t 2:00:00", site)
    assert (v.verdict, v.estimated_start) == (verdict, hours(start)), said


def test_a_probe_whose_queue_was_not_read_gives_no_start():
    cfg, snap = lyra()
    stale = snap.model_copy(update={"jobs": [], "queue_error": "squeue timed out after 30 s"})
    v, said = on_lyra("#SBATCH -p cpu -c 4 -t 2:00:00", (cfg, stale))
    assert v.verdict == "BUSY" and v.estimated_start is None
    assert row(said, "lyra") == ("* lyra BUSY queue unknown, so its start cannot be estimated "
                                 "(squeue timed out after 30 s)")


def test_an_unreachable_site_says_what_its_last_read_state_says_of_the_job():
    cfg, snap = lyra()
    gone = snap.model_copy(update={"reachable": False,
                                   "error": "lyra: ssh: Connection timed out"})
    v, _ = on_lyra("#SBATCH -c 128 -t 2:00:00", (cfg, gone))
    assert v.verdict == "UNREACHABLE"
    assert v.reasons == ["site unreachable: ssh: Connection timed out",
                         "as last read, it could not run the job either: needs 128 CPUs per "
                         "node, largest node has 96"]


@pytest.mark.parametrize("script, reason", [
    ("-c 128", "needs 128 CPUs per node, largest node has 96"),
    ("--mem=1100G", "needs 1126400 MB memory per node, largest node has 1031000 MB"),
    ("-p bigmem --mem=1010000M", "partition bigmem: needs 1010000 MB memory per node, its "
     "MaxMemPerNode is 1000000 MB"),
    ("-p bigmem -c 64 --mem-per-cpu=20G", "needs 1310720 MB memory per node, largest node has "
     "1031000 MB"),
])
def test_more_than_any_node_has_is_refused_naming_the_largest(script, reason):
    v, _ = on_lyra(f"#SBATCH {script} -t 2:00:00")
    assert v.reasons == [reason]


def test_memory_a_cpu_under_max_mem_per_node_fits_bigmem():
    """64 x 15 GB = 983040 MB: under MaxMemPerNode 1000000."""
    v, said = on_lyra("#SBATCH -p bigmem -c 64 --mem-per-cpu=15G -t 2:00:00")
    assert (v.verdict, v.partition) == ("READY", "bigmem"), said


def test_a_throttled_array_on_busy_nodes_says_its_rounds():
    """Ten tasks of a whole node, two at a time: five rounds of two hours."""
    site = lyra(job("1", "c01", 64, 1), job("2", "c02", 64, 1), job("3", "c03", 64, 5))
    p = run("#SBATCH -p cpu -c 64 -t 2:00:00 --array=0-9%2", site)
    assert p.needs == ["array of 10 tasks (START and FINISH are its first task's; %2: 2 at a "
                       "time, 5 rounds, all done at least 10:00:00 after it starts)"]
    assert p.verdict("lyra").estimated_finish == NOW + timedelta(hours=2)
