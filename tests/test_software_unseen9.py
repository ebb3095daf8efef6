"""Software environments, ninth sweep: what the real Lmod 8.6 of this machine's registry
prints to the real discovery command for a module tree written here (aliases and symbolic
versions from a `.modulerc.lua`, a hidden version, a compiler hierarchy its spider
answers), what Environment Modules 5.2 printed for such a tree (recorded: plain, in colour
with MODULES_COLOR=always, and with `--all`), odd bytes a pager or terminal leaves in a
listing, and how versions are ordered when the site picks one (`1.10` after `1.9`, `2023b`
after `2023a`, a release after its `-rc1`).

Faults found and fixed, each with its test marked `fault` that failed before:
- Lmod's terse listing writes an alias or a symbolic version as `py3(@python/3.11.6)`,
  `python/3.11(@python/3.11.6)`: each was "left out, holding characters no module name
  has" (an error of discovery), and `module load py3` was refused as not installed. They
  are now names the site loads; a symbolic version naming no release (`python/stable`)
  adds nothing, since any version a job names matches it already.
- Environment Modules 5 in colour (MODULES_COLOR=always in a login's profile) wraps names
  in escape codes and marks its default by underlining it, not "(default)": the coloured
  modules were left out (as errors) and the default unknown; a pager's overstrike and
  erase codes did the same. They are now read as the plain listing.
- Of two versions with the same numbers the site's pick was the one listed first:
  `foss/2023` was spelled `foss/2023a` where `foss/2023b` is there, and `python/3.12.0-rc1`
  taken over `python/3.12.0` when listed first; a bare `cmake` was taken as cmake/1.10
  where the real Lmod loads cmake/1.10.1-rc1. Versions are now ordered as Lmod orders
  them: a release letter after the numbers counts, a pre-release comes before its release.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from test_software_unseen4 import needs
from test_software_unseen6 import discover

from diamond_jupyter.capabilities import SiteCapabilities, SoftwareModule
from diamond_jupyter.discovery import parse_module_list, parse_module_trees
from diamond_jupyter.software import find_module, needs_reasons, rewrite_modules

LMOD_PKG = Path("/usr/share/lmod/lmod")  # Debian's lmod package (8.6.19)
needs_lmod = pytest.mark.skipif(not (LMOD_PKG / "libexec/lmod").exists(),
                                reason="Lmod is not installed (apt-get install lmod)")


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _real_lmod(modulepath: Path) -> SiteCapabilities:
    """Discovery run by bash against the real Lmod, its MODULEPATH the tree written here."""
    return discover(f"export LMOD_CMD={LMOD_PKG}/libexec/lmod MODULEPATH={modulepath}\n"
                    f". {LMOD_PKG}/init/bash\n")


@pytest.fixture(scope="module")
def flat(tmp_path_factory) -> SiteCapabilities:
    """gcc and python versions, a hidden python, and a .modulerc.lua of an alias and
    symbolic versions."""
    lua = 'whatis("a module written for the test")\n'
    root = _tree(tmp_path_factory.mktemp("flat"), {
        **{f"gcc/{v}.lua": lua for v in ("9.5.0", "10.1.0", "12.3.0", "13.2.0")},
        **{f"python/{v}.lua": lua for v in ("3.9.18", "3.11.6", ".3.14.0-beta")},
        ".modulerc.lua": 'module_alias("py3", "python/3.11.6")\n'
                         'module_version("python/3.11.6", "3.11", "stable", "prod")\n'})
    return _real_lmod(root)


@pytest.fixture(scope="module")
def hierarchy(tmp_path_factory) -> SiteCapabilities:
    """Core gcc 12 and 13, each opening its own tree of openmpi builds."""
    root = tmp_path_factory.mktemp("hier")
    lua = 'whatis("a module written for the test")\n'
    return _real_lmod(_tree(root, {
        "Core/gcc/12.3.0.lua": f'prepend_path("MODULEPATH", "{root}/Compiler/gcc/12")\n',
        "Core/gcc/13.2.0.lua": f'prepend_path("MODULEPATH", "{root}/Compiler/gcc/13")\n',
        "Compiler/gcc/12/openmpi/4.1.6.lua": lua, "Compiler/gcc/13/openmpi/4.1.6.lua": lua,
        "Compiler/gcc/13/openmpi/5.0.3.lua": lua}) / "Core")


# ---- the real Lmod ---------------------------------------------------------------------------

@needs_lmod
def test_fault_lmods_alias_and_symbolic_versions_are_names_the_site_loads(flat):
    names = [m.full for m in flat.software]
    assert {"py3", "python/3.11", "python/prod", "python/3.11.6"} <= set(names)
    assert flat.module_system == "lmod" and flat.errors == []
    for body in ("module load py3\n", "ml python/prod\n", "module load python/3.11\n"):
        assert needs_reasons(needs(body), flat) == [], body


@needs_lmod
def test_a_symbolic_version_naming_no_release_adds_no_module(flat):
    assert "python/stable" not in [m.full for m in flat.software]
    assert needs_reasons(needs("module load python/stable\n"), flat) == []
    [why] = needs_reasons(needs("module load python/3.12\n"), flat)
    assert why.startswith("software 'python/3.12' not installed (only python/3.11, ")


@needs_lmod
def test_real_lmods_hidden_version_is_listed_apart_and_checked_by_its_name(flat):
    assert flat.hidden_modules == ["python/.3.14.0-beta"]
    assert "python/.3.14.0-beta" not in [m.full for m in flat.software]
    assert needs_reasons(needs("module load python/.3.14.0-beta\n"), flat) == []
    [why] = needs_reasons(needs("module load python/.3.15.0-beta\n"), flat)
    assert "hidden" in why and "python/.3.14.0-beta" in why


@needs_lmod
def test_real_lmods_spider_gives_each_mpi_build_the_compilers_it_needs(hierarchy):
    """`module spider openmpi/4.1.6`: "You will need to load all module(s) on any one of
    the lines below", gcc/12.3.0 or gcc/13.2.0; 5.0.3 only under gcc 13."""
    requires = {m.full: m.requires for m in hierarchy.software}
    assert requires == {"gcc/12.3.0": [], "gcc/13.2.0": [],
                        "openmpi/4.1.6": [["gcc/12.3.0"], ["gcc/13.2.0"]],
                        "openmpi/5.0.3": [["gcc/13.2.0"]]}


