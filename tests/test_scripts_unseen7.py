"""A seventh set of realistic batch scripts (tests/fixtures/scripts_unseen7/<dialect>/), and
PBS chunk lists of several shapes read as what they are.

The chunk lists first: `-l select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32` (a head node
and workers), three different chunks, Torque `nodes=` lists of different shapes were read
as their largest shape on every node (five nodes of 32 tasks with 64 GB each, where the job
asks for 129 tasks and 64 GB). They are now a job of several shapes (`JobSpec.components`):
its totals summed over the chunks, a Slurm heterogeneous job (`#SBATCH hetjob`), PBS chunks
as written, and for LSF, flux and Grid Engine (one shape each) the totals spread evenly and
rounded down, said in a warning. A Slurm hetjob whose later components ask only for sizes
is read the same way.

The fixtures: see the EXPECTED table's comments. Each is parsed, its needs read, translated
into every dialect (its own too) and read back; the key values are what each scheduler's
documentation says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import (
    SCRIPT_DIALECTS,
    get_script_dialect,
    request_totals,
    translate,
)
from diamond_jupyter.needs import needs_of
from tests.scripts_unseen_check import (
    ALL_STRICT,
    check_translation,
    sweep_tests,
)

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen7"
G = 1024  # MB in a GB

# As in test_scripts_unseen6: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields; `needs_gpus`/`needs_mem` per node (needs_of); `per_cpu` the spec's memory per CPU;
# `node_mem` the spec's memory per node; `notes` words a parse note must hold; `ignored`
# how many directives the reader noted as ignored.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- Slurm
    # --gres=gpu:a100:1 is per node; --container (an OCI bundle), --wckey, --acctg-freq
    # and --profile have no neutral form: kept
    "slurm/alphafold_container_wckey_profile.sbatch": dict(
        cpus=8, gpus=1, needs_gpus=1, gpu_type="a100", memory_mb=120 * G, needs_mem=120 * G,
        walltime=2 * 86400, name="af2_multimer", queue="gpu",
        unknown=["--container", "--wckey", "--acctg-freq", "--profile"]),
    # --export=NONE: none of the submitting shell's variables; --mem without a unit is MB
    "slurm/bridges2_gnu_parallel_export_none.sbatch": dict(
        nodes=1, tasks=64, cpus=64, memory_mb=128000, needs_mem=128000, walltime=5 * 3600,
        name="parallel sweep", queue="RM-shared", export_all=False,
        unknown=["--get-user-env"]),
    # --mem-per-cpu=2000M x 8 tasks x 4 CPUs; the background steps and `wait` are body
    "slurm/cc_background_steps_wait.sbatch": dict(
        nodes=2, tasks=8, cpus=32, memory_mb=32 * 2000, per_cpu=2000, walltime=3 * 3600,
        name="ensemble", account="def-smith", stdout="%x-%j.out"),
    # a value after a blank (--time 4:00:00), a bracketed OR of features, --switches kept
    "slurm/dask_switches_constraint_brackets.sbatch": dict(
        nodes=4, tasks=4, cpus=512, walltime=4 * 3600, name="dask-cluster",
        stdout="dask-%j.log", output_mode="append", features=["[rack1|rack2]"],
        unknown=["--switches"]),
    # comments after the values; `# SBATCH` (a blank after #) is a comment; the indented
    # `  #SBATCH --mail-user` is a comment to sbatch too (ignored, noted)
    "slurm/frontera_comments_spaced_indented.sbatch": dict(
        nodes=4, tasks=224, cpus=224, walltime=86400, name="namd_apoa1",
        stdout="namd_apoa1.o%j", stderr="namd_apoa1.e%j", queue="normal",
        account="TG-MCB123456", mail_user=None, ignored=1, notes=["indented"]),
    # -S is --core-spec; --threads-per-core and --mem-bind kept
    "slurm/frontier_closest_core_spec_mem_bind.sbatch": dict(
        nodes=8, tasks=64, cpus=64, gpus=64, needs_gpus=8, walltime=2700, gpu_bind="closest",
        name="lammps_kokkos", queue="batch", account="CSC999", stdout="%x-%j.out",
        unknown=["--threads-per-core", "--core-spec", "--mem-bind"]),
    # two components of sizes only: 1 x (1 task, 16 CPUs, 64G) + 2 x (4 tasks, 4 GPUs, 200G);
    # each node must hold the larger (4 GPUs, 200G)
    "slurm/hetjob_sizes_het_group.sbatch": dict(
        nodes=3, tasks=9, cpus=24, gpus=8, needs_gpus=4, memory_mb=(64 + 400) * G,
        needs_mem=200 * G, walltime=5400, name="ps_workers", account="proj01",
        notes=["heterogeneous job of 2 components"]),
    # every long option with its value after blanks; --mem 180G per node
    "slurm/julia_distributed_ntasks_space.sbatch": dict(
        nodes=3, tasks=144, cpus=144, memory_mb=3 * 180 * G, needs_mem=180 * G,
        walltime=8 * 3600, name="julia-dist", queue="standard", account="proj_jl",
        stdout="julia-%j.out", stderr="julia-%j.err"),
    # --mem=0: all of each node's memory (no count); whole nodes
    "slurm/lumi_small_g_gpus_exclusive_mem0.sbatch": dict(
        nodes=2, tasks=16, cpus=112, gpus=16, needs_gpus=8, node_mem=0, walltime=12 * 3600,
        exclusive=True, name="pytorch-ddp", queue="standard-g", account="project_465000123"),
    # -t 720 is minutes; 3800 MB per CPU x 2 tasks x 24 CPUs
    "slurm/matlab_sockets_block_cyclic.sbatch": dict(
        nodes=1, tasks=2, cpus=48, memory_mb=48 * 3800, per_cpu=3800, walltime=12 * 3600,
        distribution="block:cyclic", name="matlab_parfor",
        unknown=["--ntasks-per-socket", "--cores-per-socket"]),
    # non-ASCII comments before the directives; --parsable (sbatch's output) kept
    "slurm/nextflow_head_long_queue_nonascii.sbatch": dict(
        cpus=2, memory_mb=8 * G, needs_mem=8 * G, walltime=3 * 86400, name="nf-rnaseq-head",
        queue="long", qos="long", stdout="nf-%j.log", deps=[("afterok", ["81234567"])],
        unknown=["--parsable"]),
    # sbatch ends a line at an unquoted `#`, inside a word too: the options after one are
    # comments (`-N 4`, `--cpus-per-task=2`); 1900M per CPU x 96 tasks
    "slurm/options_after_hash_comment.sbatch": dict(
        nodes=2, tasks=96, cpus=96, memory_mb=96 * 1900, per_cpu=1900, walltime=12 * 3600,
        name="qe-phonons", queue="compute", account="chem_qe"),
    # --gpus-per-task=1 x 4 tasks a node; -C gpu is a feature
    "slurm/perlmutter_gpus_per_task_bind.sbatch": dict(
        nodes=2, tasks=8, cpus=256, gpus=8, needs_gpus=4, walltime=7200, gpu_bind="none",
        account="m4321_g", qos="regular", features=["gpu"]),
    # the last --time, --partition, -n and --mail-user win; --mail-type adds up
    "slurm/repeated_options_last_wins.sbatch": dict(
        tasks=16, cpus=16, walltime=7200, queue="regular",
        mail_events=["begin", "end", "fail"], mail_user="second@lab.example"),
    # -d with two ids; at most one array task at a time
    "slurm/snakemake_driver_array_deps.sbatch": dict(
        cpus=1, memory_mb=4 * G, per_cpu=4 * G, walltime=86400, array="1-3%1",
        deps=[("afterany", ["5521001", "5521002"])], name="smk-driver", queue="main",
        unknown=["--kill-on-invalid-dep"]),
    # a line of many options with a quoted comment, a 400-character --export
    "slurm/very_long_lines_export.sbatch": dict(
        tasks=1, cpus=4, memory_mb=16 * G, needs_mem=16 * G, walltime=6 * 3600,
        name="param_study", queue="shared", account="ees230017", stdout="param_study-%j.out",
        comment="parameter study for the 2024 calibration campaign, forty inputs passed "
                "through the environment, see README.md", export_all=True,
        variables={f"PARAM_{i:02d}": str(i * 37 % 101) for i in range(40)}),
    # ---------------------------------------------------------------- PBS Pro / Torque
    "pbs/derecho_place_group_rack_depend.pbs": dict(
        nodes=8, tasks=256, cpus=1024, memory_mb=8 * 230 * G, needs_mem=230 * G,
        walltime=6 * 3600, name="wrf_conus", queue="main", account="UCSU0001",
        deps=[("afterok", ["1234567.desched1"])],
        unknown=["-l", "-l select:ompthreads", "-l place:scatter", "-l place:group=rack"]),
    # job-wide ncpus and mem (NCI Gadi spreads them over whole nodes); -P (project),
    # jobfs, storage and wd kept
    "pbs/gadi_ncpus_jobfs_storage_wd.pbs": dict(
        cpus=96, memory_mb=380 * G, walltime=10 * 3600, name="qe_relax", queue="normal",
        unknown=["-P", "-l", "-l", "-l"]),
    # chunks of a site resource only (system=polaris): 4 nodes, their CPUs the server's
    "pbs/polaris_filesystems_place_scatter.pbs": dict(
        nodes=4, walltime=1800, name="mpi_gpu_affinity", queue="debug-scaling",
        account="Catalyst", unknown=["-l select:system", "-l place:scatter", "-l", "-k"]),
    # two chunk shapes: a head with 64gb and 4 x 32 ranks; an empty #PBS line; -J's %8
    "pbs/pro_head_workers_array_throttle_blank.pbs": dict(
        nodes=5, tasks=129, cpus=136, memory_mb=64 * G, needs_mem=64 * G, walltime=4 * 3600,
        array="1-100%8", name="ensemble_head", queue="workq", stdout="ensemble.out",
        unknown=["-W"], notes=["(2 chunks) read as a job of 2 shapes"]),
    "pbs/pro_rscript_v_list_sandbox.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=8 * G, needs_mem=8 * G, walltime=1200,
        name="r_analysis", variables={"INPUT": "cohort2024.csv", "NCORES": "4"},
        unknown=["-S", "-W", "-k"]),
    # three chunk shapes summed; walltime in seconds; -m abe
    "pbs/pro_three_chunks_seconds_block.pbs": dict(
        nodes=5, tasks=386, cpus=420, gpus=2, needs_gpus=2,
        memory_mb=(32 + 3 * 480 + 240) * G, needs_mem=480 * G, walltime=7200,
        name="openfoam_coupled", requeue=False, mail_events=["fail", "begin", "end"],
        mail_user="cfd.user@univ.example", unknown=["-S", "-W"],
        notes=["(3 chunks) read as a job of 3 shapes"]),
    # -t with a throttle; pmem is per process
    "pbs/torque_array_throttle_seconds_pmem.pbs": dict(
        nodes=1, tasks=8, cpus=8, memory_mb=8 * 4 * G, per_cpu=4 * G, walltime=5400,
        array="0-19%4", name="bwa_map", queue="batch", stdout="logs/",
        mail_events=["fail", "end"], mail_user="bio@uni.example"),
    # three node shapes; mem=96gb is the job's, spread over its 4 nodes
    "pbs/torque_three_shapes_job_mem.pbs": dict(
        nodes=4, tasks=50, cpus=50, gpus=1, needs_gpus=1, memory_mb=96 * G, walltime=36000,
        name="mixed_nodes", queue="batch", working_directory="/scratch/lab/mixed",
        unknown=["-k"], notes=["(3 chunks) read as a job of 3 shapes"]),
    # ---------------------------------------------------------------- LSF
    # affinity[core(2)]: 2 cores a task; rusage[mem] per slot (MB); select and order kept
    "lsf/affinity_core2_select_order.lsf": dict(
        nodes=2, tasks=16, cpus=32, memory_mb=16 * 4000, walltime=6 * 3600,
        name="hybrid_omp", queue="normal", stdout="%j.out", stderr="%j.err",
        unknown=["-R select", "-R order"]),
    # -P is the project (account), -Jd the description; -cwd the working directory
    "lsf/app_project_Jd_cwd_outdir.lsf": dict(
        tasks=1, cpus=1, walltime=1800, name="gauss_opt", account="chem_proj",
        comment="B3LYP optimisation, batch 7", working_directory="/scratch/%U/g16/batch7",
        stdout="%j.log", unknown=["-app", "-outdir"]),
    # done(ID) is afterok; -ptl (pending time limit) kept; rusage 2GB per slot
    "lsf/array_ptl_done_dependency.lsf": dict(
        nodes=1, tasks=2, cpus=2, memory_mb=2 * 2 * G, per_cpu=2 * G, walltime=2700,
        array="1-50%5", deps=[("afterok", ["12345"])], name="ens", stdout="out.%j.%a",
        stderr="err.%j.%a", unknown=["-ptl"]),
    # -gpu num is per host; -M 12GB per process x 4
    "lsf/gpu_mps_exclusive_M_units.lsf": dict(
        nodes=1, tasks=4, cpus=4, gpus=4, needs_gpus=4, memory_mb=4 * 12 * G, per_cpu=12 * G,
        walltime=12 * 3600, exclusive=True, name="md_mps", queue="gpu",
        unknown=["-gpu mode", "-gpu mps"], notes=["-M 12GB"]),
    # -nnodes (CSM) whole nodes; -W 120 is minutes; -G (fair-share group) and -alloc_flags
    "lsf/lassen_nnodes_alloc_flags_jsrun.lsf": dict(
        nodes=4, walltime=7200, name="sw4_run", queue="pbatch", stdout="sw4.%j.out",
        unknown=["-G", "-alloc_flags"]),
    # -q with two queues (the first that takes it); -env none; -B and -N mail
    "lsf/queue_list_env_none_mail.lsf": dict(
        nodes=1, tasks=8, cpus=8, walltime=7200, name="matlab_batch", queue="short,normal",
        export_all=False, mail_events=["begin", "end"], mail_user="matlab.user@uni.example"),
    # -M without a unit: MB (LSF_UNIT_FOR_LIMITS=MB, noted); -We and -L kept
    "lsf/span_hosts_M_no_unit_We.lsf": dict(
        nodes=1, tasks=12, cpus=12, memory_mb=12 * 48000, per_cpu=48000, walltime=6 * 3600,
        name="blast_db", unknown=["-We", "-L"], notes=["-M 48000"]),
    # ---------------------------------------------------------------- Flux
    "flux/afterany_dependency_minutes_urgency.flux": dict(
        tasks=8, cpus=16, walltime=1800, deps=[("afterany", ["fBsJ3m9cq2V"])],
        name="collect", stderr="collect.%j.err", unknown=["--urgency"]),
    # --conf, -o (setopt) and a user attribute kept; --requires is a property
    "flux/conf_requires_setopt_mpibind.flux": dict(
        nodes=2, tasks=8, cpus=192, walltime=5400, features=["rack3"],
        unknown=["--conf", "--setopt", "--setattr"]),
    # -N 4 alone: a slot per node, whole nodes; -S bank=... is system.bank
    "flux/elcap_exclusive_flux_run.flux": dict(
        nodes=4, tasks=4, cpus=4, walltime=7200, exclusive=True, name="hydro_scaling",
        queue="pbatch", account="guests", stdout="hydro.%j.out"),
    "flux/submit_cc_job_wait.flux": dict(
        tasks=10, cpus=40, walltime=3 * 3600, name="sweep-driver", queue="pbatch"),
    # `# FLUX:` on every directive (one sentinel, as flux batch requires), a comment between
    "flux/uppercase_sentinel_spaced.flux": dict(
        nodes=1, tasks=1, cpus=32, walltime=2700, name="ensemble-post",
        variables={"OMP_NUM_THREADS": "32"}),
    # ---------------------------------------------------------------- Grid Engine
    # h_vmem per slot (5G x 8); -binding and tmp_free kept
    "sge/binding_linear_smp_cwd.sge": dict(
        nodes=1, cpus=8, memory_mb=8 * 5 * G, per_cpu=5 * G, walltime=6 * 3600,
        name="star_index", mail_events=["end"], mail_user="genomics@uni.example",
        unknown=["-binding", "-l tmp_free"]),
    # -hard/-soft scopes: the soft arch is a preference (kept), the hard ones are read
    "sge/ckpt_rerun_soft_hard.sge": dict(
        nodes=1, cpus=8, memory_mb=8 * 4 * G, per_cpu=4 * G, walltime=48 * 3600,
        name="long_md", requeue=True, mail_events=["begin", "end", "fail"],
        mail_user="md.user@uni.example",
        unknown=["-ckpt", "-hard", "-soft", "-soft -l", "-hard"], notes=["preference"]),
    "sge/masterq_pe_rr_js.sge": dict(
        tasks=64, cpus=64, memory_mb=64 * 2 * G, per_cpu=2 * G, walltime=12 * 3600,
        name="mpi_rr", stdout="mpi_rr.%j.out", stderr="mpi_rr.%j.err",
        unknown=["-masterq", "-js"]),
    # -l gpu=1 (the job's); -P (project) kept
    "sge/matlab_V_v_S_gpu.sge": dict(
        gpus=1, needs_gpus=1, memory_mb=8 * G, per_cpu=8 * G, walltime=7200,
        name="matlab_gpu", queue="gpu.q", stdout="logs/", export_all=True,
        variables={"MCR_CACHE_ROOT": "/tmp/mcr_cache", "MATLAB_PREFDIR": "/tmp/prefs"},
        unknown=["-P"]),
    # exclusive=true is the host to itself; mem_free (a load value), -R y, -notify kept
    "sge/mem_free_exclusive_reserve_notify.sge": dict(
        nodes=1, cpus=16, walltime=86400, exclusive=True, name="abaqus_std",
        memory_mb=256 * G, per_cpu=16 * G, unknown=["-R", "-notify"]),
    # -tc is the array's running limit; -sync and -w e (qsub's own behaviour) kept
    "sge/sync_verify_array_tc.sge": dict(
        memory_mb=6 * G, per_cpu=6 * G, walltime=1800, array="1-200%20", name="kmer_count",
        stdout="logs/%x.%j.%a.out", unknown=["-sync", "-w"]),
}

_FIELDS = ("name", "queue", "account", "qos", "reservation", "stdout", "stderr", "requeue",
           "comment", "mail_events", "mail_user", "working_directory", "output_mode")

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=ALL_STRICT)


# ---------------------------------------------------------------- chunk lists of several shapes

_CHUNKS = [
    # a head node with memory and four MPI workers
    ("select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32",
     dict(nodes=5, tasks=129, cpus=136, gpus=None, memory_mb=64 * G)),
    # three different chunks: a small head, CPU workers, one GPU node
    ("select=1:ncpus=4:mem=16gb+2:ncpus=64:mpiprocs=64:mem=200gb+1:ncpus=16:ngpus=4:mem=100gb",
     dict(nodes=4, tasks=130, cpus=148, gpus=4, memory_mb=(16 + 400 + 100) * G)),
    # hybrid MPI+OpenMP workers (4 CPUs a rank) and a post-processing chunk
    ("select=2:ncpus=64:mpiprocs=16:mem=128gb+1:ncpus=8:mpiprocs=8:mem=32gb",
     dict(nodes=3, tasks=40, cpus=136, gpus=None, memory_mb=288 * G)),
    # Torque: different ppn and GPUs per node, one job-wide memory
    ("nodes=1:ppn=4:gpus=2+3:ppn=16",
     dict(nodes=4, tasks=52, cpus=52, gpus=2, memory_mb=None)),
]


@pytest.mark.parametrize(("select", "totals"), _CHUNKS)
def test_pbs_chunks_of_different_shapes_are_their_sums(select: str,
                                                       totals: dict[str, Any]) -> None:
    """Chunks that differ were read as as many nodes as all of them, each of the largest
    chunk's size (`select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32`: 160 tasks and 320 GB
    where the job asks for 129 tasks and 64 GB; every translation then refused or asked for
    more). Now the job's totals are the chunks' sums; placement still asks each node for
    the largest chunk (the resources)."""
    text = f"#!/bin/bash\n#PBS -l {select}\n#PBS -l walltime=02:00:00\n./run\n"
    spec = get_script_dialect("pbs").parse_script(text)
    assert request_totals(spec) == totals
    assert len(spec.components) == select.count("+") + 1
    assert any("read as a job of" in n for n in spec.metadata["parse_notes"])
    # the PBS round trip keeps the chunks as written
    own = translate(text, "pbs", "pbs")[0]
    assert f"#PBS -l {select}" in own.splitlines()
    # Slurm: a heterogeneous job, one component a chunk, read back with the same totals
    script, warnings, _ = translate(text, "slurm", "pbs")
    assert script.count("#SBATCH hetjob") == select.count("+")
    back = get_script_dialect("slurm").parse_script(script)
    assert request_totals(back) == totals and back.unknown == []
    assert back.resources.walltime_s == 7200
    # each node must still hold the largest chunk (placement's question)
    assert needs_of(back).gpus == needs_of(spec).gpus
    for target in SCRIPT_DIALECTS:
        check_translation(text, "pbs", target)


@pytest.mark.parametrize("target", ["flux", "sge"])
def test_a_job_of_several_shapes_reaches_one_shape_schedulers_said(target: str) -> None:
    """flux and Grid Engine ask for one shape (LSF since the eighth sweep gets a compound
    resource requirement, tests/test_scripts_unseen8.py): the nodes and tasks as they are, the
    CPUs, GPUs and memory spread evenly and rounded down, in one warning naming the shapes
    (they refused the translation: the largest shape on every node is more than asked)."""
    text = ("#!/bin/bash\n#PBS -l select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32\n"
            "#PBS -l walltime=1:00:00\n./run\n")
    script, warnings, spec = translate(text, target, "pbs")
    said = [w for w in warnings if w.startswith("approximated: a job of 2 shapes")]
    assert len(said) == 1, warnings
    assert "1 node, 1 task, 8 CPUs, 65536MB of memory + 4 nodes, 128 tasks, 128 CPUs" in said[0]
    assert "CPUs 136 -> 129" in said[0]
    back = request_totals(get_script_dialect(target).parse_script(script))
    assert back["tasks"] == 129
    assert all(back[q] is None or back[q] <= request_totals(spec)[q] for q in back)


def test_slurm_hetjob_of_sizes_is_a_job_of_several_shapes() -> None:
    """A hetjob whose later components ask only for sizes was read as its first component
    alone (placement and every translation saw one node of 8 CPUs); now its totals are the
    components' sums, PBS gets a chunk per component, and its own Slurm the same job."""
    text = ("#!/bin/bash\n#SBATCH --job-name=coupled --time=02:00:00\n"
            "#SBATCH -N 1 -n 1 -c 8 --mem=64G\n#SBATCH hetjob\n"
            "#SBATCH --nodes=4 --ntasks-per-node=32 --gpus-per-node=a100:4\n"
            "srun ./a : ./b\n")
    spec = get_script_dialect("slurm").parse_script(text)
    # the later component asks no memory: sbatch carries the first's --mem into it
    # (tests/test_sweep15_followups.py)
    assert request_totals(spec) == dict(nodes=5, tasks=129, cpus=136, gpus=16,
                                        memory_mb=5 * 64 * G)
    assert spec.unknown == [] and spec.resources.gpu_type == "a100"
    assert needs_of(spec).gpus == 4 and needs_of(spec).gpu_type == "a100"
    pbs = translate(text, "pbs", "slurm")[0]
    assert "#PBS -l select=1:ncpus=8:mpiprocs=1:mem=64gb+4:ncpus=32:mpiprocs=32:ngpus=4:" \
        "mem=64gb" \
        in pbs.splitlines()
    own, warnings, _ = translate(text, "slurm", "slurm")
    assert "#SBATCH hetjob\n#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=32\n" \
        "#SBATCH --gpus-per-node=a100:4" in own
    assert not any("GPU type" in w for w in warnings), warnings
    for target in SCRIPT_DIALECTS:
        check_translation(text, "slurm", target)
    # a later component with options of its own (a user-exclusive allocation) is still
    # kept as written (its plain --exclusive is read since tests/test_placement_cases12.py)
    other = text.replace("--gpus-per-node=a100:4", "--gpus-per-node=a100:4 --exclusive=user")
    kept = get_script_dialect("slurm").parse_script(other)
    assert kept.components == [] and [d.option for d in kept.unknown][:2] == \
        ["hetjob", "--nodes"]


