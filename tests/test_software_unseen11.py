"""Software environments, eleventh sweep: modules the script unloads before a library of an
Lmod hierarchy (`module unload gcc`, `ml -gcc`, `module swap gcc intel`, `module purge`),
judged with the modules loaded at that point, each case checked against what the real Lmod
of this machine's registry loads.

Fault found and fixed, its test marked `fault` that failed before: a script that loaded
gcc, unloaded it (or swapped it for another compiler, or purged) and then loaded a library
Lmod shows only under gcc passed the check, where Lmod finds no such module; the check
counted every module loaded before the library, whatever came off again in between.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_software_unseen4 import needs
from test_software_unseen9 import _real_lmod, _tree, needs_lmod
from test_software_unseen10 import LUA, _lmod_loads

from diamond_jupyter.capabilities import SiteCapabilities
from diamond_jupyter.script_body import FORCED, PURGE_ALL, module_unloads
from diamond_jupyter.software import needs_reasons


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """Core: gcc 13 and intel 2023; fftw only under gcc 13, mkl-fftw only under intel."""
    root = tmp_path_factory.mktemp("unload")
    compilers = {"gcc/13.2.0": "gcc/13", "intel/2023.2": "intel/2023"}
    files = {f"Core/{name}.lua": 'family("compiler")\nprepend_path("MODULEPATH", '
             f'"{root}/Compiler/{opened}")\n' for name, opened in compilers.items()}
    files["Compiler/gcc/13/fftw/3.3.10.lua"] = LUA
    files["Compiler/intel/2023/mkl-fftw/2023.2.lua"] = LUA
    return _tree(root, files)


@pytest.fixture(scope="module")
def hier(tree) -> SiteCapabilities:
    return _real_lmod(tree / "Core")


FFTW_NEEDS = ("software 'fftw/3.3.10' (fftw/3.3.10) needs gcc/13.2.0 loaded first (Lmod's "
              "hierarchy shows it only then); the script loads before it: ")


@needs_lmod
@pytest.mark.parametrize("body, before", [
    ("module load gcc/13.2.0\nmodule unload gcc\nmodule load fftw/3.3.10\n", "none"),
    ("module load gcc/13.2.0\nml -gcc\nml fftw/3.3.10\n", "none"),
    ("ml gcc/13.2.0\nml unload gcc/13.2.0\nml fftw/3.3.10\n", "none"),
    ("module load gcc/13.2.0\nmodule rm gcc; module load fftw/3.3.10\n", "none"),
    ("module load gcc/13.2.0\nmodule swap gcc intel/2023.2\nmodule load fftw/3.3.10\n",
     "intel/2023.2"),
    ("module load gcc/13.2.0\nml -gcc intel/2023.2 fftw/3.3.10\n", "intel/2023.2"),
    ("module load gcc/13.2.0\nml swap gcc intel/2023.2\nml fftw/3.3.10\n", "intel/2023.2"),
    ("module load gcc/13.2.0\nmodule purge\nmodule load fftw/3.3.10\n", "none"),
])
def test_fault_a_compiler_unloaded_before_a_library_hides_it(hier, tree, tmp_path, body,
                                                             before):
    assert "fftw" not in _lmod_loads(tree / "Core", tmp_path, body + " 2>/dev/null")
    assert needs_reasons(needs(body), hier) == [
        f"{FFTW_NEEDS}{before} (gcc/13.2.0 unloaded again before it)"]


@needs_lmod
@pytest.mark.parametrize("body", [
    "module load gcc/13.2.0\nmodule unload gcc\nmodule load gcc/13.2.0 fftw/3.3.10\n",
    "module load gcc/13.2.0\nml -gcc intel/2023.2 mkl-fftw/2023.2\n",
    "module load gcc/13.2.0\nmodule swap gcc intel/2023.2\nmodule load mkl-fftw/2023.2\n",
    "module load gcc/13.2.0\nmodule unload intel\nmodule load fftw/3.3.10\n",
    "module purge\nmodule load gcc/13.2.0 fftw/3.3.10\n",
    # an unload that may not run is not followed
    "module load gcc/13.2.0\nif [ -n \"$X\" ]; then module unload gcc; fi\nml fftw/3.3.10\n",
])
def test_a_library_loaded_under_the_compiler_present_then_passes(hier, tree, tmp_path, body):
    loaded = _lmod_loads(tree / "Core", tmp_path, body).split(":")
    assert loaded[-1] in ("fftw/3.3.10", "mkl-fftw/2023.2")
    assert needs_reasons(needs(body), hier) == []


@pytest.mark.parametrize("cmd, gone", [
    ("module unload gcc openmpi", ["gcc", "openmpi"]),
    ("module -q rm gcc", ["gcc"]),
    ("ml -gcc intel", ["gcc"]),
    ("ml --force -gcc", [FORCED + "gcc"]),  # (a sticky gcc too: test_software_sticky)
    ("ml unload gcc", ["gcc"]),
    ("module purge", [PURGE_ALL]),
    ("ml purge", [PURGE_ALL]),
    ("module swap gcc intel/2023", ["gcc"]),
    ("module sw gcc intel", ["gcc"]),
    ("ml swap gcc intel", ["gcc"]),
    ("ml -q switch gcc intel", ["gcc"]),
    ("module swap gcc/13", []),  # one name: the same module in another version
    ("module load gcc", []),
    ("ml", []),
    ("echo module unload gcc", []),
])
def test_what_each_module_command_unloads(cmd, gone):
    assert module_unloads(cmd.split()) == gone
