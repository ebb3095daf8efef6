"""Software names across sites: one package, many spellings (pure).

Sites name the same package differently: `GROMACS/2023.3-foss-2023a` (EasyBuild),
`gromacs/2023` (hand-made trees), `CUDA/12.2.0` vs `cuda/12.2`, `Python/3.11` vs `python3`.
A name is normalised (case, separators, known aliases; a trailing major version such as
`python3` becomes a version); versions compare by their leading numeric parts, at the
precision both give (`2023` ~ `2023.3`, `12.2` ~ `12.2.0`, `3` ~ `3.11`); a toolchain
suffix (`-foss-2023a`, `-GCCcore-12.3.0`) does not count, a build suffix (`-CUDA-12.1.1`,
`-Python-2.7.18`) does. Where no module is the package itself, one that holds it serves:
an EasyBuild toolchain (`foss/2023b` holds OpenMPI 4.1.6, `gompi/2023b`) or bundle
(`SciPy-bundle` holds numpy); and any conda distribution serves a job that activates its
own environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase

from .capabilities import ONEAPI_ROOTS, SiteCapabilities, SoftwareModule
from .needs import Needs
from .script_body import FORCED, HIDDEN_MODULE, PURGE_ALL, SoftwareNeed, scan_body

# normalised spelling -> the package (names compared after lower-casing and dropping - _ .)
_ALIASES = {
    "torch": "pytorch", "cudatoolkit": "cuda", "nvhpc": "nvhpc", "ompi": "openmpi",
    "impi": "intelmpi", "intelmpi": "intelmpi", "gnu": "gcc", "gcccore": "gcc",
    "python": "python", "py": "python", "anaconda": "anaconda", "tensorflowgpu": "tensorflow",
    # Spack's intel-oneapi-* and EasyBuild's names of the same packages
    "inteloneapimpi": "intelmpi", "inteloneapimkl": "mkl", "imkl": "mkl", "intelmkl": "mkl",
    "inteloneapicompilers": "intelcompilers", "nvidiahpcsdk": "nvhpc", "cudacore": "cuda",
    "openjdk": "java", "anaconda3": "anaconda", "miniconda3": "miniconda",
    "miniforge3": "miniforge", "mambaforge": "miniforge", "cudatoolkitcore": "cuda",
    # EasyBuild's Intel compilers up to 2020b (Parallel Studio), intel-compilers after
    "iccifort": "intelcompilers",
}
# names whose trailing digits are a major version (python3 = python, version 3)
_VERSIONED_NAMES = {"python", "perl", "java", "openjdk", "qt", "gcc", "cuda", "julia", "fftw"}
_NUM = re.compile(r"v?([0-9]+(?:\.[0-9]+)*)")
# versions that name no release: they match any
FLOATING_VERSIONS = {"latest", "default", "stable", "current", "system"}
# the first part of a categorised or hierarchical spelling (EasyBuild's
# CategorizedModuleNamingScheme `bio/GROMACS/2023.3`, Lmod's `Core/gcc/12.3.0`, RHEL's
# `mpi/openmpi-x86_64`): not part of the package's name
_CATEGORIES = {"core", "compiler", "compilers", "mpi", "lib", "libs", "lang", "tools", "tool",
               "devel", "bio", "chem", "math", "numlib", "phys", "vis", "data", "system",
               "toolchain", "ai", "apps", "app", "perf", "debugger", "geo", "cae", "io",
               "utilities", "util", "base", "dev", "library", "libraries", "applications"}
_ARCH_SUFFIX = re.compile(r"[-_.](?:x86[-_]64|aarch64|arm64|ppc64le)$", re.I)


def norm_name(name: str) -> tuple[str, str | None]:
    """(the package, a version implied by the name): 'Python3' -> ('python', '3');
    Spack's `py-numpy` is numpy."""
    low = re.sub(r"^py-(?=[a-z])", "", name.strip().lower())
    key = re.sub(r"[-_.\s]+", "", low)
    if key in _ALIASES:
        return _ALIASES[key], None
    m = re.fullmatch(r"([a-z]+?)[-_]?v?([0-9]+(?:\.[0-9]+)*)", low)  # python3, cuda11.8
    if m and m.group(1) in _VERSIONED_NAMES:
        return _ALIASES.get(m.group(1), m.group(1)), m.group(2)
    return _ALIASES.get(key, key), None


def identity(spelling: str) -> tuple[str, str | None]:
    """A module as written -> (the package, its version as written): a leading category
    or hierarchy level and an architecture suffix do not count; the first part left is the
    name, the rest the version ('bio/GROMACS/2023.3-foss-2023a' -> ('gromacs',
    '2023.3-foss-2023a'), 'mpi/openmpi-x86_64' -> ('openmpi', None)); a flat name's version
    starts at its first -DIGIT ('mvapich2-1.8.1' -> ('mvapich2', '1.8.1'))."""
    parts = [p for p in spelling.strip().split("/") if p] or [spelling]
    while len(parts) > 1 and parts[0].lower() in _CATEGORIES and parts[1][:1].isalpha():
        parts = parts[1:]
    if len(parts) == 1:  # flat names: Spack's Tcl `openmpi-4.1.5-gcc-12.3.0-abc1234`,
        # `mvapich2-1.8.1`, `rocm-5.4.3`: the version starts at the first -DIGIT
        m = re.fullmatch(r"(.*?[A-Za-z][A-Za-z0-9+]*)-(v?[0-9].*)", parts[0])
        if m and not _ARCH_SUFFIX.fullmatch("-" + m.group(2)):
            parts = [m.group(1), m.group(2)]
    pkg, implied = norm_name(_ARCH_SUFFIX.sub("", parts[0]))
    return pkg, "/".join(parts[1:]) or implied


