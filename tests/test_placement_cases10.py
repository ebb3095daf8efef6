"""Placement cases worked by hand, tenth sweep: a job of several shapes at a site that runs
one shape only (flux, Grid Engine, a slurmrestd door, LSF without a compound form) is
placed as the one shape it is sent, refused where that shape gets less than the job asks;
the parts held together leave the queued jobs ahead the room each scheduler's own policy
keeps for them; then more sites of every scheduler. Each case asserts the verdict per
site, the partition chosen, the start and that the reason names the real cause."""

from __future__ import annotations

from test_placement_cases import NOW, has_note, hera, hours, only, reasons, run
from test_placement_cases7 import flux4
from test_placement_cases8 import grebe

from diamond_jupyter.config import SiteConfig

H = 3600


# --------------------------------------------------------------- several shapes, one sent

def test_flux_refuses_chunks_whose_one_shape_loses_their_gpus():
    # 1 chunk of 4 CPUs + 2 chunks of 8 CPUs and a GPU. flux's jobspec v1 has one slot
    # shape: 3 nodes, 3 tasks, 20 CPUs / 3 = 6 each (18), 2 GPUs / 3 nodes = 0. Before,
    # the largest shape (8 CPUs and a GPU) on every node was placed: READY on f0-f2
    script = "#PBS -l select=1:ncpus=4+2:ncpus=8:ngpus=1\n#PBS -l walltime=1:00:00"
    why = reasons(run(script, flux4()), "flux")
    assert why.startswith("a job of 2 shapes (1 node, 1 task, 4 CPUs + 2 nodes, 2 tasks, "
                          "16 CPUs, 2 GPUs): flux runs a job of one shape (jobspec version "
                          "1, RFC 25")
    assert why.endswith("as one shape of 3 nodes and 3 tasks, spread evenly and rounded "
                        "down, it gets less than it asks (CPUs 20 -> 18, GPUs 2 -> 0)")
    # Grid Engine the same: its PE's slots all ask the same
    assert "Grid Engine runs a job of one shape" in reasons(run(script, grebe({})), "grebe")


def test_grid_engine_places_the_one_shape_it_is_sent():
    # 1x(4 CPUs, 40 GB) + 1x(4 CPUs): one shape of 2 nodes, 2 tasks of 4 CPUs, 40 GB
    # over 8 CPUs (5 GB each: 20 GB a host). The largest shape on both hosts asked 40 GB
    # of each; s2's 16 slots are busy: as one shape it still needs both hosts, so it
    # waits for s2 (the note says what it runs as)
    script = "#PBS -l select=1:ncpus=4:mem=40gb+1:ncpus=4\n#PBS -l walltime=1:00:00"
    v = only(run(script, grebe({})), "grebe", "all.q")
    assert v.verdict == "READY"
    assert v.notes[0] == (
        "a job of 2 shapes (1 node, 1 task, 4 CPUs, 40960MB of memory + 1 node, 1 task, 4 "
        "CPUs) runs here as one shape of 2 nodes and 2 tasks: Grid Engine runs a job of one "
        "shape (every slot of a parallel environment asks the job's same -l resources; only "
        "the master task's queue can be chosen, -masterq)")


