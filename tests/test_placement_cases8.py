"""Placement cases worked by hand, eighth sweep: a PBS job of several chunk shapes placed
chunk by chunk (the start when all find room at once); the components of a Slurm
heterogeneous job that wait held against each other; LSF `select[]` terms read from the
hosts' recorded outputs; the memory of running jobs in a Slurm QOS's `mem` TRES; then more
sites of every scheduler. Each case asserts the verdict per site, the partition chosen,
the start and that the reason names the real cause."""

from __future__ import annotations

from datetime import timedelta

from test_placement_cases import NOW, has_note, hera, hours, only, reasons, run
from test_placement_cases5 import PARTITIONS, busy, node_lines
from test_placement_cases6 import QOS, _pbs_job, kestrel, running
from test_placement_cases6 import slurm as slurm6

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import (
    QUEUE_JOB_FIELDS,
    SlurmCommands,
    parse_job_qos,
    parse_tres_alloc,
)

# --------------------------------------------------------------- PBS chunks of several shapes

def _half_full(limit_h: int = 5) -> tuple:
    """bob's 40-CPU jobs on k1-k4 (of 64 CPUs), started 1 h ago: each frees at +4 h."""
    return tuple(_pbs_job(str(i), "bob", "big", 40, started_h=1, limit_h=limit_h,
                          host=f"k{i}") for i in range(1, 5))


def test_pbs_scattered_chunks_wait_until_every_one_has_a_host_of_its_own():
    # place=scatter: 1 chunk of 8 and 3 of 32 CPUs, each on a host of its own. Free now:
    # k5 and k6 (64 each) and 24 CPUs on k1-k4. The 8 fits k1, two 32s fit k5 and k6, the
    # third waits for k1-k4 to free at +4 h. Before, the job was probed as 4 hosts of 8
    # CPUs (the least chunk) and said READY now
    v = only(run("#PBS -q workq\n#PBS -l select=1:ncpus=8+3:ncpus=32\n#PBS -l place=scatter\n"
                 "#PBS -l walltime=1:00:00", kestrel(*_half_full())), "kestrel", "workq")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(4))
    assert has_note(v, "queue workq: its chunks find room all at once at +4:00:00")


def test_pbs_free_chunks_share_hosts_while_they_have_room():
    # free placement (the default): 3 chunks of 32 share k5 (two) and k6 (one, beside the
    # 8): they all start now
    v = only(run("#PBS -q workq\n#PBS -l select=1:ncpus=8+3:ncpus=32\n"
                 "#PBS -l walltime=1:00:00", kestrel(*_half_full())), "kestrel", "workq")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # 5 chunks of 32: k5 and k6 hold four, the fifth needs 32 free CPUs: +4 h
    v = only(run("#PBS -q workq\n#PBS -l select=1:ncpus=8:mem=64gb+5:ncpus=32:mpiprocs=32\n"
                 "#PBS -l walltime=1:00:00", kestrel(*_half_full())), "kestrel", "workq")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(4))