def test_a_changed_request_is_one_shape_again() -> None:
    """A face that changes a job of several shapes (`--memory`) makes it one shape: the
    components no longer count, the resources are rendered."""
    from diamond_jupyter.needs import with_options

    spec = get_script_dialect("pbs").parse_script(
        "#!/bin/bash\n#PBS -l select=1:ncpus=8+2:ncpus=4:mpiprocs=4\n./run\n")
    assert request_totals(spec)["tasks"] == 9
    changed = with_options(spec, memory="8G")
    assert request_totals(changed) == dict(nodes=3, tasks=12, cpus=24, gpus=None,
                                           memory_mb=3 * 8 * G)
    assert "+" not in get_script_dialect("pbs").render_script(changed).script


@pytest.mark.parametrize(("target", "line"), [
    ("slurm", "#SBATCH --array=1-100%8"), ("lsf", "#BSUB -J array[1-100]%8"),
    ("sge", "#$ -tc 8"), ("pbs", "#PBS -J 1-100%8")])
def test_pbs_pro_array_throttle_is_kept(target: str, line: str) -> None:
    """PBS Pro's `-J 1-100%8` (at most 8 subjobs at once): the limit reaches every
    scheduler that has one; flux (no arrays in flux batch) says the array is dropped."""
    text = "#!/bin/bash\n#PBS -J 1-100%8\n#PBS -l select=1:ncpus=1\n./run\n"
    assert line in translate(text, target, "pbs")[0].splitlines()
    warnings = translate(text, "flux", "pbs")[1]
    assert any(w.startswith("dropped: array 1-100%8") for w in warnings)


