"""What a job needs from a site's software, read from bodies written for this sweep: module
loads inside the script's own functions, `||` fallbacks, hidden modules, `bash -c` strings,
sourced helpers; EasyBuild toolchains and bundles (`foss/2023b` holds OpenMPI 4.1.6,
`SciPy-bundle` holds numpy), build suffixes (`-CUDA-12.1.1`), and conda-family
distributions when the job activates its own environment. Each body is checked against
six sites whose software is given as their module systems list it (or, for one, as a
sites file names it), and against a site whose software is not known (never refused).
"""

from __future__ import annotations

import pytest
from sweep_helpers import EnvironmentCase, assert_environment_case
from test_software_unseen4 import needs as body_needs

from diamond_jupyter.capabilities import SiteCapabilities, SoftwareModule
from diamond_jupyter.discovery import parse_module_list
from diamond_jupyter.federation import Federation
from diamond_jupyter.needs import needs_of
from diamond_jupyter.script_body import scan_body
from diamond_jupyter.software import find_module, needs_reasons, rewrite_modules

# ---------------------------------------------------------------- sites

# EasyBuild on Lmod: a CPU and a CUDA build of GROMACS, the 2023a toolchains, a bundle
EBX = """system lmod 8.7.32
/apps/eb/modules/all:
Anaconda3/2023.09-0
CUDA/12.1.1
FFTW/3.3.10-GCC-12.3.0
GCC/12.3.0
GCCcore/12.3.0
GROMACS/2023.3-foss-2023a
GROMACS/2023.3-foss-2023a-CUDA-12.1.1 (D)
OpenMPI/4.1.5-GCC-12.3.0
Python/3.11.3-GCCcore-12.3.0
SciPy-bundle/2023.07-gfbf-2023a
foss/2023a
gfbf/2023a
intel/2023a
"""

# Spack's Lmod hierarchy: Core in avail, the rest from spider
SPK = """system lmod 8.7.20
/opt/spack/lmod/Core:
gcc/13.2.0 (D)
miniconda3/24.3.0
@@spider
cuda/12.4.0
hdf5/1.14.3
openmpi/4.1.6
py-numpy/1.26.4
python/3.11.6
"""

# a hand-made Environment Modules tree (V100s)
HPC = """system environment-modules 5.2.0
/opt/modulefiles:
anaconda/2023.09
cuda/11.8
gcc/11.2.0
gromacs/2023.3
mvapich2/2.3.7
singularity/3.8.7
"""

# HPE Cray EX (MI250X)
CRAY = """system lmod 8.7.19
/opt/cray/pe/lmod/modulefiles/core:
PrgEnv-gnu/8.5.0
cray-mpich/8.1.28 (L)
cray-python/3.11.5
rocm/5.7.1
"""

# a sites file that names only toolchains, a bundle and a conda distribution
TC = ["foss/2023b", "intel/2022b", "SciPy-bundle/2023.11-gfbf-2023b", "Miniforge3/24.1.2-0"]


def _listed(site: str, listing: str, runtimes: list[str] | None, mpi: list[str] | None,
            gpus: list[str]) -> SiteCapabilities:
    return SiteCapabilities(site=site, software=parse_module_list(listing)[2],
                            container_runtimes=runtimes, mpi=mpi, gpu_models=gpus)


SITES = {c.site: c for c in (
    _listed("ebx", EBX, ["apptainer"], ["openmpi", "intel-mpi"], ["a100"]),
    _listed("spk", SPK, [], ["openmpi"], ["h100"]),
    _listed("hpc", HPC, ["singularity"], ["mvapich2"], ["v100"]),
    _listed("cray", CRAY, ["singularity"], ["cray-mpich"], ["mi250x"]),
    SiteCapabilities(site="tc", software=[SoftwareModule.parse(s) for s in TC]),
    SiteCapabilities(site="bare", software=[], container_runtimes=["apptainer"], mpi=[]),
    SiteCapabilities(site="unknown"),  # nothing known: nothing checked
)}
ALL = set(SITES) - {"unknown"}


# ---------------------------------------------------------------- the cases

Case = EnvironmentCase