def test_pbs_a_gpu_chunk_waits_for_the_gpu_vnode_while_the_cpu_chunks_could_start():
    # k5's 4 GPUs are held by a job ending at +2 h, k6's 3 of 4 by one ending at +3 h; the
    # CPU chunk fits anywhere now, the chunk of 4 GPUs waits for k5: +2 h
    jobs = (_pbs_job("1", "bob", "gpu", 8, started_h=2, limit_h=4, host="k5", ngpus=4),
            _pbs_job("2", "bob", "gpu", 8, started_h=1, limit_h=4, host="k6", ngpus=3))
    v = only(run("#PBS -q gpu\n#PBS -l select=2:ncpus=16+1:ncpus=8:ngpus=4\n"
                 "#PBS -l walltime=1:00:00", kestrel(*jobs)), "kestrel", "gpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def test_pbs_the_reason_names_the_chunk_left_without_a_host():
    # scatter: 7 chunks on hosts of their own, the site has 6 hosts
    p = run("#PBS -q workq\n#PBS -l select=1:ncpus=8:ngpus=2+6:ncpus=4\n#PBS -l place=scatter",
            kestrel())
    assert reasons(p, "kestrel") == (
        "the chunks 1:ncpus=8:ngpus=2+6:ncpus=4 do not fit the site's nodes together "
        "(scatter placement): they ask 7 hosts, one a chunk, and 6 can hold one; chunk 2 "
        "(6:ncpus=4) is the one left without a host")


# --------------------------------------------------------------- Slurm hetjobs held together

A100_TWICE = ("#SBATCH -p gpu --gres=gpu:a100:4 -t 1:00:00\n#SBATCH hetjob\n"
              "#SBATCH -p gpu --gres=gpu:a100:4")


def test_hetjob_components_that_both_wait_do_not_count_on_the_same_node():
    # g01's 4 A100 free at +2 h, g02's at +3 h: each component of 4 A100 alone starts at
    # +2 h on g01; together the second needs g02: the job starts at +3 h (before: +2 h)
    jobs = [busy("11", "g01", 2, 64, "gpu", walltime_h=4, gpus=4),
            busy("12", "g02", 3, 64, "gpu", walltime_h=4, gpus=4)]
    v = only(run(A100_TWICE, hera(jobs=jobs, alloc={"g01": (64, 4), "g02": (64, 4)})),
             "hera", "gpu")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    assert v.estimated_finish == hours(4)
    assert has_note(v, "its components find room all at once at +3:00:00")


def test_hetjob_waiting_components_that_fit_one_node_together_are_not_moved():
    # two components of 2 A100 and 8 CPUs: both fit g01 once it frees at +2 h
    jobs = [busy("11", "g01", 2, 64, "gpu", walltime_h=4, gpus=4),
            busy("12", "g02", 3, 64, "gpu", walltime_h=4, gpus=4)]
    v = run("#SBATCH -p gpu --gres=gpu:a100:2 -c 8 -t 1:00:00\n#SBATCH hetjob\n"
            "#SBATCH -p gpu --gres=gpu:a100:2 -c 8",
            hera(jobs=jobs, alloc={"g01": (64, 4), "g02": (64, 4)})).verdict("hera")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def test_hetjob_exclusive_components_each_need_an_empty_node():
    # debug holds c01 and c02, each running a 4-CPU job, c01's ending at +1 h and c02's at
    # +2 h. Two components, each one whole node of debug: alone each takes c01 at +1 h;
    # together the second needs c02 empty: +2 h
    jobs = [busy("1", "c01", 1, 4, "debug", walltime_h=3),
            busy("2", "c02", 2, 4, "debug", walltime_h=3)]
    site = hera(jobs=jobs, alloc={"c01": (4, 0), "c02": (4, 0)})
    v = run("#SBATCH -p debug -N 1 --exclusive -t 0:20:00\n#SBATCH hetjob\n"
            "#SBATCH -p debug -N 1 --exclusive -t 0:20:00", site).verdict("hera")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    # without --exclusive both share c01's free CPUs at once: now
    v = run("#SBATCH -p debug -N 1 -c 4 -t 0:20:00\n#SBATCH hetjob\n"
            "#SBATCH -p debug -N 1 -c 4 -t 0:20:00", site).verdict("hera")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


# --------------------------------------------------------------- LSF select[] and host limits

# wren as `lshosts`/`bhosts -json` give it: w1-w2 XeonGold 32 CPUs 192 GB with ib; w3
# EPYC 64 CPUs 512 GB with ib and bigmem; w4 EPYC 64 CPUs 512 GB, nothing else
WREN = (("w1", "XeonGold", 32, "192G", "(ib)"), ("w2", "XeonGold", 32, "192G", "(ib)"),
        ("w3", "EPYC", 64, "512G", "(ib bigmem)"), ("w4", "EPYC", 64, "512G", ""))


def _wjob(jid: str, user: str, slots: int, host: str, left_h: float, limit_h: int = 4
          ) -> dict:
    def t(h: float) -> str:
        return (NOW + timedelta(hours=h)).strftime("%b %d %H:%M:%S %Y")
    started = left_h - limit_h
    return {"JOBID": jid, "STAT": "RUN", "USER": user, "QUEUE": "normal",
            "JOB_NAME": f"j{jid}", "SUBMIT_TIME": t(started - 1), "START_TIME": t(started),
            "SLOTS": str(slots), "EXEC_HOST": f"{slots}*{host}",
            "RUNTIMELIMIT": f"{limit_h * 60}.0/{host}"}


def wren(*jobs: dict, limits: str | None = None, queue_long: str = "", arrays: str = ""):
    import json
    from datetime import timezone

    from diamond_jupyter.config import SiteConfig
    from diamond_jupyter.dialects.lsf_commands import LsfCommands

    used: dict[str, int] = {}
    for j in (j for j in jobs if "EXEC_HOST" in j):  # running: on its host
        used[j["EXEC_HOST"].split("*")[1]] = used.get(j["EXEC_HOST"].split("*")[1], 0) \
            + int(j["SLOTS"])
    hosts = {"RECORDS": [{"HOST_NAME": h, "STATUS": "closed_Full" if used.get(h) == c
                          else "ok", "MAX": str(c), "NJOBS": str(used.get(h, 0)),
                          "RUN": str(used.get(h, 0))} for h, _, c, _, _ in WREN]}
    lshosts = {"RECORDS": [{"HOST_NAME": h, "type": "X86_64", "model": m, "ncpus": str(c),
                            "maxmem": mem, "RESOURCES": res} for h, m, c, mem, res in WREN]}
    queues = {"RECORDS": [{"QUEUE_NAME": "normal", "STATUS": "Open:Active", "MAX": "-",
                           "RUNLIMIT": "1440.0 min"}]}
    outputs = {"hosts": json.dumps(hosts), "lshosts": json.dumps(lshosts),
               "queues": json.dumps(queues), "queue": json.dumps({"RECORDS": list(jobs)}),
               "user": "alice\n", "queue_long": queue_long, "arrays": arrays,
               **({"limits": limits} if limits is not None else {})}
    snap = LsfCommands(tz=timezone.utc).parse_snapshot("wren", outputs)
    snap = snap.model_copy(update={"taken_at": NOW})
    snap.partitions[0].default = True
    return SiteConfig(name="wren", scheduler="lsf"), snap


def lsf(select: str, n: int = 16, *more: str) -> str:
    return "\n".join([f"#BSUB -n {n}", f'#BSUB -R "select[{select}]"',
                      '#BSUB -R "span[hosts=1]"', "#BSUB -W 1:00", *more])


def test_lsf_select_model_is_read_from_lshosts():
    # model==Skylake: no wren host is one. Before, model was never checked: READY
    p = run(lsf("model==Skylake"), wren())
    assert reasons(p, "wren") == "no host meets select[model==Skylake] that can run it " \
        "(hosts: w1, w2, w3, w4)"
    # model==EPYC: w3 and w4; with both full until +2 h and +3 h the job waits for w3
    jobs = (_wjob("1", "bob", 64, "w3", 2), _wjob("2", "bob", 64, "w4", 3))
    v = only(run(lsf("model==EPYC"), wren(*jobs)), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


def test_lsf_select_hname_excludes_hosts():
    # every host but w3 and w4 has 32 CPUs: 48 slots on one host fit none of the others
    p = run(lsf("hname!=w3 && hname!=w4", 48), wren())
    assert reasons(p, "wren").startswith("no host meets select[hname!=w3 && hname!=w4]")
    jobs = (_wjob("1", "bob", 64, "w3", 2),)
    v = only(run(lsf("hname!=w3", 48), wren(*jobs)), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)  # w4
    v = only(run(lsf("hname==w3", 48), wren(*jobs)), "wren", "normal")
    assert v.estimated_start == hours(2)


def test_lsf_select_parentheses_not_and_or_nest():
    # (model==EPYC || ib) && !bigmem: w1, w2 (ib) and w4 (EPYC), not w3 (bigmem). 64 slots
    # on one host: w4 only, held until +3 h (w3 is free now, but excluded). Before, `||`
    # split the string at the top level and `!bigmem` was not read: READY on w3
    jobs = (_wjob("2", "bob", 64, "w4", 3),)
    v = only(run(lsf("(model==EPYC || ib) && !bigmem", 64), wren(*jobs)), "wren", "normal")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    # `not` and `and` are LSF's words for the same
    v = only(run(lsf("(model==EPYC or ib) and not bigmem", 64), wren(*jobs)), "wren")
    assert v.estimated_start == hours(3)


def test_lsf_select_defined_and_type_any():
    # defined(bigmem): w3 only; type==any && maxmem>400000: w3 and w4
    jobs = (_wjob("1", "bob", 64, "w3", 2),)
    v = only(run(lsf("defined(bigmem)", 8), wren(*jobs)), "wren")
    assert v.estimated_start == hours(2)
    v = only(run(lsf("type==any && maxmem>400000", 8), wren(*jobs)), "wren")
    assert v.estimated_start == NOW
    assert reasons(run(lsf("defined(fpga)", 8), wren()), "wren").startswith(
        "no host meets select[defined(fpga)]")


def test_lsf_select_terms_the_outputs_do_not_give_are_said():
    # swp and tmp are load indices: lshosts/bhosts as asked do not give them. The other
    # term still holds: ncpus>=64 keeps w3-w4 (both full until +2 h)
    jobs = (_wjob("1", "bob", 64, "w3", 2), _wjob("2", "bob", 64, "w4", 2))
    v = only(run(lsf("swp>2000 && tmp>100 && ncpus>=64", 8), wren(*jobs)), "wren")
    assert v.estimated_start == hours(2)
    assert "select[] term 'swp>2000': the hosts' recorded outputs (lshosts, bhosts) do not " \
        "give it (bsub decides)" in v.not_checked, v.not_checked
    assert any(n.startswith("select[] term 'tmp>100': ") for n in v.not_checked)
    # a string this code cannot read is left to bsub whole, and said
    v = only(run(lsf("ncpus>=", 8), wren()), "wren")
    assert any(n.startswith("select[ncpus>=]: this code cannot read it")
               for n in v.not_checked), v.not_checked


WREN_HOST_LIMITS = """INTERNAL RESOURCE LIMITS:

NAME            USERS       QUEUES      HOSTS       PROJECTS    SLOTS   MEM      TMP  SWP  JOBS
epyc_cap        -           -           w3          -           16/32   -        -    -    -
epyc_cap        -           -           w4          -           0/24    -        -    -    -
"""


def test_lsf_host_limits_pass_over_hosts_in_use_up_to_their_limit():
    # 32 slots on one host: w4's limit is 24 (never there); w3's is 32 with 16 in use
    # (bob's job ending at +2 h); w1/w2 have 32 CPUs: READY now there
    jobs = (_wjob("1", "bob", 16, "w3", 2),)
    v = only(run(lsf("ncpus>0", 32), wren(*jobs, limits=WREN_HOST_LIMITS)), "wren")
    assert v.estimated_start == NOW
    assert has_note(v, "queue normal: hosts w3 passed over: limit epyc_cap on hosts w3")
    # 24 slots on the bigmem host (w3): 16 + 24 is above its limit of 32 though it has 48
    # CPUs free: it waits for bob's job, +2 h. Before, HOSTS limits were not read: READY
    v = only(run(lsf("bigmem", 24), wren(*jobs, limits=WREN_HOST_LIMITS)), "wren")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))
    assert any("limit epyc_cap on hosts w3 (lsb.resources, blimits): 16 of its 32 slots are "
               "in use and the job needs 24" in w for w in v.waits_for)