def version_key(version: str | None) -> tuple[int, ...]:
    """'2023.3-foss-2023a' -> (2023, 3); no leading number -> ()."""
    m = _NUM.match((version or "").strip())
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


# a pre-release after a version's numbers: `-rc1`, `.beta`, `-dev`, `a1` (PEP 440's alpha),
# ordered below the release it leads to; a lone letter (`2023a`, `1.1.1w`) is a release
_PRE_RELEASE = re.compile(r"[-._]?(?:(rc|alpha|beta|pre|preview|dev)([0-9]*)|([ab])([0-9]+))"
                          r"(?![a-z])")
_RELEASE_LETTER = re.compile(r"([a-z])(?![a-z0-9])")


def version_order(version: str | None) -> tuple[tuple[int, ...], int, str, int]:
    """A key that orders versions as Lmod picks the highest: numbers part by part (`1.10`
    after `1.9`), a letter after them (`2023b` after `2023a`), a pre-release (`3.12.0-rc1`)
    before its release and after the one before; no number: first."""
    m = re.match(r"v?([0-9]+(?:\.[0-9]+)*)(.*)", (version or "").strip().lower())
    if not m:
        return (), 0, "", 0
    numbers = tuple(int(x) for x in m.group(1).split("."))
    rest = m.group(2)
    if pre := _PRE_RELEASE.match(rest):
        return numbers, 0, pre.group(1) or pre.group(3), int(pre.group(2) or pre.group(4) or 0)
    letter = _RELEASE_LETTER.match(rest)
    return numbers, 1, letter.group(1) if letter else "", 0


def _version_parts(version: str) -> tuple[int | str, ...]:
    """The leading numbers and a letter right after them ('2023a' -> (2023, 'a')): 2023a
    and 2023b are different releases."""
    v = version.strip().lower()
    m = re.match(r"v?([0-9]+(?:\.[0-9]+)*)([a-z](?![a-z]))?", v)
    if not m:
        return ()
    nums: tuple[int | str, ...] = tuple(int(x) for x in m.group(1).split("."))
    return nums + ((m.group(2),) if m.group(2) else ())


def versions_match(want: str | None, have: str | None) -> bool:
    """Compatible at the precision both give; a side without a version, or with one that
    names no release (`latest`, `default`), matches any; two versions without numbers must
    be equal (case-insensitive)."""
    if not want or not have:
        return True
    if want.strip().lower() in FLOATING_VERSIONS or have.strip().lower() in FLOATING_VERSIONS:
        return True
    if re.fullmatch(r"[0-9.]+(?:,[0-9.]+)+", want.strip()):  # Environment Modules' `@1.2,1.4`
        return any(versions_match(v, have) for v in want.split(","))
    if "," in want:  # `GCC/12.3.0,CUDA/12.1.1`: module load reads one unknown name
        return want.strip().lower() == have.strip().lower()
    if (rng := re.fullmatch(r"([0-9.]*):([0-9.]*)", want.strip())) and any(rng.groups()):
        # its `@1.2:1.4`, `@:1.4`, `@1.2:` (inclusive; each end at the precision it gives,
        # so `@:12` holds 12.3.0): a range is not a prefix
        got = version_key(have)
        lo, hi = version_key(rng.group(1)), version_key(rng.group(2))
        return bool(got) and got[:len(lo)] >= lo and (not hi or got[:len(hi)] <= hi)
    if "/" in want.strip("/"):  # `openmpi/4.1.6/gcc-12`: a build under the version
        wants, haves = want.strip("/").split("/"), have.strip("/").split("/")
        if len(haves) < len(wants) or not all(
                _level_matches(w, h) for w, h in zip(wants[1:], haves[1:], strict=False)):
            return False  # no such module: module load finds none of a deeper name
        want, have = wants[0], haves[0]
    a, b = _version_parts(want), _version_parts(have)
    if not a or not b:  # `intel/oneapi` loads the default of the site's intel/oneapi/2023.1
        w, h = want.strip().lower().rstrip("/"), have.strip().lower()
        return w == h or h.startswith(w + "/")
    n = min(len(a), len(b))
    return a[:n] == b[:n] and _build_words_match(want, have)


def _build_words(version: str) -> set[str]:
    """The words naming a build after a version's numbers (`2023.3-foss-2023a-CUDA-12.1.1`
    -> {"foss", "cuda"}; `12.2.0-rocm` -> {"rocm"}), pre-release marks left out."""
    rest = re.sub(r"^v?[0-9]+(?:\.[0-9]+)*[a-z]?(?![a-z])", "", version.strip().lower())
    return set(re.findall(r"[a-z]{2,}", rest)) - {"rc", "alpha", "beta", "pre", "preview",
                                                   "dev"}