def test_an_indented_sbatch_line_is_a_comment() -> None:
    """sbatch reads a directive only where a line starts with `#SBATCH` (src/sbatch/opt.c
    compares the line's first characters; other lines starting with white space then `#`
    are comments). An indented `  #SBATCH --time=48:00:00` was read as a directive: the
    job got a limit sbatch never sets, and every translation carried it. Now it is noted
    as ignored and stays in the body as the comment it is."""
    text = ("#!/bin/bash\n#SBATCH -N 1 -n 4\n  #SBATCH --time=48:00:00\n"
            "\t#SBATCH --partition=long\n#SBATCH -J ok\nsrun ./a\n")
    spec = get_script_dialect("slurm").parse_script(text)
    assert (spec.resources.walltime_s, spec.queue, spec.name) == (None, None, "ok")
    notes = [n for n in spec.metadata["parse_notes"] if "indented" in n]
    assert [n.split(":")[0] for n in notes] == ["line 3", "line 4"]
    assert "  #SBATCH --time=48:00:00" in (spec.script or "")
    # only indented lines: no directive sbatch reads
    from diamond_jupyter.dialects.translate import detect_dialect
    from diamond_jupyter.model import BadInput
    with pytest.raises(BadInput, match="no batch directives"):
        detect_dialect("#!/bin/bash\n  #SBATCH -N 2\nsrun ./a\n")