def test_lsf_host_limits_below_what_the_job_asks_of_a_host():
    # 48 slots on one host of model EPYC: w3's limit (32) and w4's (24) are both below
    p = run(lsf("model==EPYC", 48), wren(limits=WREN_HOST_LIMITS))
    assert reasons(p, "wren") == (
        "needs 1 host, queue normal has 0 its host limits let it use (needs 48 slots on a "
        "host, limit epyc_cap on hosts w3 (lsb.resources, blimits) allows 32)")


# --------------------------------------------------------------- Slurm QOS memory in use

def tres_line(jid: str, tres: str, qos: str = "team", state: str = "R") -> str:
    """One job as `squeue -h -a -O QUEUE_JOB_FIELDS` prints it: its id as %i prints it,
    QOS, account, OverSubscribe, compact state and tres-alloc, each ended by '|'."""
    return f"{jid}|{qos}|proj|OK|{state}|{tres}|"


def memtitan(*queue: str, tres: str | None, qos_of: dict[str, str], mem: dict[str, int]):
    """olympus's nodes (n1-n4 48 CPUs 192000 MB) with team's GrpTRES mem=300G; `tres`:
    the running jobs' tres-alloc lines (None: not read, as by an older engine)."""
    qos = QOS.replace("team||||cpu=96|||||", "team||||mem=300G|||||")
    outputs = {"partitions": PARTITIONS, "nodes": node_lines(
        alloc={n: 8 for n in mem}, mem=mem), "queue": "\n".join(queue),
        "queue_qos": tres if tres is not None else "".join(
            f"{j}|{q}|proj|OK\n" for j, q in qos_of.items()), "qos": qos,
        "assoc": "user|alice\nalice|proj||normal|normal,team\n"}
    snap = slurm6.parse_snapshot("titan", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="titan", metadata={"architecture": "x86_64"}), snap