def _build_words_match(want: str, have: str) -> bool:
    """A build the need names (`gromacs/2023.3-rocm`) is not another the site names
    (`gromacs/2023.3-cuda`): where both name builds, the site's holds each of the need's."""
    wants, haves = _build_words(want), _build_words(have)
    return not wants or not haves or wants <= haves


def _level_matches(want: str, have: str) -> bool:
    """One level of a version path past its first (`gcc-12` of `openmpi/4.1.6/gcc-12`): the
    same name, at a compatible version (`gcc-12` is gcc-12.3.0's, not gcc-13.2.0's)."""
    if want.lower() == have.lower():
        return True
    (wp, wv), (hp, hv) = identity(want), identity(have)
    return wp == hp and versions_match(wv, hv)


def _want(need: SoftwareNeed | str) -> tuple[str, str | None, str]:
    written = need if isinstance(need, str) else need.full
    text = written.replace("@", "/", 1) if "/" not in written else written
    pkg, version = identity(text)
    implied = identity(text.split("/")[0])[1] if "/" in text else None
    if implied and version and not version.startswith(implied):
        return pkg, f"{implied}.{version}", written  # python3/11 is odd; keep both
    return pkg, version, written


def _have(m: SoftwareModule) -> tuple[str, str | None]:
    # a listing's `cmake@3.27.9` (kept whole: the site loads it by that name) is the
    # package cmake, version 3.27.9, as a job's `cmake@3.27.9` is
    full = m.full
    return identity(full.replace("@", "/", 1) if "/" not in full else full)


# EasyBuild's common toolchains: what each generation's toolchain modules load (the
# packages as `identity` names them). A toolchain loads the ones it names and the smaller
# toolchains inside it (`foss` holds `gompi` and `gfbf`; `intel` holds `iimpi` and `iimkl`).
_GENERATIONS: dict[str, dict[str, str]] = {
    # up to 2020b foss loads OpenBLAS itself (no FlexiBLAS, no gfbf) and intel loads
    # iccifort (the compilers of Parallel Studio), not intel-compilers
    "2019b": {"gcc": "8.3.0", "openmpi": "3.1.4", "openblas": "0.3.7", "fftw": "3.3.8",
              "scalapack": "2.0.2", "intelcompilers": "2019.5.281", "intelmpi": "2018.5.288",
              "mkl": "2019.5.281"},
    "2020a": {"gcc": "9.3.0", "openmpi": "4.0.3", "openblas": "0.3.9", "fftw": "3.3.8",
              "scalapack": "2.1.0", "intelcompilers": "2020.1.217", "intelmpi": "2019.7.217",
              "mkl": "2020.1.217"},
    "2020b": {"gcc": "10.2.0", "openmpi": "4.0.5", "openblas": "0.3.12", "fftw": "3.3.8",
              "scalapack": "2.1.0", "intelcompilers": "2020.4.304", "intelmpi": "2019.9.304",
              "mkl": "2020.4.304"},
    "2021a": {"gcc": "10.3.0", "openmpi": "4.1.1", "flexiblas": "3.0.4", "openblas": "0.3.15",
              "fftw": "3.3.9", "scalapack": "2.1.0", "intelcompilers": "2021.2.0",
              "intelmpi": "2021.2.0", "mkl": "2021.2.0"},
    "2021b": {"gcc": "11.2.0", "openmpi": "4.1.1", "flexiblas": "3.0.4", "openblas": "0.3.18",
              "fftw": "3.3.10", "scalapack": "2.1.0", "intelcompilers": "2021.4.0",
              "intelmpi": "2021.4.0", "mkl": "2021.4.0"},
    "2022a": {"gcc": "11.3.0", "openmpi": "4.1.4", "flexiblas": "3.2.0", "openblas": "0.3.20",
              "fftw": "3.3.10", "scalapack": "2.2.0", "intelcompilers": "2022.1.0",
              "intelmpi": "2021.6.0", "mkl": "2022.1.0"},
    "2022b": {"gcc": "12.2.0", "openmpi": "4.1.4", "flexiblas": "3.2.1", "openblas": "0.3.21",
              "fftw": "3.3.10", "scalapack": "2.2.0", "intelcompilers": "2022.2.1",
              "intelmpi": "2021.7.1", "mkl": "2022.2.1"},
    "2023a": {"gcc": "12.3.0", "openmpi": "4.1.5", "flexiblas": "3.3.1", "openblas": "0.3.23",
              "fftw": "3.3.10", "scalapack": "2.2.0", "intelcompilers": "2023.1.0",
              "intelmpi": "2021.9.0", "mkl": "2023.1.0"},
    "2023b": {"gcc": "13.2.0", "openmpi": "4.1.6", "flexiblas": "3.3.1", "openblas": "0.3.24",
              "fftw": "3.3.10", "scalapack": "2.2.0", "intelcompilers": "2023.2.1",
              "intelmpi": "2021.10.0", "mkl": "2023.2.0"},
    "2024a": {"gcc": "13.3.0", "openmpi": "5.0.3", "flexiblas": "3.4.4", "openblas": "0.3.27",
              "fftw": "3.3.10", "scalapack": "2.2.0", "intelcompilers": "2024.2.0",
              "intelmpi": "2021.13.0", "mkl": "2024.2.0"},
    # EasyBuild went from 2024a to 2025a (there is no 2024b generation)
    "2025a": {"gcc": "14.2.0", "openmpi": "5.0.7", "flexiblas": "3.4.5", "openblas": "0.3.29",
              "fftw": "3.3.10", "scalapack": "2.2.2", "intelcompilers": "2025.1.1",
              "intelmpi": "2021.15.0", "mkl": "2025.1.0"},
}
# the smaller toolchains a generation's toolchain does not hold yet: gfbf and iimkl came
# with 2022a (EasyBuild's common toolchains)
_NOT_YET = {"gfbf": "2022a", "iimkl": "2022a"}
_TOOLCHAINS: dict[str, tuple[str, ...]] = {
    "foss": ("gompi", "gfbf", "gcc", "openmpi", "flexiblas", "openblas", "fftw", "fftwmpi",
             "scalapack"),
    "gompi": ("gcc", "openmpi"),
    "gfbf": ("gcc", "flexiblas", "openblas", "fftw"),
    "intel": ("iimpi", "iimkl", "intelcompilers", "intelmpi", "mkl"),
    "iimpi": ("intelcompilers", "intelmpi"),
    "iimkl": ("intelcompilers", "mkl"),
}
# bundles of Python packages: what each holds (versions where the bundle's release is
# known; a release not listed holds them at versions not known here, which match any)
_BUNDLES: dict[str, tuple[tuple[str, ...], dict[str, dict[str, str]]]] = {
    "scipybundle": (("numpy", "scipy", "pandas", "mpi4py", "numexpr", "bottleneck",
                     "mpmath"), {
        "2023.02": {"numpy": "1.24.2", "scipy": "1.10.1", "pandas": "1.5.3", "python": "3.10.8"},
        "2023.07": {"numpy": "1.25.1", "scipy": "1.11.1", "pandas": "2.0.3", "python": "3.11.3"},
        "2023.11": {"numpy": "1.26.2", "scipy": "1.11.4", "pandas": "2.1.3",
                    "python": "3.11.5"}}),
}
# names in a version suffix that say how the package was built (`-CUDA-12.1.1`,
# `-Python-2.7.18`): a need that names one wants that build
_BUILT_WITH = re.compile(r"-(CUDA|ROCm|Python|Java|R|Perl|Julia)-([0-9][\w.]*)", re.I)


