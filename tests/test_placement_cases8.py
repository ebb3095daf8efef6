"""Placement cases worked by hand, eighth sweep: a PBS job of several chunk shapes placed
chunk by chunk (the start when all find room at once); the components of a Slurm
heterogeneous job that wait held against each other; LSF `select[]` terms read from the
hosts' recorded outputs; the memory of running jobs in a Slurm QOS's `mem` TRES; then more
sites of every scheduler. Each case asserts the verdict per site, the partition chosen,
the start and that the reason names the real cause."""

from __future__ import annotations

from datetime import timedelta

from test_placement_cases import NOW, hera, only, reasons, run
from test_placement_cases5 import busy
from test_placement_cases6 import _pbs_job, kestrel


def has_note(v, text: str) -> bool:
    return any(text in n for n in v.notes)


def hours(h: float):
    return NOW + timedelta(hours=h)


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
    assert has_note(v, "its chunks find room all at once at +4:00:00")


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
        "(scatter placement); chunk 2 (6:ncpus=4) is the one left without a host")


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