def test_slurm_a_repeated_export_is_the_last_one() -> None:
    """sbatch keeps the last `--export` whole (a string option: the later value replaces
    the earlier). The reader merged them: `--export=A=1,C` then `--export=ALL,B=2` gave
    the job A=1 and C too, which sbatch never passes. A repeated `--mail-type` adds up
    (sbatch ORs the events), each event once (BEGIN twice was listed twice)."""
    text = ("#!/bin/bash\n#SBATCH --export=A=1,C\n#SBATCH --export=ALL,B=2\n"
            "#SBATCH --mail-type=BEGIN\n#SBATCH --mail-type=BEGIN,END\n"
            "#SBATCH --mail-type=NONE\n./a\n")
    spec = get_script_dialect("slurm").parse_script(text)
    env = spec.environment
    assert (env.export_all, env.variables, env.passed) == (True, {"B": "2"}, [])
    assert spec.mail_events == ["begin", "end"]
    own = translate(text, "slurm", "slurm")[0].splitlines()
    assert "#SBATCH --export=ALL,B=2" in own and "#SBATCH --mail-type=BEGIN,END" in own
    # a later value that cannot be read is kept alone, the earlier one gone
    odd = get_script_dialect("slurm").parse_script(
        "#!/bin/bash\n#SBATCH --export=A=1\n#SBATCH --export=ALL,=x\n./a\n")
    assert odd.environment.variables == {} and [d.value for d in odd.unknown] == ["ALL,=x"]