def _parts(m: SoftwareModule) -> list[tuple[str, str | None]]:
    """What loading `m` gives besides itself: a toolchain's compilers and libraries, a
    bundle's packages (GCC also gives GCCcore: `identity` names both gcc)."""
    pkg, version = _have(m)
    if pkg in _TOOLCHAINS:
        gen = (version or "").strip().lower()
        table = _GENERATIONS.get(gen, {})
        same = {"fftwmpi": "fftw"}  # FFTW.MPI is FFTW's MPI part, of its version
        return [(p, gen if p in _TOOLCHAINS else table.get(same.get(p, p)))
                for p in _TOOLCHAINS[pkg]
                if p in _TOOLCHAINS and (gen not in _GENERATIONS or gen >= _NOT_YET.get(p, ""))
                or same.get(p, p) in table]
    if pkg in _BUNDLES:
        names, releases = _BUNDLES[pkg]
        release = re.match(r"[0-9]+\.[0-9]+", (version or "").strip())
        known = releases.get(release.group() if release else "", {})
        # the Python it loads is known only for a known release
        return [(p, known.get(p)) for p in names] + \
            ([("python", known["python"])] if "python" in known else [])
    return []


def _builds_match(want: str | None, have: str | None) -> bool:
    """Each build the need's version suffix names (`-CUDA-12.1.1`) is the site's too."""
    theirs = {k.lower(): v for k, v in _BUILT_WITH.findall(have or "")}
    return all(k.lower() in theirs and versions_match(v, theirs[k.lower()])
               for k, v in _BUILT_WITH.findall(want or ""))


# conda distributions by the command they give: a job that activates its own environment
# needs the command, not one distribution
_CONDA_FAMILY = {"conda": {"anaconda", "miniconda", "miniforge", "conda", "mamba"},
                 "mamba": {"miniforge", "mamba"}}


def candidates(need: SoftwareNeed | str, modules: Iterable[SoftwareModule]
               ) -> list[SoftwareModule]:
    """The site's modules that satisfy `need`, best first: the same spelling, then the
    site's default, then the highest version. Without such a module: one that gives the
    package as part of it (an EasyBuild toolchain or bundle); for a conda distribution the
    job activates its own environment from (`role`), any distribution of that command."""
    pkg, version, written = _want(need)
    modules = [m for m in modules if not m.hidden or m.full == written]
    if _slash_version_list(written):  # one unknown name to module load: only itself
        return [m for m in modules if m.full == written]
    same = [(m, have) for m in modules for p, have in [_have(m)] if p == pkg]
    if any(have for _, have in same):  # versions known: a bare name (a sites file's
        same = [(m, have) for m, have in same if have]  # "gcc") says nothing more
    out = [m for m, have in same if versions_match(version, have)
           and _builds_match(version, have)]
    if not out and not _BUILT_WITH.search(version or ""):
        out = [m for m in modules if any(p == pkg and versions_match(version, v)
                                         for p, v in _parts(m))]
    role = None if isinstance(need, str) else need.role
    if not out and role in _CONDA_FAMILY:
        out = [m for m in modules if _have(m)[0] in _CONDA_FAMILY[role]]
    # the name as written, case and all (`Python/3.11`: the site's Python/3.11.3-..., which
    # module load finds so, before another spelling's python/3.11.6)
    name = written.rsplit("/", 1)[0] if "/" in written else written
    out.sort(key=lambda m: version_order(_have(m)[1]), reverse=True)  # highest first
    out.sort(key=lambda m: (m.full != written, m.full.lower() != written.lower(),
                            m.name != name, not m.default))
    return out