def test_a_qos_memory_limit_in_use_counts_the_running_jobs_memory():
    # team: GrpTRES mem=300G (307200 MB). bob's job holds 150G on n1 (ends at +1 h),
    # carol's 100G on n2 (+3 h): 256000 MB in use. 80G more is above the limit until bob's
    # ends: +1 h, though n3 and n4 are idle. Before, a running job's memory was never read
    # and the job was READY now
    jobs = (running("101", "bob", "n1", 8, 3, 4), running("102", "carol", "n2", 8, 1, 4))
    tres = "\n".join((tres_line("101", "cpu=8,mem=150G,node=1,billing=8"),
                      tres_line("102", "cpu=8,mem=100G,node=1,billing=8"))) + "\n"
    site = memtitan(*jobs, tres=tres, qos_of={"101": "team", "102": "team"},
                    mem={"n1": 153600, "n2": 102400})
    v = only(run("#SBATCH -q team\n#SBATCH -c 4\n#SBATCH --mem=80G\n#SBATCH -p compute",
                 site), "titan", "compute")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    assert any("QOS team's GrpTRES mem=307200 is in use: running jobs under it hold 256000 "
               "MB memory, the job needs 81920: it waits until enough of them end "
               "(QOSGrpMemLimit)" in w for w in v.waits_for)
    # 40G fits beside them: now
    v = run("#SBATCH -q team\n#SBATCH -c 4\n#SBATCH --mem=40G\n#SBATCH -p compute",
            site).verdict("titan")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_a_qos_memory_limit_is_not_counted_when_the_jobs_memory_was_not_read():
    # the same queue read without tres-alloc: what the running jobs hold is not known, so
    # the memory limit is not counted (as before): READY now
    jobs = (running("101", "bob", "n1", 8, 3, 4), running("102", "carol", "n2", 8, 1, 4))
    site = memtitan(*jobs, tres=None, qos_of={"101": "team", "102": "team"},
                    mem={"n1": 153600, "n2": 102400})
    v = run("#SBATCH -q team\n#SBATCH -c 4\n#SBATCH --mem=80G\n#SBATCH -p compute",
            site).verdict("titan")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_tres_alloc_is_read_by_every_id_squeue_prints():
    # a plain job, an array task and a hetjob component (JobArrayID prints each as %i
    # does) are found by that id; a waiting job's tres-alloc (what it asks), a line without
    # mem= and a line of the older `%i|%q|%a|%h` form are skipped
    text = "\n".join((tres_line("60", "cpu=4,mem=4000M,node=1"),
                      tres_line("77_3", "cpu=2,mem=2G,node=1"),
                      tres_line("90+1", "cpu=1,mem=1G,node=1"),
                      tres_line("95", "cpu=1,node=1"),
                      tres_line("96_[1-4%2]", "cpu=1,mem=1G,node=1", state="PD"),
                      "97|normal|proj|OK", "garbage line"))
    assert parse_tres_alloc(text) == {"60": 4000, "77_3": 2048, "90+1": 1024}
    # the same answer gives each job's QOS, account and sharing (padding stripped)
    assert parse_job_qos(text)["96_[1-4%2]"] == "team"
    assert parse_job_qos("98   |low  |chem |YES  |R |cpu=1|\n", field=2) == {"98": "chem"}
    # one query a snapshot, squeue's own (a configured path applies), the -O fields in
    # %i|%q|%a|%h's order
    argv = SlurmCommands().snapshot_argvs()["queue_qos"]
    assert argv[-5:] == ["squeue", "-h", "-a", "-O", QUEUE_JOB_FIELDS]
    assert QUEUE_JOB_FIELDS.startswith("JobArrayID:0|,QOS:0|,Account:0|,OverSubscribe:0|")
    assert "tres-alloc:0|" in QUEUE_JOB_FIELDS
    assert SlurmCommands.live_outputs == {"queue", "queue_qos", "licenses", "job_priorities"}
    # a job of two nodes holding 64G in all holds 32G a node
    jobs = (running("101", "bob", "n1", 8, 3, 4).replace("|1|8|", "|2|8|"),)
    site = memtitan(*jobs, tres=tres_line("101", "cpu=8,mem=64G,node=2") + "\n",
                    qos_of={"101": "team"}, mem={"n1": 32768})
    assert site[1].jobs[0].memory_mb == 32768


# --------------------------------------------------------------- Slurm: GPUs and tasks

def test_tasks_of_a_gpu_job_spread_over_the_gpu_nodes():
    # -n 80 --gpus=2 in gpu: no node has 80 CPUs there (g01-g02 64, v01 32), so Slurm
    # gives it two nodes, the 2 GPUs shared among them. Before, the tasks were packed by
    # the site's largest node (c03, 128 CPUs, no GPU) onto one node: refused
    v = only(run("#SBATCH -p gpu --gpus=2 -n 80 -t 1:00:00"), "hera", "gpu")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # --ntasks-per-gpu=40 with --gpus=2 is the same 80 tasks
    only(run("#SBATCH -p gpu --gpus=2 --ntasks-per-gpu=40 -t 1:00:00"), "hera", "gpu")
    # 200 tasks: the three GPU nodes hold 160 CPUs: refused
    p = run("#SBATCH -p gpu --gpus=2 -n 200 -t 1:00:00")
    assert p.choice is None and "gpu" in reasons(p, "hera")


def test_cpus_per_gpu_times_gpus_above_a_nodes_cpus():
    # 4 GPUs x 20 CPUs = 80 CPUs on one node: g01-g02 have 64
    p = run("#SBATCH -p gpu --gpus-per-node=4 --cpus-per-gpu=20")
    # said of partition gpu's nodes (before: "no single node meets all ... (80 CPUs on
    # <a node outside gpu>; 4 GPUs on g01, g02)")
    assert reasons(p, "hera") == "partition gpu: needs 80 CPUs per node, largest node has 64"

    # 16 each: 64, the whole of g01
    only(run("#SBATCH -p gpu --gpus-per-node=4 --cpus-per-gpu=16"), "hera", "gpu")


def test_gpus_per_socket_times_the_sockets():
    # 2 GPUs a socket on 2 sockets: 4 a node (g01-g02); 3 a socket: 6, no node has them
    only(run("#SBATCH -p gpu --gpus-per-socket=2 --sockets-per-node=2 -N 1"), "hera", "gpu")
    assert "needs 6 GPUs per node, largest node has 4" in reasons(
        run("#SBATCH -p gpu --gpus-per-socket=3 --sockets-per-node=2 -N 1"), "hera")


def test_exclusive_on_mixed_nodes_waits_for_them_to_empty():
    # c03 (ends +2 h) and c04 (+3 h) each run an 8-CPU job: two whole avx512 nodes wait
    # for both, +3 h; without --exclusive they start now beside them
    jobs = [busy("1", "c03", 2, 8, "cpu"), busy("2", "c04", 3, 8, "cpu")]
    site = hera(jobs=jobs, alloc={"c03": (8, 0), "c04": (8, 0)})
    v = only(run("#SBATCH -p cpu -N 2 --exclusive -C avx512 -t 1:00:00", site), "hera")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(3))
    v = only(run("#SBATCH -p cpu -N 2 -c 64 -C avx512 -t 1:00:00", site), "hera")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


# --------------------------------------------------------------- Grid Engine queue states