@pytest.mark.parametrize(("lines", "back"), [
    ("#PBS -l ncpus=96\n#PBS -l mem=380GB", ["#PBS -l ncpus=96", "#PBS -l mem=380gb"]),
    ("#PBS -l ncpus=16\n#PBS -l ngpus=2", ["#PBS -l ncpus=16", "#PBS -l ngpus=2"]),
])
def test_pbs_job_wide_resources_come_back_job_wide(lines: str, back: list[str]) -> None:
    """`-l ncpus=96 -l mem=380GB` asks for the job's CPUs and memory, shaped by the server
    (NCI Gadi spreads them over whole 48-core nodes). The script's own PBS got
    `select=1:ncpus=96:mem=380gb` back: one host of 96 CPUs (none exists there), read back
    as one node and one task where the script named neither. Now written back job-wide."""
    text = f"#!/bin/bash\n{lines}\n#PBS -l walltime=1:00:00\n./a\n"
    own = translate(text, "pbs", "pbs")[0].splitlines()
    assert all(x in own for x in back) and not any("select=" in x for x in own), own
    spec = get_script_dialect("pbs").parse_script(text)
    assert request_totals(get_script_dialect("pbs").parse_script("\n".join(own))) == \
        request_totals(spec)
    # from another scheduler, one chunk as before
    assert "#PBS -l select=1:ncpus=8" in translate(
        "#!/bin/bash\n#SBATCH -c 8\n./a\n", "pbs", "slurm")[0].splitlines()