def _slash_version_list(written: str) -> bool:
    """`GCC/12.3.0,13.2.0`: versions joined by ',' after '/'. Environment Modules reads a
    list of versions only after '@' (`GCC@12.3.0,13.2.0`, its advanced version specifiers);
    after '/' it, and Lmod, take the whole as one module name, which no site has."""
    return "/" in written and bool(re.search(r"/[^/,]*[0-9][^/,]*(?:,[^/,]+)+$", written))


def find_module(need: SoftwareNeed | str, modules: Iterable[SoftwareModule]
                ) -> SoftwareModule | None:
    got = candidates(need, modules)
    return got[0] if got else None


def rewrite_modules(body: str, caps: SiteCapabilities) -> tuple[str, list[str]]:
    """The body with each module it loads (`module load`/`add`/`try-load`/`swap`, `ml`)
    spelled as the site spells it, and one line per rewrite ("rewrote: ..."). Arguments the
    site lacks, already spells the same way, or that may come from the job's own module
    tree (after `module use`) or belong to a here-document stay as written; nothing changes
    when the site's software is not known."""
    if caps.software is None:
        return body, []
    notes: list[tuple[int, str]] = []  # (where, what), told in the body's order
    edits: list[tuple[int, int, str]] = []
    for ld in scan_body(body).loads:
        arg = ld.need.full
        if not (ld.rewrite or in_site_trees(ld.need, caps)) or ld.start == ld.end or \
                any(e[:2] == (ld.start, ld.end) for e in edits):
            continue  # one word may name the modules of several loads (a loop's list)
        found = find_module(ld.need, caps.software)  # with its role and written form
        if found is None or found.full == arg or found.name == arg:
            continue  # missing, or spelled as the site does (its default version)
        new = found.full if re.fullmatch(r"[\w./@+-]+", found.full) else \
            "'" + found.full.replace("'", "'\\''") + "'"
        edits.append((ld.start, ld.end, new))
        notes.append((ld.start, f"rewrote: body line {ld.line or ld.need.line}: module {arg} "
                      f"-> {found.full} (as {caps.site} names it)"))
    for start, end, new in sorted(edits, reverse=True):
        body = body[:start] + new + body[end:]
    return body, [text for _, text in sorted(notes)]


# container runtimes some sites give as modules, others on the PATH
_RUNTIME_PACKAGES = {"apptainer": {"apptainer", "singularity"},
                     "singularity": {"apptainer", "singularity"},
                     "singularityce": {"apptainer", "singularity"},
                     "podman": {"podman"}, "charliecloud": {"charliecloud"},
                     "enroot": {"enroot"}, "shifter": {"shifter"}}
_MPI_PACKAGES = {"openmpi", "mpich", "intelmpi", "mvapich", "mvapich2", "hpcx", "craympich",
                 "spectrummpi", "mpi"}


def is_mpi(name: str) -> bool:
    return identity(name)[0] in _MPI_PACKAGES


def gpu_vendor(model: str) -> str | None:
    """'a100' -> 'nvidia', 'mi250x' -> 'amd'; None when the name does not say."""
    low = re.sub(r"[^a-z0-9]", "", model.lower())
    if re.match(r"(?:mi[0-9]|gfx|radeon|instinct|amd)", low):
        return "amd"
    if re.match(r"(?:[abhlptkv][0-9]{1,3}[a-z]?$|gh[0-9]|gb[0-9]|rtx|gtx|tesla|quadro|titan|"
                r"geforce|nvidia)", low):
        return "nvidia"
    if re.match(r"(?:pvc|max[0-9]|ponte|intel)", low):
        return "intel"
    return None


def pmi_offered(want: str, have: list[str]) -> bool:
    """Whether srun runs `--mpi=WANT` with these plugins: `pmix` takes the site's PMIx of
    any version, `pmix_v4` that version (or PMIx whose versions the site did not list);
    `none` is always there."""
    have_set = {h.lower() for h in have}
    want = want.lower()
    if want == "none" or want in have_set:
        return True
    versions = {h for h in have_set if h.startswith("pmix_")}
    if want == "pmix":
        return bool(versions)
    return want.startswith("pmix_") and "pmix" in have_set and not versions


