"""A tenth set of realistic batch scripts (tests/fixtures/scripts_unseen10/<dialect>/): what
center users write that the earlier sweeps did not hold (Slurm --gpu-bind maps,
--cpu-freq, --network, --mcs-label, --prefer, --batch, -M/--clusters, srun --het-group,
--export=NONE with srun --export=ALL, directives after the first command, trailing
comments, CRLF, no #! line; PBS host= chunks, place=scatter:excl, stepped arrays with -r y,
-koed, -W umask/sandbox/stagein/stageout, Torque procs/pmem/vmem/exclusive_process; LSF
-app, -sla, -P, -G, -ti, -Ne, %J_%I, affinity[core(2)], -data, rusage alternatives;
flux --urgency, -N/-n/-c/-g, --env-remove, flux run inside; Grid Engine mem_free, h_vmem
per slot, -masterq, -R y, -js, -P, -ckpt, -notify), and start times of every scheduler.

Each is parsed and compared with its EXPECTED row (the values each scheduler's
documentation gives), its needs read, and translated into every dialect (its own too)
and read back (tests/scripts_unseen_check.py). Faults this sweep found, each with its own
test below: LSF `-Ne` (mail only when the job exits) and `-ti`, `-ar`, `-hl`, `-Zs`,
`-datachk` are flags, but were read as taking a value (`#BSUB -Ne` was refused as bad
input, `#BSUB -ti` read as `-t i`); a mail on failure alone reached LSF as -N (every end);
a Slurm script without a #! line (sbatch refuses it) was run by /bin/bash unsaid."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from tests.scripts_unseen_check import ALL_STRICT, sweep_tests

HERE = Path(__file__).parent / "fixtures" / "scripts_unseen10"
G = 1024  # MB in a GB

# As in the earlier sweeps: whole-job totals (every one checked, None when left out),
# walltime seconds, array, deps, the options kept as unknown directives (in order), JobSpec
# fields (`begin` in sbatch --begin's form); `needs_gpus`/`needs_mem` per node (needs_of);
# `per_cpu` memory per CPU; `node_mem` memory per node; `notes` words a parse note holds;
# `ignored` how many directives the reader noted as ignored.
EXPECTED: dict[str, dict[str, Any]] = {
    # ---------------------------------------------------------------- Slurm
    # --gpu-bind=map_gpu:... read; --cpu-freq (a governor) and --network kept
    "slurm/lammps_gpu_bind_map_cpu_freq_network.sbatch": dict(
        nodes=2, tasks=8, cpus=64, gpus=8, needs_gpus=4, walltime=6 * 3600,
        gpu_bind="map_gpu:0,1,2,3", name="lammps_kokkos", queue="gpu", account="mat-sim",
        unknown=["--cpu-freq", "--network"]),
    # -M is --clusters (kept: the engine picks the cluster); --prefer is a soft constraint
    # (kept); --mcs-label kept; 3G a CPU x 192 tasks; 1-12:00:00 is 36 h
    "slurm/wrf_clusters_M_prefer_mcs_label.sbatch": dict(
        nodes=4, tasks=192, cpus=192, memory_mb=192 * 3 * G, per_cpu=3 * G,
        walltime=36 * 3600, name="wrf_d03", stdout="wrf.%j.log",
        unknown=["--clusters", "--prefer", "--mcs-label"]),
    # --batch=bigmem picks the batch step's node by feature (kept); --export=NONE: nothing
    # exported (srun --export=ALL in the body is the body's)
    "slurm/nwchem_batch_features_export_none.sbatch": dict(
        nodes=8, tasks=512, cpus=512, walltime=48 * 3600, name="nwchem_ccsd", qos="long",
        export_all=False, unknown=["--batch"]),
    # a hetjob of two components in one partition; srun --het-group lines are the body's
    "slurm/coupled_het_group_srun.sbatch": dict(
        nodes=8, tasks=6 * 128 + 2 * 64, cpus=6 * 128 + 2 * 64 * 2, walltime=8 * 3600,
        name="coupled_ocean_atm", queue="compute", account="climate",
        notes=["heterogeneous job of 2 components"]),
    # the two #SBATCH lines after `set -euo pipefail` are ignored by sbatch
    "slurm/postproc_directives_after_first_command.sbatch": dict(
        tasks=1, cpus=4, memory_mb=16 * G, needs_mem=16 * G, walltime=7200,
        name="postproc", ignored=2),
    # an unquoted # ends an #SBATCH line; --time=0-04:00 is D-H:M (4 h)
    "slurm/qe_trailing_comments.sbatch": dict(
        nodes=1, tasks=32, cpus=32, memory_mb=32 * 2000, per_cpu=2000, walltime=4 * 3600,
        name="qe_scf", stdout="qe-%j.out"),
    # CRLF line ends (sbatch refuses them; the Slurm rendering converts, said); one task
    # of 2 CPUs per array element
    "slurm/fastqc_array_crlf.sbatch": dict(
        cpus=2, memory_mb=4 * G, needs_mem=4 * G, walltime=1800, array="1-48%8",
        deps=[("afterok", ["81234"])], name="fastqc", stdout="logs/fastqc_%A_%a.out"),
    # no #! line: sbatch refuses the script (said; written with #!/bin/bash); a comment
    # first does not end the directives
    "slurm/rscript_comment_before_directives.sbatch": dict(
        tasks=1, cpus=1, memory_mb=8 * G, needs_mem=8 * G, walltime=3600, name="cohortB",
        notes=["no #! interpreter line"]),
    # --gpus=a100:8 on 2 nodes: 4 a node
    "slurm/llm_finetune_gpus_total_closest.sbatch": dict(
        nodes=2, tasks=8, cpus=128, gpus=8, needs_gpus=4, gpu_type="a100",
        memory_mb=2 * 480 * G, needs_mem=480 * G, walltime=3 * 86400, gpu_bind="closest",
        name="llm_finetune", queue="a100"),
    "slurm/montecarlo_clusters_list_comment_requeue.sbatch": dict(
        tasks=64, cpus=64, memory_mb=64 * G, per_cpu=G, walltime=12 * 3600,
        name="mc_sweep", comment="sweep 7 of 12", qos="standby", requeue=True,
        unknown=["--clusters"]),
    # --mem-per-gpu=64G x 2 GPUs on the node
    "slurm/alphafold_mem_per_gpu_gpu_bind_none.sbatch": dict(
        nodes=1, tasks=1, cpus=32, gpus=2, needs_gpus=2, gpu_type="a100",
        memory_mb=128 * G, needs_mem=128 * G, walltime=86400, gpu_bind="none",
        name="alphafold", queue="gpu", notes=["--mem-per-gpu=64G read as"]),
    # an OR constraint is one feature expression; --prefer kept
    "slurm/gromacs_constraint_or_prefer_chdir.sbatch": dict(
        nodes=1, tasks=40, cpus=40, walltime=10 * 3600, features=["skylake|cascadelake"],
        name="gmx_rerun", working_directory="/scratch/user/gmx", stdout="gmx_%j.out",
        stderr="gmx_%j.err", unknown=["--prefer"]),
    "slurm/ensemble_begin_date_mail.sbatch": dict(
        tasks=16, cpus=16, walltime=4 * 3600, name="ens_nightly", queue="standard",
        begin="2026-12-24T20:00:00", mail_events=["end", "fail"],
        mail_user="ens@met.example"),
    # ---------------------------------------------------------------- PBS Pro / Torque
    # place=scatter:excl: whole hosts (excl read, scatter kept); mem per chunk
    "pbs/openfoam_place_scatter_excl.pbs": dict(
        nodes=4, tasks=144, cpus=144, memory_mb=4 * 180 * G, needs_mem=180 * G,
        walltime=18 * 3600, exclusive=True, name="openfoam_motorbike", queue="workq",
        account="cfd-2026", unknown=["-l place:scatter"]),
    # host= binds the chunk to one host (kept with it)
    "pbs/vasp_select_host_pinned.pbs": dict(
        nodes=1, tasks=48, cpus=48, memory_mb=370 * G, needs_mem=370 * G,
        walltime=72 * 3600, name="vasp_relax", queue="long",
        mail_events=["fail", "begin", "end"], mail_user="chem.user@uni.example",
        unknown=["-l select:host"]),
    # -J X-Y:Z stepped; -koed (keep files, direct write) and -W umask kept
    "pbs/param_scan_array_step_rerun_koed_umask.pbs": dict(
        nodes=1, tasks=1, cpus=4, memory_mb=8 * G, needs_mem=8 * G, walltime=7200,
        array="1-100:2", requeue=True, name="param_scan", unknown=["-k", "-W"]),
    # sandbox kept; stagein and stageout carried as the job's diamond stage entries
    "pbs/cp2k_sandbox_private_stage.pbs": dict(
        nodes=2, tasks=128, cpus=128, walltime=86400, name="cp2k_md", account="chem123",
        unknown=["-l select:ompthreads", "-W"], notes=["carried: line 7", "carried: line 8"]),
    # procs=48: 48 processors wherever; pmem per process
    "pbs/torque_procs_pmem_depend_afterany.pbs": dict(
        tasks=48, cpus=48, memory_mb=48 * 2 * G, per_cpu=2 * G, walltime=12 * 3600,
        deps=[("afterany", ["1234.torque01"])], name="abyss_assembly",
        working_directory="/scratch/genome/abyss", export_all=True),
    # gpus=2 a node with their compute mode kept; vmem kept
    "pbs/torque_nodes_gpus_exclusive_process_vmem.pbs": dict(
        nodes=4, tasks=32, cpus=32, gpus=8, needs_gpus=2, walltime=10 * 3600,
        name="namd_apoa1", queue="gpu", stdout="namd.out", stderr="namd.err",
        unknown=["-l nodes:exclusive_process", "-l"]),
    # -t X-Y%N (Torque); pmem 3gb x 2 processes; vmem kept
    "pbs/torque_pmem_vmem_array_percent.pbs": dict(
        nodes=1, tasks=2, cpus=2, memory_mb=2 * 3 * G, per_cpu=3 * G, walltime=5400,
        array="1-200%25", name="blast_split", unknown=["-l"]),
    # -a CCYYMMDDhhmm read as the start time; group_list kept
    "pbs/pro_begin_time_group_list.pbs": dict(
        nodes=2, tasks=64, cpus=64, walltime=6 * 3600, name="nightly_reanalysis",
        queue="workq", begin="2026-12-24T20:30:00", unknown=["-W"]),
    # ---------------------------------------------------------------- LSF
    # -P is the project (the account); -app, -sla, -G kept
    "lsf/cfx_app_sla_project_group.lsf": dict(
        nodes=2, tasks=32, cpus=32, walltime=12 * 3600, name="cfx_run", account="CFD-042",
        stdout="cfx.%j.out", stderr="cfx.%j.err", unknown=["-app", "-sla", "-G"]),
    # -Ne: mail only when the job exits in failure; -ti (with -w) kept; %J_%I is the job
    # and the element
    "lsf/render_array_ti_Ne_output_I.lsf": dict(
        tasks=1, cpus=1, memory_mb=4096, per_cpu=4096, walltime=45 * 60,
        array="1-200%20", deps=[("afterok", ["7781"])], name="render", queue="short",
        stdout="logs/%j_%a.log", mail_events=["fail"], unknown=["-ti"]),
    # affinity[core(2)]: two cores a task; -M a limit per process (x 8 on the host)
    "lsf/bwa_affinity_core2.lsf": dict(
        nodes=1, tasks=8, cpus=16, memory_mb=8 * 32 * G, needs_mem=8 * 32 * G,
        walltime=8 * 3600, name="bwa_mem", queue="normal"),
    "lsf/variant_calling_data_requirement.lsf": dict(
        nodes=1, tasks=4, cpus=4, memory_mb=4 * 8 * G, per_cpu=8 * G, walltime=86400,
        name="gatk_hc", account="genomics", unknown=["-data"]),
    # the first alternative's GPUs (4 V100) read, the usage string kept whole
    "lsf/dl_gpu_rusage_alternatives.lsf": dict(
        nodes=1, tasks=8, cpus=8, gpus=4, needs_gpus=4, gpu_type="TeslaV100_SXM2_32GB",
        walltime=86400, name="resnet_train", queue="gpu", stdout="train.%j.log",
        unknown=["-R rusage"], notes=["first alternative's GPUs read"]),
    "lsf/nightly_begin_time_project.lsf": dict(
        tasks=2, cpus=2, walltime=3 * 3600, name="nightly_etl", account="data-eng",
        begin="2026-12-24T22:30:00", mail_user="etl@corp.example", mail_events=["end"]),
    # ---------------------------------------------------------------- Flux
    # -g 1 a slot: 8 GPUs, 4 a node; --urgency=12 kept (0 alone is a hold)
    "flux/urgency_N_n_c_g.flux": dict(
        nodes=2, tasks=8, cpus=32, gpus=8, needs_gpus=4, walltime=7200, name="mdrun_gpu",
        queue="pbatch", unknown=["--urgency"]),
    "flux/env_remove_flux_run_inside.flux": dict(
        nodes=1, tasks=4, cpus=8, walltime=1800, stdout="analysis.%j.out",
        unknown=["--env-remove"]),
    # -N 4 alone: one slot a node on whole nodes (flux batch)
    "flux/begin_time_absolute_exclusive.flux": dict(
        nodes=4, tasks=4, cpus=4, walltime=8 * 3600, exclusive=True, name="newyear_bench",
        queue="pbatch", begin="2026-12-31T23:00:00"),
    "flux/urgency_hold_dependency_afterok.flux": dict(
        tasks=16, cpus=16, walltime=3600, hold=True, name="reduce_step",
        deps=[("afterok", ["fABCqrP4mVb"])]),
    # ---------------------------------------------------------------- Grid Engine
    # h_vmem is per slot: 8 x 4G; mem_free (a load value) kept
    "sge/smp_mem_free_h_vmem_per_slot.sge": dict(
        nodes=1, cpus=8, memory_mb=32 * G, per_cpu=4 * G, walltime=6 * 3600,
        name="salmon_quant", stdout="logs/", unknown=["-l mem_free"]),
    "sge/mpi_masterq_reserve.sge": dict(
        tasks=64, cpus=64, walltime=48 * 3600, name="openmx_big", queue="all.q",
        export_all=True, unknown=["-masterq", "-R"]),
    # -P is a project (kept), not an account; -js, -ckpt, -notify kept
    "sge/js_project_ckpt_notify.sge": dict(
        nodes=1, cpus=4, memory_mb=4 * 2 * G, per_cpu=2 * G, walltime=96 * 3600,
        name="long_md", requeue=True, mail_events=["end", "fail"],
        mail_user="md@lab.example", unknown=["-P", "-js", "-ckpt", "-notify"]),
    "sge/begin_time_a_hold_jid.sge": dict(
        walltime=7200, deps=[("afterany", ["55210"])], name="nightly_stats",
        begin="2026-12-24T18:30:30"),
    # -tc 50 is the array's running limit; h_rt in seconds
    "sge/array_tc_h_rt_seconds_queue_list.sge": dict(
        memory_mb=G, per_cpu=G, walltime=5400, array="1-500%50", name="bootstrap",
        queue="short.q,long.q", stdout="logs/boot.%a.out", stderr="logs/boot.%a.err"),
}

_FIELDS = ("name", "queue", "account", "qos", "reservation", "stdout", "stderr", "requeue",
           "comment", "mail_events", "mail_user", "working_directory", "hold", "begin")

test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports = \
    sweep_tests(HERE, EXPECTED, fields=_FIELDS, strict=ALL_STRICT, at_least=35)


# ------------------------------------------------------------------ faults found here

@pytest.mark.parametrize("flag", ["-Ne", "-ar", "-hl", "-Zs", "-datachk", "-ti"])
def test_bsub_flags_take_no_value(flag: str) -> None:
    # each is a flag of bsub: `#BSUB -Ne` was refused ("needs a value") and `#BSUB -ti`
    # read as `-t i`; the next line's option is read as it is
    spec = get_script_dialect("lsf").parse_script(
        f"#!/bin/bash\n#BSUB {flag}\n#BSUB -q short\n./app\n")
    assert spec.queue == "short"
    assert all(d.value is None for d in spec.unknown)


def test_mail_on_exit_alone_is_read_and_written_as_ne() -> None:
    spec = get_script_dialect("lsf").parse_script("#!/bin/bash\n#BSUB -Ne\n./app\n")
    assert spec.mail_events == ["fail"] and spec.unknown == []
    assert "#BSUB -Ne" in translate("#!/bin/bash\n#SBATCH --mail-type=FAIL\n./x\n", "lsf",
                                    "slurm")[0].splitlines()
    assert "#SBATCH --mail-type=FAIL" in translate(
        "#!/bin/bash\n#BSUB -Ne\n./app\n", "slurm", "lsf")[0].splitlines()


def test_a_slurm_script_without_an_interpreter_line_is_said() -> None:
    spec = get_script_dialect("slurm").parse_script("#SBATCH -n 1\nhostname\n")
    assert any(n.startswith("line 1: no #! interpreter line") for n in
               spec.metadata["parse_notes"])
    plain = get_script_dialect("slurm").parse_script("#!/bin/bash\n#SBATCH -n 1\nhostname\n")
    assert not plain.metadata.get("parse_notes")


@pytest.mark.parametrize("source", ["slurm", "pbs", "lsf", "flux", "sge"])
def test_a_crlf_script_reaches_every_scheduler_with_lf_line_ends(source: str) -> None:
    # the body kept its CRLF everywhere but Slurm: bash reads `./app\r`, and the
    # `#!/bin/bash\r` line names no interpreter
    sentinel = {"slurm": "#SBATCH -n 1", "pbs": "#PBS -N dos", "lsf": "#BSUB -n 1",
                "flux": "#flux: -n 1", "sge": "#$ -N dos"}[source]
    text = f"#!/bin/bash\r\n{sentinel}\r\nmodule load app\r\n./app --in data.txt\r\n"
    for target in ("slurm", "pbs", "lsf", "flux", "sge"):
        script, warnings, _ = translate(text, target, source)
        assert "\r" not in script, target
        assert "./app --in data.txt\n" in script
        assert any(w.startswith("approximated: CRLF line endings converted to LF")
                   for w in warnings), (target, warnings)