@pytest.mark.parametrize(("dialect", "line", "outcome"), [
    ("slurm", "#SBATCH -N 2 -n=4", "bad number '=4'"),
    ("slurm", "#SBATCH -J=run1", "=run1"),
    ("pbs", "#PBS -N=run", "=run"),
    ("flux", "#flux: -n=4", 4),
])
def test_a_short_option_glued_to_an_equals_sign(dialect: str, line: str,
                                                outcome: str | int) -> None:
    """sbatch and qsub read their short options with getopt: `-n=4` gives the option
    everything after the letter, "=4" (sbatch: "Invalid numeric value"), and `-J=run1`
    names the job "=run1". The readers dropped the "=" and took 4 tasks and the name run1.
    flux's argparse does split `-n=4` at the "=": 4 there, as before."""
    from diamond_jupyter.model import BadInput

    text = f"#!/bin/bash\n{line}\n./a\n"
    if isinstance(outcome, str) and outcome.startswith("bad"):
        with pytest.raises(BadInput, match=rf"line 2: {outcome}"):
            get_script_dialect(dialect).parse_script(text)
        return
    spec = get_script_dialect(dialect).parse_script(text)
    got = spec.name if isinstance(outcome, str) else request_totals(spec)["tasks"]
    assert got == outcome


def test_a_hetjob_component_gets_the_partition_again() -> None:
    """sbatch carries the time, account and QOS over to a later hetjob component but not
    its partition, constraint or exclusivity (heterogeneous_jobs.html lists the ones it
    carries): a PBS `-q workq` job of two shapes reached Slurm with --partition in the
    first component only, the workers going to the default partition. Each component now
    says them, and such a script is read back as the same job of two shapes; a later
    component on another partition is read with it (tenth sweep), one on the default one
    too (since the hetjob settings sweep)."""
    text = ("#!/bin/bash\n#PBS -q workq\n#PBS -l select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32\n"
            "#PBS -l place=scatter:excl\n./a\n")
    script = translate(text, "slurm", "pbs")[0]
    later = script.split("#SBATCH hetjob\n")[1]
    assert later.startswith("#SBATCH --partition=workq\n#SBATCH --exclusive\n#SBATCH --nodes=4")
    back = get_script_dialect("slurm").parse_script(script)
    assert back.unknown == [] and request_totals(back) == request_totals(
        get_script_dialect("pbs").parse_script(text))
    assert translate(script, "slurm", "slurm")[0] == script
    for other in ("--partition=gpu", ""):
        changed = script.replace("hetjob\n#SBATCH --partition=workq\n",
                                 f"hetjob\n#SBATCH {other}\n" if other else "hetjob\n")
        got = get_script_dialect("slurm").parse_script(changed)
        if other:
            assert [c.queue for c in got.components] == [None, "gpu"]
        else:  # the default partition (hetjob settings sweep)
            assert [c.default_queue for c in got.components] == [False, True]