def grebe(states: dict[tuple[str, str], str], used: dict[str, int] | None = None,
          queues: str = "qname all.q\nh_rt 24:00:00\n\nqname short.q\nh_rt 1:00:00\n"):
    """A Grid Engine site read as the probe reads it: s1-s2 of 16 slots and 64 GB, each
    with an instance of all.q (24 h) and short.q (1 h); `states`: an instance's state
    letters as `qstat -f` prints them; `used`: slots in use in all.q by host."""
    from diamond_jupyter.dialects.sge_commands import SgeCommands

    used = used or {}
    inst = "".join(
        f"<Queue-List><name>{q}@{h}</name><qtype>BIP</qtype>"
        f"<slots_used>{used.get(h, 0) if q == 'all.q' else 0}</slots_used><slots_resv>0"
        f"</slots_resv><slots_total>16</slots_total><load_avg>0.5</load_avg><arch>lx-amd64"
        f"</arch>{'<state>' + states[q, h] + '</state>' if (q, h) in states else ''}"
        "</Queue-List>" for q in ("all.q", "short.q") for h in ("s1", "s2"))
    qstat = f"<?xml version='1.0'?><job_info><queue_info>{inst}</queue_info>" \
        "<job_info></job_info></job_info>"
    hosts = "".join(
        f"<host name='{h}'><hostvalue name='arch_string'>lx-amd64</hostvalue>"
        "<hostvalue name='num_proc'>16</hostvalue><hostvalue name='load_avg'>0.5</hostvalue>"
        f"<hostvalue name='mem_total'>64.0G</hostvalue><resourcevalue name='slots' "
        f"dominance='hf'>{16 - used.get(h, 0)}</resourcevalue></host>" for h in ("s1", "s2"))
    qhost = f"<?xml version='1.0'?><qhost><host name='global'></host>{hosts}</qhost>"
    snap = SgeCommands().parse_snapshot("grebe", {"queue": qstat, "hosts": qhost,
                                                  "queues": queues})
    return SiteConfig(name="grebe", scheduler="sge"), snap.model_copy(update={"taken_at": NOW})


def test_grid_engine_a_disabled_instance_closes_its_queue_on_that_host_only():
    # all.q@s1 disabled (d): s1 still runs short.q's jobs; before, the whole host was
    # taken as drained, and short.q (whose instances are both open) could not use it
    site = grebe({("all.q", "s1"): "d"}, used={"s2": 16})
    v = only(run("#$ -q short.q\n#$ -pe smp 16\n#$ -l h_rt=0:30:00", site), "grebe")
    assert (v.partition, v.verdict) == ("short.q", "READY")
    # all.q: s1 is closed to it and s2 full: it waits for s2's jobs
    v = run("#$ -q all.q\n#$ -l h_rt=0:30:00", site).verdict("grebe")
    assert v.feasible and v.verdict == "BUSY"


def test_grid_engine_a_queue_in_load_alarm_takes_no_job():
    # short.q in alarm (a) on both hosts: load above its load_threshold, Grid Engine
    # schedules nothing to it. Before, the alarm was not read: READY in short.q
    site = grebe({("short.q", "s1"): "a", ("short.q", "s2"): "a"})
    assert reasons(run("#$ -q short.q\n#$ -l h_rt=0:30:00", site), "grebe") == \
        "queue 'short.q' is ALARM"
    only(run("#$ -l h_rt=0:30:00", site), "grebe", "all.q")


def test_grid_engine_queue_in_error_or_suspended_everywhere():
    # all.q in error (E) on s1 and suspended (s) on s2: it starts no job; short.q does
    site = grebe({("all.q", "s1"): "E", ("all.q", "s2"): "s"})
    assert reasons(run("#$ -q all.q\n#$ -l h_rt=2:00:00", site), "grebe") == \
        "queue 'all.q' is DOWN"
    only(run("#$ -l h_rt=0:30:00", site), "grebe", "short.q")
    # a job of 2 h is above short.q's 1 h, and all.q takes none: refused, saying both
    why = reasons(run("#$ -l h_rt=2:00:00", site), "grebe")
    assert why == ("walltime 2:00:00 above the h_rt of every queue that is up (the "
                   "longest: short.q, 1:00:00); queue all.q (h_rt 1-00:00:00) would "
                   "take it but is DOWN")


# --------------------------------------------------------------- LSF queue status and -x

def _wren_queue_status(status: str):
    """wren with its queue's status as `bqueues` prints it."""
    import json

    from diamond_jupyter.dialects.lsf_commands import LsfCommands
    cfg, snap = wren()
    got = LsfCommands().parse_queues(json.dumps({"RECORDS": [
        {"QUEUE_NAME": "normal", "STATUS": status, "MAX": "-", "RUNLIMIT": "1440.0 min"}]}))
    snap.partitions[0].state = got[0].state
    return cfg, snap


def test_lsf_a_closed_queue_refuses_jobs_even_while_active():
    # Closed:Active: bsub refuses new jobs (the queue still runs those it has). Before,
    # "Active" in the status made it UP: READY
    p = run(lsf("ncpus>0", 8), _wren_queue_status("Closed:Active"))
    assert reasons(p, "wren") == "queue 'normal' is CLOSED"
    # Open:Inact (inactive by its run window): it takes the job but dispatches none
    p = run(lsf("ncpus>0", 8), _wren_queue_status("Open:Inact_Win"))
    assert reasons(p, "wren") == "queue 'normal' is INACTIVE"
    only(run(lsf("ncpus>0", 8), _wren_queue_status("Open:Active")), "wren", "normal")


def test_lsf_exclusive_job_waits_for_an_empty_host():
    # -x: every host runs an 8-slot job of bob's, w1's ending first (+1 h): an exclusive
    # job of 8 slots waits for it; without -x it starts now beside them
    jobs = tuple(_wjob(str(i), "bob", 8, f"w{i}", i) for i in range(1, 5))
    v = only(run("#BSUB -n 8\n#BSUB -x\n#BSUB -W 1:00", wren(*jobs)), "wren")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    v = only(run("#BSUB -n 8\n#BSUB -W 1:00", wren(*jobs)), "wren")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


# --------------------------------------------------------------- Slurm reservations

