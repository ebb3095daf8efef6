"""Software environments, second sweep: bodies written the way users write them against
three sites whose module systems list their software in their own formats (Lmod 8's terse
`module -t avail` with `(D)` and a hidden version, Environment Modules 5 with its tags
joined by ':' and an alias, Environment Modules 4 with a directory of versions), and a site
whose software is not known. Each case says which sites can run the body and why the others
cannot: several versions and a default, `module swap`/`switch`, `ml` with `-` unloads,
Spack loads and environments, conda and mamba, apptainer/singularity images, oneAPI's
`setvars.sh`, and loads after `module use` (checked where the site lists that tree).
"""

from __future__ import annotations

import pytest
from sweep_helpers import EnvironmentCase, assert_environment_case
from test_software_unseen4 import needs as body_needs

from diamond_jupyter.capabilities import SiteCapabilities
from diamond_jupyter.discovery import parse_module_list, parse_module_trees, split_sections
from diamond_jupyter.federation import Federation
from diamond_jupyter.needs import needs_of
from diamond_jupyter.software import needs_reasons, rewrite_modules, versions_match

# Lmod 8 on a Spack-built center: two trees, defaults marked (D), a hidden beta version,
# a version with a '/' in it (one CUDA per compiler)
LMOD = """system lmod 8.7.32
/sw/modulefiles/Core:
apptainer/1.2.5
cmake/3.26.3
cmake/3.27.7 (D)
cuda/11.8.0
cuda/12.2.0 (D)
cuda/12.2/gcc
gcc/12.3.0
gcc/13.2.0 (D)
intel-oneapi/2023.2.0
miniforge3/24.3.0
python/.3.13.0-beta
python/3.10.13
python/3.11.6 (D)
/sw/modulefiles/apps:
openmpi/4.1.5 (L)
"""

# Environment Modules 5: its own modulefiles, tags joined by ':', a symbolic default, an alias
EM5 = """system environment-modules 5.4.0
/usr/share/modulefiles:
dot
module-git
module-info
modules
null
use.own
/opt/modulefiles:
cuda/11.4
cuda/12.4.1(default)
gcc/10.2.0
gcc/11.3.0(default:latest) <L:sticky>
gromacs/2023.3
gromacs/stable(@)
openmpi/4.1.6 <aL:super-sticky>
singularity/3.11.4
"""

# Environment Modules 4 on a RHEL login: the distribution's MPI, a directory of versions
EM4 = """system environment-modules 4.5.2
/etc/modulefiles:
mpi/openmpi-x86_64
/opt/apps/modulefiles:
R/4.2.1
gromacs/2022.5
intel/oneapi/2023.1
"""


def _site(name: str, listing: str, runtimes: list[str], mpi: list[str]) -> SiteCapabilities:
    system, _, mods = parse_module_list(listing)
    return SiteCapabilities(site=name, module_system=system, software=mods,
                            module_trees=parse_module_trees(listing),
                            container_runtimes=runtimes, mpi=mpi)


SITES = {c.site: c for c in (
    _site("lmod", LMOD, ["apptainer"], ["openmpi"]),
    _site("em5", EM5, ["singularity"], []),  # MPI only as a module nothing found
    _site("em4", EM4, [], ["openmpi"]),
    SiteCapabilities(site="unknown"),
)}
ALL = {"lmod", "em5", "em4"}


Case = EnvironmentCase


