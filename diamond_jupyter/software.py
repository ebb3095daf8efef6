"""Software names across sites: one package, many spellings (pure).

Sites name the same package differently: `GROMACS/2023.3-foss-2023a` (EasyBuild),
`gromacs/2023` (hand-made trees), `CUDA/12.2.0` vs `cuda/12.2`, `Python/3.11` vs `python3`.
A name is normalised (case, separators, known aliases; a trailing major version such as
`python3` becomes a version); versions compare by their leading numeric parts, at the
precision both give (`2023` ~ `2023.3`, `12.2` ~ `12.2.0`, `3` ~ `3.11`); a toolchain
suffix (`-foss-2023a`, `-GCCcore-12.3.0`) does not count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .capabilities import SiteCapabilities, SoftwareModule
from .needs import Needs, SoftwareNeed, _commands, _strip_leaders, module_loads

# normalised spelling -> the package (names compared after lower-casing and dropping - _ .)
_ALIASES = {
    "torch": "pytorch", "cudatoolkit": "cuda", "nvhpc": "nvhpc", "ompi": "openmpi",
    "impi": "intelmpi", "intelmpi": "intelmpi", "gnu": "gcc", "gcccore": "gcc",
    "python": "python", "py": "python", "anaconda": "anaconda", "tensorflowgpu": "tensorflow",
}
# names whose trailing digits are a major version (python3 = python, version 3)
_VERSIONED_NAMES = {"python", "perl", "java", "openjdk", "qt", "gcc", "cuda", "julia"}
_NUM = re.compile(r"v?(\d+(?:\.\d+)*)")


def norm_name(name: str) -> tuple[str, str | None]:
    """(the package, a version implied by the name): 'Python3' -> ('python', '3')."""
    key = re.sub(r"[-_.\s]+", "", name.strip().lower())
    m = re.fullmatch(r"([a-z]+?)(\d+)", key)
    if m and m.group(1) in _VERSIONED_NAMES:
        return _ALIASES.get(m.group(1), m.group(1)), m.group(2)
    return _ALIASES.get(key, key), None


def version_key(version: str | None) -> tuple[int, ...]:
    """'2023.3-foss-2023a' -> (2023, 3); no leading number -> ()."""
    m = _NUM.match((version or "").strip())
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


def versions_match(want: str | None, have: str | None) -> bool:
    """Compatible at the precision both give; a side without a version matches any; two
    versions without numbers must be equal (case-insensitive)."""
    if not want or not have:
        return True
    a, b = version_key(want), version_key(have)
    if not a or not b:
        return want.strip().lower() == have.strip().lower()
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _want(need: SoftwareNeed | str) -> tuple[str, str | None, str]:
    if isinstance(need, str):
        name, _, version = need.replace("@", "/", 1).partition("/")
        written = need
    else:
        name, version, written = need.name, need.version, need.full
    pkg, implied = norm_name(name)
    if implied and version and not version.startswith(implied):
        return pkg, f"{implied}.{version}", written  # python3/11 is odd; keep both
    return pkg, version or implied, written


def candidates(need: SoftwareNeed | str, modules: Iterable[SoftwareModule]
               ) -> list[SoftwareModule]:
    """The site's modules that satisfy `need`, best first: the same spelling, then the
    site's default, then the highest version."""
    pkg, version, written = _want(need)
    same = [(m, m.version or norm_name(m.name)[1]) for m in modules
            if norm_name(m.name)[0] == pkg]
    if any(have for _, have in same):  # versions known: a bare name (a sites file's
        same = [(m, have) for m, have in same if have]  # "gcc") says nothing more
    out = [m for m, have in same if versions_match(version, have)]
    out.sort(key=lambda m: (m.full != written, m.full.lower() != written.lower(),
                            not m.default, tuple(-x for x in version_key(m.version))))
    return out


def find_module(need: SoftwareNeed | str, modules: Iterable[SoftwareModule]
                ) -> SoftwareModule | None:
    got = candidates(need, modules)
    return got[0] if got else None


def rewrite_modules(body: str, caps: SiteCapabilities) -> tuple[str, list[str]]:
    """The body with each `module load`/`ml` argument spelled as the site spells it, and
    one line per rewrite ("rewrote: ..."). Arguments the site lacks, or already spells the
    same way, stay as written; nothing changes when the site's software is not known."""
    if caps.software is None:
        return body, []
    lines = body.split("\n")
    notes: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        new = line
        for cmd in _commands(line):
            for arg in module_loads(_strip_leaders(cmd)) or []:
                if "$" in arg or "`" in arg:
                    continue
                found = find_module(arg, caps.software)
                if found is None or found.full == arg or found.name == arg:
                    continue  # missing, or spelled as the site does (its default version)
                replaced = _replace_word(new, arg, found.full)
                if replaced != new:
                    notes.append(f"rewrote: body line {i + 1}: module {arg} -> {found.full} "
                                 f"(as {caps.site} names it)")
                    new = replaced
        lines[i] = new
    return "\n".join(lines), notes


def _replace_word(line: str, old: str, new: str) -> str:
    """`old` as a whole shell word (unquoted or quoted) replaced by `new` once."""
    pat = re.compile(r"(?<![\w./@+-])(['\"]?)" + re.escape(old) + r"\1(?![\w./@+-])")
    return pat.sub(lambda m: new if re.fullmatch(r"[\w./@+-]+", new)
                   else "'" + new.replace("'", "'\\''") + "'", line, count=1)


_MPI_PACKAGES = {"openmpi", "mpich", "intelmpi", "mvapich", "mvapich2", "hpcx", "craympich",
                 "spectrummpi", "mpi"}


def is_mpi(name: str) -> bool:
    return norm_name(name.partition("/")[0])[0] in _MPI_PACKAGES


def _listed(names: list[str], limit: int = 8) -> str:
    if not names:
        return "none"
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def needs_reasons(needs: Needs, caps: SiteCapabilities) -> list[str]:
    """Why the site lacks what the job needs (software, container runtime, MPI), one
    reason each; a kind the site's capabilities leave unknown is not checked."""
    out = []
    if caps.software is not None:
        for s in needs.software:
            if find_module(s, caps.software) is None:
                pkg = norm_name(s.name)[0]
                same = [m.full for m in caps.software if norm_name(m.name)[0] == pkg]
                has = f"only {_listed(same)}" if same else \
                    f"site has: {_listed(caps.module_names())}"
                out.append(f"software '{s.full}' not installed ({has})")
    c = needs.container
    if c is not None and caps.container_runtimes is not None:
        have = {r.lower() for r in caps.container_runtimes}
        if {"apptainer", "singularity"} & have:
            have |= {"apptainer", "singularity"}
        if not have:
            out.append(f"container {c.image} needs a container runtime, site has none")
        elif c.runtime and c.runtime not in have:
            out.append(f"container runtime '{c.runtime}' not available "
                       f"(site has: {', '.join(sorted(caps.container_runtimes))})")
    if needs.mpi in ("mpirun", "mpiexec") and caps.mpi is not None and not caps.mpi \
            and not any(is_mpi(s.name) for s in needs.software):
        out.append(f"the script runs {needs.mpi} but the site has no MPI stack")
    return out