def _resv(name: str, start_h: float, end_h: float, nodes: str, flags: str = "SPEC_NODES",
          users: str = "(null)", accounts: str = "(null)", state: str = "INACTIVE") -> str:
    """One reservation as `scontrol show reservation -o` prints it."""
    def t(h: float) -> str:
        return (NOW + timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M:%S")
    return (f"ReservationName={name} StartTime={t(start_h)} EndTime={t(end_h)} "
            f"Duration={int(end_h - start_h)}:00:00 Nodes={nodes} NodeCnt=2 CoreCnt=96 "
            f"Features=(null) PartitionName=(null) Flags={flags} TRES=cpu=96 Users={users} "
            f"Groups=(null) Accounts={accounts} Licenses=(null) State={state} "
            "BurstBuffer=(null) Watts=n/a MaxStartDelay=(null)")


def rhea(*resv: str, user: str = "alice", states: dict[str, str] | None = None,
         queue: tuple[str, ...] = (), partitions: str = PARTITIONS,
         alloc: dict[str, int] | None = None):
    """olympus's nodes and partitions (compute: n1-n4, 48 CPUs each) with reservations,
    the running jobs `queue` (squeue lines) holding `alloc` CPUs by node."""
    outputs = {"partitions": partitions, "nodes": node_lines(states=states, alloc=alloc),
               "queue": "\n".join(queue),
               "reservations": "\n".join(resv) or "No reservations in the system",
               "assoc": f"user|{user}\n"}
    snap = slurm6.parse_snapshot("rhea", outputs).model_copy(update={"taken_at": NOW})
    return SiteConfig(name="rhea", metadata={"architecture": "x86_64"}), snap


MAINT = _resv("maint", 2, 6, "n[1-4]", flags="MAINT,SPEC_NODES", users="root")
COURSE = _resv("course", 1, 5, "n[3-4]", users="alice,bob")


def test_a_job_that_would_run_into_a_maintenance_reservation_waits_for_its_end():
    # maint holds n1-n4 from +2 h to +6 h. 1 h fits before it: now. 3 h would run into
    # it: Slurm starts it after, at +6 h. Before, reservations were not read: READY now
    site = rhea(MAINT)
    v = only(run("#SBATCH -p compute -N 2 -t 1:00:00", site), "rhea", "compute")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run("#SBATCH -p compute -N 2 -t 3:00:00", site), "rhea", "compute")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(6))
    # a job that gives no time limit cannot be known to end before it
    v = only(run("#SBATCH -p long -N 1", site), "rhea", "long")
    assert v.estimated_start == hours(6)


def test_a_job_of_a_reservation_runs_on_its_nodes_in_its_window():
    # course: n3-n4 for alice and bob from +1 h. Two nodes in it start at +1 h; three
    # cannot (it has two nodes)
    site = rhea(COURSE)
    v = only(run("#SBATCH -p compute -N 2 -t 1:00:00 --reservation=course", site), "rhea")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    assert any("reservation course starts at 2026-03-01 10:00" in w for w in v.waits_for)
    p = run("#SBATCH -p compute -N 3 -t 1:00:00 --reservation=course", site)
    assert "needs 3 nodes, partition compute has only 2" in reasons(p, "rhea")
    # outside it: 3 nodes of 2 h run into course on n3-n4: they wait for its end (+5 h);
    # 2 nodes take n1-n2 now
    v = run("#SBATCH -p compute -N 3 -t 2:00:00", site).verdict("rhea")
    assert v.estimated_start == hours(5)
    v = run("#SBATCH -p compute -N 2 -t 2:00:00", site).verdict("rhea")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_a_reservation_not_open_to_the_user_or_not_there_is_refused():
    p = run("#SBATCH -p compute -t 1:00:00 --reservation=course", rhea(COURSE, user="carol"))
    assert reasons(p, "rhea") == "reservation 'course' is not open to carol (its users: " \
        "alice, bob)"
    assert p.verdict("rhea").verdict == "RESTRICTED"
    p = run("#SBATCH -p compute -t 1:00:00 --reservation=nosuch", rhea(COURSE, MAINT))
    assert reasons(p, "rhea") == "reservation 'nosuch' not found (site has: course, maint)"
    # a user it denies by name (`-carol`)
    p = run("#SBATCH -p compute -t 1:00:00 --reservation=open",
            rhea(_resv("open", 0, 5, "n[3-4]", users="-carol", state="ACTIVE"), user="carol"))
    assert reasons(p, "rhea").startswith("reservation 'open' is not open to carol")


def test_a_flex_reservation_lets_its_jobs_start_early_and_use_other_nodes():
    # flexr: FLEX on n4 from +3 h: its job of 2 nodes starts now on any nodes
    site = rhea(_resv("flexr", 3, 8, "n4", flags="FLEX,SPEC_NODES", users="alice"))
    v = only(run("#SBATCH -p compute -N 2 -t 1:00:00 --reservation=flexr", site), "rhea")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_an_active_reservation_frees_its_nodes_when_it_ends():
    # now: n1-n2 reserved (ACTIVE, for bob, ending at +2 h). Four nodes wait for its end.
    # Before, reserved nodes were taken as never free: refused
    site = rhea(_resv("bobs", -1, 2, "n[1-2]", users="bob", state="ACTIVE"),
                states={"n1": "RESERVED", "n2": "RESERVED"})
    v = only(run("#SBATCH -p compute -N 3 -t 1:00:00", site), "rhea", "compute")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


# --------------------------------------------------------------- Slurm partition sharing

def test_an_exclusive_user_partition_shares_nodes_with_the_users_own_jobs_only():
    # compute is ExclusiveUser=YES. bob runs 8 CPUs on each of n1-n3 (ending +1 h, +2 h,
    # +3 h), alice 8 on n4 (+4 h). alice's 4-CPU job goes beside her own job on n4 now;
    # carol's waits for n1 to empty, +1 h. Before, ExclusiveUser was not read: carol READY
    parts = PARTITIONS.replace("MaxNodes=3 MaxTime=2-00:00:00", "ExclusiveUser=YES MaxNodes=3 "
                               "MaxTime=2-00:00:00")
    queue = (running("1", "bob", "n1", 8, 3, 4), running("2", "bob", "n2", 8, 2, 4),
             running("3", "bob", "n3", 8, 1, 4), running("4", "alice", "n4", 8, 1, 5))
    alloc = {"n1": 8, "n2": 8, "n3": 8, "n4": 8}
    v = only(run("#SBATCH -p compute -c 4 -t 1:00:00",
                 rhea(queue=queue, partitions=parts, alloc=alloc)), "rhea", "compute")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    assert has_note(v, "whose running jobs are all yours (partition compute is "
                       "ExclusiveUser=YES)")
    v = run("#SBATCH -p compute -c 4 -t 1:00:00",
            rhea(queue=queue, partitions=parts, alloc=alloc, user="carol")).verdict("rhea")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    # without ExclusiveUser carol shares n1 now
    v = run("#SBATCH -p compute -c 4 -t 1:00:00",
            rhea(queue=queue, alloc=alloc, user="carol")).verdict("rhea")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


