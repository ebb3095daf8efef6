"""Needs that live only in a script's body (modules, containers, launchers, GPU hints), read
as the shell would run them, against sites whose module lists are given as their module
systems print them (`module -t avail`, `module -t spider`). For each script: the needs
read, what is deliberately not read (or read but not held against a site), which sites can
run it and why the others cannot, and the module lines rewritten for a chosen site.

A need that cannot be known (a `$VAR`, a load in a branch, a module from the job's own
tree) never rules a site out: a later module error is better than a site wrongly refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sweep_helpers import SoftwareCase, assert_site_verdicts

from diamond_jupyter.capabilities import SiteCapabilities, SoftwareModule
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.discovery import parse_module_list, parse_mpi
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import Node, Partition, SiteSnapshot
from diamond_jupyter.needs import Needs, needs_of
from diamond_jupyter.placement import place
from diamond_jupyter.script_body import body_needs, scan_body
from diamond_jupyter.software import find_module, needs_reasons, rewrite_modules

# ---------------------------------------------------------------- sites, as listed

# EasyBuild on Lmod (x86_64, A100s): `module -t avail`, with Lmod's default marks
EB = """system lmod 8.7.32
/apps/easybuild/modules/all:
Anaconda3/2023.09-0
CUDA/12.1.1
CUDA/12.2.0(default)
FFTW/3.3.10-GCC-12.3.0
GCC/12.3.0
GCCcore/12.3.0
GROMACS/2023.3-foss-2023a-CUDA-12.1.1
Java/17.0.6
Miniconda3/23.10.0-1
OpenMPI/4.1.5-GCC-12.3.0
PyTorch/2.1.2-foss-2023a-CUDA-12.1.1
Python/3.11.3-GCCcore-12.3.0
R/4.3.2-gfbf-2023a
SciPy-bundle/2023.07-gfbf-2023a
foss/2023a
impi/2021.10.0-intel-compilers-2023.2.1
intel-compilers/2023.2.1
"""

# Spack's Lmod hierarchy (CPU only): avail shows Core, spider what the compiler unlocks
SPACK = """system lmod 8.7.20
/opt/spack/share/spack/lmod/linux-rocky8-x86_64/Core:
gcc/12.3.0
gcc/13.2.0 (D)
intel-oneapi-compilers/2023.2.1
@@spider
fftw/3.3.10
gcc/12.3.0
gcc/13.2.0
hdf5/1.14.3
intel-oneapi-compilers/2023.2.1
intel-oneapi-mpi/2021.10.0
openmpi/4.1.5-gcc-12.3.0-abc123x
py-numpy/1.26.4
python/3.11.6
"""

# HPE Cray EX with MI250X GPUs (Lmod, Cray PE names)
CRAY = """system lmod 8.7.19
/opt/cray/pe/lmod/modulefiles/core:
PrgEnv-cray/8.4.0 <aL>
PrgEnv-gnu/8.4.0
cce/16.0.1 (L)
cray-fftw/3.3.10.5
cray-hdf5/1.12.2.7
cray-mpich/8.1.27 (L,D)
cray-python/3.10.10
craype-accel-amd-gfx90a
craype-x86-trento (L)
gcc-native/12.3
rocm/5.7.1
"""

# a departmental RHEL cluster on Environment Modules 5 (V100s)
RHEL = """system environment-modules 5.2.0
/etc/modulefiles:
mpi/mpich-x86_64
mpi/openmpi-x86_64
/opt/modulefiles:
anaconda3/2023.09
cuda/11.8
cuda/12.2(default:latest)
cudnn/8.9.2.26_cuda12
gcc/11.2.0
miniconda3/latest
python3/3.9(@)
pytorch/2.1.0-gpu
"""

# a hand-made tree with categories as directories, and no GPUs
TIERED = """system lmod 8.6.19
/apps/modulefiles:
Core/gcc/12.3.0
Core/cmake/3.27.7
lang/anaconda/2023.09
mpi/openmpi/4.1.5
"""

# a DGX-style site: pyxis/enroot, no MPI stack of its own
DGX = """system lmod 8.7.32
/cm/shared/modulefiles:
cuda/12.2
nccl/2.18.3
"""

# a NERSC-style site: Shifter and podman-hpc, cudatoolkit (A100s)
NERSC = """system lmod 8.7.32
/opt/cray/pe/lmod/modulefiles/core:
PrgEnv-gnu/8.5.0 (L)
cray-mpich/8.1.28 (L)
cudatoolkit/12.2
craype-accel-nvidia80
python/3.11
pytorch/2.1.0-cu12
"""


def _caps(site: str, listing: str | None, runtimes: list[str] | None, mpi: list[str] | None,
          gpus: list[str]) -> SiteCapabilities:
    return SiteCapabilities(site=site, software=None if listing is None else
                            parse_module_list(listing)[2], container_runtimes=runtimes,
                            mpi=mpi, gpu_models=gpus)


SITES = {c.site: c for c in (
    _caps("eb", EB, ["apptainer"], ["openmpi", "intel-mpi"], ["a100"]),
    _caps("spack", SPACK, [], ["openmpi", "intel-mpi"], []),
    _caps("cray", CRAY, ["singularity"], ["cray-mpich"], ["mi250x"]),
    _caps("rhel", RHEL, ["apptainer", "podman"], ["openmpi", "mpich"], ["v100"]),
    _caps("tiered", TIERED, ["charliecloud"], ["openmpi"], []),
    _caps("dgx", DGX, ["enroot"], [], ["h100"]),
    _caps("nersc", NERSC, ["podman-hpc", "shifter"], ["cray-mpich"], ["a100"]),
    _caps("unknown", None, None, None, []),  # nothing known: nothing checked
)}


# ---------------------------------------------------------------- the cases

@dataclass
class Case(SoftwareCase):
    rewritten: dict[str, list[str]] = field(default_factory=dict)  # site -> module lines
    container: tuple[str, str | None, bool, str | None] | None = None  # image, runtime,
    mpi: str | None = None                                  # image known, GPU
    notes: list[str] = field(default_factory=list)  # words some note must hold
    vendor: str | None = None
    absent: list[str] = field(default_factory=list)  # words no need may be


ALL = set(SITES) - {"unknown"}

CASES = [
    Case("easybuild_toolchain_in_one_load",
         "module purge\nmodule load GCC/12.3.0 OpenMPI/4.1.5-GCC-12.3.0 "
         "FFTW/3.3.10-GCC-12.3.0\nsrun ./md_run -i in.md\n",
         checked=["GCC/12.3.0", "OpenMPI/4.1.5-GCC-12.3.0", "FFTW/3.3.10-GCC-12.3.0"],
         can={"eb", "spack"}, mpi="srun",
         why={"cray": "software 'GCC/12.3.0' not installed",
              "rhel": "only gcc/11.2.0", "tiered": "software 'FFTW/3.3.10-GCC-12.3.0'"},
         rewritten={"spack": ["module purge", "module load gcc/12.3.0 "
                              "openmpi/4.1.5-gcc-12.3.0-abc123x fftw/3.3.10"],
                    "eb": ["module purge", "module load GCC/12.3.0 OpenMPI/4.1.5-GCC-12.3.0 "
                           "FFTW/3.3.10-GCC-12.3.0"]}),
    Case("ml_shorthand_minus_is_an_unload",
         "ml purge\nml -intel GCC/12.3.0 -impi Python/3.11\npython3 fit.py\n",
         checked=["GCC/12.3.0", "Python/3.11"], absent=["intel", "impi", "-intel"],
         can={"eb", "spack"}, why={"rhel": "only gcc/11.2.0", "cray": "'GCC/12.3.0'"},
         rewritten={"eb": ["ml purge", "ml -intel GCC/12.3.0 -impi "
                           "Python/3.11.3-GCCcore-12.3.0"]}),
    Case("module_option_before_add",
         "module --ignore_cache add hdf5/1.14\nh5dump -H out.h5\n",
         checked=["hdf5/1.14"], can={"spack"},
         why={"eb": "software 'hdf5/1.14' not installed", "cray": "not installed"},
         rewritten={"spack": ["module --ignore_cache add hdf5/1.14.3"]}),
    Case("cray_programming_environment_swap",
         "module swap PrgEnv-cray PrgEnv-gnu\nmodule unload cray-libsci\n"
         "module load cray-fftw\nsrun -n 256 ./vasp_std\n",
         checked=["PrgEnv-gnu", "cray-fftw"], absent=["PrgEnv-cray", "cray-libsci"],
         can={"cray"}, mpi="srun",
         why={"eb": "software 'PrgEnv-gnu' not installed",
              "nersc": "software 'cray-fftw' not installed"},
         rewritten={"cray": ["module swap PrgEnv-cray PrgEnv-gnu", "module unload cray-libsci",
                             "module load cray-fftw"]}),
    Case("switch_to_a_version",
         "module load gcc\nmodule switch gcc gcc/12.3.0\nmake -j 8\n",
         checked=["gcc", "gcc/12.3.0"], can={"eb", "spack", "tiered"},
         why={"rhel": "'gcc/12.3.0' not installed (only gcc/11.2.0)"},
         rewritten={"tiered": ["module load Core/gcc/12.3.0",
                               "module switch gcc Core/gcc/12.3.0"]}),
    Case("redirections_are_not_modules",
         "module load cuda/12.2 >/dev/null 2>&1\nmodule load python3 2>/dev/null\n"
         "python3 bench.py\n",
         checked=["cuda/12.2", "python3"], absent=["2", ">", "/dev/null", "1"],
         can={"eb", "rhel", "nersc"}, vendor="nvidia",
         why={"cray": "software 'cuda/12.2' not installed",
                                           "dgx": "software 'python3' not installed"},
         rewritten={"eb": ["module load CUDA/12.2.0 >/dev/null 2>&1",
                           "module load Python/3.11.3-GCCcore-12.3.0 2>/dev/null"]}),
    Case("commented_and_echoed_loads",
         "#module load gromacs\n  # ml cuda\necho 'module load x'\n"
         "module load R/4.3 # the analysis needs R\nRscript fit.R\n",
         checked=["R/4.3"], absent=["gromacs", "cuda", "x"], can={"eb"},
         why={"spack": "software 'R/4.3' not installed"}),
    Case("nothing_after_a_top_level_exit",
         "module load Python/3.11\npython run.py\nexit 0\n\nmodule load oldtool/1.0\n",
         checked=["Python/3.11"], absent=["oldtool"], can={"eb", "spack", "nersc"},
         why={"rhel": "only python3/3.9"}),
    Case("exit_in_a_guard_keeps_reading",
         "[ -f conf.gro ] || { echo missing input; exit 1; }\n"
         "if [ -z \"$SLURM_JOB_ID\" ]; then exit 2; fi\nmodule load GROMACS/2023.3\n"
         "gmx mdrun -deffnm md\n",
         checked=["GROMACS/2023.3"], can={"eb"},
         why={"rhel": "software 'GROMACS/2023.3' not installed"}),
    Case("branches_by_host_are_not_both_needed",
         "if [[ $(hostname) == frontier* ]]; then\n    module load rocm/5.7.1\nelse\n"
         "    module load cuda/12.2\nfi\npython train.py\n",
         unchecked=["rocm/5.7.1", "cuda/12.2"], can=ALL,
         rewritten={"eb": ["    module load rocm/5.7.1", "    module load CUDA/12.2.0"],
                    "cray": ["    module load rocm/5.7.1", "    module load cuda/12.2"]}),
    Case("fallback_after_or",
         "module load cuda/12.2 || module load cudatoolkit/12.2\nnvcc -O2 -o saxpy saxpy.cu\n",
         # one of the two is needed (the second is the first's fallback)
         checked=["cuda/12.2"], unchecked=["cudatoolkit/12.2"],
         can={"eb", "rhel", "dgx", "nersc"}, vendor="nvidia",
         why={"spack": "'cuda/12.2' not installed, nor its fallback cudatoolkit/12.2"},
         rewritten={"nersc": ["module load cudatoolkit/12.2 || module load cudatoolkit/12.2"]}),
    Case("test_then_load",
         "[ -d /opt/rocm ] && module load rocm\nhipcc -o vadd vadd.cpp\n",
         unchecked=["rocm"], can=ALL),
    Case("function_body",
         "setup_env() {\n    module purge\n    module load foss/2023a\n}\nsetup_env\n"
         "srun ./app\n",
         checked=["foss/2023a"], can={"eb"}, mpi="srun",  # the function is called
         why={"spack": "software 'foss/2023a' not installed"}),
    Case("try_load",
         "module try-load cray-python\nmodule load cray-mpich\nsrun ./a.out\n",
         checked=["cray-mpich"], unchecked=["cray-python"], can={"cray", "nersc"},
         why={"eb": "software 'cray-mpich' not installed"}, mpi="srun"),
    Case("module_use_adds_a_private_tree",
         "module load GCC/12.3.0\nmodule use /project/lab/modulefiles\n"
         "module load labtool/2.1\nlabtool run\n",
         checked=["GCC/12.3.0"], unchecked=["labtool/2.1"], can={"eb", "spack", "tiered"},
         why={"cray": "software 'GCC/12.3.0' not installed"},
         notes=["module use /project/lab/modulefiles (line 2)"],
         rewritten={"spack": ["module load gcc/12.3.0",
                              "module use /project/lab/modulefiles",
                              "module load labtool/2.1"]}),
    Case("modulepath_exported",
         "export MODULEPATH=/shared/apps/modules/rhel8/modulefiles:$MODULEPATH\n"
         "module load samtools/1.17\nsamtools sort -o out.bam in.bam\n",
         unchecked=["samtools/1.17"], can=ALL, notes=["MODULEPATH set at line 1"]),
    Case("module_restore_is_a_collection",
         "module restore gromacs-env\nsrun gmx_mpi mdrun -s topol.tpr\n",
         can=ALL, mpi="srun", notes=["module restore gromacs-env (line 1)"]),
    Case("ml_spider_and_av_are_not_loads",
         "ml spider GROMACS\nml av\nml GROMACS\ngmx mdrun\n",
         checked=["GROMACS"], can={"eb"}, absent=["spider", "av"],
         why={"cray": "software 'GROMACS' not installed"},
         rewritten={"eb": ["ml spider GROMACS", "ml av", "ml GROMACS"]}),
    Case("modulefiles_by_path",
         "module load ./modulefiles/mytool/1.0\nmodule load /opt/site/modulefiles/foo\n"
         "mytool --help\n",
         can=ALL, absent=[".", ""], notes=["module ./modulefiles/mytool/1.0 (line 1)",
                                           "a modulefile given by path"]),
    Case("modules_named_by_variables",
         "module load ${GATK_module}\nmodule load python/${PY_VER}\n"
         "for m in $MODS; do module load $m; done\n",
         can=ALL, notes=["module ${GATK_module} (line 1): named at run time",
                         "module $m (line 3)"]),
    Case("modules_named_by_a_literal_loop",  # the loop's words name them
         "for m in GCC/12.3.0 OpenMPI/4.1.5; do module load $m; done\nmpirun ./a.out\n",
         checked=["GCC/12.3.0", "OpenMPI/4.1.5"], can={"eb", "spack", "tiered"},
         mpi="mpirun", why={"rhel": "'GCC/12.3.0' not installed (only gcc/11.2.0)"}),
    Case("continued_load_lines",
         "module load GCC/12.3.0 \\\n    OpenMPI/4.1.5-GCC-12.3.0 \\\n    hdf5/1.14\n"
         "srun ./sim\n",
         checked=["GCC/12.3.0", "OpenMPI/4.1.5-GCC-12.3.0", "hdf5/1.14"], can={"spack"},
         mpi="srun", why={"eb": "software 'hdf5/1.14' not installed"},
         rewritten={"spack": ["module load gcc/12.3.0 \\",
                              "    openmpi/4.1.5-gcc-12.3.0-abc123x \\",
                              "    hdf5/1.14.3"]}),
    Case("here_document_written_for_another_job",
         "cat > step2.sh <<EOF\n#!/bin/bash\nmodule load samtools/1.17\n"
         "samtools sort in.bam\nexit 0\nEOF\nsbatch step2.sh\nmodule load Python/3.11\n"
         "python collect.py\n",
         checked=["Python/3.11"], unchecked=["samtools/1.17"],
         can={"eb", "spack", "nersc"}, why={"cray": "software 'Python/3.11'"},
         rewritten={"eb": ["module load samtools/1.17",
                           "module load Python/3.11.3-GCCcore-12.3.0"]}),
    Case("here_document_a_shell_runs",
         "srun bash -s <<'EOF'\nmodule load GROMACS/2023\ngmx mdrun -deffnm md\nEOF\n",
         checked=["GROMACS/2023"], can={"eb"}, mpi="srun",
         rewritten={"eb": ["module load GROMACS/2023.3-foss-2023a-CUDA-12.1.1"]}),
    Case("easybuild_spelling_at_a_spack_site",
         "module load OpenMPI/4.1.5-GCC-12.3.0 Python/3.11.3-GCCcore-12.3.0\n"
         "mpirun python3 -m mpi4py hello.py\n",
         checked=["OpenMPI/4.1.5-GCC-12.3.0", "Python/3.11.3-GCCcore-12.3.0"], can={"eb"},
         mpi="mpirun", why={"spack": "'Python/3.11.3-GCCcore-12.3.0' not installed (only "
                                     "python/3.11.6)"}),
    Case("spack_spelling_at_an_easybuild_site",
         "module load openmpi/4.1.5-gcc-12.3.0-abc123x py-numpy/1.26.4\nsrun python3 x.py\n",
         checked=["openmpi/4.1.5-gcc-12.3.0-abc123x", "py-numpy/1.26.4"], can={"spack"},
         mpi="srun", why={"eb": "software 'py-numpy/1.26.4' not installed"}),
    Case("intel_oneapi_mpi_is_impi",
         "module load intel-oneapi-mpi/2021.10\nmpirun -np $SLURM_NTASKS ./wrf.exe\n",
         checked=["intel-oneapi-mpi/2021.10"], can={"eb", "spack"}, mpi="mpirun",
         why={"rhel": "software 'intel-oneapi-mpi/2021.10' not installed"},
         rewritten={"eb": ["module load impi/2021.10.0-intel-compilers-2023.2.1"]}),
    Case("hierarchy_levels_in_site_names",
         "module load gcc/12.3.0 openmpi/4.1.5 cmake\nmpirun ./a.out\n",
         checked=["gcc/12.3.0", "openmpi/4.1.5", "cmake"], can={"tiered"}, mpi="mpirun",
         why={"eb": "software 'cmake' not installed"},
         rewritten={"tiered": ["module load Core/gcc/12.3.0 mpi/openmpi/4.1.5 "
                               "Core/cmake/3.27.7"]}),
    Case("rhel_mpi_alias",
         "module load mpi/openmpi-x86_64\nmpirun -np 4 ./a.out\n",
         checked=["mpi/openmpi-x86_64"], can={"rhel", "eb", "spack", "tiered"}, mpi="mpirun",
         why={"cray": "software 'mpi/openmpi-x86_64' not installed"},
         rewritten={"eb": ["module load OpenMPI/4.1.5-GCC-12.3.0"],
                    "rhel": ["module load mpi/openmpi-x86_64"]}),
    Case("open_mpi_program_at_an_mpich_site",
         "module load openmpi/4.1\nmpirun -np $SLURM_NTASKS ./lmp -in in.lj\n",
         checked=["openmpi/4.1"], can={"eb", "spack", "tiered", "rhel"}, mpi="mpirun",
         why={"cray": "its MPI: cray-mpich (a program built with one MPI does not run "
                      "with another)",
              "nersc": "software 'openmpi/4.1' not installed"}),
    Case("cray_alps_launcher",
         "module load PrgEnv-gnu\naprun -n 64 -N 32 ./a.out\n",
         checked=["PrgEnv-gnu"], can={"cray", "nersc"}, mpi="aprun",
         notes=["aprun (line 2) is the launcher of Cray ALPS sites"]),
    Case("tacc_launcher",
         "ibrun ./namd2 +ppn 32 apoa1.namd\n", can=ALL, mpi="ibrun",
         notes=["ibrun (line 1)"]),
    Case("mpiexec_hydra_needs_an_mpi_stack",
         "mpiexec.hydra -n $SLURM_NTASKS -ppn 64 ./xhpl\n", mpi="mpiexec",
         can=ALL - {"dgx"}, why={"dgx": "runs mpiexec but the site has no MPI stack"}),
    Case("flux_run", "flux run -N 2 -n 64 ./lulesh -s 64\n", can=ALL, mpi="flux"),
    Case("srun_with_pmix", "srun --mpi=pmix -n 128 gmx_mpi mdrun -s topol.tpr\n",
         can=ALL, mpi="srun"),
    Case("timed_launcher", "time -p srun --cpu-bind=cores ./stream\n", can=ALL, mpi="srun"),
    Case("floating_version_latest",
         "module load miniconda3/latest\nconda activate myenv\npython x.py\n",
         # the job activates its own environment: any conda distribution serves
         checked=["miniconda3/latest"], can={"eb", "rhel", "tiered"},
         why={"spack": "software 'miniconda3/latest' not installed"},
         notes=["conda environment 'myenv' (line 2) must exist at the site"],
         rewritten={"eb": ["module load Miniconda3/23.10.0-1"]}),
    Case("toolchain_letters_count",
         "module load foss/2023b\nsrun ./app\n", checked=["foss/2023b"], can=set(),
         mpi="srun", why={"eb": "'foss/2023b' not installed (only foss/2023a)"},
         rewritten={"eb": ["module load foss/2023b"]}),
    Case("prefixed_and_build_suffixed_versions",
         "module load cuda/12.2.0_535.54.03 cudnn/v8.9.2\npython train.py\n",
         checked=["cuda/12.2.0_535.54.03", "cudnn/v8.9.2"], can={"rhel"}, vendor="nvidia",
         why={"eb": "software 'cudnn/v8.9.2' not installed"},
         rewritten={"rhel": ["module load cuda/12.2 cudnn/8.9.2.26_cuda12"]}),
    Case("anaconda3_is_anaconda",
         "module load anaconda3/2023.09\nsource activate tf\npython train.py\n",
         checked=["anaconda3/2023.09"], can={"eb", "rhel", "tiered"},
         notes=["conda environment 'tf' (line 2)"],
         rewritten={"tiered": ["module load lang/anaconda/2023.09"],
                    "eb": ["module load Anaconda3/2023.09-0"]}),
    Case("one_line_purge_then_load_with_aliases",
         "module purge; module load mpi/openmpi pytorch/2.1.0-gpu && module list\n"
         "mpirun -np 2 python ddp.py\n",
         checked=["mpi/openmpi", "pytorch/2.1.0-gpu"], can={"rhel"}, mpi="mpirun",
         why={"eb": "'pytorch/2.1.0-gpu' not installed (only PyTorch/2.1.2-foss-2023a-CUDA",
              "nersc": "software 'mpi/openmpi' not installed (site has: "},
         rewritten={"rhel": ["module purge; module load mpi/openmpi-x86_64 pytorch/2.1.0-gpu "
                             "&& module list"]}),
    Case("release_candidate_version",
         "module load julia/1.10.0-rc1\njulia --project=. run.jl\n",
         checked=["julia/1.10.0-rc1"], can=set(),
         why={"eb": "software 'julia/1.10.0-rc1' not installed"}),
    Case("summit_jsrun",
         "module load spectrum-mpi cuda\njsrun -n 6 -a 1 -g 1 ./a.out\n",
         checked=["spectrum-mpi", "cuda"], can=set(), mpi="jsrun", vendor="nvidia",
         notes=["jsrun (line 2) is the launcher of IBM LSF/CSM sites"],
         why={"rhel": "software 'spectrum-mpi' not installed"}),
    Case("mamba_activate_after_module",
         "module load Miniforge3\nmamba activate /work/envs/md\npython md.py\n",
         checked=["Miniforge3"], can=set(),
         notes=["mamba environment '/work/envs/md' (line 2) must exist at the site"]),
    Case("apptainer_gpu_container_from_a_registry",
         "#SBATCH --gres=gpu:1\nmodule load apptainer\n"
         "apptainer exec --nv docker://nvcr.io/nvidia/pytorch:23.10-py3 python train.py\n",
         checked=["apptainer"], can={"eb", "rhel"}, vendor="nvidia",
         container=("docker://nvcr.io/nvidia/pytorch:23.10-py3", "apptainer", True, "nvidia"),
         why={"cray": "uses nvidia GPUs but the site's are mi250x",
              "spack": "needs a container runtime, site has none",
              "nersc": "container runtime 'apptainer' not available"}),
    Case("singularity_run_with_binds_under_srun",
         "module load singularity\n"
         "srun singularity run -B /scratch:/scratch,/project lammps_2Aug2023.sif -in in.lj\n",
         checked=["singularity"], can={"eb", "rhel", "cray"}, mpi="srun",
         container=("lammps_2Aug2023.sif", "apptainer", True, None),
         why={"tiered": "container runtime 'apptainer' not available"}),
    Case("podman_run",
         "podman run --rm -v $PWD:/work -w /work docker.io/library/python:3.11-slim "
         "python /work/x.py\n",
         can={"rhel"}, container=("docker.io/library/python:3.11-slim", "podman", True, None),
         why={"eb": "container runtime 'podman' not available (site has: apptainer)"}),
    Case("docker_run_where_no_site_has_docker",
         "docker run --rm --gpus all -v $PWD:/w pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime"
         " python /w/t.py\n",
         can=set(), container=("pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime", "docker",
                               True, "nvidia"), vendor="nvidia",
         notes=["uses GPUs (docker with GPUs, line 1) but the job requests none"],
         why={"rhel": "container runtime 'docker' not available"}),
    Case("shifter_image",
         "shifter --image=docker:nersc/pytorch:24.04 python train.py\n",
         can={"nersc"}, container=("docker:nersc/pytorch:24.04", "shifter", True, None),
         why={"eb": "container runtime 'shifter' not available"}),
    Case("charliecloud",
         "ch-run -b /scratch:/scratch ./ubuntu2204 -- python3 x.py\n",
         can={"tiered"}, container=("./ubuntu2204", "charliecloud", True, None)),
    Case("enroot_start",
         "enroot start --mount $PWD:/work pytorch+23.10 python /work/t.py\n",
         can={"dgx"}, container=("pytorch+23.10", "enroot", True, None)),
    Case("pyxis_container_image",
         "#SBATCH --gpus-per-node=8\n"
         "srun --container-image=nvcr.io#nvidia/pytorch:23.10-py3 "
         "--container-mounts=$PWD:/work python /work/t.py\n",
         can={"dgx"}, mpi="srun",
         container=("nvcr.io#nvidia/pytorch:23.10-py3", "pyxis", True, None),
         why={"eb": "container runtime 'pyxis' not available (pyxis: srun "
                    "--container-image, which needs enroot)"}),
    Case("apptainer_pull_then_exec",
         "apptainer pull --force lolcow.sif docker://ghcr.io/apptainer/lolcow:latest\n"
         "apptainer exec lolcow.sif cowsay moo\n",
         can={"eb", "rhel", "cray"},
         container=("docker://ghcr.io/apptainer/lolcow:latest", "apptainer", True, None),
         why={"dgx": "container runtime 'apptainer' not available (site has: enroot)"}),
    Case("podman_hpc_with_gpus",
         "#SBATCH --gpus-per-node=4\n"
         "podman-hpc run --rm --gpu -v $SCRATCH:/scratch nersc/pytorch:24.04 python t.py\n",
         can={"nersc"}, container=("nersc/pytorch:24.04", "podman-hpc", True, "nvidia"),
         vendor="nvidia",
         why={"rhel": "container runtime 'podman-hpc' not available"}),
    Case("sarus_with_mpi",
         "srun sarus run --mpi --mount=type=bind,source=$PWD,destination=/w "
         "ethcscs/osu-mb:5.3.2-mpich3.1.4 ./osu_latency\n",
         can=set(), mpi="srun", container=("ethcscs/osu-mb:5.3.2-mpich3.1.4", "sarus", True,
                                           None),
         why={"eb": "container runtime 'sarus' not available"}),
    Case("enroot_import_then_start",
         "enroot import -o pyt.sqsh 'docker://nvcr.io#nvidia/pytorch:23.10-py3'\n"
         "enroot create --name pyt pyt.sqsh\nenroot start --rw pyt nvidia-smi\n",
         can={"dgx"}, container=("docker://nvcr.io#nvidia/pytorch:23.10-py3", "enroot", True,
                                 None)),
    Case("pyxis_named_container",
         "srun --container-name=pyt --container-mounts=/data:/data python train.py\n",
         can={"dgx"}, mpi="srun", container=("pyt", "pyxis", False, None)),
    Case("gpu_tool_under_a_launcher",
         "#SBATCH --gres=gpu:4\nsrun --ntasks-per-node=1 nvidia-smi -L\nsrun ./train\n",
         can=ALL - {"cray"}, mpi="srun", vendor="nvidia",
         why={"cray": "uses nvidia GPUs but the site's are mi250x"}),
    Case("podman_with_amd_devices",
         "#SBATCH --gpus=1\npodman run --device /dev/kfd --device /dev/dri "
         "rocm/pytorch:latest python3 t.py\n",
         can=set(), vendor="amd", container=("rocm/pytorch:latest", "podman", True, "amd"),
         why={"rhel": "uses amd GPUs but the site's are v100"}),
    Case("image_named_by_a_variable",
         "IMG=/scratch/$USER/images/gromacs.sif\nsingularity exec --nv $IMG gmx mdrun\n",
         notes=["the body uses GPUs (apptainer with GPUs, line 2) but the job requests "
                "none"],
         can={"eb", "rhel", "cray"}, container=("$IMG", "apptainer", False, "nvidia"),
         vendor="nvidia", why={"spack": "needs a container runtime, site has none"}),
    Case("conda_pip_and_venv",
         "source ~/miniconda3/etc/profile.d/conda.sh\nconda activate dft\n"
         "pip install --user ase==3.22.1\nsource $HOME/venvs/torch/bin/activate\n"
         "python relax.py\n",
         can=ALL, notes=["conda environment 'dft' (line 2)",
                         "pip installs packages at run time (line 3)",
                         "virtual environment $HOME/venvs/torch (line 4)"]),
    Case("micromamba_and_offline_pip",
         "eval \"$(micromamba shell hook --shell bash)\"\nmicromamba activate /scratch/envs/qe\n"
         "pip install --no-index --find-links wheels/ mylib\n",
         can=ALL, notes=["micromamba environment '/scratch/envs/qe' (line 2)"]),
    Case("spack_load_is_noted",
         ". /opt/spack/share/spack/setup-env.sh\nspack load gromacs@2023.3 +cuda\n"
         "gmx mdrun\n",
         can=ALL, notes=["spack load gromacs@2023.3 (line 2)"], absent=["gromacs"]),
    Case("path_into_opt",
         "export PATH=/opt/orca_5_0_4:$PATH\norca in.inp > out.log\n",
         can=ALL, notes=["PATH adds /opt/orca_5_0_4 (line 1)"]),
    Case("nvidia_smi_on_an_amd_site",
         "#SBATCH --gpus-per-node=4\nnvidia-smi\nsrun python train.py\n",
         can=ALL - {"cray"}, vendor="nvidia", mpi="srun",
         why={"cray": "uses nvidia GPUs but the site's are mi250x"}),
    Case("cuda_visible_devices_says_no_vendor",
         "#SBATCH --gres=gpu:2\necho $CUDA_VISIBLE_DEVICES\nsrun ./hip_app\n",
         can=ALL, mpi="srun"),
    Case("rocm_gpu_job",
         "#SBATCH --gpus-per-node=8\nmodule load craype-accel-amd-gfx90a rocm\nrocm-smi\n"
         "srun ./a.out\n",
         checked=["craype-accel-amd-gfx90a", "rocm"], can={"cray"}, vendor="amd",
         mpi="srun", why={"nersc": "software 'craype-accel-amd-gfx90a' not installed"}),
    Case("cuda_compile_without_gpus",
         "module load cuda/12.2\nnvcc -o saxpy saxpy.cu\n",
         checked=["cuda/12.2"], can={"eb", "rhel", "dgx", "nersc"}, vendor="nvidia",
         why={"spack": "software 'cuda/12.2' not installed"}),
    Case("architecture_branches_read_no_architecture",
         "case $(uname -m) in\n  aarch64) module load GROMACS/2023.3-foss-2023a ;;\n"
         "  x86_64)  module load GROMACS/2023.3-foss-2023a-CUDA-12.1.1 ;;\nesac\n"
         "gcc -O3 -march=native -o app app.c\n",
         unchecked=["GROMACS/2023.3-foss-2023a", "GROMACS/2023.3-foss-2023a-CUDA-12.1.1"],
         can=ALL),
    Case("load_in_an_if_condition",
         "if ! module load gromacs/2023 2>/dev/null; then\n  echo no gromacs; exit 1\nfi\n"
         "module load python3\ngmx mdrun\n",
         # the job exits when gromacs does not load: it needs gromacs
         checked=["gromacs/2023", "python3"], can={"eb"},
         why={"spack": "software 'gromacs/2023' not installed"}),
    Case("exec_ends_the_script",
         "module load Python/3.11\nexec python server.py\nmodule load never/1\n",
         checked=["Python/3.11"], absent=["never"], can={"eb", "spack", "nersc"}),
    Case("quoted_module_is_rewritten_whole",
         "module load 'CUDA/12.2.0'\nnvidia-smi -L\n",
         checked=["CUDA/12.2.0"], can={"eb", "rhel", "dgx", "nersc"}, vendor="nvidia",
         rewritten={"rhel": ["module load cuda/12.2"], "dgx": ["module load cuda/12.2"]}),
    Case("etc_profile_then_load",
         "source /etc/profile.d/modules.sh\nmodule load gcc/11.2.0 mpi/mpich-x86_64\n"
         "mpirun -np 8 ./a.out\n",
         checked=["gcc/11.2.0", "mpi/mpich-x86_64"], can={"rhel"}, mpi="mpirun"),
]


def _needs(case: Case) -> Needs:
    spec = Federation.parse("#!/bin/bash\n#SBATCH -t 10\n" + case.body)
    return needs_of(spec)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_body_needs_against_sites(case: Case) -> None:
    needs = _needs(case)
    got_checked = [s.full for s in needs.software if not s.unchecked]
    got_unchecked = [s.full for s in needs.software if s.unchecked]
    assert got_checked == case.checked
    assert got_unchecked == case.unchecked
    assert not {s.name for s in needs.software} & set(case.absent)
    assert needs.mpi == case.mpi
    c = needs.container
    assert (None if c is None else (c.image, c.runtime, c.image_known, c.gpu)) == case.container
    assert needs.gpu_vendor == case.vendor
    assert needs.architecture is None  # nothing in a body says which architecture
    for words in case.notes:
        assert any(words in n for n in needs.notes), (words, needs.notes)
    # GPUs used without being asked for is said only where a command or container uses
    # them (a module alone, as for a compile, is not a use)
    assert any("requests none" in n for n in needs.notes) == any(
        "requests none" in w for w in case.notes)
    assert_site_verdicts(needs, SITES, case.can, case.why)
    for site, lines in case.rewritten.items():
        new, _ = rewrite_modules(case.body, SITES[site])
        assert _module_lines(new) == lines, site


def _module_lines(body: str) -> list[str]:
    """The lines of `body` that hold module commands (and the lines they continue on)."""
    out, cont = [], False
    for ln in body.split("\n"):
        s = ln.strip()
        if cont or re.match(r"(?:module|ml)\s", s) or \
                re.search(r"(?:;|&&|\|\|)\s*(?:module|ml)\s", s):
            out.append(ln)
            cont = ln.endswith("\\")
        else:
            cont = False
    return out


def test_unchecked_and_noted_needs_say_so_in_the_summary() -> None:
    needs = _needs(CASES[14])  # module_use_adds_a_private_tree
    assert "software labtool/2.1 (not checked: may come from the tree of 'module use " \
           "/project/lab/modulefiles' at line 2)" in needs.summary()
    assert any(s.startswith("note: module use /project/lab/modulefiles") for s in
               needs.summary())
    img = _needs(next(c for c in CASES if c.name == "image_named_by_a_variable"))
    assert "container $IMG (apptainer, image named at run time, nvidia GPUs)" in img.summary()


def test_a_rewrite_reports_each_change_with_its_line() -> None:
    body = "#!/bin/bash\nmodule load GCC/12.3.0 \\\n    OpenMPI/4.1.5-GCC-12.3.0\n"
    new, notes = rewrite_modules(body, SITES["spack"])
    assert notes == [
        "rewrote: body line 2: module GCC/12.3.0 -> gcc/12.3.0 (as spack names it)",
        "rewrote: body line 2: module OpenMPI/4.1.5-GCC-12.3.0 -> "
        "openmpi/4.1.5-gcc-12.3.0-abc123x (as spack names it)"]
    # the same word unloaded then loaded: only the load is respelled
    new, _ = rewrite_modules("module unload CUDA/12.2.0; module load CUDA/12.2.0\n",
                             SITES["rhel"])
    assert new == "module unload CUDA/12.2.0; module load cuda/12.2\n"


def test_site_listings_are_read_with_their_marks() -> None:
    """Default and alias marks of Lmod (`(D)`, `(L,D)`, `<aL>`) and of Environment
    Modules 5 (`(default:latest)`, `(@)`) are not part of the names."""
    rhel = {m.full: m.default for m in SITES["rhel"].software}
    assert rhel["cuda/12.2"] is True and rhel["cuda/11.8"] is False
    assert "python3/3.9" in rhel and "mpi/openmpi-x86_64" in rhel
    cray = {m.full: m.default for m in SITES["cray"].software}
    assert cray["cray-mpich/8.1.27"] is True and "PrgEnv-cray/8.4.0" in cray
    assert "cce/16.0.1" in cray and "craype-x86-trento" in cray
    spack = {m.full: m.default for m in SITES["spack"].software}
    assert spack["gcc/13.2.0"] is True and "py-numpy/1.26.4" in spack  # spider adds it
    _, _, mods = parse_module_list("system environment-modules 5.4.0\n/m:\n"
                                   "gcc/13.1.0(13:default)\nfoo/2(@)\n")
    assert [(m.full, m.default) for m in mods] == [("foo/2", False), ("gcc/13.1.0", True)]
    # the default is the one a bare name picks
    assert find_module("cuda", SITES["rhel"].software).full == "cuda/12.2"
    assert find_module("gcc", SITES["spack"].software).full == "gcc/13.2.0"


def test_count() -> None:
    assert len(CASES) >= 40 and len({c.name for c in CASES}) == len(CASES)


# ---------------------------------------------------------------- one test per fault fixed
# (each uses only what the reading offered before, so that it fails on the old behaviour)

def _reasons(body: str, site: str) -> list[str]:
    return needs_reasons(needs_of(Federation.parse("#!/bin/bash\n" + body)), SITES[site])


def _read(body: str) -> list[str]:
    return [s.full for s in body_needs(body)[0]]


@pytest.mark.parametrize("body, read", [
    # a redirection was read as a module named "2>" (or ">"), found at no site
    ("module load cuda/12.2 2>/dev/null\nmodule load gcc >/dev/null 2>&1\n",
     ["cuda/12.2", "gcc"]),
    # loads after a top-level exit / exec never run
    ("module load gcc\nexit 0\nmodule load old/1\n", ["gcc"]),
    ("module load gcc\nexec ./server\nmodule load old/1\n", ["gcc"]),
    # a modulefile by path was read as a module named "."
    ("module load ./mods/tool/1.0 ~/mods/x gcc\n", ["gcc"]),
    # `module swap A B` / `switch` loads B; `ml -A B` unloads A and loads B
    ("module swap PrgEnv-cray PrgEnv-gnu\nmodule switch gcc/13\n", ["PrgEnv-gnu", "gcc/13"]),
    ("ml -intel gcc/12 -impi openmpi\n", ["gcc/12", "openmpi"]),
    # a heredoc a shell runs is read (as before); one written for a later job is kept
    # apart (below)
    ("bash <<EOF\nmodule load hdf5\nEOF\n", ["hdf5"]),
    # a function's body on its own line
    ("function setup { module load gcc; }\nsetup\n", ["gcc"]),
    # `#` inside a word is not a comment
    ("module load foo#bar/1\n", ["foo#bar/1"]),
    # a quoted string that spans lines is one word (its lines are not commands)
    ("echo 'usage: first run\n  module load mytool\n'\nmodule load gcc\n", ["gcc"]),
    ("python -c \"\nimport sys\nexit()\n\"\nmodule load openmpi\n", ["openmpi"]),
    # ... unless it never closes (a template): then each line is read alone
    ('X="${A:+--author \\"${A}\\"}"\"\nmodule load cuda/4.2.9\n', ["cuda/4.2.9"]),
])
def test_fault_module_words_read_as_the_shell_reads_them(body: str, read: list[str]) -> None:
    assert _read(body) == read


@pytest.mark.parametrize("body, site", [
    # both arms of an if/else (or a case) were needs: no site has both
    ("if [ $(hostname) = a ]; then module load rocm/5.7.1; else module load cuda/12.2; fi\n",
     "eb"),
    ("case $(uname -m) in aarch64) module load foo/1 ;; *) module load GCC/12.3.0 ;; esac\n",
     "eb"),
    ("module load cuda/12.2 || module load rocm || true\n", "spack"),
    # a container or launcher used only in a branch
    ("if [ \"$USE_SIF\" = 1 ]; then\n  apptainer exec img.sif ./run\nelse\n  ./run\nfi\n",
     "spack"),
    ("if [ $SLURM_NNODES -gt 1 ]; then mpirun ./a.out; else ./a.out; fi\n", "dgx"),
    ("module load darshan 2>/dev/null || true\n", "eb"),
    ("module load cray-pmi || echo 'no PMI module, continuing'\n", "eb"),
    ("[ -d /opt/rocm ] && module load rocm\n", "eb"),
    # a function never called (or only in a branch) loads nothing for sure
    ("setup() {\n  module load rocm\n}\necho setup\n", "eb"),
    ("setup ()\n{\n  module load rocm\n}\n[ -d /opt/rocm ] && setup\n", "eb"),
    ("function setup {\n  module load rocm\n}\nif [ $A ]; then setup; fi\n", "eb"),
    ("module try-load cray-python\n", "eb"),
    # a module from the job's own tree is at no site's listing
    ("module use $HOME/modulefiles\nmodule load mytool/2\n", "eb"),
    ("export MODULEPATH=/proj/mods:$MODULEPATH\nmodule load mytool/2\n", "eb"),
    # a load inside a job script written by a here-document is that job's
    ("cat > next.sh <<EOF\nmodule load samtools/1.17\nEOF\nsbatch next.sh\n", "eb"),
    ("cat <<-EOF | sbatch\n\tmodule load samtools/1.17\n\tEOF\n", "eb"),
    # spellings of the same package at the site
    ("module load mpi/openmpi-x86_64\n", "eb"),
    ("module load gcc/12.3.0 openmpi/4.1.5 cmake\n", "tiered"),
    ("module load intel-oneapi-mpi/2021.10\n", "eb"),
    ("module load anaconda3/2023.09\n", "tiered"),
    ("module load fftw3\n", "eb"),
    ("module load miniconda3/latest\n", "eb"),
    ("module load cuda/default\n", "rhel"),
    # the runtime is on the site's PATH, not a module
    ("module load singularity\nsingularity exec x.sif true\n", "eb"),
])
def test_fault_no_site_is_refused_for_what_cannot_be_known(body: str, site: str) -> None:
    assert _reasons(body, site) == []


@pytest.mark.parametrize("body, site, words", [
    # 2023a and 2023b are different toolchains (it was rewritten to the other one)
    ("module load foss/2023b\n", "eb", "only foss/2023a"),
    # a load whose failure ends the job is a need
    ("module load darshan || exit 1\n", "eb", "'darshan' not installed"),
    ("module load darshan || { echo 'no darshan' >&2; exit 1; }\n", "eb", "'darshan'"),
    # runtimes the body uses that the site lacks
    ("shifter --image=docker:ubuntu:22.04 cat /etc/os-release\n", "eb", "'shifter'"),
    ("srun --container-image=nvcr.io#nvidia/pytorch:23.10-py3 python t.py\n", "eb",
     "'pyxis'"),
    ("enroot start pytorch python t.py\n", "eb", "'enroot'"),
    ("ch-run ./img -- true\n", "eb", "'charliecloud'"),
    ("apptainer exec $IMG true\n", "spack", "needs a container runtime"),
    ("apptainer pull x.sif docker://alpine:3\n", "spack", "needs a container runtime"),
    ("srun sarus run ubuntu:22.04 true\n", "eb", "'sarus'"),
    ("srun --container-name=pyt python t.py\n", "eb", "'pyxis'"),
    ("podman-hpc run --rm ubuntu:22.04 true\n", "rhel", "'podman-hpc'"),
    ("#SBATCH --gres=gpu:4\nsrun nvidia-smi -L\n", "cray", "nvidia GPUs"),
    # launchers that were not recognised as MPI
    ("mpiexec.hydra -n 4 ./a.out\n", "dgx", "no MPI stack"),
    ("mpirun.openmpi -n 4 ./a.out\n", "dgx", "no MPI stack"),
    # the GPU vendor a job's commands use
    ("#SBATCH --gpus-per-node=4\nnvidia-smi\nsrun ./a.out\n", "cray", "nvidia GPUs"),
    ("#SBATCH --gres=gpu:1\napptainer exec --rocm x.sif true\n", "eb", "amd GPUs"),
])
def test_fault_a_need_the_body_states_is_checked(body: str, site: str, words: str) -> None:
    assert any(words in r for r in _reasons(body, site)), _reasons(body, site)


def test_fault_launchers_behind_leaders_and_site_launchers() -> None:
    assert body_needs("time -p srun ./a.out\n")[2] == "srun"
    assert body_needs("timeout 2h mpirun ./a.out\n")[2] == "mpirun"
    assert body_needs("aprun -n 4 ./a.out\n")[2] == "aprun"
    assert body_needs("flux run -n 4 ./a.out\n")[2] == "flux"


def test_fault_rewrites_follow_continuations_and_skip_unloads() -> None:
    body = "module load GCC/12.3.0 \\\n    OpenMPI/4.1.5-GCC-12.3.0\n"
    assert rewrite_modules(body, SITES["spack"])[0] == \
        "module load gcc/12.3.0 \\\n    openmpi/4.1.5-gcc-12.3.0-abc123x\n"
    assert rewrite_modules("module unload CUDA/12.2.0; module load CUDA/12.2.0\n",
                           SITES["rhel"])[0] == \
        "module unload CUDA/12.2.0; module load cuda/12.2\n"
    assert rewrite_modules("module swap PrgEnv-cray PrgEnv-gnu/8.4\n", SITES["cray"])[0] \
        == "module swap PrgEnv-cray PrgEnv-gnu/8.4.0\n"
    assert rewrite_modules("module load foss/2023b\n", SITES["eb"])[0] == \
        "module load foss/2023b\n"  # not respelled as another toolchain
    assert rewrite_modules("module use ~/mods\nmodule load gcc/12.3.0\n",
                           SITES["tiered"])[0] == "module use ~/mods\nmodule load gcc/12.3.0\n"


def test_fault_environment_modules_symbolic_versions_and_lmod_marks() -> None:
    _, _, mods = parse_module_list("system environment-modules 5.4.0\n/m:\n"
                                   "gcc/13.1.0(13:default)\nbar/2 <aL>\n")
    assert [(m.full, m.default) for m in mods] == [("bar/2", False), ("gcc/13.1.0", True)]


def test_fault_nested_else_if_keeps_its_blocks_balanced() -> None:
    """`else if` opens a second `if` (closed by its own `fi`): the load after both is
    outside every branch, so it is checked."""
    body = ("if [ -n \"$PBS_JOBNAME\" ]; then\n  module load anaconda3/2023.09\n"
            "else if [ -n \"$SLURM_JOB_NAME\" ]; then\n  module load cuda/12.2\nfi\nfi\n"
            "module load gcc/11.2.0\n")
    needs = needs_of(Federation.parse("#!/bin/bash\n" + body))
    assert [(s.full, bool(s.unchecked)) for s in needs.software] == [
        ("anaconda3/2023.09", True), ("cuda/12.2", True), ("gcc/11.2.0", False)]
    assert any("only gcc/11.2.0" not in r and "gcc/11.2.0" in r
               for r in needs_reasons(needs, SITES["eb"]))


def test_windows_line_endings_read_and_rewrite_the_same() -> None:
    body = "module load GCC/12.3.0 \\\r\n   OpenMPI/4.1.5-GCC-12.3.0\r\nsrun ./a.out\r\n"
    assert _read(body) == ["GCC/12.3.0", "OpenMPI/4.1.5-GCC-12.3.0"]
    assert body_needs(body)[2] == "srun"
    tight = "module load GCC/12.3.0\\\n  OpenMPI/4.1.5-GCC-12.3.0\n"  # no blank before \\
    assert rewrite_modules(tight, SITES["spack"])[0] == \
        "module load gcc/12.3.0\\\n  openmpi/4.1.5-gcc-12.3.0-abc123x\n"
    assert rewrite_modules(body, SITES["spack"])[0] == (
        "module load gcc/12.3.0 \\\r\n   openmpi/4.1.5-gcc-12.3.0-abc123x\r\nsrun ./a.out\r\n")


WORDS = st.sampled_from(["module", "ml", "load", "swap", "-q", "GCC/12.3.0", "cuda/12.2",
                         "OpenMPI/4.1.5-GCC-12.3.0", "rocm", "if", "then", "fi", "else",
                         "exit", "<<EOF", "EOF", "cat", "bash", "||", "&&", ";", "\\", "'",
                         '"', "#", "$M", "{", "}", "()", "2>/dev/null", "\n", " ", "\r\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=30).map(" ".join))
def test_rewriting_never_crashes_and_is_stable(body: str) -> None:
    for site in ("eb", "spack", "rhel", "tiered"):
        once, _ = rewrite_modules(body, SITES[site])
        twice, notes = rewrite_modules(once, SITES[site])
        assert twice == once and notes == []
        assert len(scan_body(once).loads) == len(scan_body(body).loads)


# ---------------------------------------------------------------- through placement

def _snapshot(site: str, gpus: int, gpu: str | None) -> tuple[SiteConfig, SiteSnapshot]:
    nodes = [Node(name=f"{site}{i}", state="idle", cpus=64, memory_mb=256000, gpus=gpus,
                  gpu_type=gpu, partitions=["main"], architecture="x86_64") for i in range(2)]
    return (SiteConfig(name=site), SiteSnapshot(
        site=site, nodes=nodes, partitions=[Partition(name="main", default=True,
                                                      total_nodes=2,
                                                      nodes=[n.name for n in nodes])]))


def test_placement_reads_the_body_once_and_explains_what_it_did_not_check() -> None:
    """A GPU job whose body branches by host, uses its own module tree and an NVIDIA
    container: the AMD site is refused for the vendor, the site without apptainer for the
    runtime, the branch loads and the private module refuse nobody, and the explanation
    says what was read but not checked."""
    script = ("#!/bin/bash\n#SBATCH --gres=gpu:1\n#SBATCH -t 30\n"
              "if [[ $(hostname) == frontier* ]]; then module load rocm/5.7.1\n"
              "else module load cuda/12.2; fi\n"
              "module use /project/lab/modulefiles\nmodule load labtool/2.1\n"
              "apptainer exec --nv $IMG python train.py\n")
    spec = Federation.parse(script)
    sites = [_snapshot("eb", 4, "a100"), _snapshot("cray", 8, "mi250x"),
             _snapshot("nersc", 4, "a100")]
    pl = place(spec, sites, capabilities={k: SITES[k] for k in ("eb", "cray", "nersc")})
    verdicts = {v.site: v for v in pl.ranked}
    assert pl.choice == "eb" and verdicts["eb"].feasible
    assert any("nvidia GPUs" in r for r in verdicts["cray"].reasons)
    assert any("'apptainer' not available" in r for r in verdicts["nersc"].reasons)
    head = pl.explain().splitlines()[0]
    assert "software labtool/2.1 (not checked: may come from the tree of" in head
    assert "container $IMG (apptainer, image named at run time, nvidia GPUs)" in head
    new, notes = rewrite_modules(spec.script, SITES["eb"])
    assert "else module load CUDA/12.2.0; fi" in new and "module load labtool/2.1" in new
    assert len(notes) == 1


def test_flat_names_carry_their_version_after_the_first_dash_digit() -> None:
    """Spack's Tcl modules on Environment Modules are flat (`NAME-VERSION-COMPILER-HASH`);
    hand-made trees write `mvapich2-1.8.1` or `rocm-5.4.3`. A need in either form finds
    the other form, and the load is respelled as the site spells it."""
    _, _, flat = parse_module_list(
        "system environment-modules 4.5.2\n/opt/spack/share/spack/modules/linux-rhel8-zen2:\n"
        "cuda-12.2.0-gcc-12.3.0-3xkq7ab\nmvapich2-2.3.7-gcc-12.3.0-pq2rst4\n"
        "openmpi-4.1.5-gcc-12.3.0-m6tvw3e\nrocm-5.4.3\n")
    caps = SiteCapabilities(site="flat", software=flat)
    assert find_module("openmpi/4.1.5", flat).full == "openmpi-4.1.5-gcc-12.3.0-m6tvw3e"
    assert find_module("CUDA/12.2", flat).full == "cuda-12.2.0-gcc-12.3.0-3xkq7ab"
    assert find_module("mvapich2-2.3", flat).full == "mvapich2-2.3.7-gcc-12.3.0-pq2rst4"
    assert find_module("openmpi/4.0", flat) is None
    assert find_module("rocm-5.4.3", SITES["cray"].software) is None  # cray has 5.7.1
    assert find_module("rocm-5.7", SITES["cray"].software).full == "rocm/5.7.1"
    new, _ = rewrite_modules("module load openmpi/4.1.5 cuda11.8\nmodule load rocm-5.4.3\n",
                             caps)
    assert new == "module load openmpi-4.1.5-gcc-12.3.0-m6tvw3e cuda11.8\nmodule load " \
        "rocm-5.4.3\n"
    needs = needs_of(Federation.parse("#!/bin/bash\nmodule load mvapich2-1.8.1\n"))
    assert needs_reasons(needs, caps) == [
        "software 'mvapich2-1.8.1' not installed (only mvapich2-2.3.7-gcc-12.3.0-pq2rst4)"]


def test_fault_mpi_stacks_are_found_however_the_site_spells_them() -> None:
    """An MPI stack known only from its module (no launcher on the login's PATH) was
    missed when spelled RHEL's, Spack's or flat way: the site then 'had no MPI stack' and
    every mpirun job was refused there."""
    mods = [SoftwareModule.parse(m) for m in (
        "mpi/openmpi-x86_64", "intel-oneapi-mpi/2021.10.0", "mvapich2-2.3.7-gcc-12.3.0-pq2",
        "cray-mpich/8.1.27", "gcc/12.3.0")]
    assert parse_mpi("", mods) == (["cray-mpich", "intel-mpi", "mvapich2", "openmpi"], [])


def test_fault_a_module_loaded_twice_is_missing_once() -> None:
    body = "module purge\nmodule load GROMACS/2023.3\nmodule purge\nmodule load GROMACS/2023.3\n"
    assert _reasons(body, "spack") == [
        "software 'GROMACS/2023.3' not installed (site has: fftw/3.3.10, gcc/12.3.0, "
        "gcc/13.2.0, hdf5/1.14.3, intel-oneapi-compilers/2023.2.1, intel-oneapi-mpi/2021.10.0,"
        " openmpi/4.1.5-gcc-12.3.0-abc123x, py-numpy/1.26.4, ... (1 more))"]


def test_an_empty_module_word_names_no_module():
    # found by the property test: `ml '` (a quote never closed) read as a module named ''
    for body in ("ml '", "module load ''", 'module load "" gcc'):
        software, _, _ = body_needs(body)
        assert all(s.name for s in software), (body, software)
    assert [s.name for s in body_needs('module load "" gcc')[0]] == ["gcc"]