def test_a_job_of_several_shapes_over_slurmrestd_is_one_shape_said() -> None:
    """The REST door's job object is one shape: a PBS job of two shapes asked slurmrestd
    for its largest chunk on all five nodes (five nodes of 32 tasks with 64 GB each).
    Now the nodes and tasks as they are, the rest spread evenly, said."""
    from diamond_jupyter.dialects import slurm_rest

    spec = get_script_dialect("pbs").parse_script(
        "#!/bin/bash\n#PBS -l select=1:ncpus=8:mem=64gb+4:ncpus=32:mpiprocs=32\n./a\n")
    spec.working_directory = "/home/u/run"
    job, warnings = slurm_rest.job_description(spec)
    assert (job["nodes"], job["tasks"], job["cpus_per_task"]) == (5, 129, 1)
    assert "tasks_per_node" not in job and "memory_per_node" not in job
    assert job["memory_per_cpu"] * 129 <= 64 * G
    assert any(w.startswith("approximated: a job of 2 shapes") and "slurmrestd" in w
               for w in warnings), warnings


@pytest.mark.parametrize(("lines", "events"), [
    ("#$ -m bea\n#$ -m n", []),
    ("#$ -m n\n#$ -m e", ["end"]),
    ("#$ -m b\n#$ -m e", ["begin", "end"]),
    ("#$ -m bn", []),
])
def test_sge_mail_none_clears_the_mail_options(lines: str, events: list[str]) -> None:
    """Grid Engine's qsub ORs each `-m` into the job's mail options, but a value holding
    `n` sets them to none (cull_parse_job_parameter). `-m bea` then `-m n` was read as
    mail at begin, end and abort, and every translation asked for it."""
    text = f"#!/bin/bash\n{lines}\n#$ -M u@uni.example\n./a\n"
    spec = get_script_dialect("sge").parse_script(text)
    assert spec.mail_events == events
    slurm = translate(text, "slurm", "sge")[0]
    assert ("--mail-type" in slurm) is bool(events)