WREN_BQUEUES_L = """QUEUE: normal
  -- For normal jobs

PARAMETERS/STATISTICS
PRIO NICE STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN SSUSP USUSP  RSV PJOBS
 30   20  Open:Active       -    -    -   16     0     0     0     0     0    0     0
"""


def test_lsf_a_queues_per_host_slot_limit():
    # normal's JL/H (HJOB_LIMIT) is 16: 32 slots on one host are above it, though w3 and
    # w4 have 64 CPUs. Before, JL/H was not read: READY
    site = wren(queue_long=WREN_BQUEUES_L)
    assert site[1].partitions[0].max_slots_per_host == 16
    p = run('#BSUB -n 32\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00', site)
    assert reasons(p, "wren") == "queue normal: needs 32 slots per host, its HJOB_LIMIT " \
        "(JL/H) is 16"
    # 16 on one host fit
    only(run('#BSUB -n 16\n#BSUB -R "span[hosts=1]"\n#BSUB -W 1:00', site), "wren")


# --------------------------------------------------------------- PBS vnodes of one host

def plover(*jobs: tuple, used: dict[str, tuple[int, int]] | None = None):
    """A PBS Pro site whose hosts h1-h2 are each split by socket into two vnodes (h1[0],
    h1[1]: 32 CPUs, 2 A100 and 128 GB each, `resources_available.host` h1), as
    `pbsnodes -a -F json` prints them; h3: one vnode of 64 CPUs, no GPU."""
    import json
    from datetime import timezone

    from diamond_jupyter.dialects.pbs_commands import PbsCommands

    def vnode(host: str, cpus: int, gpus: int, taken: tuple[int, int] = (0, 0)) -> dict:
        return {"state": "free" if taken[0] < cpus else "job-busy",
                "resources_available": {"host": host, "ncpus": cpus, "ngpus": gpus,
                                        "mem": "134217728kb",
                                        **({"gpu_model": "a100"} if gpus else {})},
                "resources_assigned": {"ncpus": taken[0], "ngpus": taken[1]}}
    nodes = {f"{h}[{i}]": vnode(h, 32, 2, (used or {}).get(f"{h}[{i}]", (0, 0)))
             for h in ("h1", "h2") for i in (0, 1)}
    nodes["h3"] = vnode("h3", 64, 0)
    queues = {"workq": {"queue_type": "Execution", "enabled": "True", "started": "True",
                        "resources_max": {"walltime": "24:00:00"}}}
    outputs = {"nodes": json.dumps({"nodes": nodes}), "queues": json.dumps({"Queue": queues}),
               "server": json.dumps({"Server": {"srv": {"default_queue": "workq"}}}),
               "queue": json.dumps({"Jobs": dict(jobs)}), "user": "alice\n"}
    snap = PbsCommands(tz=timezone.utc).parse_snapshot("plover", outputs)
    return SiteConfig(name="plover", scheduler="pbs"), snap.model_copy(
        update={"taken_at": NOW})


def test_pbs_a_chunk_takes_the_vnodes_of_one_host_together():
    # select=2:ncpus=64:ngpus=4: each chunk takes both vnodes of h1 or h2 (a chunk may span
    # the vnodes of one host). Before, each vnode was a node of 2 GPUs: refused
    cfg, snap = plover()
    assert {n.name: (n.cpus, n.gpus) for n in snap.nodes} == {
        "h1": (64, 4), "h2": (64, 4), "h3": (64, 0)}
    v = only(run("#PBS -l select=2:ncpus=64:ngpus=4\n#PBS -l walltime=1:00:00", (cfg, snap)),
             "plover", "workq")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    # three such chunks: two hosts hold GPUs
    p = run("#PBS -l select=3:ncpus=64:ngpus=4\n#PBS -l walltime=1:00:00", (cfg, snap))
    assert "they ask 12 GPUs in all, the nodes that can hold them have 8" in reasons(p, "plover")
    # a chunk never spans two hosts: 6 GPUs in one chunk fit none
    p = run("#PBS -l select=1:ncpus=8:ngpus=6", (cfg, snap))
    assert reasons(p, "plover") == "needs 6 GPUs per vnode, largest vnode has 4"


def test_pbs_a_running_job_named_by_its_host_holds_that_hosts_vnodes():
    # bob's job holds 64 CPUs and 4 GPUs of h1 (exec_host h1, ends at +2 h); a chunk of 4
    # GPUs takes h2 now, two such chunks wait for h1
    job = _pbs_job("7", "bob", "workq", 64, started_h=2, limit_h=4, host="h1", ngpus=4)
    cfg, snap = plover(job, used={"h1[0]": (32, 2), "h1[1]": (32, 2)})
    assert [(n.cpus_allocated, n.gpus_allocated) for n in snap.nodes if n.name == "h1"] == \
        [(64, 4)]
    v = only(run("#PBS -l select=1:ncpus=32:ngpus=4\n#PBS -l walltime=1:00:00", (cfg, snap)),
             "plover")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run("#PBS -l select=2:ncpus=32:ngpus=4\n#PBS -l walltime=1:00:00", (cfg, snap)),
             "plover")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(2))


# --------------------------------------------------------------- more sites, worked by hand

def test_switches_are_said_not_checked():
    # --switches=1@1:00:00: the topology is not read; the job may wait up to 1 h for one
    # leaf switch. Before, the option was silently ignored
    v = only(run("#SBATCH -p compute -N 2 --switches=1@1:00:00 -t 1:00:00", rhea()), "rhea")
    assert any(n.startswith(
        "--switches=1@1:00:00: the site's network topology is not read; under a tree "
        "topology Slurm holds the job until its nodes hang off at most 1 leaf switch, for "
        "at most 1:00:00") for n in v.not_checked), v.not_checked
    v = only(run("#SBATCH -p compute -N 2 --switches=2 -t 1:00:00", rhea()), "rhea")
    assert any("at most 2 leaf switches, for at most max_switch_wait (300 s" in n
               for n in v.not_checked), v.not_checked