@needs_lmod
@pytest.mark.parametrize("body, reasons", [
    ("module load gcc/13.2.0 openmpi/5.0.3\n", []),
    ("module load gcc/12.3.0\nmodule load openmpi/4.1.6\n", []),
    ("module load openmpi/5.0.3\n",
     ["software 'openmpi/5.0.3' (openmpi/5.0.3) needs gcc/13.2.0 loaded first (Lmod's "
      "hierarchy shows it only then); the script loads before it: none"]),
    ("module load gcc/12.3.0 openmpi/5.0.3\n",
     ["software 'openmpi/5.0.3' (openmpi/5.0.3) needs gcc/13.2.0 loaded first (Lmod's "
      "hierarchy shows it only then); the script loads before it: gcc/12.3.0"]),
])
def test_a_hierarchy_build_is_checked_against_the_compiler_loaded_before_it(hierarchy, body,
                                                                           reasons):
    assert needs_reasons(needs(body), hierarchy) == reasons


# ---- Environment Modules 5.2 (recorded) ------------------------------------------------------

# `module -t avail` of a tree with gcc/12.3.0 the default, `module-alias py3
# python/3.11.6`, `module-version python/3.11.6 3.11 stable`, `module-hide python/3.9.18`
# and a dotted python/.3.14.0-beta: plain, with MODULES_COLOR=always, and with --all
EM_PLAIN = ("/sw/em:\ngcc/12.3.0(default)\ngcc/13.2.0\npy3(@)\npython/3.11.6(3.11:stable)\n"
            "python/3.12.0-rc1\n")
EM_COLOUR = ("\x1b[1;94m/sw/em\x1b[0m:\n\x1b[4mgcc/12.3.0\x1b[0m\ngcc/13.2.0\n"
             "\x1b[96mpy3\x1b[0m\npython/3.11.6\x1b[2m(\x1b[22m\x1b[95m3.11\x1b[0m\x1b[2m:"
             "\x1b[22m\x1b[95mstable\x1b[0m\x1b[2m)\x1b[22m\npython/3.12.0-rc1\n")
EM_ALL = ("/sw/em:\ngcc/12.3.0(default)\ngcc/13.2.0\npy3(@)\npython/.3.14.0-beta <H>\n"
          "python/3.9.18 <H>\npython/3.11.6(3.11:stable)\npython/3.12.0-rc1\n")


def _env_modules(avail: str, every: str) -> str:
    """Environment Modules 5.2 as a bash function printing its recorded listings."""
    def quoted(text: str) -> str:
        return "'" + text.replace("'", "'\\''") + "'"
    return ('module() { case "$*" in\n'
            '  "--version") echo "Modules Release 5.2.0 (2022-11-08)" >&2 ;;\n'
            f'  "-t avail") printf "%s" {quoted(avail)} >&2 ;;\n'
            f'  "-t avail --all") printf "%s" {quoted(every)} >&2 ;;\n'
            '  *) ;;\nesac; }\n')


def _modules(caps: SiteCapabilities) -> list[tuple[str, bool]]:
    return [(m.full, m.default) for m in caps.software or []]


def test_fault_environment_modules_5_in_colour_reads_as_its_plain_listing():
    plain = discover(_env_modules(EM_PLAIN, EM_ALL))
    colour = discover(_env_modules(EM_COLOUR, EM_ALL))
    assert _modules(colour) == _modules(plain) == [
        ("gcc/12.3.0", True), ("gcc/13.2.0", False), ("py3", False), ("python/3.11.6", False),
        ("python/3.12.0-rc1", False), ("python/3.9.18", False)]
    assert colour.errors == plain.errors == []
    assert parse_module_trees(EM_COLOUR) == parse_module_trees(EM_PLAIN) == ["/sw/em"]
    assert colour.module_system == plain.module_system == "environment-modules"


