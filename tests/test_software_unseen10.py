"""Software environments, tenth sweep: a three-level Lmod hierarchy (Core compilers, MPI
builds per compiler, libraries per compiler and MPI) served by the real Lmod 8.6 of this
machine's registry, a default set by a module's own `.modulerc.lua`, hidden modules, the
options and removals `module load`/`ml`/`swap` lines carry, versions with letters
(`2023a`, `12.2.0-cuda`), Environment Modules 4 listings, a spider listing of a huge tree,
and which of two sites has what a job loads.

Faults found and fixed, each with its test marked `fault` that failed before:
- A default set in a module's `.modulerc.lua` (`module_version("cuda/11.8.0", "default")`)
  is not marked in Lmod's terse listing: `module load cuda` was checked (and rewritten) as
  cuda/12.2.0, where Lmod loads cuda/11.8.0. Discovery now also asks Lmod's
  `module -t --default avail`, the version each bare name loads.
- `module load gcc/13.2.0` then `module swap gcc gcc/12.3.0`, then a library Lmod shows
  only under gcc 13: the check counted both compilers as loaded and passed it, where Lmod
  finds no such module. One version of a name is loaded at a time: the later one counts.
- `module load gromacs/2023.3-rocm` passed where the site has only gromacs/2023.3-cuda
  (the numbers matched). Where both name a build, the site's must hold the one asked for.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from test_software_unseen4 import needs
from test_software_unseen9 import LMOD_PKG, _real_lmod, _site, _tree, needs_lmod

from diamond_jupyter.capabilities import SiteCapabilities
from diamond_jupyter.discovery import parse_module_list
from diamond_jupyter.software import find_module, needs_reasons, rewrite_modules

LUA = 'whatis("a module written for the test")\n'


def _lmod_loads(modulepath: Path, home: Path, body: str) -> str:
    """What the real Lmod has loaded after `body` ($LOADEDMODULES)."""
    script = (f"export LMOD_CMD={LMOD_PKG}/libexec/lmod MODULEPATH={modulepath}\n"
              f". {LMOD_PKG}/init/bash\n{body}\necho \"$LOADEDMODULES\"\n")
    return subprocess.run([shutil.which("bash") or "/bin/bash", "-c", script],
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(home)}).stdout.strip()


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """Core: gcc 12 and 13, cuda 11.8 (the default its .modulerc.lua sets) and 12.2, a
    hidden tool; under each gcc an openmpi, under gcc 13 an fftw; under each gcc+openmpi
    an hdf5, and a CUDA build of gromacs under gcc 13 + openmpi."""
    root = tmp_path_factory.mktemp("hier3")

    def opens(path: str) -> str:
        return f'prepend_path("MODULEPATH", "{root}/{path}")\n'
    return _tree(root, {
        "Core/gcc/12.3.0.lua": 'family("compiler")\n' + opens("Compiler/gcc/12"),
        "Core/gcc/13.2.0.lua": 'family("compiler")\n' + opens("Compiler/gcc/13"),
        "Core/cuda/11.8.0.lua": LUA, "Core/cuda/12.2.0.lua": LUA,
        "Core/cuda/.modulerc.lua": 'module_version("cuda/11.8.0", "default")\n',
        "Core/.profiler/1.0.lua": LUA,
        "Compiler/gcc/12/openmpi/4.1.6.lua": 'family("mpi")\n' + opens("MPI/gcc/12/ompi4"),
        "Compiler/gcc/13/openmpi/4.1.6.lua": 'family("mpi")\n' + opens("MPI/gcc/13/ompi4"),
        "Compiler/gcc/13/fftw/3.3.10.lua": LUA,
        "MPI/gcc/12/ompi4/hdf5/1.12.2.lua": LUA,
        "MPI/gcc/13/ompi4/hdf5/1.14.3.lua": LUA,
        "MPI/gcc/13/ompi4/gromacs/2023.3-cuda.lua": LUA})


@pytest.fixture(scope="module")
def hier(tree) -> SiteCapabilities:
    return _real_lmod(tree / "Core")


# ---- the real Lmod, three levels ------------------------------------------------------------

@needs_lmod
def test_spider_gives_a_library_the_compiler_and_mpi_it_needs(hier):
    requires = {m.full: m.requires for m in hier.software}
    assert requires["hdf5/1.14.3"] == [["gcc/13.2.0", "openmpi/4.1.6"]]
    assert requires["hdf5/1.12.2"] == [["gcc/12.3.0", "openmpi/4.1.6"]]
    assert requires["gromacs/2023.3-cuda"] == [["gcc/13.2.0", "openmpi/4.1.6"]]
    assert requires["openmpi/4.1.6"] == [["gcc/12.3.0"], ["gcc/13.2.0"]]
    assert requires["cuda/12.2.0"] == requires["gcc/13.2.0"] == []
    assert hier.errors == [] and hier.hidden_modules == [".profiler/1.0"]


HDF5_NEEDS = ("software 'hdf5/1.14.3' (hdf5/1.14.3) needs gcc/13.2.0 + openmpi/4.1.6 loaded "
              "first (Lmod's hierarchy shows it only then); the script loads before it: ")


@needs_lmod
@pytest.mark.parametrize("body, reasons", [
    ("module load gcc/13.2.0 openmpi/4.1.6 hdf5/1.14.3\n", []),
    ("ml gcc/13.2.0 openmpi hdf5\n", []),
    ("module load gcc/13.2.0\nmodule load openmpi/4.1.6\nml gromacs/2023.3-cuda\n", []),
    ("module load hdf5/1.14.3\n", [HDF5_NEEDS + "none"]),
    ("module load gcc/13.2.0 hdf5/1.14.3\n", [HDF5_NEEDS + "gcc/13.2.0"]),
    ("module load gcc/12.3.0 openmpi/4.1.6 hdf5/1.14.3\n",
     [HDF5_NEEDS + "gcc/12.3.0, openmpi/4.1.6"]),
    ("module load gcc/12.3.0 openmpi/4.1.6 hdf5/1.12.2\n", []),
])
def test_a_library_is_checked_against_the_compiler_and_mpi_loaded_before_it(hier, body,
                                                                          reasons):
    assert needs_reasons(needs(body), hier) == reasons


@needs_lmod
def test_fault_a_swap_before_a_library_leaves_only_the_new_compiler(hier, tree, tmp_path):
    body = "module load gcc/13.2.0\nmodule swap gcc gcc/12.3.0\nmodule load fftw/3.3.10\n"
    assert "fftw" not in _lmod_loads(tree / "Core", tmp_path, body + " 2>/dev/null")
    assert needs_reasons(needs(body), hier) == [
        "software 'fftw/3.3.10' (fftw/3.3.10) needs gcc/13.2.0 loaded first (Lmod's "
        "hierarchy shows it only then); the script loads before it: gcc/12.3.0"]
    back = "module load gcc/12.3.0\nmodule switch gcc/12.3.0 gcc/13.2.0\nml fftw/3.3.10\n"
    assert "fftw/3.3.10" in _lmod_loads(tree / "Core", tmp_path, back)
    assert needs_reasons(needs(back), hier) == []


@needs_lmod
def test_fault_a_default_from_a_modulerc_is_the_version_checked(hier, tree, tmp_path):
    assert _lmod_loads(tree / "Core", tmp_path, "module load cuda") == "cuda/11.8.0"
    assert [m.full for m in hier.software if m.default and m.name == "cuda"] == ["cuda/11.8.0"]
    assert find_module("cuda", hier.software).full == "cuda/11.8.0"
    assert rewrite_modules("module load CUDA\n", hier)[0] == "module load cuda/11.8.0\n"


@needs_lmod
def test_a_hidden_module_loads_by_its_name_and_a_wrong_one_is_named_as_hidden(hier):
    assert needs_reasons(needs("module load .profiler/1.0\n"), hier) == []
    [why] = needs_reasons(needs("module load .profiler/2.0\n"), hier)
    assert why == ("software '.profiler/2.0' not installed (a hidden module: the site's "
                   "hidden .profiler modules are .profiler/1.0)")


# ---- what load lines carry ------------------------------------------------------------------

PLAIN = _site("gcc/12.3.0", "gcc/13.2.0", "cuda/12.2.0", "python/3.11.6", "foss/2023a",
              "foss/2023b", "netcdf/4.9.2-cuda", "gromacs/2023.3-cuda")


@pytest.mark.parametrize("body, missing", [
    ("module --force load gcc/12.3.0\n", None),
    ("module -q load gcc/13.2.0\n", None),
    ("module -s load python/3.11.6\n", None),
    ("module load --quiet gcc/14\n", "gcc/14"),
    ("module load -f gcc/19\n", "gcc/19"),
    ("ml --force python/3.11.6 gcc/9\n", "gcc/9"),
    ("ml -gcc python/3.11.6\n", None),              # `-NAME` unloads: nothing to find
    ("ml gcc/12.3.0 -gcc gcc/14.1.0\n", "gcc/14.1.0"),
    ("module swap gcc gcc/14.1.0\n", "gcc/14.1.0"),  # swap loads its last name
    ("module switch gcc/12.3.0 gcc/13.2.0\n", None),
    ("ml unload gcc\n", None),
    ("module try-load gcc/99\n", None),             # a try-load may fail
    ("module load gcc/99 2>/dev/null || module load gcc/12.3.0\n", None),
])
def test_options_removals_and_swaps_on_load_lines(body, missing):
    reasons = needs_reasons(needs(body), PLAIN)
    if missing is None:
        assert reasons == []
    else:
        assert reasons == [f"software '{missing}' not installed (only gcc/12.3.0, gcc/13.2.0)"]


@pytest.mark.parametrize("body, missing", [
    ("ml foss/2023a\n", None),
    ("module load foss/2022b\n", "software 'foss/2022b' not installed (only foss/2023a, "
                                 "foss/2023b)"),
    ("module load netcdf/4.9.2-cuda\n", None),
    ("ml gromacs/2023.3-cuda\n", None),
    ("module load gromacs/2023.3-rocm\n", "software 'gromacs/2023.3-rocm' not installed "
                                          "(only gromacs/2023.3-cuda)"),
])
def test_fault_versions_with_letters_and_build_suffixes(body, missing):
    assert needs_reasons(needs(body), PLAIN) == ([missing] if missing else [])


# ---- listings -------------------------------------------------------------------------------

@pytest.mark.parametrize("listing", [
    # Environment Modules 4.5 (`module -t avail`, no --all): `(default)`, symbolic names
    "/opt/modulefiles:\ngcc/12.3.0(default)\ngcc/13.2.0\npython/3.11.6(3.11:default)\n",
    # Environment Modules 4.8 with --all and a tag
    "/opt/modulefiles:\ngcc/12.3.0(default)\ngcc/13.2.0 <sticky>\npython/3.11.6(default)\n",
    # Lmod terse, its default marked (D) after a `default` symlink
    "/apps/Core:\ngcc/\ngcc/12.3.0(D)\ngcc/13.2.0\npython/\npython/3.11.6(D)\n",
])
def test_listings_of_each_module_system_give_the_same_modules_and_defaults(listing):
    refused: list[str] = []
    found = parse_module_list(listing, refused)[2]
    assert [(m.full, m.default) for m in found] == [
        ("gcc/12.3.0", True), ("gcc/13.2.0", False), ("python/3.11.6", True)]
    assert refused == []


def test_a_spider_listing_of_a_huge_tree_is_read_whole_and_quickly():
    """60 000 modules (a spider of a large center's every compiler x MPI x library build)."""
    names = [f"lib{i // 30}/{i % 30}.0.{i % 7}-gcc-13.2.0" for i in range(60_000)]
    listing = "/apps/Core:\n" + "\n".join(names) + "\n@@spider\n" + "\n".join(names) + "\n"
    start = time.monotonic()
    found = parse_module_list(listing)[2]
    assert time.monotonic() - start < 20
    assert len(found) == len(set(names)) and found[-1].full in set(names)


# ---- placement: which site has it -----------------------------------------------------------

@needs_lmod
def test_placement_says_which_site_has_a_library_and_which_needs_a_load_first(hier):
    flat = _site("hdf5/1.14.3", "gcc/13.2.0")
    body = "module load hdf5/1.14.3\n"
    assert needs_reasons(needs(body), flat) == []
    assert needs_reasons(needs(body), hier) == [HDF5_NEEDS + "none"]
    none = _site("hdf5/1.10.7")
    assert needs_reasons(needs(body), none) == [
        "software 'hdf5/1.14.3' not installed (only hdf5/1.10.7)"]