CASES = [
    # ---- functions the script defines: a called one loads, one never called does not
    Case("called_function_loads",
         "load_env() {\n    module purge\n    module load GCC/12.3.0 OpenMPI/4.1.5-GCC-12.3.0\n"
         "}\nload_env\nsrun ./sim\n",
         checked=["GCC/12.3.0", "OpenMPI/4.1.5-GCC-12.3.0"], can={"ebx"}, mpi="srun",
         why={"spk": "'GCC/12.3.0' not installed (only gcc/13.2.0)",
              "tc": "'GCC/12.3.0' not installed"}),
    Case("function_defined_never_called",
         "setup_gpu() {\n  module load CUDA/12.1.1\n}\n# setup_gpu is for the GPU queue\n"
         "python cpu_job.py\n",
         unchecked=["CUDA/12.1.1"], can=ALL),
    Case("function_called_only_in_a_branch",
         "use_gpu() { module load CUDA/12.1.1; }\n"
         "if [ -n \"$SLURM_JOB_GPUS\" ]; then use_gpu; fi\n./app\n",
         unchecked=["CUDA/12.1.1"], can=ALL),
    Case("function_called_by_a_called_function",
         "base() { module load GCC/12.3.0; }\nfull() {\n  base\n"
         "  module load FFTW/3.3.10-GCC-12.3.0\n}\nfull\n./fft_bench\n",
         checked=["GCC/12.3.0", "FFTW/3.3.10-GCC-12.3.0"], can={"ebx"},
         why={"hpc": "'GCC/12.3.0' not installed (only gcc/11.2.0)"}),
    Case("function_keyword_form",
         "function modules_for_run {\n  module load Python/3.11\n}\nmodules_for_run\n"
         "python analyse.py\n",
         checked=["Python/3.11"], can={"ebx", "spk", "tc"},
         why={"cray": "software 'Python/3.11' not installed"},
         rewritten={"spk": "function modules_for_run {\n  module load python/3.11.6\n}\n"
                           "modules_for_run\npython analyse.py\n"}),
    Case("function_called_before_it_is_defined",
         "setup\nsetup() { module load rocm/5.7.1; }\n./hip_app\n",
         unchecked=["rocm/5.7.1"], can=ALL),
    Case("branch_inside_a_called_function",
         "env_for() {\n  if [ \"$1\" = gpu ]; then\n    module load CUDA/12.1.1\n  fi\n"
         "  module load GCC/12.3.0\n}\nenv_for cpu\nmake\n",
         checked=["GCC/12.3.0"], unchecked=["CUDA/12.1.1"], can={"ebx"}),
    Case("container_and_launcher_in_a_called_function",
         "#SBATCH --gres=gpu:4\nrun_training() {\n"
         "  srun apptainer exec --nv pytorch_24.01.sif python train.py\n}\nrun_training\n",
         container=("pytorch_24.01.sif", "apptainer"), mpi="srun", vendor="nvidia",
         can={"ebx", "hpc", "bare", "tc"},
         why={"cray": "uses nvidia GPUs", "spk": "needs a container runtime"}),
    Case("one_line_function_with_an_if",
         "prep() { if [ -d /opt/rocm ]; then module load rocm/5.7.1; fi; module load "
         "PrgEnv-gnu; }\nprep\nsrun ./a.out\n",
         checked=["PrgEnv-gnu"], unchecked=["rocm/5.7.1"], can={"cray"}, mpi="srun"),
    Case("braced_block_with_an_if_logged",
         "{ if [ \"$(uname -m)\" = aarch64 ]; then module load GCC/13.2.0; fi; } "
         ">> setup.log 2>&1\nmodule load Python/3.11\npython run.py\n",
         checked=["Python/3.11"], unchecked=["GCC/13.2.0"], can={"ebx", "spk", "tc"}),
    Case("function_loads_its_argument",
         "need() {\n  module load \"$1\" || { echo \"cannot load $1\" >&2; exit 1; }\n}\n"
         "need GROMACS/2023.3\nneed CUDA/12.1.1\nsrun gmx mdrun -nb gpu\n",
         checked=["GROMACS/2023.3", "CUDA/12.1.1"], can={"ebx"}, mpi="srun", vendor="nvidia",
         why={"hpc": "'CUDA/12.1.1' not installed (only cuda/11.8)"}),
    Case("function_loads_all_its_arguments",
         "load_all() { module load \"$@\"; }\nload_all GCC/12.3.0 OpenMPI/4.1.5\n"
         "mpirun ./a.out\n",
         checked=["GCC/12.3.0", "OpenMPI/4.1.5"], can={"ebx"}, mpi="mpirun"),
    Case("function_argument_in_a_branch",
         "need() { module load \"$1\"; }\nif [ -d /opt/rocm ]; then need rocm/5.7.1; fi\n",
         unchecked=["rocm/5.7.1"], can=ALL),
    # ---- helpers the job reads at run time
    Case("sourced_helper_is_noted",
         "source ./site_env.sh\nmodule load GCC/12.3.0\n./build.sh\n",
         checked=["GCC/12.3.0"], can={"ebx"},
         notes=["sources ./site_env.sh (line 1): a helper read at run time"]),
    Case("module_system_init_is_no_helper",
         ". /etc/profile.d/modules.sh\nmodule load gcc\nmake\n",
         checked=["gcc"], can={"ebx", "spk", "hpc", "tc"}, no_notes=["sources"],
         why={"cray": "software 'gcc' not installed"}),
    Case("loads_in_a_bash_c_string",
         "srun bash -c 'module load GCC/12.3.0 && ./hello'\n",
         checked=["GCC/12.3.0"], can={"ebx"}, mpi="srun"),
    Case("bash_c_inside_a_container_is_the_image_s",
         "apptainer exec env.sif bash -c 'module load foo/1 && run'\n",
         container=("env.sif", "apptainer"), can={"ebx", "hpc", "cray", "bare", "tc"},
         why={"spk": "needs a container runtime, site has none"}),
    # ---- fallbacks: one of them is needed
    Case("fallback_to_an_older_version",
         "module load CUDA/12.4 || module load CUDA/12.1\nnvcc -o k k.cu\n",
         checked=["CUDA/12.4"], unchecked=["CUDA/12.1"], can={"ebx", "spk"},
         alternatives={"CUDA/12.4": ["CUDA/12.1"]}, vendor="nvidia",
         why={"hpc": "'CUDA/12.4' not installed, nor its fallback CUDA/12.1 (only cuda/11.8)"}),
    Case("fallback_chain_then_exit",
         "module load gcc/13 || module load gcc/12 || exit 1\nmake\n",
         checked=["gcc/13"], unchecked=["gcc/12"], can={"spk", "ebx", "tc"},
         alternatives={"gcc/13": ["gcc/12"]},
         why={"hpc": "nor its fallback gcc/12"}),
    Case("fallback_whose_failure_is_tolerated",
         "module load darshan/3.4 || module load darshan || echo 'running without darshan'\n"
         "./io_bench\n",
         unchecked=["darshan/3.4", "darshan"], can=ALL,
         alternatives={"darshan/3.4": ["darshan"]}),
    Case("fallback_of_several_modules",
         "module load GCC/12.3.0 OpenMPI/4.1.5-GCC-12.3.0 || module load gcc/13.2.0 "
         "openmpi/4.1.6\nmpirun ./a.out\n",
         checked=["GCC/12.3.0", "OpenMPI/4.1.5-GCC-12.3.0"],
         unchecked=["gcc/13.2.0", "openmpi/4.1.6"], can={"ebx", "spk", "tc"}, mpi="mpirun",
         alternatives={"GCC/12.3.0": ["gcc/13.2.0"],
                       "OpenMPI/4.1.5-GCC-12.3.0": ["openmpi/4.1.6"]}),
    Case("if_not_loaded_then_exit",
         "if ! module load GROMACS/2023.3 2>/dev/null; then\n"
         "    echo 'GROMACS 2023.3 is missing here' >&2\n    exit 3\nfi\nsrun gmx_mpi mdrun\n",
         checked=["GROMACS/2023.3"], can={"ebx", "hpc"}, mpi="srun",
         why={"spk": "software 'GROMACS/2023.3' not installed"}),
    Case("if_loaded_else_fallback",
         "if module load CUDA/12.4 2>/dev/null; then\n  echo 'CUDA 12.4'\nelse\n"
         "  module load CUDA/12.1\nfi\nnvcc -o k k.cu\n",
         checked=["CUDA/12.4"], unchecked=["CUDA/12.1"], can={"ebx", "spk"},
         alternatives={"CUDA/12.4": ["CUDA/12.1"]}, vendor="nvidia",
         why={"hpc": "nor its fallback CUDA/12.1"}),
    Case("if_not_loaded_go_on_without",
         "if ! module load darshan/3.4; then\n  echo 'no I/O profile this time'\nfi\n"
         "./io_bench\n",
         unchecked=["darshan/3.4"], can=ALL),
    Case("or_die_with_the_script_s_own_function",
         "die() { echo \"$*\" >&2; exit 1; }\nwarn() { echo \"$*\" >&2; }\n"
         "module load GROMACS/2023.3 || die 'no GROMACS'\n"
         "module load darshan || warn 'no darshan'\nsrun gmx mdrun\n",
         checked=["GROMACS/2023.3"], unchecked=["darshan"], can={"ebx", "hpc"}, mpi="srun"),
    Case("modules_listed_in_a_loop",
         "for mod in GCC/12.3.0 FFTW/3.3.10-GCC-12.3.0 Python/3.11; do\n"
         "  module load \"$mod\"\ndone\npython fft.py\n",
         checked=["GCC/12.3.0", "FFTW/3.3.10-GCC-12.3.0", "Python/3.11"], can={"ebx"},
         why={"spk": "'GCC/12.3.0' not installed"}),
    Case("spack_load_through_eval",
         "eval \"$(spack load --sh gromacs@2023.3 +cuda)\"\ngmx mdrun\n",
         can=ALL, notes=["spack load gromacs@2023.3 (line 1)"]),
    # ---- module commands
    Case("load_unless_already_loaded",
         "module is-loaded GCC/12.3.0 || module load GCC/12.3.0\n"
         "module is-avail darshan && module load darshan\nmake\n",
         checked=["GCC/12.3.0"], unchecked=["darshan"], can={"ebx"}),
    Case("ml_with_several_modules",
         "ml GCC/12.3.0 FFTW/3.3.10-GCC-12.3.0 Python/3.11.3-GCCcore-12.3.0\npython fft.py\n",
         checked=["GCC/12.3.0", "FFTW/3.3.10-GCC-12.3.0", "Python/3.11.3-GCCcore-12.3.0"],
         can={"ebx"}),
    Case("ml_unloads_and_loads",
         "ml -cray-python Python/3.11\npython fit.py\n",
         checked=["Python/3.11"], can={"ebx", "spk", "tc"}),
    Case("forced_purge_then_load",
         "module --force purge\nmodule load cray-python\npython x.py\n",
         checked=["cray-python"], can={"cray"}),
    Case("module_use_private_tree",
         "module use /proj/chem/modules\nmodule load orca/5.0.4\norca in.inp\n",
         unchecked=["orca/5.0.4"], can=ALL, notes=["module use /proj/chem/modules (line 1)"]),
    Case("case_on_the_cluster_name",
         "case $SLURM_CLUSTER_NAME in\n  ebx) module load GROMACS/2023.3-foss-2023a ;;\n"
         "  cray) module load PrgEnv-gnu cray-fftw ;;\nesac\nsrun gmx_mpi mdrun\n",
         # each arm is checked at the site it names: cray lacks cray-fftw
         unchecked=["GROMACS/2023.3-foss-2023a", "PrgEnv-gnu", "cray-fftw"],
         can=ALL - {"cray"}, mpi="srun", why={"cray": "software 'cray-fftw' not installed"}),
    Case("case_arms_on_own_lines_with_a_default",
         "case \"${SLURM_CLUSTER_NAME}\" in\n  spk|spk-gpu)\n    module load cuda/12.4.0\n"
         "    ;;\n  hpc)\n    module load cuda/12.1\n    ;;\n  *)\n    module load CUDA\n"
         "    ;;\nesac\nnvcc -o k k.cu\n",
         unchecked=["cuda/12.4.0", "cuda/12.1", "CUDA"], can=ALL - {"hpc"},
         why={"hpc": "software 'cuda/12.1' not installed (only cuda/11.8)"}),
    Case("test_on_the_cluster_name_then_load",
         "[ \"$SLURM_CLUSTER_NAME\" = ebx ] && module load intel/2023b\n./a.out\n",
         unchecked=["intel/2023b"], can=ALL - {"ebx"}, why={"ebx": "(only intel/2023a)"}),
    Case("if_on_the_cluster_name",
         "if [[ $SLURM_CLUSTER_NAME == spk ]]; then\n  module load py-numpy\nelse\n"
         "  module load SciPy-bundle\nfi\npython stats.py\n",
         unchecked=["py-numpy", "SciPy-bundle"], can=ALL),  # spk has py-numpy
    Case("if_elif_on_the_cluster_name",
         "if [[ $SLURM_CLUSTER_NAME == hpc ]]; then\n  module load mvapich2/2.3.7\n"
         "elif [[ $SLURM_CLUSTER_NAME == spk ]]; then\n  module load openmpi/5.0\nelse\n"
         "  module load OpenMPI\nfi\nmpirun ./ring\n",
         unchecked=["mvapich2/2.3.7", "openmpi/5.0", "OpenMPI"], mpi="mpirun",
         can=ALL - {"spk"},
         why={"spk": "software 'openmpi/5.0' not installed (only openmpi/4.1.6)"}),
    Case("here_document_for_a_later_step",
         "cat > post.sh <<'EOF'\nmodule load R/4.3.2\nRscript plot.R\nEOF\nchmod +x post.sh\n"
         "module load Python/3.11\npython sim.py\n",
         checked=["Python/3.11"], unchecked=["R/4.3.2"], can={"ebx", "spk", "tc"}),
    Case("commented_loads",
         "# module load CUDA/12.1.1\n#ml GROMACS\nmodule load GCC/12.3.0  # 13 breaks it\nmake\n",
         checked=["GCC/12.3.0"], can={"ebx"}),
    Case("spack_load_is_noted",
         "spack load hdf5@1.14.3 +mpi\nh5dump -H out.h5\n",
         can=ALL, notes=["spack load hdf5@1.14.3 (line 1)"]),
    Case("default_version",
         "module load GROMACS\ngmx --version\n",
         checked=["GROMACS"], can={"ebx", "hpc"},
         rewritten={"ebx": "module load GROMACS\ngmx --version\n"}),
    Case("specific_version_missing",
         "module load GROMACS/2024.1\ngmx mdrun\n",
         checked=["GROMACS/2024.1"], can=set(),
         why={"ebx": "only GROMACS/2023.3-foss-2023a, GROMACS/2023.3-foss-2023a-CUDA-12.1.1"}),
    Case("lmod_names_are_matched_whatever_their_case",
         "module load gromacs/2023.3 python/3.11\ngmx mdrun\n",
         checked=["gromacs/2023.3", "python/3.11"], can={"ebx"},
         why={"hpc": "'python/3.11' not installed"}),
    Case("hidden_module",
         "module load .gcc-internal/12.3.0\nmodule load GCC/12.3.0\n./a.out\n",
         checked=["GCC/12.3.0"], unchecked=[".gcc-internal/12.3.0"], can={"ebx"}),
    Case("hidden_version",
         "module load CUDA/.12.1.1-debug\ncuda-gdb ./a.out\n",
         unchecked=["CUDA/.12.1.1-debug"], can=ALL),
    # ---- containers
    Case("apptainer_image",
         "apptainer exec --bind /scratch containers/openfoam_v2312.sif simpleFoam -parallel\n",
         container=("containers/openfoam_v2312.sif", "apptainer"),
         can={"ebx", "hpc", "cray", "bare", "tc"},
         why={"spk": "container containers/openfoam_v2312.sif needs a container runtime"}),
    Case("singularity_module_and_gpu_image",
         "#SBATCH --gres=gpu:1\nmodule load singularity/3.8\n"
         "singularity exec --nv pytorch_23.10.sif python train.py\n",
         checked=["singularity/3.8"], container=("pytorch_23.10.sif", "apptainer"),
         vendor="nvidia", can={"hpc", "ebx", "bare"},
         why={"cray": "uses nvidia GPUs", "tc": "'singularity/3.8' not installed"}),
    Case("image_pulled_from_a_registry_at_run_time",
         "apptainer run docker://ghcr.io/example/qc-tools:1.4 qc --in reads.fq\n",
         container=("docker://ghcr.io/example/qc-tools:1.4", "apptainer"),
         can={"ebx", "hpc", "cray", "bare", "tc"},
         notes=["apptainer fetches docker://ghcr.io/example/qc-tools:1.4 at run time (line 1):"
                " the compute nodes need network access"]),
    Case("local_image_fetches_nothing",
         "singularity exec /project/images/qc-tools_1.4.sif qc --in reads.fq\n",
         container=("/project/images/qc-tools_1.4.sif", "apptainer"),
         can={"ebx", "hpc", "cray", "bare", "tc"}, no_notes=["network"]),
    # ---- EasyBuild: build suffixes, toolchains, bundles
    Case("cuda_build_wanted",
         "module load GROMACS/2023.3-foss-2023a-CUDA-12.1.1\nsrun gmx mdrun -nb gpu\n",
         checked=["GROMACS/2023.3-foss-2023a-CUDA-12.1.1"], can={"ebx"}, mpi="srun",
         why={"hpc": "only gromacs/2023.3"},
         rewritten={"ebx": "module load GROMACS/2023.3-foss-2023a-CUDA-12.1.1\n"
                           "srun gmx mdrun -nb gpu\n"}),
    Case("any_build_will_do",
         "module load GROMACS/2023.3\nsrun gmx mdrun\n",
         checked=["GROMACS/2023.3"], can={"ebx", "hpc"}, mpi="srun"),
    Case("libraries_inside_a_toolchain",
         "module load OpenMPI/4.1.6 FFTW/3.3.10\nmpirun ./solver\n",
         checked=["OpenMPI/4.1.6", "FFTW/3.3.10"], can={"tc"}, mpi="mpirun",
         why={"ebx": "'OpenMPI/4.1.6' not installed", "spk": "'FFTW/3.3.10' not installed"},
         rewritten={"tc": "module load foss/2023b foss/2023b\nmpirun ./solver\n"}),
    Case("a_smaller_toolchain_inside_a_bigger_one",
         "module load gompi/2023b\nmpicc -o ring ring.c\n",
         checked=["gompi/2023b"], can={"tc"},
         why={"ebx": "'gompi/2023b' not installed"}),
    Case("intel_toolchain_generation",
         "module load intel/2022b\nmpiifort -o x x.f90\n",
         checked=["intel/2022b"], can={"tc"}, why={"ebx": "(only intel/2023a)"}),
    Case("intel_mpi_and_mkl_from_the_toolchain",
         "module load impi/2021.7.1 imkl/2022.2.1\nmpirun ./vasp_std\n",
         checked=["impi/2021.7.1", "imkl/2022.2.1"], can={"tc"}, mpi="mpirun",
         why={"ebx": "'impi/2021.7.1' not installed"}),
    Case("gcccore_given_by_gcc",
         "module load GCCcore/13.2.0\n./configure && make\n",
         checked=["GCCcore/13.2.0"], can={"spk", "tc"},
         rewritten={"spk": "module load gcc/13.2.0\n./configure && make\n"}),
    Case("numpy_from_the_scipy_bundle",
         "module load py-numpy/1.25\npython -c 'import numpy'\n",
         checked=["py-numpy/1.25"], can={"ebx"},
         why={"spk": "only py-numpy/1.26.4"},
         rewritten={"ebx": "module load SciPy-bundle/2023.07-gfbf-2023a\n"
                           "python -c 'import numpy'\n"}),
    Case("numpy_of_any_version",
         "module load py-numpy\npython x.py\n",
         checked=["py-numpy"], can={"ebx", "spk", "tc"}),
    Case("bundle_of_another_generation",
         "module load SciPy-bundle/2023.11-gfbf-2023b\npython fit.py\n",
         checked=["SciPy-bundle/2023.11-gfbf-2023b"], can={"tc"},
         why={"ebx": "only SciPy-bundle/2023.07-gfbf-2023a"}),
    # ---- conda-family distributions
    Case("conda_activate_any_distribution",
         "module load anaconda3\nconda activate /project/envs/qiime2\nqiime --help\n",
         checked=["anaconda3"], can={"ebx", "spk", "hpc", "tc"}, roles={"anaconda3": "conda"},
         notes=["conda environment '/project/envs/qiime2' (line 2)"],
         why={"cray": "software 'anaconda3' not installed, nor any other conda distribution"},
         rewritten={"spk": "module load miniconda3/24.3.0\n"
                           "conda activate /project/envs/qiime2\nqiime --help\n"}),
    Case("conda_base_needs_that_distribution",
         "module load anaconda3/2023.09\npython -c 'import sklearn'\n",
         checked=["anaconda3/2023.09"], can={"ebx", "hpc"},
         why={"spk": "'anaconda3/2023.09' not installed"}),
    Case("mamba_activate_needs_mamba",
         "module load Miniforge3\nmamba activate rnaseq\nsnakemake -j 8\n",
         checked=["Miniforge3"], can={"tc"}, roles={"Miniforge3": "mamba"},
         why={"ebx": "'Miniforge3' not installed, nor another distribution with mamba"}),
    Case("source_activate",
         "module load Miniconda3\nsource activate py39\npython old.py\n",
         checked=["Miniconda3"], can={"ebx", "spk", "hpc", "tc"}, roles={"Miniconda3": "conda"}),
    Case("conda_sh_from_the_loaded_prefix",
         "module load anaconda3\nsource $CONDA_PREFIX/etc/profile.d/conda.sh\n"
         "conda activate md\npython run.py\n",
         checked=["anaconda3"], can={"ebx", "spk", "hpc", "tc"}, no_notes=["sources"],
         roles={"anaconda3": "conda"}),
    Case("micromamba_of_its_own",
         "eval \"$(micromamba shell hook -s bash)\"\nmicromamba activate ./env\npython x.py\n",
         can=ALL, notes=["micromamba environment './env' (line 2)"]),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_software_needs_against_sites(case: Case) -> None:
    assert_environment_case(case, body_needs(case.body), SITES)


def test_count() -> None:
    assert len(CASES) >= 35 and len({c.name for c in CASES}) == len(CASES)


# ---------------------------------------------------------------- one test per fault fixed

def test_fault_a_called_function_s_loads_are_the_job_s() -> None:
    """Loads in a function were never checked, even when the script called it; now the
    call decides: surely called (at the top level, or by a function surely called) is
    checked; called in a branch or never is not, and says why."""
    got = scan_body("a() { module load x/1; }\nb() { a; module load y/2; }\n"
                    "c() { module load z/3; }\nd() { module load w/4; }\n"
                    "b\n[ -f go ] && c\n").software
    assert [(s.full, s.unchecked) for s in got] == [
        ("x/1", None), ("y/2", None),
        ("z/3", "in function c, called only in a branch (line 3)"),
        ("w/4", "in function d, which the script never calls")]
    # the GPU vendor a called function's module implies counts too
    assert scan_body("gpu() { module load cuda/12.2; }\ngpu\n").gpu_vendor == "nvidia"
    assert scan_body("gpu() { module load cuda/12.2; }\n").gpu_vendor is None


def test_fault_fallbacks_are_alternatives_in_the_summary_and_reasons() -> None:
    """`module load a || module load b` needed neither (both unchecked): a site with
    neither was accepted. Now a is needed, with b as its fallback."""
    needs = needs_of(Federation.parse("#!/bin/bash\nmodule load CUDA/12.4 || "
                                      "module load CUDA/12.1\n"))
    assert "software CUDA/12.4 or CUDA/12.1" in needs.summary()
    assert needs_reasons(needs, SITES["cray"]) == [
        "software 'CUDA/12.4' not installed, nor its fallback CUDA/12.1 (site has: "
        "cray-mpich/8.1.28, cray-python/3.11.5, PrgEnv-gnu/8.5.0, rocm/5.7.1)"]
    assert needs_reasons(needs, SITES["ebx"]) == []


def test_fault_toolchains_and_bundles_give_their_parts() -> None:
    """A module inside an EasyBuild toolchain or bundle was 'not installed' where only
    the toolchain (or bundle) is listed; the generation decides the versions."""
    tc = SITES["tc"].software
    assert find_module("OpenMPI/4.1.6", tc).full == "foss/2023b"
    assert find_module("OpenMPI/4.1.5", tc) is None  # that is 2023a's
    assert find_module("ScaLAPACK/2.2.0", tc).full == "foss/2023b"
    assert find_module("FFTW.MPI/3.3.10-gompi-2023b", tc).full == "foss/2023b"
    assert find_module("iimpi/2022b", tc).full == "intel/2022b"
    assert find_module("mkl/2022.2", tc).full == "intel/2022b"
    assert find_module("pandas/2.1", tc).full == "SciPy-bundle/2023.11-gfbf-2023b"
    assert find_module("pandas/2.0", tc) is None
    # a known bundle loads its Python; an unknown release's Python is not assumed
    assert find_module("python/3.11.5", tc).full == "SciPy-bundle/2023.11-gfbf-2023b"
    assert find_module("Python/3.10", tc) is None
    assert find_module("python", [SoftwareModule.parse("SciPy-bundle/2025.06-gfbf-2025a")]) \
        is None
    # a generation not in the table still gives its sub-toolchains
    assert find_module("gompi/2025a", [SoftwareModule.parse("foss/2025a")]).full == \
        "foss/2025a"
    # a direct module is preferred to a toolchain that holds the package
    assert find_module("GCC/12.3.0", SITES["ebx"].software).full == "GCC/12.3.0"


def test_fault_a_build_suffix_names_the_build_wanted() -> None:
    """A `-CUDA-12.1.1` build was matched by the CPU build of the same version."""
    cpu = [SoftwareModule.parse("GROMACS/2023.3-foss-2023a")]
    assert find_module("GROMACS/2023.3-foss-2023a-CUDA-12.1.1", cpu) is None
    assert find_module("GROMACS/2023.3-foss-2023a-CUDA-11.8",
                       SITES["ebx"].software) is None
    assert find_module("GROMACS/2023.3", cpu).full == "GROMACS/2023.3-foss-2023a"
    assert find_module("Biopython/1.79-foss-2021a-Python-2.7.18",
                       [SoftwareModule.parse("Biopython/1.79-foss-2021a")]) is None


def test_fault_hidden_modules_are_not_held_against_a_site_nor_respelled() -> None:
    body = "module load .gcc-internal/12.3.0 gcc/.12.3.0\n"
    needs = needs_of(Federation.parse("#!/bin/bash\n" + body))
    assert [s.unchecked for s in needs.software] == [
        "a hidden module (line 1): checked where the site lists hidden modules"] * 2
    assert rewrite_modules(body, SITES["ebx"]) == (body, [])


def test_fault_a_conda_distribution_is_respelled_with_its_role() -> None:
    """The respelling looked the module up without the need's role: a job that activates
    its own environment kept `anaconda3` at a site with only miniconda3."""
    needs = needs_of(Federation.parse("#!/bin/bash\nmodule load anaconda3\n"
                                      "conda activate md\n"))
    assert "software anaconda3 (any conda distribution)" in needs.summary()
    new, notes = rewrite_modules("module load anaconda3\nconda activate md\n", SITES["spk"])
    assert new == "module load miniconda3/24.3.0\nconda activate md\n"
    assert notes == ["rewrote: body line 1: module anaconda3 -> miniconda3/24.3.0 "
                     "(as spk names it)"]


def test_fault_an_if_opened_after_a_brace_is_a_branch() -> None:
    """`{ if ...; then module load a; fi; }` did not open the `if` (its `fi` closed the
    brace's block instead): the load in the branch was held against every site."""
    got = scan_body("{ if [ -d /opt/rocm ]; then module load rocm; fi; } >log 2>&1\n"
                    "module load gcc\n").software
    assert [(s.full, bool(s.unchecked)) for s in got] == [("rocm", True), ("gcc", False)]
    got = scan_body("f() { if x; then srun ./a; fi; }\nf\n")
    assert got.mpi is None  # the launcher is in a branch of the called function


def test_fault_what_a_called_function_runs_counts() -> None:
    """A container, launcher or GPU tool used in a function the script calls was taken as
    used only in a branch: the site without the runtime was not refused."""
    body = "go() {\n  apptainer exec img.sif ./run\n  nvidia-smi\n  mpirun ./b\n}\ngo\n"
    scan = scan_body(body)
    assert (scan.container.image, scan.container.unchecked) == ("img.sif", None)
    assert (scan.mpi, scan.gpu_vendor) == ("mpirun", "nvidia")
    never = scan_body(body.replace("\ngo\n", "\n"))
    assert never.container.unchecked and never.mpi is None and never.gpu_vendor is None


def test_fault_the_failure_branch_of_an_if_decides_a_load() -> None:
    """A load in an if's condition was never checked; now the branch that runs when it
    fails decides: it exits (needed), loads another (a fallback), or goes on (tolerated);
    after an elif nothing is assumed."""
    def read(body: str) -> list[tuple[str, bool, list[str]]]:
        return [(s.full, s.unchecked is None, s.alternatives) for s in scan_body(body).software]

    assert read("if ! module load a; then exit 1; fi\n") == [("a", True, [])]
    assert read("if ! ml a b; then\n  echo no >&2\n  return 2\nfi\n") == \
        [("a", True, []), ("b", True, [])]
    assert read("if module load a; then :; else module load b; fi\n") == \
        [("a", True, ["b"]), ("b", False, [])]
    assert read("if ! module load a; then echo without; fi\n") == [("a", False, [])]
    assert read("if ! module load a; then module load b; elif x; then exit 1; fi\n") == \
        [("a", False, []), ("b", False, [])]
    assert read("if [ -n \"$X\" ]; then\n  if ! module load a; then exit 1; fi\nfi\n") == \
        [("a", False, [])]  # the whole if is in a branch
    assert read("f() {\n  if ! module load a; then exit 1; fi\n}\nf\n") == [("a", True, [])]
    assert read("f() {\n  if ! module load a; then exit 1; fi\n}\n") == [("a", False, [])]


def test_fault_loads_named_elsewhere_are_respelled_where_they_are_named() -> None:
    """Modules named by a function's arguments, a loop's list or a `bash -c` string were
    matched case-blind but left as written, so the site's case-sensitive `module load`
    failed: each is respelled in the word that names it."""
    caps = SITES["ebx"]
    body = ("need() {\n  module load \"$1\" || exit 1\n}\nneed python/3.11\n"
            "for m in gcc/12.3.0 fftw/3.3.10; do\n  module load $m\n  module load $m\ndone\n"
            "srun bash -c 'module load cuda/12.1 && nvidia-smi'\n")
    new, notes = rewrite_modules(body, caps)
    assert new == ("need() {\n  module load \"$1\" || exit 1\n}\n"
                   "need Python/3.11.3-GCCcore-12.3.0\n"
                   "for m in GCC/12.3.0 FFTW/3.3.10-GCC-12.3.0; do\n  module load $m\n"
                   "  module load $m\ndone\nsrun bash -c 'module load CUDA/12.1.1 && "
                   "nvidia-smi'\n")
    assert notes == [
        "rewrote: body line 4: module python/3.11 -> Python/3.11.3-GCCcore-12.3.0 "
        "(as ebx names it)",
        "rewrote: body line 5: module gcc/12.3.0 -> GCC/12.3.0 (as ebx names it)",
        "rewrote: body line 5: module fftw/3.3.10 -> FFTW/3.3.10-GCC-12.3.0 (as ebx names it)",
        "rewrote: body line 9: module cuda/12.1 -> CUDA/12.1.1 (as ebx names it)"]
    assert rewrite_modules(new, caps) == (new, [])
    # a string with escapes is not the text it runs: left as written
    escaped = 'bash -c "module load cuda/12.1 && echo \\$HOME"\n'
    assert rewrite_modules(escaped, caps) == (escaped, [])


def test_fault_a_branch_on_the_cluster_name_is_checked_at_the_site_it_names() -> None:
    """Loads in `case $SLURM_CLUSTER_NAME` arms (or `if [[ $SLURM_CLUSTER_NAME == x ]]`)
    were never checked; now each is checked at a site whose name (or one of whose
    clusters') the arm names, an earlier arm winning as in the shell; a `*` arm, and a
    site no arm names, say nothing."""
    from diamond_jupyter.capabilities import NodeType
    body = ("case $SLURM_CLUSTER_NAME in\n  alpha*) module load gcc/99 ;;\n"
            "  alpha2|beta) module load never/1 ;;\n  *) module load any/1 ;;\nesac\n")
    needs = needs_of(Federation.parse("#!/bin/bash\n" + body))
    assert [(s.full, s.clusters) for s in needs.software] == [
        ("gcc/99", ["alpha*"]), ("never/1", ["alpha2", "beta", "!alpha*"]),
        ("any/1", ["*", "!alpha*", "!alpha2", "!beta"])]  # checked where the name is read
    assert "software gcc/99 (loaded only on cluster alpha* (line 2): checked at a site of " \
        "that name)" in needs.summary()

    def reasons(site: str, clusters: tuple[str, ...] = ()) -> list[str]:
        caps = SiteCapabilities(site=site, software=[SoftwareModule.parse("gcc/12")],
                                node_types=[NodeType(name=c, cluster=c) for c in clusters])
        return needs_reasons(needs, caps)

    assert reasons("alpha2") == ["software 'gcc/99' not installed (only gcc/12)"]
    assert reasons("center", ("Beta",)) == ["software 'never/1' not installed (site has: "
                                            "gcc/12)"]
    assert reasons("gamma") == []  # no arm names it: the default arm is not assumed