def test_a_slurmrestd_door_is_sent_one_shape_not_a_hetjob():
    # hera over slurmrestd: the REST dialect submits one job description. gpu: 1 node of
    # 4 A100 and 8 CPUs + 1 node of 8 CPUs, both in gpu: one shape of 2 nodes, 2 tasks of
    # 8 CPUs, 4 GPUs / 2 = 2 a node (4 in all: nothing lost), said; before, it was placed
    # as a hetjob, which the door never submits
    cfg, snap = hera()
    rest = SiteConfig(name="hera", scheduler="slurm", workdir="/scratch/u/.diamond",
                      transport={"kind": "slurmrestd", "url": "http://rest:6820",
                                 "token_file": "/t"})
    script = ("#SBATCH -p gpu -N 1 -c 8 --gres=gpu:a100:4 -t 1:00:00\n#SBATCH hetjob\n"
              "#SBATCH -p gpu -N 1 -c 8")
    v = run(script, (cfg, snap)).verdict("hera")
    assert v.feasible and has_note(v, "hetjob component 1")  # over ssh: a hetjob
    v = only(run(script, (rest, snap)), "hera", "gpu")
    assert v.notes[0].startswith("a job of 2 shapes (1 node, 8 CPUs, 4 GPUs + 1 node, 8 "
                                 "CPUs) runs here as one shape of 2 nodes and 2 tasks:"
                                 " this slurmrestd door submits one job description")
    assert not has_note(v, "hetjob component")
    # the first component's one CPU: 9 CPUs over 2 tasks round down to 8: refused
    one_cpu = script.replace("-N 1 -c 8 --gres", "-N 1 --gres")
    assert reasons(run(one_cpu, (rest, snap)), "hera").endswith(
        "it gets less than it asks (CPUs 9 -> 8)")
    # a later component kept as written (its own --exclude): the door drops it, so the
    # job cannot run whole there
    kept = ("#SBATCH -p gpu -N 1 --gres=gpu:a100:4 -t 1:00:00\n#SBATCH hetjob\n"
            "#SBATCH -N 1 -c 8 --exclude=c04")
    assert run(kept, (cfg, snap)).verdict("hera").feasible
    assert reasons(run(kept, (rest, snap)), "hera").startswith(
        "a Slurm heterogeneous job of 2 components (#SBATCH hetjob): slurmrestd has no form "
        "for its later components")


# --------------------------------------------------------------- held together, by policy

def _cpu_site(*jobs, alloc):
    return hera(jobs=list(jobs), alloc=alloc)


def test_pbs_chunks_keep_only_the_blocked_heads_room_slurm_every_jobs():
    # hera's cpu nodes: c01 (32 CPUs) busy until +1 h, c03 (128) until +2 h, c04 (128)
    # until +4 h, c02 (32) free. Queued ahead: A, 1 node of 128 CPUs for 2 h (c03 at
    # +2 h, the blocked head), then B, 2 nodes of 32 CPUs for 4 h (c01 and c02 at +1 h).
    # Two pieces of 16 CPUs for 3 h fit c02 now, running into B's start.
    # PBS (backfill_depth 1: the top job alone is kept): B is not protected, the chunks
    # start now; before, every queued job's room was kept: +4 h (c04).
    # Slurm plans every job ahead: B holds c01-c02 from +1 h, the hetjob waits for c04
    # (+4 h), each component alone too
    from test_placement_cases5 import busy
    from test_placement_cases9 import queued
    jobs = (busy("1", "c01", 1, 32, "cpu", walltime_h=4),
            busy("3", "c03", 2, 128, "cpu", walltime_h=4),
            busy("4", "c04", 4, 128, "cpu", walltime_h=8),
            queued("10", "cpu", 128, 2), queued("11", "cpu", 64, 4, nodes=2))
    cfg, snap = _cpu_site(*jobs, alloc={"c01": (32, 0), "c03": (128, 0), "c04": (128, 0)})
    pbs = SiteConfig(name="hera", scheduler="pbs")
    v = only(run("#PBS -q cpu\n#PBS -l select=2:ncpus=16\n#PBS -l walltime=3:00:00",
                 (pbs, snap)), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run("#SBATCH -p cpu -N 1 -c 16 -t 3:00:00\n#SBATCH hetjob\n"
                 "#SBATCH -p cpu -N 1 -c 16", (cfg, snap)), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(4))