def _listed(names: list[str], limit: int = 8) -> str:
    if not names:
        return "none"
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def runs_on(clusters: list[str], caps: SiteCapabilities) -> bool:
    """Whether a branch on $SLURM_CLUSTER_NAME taken on `clusters` (shell patterns; "!P":
    an earlier arm's, which wins) runs at this site. Where discovery read the clusters'
    own names (Slurm's ClusterName, what the variable holds) they decide, a `*` arm (or an
    `else`) included; elsewhere the site's name or one of its clusters' must match a
    pattern other than a bare `*` (a name that matches none says nothing: the sites
    file's names need not be Slurm's)."""
    known = [n.lower() for n in caps.cluster_names or []]
    names = set(known) or {caps.site.lower()} | {
        t.cluster.lower() for t in caps.node_types if t.cluster}
    wanted = [c.lower() for c in clusters if not c.startswith("!") and (c != "*" or known)]
    earlier = [c[1:].lower() for c in clusters if c.startswith("!")]
    return any(fnmatchcase(n, p) for n in names for p in wanted) and \
        not any(fnmatchcase(n, p) for n in names for p in earlier)


def _hierarchy_reason(need: SoftwareNeed, found: SoftwareModule,
                      earlier: list[SoftwareNeed], caps: SiteCapabilities) -> str | None:
    """Why `found` (the module the site loads for `need`) will not load: Lmod shows it only
    once every module of one of its `requires` lines is loaded, and the modules the script
    loads before it (as the site would load them) cover none of those lines; None when
    they do, or it needs none."""
    if not found.requires:
        return None
    loaded, gone = _loaded_before(need, earlier, caps)
    if any(all(candidates(p, loaded) for p in line) for line in found.requires):
        return None
    choices = " or ".join(" + ".join(line) for line in found.requires)
    before = ", ".join(m.full for m in loaded) or "none"
    unloaded = f" ({', '.join(m.full for m in gone)} unloaded again before it)" \
        if gone else ""
    return (f"software '{need.full}' ({found.full}) needs {choices} loaded first (Lmod's "
            f"hierarchy shows it only then); the script loads before it: {before}{unloaded}")


def _loaded_before(need: SoftwareNeed, earlier: list[SoftwareNeed], caps: SiteCapabilities
                   ) -> tuple[list[SoftwareModule], list[SoftwareModule]]:
    """The site's modules loaded when the script loads `need`, and those it loaded but
    unloaded again before (`module unload gcc`, `ml -gcc`, `module swap gcc intel`,
    `module purge`; a module the site made sticky stays but for `module --force ...`). One
    version of a name is loaded at a time: a later load or swap replaces the earlier
    (`module load gcc/13.2.0; module swap gcc gcc/12.3.0` leaves gcc/12.3.0 alone)."""
    loaded: dict[str, SoftwareModule] = {}
    gone: dict[str, SoftwareModule] = {}
    for e in [*earlier, need]:
        for entry in e.unloaded:
            name = entry.removeprefix(FORCED)
            out = [k for k, m in loaded.items() if (name == PURGE_ALL or candidates(name, [m]))
                   and (not m.sticky or entry.startswith(FORCED))]
            gone.update((k, loaded.pop(k)) for k in out)
        if e is need:
            break
        m = find_module(e, caps.software) if not e.unchecked or in_site_trees(e, caps) \
            else None
        if m is not None:
            loaded[m.name] = m
            gone.pop(m.name, None)
    return list(loaded.values()), list(gone.values())


def _swapped_away(need: SoftwareNeed, found: SoftwareModule, earlier: list[SoftwareNeed],
                  later: list[SoftwareNeed], caps: SiteCapabilities) -> str | None:
    """Why `found`, loaded under the modules before it, is gone once the same command loads
    another version of one of them (`module load gcc/12.3.0 openmpi/4.1.6 gcc/13.2.0`):
    Lmod swaps that module and reloads `found` under the new one, where no version of it is
    shown (an inactive module; the job runs without it); None otherwise. Only loads of the
    same line count (an unload after the library is not followed; one before it is, by
    `_hierarchy_reason`)."""
    if not found.requires or need.line is None:
        return None
    loaded = {m.name: m for e in earlier if not e.unchecked
              for m in [find_module(e, caps.software)] if m is not None}
    for e in later:
        versioned = "/" in e.full or "@" in e.full  # a bare name may keep the one loaded
        new = find_module(e, caps.software) if e.line == need.line and not e.unchecked \
            and versioned else None
        old = loaded.get(new.name) if new is not None else None
        if new is None or old is None or old.full == new.full:
            continue
        loaded[new.name] = new
        now = list(loaded.values())
        if not any(all(candidates(p, now) for p in line) for line in found.requires):
            return (f"software '{need.full}' ({found.full}) is unloaded again when the same "
                    f"line loads {new.full} in place of {old.full}: Lmod then keeps it "
                    f"inactive (it needs {' or '.join(' + '.join(ln) for ln in found.requires)}"
                    f"); leave {new.full} out, or load it first, then the {found.name} "
                    "built with it")
    return None