def test_flux_exclusive_on_a_partly_used_node_waits_for_an_empty_one():
    # f0 runs a 4-core job (ends +1 h), f1-f3 are full until +2..+4 h: one core starts now
    # on f0; --exclusive waits for f0 to empty, +1 h
    from test_placement_cases7 import flux4

    from diamond_jupyter.model import JobState, JobStatus

    cfg, snap = flux4()
    for i, (n, c) in enumerate(zip(snap.nodes, (4, 16, 16, 16), strict=True)):
        n.cpus_allocated, n.state = c, "allocated" if c == 16 else "mixed"
        snap.jobs.append(JobStatus(native_id=f"f{i}", state=JobState.RUNNING, node_list=n.name,
                                   cpus=c, nodes=1, started_at=NOW - timedelta(hours=1),
                                   walltime_s=(i + 2) * 3600))
    v = only(run("#flux: -N 1\n#flux: -n 1\n#flux: -t 60m", (cfg, snap)), "flux")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    v = only(run("#flux: -N 1\n#flux: -n 1\n#flux: --exclusive\n#flux: -t 60m", (cfg, snap)),
             "flux")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))


def test_grid_engine_exclusive_host_waits_for_an_empty_one():
    # every host of sge4 runs a 2-slot job, s1's ending first (+1 h): exclusive=true
    # waits for it; a plain job starts now beside them
    from test_placement_cases7 import sge4

    from diamond_jupyter.model import JobState, JobStatus

    cfg, snap = sge4()
    for i, n in enumerate(snap.nodes):
        n.cpus_allocated, n.state = 2, "mixed"
        snap.jobs.append(JobStatus(native_id=f"s{i}", state=JobState.RUNNING, node_list=n.name,
                                   cpus=2, nodes=1, partition="all.q", walltime_s=(i + 2) * 3600,
                                   started_at=NOW - timedelta(hours=1)))
    v = only(run("#$ -l exclusive=true\n#$ -l h_rt=1:00:00", (cfg, snap)), "sge", "all.q")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    v = only(run("#$ -l h_rt=1:00:00", (cfg, snap)), "sge", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_mem_zero_takes_a_whole_node_of_a_partition_with_memory_in_use():
    # --mem=0: all of a node's memory, so a node whose running job holds some waits. bob
    # holds 8 CPUs and 100 GB on n1 (ends +1 h); n2-n4 are idle: 3 nodes start now, 4 at +1 h
    queue = (running("1", "bob", "n1", 8, 3, 4),)
    site = rhea(queue=queue, alloc={"n1": 8})
    v = only(run("#SBATCH -p compute -N 3 --mem=0 -t 1:00:00", site), "rhea")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    p = run("#SBATCH -p compute -N 4 --mem=0 -t 1:00:00", site)
    assert "at most 3" in reasons(p, "rhea")  # compute's MaxNodes=3
    # -w n1 makes n1 one of its three nodes: it waits for bob's job, +1 h. Before, a
    # --nodelist shorter than the node count was not held to: READY on n2-n4
    v = only(run("#SBATCH -p compute -N 3 --mem=0 -t 1:00:00 -w n1", site), "rhea")
    assert (v.verdict, v.estimated_start) == ("BUSY", hours(1))
    assert has_note(v, "the nodes --nodelist names find room with the others it asks at "
                       "+1:00:00")
    # without --mem=0 three nodes of 8 CPUs fit beside bob's job now, n1 among them
    v = only(run("#SBATCH -p compute -N 3 -c 8 -t 1:00:00 -w n1", site), "rhea")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)


def test_a_feature_a_reboot_makes_active_is_asked_of_the_node_and_said():
    # KNL nodes k1-k2: AvailableFeatures knl,quad,snc4,cache,flat, ActiveFeatures
    # knl,quad,cache. -C flat gets a node rebooted into flat mode (node_features plugin).
    # Before, only ActiveFeatures were read: refused, "no node has feature flat"
    line = ("NodeName={n} Arch=x86_64 CoresPerSocket=68 CPUAlloc=0 CPUEfctv=272 CPUTot=272 "
            "AvailableFeatures=knl,quad,snc4,cache,flat ActiveFeatures=knl,quad,cache "
            "Gres=(null) GresUsed=gpu:0 RealMemory=96000 AllocMem=0 Sockets=1 "
            "ThreadsPerCore=4 State=IDLE Weight=1 Partitions=knl")
    parts = ("PartitionName=knl AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL Default=YES "
             "MaxTime=1-00:00:00 Nodes=k[1-2] State=UP OverSubscribe=NO PreemptMode=OFF\n")
    outputs = {"partitions": parts, "nodes": "\n".join(line.format(n=f"k{i}") for i in (1, 2)),
               "queue": ""}
    snap = slurm6.parse_snapshot("knl", outputs).model_copy(update={"taken_at": NOW})
    site = (SiteConfig(name="knl", metadata={"architecture": "x86_64"}), snap)
    v = only(run("#SBATCH -C flat -N 1 -t 1:00:00", site), "knl", "knl")
    assert has_note(v, "feature flat not active on the nodes of knl that can run it (k1, k2): "
                       "Slurm reboots them into it first")
    # an active one: no reboot said
    v = only(run("#SBATCH -C cache -N 1 -t 1:00:00", site), "knl", "knl")
    assert not has_note(v, "reboots")
    # a feature it has in no mode: refused, naming every mode the site offers
    assert reasons(run("#SBATCH -C mcdram", site), "knl") == \
        "missing feature 'mcdram' (site offers: cache, flat, knl, quad, snc4)"


def test_grid_engine_a_subordinated_instance_is_closed_on_its_host_only():
    # all.q is subordinate to a priority queue: while that runs jobs on s1, all.q@s1 is
    # suspended by subordination (S). A 16-slot all.q job takes s2 now; with s2 full it
    # waits, where before (the host taken as drained) it was the same but short.q lost s1
    site = grebe({("all.q", "s1"): "S"})
    v = only(run("#$ -q all.q\n#$ -pe smp 16\n#$ -l h_rt=2:00:00", site), "grebe", "all.q")
    assert (v.verdict, v.estimated_start) == ("READY", NOW)
    site = grebe({("all.q", "s1"): "S"}, used={"s2": 16})
    v = run("#$ -q all.q\n#$ -pe smp 16\n#$ -l h_rt=2:00:00", site).verdict("grebe")
    assert v.feasible and v.verdict == "BUSY"
    v = only(run("#$ -q short.q\n#$ -pe smp 16\n#$ -l h_rt=0:30:00", site), "grebe")
    assert (v.partition, v.verdict) == ("short.q", "READY")  # s1 for short.q