def test_slurm_hetjob_is_not_held_back_by_a_job_slurms_plan_does_not_start():
    # c03 busy until +2 h, c04 until +6 h; c01, c02 (32 CPUs each) free. Queued ahead: A,
    # 1 node of 128 CPUs for 4 h (c03, +2 h to +6 h); B, 3 nodes of 32 CPUs for 2 h (no
    # room until +6 h: c01-c03); C, 1 node of 32 CPUs for 8 h. EASY starts C now on c01
    # (it delays only B); Slurm's plan does not (B's slot from +6 h keeps c01), so c01
    # and c02 stay free until +6 h. A hetjob of two 32-CPU components for 3 h starts now
    # on c01 and c02, ending before B. Before, the queue ahead was played out by EASY:
    # C held c01 and the hetjob waited
    from test_placement_cases5 import busy
    from test_placement_cases9 import queued
    jobs = (busy("3", "c03", 2, 128, "cpu", walltime_h=4),
            busy("4", "c04", 6, 128, "cpu", walltime_h=8),
            queued("10", "cpu", 128, 4), queued("11", "cpu", 96, 2, nodes=3),
            queued("12", "cpu", 32, 8))
    site = _cpu_site(*jobs, alloc={"c03": (128, 0), "c04": (128, 0)})
    v = only(run("#SBATCH -p cpu -N 1 -c 32 -t 3:00:00\n#SBATCH hetjob\n"
                 "#SBATCH -p cpu -N 1 -c 32", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_the_queue_ahead_is_kept_as_each_policy_keeps_it():
    # the rule itself, on one node of 8 CPUs: a job ahead started at 0 (2 CPUs), the
    # blocked head from +1 h (4 CPUs), a second waiting job from +2 h (4 CPUs), each 3 h
    from diamond_jupyter.placement_sim import SimState, _kept_for
    st = SimState(["n1"], [8], [0], [8], [0])
    held = [(0.0, 3 * H, 0, 2, 0, 0), (1 * H, 4 * H, 0, 4, 0, 1), (2 * H, 5 * H, 0, 4, 0, 2)]
    assert [h[5] for h in _kept_for(held, 0.0, "none", st)] == [0]
    assert [h[5] for h in _kept_for(held, 0.0, "easy", st)] == [0, 1]
    assert [(h[5], h[3]) for h in _kept_for(held, 0.0, "plan", st)] == [(0, 2), (1, 8),
                                                                         (2, 8)]
    # at +1.5 h the head has started: the next waiting one is the head now
    assert [h[5] for h in _kept_for(held, 1.5 * H, "easy", st)] == [0, 1, 2]


# --------------------------------------------------------------- Slurm nodes and GPUs

def _spec_site(cpu_spec: str):
    """theia: n1-n2 as `scontrol show node -o` prints them on Slurm 22.05 (no CPUEfctv):
    64 CPUs (2 sockets x 16 cores x 2 threads), 256000 MB; n1 keeps `cpu_spec` for the
    system; one partition, main, of 24 h."""
    from diamond_jupyter.dialects.slurm_commands import SlurmCommands
    from diamond_jupyter.model import Partition, SiteSnapshot
    lines = "".join(
        f"NodeName={n} Arch=x86_64 CoresPerSocket=16 CPUAlloc=0 CPUTot=64 "
        f"{cpu_spec if n == 'n1' else ''} Gres=(null) NodeAddr={n} RealMemory=256000 "
        "AllocMem=0 Sockets=2 Boards=1 State=IDLE ThreadsPerCore=2 Partitions=main\n"
        for n in ("n1", "n2"))
    nodes = SlurmCommands().parse_nodes(lines)
    parts = [Partition(name="main", default=True, max_time_s=24 * H, nodes=["n[1-2]"])]
    return (SiteConfig(name="theia", metadata={"architecture": "x86_64"}),
            SiteSnapshot(site="theia", taken_at=NOW, nodes=nodes, partitions=parts))


def test_slurm_cpu_spec_list_without_a_core_count_leaves_fewer_cpus():
    # n1's CPUSpecList=0-3,32-35: 8 CPU ids (4 cores of 2 threads) kept for the system:
    # 56 for jobs. 60 CPUs on one node: only n2. Before, a CPUSpecList without
    # CoreSpecCount was not read: n1 counted 64
    cfg, snap = _spec_site("CPUSpecList=0-3,32-35")
    assert {n.name: n.cpus for n in snap.nodes} == {"n1": 56, "n2": 64}
    # two nodes of 60: n1 cannot
    assert reasons(run("#SBATCH -N 2 -c 60 -t 1:00:00", (cfg, snap)), "theia") == (
        "needs 2 nodes, partition main has only 1 that can run it (others: needs 60 CPUs per "
        "node, largest node has 56)")
    # ids of threads: 0-2 takes 2 whole cores (4 CPUs)
    assert _spec_site("CPUSpecList=0-2")[1].nodes[0].cpus == 60
    # a core count where it is given: 2 cores of 2 threads
    assert _spec_site("CoreSpecCount=2 CPUSpecList=0-1,32-33")[1].nodes[0].cpus == 60


def test_slurm_gpus_per_task_with_tasks_per_node():
    # 4 tasks a node, a GPU each: 4 GPUs a node, g01-g02 (4 A100) not v01 (2 V100)
    v = only(run("#SBATCH -p gpu -N 2 --ntasks-per-node=4 --gpus-per-task=1 -t 1:00:00",
                 hera()), "hera", "gpu")
    assert v.verdict == "READY"
    # 8 a node: no node has 8 GPUs
    assert reasons(run("#SBATCH -p gpu -N 2 --ntasks-per-node=8 --gpus-per-task=1 "
                       "-t 1:00:00", hera()), "hera") == \
        "needs 8 GPUs per node, largest node has 4"


def test_slurm_mem_per_gpu_decides_between_gpu_nodes():
    # g01-g02's A100s busy until +2 h and +3 h; v01 (2 V100, 192000 MB) idle. 2 GPUs of
    # 100 GB each: 204800 MB, above v01's memory: it waits for g01 (+2 h). 90 GB each
    # (184320 MB) fits v01 now
    from test_placement_cases5 import busy
    jobs = [busy("1", "g01", 2, 8, "gpu", gpus=4), busy("2", "g02", 3, 8, "gpu", gpus=4)]
    site = hera(jobs=jobs, alloc={"g01": (8, 4), "g02": (8, 4)})
    v = only(run("#SBATCH -p gpu -N 1 --gpus-per-node=2 --mem-per-gpu=100G -t 1:00:00",
                 site), "hera", "gpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    v = only(run("#SBATCH -p gpu -N 1 --gpus-per-node=2 --mem-per-gpu=90G -t 1:00:00",
                 site), "hera", "gpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_slurm_prefer_is_soft_constraint_is_hard():
    # c03-c04 (avx512) busy until +2 h and +3 h. --prefer=avx512 runs now on c01 (a
    # preference, sbatch(1)); -C avx512 waits for c03 (+2 h)
    from test_placement_cases5 import busy
    jobs = [busy("1", "c03", 2, 128, "cpu"), busy("2", "c04", 3, 128, "cpu")]
    site = hera(jobs=jobs, alloc={"c03": (128, 0), "c04": (128, 0)})
    v = only(run("#SBATCH -p cpu -N 1 -c 16 --prefer=avx512 -t 1:00:00", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run("#SBATCH -p cpu -N 1 -c 16 -C avx512 -t 1:00:00", site), "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def test_slurm_exclusive_one_gpu_takes_a_whole_empty_node():
    # a 1-CPU job runs on g01: --exclusive with one A100 takes g02 whole (billed whole)
    from test_placement_cases5 import busy
    site = hera(jobs=[busy("1", "g01", 2, 1, "gpu")], alloc={"g01": (1, 0)})
    v = only(run("#SBATCH -p gpu --exclusive --gres=gpu:a100:1 -t 1:00:00", site), "hera",
             "gpu")
    assert (v.verdict, v.billed_nodes) == ("READY", 1.0)
    # g02 busy too: it waits for g01's job to end (+2 h), not sharing either
    site = hera(jobs=[busy("1", "g01", 2, 1, "gpu"), busy("2", "g02", 3, 1, "gpu")],
                alloc={"g01": (1, 0), "g02": (1, 0)})
    v = only(run("#SBATCH -p gpu --exclusive --gres=gpu:a100:1 -t 1:00:00", site), "hera",
             "gpu")
    assert v.estimated_start == hours(2)


def test_slurm_tasks_of_forty_cpus_two_a_node_go_to_the_big_nodes():
    # 2 tasks of 40 CPUs on each of 2 nodes: 80 CPUs a node, c03-c04 only (c01-c02 have
    # 32); c03 busy until +2 h: it waits for it
    from test_placement_cases5 import busy
    v = only(run("#SBATCH -p cpu -N 2 --ntasks-per-node=2 -c 40 -t 1:00:00", hera()), "hera",
             "cpu")
    assert v.verdict == "READY"
    site = hera(jobs=[busy("1", "c03", 2, 128, "cpu")], alloc={"c03": (128, 0)})
    v = run("#SBATCH -p cpu -N 2 --ntasks-per-node=2 -c 40 -t 1:00:00", site).verdict("hera")
    assert v.estimated_start == hours(2)
    # 3 tasks a node: 120 CPUs, still c03-c04; 4: 160, none
    assert "largest node has 128" in reasons(
        run("#SBATCH -p cpu -N 2 --ntasks-per-node=4 -c 40 -t 1:00:00", hera()), "hera")


# --------------------------------------------------------------- flux

def test_flux_cores_and_gpus_per_slot_above_a_node():
    # f0-f3: 16 cores, one A100. -c 32: a slot's cores must be on one node (RFC 25:
    # node>slot>core): never; -g 2 a slot: never
    assert reasons(run("#flux: -N 1\n#flux: -n 1\n#flux: -c 32", flux4()), "flux") == \
        "needs 32 cores per node, largest node has 16"
    assert reasons(run("#flux: -N 2\n#flux: -n 2\n#flux: -g 2", flux4()), "flux") == \
        "needs 2 GPUs per node, largest node has 1"
    # -n 4 -c 16: a node each
    only(run("#flux: -n 4\n#flux: -c 16", flux4()), "flux", None)


# --------------------------------------------------------------- Grid Engine

def test_grid_engine_master_queue():
    # -masterq big.q: no such queue at grebe (all.q, short.q): qsub refuses a job asking
    # an unknown queue. Before, -masterq was kept unread: READY in all.q
    script = "#$ -pe smp 4\n#$ -masterq {}\n#$ -l h_rt=0:30:00"
    assert reasons(run(script.format("big.q"), grebe({})), "grebe") == (
        "-masterq big.q: no queue instance here matches it (the master task of a parallel "
        "job must run in one; queues: all.q on s1, s2; short.q on s1, s2)")
    assert "no queue instance here matches it" in reasons(
        run(script.format("all.q@s3"), grebe({})), "grebe")
    # short.q: the job starts there (all.q is the site's default otherwise)
    v = only(run(script.format("short.q"), grebe({})), "grebe", "short.q")
    assert has_note(v, "-masterq short.q: placed in short.q, where its master task must run")


def test_grid_engine_h_vmem_per_slot_against_the_hosts_memory():
    # -pe smp 8 ($pe_slots: one host) and h_vmem 8G a slot: 64 GB on one host, s1/s2's
    # whole 64 GB: fits. 9G: 72 GB, above every host
    only(run("#$ -pe smp 8\n#$ -l h_vmem=8G\n#$ -l h_rt=1:00:00", grebe({})), "grebe",
         "all.q")
    assert reasons(run("#$ -pe smp 8\n#$ -l h_vmem=9G\n#$ -l h_rt=1:00:00", grebe({})),
                   "grebe") == "needs 73728 MB memory per host, largest host has 65536 MB"


# --------------------------------------------------------------- PBS

def test_pbs_place_pack_puts_every_chunk_on_one_host():
    # kestrel's hosts have 64 CPUs: 2 chunks of 32 packed fit one; 3 (96) fit none
    from test_placement_cases6 import kestrel
    only(run("#PBS -l select=2:ncpus=32\n#PBS -l place=pack\n#PBS -l walltime=1:00:00",
             kestrel()), "kestrel", "workq")
    assert reasons(run("#PBS -l select=3:ncpus=32\n#PBS -l place=pack\n"
                       "#PBS -l walltime=1:00:00", kestrel()), "kestrel") == \
        "needs 96 ncpus per vnode (select=3:ncpus=32, place=pack), largest vnode has 64"


# --------------------------------------------------------------- LSF

def test_lsf_host_preference_with_others_runs_on_any_host():
    # bob fills w1 (+2 h) and w2 (+3 h). -m "w1+2 others": w1 preferred, any other host
    # allowed: w3 now. -m "w1 w2": those only, w1 at +2 h
    from test_placement_cases8 import _wjob, wren
    site = wren(_wjob("1", "bob", 32, "w1", 2), _wjob("2", "bob", 32, "w2", 3))
    base = '#BSUB -n 16\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00\n'
    v = only(run(base + '#BSUB -m "w1+2 others"', site), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run(base + '#BSUB -m "w1 w2"', site), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def test_lsf_ptile_takes_whole_hosts_and_exclusive_waits_for_an_empty_one():
    from test_placement_cases8 import _wjob, wren
    # 96 slots, 48 a host: w3 and w4 (64 CPUs); w1-w2 have 32
    only(run('#BSUB -n 96\n#BSUB -R "span[ptile=48]"\n#BSUB -W 1:00', wren()), "wren",
         "normal")
    # -x: every host runs one of bob's 1-slot jobs (w1-w3 until +2 h, w4 until +5 h): 8
    # slots alone on a host wait for w1 (+2 h)
    site = wren(*(_wjob(str(i), "bob", 1, f"w{i}", 2) for i in range(1, 4)),
                _wjob("4", "bob", 1, "w4", 5))
    v = only(run("#BSUB -n 8\n#BSUB -x\n#BSUB -W 1:00", site), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


# --------------------------------------------------------------- running jobs' hosts

def test_running_jobs_free_the_hosts_their_exec_host_names():
    # kestrel: bob's 40 CPUs on k1 end at +1 h, carol's 64 on k2 at +5 h. A chunk bound to
    # k2 (host=k2) starts at +5 h, one bound to k1 at +1 h. Before, PBS's exec_host
    # (`k1/0*40`) was not read as a host: each job was put on the host with the most
    # allocation left unexplained, bob's on k2, and the answers were swapped
    from test_placement_cases6 import _pbs_job, kestrel
    site = kestrel(_pbs_job("1", "bob", "workq", 40, started_h=3, limit_h=4, host="k1"),
                   _pbs_job("2", "carol", "workq", 64, started_h=1, limit_h=6, host="k2"))
    for host, at in (("k2", 5), ("k1", 1)):
        v = run(f"#PBS -l select=1:ncpus=64:host={host}\n#PBS -l walltime=1:00:00",
                site).verdict("kestrel")
        assert (v.verdict, v.estimated_start) == ("BUSY", hours(at)), host
    # LSF's `16*w1`: bob's 16 slots on w1 end at +1 h, carol's 32 on w2 at +5 h
    from test_placement_cases8 import _wjob, wren
    site = wren(_wjob("1", "bob", 16, "w1", 1), _wjob("2", "carol", 32, "w2", 5))
    for host, at in (("w1", 1), ("w2", 5)):
        v = run(f'#BSUB -n 32\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00\n#BSUB -m {host}',
                site).verdict("wren")
        assert v.estimated_start == hours(at), host


def test_job_hosts_reads_every_schedulers_node_list():
    from diamond_jupyter.dialects.outputs_common import job_hosts
    assert job_hosts("c[01-03],g01") == ["c01", "c02", "c03", "g01"]
    assert job_hosts("k1/0*8+k2/1*8") == ["k1", "k2"]
    assert job_hosts("k1/0+k1/1+k2/0") == ["k1", "k2"]  # Torque
    assert job_hosts("4*h1:2*h2") == ["h1", "h2"]
    assert job_hosts("h1 h2") == ["h1", "h2"]
    assert job_hosts(None) == [] and job_hosts("s1") == ["s1"]


# --------------------------------------------------------------- PBS place=group

def tyche(*jobs, switches: bool = True):
    """A PBS Pro site whose hosts hang off two switches (a string resource `switch` in
    pbsnodes' resources_available): p1-p2 on sw1, p3-p5 on sw2, 64 CPUs each."""
    import json
    from datetime import timezone

    from diamond_jupyter.dialects.pbs_commands import PbsCommands
    used: dict[str, int] = {}
    for _, a in jobs:
        used[a["exec_host"].split("/")[0]] = a["Resource_List"]["ncpus"]
    sw = {"p1": "sw1", "p2": "sw1", "p3": "sw2", "p4": "sw2", "p5": "sw2"}
    nodes = {h: {"state": "job-busy" if used.get(h, 0) >= 64 else "free",
                 "resources_available": {"ncpus": 64, "mem": "262144000kb",
                                         **({"switch": s} if switches else {})},
                 "resources_assigned": {"ncpus": used.get(h, 0)}} for h, s in sw.items()}
    queues = {"workq": {"queue_type": "Execution", "enabled": "True", "started": "True",
                        "resources_max": {"walltime": "24:00:00"}}}
    out = {"nodes": json.dumps({"nodes": nodes}), "queues": json.dumps({"Queue": queues}),
           "server": json.dumps({"Server": {"srv": {"default_queue": "workq"}}}),
           "queue": json.dumps({"Jobs": dict(jobs)}), "user": "alice\n"}
    snap = PbsCommands(tz=timezone.utc).parse_snapshot("tyche", out)
    return SiteConfig(name="tyche", scheduler="pbs"), snap.model_copy(update={"taken_at": NOW})


def test_pbs_place_group_keeps_every_chunk_on_one_switch():
    # bob's 64 CPUs on p3 until +2 h. 3 chunks of a host each: without group, p1, p2 and
    # p4 now; with group=switch only sw2 has 3 hosts: +2 h (p3 frees). Before, group= was
    # kept unread: READY now across both switches
    from test_placement_cases6 import _pbs_job
    site = tyche(_pbs_job("1", "bob", "workq", 64, started_h=2, limit_h=4, host="p3"))
    three = "#PBS -l select=3:ncpus=64\n#PBS -l place=scatter{}\n#PBS -l walltime=1:00:00"
    assert run(three.format(""), site).verdict("tyche").verdict == "READY"
    v = only(run(three.format(":group=switch"), site), "tyche", "workq")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert v.notes[0] == ("place=group=switch: its chunks go to the hosts of switch=sw2 (p3, "
                          "p4, p5), the soonest of 2 groups")
    # 2 chunks: sw1 now
    v = only(run(three.replace("select=3", "select=2").format(":group=switch"), site),
             "tyche", "workq")
    assert v.verdict == "READY" and "switch=sw1 (p1, p2)" in v.notes[0]
    # 4 chunks: no switch has 4 hosts
    why = reasons(run(three.replace("select=3", "select=4").format(":group=switch"), site),
                  "tyche")
    assert why.startswith("place=group=switch: no one switch holds every chunk (switch=sw1 "
                          "(p1, p2): the chunks 4:ncpus=64 do not fit")
    # a resource no host has: no group
    assert reasons(run(three.format(":group=switch"), tyche(switches=False)), "tyche") == (
        "place=group=switch: no host here has a value of switch (pbsnodes "
        "resources_available), so no group can hold its chunks")


# --------------------------------------------------------------- start times of every scheduler

def test_every_schedulers_start_time_holds_the_start_at_its_own_site():
    # NOW is 2026-03-01 09:00. Before, only Slurm's --begin was read: READY now on each
    from test_placement_cases6 import kestrel
    from test_placement_cases8 import wren
    # PBS -a 1130: today 11:30 (+2:30); the queue is idle
    v = only(run("#PBS -l select=1:ncpus=4\n#PBS -a 1130\n#PBS -l walltime=1:00:00",
                 kestrel()), "kestrel", "workq")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2.5))
    assert has_note(v, "begin time 2026-03-01 11:30: it starts no sooner (+2:30:00)")
    # PBS -a 0830: 08:30 has passed today: tomorrow's (+23:30)
    v = run("#PBS -l select=1:ncpus=4\n#PBS -a 0830\n#PBS -l walltime=1:00:00",
            kestrel()).verdict("kestrel")
    assert v.estimated_start == hours(23.5)
    # LSF -b 11:30: today 11:30 (+2:30). A day without its month (-b 2:8:00) is kept as
    # written and said when the script is read (tests/test_begin_times.py), and held at
    # an LSF site (tests/test_begin_day_of_month.py)
    v = only(run("#BSUB -n 4\n#BSUB -b 11:30\n#BSUB -W 1:00", wren()), "wren", "normal")
    assert v.estimated_start == hours(2.5)
    # Grid Engine -a 03011000 (MMDDhhmm): +1 h
    v = only(run("#$ -a 03011000\n#$ -l h_rt=1:00:00", grebe({})), "grebe", "all.q")
    assert v.estimated_start == hours(1)
    # flux --begin-time=+2h (RFC 23 duration); a phrase not read (kept as written, said
    # when the script is read: tests/test_begin_times.py) holds nothing
    v = only(run("#flux: -N 1\n#flux: --begin-time=+2h", flux4()), "flux", None)
    assert v.estimated_start == hours(2)
    v = only(run('#flux: -N 1\n#flux: --begin-time="next friday"', flux4()), "flux", None)
    assert v.verdict == "READY"


def test_a_start_time_holds_at_a_site_of_another_scheduler():
    # a PBS -a job at a Slurm site: read into the job's start time, it reaches sbatch as
    # --begin (tests/test_begin_times.py) and holds the start there too
    v = only(run("#PBS -l select=1:ncpus=4\n#PBS -a 1130\n#PBS -l walltime=1:00:00", hera()),
             "hera", "cpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2.5))
    assert has_note(v, "--begin 2026-03-01 11:30: it starts no sooner (+2:30:00)")


def test_an_unreadable_start_time_is_refused_naming_the_forms():
    import pytest

    from diamond_jupyter.model import BadInput
    with pytest.raises(BadInput, match=r"-a '11h30' is not a date and time qsub reads "
                                       r"\(accepted: \[\[\[\[CC\]YY\]MM\]DD\]hhmm"):
        run("#PBS -a 11h30\n#PBS -l walltime=1:00:00", hera())
    with pytest.raises(BadInput, match=r"-b '25:00' names no real date and time"):
        run("#BSUB -b 25:00\n#BSUB -W 1:00", hera())
    with pytest.raises(BadInput, match=r"-a '0301' is not a date and time qsub reads "
                                       r"\(accepted: \[\[CC\]YY\]MMDDhhmm"):
        run("#$ -a 0301\n#$ -l h_rt=1:00:00", hera())


# --------------------------------------------------------------- --time-min's lowered limit

def test_time_min_backfill_ends_the_job_at_its_lowered_limit():
    # c03 busy until +2 h; a job ahead waits for all four cpu nodes from +2 h. A 4 h job
    # with --time-min 1 h starts now on c01 with its limit lowered to the gap, 2 h (the
    # longest that ends before the job ahead's slot): it is ended then, so its expected
    # runtime (its 4 h walltime, nothing to learn from) is cut to 2 h and it may time
    # out. Before, the runtime stayed 4 h
    from test_placement_cases5 import busy
    from test_placement_cases9 import queued
    jobs = [busy("1", "c03", 2, 128, "cpu", walltime_h=4), queued("2", "cpu", 0, 3, nodes=4)]
    site = hera(jobs=jobs, alloc={"c03": (128, 0)})
    v = only(run("#SBATCH -p cpu -N 1 -t 4:00:00 --time-min=1:00:00", site), "hera", "cpu")
    assert (v.verdict, v.estimated_runtime_s) == ("READY", 2 * H)
    assert has_note(v, "sooner than its full limit lets it (+5:00:00): to 2:00:00, the "
                       "longest that starts it then")
    assert has_note(v, "expected runtime 4:00:00 exceeds time limit --time-min lowers it to "
                       "2:00:00: the job may time out")
    # no gap needed (idle partition): the full limit, the full runtime
    v = only(run("#SBATCH -p cpu -N 1 -t 4:00:00 --time-min=1:00:00", hera()), "hera", "cpu")
    assert v.estimated_runtime_s == 4 * H