def in_site_trees(need: SoftwareNeed, caps: SiteCapabilities) -> bool:
    """Whether every module tree the job added before loading `need` (`module use PATH`) is
    one the site lists already, so that its list is what the job can load."""
    have = {t.rstrip("/") for t in caps.module_trees or []}
    return bool(need.trees and have) and all(t.rstrip("/") in have for t in need.trees)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def own_mpi_reason(needs: Needs, caps: SiteCapabilities) -> str | None:
    """Why the MPI a job brings itself (`source /opt/intel/oneapi/setvars.sh`, a PATH entry)
    is not at this site: only where discovery looked for MPIs (`mpi_paths`), only for a path
    under a place discovery always looks (the oneAPI installer's defaults), and only when
    nothing discovery found is under that path or holds it. Elsewhere None (not checked,
    as the job's summary says)."""
    src = needs.mpi_from
    if needs.mpi not in ("mpirun", "mpiexec") or not src or caps.mpi_paths is None:
        return None
    parent = src.rsplit("/", 1)[0] or "/"
    if any(_under(src, p) or _under(p, parent) for p in caps.mpi_paths):
        return None
    root = next((r for r in ONEAPI_ROOTS if _under(src, r)), None)
    if root is None:
        return None
    return (f"the script runs {needs.mpi} with the MPI it brings ({needs.mpi_own}), but the "
            f"site has no oneAPI MPI under {root} (its MPI: "
            f"{', '.join(caps.mpi or []) or 'none'}"
            + (f", at {', '.join(caps.mpi_paths)})" if caps.mpi_paths else ")"))


def env_reasons(needs: Needs, caps: SiteCapabilities) -> list[str]:
    """Why the Spack packages and environments and the named conda environments the job
    activates are not at this site: only where discovery listed them (`spack find`, `spack
    env list`, `conda env list`: a tool missing from the login's PATH, or a listing cut
    short, leaves them unknown), never for one in a branch or given as a path."""
    out: list[str] = []
    for env in needs.envs:
        if env.unchecked or env.root is not None and env.root != caps.spack_root:
            continue  # another Spack than the one discovery listed (or none known)
        if env.kind == "spack" and caps.spack_packages is not None:
            same = [p for p in caps.spack_packages if p.split("@", 1)[0] == env.name]
            if any(versions_match(env.version, p.split("@", 1)[1]) for p in same):
                continue
            has = f"only {_listed(same)}" if same else \
                f"spack find lists {len(caps.spack_packages)} packages, none named {env.name}"
            out.append(f"{env.shown}: not installed by Spack at the site ({has})")
        elif env.kind == "spack-env" and caps.spack_envs is not None:
            if env.name not in caps.spack_envs:
                out.append(f"{env.shown} does not exist at the site (spack env list: "
                           f"{_listed(caps.spack_envs)})")
        elif env.kind == "conda" and caps.conda_envs is not None:
            tool = "micromamba" if env.tool == "micromamba" else "conda"
            names = caps.conda_envs.get(tool)
            if names is not None and env.name not in names:
                out.append(f"{env.shown} does not exist at the site ({tool} env list: "
                           f"{_listed(names)})")
    return out


def _hidden_reason(need: SoftwareNeed, caps: SiteCapabilities) -> str | None:
    """Why a hidden module the job names (`python/.3.14.0-beta`) is not at this site: only
    where discovery's listing held hidden modules (Lmod's `--show_hidden`, Environment
    Modules 4.6+'s `--all`), matched by the exact name `module load` takes; and at a site
    discovered to have no module system at all, where no module loads."""
    if caps.hidden_modules is None:
        if caps.software == [] and caps.module_system is None and \
                caps.sources.get("software") == "discovered":
            return f"software '{need.full}' not installed (site has: none)"
        return None
    have = set(caps.hidden_modules) | set(caps.module_names())
    if need.full in have:
        return None
    pkg = need.full.split("/")[0].lower()
    same = [m for m in caps.hidden_modules if m.split("/")[0].lower() == pkg]
    return (f"software '{need.full}' not installed (a hidden module: "
            + (f"the site's hidden {need.full.split('/')[0]} modules are {_listed(same)}"
               if same else f"the site lists {len(caps.hidden_modules)} hidden "
               f"module{'' if len(caps.hidden_modules) == 1 else 's'}, "
               f"none of {need.full.split('/')[0]}") + ")")


def _extension_reason(need: SoftwareNeed, caps: SiteCapabilities) -> str | None:
    """Why a load of a name the site lists only as an Lmod extension (`numpy/1.26.4 (E)`)
    fails there: no module has that name; the module that provides it is loaded instead."""
    listed = [SoftwareModule.parse(e, at_version=False) for e in caps.extensions or []]
    found = find_module(need, listed)
    if found is None:
        return None
    return (f"software '{need.full}' is an extension at this site ({found.full} (E)), which "
            "another module provides: `module load` finds no module of that name; load the "
            f"module that provides it (`module spider {found.full}` there names it)")


def _hidden_by_site(need: SoftwareNeed, caps: SiteCapabilities) -> str | None:
    """Why a load naming a module the site hid (`hide_version`, `module-hide`) by less than
    its whole name fails there: only `module load` of that whole name finds it."""
    hid = [m.model_copy(update={"hidden": False}) for m in caps.software or [] if m.hidden]
    found = find_module(need, hid)
    if found is None:
        return None
    return (f"software '{need.full}' not installed as named ({found.full} is hidden at this "
            f"site: only `module load {found.full}`, its whole name, loads it)")


