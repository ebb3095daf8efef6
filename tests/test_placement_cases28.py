"""Placement cases, twenty-eighth sweep: vega, a Slurm 24.05 center read whole from what its
commands print (`scontrol -o show partition/node`, `squeue`, `sacctmgr`, `sprio`), in
situations the earlier sweeps did not meet: a partition of OverSubscribe=FORCE beside a full
one, PriorityTier between overlapping partitions, a preemptible partition's nodes, MaxNodes
and MaxTime refusing, nodes DRAIN, DOWN*, FUTURE and POWERED_DOWN, GPU counts that differ
from node to node, jobs ahead held by a dependency or a begin time, a QOS GrpTRES used up,
fair share, a partition INACTIVE, nodes of three sizes; then a Grid Engine cell beside it.

vega (every node's CPUs, memory, GPUs; each partition's nodes and limits):
  a01-a04  48 CPUs  192000 MB               batch, shared, standby
  b01-b02 128 CPUs  512000 MB               batch, standby
  g01-g02  64 CPUs  256000 MB 4 A100        gpu, standby
  g03      64 CPUs  256000 MB 2 A100        gpu, standby
  l01-l02 128 CPUs 2048000 MB               bigmem
  f01-f04  48 CPUs  192000 MB               future (State=INACTIVE)
  batch    default, 2 days, at most 4 nodes a job, PriorityTier 1
  shared   a01-a04, 12 h, OverSubscribe=FORCE:4 (up to 4 jobs on each CPU)
  gpu      1 day, at most 2 nodes, PriorityTier 10
  standby  4 h, PriorityTier 0, PreemptMode=REQUEUE (gpu's and batch's jobs preempt it)
  bigmem   1 day, 1 node a job
Each case's docstring works its answer out from these numbers."""

from __future__ import annotations

from datetime import timezone

from test_placement_cases import NOW, at, run
from test_placement_cases25 import recorded

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import SiteSnapshot
from diamond_jupyter.placement import Placement

slurm = SlurmCommands(tz=timezone.utc)
Site = tuple[SiteConfig, SiteSnapshot]

# name: (CPUs, MB, gres, partitions)
_KINDS = {"a": (48, 192000, "(null)", "batch,shared,standby"),
          "b": (128, 512000, "(null)", "batch,standby"),
          "g": (64, 256000, "gpu:a100:4(S:0-1)", "gpu,standby"),
          "l": (128, 2048000, "(null)", "bigmem"),
          "f": (48, 192000, "(null)", "future")}
NODES = ["a01", "a02", "a03", "a04", "b01", "b02", "g01", "g02", "g03", "l01", "l02",
         "f01", "f02", "f03", "f04"]


def _partition(name: str, nodes: str, max_time: str, *, default: str = "NO",
               max_nodes: str = "UNLIMITED", tier: int = 1, preempt: str = "OFF",
               oversubscribe: str = "NO", state: str = "UP", over_time: str = "NONE") -> str:
    """One partition as Slurm 24.05's `scontrol -o --all show partition` prints it."""
    words = {"PartitionName": name, "AllowGroups": "ALL", "AllowAccounts": "ALL",
             "AllowQos": "ALL", "AllocNodes": "ALL", "Default": default, "QoS": "N/A",
             "DefaultTime": "01:00:00", "DisableRootJobs": "NO", "ExclusiveUser": "NO",
             "ExclusiveTopo": "NO", "GraceTime": "0", "Hidden": "NO", "MaxNodes": max_nodes,
             "MaxTime": max_time, "MinNodes": "0", "LLN": "NO",
             "MaxCPUsPerNode": "UNLIMITED", "MaxCPUsPerSocket": "UNLIMITED", "Nodes": nodes,
             "PriorityJobFactor": "1", "PriorityTier": str(tier), "RootOnly": "NO",
             "ReqResv": "NO", "OverSubscribe": oversubscribe, "OverTimeLimit": over_time,
             "PreemptMode": preempt, "State": state, "TotalCPUs": "0", "TotalNodes": "0",
             "SelectTypeParameters": "NONE", "JobDefaults": "(null)",
             "DefMemPerCPU": "2000", "MaxMemPerNode": "UNLIMITED",
             "TRES": "cpu=0,mem=0,node=0,billing=0", "ResumeTimeout": "GLOBAL",
             "SuspendTimeout": "GLOBAL", "SuspendTime": "GLOBAL", "PowerDownOnIdle": "NO"}
    return " ".join(f"{k}={v}" for k, v in words.items())