def test_environment_modules_5_alias_and_hidden_tags_with_all():
    """`py3(@)` is a name to load; `python/3.9.18 <H>` (module-hide) loads by its name, and
    the dotted one is hidden."""
    caps = discover(_env_modules(EM_PLAIN, EM_ALL))
    assert caps.hidden_modules == ["python/.3.14.0-beta"]
    for body in ("module load py3\n", "module load python/3.9.18\n",
                 "module load python/.3.14.0-beta\n"):
        assert needs_reasons(needs(body), caps) == [], body


# ---- odd bytes in a listing ------------------------------------------------------------------

@pytest.mark.parametrize("listing", [
    "/sw:\ng\bgc\bcc\bc/12.3.0\npython/3.11.6\n",  # `more`/`ul` overstrike (bold)
    "/sw:\ngcc/12.3.0\x1b[K\n--More--\x1b[K\npython/3.11.6\n(END)\n",  # a pager's erase
    "/sw:\n\x1b[01;32mgcc/12.3.0\x1b[m\n\x1b[1mpython/3.11.6\x1b[0m\n",  # LMOD_COLORIZE
    "/sw:\npy3 -> python/3.11.6\ngcc/12.3.0\npython/3.11.6\n",  # an alias in long form
])
def test_fault_terminal_codes_and_pager_lines_are_no_names(listing):
    refused: list[str] = []
    _, _, found = parse_module_list(listing, refused)
    assert {"gcc/12.3.0", "python/3.11.6"} <= {m.full for m in found}
    assert refused == []
    assert not {m.full for m in found} - {"gcc/12.3.0", "python/3.11.6", "py3"}


def test_a_sequence_no_colour_or_pager_writes_still_leaves_its_name_out():
    """Only colour, erase and overstrike are taken away: a name holding another sequence (a
    link, a window title, clearing the screen) is left out, and said; so is an alias whose
    name no module name has."""
    refused: list[str] = []
    listing = ("/sw:\n\x1b]8;;file:///x\x07gcc/12.3.0\x1b]8;;\x07\n\x1b[2Jpython/3.11.6\n"
               "py3`id`(@python/3.11.6)\n")
    assert parse_module_list(listing, refused)[2] == []
    assert len(refused) == 3 and refused[2] == "py3`id`"


# ---- which version the site picks -----------------------------------------------------------

def _site(*names: str, default: str | None = None) -> SiteCapabilities:
    return SiteCapabilities(site="north", software=[
        SoftwareModule.parse(n, default=n == default, at_version=False) for n in names])


@pytest.mark.parametrize("names, want, picked", [
    (("cmake/1.9.2", "cmake/1.10.1"), "cmake/1", "cmake/1.10.1"),
    (("cmake/1.10.1", "cmake/1.9.2"), "cmake", "cmake/1.10.1"),
    (("foss/2023a", "foss/2023b"), "foss/2023", "foss/2023b"),
    (("python/3.12.0-rc1", "python/3.12.0"), "python/3.12", "python/3.12.0"),
    (("python/3.11.6", "python/3.12.0-rc1"), "python/3", "python/3.12.0-rc1"),
    (("numpy/2.0.0a1", "numpy/2.0.0", "numpy/2.0.0rc2"), "numpy/2.0", "numpy/2.0.0"),
    (("openssl/1.1.1w", "openssl/1.1.1"), "openssl/1.1", "openssl/1.1.1w"),
])
def test_fault_the_version_picked_is_the_highest_as_lmod_orders_them(names, want, picked):
    assert find_module(want, _site(*names).software).full == picked


def test_a_default_still_wins_over_a_higher_version():
    caps = _site("foss/2023a", "foss/2023b", default="foss/2023a")
    assert find_module("foss/2023", caps.software).full == "foss/2023a"


def test_fault_a_load_is_spelled_as_the_latest_build_of_its_generation():
    caps = _site("FOSS/2023a", "FOSS/2023b")
    body = "module load foss/2023\n"
    assert rewrite_modules(body, caps) == (
        "module load FOSS/2023b\n",
        ["rewrote: body line 1: module foss/2023 -> FOSS/2023b (as north names it)"])


@needs_lmod
def test_fault_lmod_itself_picks_the_version_the_check_picks(tmp_path):
    """The real Lmod's default among 1.9, 1.10 and 1.10.1-rc1 (no marked default) is the
    one `find_module` takes for a bare name."""
    lua = 'whatis("a module written for the test")\n'
    root = _tree(tmp_path, {f"cmake/{v}.lua": lua for v in ("1.9", "1.10", "1.10.1-rc1")})
    script = (f"export LMOD_CMD={LMOD_PKG}/libexec/lmod MODULEPATH={root}\n"
              f". {LMOD_PKG}/init/bash\nmodule load cmake && echo \"$LOADEDMODULES\"\n")
    out = subprocess.run([shutil.which("bash") or "/bin/bash", "-c", script],
                         capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}).stdout.strip()
    caps = _site("cmake/1.9", "cmake/1.10", "cmake/1.10.1-rc1")
    assert out == find_module("cmake", caps.software).full == "cmake/1.10.1-rc1"