def _loaded_runtimes(needs: Needs, caps: SiteCapabilities) -> set[str]:
    """The container runtimes the job's own `module load apptainer` (singularity, podman...)
    brings where the site has that module: a site may keep its runtime off the login's
    PATH and offer it only as a module."""
    out: set[str] = set()
    for s in needs.software:
        pkg = _want(s)[0]
        if pkg in _RUNTIME_PACKAGES and not s.unchecked and caps.software is not None \
                and find_module(s, caps.software) is not None:
            out |= _RUNTIME_PACKAGES[pkg]
    return out


def needs_reasons(needs: Needs, caps: SiteCapabilities) -> list[str]:
    """Why the site lacks what the job needs (software, container runtime, MPI, the GPU
    vendor the body uses), one reason each; a kind the site's capabilities leave unknown is
    not checked, nor is software the body reads but cannot be sure of (`unchecked`), unless
    it is loaded in a branch on $SLURM_CLUSTER_NAME that names this site."""
    out = []
    if caps.software is not None:
        told: set[str] = set()
        for i, s in enumerate(needs.software):
            if s.full in told:
                continue
            if (s.unchecked or "").startswith(HIDDEN_MODULE):
                if (why := _hidden_reason(s, caps)) is not None:
                    told.add(s.full)
                    out.append(why)
                continue
            if s.unchecked and not runs_on(s.clusters, caps) and not \
                    in_site_trees(s, caps):
                continue
            found = find_module(s, caps.software)
            if found is not None:
                why = _hierarchy_reason(s, found, needs.software[:i], caps) or \
                    _swapped_away(s, found, needs.software[:i], needs.software[i + 1:], caps)
                if why is not None:
                    told.add(s.full)
                    out.append(why)
                continue
            if any(find_module(a, caps.software) for a in s.alternatives):
                continue
            told.add(s.full)  # a module loaded twice is missing once
            if (why := _extension_reason(s, caps) or _hidden_by_site(s, caps)) is not None:
                out.append(why)
                continue
            pkg = _want(s)[0]
            if pkg in _RUNTIME_PACKAGES and _RUNTIME_PACKAGES[pkg] & {
                    r.lower() for r in caps.container_runtimes or []}:
                continue  # `module load singularity` where it is on the PATH already
            same = [m.full for m in caps.software if _have(m)[0] == pkg]
            has = f"only {_listed(same)}" if same else \
                f"site has: {_listed(caps.module_names())}"
            if not same and caps.mpi and is_mpi(s.full):
                has += f"; its MPI: {', '.join(caps.mpi)} (a program built with one MPI " \
                    "does not run with another)"
            nor = f", nor its fallback {' or '.join(s.alternatives)}" if s.alternatives else \
                ", nor any other conda distribution" if s.role == "conda" else \
                ", nor another distribution with mamba" if s.role == "mamba" else ""
            joined = "; names joined by ',' are one name to module load: separate them " \
                "with blanks" if re.search(r",[^0-9,]", s.full) else \
                f"; versions joined by ',' after '/' are one name to module load: name one " \
                f"version (a list is read only after '@', {s.full.replace('/', '@', 1)}, by " \
                "Environment Modules with advanced_version_spec)" \
                if _slash_version_list(s.full) else ""
            out.append(f"software '{s.full}' not installed{nor} ({has}{joined})")
    c = needs.container
    if c is not None and not c.unchecked and caps.container_runtimes is not None:
        have = {r.lower() for r in caps.container_runtimes} | _loaded_runtimes(needs, caps)
        if {"apptainer", "singularity"} & have:
            have |= {"apptainer", "singularity"}
        if "enroot" in have:
            have.add("pyxis")  # srun --container-image runs through enroot
        if not have:
            offered = [m.full for m in caps.software or [] if _have(m)[0] in _RUNTIME_PACKAGES]
            out.append(f"container {c.image} needs a container runtime, site has none" + (
                f" on its PATH (its modules {_listed(offered)} have one: module load it "
                "first)" if offered else ""))
        elif c.runtime and c.runtime not in have:
            how = " (pyxis: srun --container-image, which needs enroot)" \
                if c.runtime == "pyxis" else ""
            out.append(f"container runtime '{c.runtime}' not available{how} "
                       f"(site has: {', '.join(sorted(caps.container_runtimes))})")
    if needs.mpi in ("mpirun", "mpiexec") and caps.mpi is not None and not caps.mpi \
            and not needs.mpi_own and not any(is_mpi(s.full) for s in needs.software):
        out.append(f"the script runs {needs.mpi} but the site has no MPI stack")
    if (why := own_mpi_reason(needs, caps)) is not None:
        out.append(why)
    out += env_reasons(needs, caps)
    if needs.pmi and caps.pmi and not pmi_offered(needs.pmi, caps.pmi):
        out.append(f"the script runs srun --mpi={needs.pmi} but the site's Slurm has no such "
                   f"MPI plugin (srun --mpi=list: {', '.join(caps.pmi)})")
    vendor = needs.gpu_vendor
    if vendor and needs.gpus and not needs.gpu_type and caps.gpu_models:
        theirs = {gpu_vendor(m) for m in caps.gpu_models}
        if None not in theirs and vendor not in theirs:
            out.append(f"the script uses {vendor} GPUs but the site's are "
                       f"{', '.join(sorted(caps.gpu_models))}")
    return out