def partitions(**changes: dict) -> str:
    """vega's partitions, each of `changes` (partition: {field: value}) applied."""
    kinds = {"batch": ("a[01-04],b[01-02]", "2-00:00:00",
                       dict(default="YES", max_nodes="4", tier=1)),
             "shared": ("a[01-04]", "12:00:00", dict(oversubscribe="FORCE:4", tier=1)),
             "gpu": ("g[01-03]", "1-00:00:00", dict(max_nodes="2", tier=10)),
             "standby": ("a[01-04],b[01-02],g[01-03]", "04:00:00",
                         dict(tier=0, preempt="REQUEUE")),
             "bigmem": ("l[01-02]", "1-00:00:00", dict(max_nodes="1")),
             "future": ("f[01-04]", "1-00:00:00", dict(state="INACTIVE"))}
    return "".join(_partition(name, nodes, limit, **{**more, **changes.get(name, {})}) + "\n"
                   for name, (nodes, limit, more) in kinds.items())


def _node(name: str, alloc: int, gpus_used: int, state: str) -> str:
    """One node as Slurm 24.05's `scontrol -o --all show node` prints it."""
    cpus, mem, gres, parts = _KINDS[name[0]]
    if name == "g03":
        gres = "gpu:a100:2(S:0)"
    words = {"NodeName": name, "Arch": "x86_64", "CoresPerSocket": str(cpus // 2),
             "CPUAlloc": str(alloc), "CPUEfctv": str(cpus), "CPUTot": str(cpus),
             "CPULoad": "0.01", "AvailableFeatures": name[0] + "node",
             "ActiveFeatures": name[0] + "node", "Gres": gres, "GresDrain": "N/A",
             "GresUsed": f"gpu:a100:{gpus_used}(IDX:N/A)" if gres != "(null)" else "gpu:0",
             "NodeAddr": name, "NodeHostName": name, "Version": "24.05.4",
             "OS": "Linux 5.14.0-503.el9.x86_64", "RealMemory": str(mem),
             "AllocMem": str(alloc * 2000), "FreeMem": "9000", "Sockets": "2", "Boards": "1",
             "State": state, "ThreadsPerCore": "1", "TmpDisk": "0", "Weight": "1",
             "Owner": "N/A", "MCS_label": "N/A", "Partitions": parts,
             "BootTime": "2026-02-20T08:00:00", "SlurmdStartTime": "2026-02-20T08:01:00",
             "LastBusyTime": "2026-03-01T08:00:00", "ResumeAfterTime": "None"}
    return " ".join(f"{k}={v}" for k, v in words.items())


def running(jid: str, nodes: str, cpus: int, left_h: float, *, partition: str = "batch",
            limit_h: int = 24, user: str = "bob", count: int = 1, gpus: int = 0) -> str:
    """A running job, `squeue -h -a -o SQUEUE_FIELDS`: `left_h` of its `limit_h` hours left."""
    begun, ran_s = left_h - limit_h, round((limit_h - left_h) * 3600)
    tres = f"gres/gpu:a100:{gpus}" if gpus else "N/A"
    return (f"{jid}|RUNNING|{at(begun)}|{at(left_h)}|{at(begun - 1)}|{limit_h}:00:00|{count}|"
            f"{cpus}|{user}|{partition}|{tres}|{nodes}|None|(null)|"
            f"{ran_s // 3600}:{ran_s // 60 % 60:02d}:{ran_s % 60:02d}|job{jid}")


def waiting(jid: str, reason: str, *, cpus: int, count: int = 1, limit_h: int = 4,
            partition: str = "batch", user: str = "carol", start: str = "N/A") -> str:
    """A waiting job, `squeue -h -a -o SQUEUE_FIELDS`, held for `reason`."""
    return (f"{jid}|PENDING|{start}|N/A|{at(-2)}|{limit_h}:00:00|{count}|{cpus}|{user}|"
            f"{partition}|N/A|(null)|{reason}|(null)|0:00|job{jid}")


def vega(*jobs: str, held: dict[str, tuple[int, int]] | None = None,
         states: dict[str, str] | None = None, parts: str | None = None,
         **more: str) -> Site:
    """vega as its commands print it, probed as alice: `jobs` squeue's lines, `held` each
    busy node's (CPUs, GPUs) allocated, `states` a node's State word (default IDLE, MIXED
    or ALLOCATED by `held`; f01-f04 FUTURE), `more` the other queries' outputs."""
    held = held or {}
    lines = []
    for name in NODES:
        alloc, gpus = held.get(name, (0, 0))
        state = (states or {}).get(name) or (
            "FUTURE" if name[0] == "f" else "ALLOCATED" if alloc == _KINDS[name[0]][0]
            else "MIXED" if alloc else "IDLE")
        lines.append(_node(name, alloc, gpus, state))
    outputs = {"partitions": parts or partitions(), "nodes": "\n".join(lines) + "\n",
               "queue": "\n".join(jobs), "reservations": "No reservations in the system\n",
               "qos": "normal||||||||||\n", "assoc": "user|alice\nalice|proj||normal|normal\n",
               **more}
    snap = slurm.parse_snapshot("vega", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="vega", metadata={"architecture": "x86_64"}), snap


def placed(script: str, *sites: Site) -> tuple[Placement, str]:
    p = run(script, *(sites or (vega(),)))
    return p, p.explain()


def notes(p: Placement) -> list[str]:
    v = p.verdict("vega")
    return v.notes + v.waits_for + v.reasons


def starts_in(p: Placement) -> float:
    """vega's planned start, hours after NOW."""
    v = p.verdict("vega")
    assert v is not None and v.estimated_start is not None, p.explain()
    return (v.estimated_start - NOW).total_seconds() / 3600


def whole(*names: str) -> dict[str, tuple[int, int]]:
    """Every CPU (and GPU) of `names` allocated."""
    return {n: (_KINDS[n[0]][0], (2 if n == "g03" else 4) if n[0] == "g" else 0)
            for n in names}


# the CPU nodes full: a01-a04's jobs end at +6 h, b01-b02's at +8 h
CPU_FULL = [running(f"10{i}", n, _KINDS[n[0]][0], 6 if n[0] == "a" else 8)
            for i, n in enumerate(("a01", "a02", "a03", "a04", "b01", "b02"))]


def test_the_outputs_are_read_as_vega_is():
    _, snap = vega()
    parts = {p.name: p for p in snap.partitions}
    assert [(p.name, p.priority_tier, p.tier) for p in snap.partitions] == [
        ("batch", 1, 1), ("shared", 1, 1), ("gpu", 10, 10), ("standby", 0, 0),
        ("bigmem", 1, 1), ("future", 1, 1)]
    assert (parts["shared"].oversubscribe, parts["future"].state) == ("FORCE:4", "INACTIVE")
    assert [(n.name, n.gpus) for n in snap.nodes if n.gpus] == [("g01", 4), ("g02", 4),
                                                                ("g03", 2)]
    assert {n.state for n in snap.nodes if n.name[0] == "f"} == {"future"}


# ---- OverSubscribe=FORCE beside a full partition -----------------------------------------

def test_a_forced_shared_partition_starts_now_where_the_full_one_waits_six_hours():
    """Every CPU node is full; batch frees a node at +6 h, but shared (OverSubscribe=FORCE:4,
    the same a-nodes) puts up to 4 jobs on each CPU: the job starts now there, time-sliced,
    and the explanation says so."""
    p, said = placed("#SBATCH -N 1 -c 8 -t 2:00:00", vega(*CPU_FULL, held=whole(*NODES[:6])))
    assert (p.choice, p.verdict("vega").partition, starts_in(p)) == ("vega", "shared", 0), said
    assert "partition shared: it starts now on a01, a02, a03, a04, sharing CPUs with the jobs " \
        "there (OverSubscribe=FORCE:4, time-sliced or oversubscribed)" in notes(p)
    batch, _ = placed("#SBATCH -p batch -N 1 -c 8 -t 2:00:00",
                      vega(*CPU_FULL, held=whole(*NODES[:6])))
    assert starts_in(batch) == 6


def test_a_forced_partition_does_not_lift_its_max_time():
    """shared allows 12 h: a 20 h CPU job cannot share there and is told so."""
    p, said = placed("#SBATCH -N 1 -c 8 -t 20:00:00", vega(*CPU_FULL, held=whole(*NODES[:6])))
    assert p.verdict("vega").partition != "shared", said
    assert "walltime 20:00:00 above partition shared MaxTime 12:00:00" in notes(p)


# ---- PriorityTier 0 and preemption ---------------------------------------------------------

def test_a_partition_of_priority_tier_zero_is_preempted_by_the_tier_one_partition():
    """standby's PriorityTier is 0, below batch's 1 (Slurm's default tier): batch's jobs
    preempt it on b01-b02, the only nodes with 96 CPUs, so the job is kept in batch and the
    note names batch (before: tier 0 was read as 1, batch's equal, and standby counted
    safe)."""
    p, said = placed("#SBATCH -c 96 -t 2:00:00")
    assert (p.verdict("vega").partition, starts_in(p)) == ("batch", 0), said
    assert "partition standby passed over: the job may be preempted (PreemptMode=REQUEUE) by " \
        "jobs of partition batch (PriorityTier 1 above its 0) on the same nodes" in notes(p)


def test_gpu_jobs_preempt_standby_s_running_jobs_and_standby_s_own_wait():
    """Every GPU is taken by standby jobs ending at +3 h. In gpu (PriorityTier 10) the job
    preempts them and starts now; asked in standby it waits for them, +3 h."""
    busy = vega(*(running(f"20{i}", g, 64, 3, partition="standby", limit_h=4,
                          gpus=2 if g == "g03" else 4)
                  for i, g in enumerate(("g01", "g02", "g03"))),
                held=whole("g01", "g02", "g03"))
    p, said = placed("#SBATCH --gres=gpu:a100:4 -t 2:00:00", busy)
    assert (p.verdict("vega").partition, starts_in(p)) == ("gpu", 0), said
    assert "partition gpu: its jobs preempt the running jobs of partition standby " \
        "(PreemptMode=REQUEUE, PriorityTier 0) on its nodes (its PriorityTier 10): they " \
        "count as free" in notes(p)
    low, said = placed("#SBATCH -p standby --gres=gpu:a100:4 -t 2:00:00", busy)
    assert starts_in(low) == 3, said


def test_a_higher_tier_job_passes_a_waiting_job_of_a_lower_tier():
    """a01-a02 free at +3 h, the rest full to +8 h. Job 802 waits in standby (tier 0) for 4
    nodes: it is planned on a01-a04 from +3 h to +7 h. In batch (tier 1) the job goes
    before it whatever their priorities and starts now on a03-a04 for 5 h; in standby it
    may not delay 802: 2 h fit before +3 h, 4 h wait for 802's end, +7 h."""
    jobs = [running("800", "a01", 48, 3), running("801", "a02", 48, 3), *CPU_FULL[4:],
            *(running(f"61{i}", g, 64, 8, partition="gpu", gpus=2 if g == "g03" else 4)
              for i, g in enumerate(("g01", "g02", "g03"))),
            waiting("802", "Priority", cpus=192, count=4, partition="standby")]
    site = vega(*jobs, held=whole("a01", "a02", "b01", "b02", "g01", "g02", "g03"))
    for script, at_h in (("-p batch -N 2 -t 5:00:00", 0), ("-p standby -N 2 -t 2:00:00", 0),
                         ("-p standby -N 2 -t 4:00:00", 7)):
        p, said = placed(f"#SBATCH {script}", site)
        assert starts_in(p) == at_h, (script, said)


# ---- partition limits refusing ---------------------------------------------------------------

def test_max_nodes_and_max_time_refuse_naming_each_partition_s_limit():
    """5 nodes for 3 days: no partition allows 3 days (batch, the longest, 2), batch allows
    4 nodes a job, gpu 2, bigmem 1, shared has 4, future is INACTIVE."""
    p, said = placed("#SBATCH -N 5 -t 3-00:00:00")
    assert p.choice is None
    assert notes(p) == [
        "walltime 3-00:00:00 above every partition's MaxTime here (the longest: batch, "
        "2-00:00:00)", "needs 5 nodes, partition batch allows at most 4",
        "needs 5 nodes, partition shared has only 4",
        "needs 5 nodes, partition gpu allows at most 2",
        "needs 5 nodes, partition bigmem allows at most 1", "partition 'future' is INACTIVE",
        "needs 5 nodes, partition future has only 4"], said


def test_an_inactive_partition_of_future_nodes_is_refused_with_both_reasons():
    """future is State=INACTIVE and its f01-f04 are FUTURE (not yet in service)."""
    p, said = placed("#SBATCH -p future -N 2 -t 1:00:00")
    assert p.choice is None
    assert notes(p) == ["partition 'future' is INACTIVE",
                        "needs 2 nodes, partition future has only 0 usable (others not yet in "
                        "service (FUTURE): f01, f02, f03, f04)"], said


# ---- node states ---------------------------------------------------------------------------

def test_a_powered_down_node_boots_within_resume_timeout_while_its_twin_drains():
    """1500 GB fits only l01-l02; l01 drains, l02 is powered down: the job waits for l02's
    boot, Slurm's default ResumeTimeout 60 s, or the site's 600 s where its config says."""
    states = {"l01": "IDLE+DRAIN", "l02": "IDLE+POWERED_DOWN"}
    p, said = placed("#SBATCH --mem=1500G -t 2:00:00", vega(states=states))
    assert (p.verdict("vega").partition, starts_in(p) * 3600) == ("bigmem", 60), said
    assert any(n.startswith("partition bigmem: l02 powered down: Slurm boots the nodes it "
                            "gives the job first, planned to take 60 s (Slurm's default "
                            "ResumeTimeout)") for n in notes(p)), said
    slow = vega(states={**states, "l01": "DOWN*+DRAIN"},
                config="ResumeTimeout = 600 sec\nSuspendTimeout = 30 sec\n")
    p, said = placed("#SBATCH --mem=1500G -t 2:00:00", slow)
    assert starts_in(p) * 3600 == 600, said
    assert any("planned to take 600 s (the site's ResumeTimeout)" in n for n in notes(p))


def test_96_cpus_fit_only_the_b_nodes_and_with_them_out_the_bigmem_nodes():
    """Nodes of 48, 64 and 128 CPUs: 96 fit b01-b02 (batch) and l01-l02 (bigmem). With b01
    DOWN* and b02 draining, bigmem runs it now, and batch's note names both nodes."""
    p, said = placed("#SBATCH -c 96 -t 2:00:00")
    assert p.verdict("vega").partition == "batch", said
    assert "partition shared: needs 96 CPUs per node, largest node has 48" in notes(p)
    assert "partition gpu: needs 96 CPUs per node, largest node has 64" in notes(p)
    out = vega(states={"b01": "DOWN*", "b02": "MIXED+DRAIN"}, held={"b02": (16, 0)})
    p, said = placed("#SBATCH -c 96 -t 2:00:00", out)
    assert (p.verdict("vega").partition, starts_in(p)) == ("bigmem", 0), said
    assert "needs 1 node, partition batch has only 0 usable (others down b01; draining b02)" \
        in notes(p)


# ---- GPUs by count per node ----------------------------------------------------------------

def test_three_gpus_wait_for_a_four_gpu_node_while_the_two_gpu_node_is_idle():
    """g01 and g02 have 2 of 4 A100s taken (ending +5 h and +7 h), g03 has 2 idle: 3 GPUs
    on a node wait for g01, +5 h; 2 start now."""
    site = vega(running("301", "g01", 16, 5, partition="gpu", gpus=2),
                running("302", "g02", 16, 7, partition="gpu", gpus=2),
                held={"g01": (16, 2), "g02": (16, 2)})
    p, said = placed("#SBATCH --gres=gpu:a100:3 -t 2:00:00", site)
    assert (p.verdict("vega").partition, starts_in(p)) == ("gpu", 5), said
    p, said = placed("#SBATCH --gres=gpu:a100:2 -t 2:00:00", site)
    assert starts_in(p) == 0, said


# ---- jobs ahead held by a dependency or a begin time ---------------------------------------

# b01-b02 full to +8 h; job 400 holds 8 CPUs of a01 to +3 h
HELD_BACK = [*CPU_FULL[4:], running("400", "a01", 8, 3)]
BUSY_HELD = {"b01": (128, 0), "b02": (128, 0), "a01": (8, 0)}


def test_a_job_whose_dependency_is_unmet_keeps_no_nodes_so_the_job_starts_now():
    """401 waits for 400 (afterok) to take 4 whole a-nodes. Until 400 ends Slurm's
    schedulers skip it (not independent): the 5 h job on 2 nodes starts now on a02-a04 and
    may delay it (before: +7 h, behind 401 as if it held its place already)."""
    site = vega(*HELD_BACK, waiting("401", "Dependency", cpus=192, count=4), held=BUSY_HELD,
                queue_qos="401|normal|proj|OK|PD|N/A|N/A|N/A|N/A|4|*|(null)|"
                          "afterok:400(unfulfilled)|\n")
    assert site[1].pending[0].dependency == "afterok:400(unfulfilled)"
    for limit in ("2:00:00", "5:00:00"):
        p, said = placed(f"#SBATCH -p batch -N 2 -t {limit}", site)
        assert starts_in(p) == 0, (limit, said)


def test_a_job_waiting_for_its_begin_time_keeps_no_nodes_until_then():
    """402 (4 whole a-nodes) may begin at +3 h. Now the 5 h job starts (before: +7 h);
    whole a-nodes for 5 h, which must wait for 400's end at +3 h, meet 402 eligible then
    and ahead: 402's 4 h first, +7 h, and the note says why."""
    site = vega(*HELD_BACK, waiting("402", "BeginTime", cpus=192, count=4, start=at(3)),
                held=BUSY_HELD)
    p, said = placed("#SBATCH -p batch -N 2 -t 5:00:00", site)
    assert starts_in(p) == 0, said
    p, said = placed("#SBATCH -p batch -N 4 --exclusive -t 5:00:00", site)
    assert starts_in(p) == 7, said
    assert "partition batch: job 402 waits for its begin time 2026-03-01 12:00 (BeginTime): " \
        "from then it takes its place in the queue by priority, ahead of the job" in notes(p)


# ---- QOS GrpTRES ---------------------------------------------------------------------------

def test_a_qos_grp_tres_used_up_holds_the_job_while_nodes_are_idle():
    """QOS normal allows 200 CPUs at once; its 4 running jobs hold 48 each (192), ending at
    +2, +4, +6, +8 h. b01-b02 idle: 8 CPUs (200) start now, 16 (208) wait for the first
    end, +2 h, and are told which limit."""
    jobs = [running(f"70{i}", f"a0{i + 1}", 48, 2 * (i + 1)) for i in range(4)]
    site = vega(*jobs, held=whole("a01", "a02", "a03", "a04"),
                queue_qos="".join(f"70{i}|normal|proj|OK|R|cpu=48,mem=96000M,node=1|N/A|N/A|"
                                  f"N/A|48|*|(null)|(null)|\n" for i in range(4)),
                qos="normal||||cpu=200|||||||\n")
    p, said = placed("#SBATCH -p batch -c 8 -t 1:00:00", site)
    assert starts_in(p) == 0, said
    p, said = placed("#SBATCH -p batch -c 16 -t 1:00:00", site)
    assert starts_in(p) == 2, said
    assert p.verdict("vega").waits_for == [
        "QOS normal's GrpTRES cpu=200 is in use: running jobs under it hold 192 CPUs, the "
        "job needs 16: it waits until enough of them end (QOSGrpCpuLimit)"]


# ---- fair share ----------------------------------------------------------------------------

PRIORITY_CONFIG = "".join(f"{k} = {v}\n" for k, v in (
    ("PriorityType", "priority/multifactor"), ("PriorityWeightAge", 0),
    ("PriorityWeightAssoc", 0), ("PriorityWeightFairShare", 10000),
    ("PriorityWeightJobSize", 0), ("PriorityWeightPartition", 0), ("PriorityWeightQOS", 0),
    ("PriorityWeightTRES", "(null)"), ("PriorityFavorSmall", "No"), ("PriorityFlags", "")))


def test_fair_share_puts_the_job_before_or_after_the_waiting_job():
    """a01-a02 free at +3 h, b01-b02 at +8 h; 406 (sprio 5000) waits for 4 whole nodes, 4 h.
    Fair share alone weighs 10000: at 0.90 the job's ~9000 goes first, its 4 whole nodes at
    +3 h; at 0.01 (~100) after 406, at +7 h."""
    jobs = [running("800", "a01", 48, 3), running("801", "a02", 48, 3), *CPU_FULL[4:],
            waiting("406", "Priority", cpus=192, count=4)]
    for share, at_h, rank in (("0.900000", 3, "0 waiting jobs go first, 1 waits behind it"),
                              ("0.010000", 7, "1 waiting job goes first, 0 wait behind it")):
        site = vega(*jobs, held=whole("a01", "a02", "b01", "b02"), config=PRIORITY_CONFIG,
                    job_priorities="406|5000|batch\n",
                    priority_factors=f"#sshare\nproj|alice|{share}|1.000000\n#qos\nnormal|0\n"
                                     "#default_account\nproj\n")
        p, said = placed("#SBATCH -p batch -N 4 --exclusive -t 1:00:00", site)
        assert starts_in(p) == at_h, (share, said)
        assert any(rank in n for n in notes(p)), (share, said)
        assert not p.verdict("vega").not_checked, said


# ---- a Grid Engine cell beside vega --------------------------------------------------------

def _vega_full() -> Site:
    """vega with every node's CPUs taken to +6 h and shared not forced (OverSubscribe=NO)."""
    parts = {"a": "batch", "b": "batch", "g": "gpu", "l": "bigmem"}
    jobs = [running(f"9{i}", n, _KINDS[n[0]][0], 6, partition=parts[n[0]],
                    gpus=(2 if n == "g03" else 4) if n[0] == "g" else 0)
            for i, n in enumerate(NODES[:11])]
    return vega(*jobs, held=whole(*NODES[:11]),
                parts=partitions(shared={"oversubscribe": "NO"}))


def _grid_engine() -> Site:
    """The recorded Grid Engine cell (tests/fixtures/outputs/sge): dn1 and dn2 of 8 slots,
    3 and 5 in use; jobs 17 (Eqw), 18 and 19 (hqw) held."""
    cfg, snap = next(s for s in recorded() if s[0].name == "sge")
    return cfg, snap.model_copy(update={"taken_at": NOW})


def test_a_full_slurm_center_sends_four_cpus_to_the_grid_engine_cell():
    """vega is full to +6 h; the cell's dn1 has 5 slots free now, its held jobs (Eqw, hqw)
    hold none: 4 CPUs for 2 h run there now, in all.q (short.q allows 30 minutes)."""
    p, said = placed("#SBATCH -c 4 -t 2:00:00", _vega_full(), _grid_engine())
    assert (p.choice, p.verdict("sge").partition) == ("sge", "all.q"), said
    assert p.verdict("sge").estimated_start == NOW and starts_in(p) == 6, said
    assert "walltime 2:00:00 above queue short.q h_rt 0:30:00" in p.verdict("sge").notes


def test_sixteen_cpus_on_one_host_wait_for_vega_and_the_cell_says_why_not():
    p, said = placed("#SBATCH -c 16 -t 2:00:00", _vega_full(), _grid_engine())
    assert p.choice == "vega" and starts_in(p) == 6, said
    assert p.why_not("sge") == "needs 16 slots per host, largest host has 8"