CASES = [
    # ---- names, versions and defaults as each module system lists them
    Case("default_marked_d_by_name", "module load gcc\nmodule load cmake\ncmake ..\n",
         checked=["gcc", "cmake"], can={"lmod"},
         why={"em5": "software 'cmake' not installed", "em4": "software 'gcc' not installed"}),
    Case("one_of_several_versions", "module load python/3.10\npython a.py\n",
         checked=["python/3.10"], can={"lmod"}, why={"em4": "'python/3.10' not installed"},
         rewritten={"lmod": "module load python/3.10.13\npython a.py\n"}),
    Case("hidden_version", "module load python/.3.13.0-beta\npython a.py\n",
         unchecked=["python/.3.13.0-beta"], can=ALL),
    Case("a_slash_inside_the_version", "module load cuda/12.2/gcc\nnvcc -V\n",
         checked=["cuda/12.2/gcc"], can={"lmod"}, vendor="nvidia",
         why={"em5": "'cuda/12.2/gcc' not installed (only cuda/11.4, cuda/12.4.1)"}),
    Case("tags_joined_by_colons", "module load openmpi/4.1.6\nmpirun -n 4 ./a\n",
         checked=["openmpi/4.1.6"], can={"em5", "em4"}, mpi="mpirun",
         why={"lmod": "'openmpi/4.1.6' not installed (only openmpi/4.1.5)"}),
    Case("symbolic_default_of_environment_modules", "module load gcc/11\ngcc -v\n",
         checked=["gcc/11"], can={"em5"}, rewritten={"em5": "module load gcc/11.3.0\ngcc -v\n"},
         why={"lmod": "only gcc/12.3.0, gcc/13.2.0"}),
    Case("an_alias_by_its_name", "module load gromacs/stable\ngmx mdrun -s t.tpr\n",
         checked=["gromacs/stable"], can={"em5", "em4"},
         why={"lmod": "'gromacs/stable' not installed"}),
    Case("a_directory_of_versions_by_its_name", "module load intel/oneapi\nicx -v\n",
         checked=["intel/oneapi"], can={"em4"},
         why={"lmod": "'intel/oneapi' not installed"}),
    # ---- swap, switch, ml
    Case("module_swap", "module swap gcc gcc/12.3.0\nmake\n",
         checked=["gcc/12.3.0"], can={"lmod"},
         why={"em5": "only gcc/10.2.0, gcc/11.3.0"}),
    Case("module_switch", "module switch gcc/11.3.0 gcc/10.2.0\nmake\n",
         checked=["gcc/10.2.0"], can={"em5"}, why={"lmod": "'gcc/10.2.0' not installed"}),
    Case("load_any_of_environment_modules", "module load-any gcc/13.2.0 gcc/11.3.0\ngcc -v\n",
         checked=["gcc/13.2.0"], alternatives={"gcc/13.2.0": ["gcc/11.3.0"]},
         can={"lmod", "em5"}, why={"em4": "'gcc/13.2.0' not installed, nor its fallback "
                                         "gcc/11.3.0"}),
    Case("ml_with_an_unload", "ml -gcc intel/oneapi R\nRscript fit.R\n",
         checked=["intel/oneapi", "R"], can={"em4"}, why={"em5": "'intel/oneapi'"}),
    # ---- Spack, oneAPI, conda, containers
    Case("spack_load", "spack load hdf5@1.14.3 +mpi\nh5dump out.h5\n", can=ALL,
         notes=["spack load hdf5@1.14.3 (line 1)"]),
    Case("spack_environment_then_mpirun",
         "spack env activate -p climate\nmpirun -n 64 ./model\n", can=ALL, mpi="mpirun",
         notes=["spack environment 'climate' (line 1) must exist at the site"]),
    Case("oneapi_setvars_then_mpirun",
         "source /opt/intel/oneapi/setvars.sh > /dev/null\nmpirun -n 8 ./a.out\n",
         can=ALL, mpi="mpirun", notes=["sources /opt/intel/oneapi/setvars.sh (line 1)"]),
    Case("mpirun_of_the_site", "mpirun -n 8 ./a.out\n", can={"lmod", "em4"}, mpi="mpirun",
         why={"em5": "the script runs mpirun but the site has no MPI stack"}),
    Case("conda_activate_from_any_distribution",
         "module load miniconda3\nconda activate /project/envs/md\npython md.py\n",
         checked=["miniconda3"], roles={"miniconda3": "conda"}, can={"lmod"},
         notes=["conda environment '/project/envs/md' (line 2) must exist at the site"],
         why={"em4": "'miniconda3' not installed, nor any other conda distribution"},
         rewritten={"lmod": "module load miniforge3/24.3.0\nconda activate /project/envs/md\n"
                            "python md.py\n"}),
    Case("mamba_activate_needs_mamba", "module load anaconda3\nmamba activate rnaseq\n",
         checked=["anaconda3"], roles={"anaconda3": "mamba"}, can={"lmod"},
         why={"em5": "nor another distribution with mamba"}),
    Case("apptainer_exec_an_image_path",
         "apptainer exec --bind /scratch /scratch/$USER/pt.sif python train.py\n",
         container=("/scratch/$USER/pt.sif", "apptainer"), can={"lmod", "em5"},
         why={"em4": "needs a container runtime, site has none"}),
    Case("singularity_module_then_exec",
         "module load singularity/3.11.4\nsingularity exec img.sif ./run\n",
         checked=["singularity/3.11.4"], container=("img.sif", "apptainer"),
         can={"lmod", "em5"}, why={"em4": "'singularity/3.11.4' not installed"}),
    # ---- after `module use`: checked where the site lists that tree
    Case("module_use_of_a_tree_the_site_lists",
         "module use /opt/apps/modulefiles\nmodule load R/4.3.0\nRscript a.R\n",
         unchecked=["R/4.3.0"], can={"lmod", "em5"},
         why={"em4": "'R/4.3.0' not installed (only R/4.2.1)"}),
    Case("module_use_of_a_private_tree",
         "module use /home/alice/privatemodules\nmodule load mytool/1.0\nmytool\n",
         unchecked=["mytool/1.0"], can=ALL),
    Case("modulepath_exported_with_a_listed_tree",
         "export MODULEPATH=/sw/modulefiles/Core:$MODULEPATH\nmodule load cmake/3.27\n",
         unchecked=["cmake/3.27"], can=ALL,
         rewritten={"lmod": "export MODULEPATH=/sw/modulefiles/Core:$MODULEPATH\n"
                            "module load cmake/3.27.7\n"}),
    Case("modulepath_exported_with_a_listed_tree_lacking_the_version",
         "export MODULEPATH=/sw/modulefiles/Core:$MODULEPATH\nmodule load cmake/4.0\n",
         unchecked=["cmake/4.0"], can={"em5", "em4"},
         why={"lmod": "only cmake/3.26.3, cmake/3.27.7"}),
    Case("module_use_then_a_load_in_a_branch",
         "module use /opt/apps/modulefiles\nif [ -n \"$GPU\" ]; then module load R/9.9; fi\n",
         unchecked=["R/9.9"], can=ALL),
    Case("module_use_of_two_trees_one_unlisted",
         "module use /opt/apps/modulefiles /proj/p1/modules\nmodule load R/4.3.0\n",
         unchecked=["R/4.3.0"], can=ALL),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_software_environments_against_sites(case: Case) -> None:
    assert_environment_case(case, body_needs(case.body), SITES)


def test_count() -> None:
    assert len(CASES) >= 20 and len({c.name for c in CASES}) == len(CASES)


# ---------------------------------------------------------------- one test per fault fixed

def test_fault_environment_modules_5_tags_joined_by_colons_are_not_part_of_the_name() -> None:
    """`gcc/11.3.0(default:latest) <L:sticky>` was read as a module named
    'gcc/11.3.0(default:latest) <L:sticky>' (the tag pattern took letters and commas only),
    so `module load gcc/11.3.0` was missing there."""
    mods = {m.full: m.default for m in parse_module_list(EM5)[2]}
    assert mods["gcc/11.3.0"] is True and mods["openmpi/4.1.6"] is False
    assert mods["cuda/12.4.1"] is True and "gromacs/stable" in mods
    assert not any("<" in full or "(" in full for full in mods)


def test_fault_a_directory_of_versions_is_loaded_by_its_name() -> None:
    """`module load intel/oneapi` at a site listing intel/oneapi/2023.1 loads that version
    (the directory's default), but two versions without numbers had to be equal: it was
    refused. A version names a directory of the site's only at a '/' boundary."""
    assert versions_match("oneapi", "oneapi/2023.1")
    assert versions_match("oneapi/", "oneapi/2023.1")
    assert not versions_match("one", "oneapi/2023.1")
    assert not versions_match("oneapi/2023.1", "oneapi")


@pytest.mark.parametrize("setup", [
    "source /opt/intel/oneapi/setvars.sh",
    ". /opt/intel/oneapi/mpi/latest/env/vars.sh",
    "spack load openmpi@4.1.6",
    "spack env activate climate",
    'eval "$(spack load --sh mpich)"',
    "export PATH=/opt/openmpi-5/bin:$PATH",
    "PATH=$HOME/sw/mpich/bin:$PATH",
    "conda activate /project/envs/mpi4py",
    "source activate mpi",
])
def test_fault_an_mpi_the_job_brings_itself_is_not_held_against_the_site(setup: str) -> None:
    """mpirun after the job set up its own MPI (oneAPI's setvars.sh, a Spack package or
    environment, a PATH entry, a conda environment with mpich) was refused at a site whose
    discovery found no MPI stack: the launcher is the job's own there. It is said so, not
    checked; a bare mpirun still is, and so is one set up only in a branch."""
    needs = needs_of(Federation.parse(f"#!/bin/bash\n#SBATCH -n 8\n{setup}\nmpirun ./a\n"))
    assert needs.mpi == "mpirun" and needs.mpi_own
    assert needs_reasons(needs, SITES["em5"]) == []
    assert any("not checked: may be the job's own" in s for s in needs.summary())
    bare = needs_of(Federation.parse("#!/bin/bash\n#SBATCH -n 8\nmpirun ./a\n"))
    assert bare.mpi_own is None
    assert needs_reasons(bare, SITES["em5"]) == [
        "the script runs mpirun but the site has no MPI stack"]
    branch = needs_of(Federation.parse(f"#!/bin/bash\n#SBATCH -n 8\nif [ -n \"$X\" ]; then "
                                       f"{setup}; fi\nmpirun ./a\n"))
    assert branch.mpi_own is None


def test_fault_module_load_any_needs_one_of_its_modules() -> None:
    """Environment Modules' `module load-any a b` (the first of them that loads) was read as
    no load at all: a site with none of them was accepted. Now the first is needed with the
    others as its fallbacks, with a `||` fallback after them too."""
    needs = needs_of(Federation.parse("#!/bin/bash\nmodule load-any cuda/12.6 cuda/12.4.1 || "
                                      "module load cuda/11.8.0\n"))
    assert [(s.full, s.alternatives, s.unchecked) for s in needs.software] == [
        ("cuda/12.6", ["cuda/12.4.1", "cuda/11.8.0"], None),
        ("cuda/11.8.0", [], "a fallback if 'cuda/12.6' fails (line 1)")]
    assert needs_reasons(needs, SITES["em5"]) == needs_reasons(needs, SITES["lmod"]) == []
    assert needs_reasons(needs, SITES["em4"]) == [
        "software 'cuda/12.6' not installed, nor its fallback cuda/12.4.1 or cuda/11.8.0 "
        "(site has: gromacs/2022.5, intel/oneapi/2023.1, mpi/openmpi-x86_64, R/4.2.1)"]


def test_fault_a_spack_environment_is_noted_not_passed_over() -> None:
    """`spack env activate NAME` said nothing (a need read silently); it is noted."""
    needs = needs_of(Federation.parse("#!/bin/bash\nspack env activate -p climate\n./m\n"))
    assert needs.notes == ["spack environment 'climate' (line 1) must exist at the site; its "
                           "packages are not checked"]


def test_module_trees_are_read_from_the_listing_and_reach_the_capabilities() -> None:
    """Discovery keeps the trees its listing names (the `/path:` headers), each once."""
    from diamond_jupyter.dialects.slurm_commands import SlurmCommands
    from diamond_jupyter.discovery_site import describe_from_outputs

    assert parse_module_trees(LMOD) == ["/sw/modulefiles/Core", "/sw/modulefiles/apps"]
    assert parse_module_trees(EM4 + "/etc/modulefiles/:\nx/1\n@@spider\n/not/a/tree:\n") == \
        ["/etc/modulefiles", "/opt/apps/modulefiles"]
    parts, codes = split_sections("x86_64\n\n@@dmd-discover@@arch:0\n"
                                  f"{EM4}\n@@dmd-discover@@modules:0\n")
    d = describe_from_outputs("em4", SlurmCommands(), parts, codes, [], [])
    assert d.capabilities.module_trees == ["/etc/modulefiles", "/opt/apps/modulefiles"]


def test_fault_loads_after_module_use_of_a_listed_tree_are_checked() -> None:
    """The known gap closed: everything after `module use` was kept but never checked, even
    where the tree is one the site lists already (users copy the center's `module use`
    into their scripts); now such a load is checked there, and respelled, and its tree
    still leaves it unchecked elsewhere. A load that is conditional for another reason
    stays unchecked everywhere."""
    body = "module use /opt/apps/modulefiles\nmodule load R/4.3 gromacs\n./a\n"
    needs = needs_of(Federation.parse("#!/bin/bash\n" + body))
    assert [(s.full, s.trees) for s in needs.software] == [
        ("R/4.3", ["/opt/apps/modulefiles"]), ("gromacs", ["/opt/apps/modulefiles"])]
    assert needs_reasons(needs, SITES["em4"]) == [
        "software 'R/4.3' not installed (only R/4.2.1)"]
    assert needs_reasons(needs, SITES["lmod"]) == []
    assert rewrite_modules(body.replace("R/4.3", "R/4.2"), SITES["em4"])[1] == [
        "rewrote: body line 2: module R/4.2 -> R/4.2.1 (as em4 names it)"]
    # a site whose trees are not known (a sites file's list) checks nothing after it
    no_trees = SITES["em4"].model_copy(update={"module_trees": None})
    assert needs_reasons(needs, no_trees) == []
    for tolerated in ("module load R/4.3 || true", "module try-load R/4.3",
                      "[ -d /x ] && module load R/4.3", "f() { module load R/4.3; }\nf"):
        got = needs_of(Federation.parse("#!/bin/bash\nmodule use /opt/apps/modulefiles\n"
                                        f"{tolerated}\n"))
        assert [s.trees for s in got.software] == [[]], tolerated
        assert needs_reasons(got, SITES["em4"]) == [], tolerated


def test_the_module_use_note_says_where_the_loads_are_checked() -> None:
    needs = needs_of(Federation.parse("#!/bin/bash\nmodule use /opt/apps/modulefiles\n"
                                      "module load R\n"))
    assert needs.notes == ["module use /opt/apps/modulefiles (line 1): a module tree the site "
                           "may not have; the modules loaded after it are checked only at a "
                           "site whose module list comes from that tree"]


def test_hierarchy_modules_after_a_listed_tree_need_their_compiler_first() -> None:
    """A load after `module use` of a listed tree is checked with Lmod's hierarchy as any
    other (tests/test_dialect_gaps5.py): hdf5 needs its compiler and MPI loaded first."""
    listing = ("system lmod 8.7.20\n/opt/spack/lmod/Core:\ngcc/13.2.0 (D)\n@@spider\n"
               "hdf5/1.14.3\nopenmpi/4.1.6\n@@requires hdf5/1.14.3\n\n    You will need to "
               "load all module(s) on any one of the lines below before the \"hdf5/1.14.3\" "
               "module is available to load.\n\n      gcc/13.2.0  openmpi/4.1.6\n\n"
               "@@requires openmpi/4.1.6\n\n    You will need to load all module(s) on any "
               "one of the lines below before the \"openmpi/4.1.6\" module is available to "
               "load.\n\n      gcc/13.2.0\n\n")
    caps = _site("spack", listing, [], ["openmpi"])
    assert caps.module_trees == ["/opt/spack/lmod/Core"]
    head = "#!/bin/bash\nmodule use /opt/spack/lmod/Core\n"
    alone = needs_of(Federation.parse(head + "module load hdf5\n"))
    assert [r.split(" (")[0] for r in needs_reasons(alone, caps)] == ["software 'hdf5'"]
    after = needs_of(Federation.parse(head + "module load gcc openmpi hdf5\n"))
    assert needs_reasons(after, caps) == []