@pytest.mark.parametrize(("line", "q", "total"), [
    ("#SBATCH --nodes=2 --mem-per-cpu=2000", "memory_mb", 4000),
    ("#SBATCH --nodes=4 --gpus-per-task=1 --mem=16G", "gpus", 4),
    ("#PBS -l nodes=2\n#PBS -l pmem=15000m", "memory_mb", 30000),
])
def test_nodes_without_tasks_count_a_task_each(line: str, q: str, total: int) -> None:
    """With nodes and no task count a job runs one task per node (sbatch's default; a Torque
    node's one processor): `--nodes=2 --mem-per-cpu=2000` is 4000 MB, `--nodes=4
    --gpus-per-task=1` four GPUs. The totals counted one task (2000 MB, one GPU), so the
    PBS and LSF translations, which ask for every node's, were refused as asking for
    more."""
    dialect = "slurm" if line.startswith("#SBATCH") else "pbs"
    text = f"#!/bin/bash\n{line}\n./a\n"
    assert request_totals(get_script_dialect(dialect).parse_script(text))[q] == total
    for target in SCRIPT_DIALECTS:
        check_translation(text, dialect, target)
    assert "refused" not in " ".join(translate(text, "pbs" if dialect == "slurm" else "lsf",
                                               dialect)[1])


def test_an_empty_hetjob_component_is_a_chunk_of_its_own() -> None:
    """A hetjob component with no sizes gets sbatch's defaults (one node, one task on one
    CPU): PBS got no chunk for it at all, one task short and not a word."""
    text = ("#!/bin/bash\n#SBATCH -N 2 -n 2 -c 4\n#SBATCH hetjob\n#SBATCH hetjob\n"
            "#SBATCH -n 3\n./a\n")
    spec = get_script_dialect("slurm").parse_script(text)
    assert len(spec.components) == 3 and request_totals(spec)["tasks"] == 6
    script = translate(text, "pbs", "slurm")[0]
    assert "#PBS -l select=2:ncpus=4:mpiprocs=1+1:ncpus=1+3:ncpus=1:mpiprocs=1" \
        in script.splitlines()
    assert request_totals(get_script_dialect("pbs").parse_script(script))["tasks"] == 6


@pytest.mark.parametrize(("lines", "second"), [
    ("#flux: -N 1\n# flux: -n 4", "# flux:"),
    ("#FLUX: -N 1\n#flux: -n 4", "#flux:"),
    ("# FLUX: -N 1\n#FLUX: -n 4", "#FLUX:"),
])
def test_flux_directives_of_different_sentinels_are_refused(lines: str, second: str) -> None:
    """flux batch requires every directive to use the same sentinel (flux-batch(1): "All
    directives in a file must use the same sentinel pattern, otherwise an error will be
    raised"). The reader took `#flux:` and `# flux:` lines together; now bad input at the
    line, with the sentinel to write."""
    from diamond_jupyter.model import BadInput

    text = f"#!/bin/bash\n{lines}\nflux run ./a\n"
    with pytest.raises(BadInput, match=rf"line 3: sentinel `{second}` differs from line 2's"):
        get_script_dialect("flux").parse_script(text)
    same = "\n".join(x.split(" -", 1)[0].replace(x.split(" -", 1)[0], lines.split(" -")[0])
                     + " -" + x.split(" -", 1)[1] for x in lines.splitlines())
    assert request_totals(get_script_dialect("flux").parse_script(
        f"#!/bin/bash\n{same}\nflux run ./a\n"))["tasks"] == 4


def test_a_kept_flux_line_takes_the_rendered_sentinel() -> None:
    """A `# flux:` script's kept line (`# flux: --setattr=user.tag=blue`) was written back
    as it was among the renderer's `#flux:` lines: a script flux batch refuses (two
    sentinels). Now the kept line takes the rendered sentinel."""
    text = ("#!/bin/bash\n# flux: --nslots=2 --cores-per-slot=8\n"
            "# flux: --setattr=user.tag=blue\n# flux: --time-limit=90m\nflux run ./a\n")
    own = translate(text, "flux", "flux")[0]
    assert "#flux: --setattr=user.tag=blue" in own.splitlines()
    assert not any(x.startswith("# flux:") for x in own.splitlines())
    back = get_script_dialect("flux").parse_script(own)
    assert [(d.option, d.value) for d in back.unknown] == [("--setattr", "user.tag=blue")]
