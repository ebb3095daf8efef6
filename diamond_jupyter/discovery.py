"""Live site discovery, the pure part: the one shell command that asks a site what it has,
and the parsers of what comes back (no I/O here; `discovery_site.py` runs it).

One command per site per discovery asks, in sections:
- the login's CPU architecture (`uname -m`);
- per cluster behind the login, the scheduler's nodes and partitions (features, `arch=`
  labels, GPU models from GRES), through the site's dialect;
- the module system (Lmod or Environment Modules): `module -t avail`, and Lmod's
  `module -t spider`, which also lists modules a hierarchy hides until a compiler loads,
  and `module -t --default avail`, the version each bare name loads (a default a
  `.modulerc.lua` sets is marked nowhere else);
- the container runtimes on the login's PATH and the MPI launchers and PMI plugins.

Then it is summarised upward: node type -> partition -> cluster -> site (center).
Placement decides at the node-type level.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from .capabilities import ONEAPI_ROOTS, NodeType, SiteCapabilities, SoftwareModule
from .digits import ascii_digits
from .model import MODULE_NAME, Node, Partition
from .needs import node_arch
from .sections import batch_sections, section_end
from .software import FLOATING_VERSIONS, identity

# each section's output ends on a line of this + a random part chosen per discovery
# (`sections.fresh_marker`) + "name:status"
MARK = "@@dmd-discover@@"
# the most lines of a module listing read (`module -t avail`): a longer one is cut, and the
# site's software is then not known (a module past the cut would be refused wrongly)
MODULE_LIST_LINES = 50000
RUNTIMES = ("apptainer", "singularity", "podman", "docker", "enroot", "ch-run", "shifter",
            "podman-hpc", "sarus")
MPI_COMMANDS = ("mpirun", "mpiexec", "ompi_info", "mpichversion", "impi_info")
# module names (lower case, before "/") that are MPI stacks, and the stack each one is
MPI_MODULES = {
    "openmpi": "openmpi", "open-mpi": "openmpi", "ompi": "openmpi", "mpich": "mpich",
    "mvapich2": "mvapich2", "mvapich": "mvapich2", "impi": "intel-mpi",
    "intel-mpi": "intel-mpi", "intelmpi": "intel-mpi", "cray-mpich": "cray-mpich",
    "hpcx": "openmpi", "hpcx-mpi": "openmpi", "spectrum-mpi": "spectrum-mpi",
}
# the same, by the package name software.identity gives
_MPI_PACKAGES = {"openmpi": "openmpi", "mpich": "mpich", "mvapich2": "mvapich2",
                 "mvapich": "mvapich2", "intelmpi": "intel-mpi", "craympich": "cray-mpich",
                 "hpcx": "openmpi", "hpcxmpi": "openmpi", "spectrummpi": "spectrum-mpi"}
GPU_MODELS = ("a100", "h100", "h200", "v100", "p100", "a40", "a30", "a10", "l40", "l40s",
              "t4", "mi100", "mi210", "mi250", "mi250x", "mi300", "mi300a", "mi300x",
              "gh200", "rtx6000", "rtx8000")

# Make `module` exist in a non-interactive shell: BASH_ENV (bash skips it when sshd starts
# it), then Lmod's and Environment Modules' usual init files; the first that defines it
# wins (a login that has it already keeps it). Lmod's own init file comes before the
# profile scripts, which would also change MODULEPATH.
MODULE_INIT = """\
__dmd_modinit() {
  type module >/dev/null 2>&1 && return 0
  for f in "${BASH_ENV:-}" "${LMOD_PKG:-/usr/share/lmod/lmod}/init/bash" \\
           /etc/profile.d/lmod.sh /etc/profile.d/modules.sh /usr/share/modules/init/bash \\
           /usr/share/Modules/init/bash /opt/cray/pe/modules/default/init/bash; do
    [ -r "$f" ] && . "$f" >/dev/null 2>&1 && type module >/dev/null 2>&1 && return 0
  done
  return 1
}
"""


# Lmod's hierarchy: each module `module -t spider` lists that `module -t avail` does not
# (it shows only once a compiler or an MPI is loaded) is asked what it needs loaded first
# (`module spider NAME/VERSION`), at most SPIDER_ASKED of them and for SPIDER_BUDGET_S
# seconds at most (the whole discovery has DISCOVERY_TIMEOUT_S), each answer after a line
# "@@requires NAME/VERSION"; the modules left unasked load as if they needed nothing
SPIDER_ASKED = 100
SPIDER_BUDGET_S = 20
SPIDER_REQUIRES = (
    '    __dmd_seen=$(printf "%s\\n" "$__dmd_av" | sed "s/[[:space:]]*([^()]*)[[:space:]]*$//")\n'
    '    __dmd_t0=$SECONDS\n'
    '    printf "%s\\n" "$__dmd_sp" | grep -E "^[^[:space:]/:()]+(/[^[:space:]/:()]+)+$" '
    f'| grep -vxF -f <(printf "%s\\n" "$__dmd_seen") | head -n {SPIDER_ASKED} |\n'
    '    while IFS= read -r __dmd_m; do '
    f'[ $((SECONDS - __dmd_t0)) -ge {SPIDER_BUDGET_S} ] && break; '
    'echo "@@requires $__dmd_m"; module spider "$__dmd_m" 2>&1 | head -n 60; done\n'
)


# Spack's installed packages and environments, and the named conda environments, where
# the tool is on the login's PATH: each listing at most ENV_LIST_LINES lines, all of them
# within ENV_LIST_BUDGET_S seconds (`timeout` with what is left; a listing with no time
# left is not made), each followed by the tool's exit status ("@@rc N"); a listing cut
# short (no status line, or not 0) is not known, so nothing is checked against it
ENV_LIST_LINES = 20000
ENV_LIST_BUDGET_S = 15
CONDA_TOOLS = ("conda", "mamba", "micromamba")


def _env_listing(tag: str, command: str) -> str:
    return (f'__dmd_left=$(({ENV_LIST_BUDGET_S} - (SECONDS - __dmd_e0))); '
            f'if [ "$__dmd_left" -gt 0 ]; then echo "@@{tag}"; '
            f'{{ timeout "$__dmd_left" {command} 2>/dev/null; echo "@@rc $?"; }} '
            f'| head -n {ENV_LIST_LINES + 1}; fi')


ENVS_SECTION = (
    "__dmd_e0=$SECONDS\n"
    "if command -v spack >/dev/null 2>&1; then\n  "
    # which Spack: $SPACK_ROOT (set by its setup-env.sh, where `spack` is a function), else
    # the root of the `spack` program on the PATH
    '__dmd_sr=${SPACK_ROOT:-$(command -v spack)}; __dmd_sr=${__dmd_sr%/bin/spack}; '
    'case $__dmd_sr in /*) ;; *) __dmd_sr=;; esac\n  '
    + _env_listing("spack $__dmd_sr", "spack find --format '{name}@{version}'")
    + "\n  "
    + _env_listing("spack-envs", "spack env list") + "\nfi\n"
    + "for c in " + " ".join(CONDA_TOOLS) + '; do command -v "$c" >/dev/null 2>&1 || continue'
    + "\n  " + _env_listing("conda $c", '"$c" env list') + "\ndone; true")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PartitionSummary(_Model):
    name: str
    default: bool = False
    max_time_s: int | None = None
    nodes: int = 0
    node_types: list[str] = Field(default_factory=list)


class ClusterSummary(_Model):
    """One scheduler behind the site's login, summarised from its node types."""

    name: str
    nodes: int = 0
    architectures: list[str] = Field(default_factory=list)
    gpu_models: list[str] = Field(default_factory=list)
    partitions: list[PartitionSummary] = Field(default_factory=list)
    node_types: list[str] = Field(default_factory=list)
    error: str | None = None
    cluster_name: str | None = None  # the scheduler's own name for it (Slurm's ClusterName)


class SiteDescription(_Model):
    """What `diamond describe SITE` shows: the capabilities placement matches against
    (discovery merged with the sites file) and the center -> cluster -> partition ->
    node type hierarchy they were summarised from."""

    site: str
    capabilities: SiteCapabilities
    clusters: list[ClusterSummary] = Field(default_factory=list)
    discovered_at: datetime | None = None
    age_s: float | None = None  # how old the cached discovery is
    ttl_s: float | None = None
    module_system_version: str | None = None
    pmi: list[str] = Field(default_factory=list)  # MPI launch plugins (`srun --mpi=list`)
    scheduler_version: str | None = None  # the server's own (PBS `pbs_version`)
    # the longest job name the scheduler takes (None: no limit known) and where that
    # comes from: "configured" (the sites file's max_job_name) or the version discovered
    max_job_name: int | None = None
    max_job_name_source: str | None = None


# ---------------------------------------------------------------- the command


def discovery_script(scheduler: dict[str, dict[str, list[str]]],
                     cluster_env: dict[str, dict[str, str]] | None = None,
                     marker: str = MARK) -> str:
    """The bash text of one discovery. `scheduler`: per cluster name, the dialect's
    capability commands (name -> argv); `cluster_env`: per cluster, variables that point
    the scheduler's clients at it (e.g. SLURM_CONF). Every value is shell-quoted. A run
    passes a fresh `marker` (`sections.fresh_marker(MARK)`) and splits with the same."""
    cluster_env = cluster_env or {}
    # whatever the login prints first (a banner, the preamble's output) is a section of its
    # own, kept out of the architecture's
    out = [MODULE_INIT, section_end(marker, "login")]

    def section(name: str, body: str) -> None:
        out.append(f"{body}\n{section_end(marker, name)}")

    section("arch", "uname -m")
    for cluster, argvs in scheduler.items():
        env = "".join(f"{k}={shlex.quote(v)} " for k, v in cluster_env.get(cluster, {}).items()
                      if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k))
        prefix = f"env {env}" if env else ""
        for key, argv in argvs.items():
            section(f"sched:{cluster}:{key}",
                    f"{prefix}{shlex.join(argv)} 2>&1")
    section("modules", 'if __dmd_modinit; then\n'
            '  if [ -n "${LMOD_VERSION:-}" ]; then echo "system lmod $LMOD_VERSION"\n'
            '  else v=$(module --version 2>&1 | sed -n "s/^Modules Release \\([^ ]*\\).*/\\1/p"'
            ' | head -n 1); echo "system environment-modules $v"; fi\n'
            # hidden modules (a .modulerc's `hide_version`/`hide-version`, Environment
            # Modules' `module-hide`, a name or version starting with '.') load when named,
            # so they are listed too: Lmod's `--show_hidden`, Environment Modules' `--all`
            # (4.6 and later; older ones list visible modules only). "@@hidden" says the
            # listing holds them; a listing longer than MODULE_LIST_LINES is cut ("@@cut")
            '  __dmd_h=1; if [ -n "${LMOD_VERSION:-}" ]; then\n'
            '    __dmd_av=$(module --show_hidden -t avail 2>&1) || __dmd_h=\n'
            # its terse listing does not mark the modules `hide_version` hid (which load
            # by their whole name only): those the plain listing leaves out are marked <H>
            '    if [ -n "$__dmd_h" ] && __dmd_vis=$(module -t avail 2>&1) && [ -n "$__dmd_vis" ]'
            '; then __dmd_av=$(printf "%s\\n" "$__dmd_av" | awk "NR==FNR { shown[\\$0] = 1; '
            'next } !(\\$0 in shown) && \\$0 !~ /[:\\/]\\$/ { \\$0 = \\$0 \\" <H>\\" } '
            '{ print }" <(printf "%s\\n" "$__dmd_vis") -); fi\n'
            '  else case "$v" in 4.[6-9]*|4.[1-9][0-9]*|[5-9].*|[1-9][0-9]*.*)\n'
            '    __dmd_av=$(module -t avail --all 2>&1) || __dmd_h= ;;\n'
            '    *) __dmd_av=$(module -t avail 2>&1); __dmd_h= ;; esac; fi\n'
            f'  printf "%s\\n" "$__dmd_av" | head -n {MODULE_LIST_LINES}\n'
            f'  if [ "$(printf "%s\\n" "$__dmd_av" | wc -l)" -gt {MODULE_LIST_LINES} ]; then '
            'echo "@@cut"\n'
            '  elif [ -n "$__dmd_h" ]; then echo "@@hidden"; fi\n'
            # Lmod's terse listing leaves out the default a .modulerc sets
            # (`module_version("cuda/11.8.0", "default")`): `--default` names the version
            # `module load NAME` takes for each name, marked here as Lmod marks it
            '  if [ -n "${LMOD_VERSION:-}" ]; then echo "@@defaults"\n'
            '    module -t --default avail 2>&1 | sed -e "/^$/d" -e "/[:/]$/d" -e "/(@/d" '
            f'-e "s/$/(D)/" | head -n {MODULE_LIST_LINES}\n'
            # nor the modules the site made sticky (`add_property("lmod", "sticky")`, which
            # a plain `module purge` keeps): only the long listing marks them, `(S)`
            '    echo "@@sticky"\n'
            '    module avail 2>&1 | grep -o "[^ ]* ([A-Za-z,]*S[A-Za-z,]*)" '
            f'| head -n {MODULE_LIST_LINES}\n'
            '    echo "@@spider"\n'
            # a failed spider (its cache not built): the hierarchy's modules are not known
            '    __dmd_sp=$(module -t spider 2>&1) || echo "@@spider-failed"\n'
            '    printf "%s\\n" "$__dmd_sp"\n'
            + SPIDER_REQUIRES +
            '  fi\n'
            'else echo "system none"; fi')
    section("envs", ENVS_SECTION)
    section("runtimes", "for r in " + " ".join(RUNTIMES) + '; do p=$(command -v "$r") && '
            'echo "$r $p"; done; true')
    section("mpi", "for r in " + " ".join(MPI_COMMANDS) + '; do p=$(command -v "$r") && '
            'echo "cmd $r $p"; done; command -v srun >/dev/null 2>&1 && srun --mpi=list 2>&1 '
            '| sed "s/^/pmi /"\n'
            'for r in "${ONEAPI_ROOT:-}" '
            + " ".join(r.replace("~", '"$HOME"') for r in ONEAPI_ROOTS) +
            '; do [ -n "$r" ] && [ -r "$r/setvars.sh" ] && [ -d "$r/mpi" ] && '
            'echo "oneapi $r"; done; echo "home $HOME"; true')
    return "\n".join(out) + "\n"


def split_sections(stdout: str, marker: str = MARK) -> tuple[dict[str, str], dict[str, int]]:
    """The discovery command's output by section, and each section's exit status (-1: not
    a number)."""
    parts: dict[str, str] = {}
    codes: dict[str, int] = {}
    for name, text, code in batch_sections(stdout, marker):
        parts[name] = text
        codes[name] = int(code) if ascii_digits(code) else -1
    return parts, codes


# ---------------------------------------------------------------- parsers


# marks after a module: Lmod's (D), (L,D), <aL>, (@); Environment Modules' symbolic
# versions (default), (default:latest), (13:default), (@) for an alias
# (Environment Modules 5 joins its tags with ':', `<L:sticky>`, `<aL:super-sticky>`)
_MODULE_MARKS = re.compile(r"\s*(\([^()/]*\)|<[A-Za-z][A-Za-z0-9,:-]*>)\s*$")
# Environment Modules 5's variants after a module when its listing shows them (the site's
# MODULES_AVAIL_TERSE_OUTPUT holds `variant`), `openmpi/5.0.3{fabric=ofi,ucx}`: not part of
# the name `module load` takes
_VARIANTS = re.compile(r"\{[A-Za-z0-9_.+=,:%~-]*\}(?=\s*(?:[(<]|$))")
# Lmod's terse aliases and symbolic versions, `py3(@python/3.11.6)`, `python/3.11(@python/
# 3.11.6)`, and its long form `py3 -> python/3.11.6`: a name `module load` takes
_ALIAS = re.compile(r"([^\s()]+)(?:\(@([^\s()]+)\)|\s+->\s+([^\s()]+))")
# Environment Modules 5 in colour shows a default version underlined (its `de=4`), not
# "(default)": `ESC[4mgcc/12.3.0ESC[0m`
_UNDERLINED = re.compile(r"\x1b\[(?:[0-9;]*;)?4(?:;[0-9;]*)?m")
# what colours and pagers add to a listing: colour (SGR, `ESC[1;34m`: MODULES_COLOR=always,
# LMOD_COLORIZE=yes), a pager's erase to the line's end (`ESC[K`) and its overstrike
# (`x BACKSPACE x`). Other sequences (a title, the clipboard, clearing the screen) are no
# listing's: a name holding one stays left out
_TERMINAL = re.compile(r"\x1b\[[0-9;]*[mK]|[^\x08]\x08")




def module_listing_marks(text: str) -> tuple[bool, bool, bool]:
    """The `modules` section's marks: (its listing holds hidden modules, it was cut, Lmod's
    `module -t spider` failed)."""
    lines = {ln.strip() for ln in text.partition("\n@@requires ")[0].split("\n")}
    return "@@hidden" in lines, "@@cut" in lines, "@@spider-failed" in lines


# Lines of a module listing read (the largest centers list some tens of thousands of
# modules; a login's `module` answering 10^6 lines took 12 s to read, each kept and matched)
MAX_MODULE_LINES = 200_000


def parse_module_list(text: str, refused: list[str] | None = None,
                      hidden: list[str] | None = None, extensions: list[str] | None = None,
                      ) -> tuple[str | None, str | None, list[SoftwareModule]]:
    """The `modules` section: ("lmod" | "environment-modules" | None, its version, the
    modules). Reads terse listings of Lmod (`dir:` headers, `Name/` directory lines,
    `Name/version` lines, `(D)`/`(default)` marks, aliases `py3(@python/3.11.6)`) and of
    Environment Modules 3-5 (in colour too: a default underlined), and the sticky modules
    (`(S)`, `<sticky>`) of Lmod's long listing. Names
    that are not `MODULE_NAME`s are left out (added to `refused`, when given); so are
    hidden names (a part starting with '.', `python/.3.14.0-beta`: loaded only by that
    name), added to `hidden` when given; so are Lmod's extensions (marked `(E)`, a package
    another module provides, `numpy/1.26.4 (E)`: no module to load), added to `extensions`
    when given; past MAX_MODULE_LINES lines the rest of the listing is not read (said in
    `refused`)."""
    system = version = None
    found: dict[str, SoftwareModule] = {}
    left_out: set[str] = set()  # the names added to `refused`
    text, _, asked = text.partition("\n@@requires ")
    requires = parse_spider_requires("@@requires " + asked) if asked else {}
    in_key = False
    for n, raw in enumerate(text.split("\n")):
        if n == MAX_MODULE_LINES:
            if refused is not None:
                refused.append(f"(the listing past its first {MAX_MODULE_LINES} lines: not "
                               "read)")
            break
        underlined = bool(_UNDERLINED.match(raw.lstrip()))
        line = _TERMINAL.sub("", raw).strip() if "\x1b" in raw or "\x08" in raw else raw.strip()
        if line == "Key:" or in_key:  # Environment Modules' legend (its `key` column)
            in_key = not (line.startswith(("/", "@@")) and line != "Key:")
            if in_key:
                continue
        if system == "environment-modules":
            line = _VARIANTS.sub("", line)
        if alias := _ALIAS.fullmatch(line):
            # a name that loads another: a name of the site's (`module load py3` passes),
            # but for a symbolic version naming no release (`python/stable`), which any
            # version a job names matches already
            name, last = alias.group(1), alias.group(1).rpartition("/")[2]
            if not MODULE_NAME.fullmatch(name):
                if refused is not None and name not in left_out:
                    left_out.add(name)
                    refused.append(name)
            elif last.lower() not in FLOATING_VERSIONS and not last.startswith("."):
                found.setdefault(name, SoftwareModule.parse(name, at_version=False))
            continue
        if line.startswith("system "):
            words = line.split()
            if len(words) >= 2 and words[1] != "none" and MODULE_NAME.fullmatch(words[1]):
                system = words[1]
                version = words[2] if len(words) > 2 and MODULE_NAME.fullmatch(words[2]) \
                    else None
            continue
        if (not line or line.startswith("@@") or line.endswith(":") or line.endswith("/")
                or line.startswith(("-", "Lmod", "No module", "ModuleCmd", "module"))
                or " " in re.sub(r"<[^<>]*>", "", line.split("(")[0]).strip()):
            continue
        tags = {tag.strip() for mark in re.findall(r"\(([^()/]*)\)", line)
                for tag in re.split(r"[,:]", mark)}
        default = bool(tags & {"D", "default"}) or underlined
        # Lmod's `(S)`; Environment Modules' `<sticky>`, `<L:super-sticky>`
        angled = {tag.strip() for mark in re.findall(r"<([^<>]*)>", line)
                  for tag in re.split(r"[,:]", mark)}
        sticky = "S" in tags or bool(angled & {"sticky", "super-sticky"})
        # hidden (Lmod's `(H)`, Environment Modules' `<H>`, `<hidden>`; the discovery marks
        # what Lmod's `--show_hidden` adds to its plain listing `<H>`): loaded by name only
        hidden_mark = bool((tags | angled) & {"H", "hidden"})
        if "E" in tags:  # an extension: `module load` of its name finds no module
            name = _MODULE_MARKS.sub("", _MODULE_MARKS.sub("", line)).strip()
            if extensions is not None and MODULE_NAME.fullmatch(name) and \
                    name not in extensions:
                extensions.append(name)
            continue
        line = _MODULE_MARKS.sub("", line)
        while _MODULE_MARKS.search(line):
            line = _MODULE_MARKS.sub("", line)
        if line.endswith("/") and system != "lmod":
            # Environment Modules' symbol of a directory (its `dirwsym` column,
            # `gcc/(testing)`): `module load gcc/testing` loads the version it names
            for symbol in sorted(tags - _MODULE_TAGS):
                also = line + symbol
                if symbol.lower() not in FLOATING_VERSIONS and MODULE_NAME.fullmatch(also):
                    found.setdefault(also, SoftwareModule.parse(also, at_version=False))
            continue
        name = line.split("/")[-1] if "/" in line else line
        if not line or name.startswith(".") or line.startswith("."):
            if hidden is not None and MODULE_NAME.fullmatch(line) and line not in hidden:
                hidden.append(line)
            continue  # hidden modules: not a version `module load NAME` picks
        if not MODULE_NAME.fullmatch(line):
            if refused is not None and line not in left_out:  # avail's and spider's once
                left_out.add(line)
                refused.append(line)
            continue
        m = SoftwareModule.parse(line, default=default, at_version=False)
        m.sticky, m.hidden = sticky, hidden_mark
        if system != "lmod" and "/" in line:
            # Environment Modules' symbolic versions, `gcc/13.2.0(testing)`: `module load
            # gcc/testing` loads it (a floating word such as `stable` matches any version)
            for symbol in sorted(tags - _MODULE_TAGS):
                base, _, release = line.rpartition("/")
                also = f"{base}/{symbol}"
                if symbol.lower() not in FLOATING_VERSIONS and MODULE_NAME.fullmatch(also) \
                        and not release.startswith(symbol):  # `13` of 13.2.0 matches
                    found.setdefault(also, SoftwareModule.parse(also, at_version=False))
        prev = found.get(m.full)
        found[m.full] = m if prev is None else prev.model_copy(
            update={"default": prev.default or m.default, "sticky": prev.sticky or sticky,
                    "hidden": prev.hidden and hidden_mark})  # visible in any tree: visible
    for full in spider_extensions("@@requires " + asked) if asked else ():
        # `module -t spider` lists an extension as a module (`numpy/1.25.1`); only its
        # answer says "This extension is provided by the following modules"
        if found.pop(full, None) is not None and extensions is not None and \
                full not in extensions:
            extensions.append(full)
    for full, lines in requires.items():
        if full in found and lines:
            found[full] = found[full].model_copy(update={"requires": lines})
    return system, version, sorted(found.values(), key=lambda m: (m.name.lower(), m.full))


# the tags Environment Modules and Lmod show in parentheses that are no symbolic version
_MODULE_TAGS = {"", "D", "L", "S", "E", "H", "@", "default", "sticky", "super-sticky", "forbidden",
                "nearly-forbidden", "hidden", "hidden-loaded", "loaded", "auto-loaded"}


_MODULE_WORD = re.compile(r"[\w.+-]+(?:/[\w.+-]+)*")


def parse_module_trees(text: str) -> list[str]:
    """The module trees a terse listing names (its `/path:` headers, Lmod's and Environment
    Modules' alike), each once, without a trailing slash."""
    trees: list[str] = []
    for raw in text.partition("\n@@spider")[0].split("\n"):
        line = _TERMINAL.sub("", raw).strip()
        if line.startswith("/") and line.endswith(":") and " " not in line:
            tree = line[:-1].rstrip("/") or "/"
            if tree not in trees:
                trees.append(tree)
    return trees


def spider_extensions(text: str) -> list[str]:
    """The names whose `module spider NAME/VERSION` answer (each after a line "@@requires
    NAME/VERSION") says it is an extension another module provides, not a module."""
    out: list[str] = []
    name = None
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("@@requires "):
            name = line[len("@@requires "):].strip()
        elif name is not None and line.startswith("This extension is provided by"):
            out.append(name)
            name = None
    return out


def parse_spider_requires(text: str) -> dict[str, list[list[str]]]:
    """Lmod's answers to `module spider NAME/VERSION`, each after a line "@@requires
    NAME/VERSION": per module, the lines of modules to load before it ("You will need to
    load all module(s) on any one of the lines below before the "X" module is available to
    load.", a blank line, one line per choice, a blank line); [] for one that loads
    directly or whose answer says nothing of the kind."""
    out: dict[str, list[list[str]]] = {}
    name, state = None, "none"
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("@@requires "):
            name, state = line[len("@@requires "):].strip(), "none"
            out[name] = []
        elif name is None or state == "done":
            continue
        elif "will need to load" in line:
            state = "sentence"  # it may wrap over more lines, up to a blank one
        elif state == "sentence" and not line:
            state = "gap"
        elif state in ("gap", "list") and line:
            words = line.split()
            if all(_MODULE_WORD.fullmatch(w) for w in words):
                out[name].append(words)
                state = "list"
            else:
                state = "done"
        elif state == "list":
            state = "done"
    return out


# a module tree a job adds (`module use DIR`) that the site's listing does not name: listed
# alone (MODULEPATH set to it), when a job that needs it is placed, at most TREES_ASKED
# trees a job, TREE_LIST_LINES lines and TREE_LIST_TIMEOUT_S seconds each
TREES_ASKED = 4
TREE_LIST_LINES = 5000
TREE_LIST_TIMEOUT_S = 10.0


def tree_listing_script(tree: str) -> str | None:
    """The bash that lists module tree `tree` alone (`module -t avail` with MODULEPATH set to
    it), its exit status 4 when the directory is not there; None for a path given at run
    time (`$VAR` other than $HOME, a glob): only `/abs`, `~/x` and `$HOME/x` are asked."""
    for home in ("~/", "$HOME/", "${HOME}/"):
        if tree.startswith(home):
            rest = tree[len(home):]
            path = '"$HOME"/' + shlex.quote(rest) if rest else '"$HOME"'
            break
    else:
        path = shlex.quote(tree) if tree.startswith("/") else ""
    if not path or re.search(r"[$`*?\[{]", tree.split("/", 1)[-1] if tree[:1] in "~$" else tree):
        return None
    return (MODULE_INIT + "__dmd_modinit || exit 3\n"
            f"__dmd_t={path}; [ -d \"$__dmd_t\" ] || exit 4\n"
            f'MODULEPATH="$__dmd_t" module -t avail 2>&1 | head -n {TREE_LIST_LINES}\n')


def parse_tree_listing(stdout: str, status: int) -> list[SoftwareModule] | None:
    """The modules of one tree (`tree_listing_script`'s output): [] when the directory is not
    at the site (status 4: the job's loads from it fail there), None when it could not be
    listed (no module system, a failure)."""
    if status == 4:
        return []
    if status != 0:
        return None
    return parse_module_list(stdout)[2] or None  # nothing read: not known (not "empty")


_SPACK_LINE = re.compile(r"[a-z0-9][a-z0-9_.-]*@[A-Za-z0-9_.+=-]+")
_ENV_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def _listings(text: str) -> dict[str, list[str] | None]:
    """The `envs` section's listings by tag ("spack", "spack-envs", "conda conda", ...):
    each listing's lines, or None when it was cut short or its tool failed."""
    out: dict[str, list[str] | None] = {}
    tag: str | None = None
    lines: list[str] = []
    for raw in text.split("\n") + ["@@end"]:
        if raw.startswith("@@rc "):
            if tag is not None:
                out[tag] = lines if raw[5:].strip() == "0" else None
            tag = None
        elif raw.startswith("@@"):
            if tag is not None:  # no status line: cut short at ENV_LIST_LINES
                out[tag] = None
            tag, lines = (raw[2:].strip() or None), []
        elif tag is not None:
            lines.append(raw.rstrip("\r"))
    return out


def parse_spack(text: str) -> tuple[list[str] | None, list[str] | None]:
    """(installed packages as "name@version", named environments) from the `envs` section;
    None for a listing not made (no `spack` on the PATH), cut short or failed. Lines that
    are not a package (`==> 12 installed packages`, `-- linux-rhel8 / gcc@12 --` headers)
    are skipped."""
    got = _listings(text)
    pkgs = next((v for k, v in got.items() if k.split()[0] == "spack"), None)
    envs = got.get("spack-envs")
    packages = None if pkgs is None else sorted({
        ln.strip() for ln in pkgs if _SPACK_LINE.fullmatch(ln.strip())})
    names = None if envs is None else sorted({
        w for ln in envs if not ln.strip().startswith("==>")
        for w in ln.split() if _ENV_NAME.fullmatch(w)})
    return packages, names


def parse_spack_root(text: str) -> str | None:
    """The Spack instance discovery listed: its root (`/opt/spack`, from $SPACK_ROOT or
    /opt/spack/bin/spack), or None when not known."""
    tag = next((k for k in _listings(text) if k.startswith("spack /")), None)
    return tag.split(None, 1)[1].rstrip("/") or "/" if tag else None


def parse_conda_envs(text: str) -> dict[str, list[str]] | None:
    """The named environments each conda tool lists (`conda env list`: "# conda
    environments:" then "NAME [*] PATH" lines, and lines of a path only for environments
    outside its directories; micromamba's table "Name Active Path" alike), keyed "conda"
    (conda and mamba share them) and "micromamba"; None when no tool listed any."""
    out: dict[str, list[str]] = {}
    for tag, lines in _listings(text).items():
        if not tag.startswith("conda ") or lines is None:
            continue
        tool = "micromamba" if tag.split()[1] == "micromamba" else "conda"
        names = out.setdefault(tool, [])
        for ln in lines:
            words = [w for w in ln.split() if w != "*"]
            if len(words) >= 2 and words[-1].startswith("/") and _ENV_NAME.fullmatch(words[0]) \
                    and words[0] not in names:
                names.append(words[0])
    return out or None


def parse_runtimes(text: str) -> list[str]:
    out = []
    for line in text.split("\n"):
        words = line.split()
        if len(words) == 2 and words[0] in RUNTIMES and words[1].startswith("/"):
            out.append("charliecloud" if words[0] == "ch-run" else words[0])
    return sorted(set(out))


def parse_mpi(text: str, modules: Iterable[SoftwareModule]) -> tuple[list[str], list[str]]:
    """(MPI stacks, PMI plugins): stacks from MPI modules and from launchers on the login's
    PATH; PMI plugins from `srun --mpi=list`."""
    stacks: set[str] = set()
    pmi: set[str] = set()
    for m in modules:
        key = m.name.split("/")[-1].lower()
        # the package however the site spells it: mpi/openmpi-x86_64, intel-oneapi-mpi,
        # openmpi-4.1.5-gcc-12.3.0-HASH
        pkg = identity(m.full)[0]
        stack = MPI_MODULES.get(key) or _MPI_PACKAGES.get(pkg)
        if stack:
            stacks.add(stack)
    for line in text.split("\n"):
        words = line.split()
        if len(words) >= 3 and words[0] == "cmd":
            if words[1] == "ompi_info":
                stacks.add("openmpi")
            elif words[1] == "mpichversion":
                stacks.add("mpich")
            elif words[1] == "impi_info":
                stacks.add("intel-mpi")
        elif len(words) == 2 and words[0] == "oneapi" and words[1].startswith("/"):
            stacks.add("intel-mpi")  # a oneAPI root with its MPI component
        elif len(words) == 2 and words[0] == "pmi" and re.fullmatch(r"[a-z0-9_]+", words[1]):
            pmi.add(words[1])  # one plugin a line: none, pmi2, cray_shasta, pmix
        elif words[:1] == ["pmi"] and "available:" in line:  # "... versions available: pmix_v4"
            pmi.update(p.strip() for p in line.split("available:", 1)[1].split(",")
                       if re.fullmatch(r"[a-z0-9_]+", p.strip()))
    return sorted(stacks), sorted(pmi)


def parse_mpi_paths(text: str) -> list[str] | None:
    """Where the site's MPI lives, as the discovery's `mpi` section found it: the directories
    of the launchers on the login's PATH and the oneAPI roots holding an MPI, the home
    spelt `~`; None when the section did not look (no `home` line: an older discovery)."""
    home = next((line.split(None, 1)[1].rstrip("/") for line in text.split("\n")
                 if line.startswith("home /")), None)
    if home is None:
        return None
    out: list[str] = []
    for line in text.split("\n"):
        words = line.split(None, 2)
        path = words[2] if len(words) == 3 and words[0] == "cmd" and \
            words[1] in ("mpirun", "mpiexec") else words[1] if len(words) == 2 and \
            words[0] == "oneapi" else None
        if path is None or not path.startswith("/"):
            continue
        if words[0] == "cmd":
            path = path.rsplit("/", 1)[0]
        if path == home or path.startswith(home + "/"):
            path = "~" + path[len(home):]
        path = path.rstrip("/") or "/"
        if path not in out:
            out.append(path)
    return out


def gpu_model(n: Node) -> str | None:
    """The GRES type (`gpu:a100:2`), else a feature that names a known GPU model."""
    if not n.gpus:
        return None
    if n.gpu_type:
        return n.gpu_type.lower()
    for f in n.features:
        if f.strip().lower() in GPU_MODELS:
            return f.strip().lower()
    return None


def _type_name(arch: str | None, cpus: int, mem: int, gpus: int, gpu: str | None) -> str:
    name = f"{arch or 'unknown'}-{cpus}c-{max(1, round(mem / 1024)) if mem else 0}g"
    if gpus:
        name += f"-{gpus}x{gpu or 'gpu'}"
    return name


def node_types(cluster: str, nodes: list[Node], fallback_arch: str | None = None,
               prefix_cluster: bool = False) -> list[NodeType]:
    """Group identical nodes (architecture, features, CPUs, memory, GPUs) into node types,
    each with the partitions its nodes serve."""
    groups: dict[tuple, NodeType] = {}
    for n in nodes:
        arch = node_arch(n, fallback_arch)
        gpu = gpu_model(n)
        feats = sorted({f for f in n.features if f})
        key = (arch, tuple(feats), n.cpus, n.memory_mb, n.gpus, gpu)
        t = groups.get(key)
        if t is None:
            base = _type_name(arch, n.cpus, n.memory_mb, n.gpus, gpu)
            t = groups[key] = NodeType(
                name=f"{cluster}/{base}" if prefix_cluster else base, cluster=cluster,
                architecture=arch, features=feats, cpus=n.cpus, memory_mb=n.memory_mb,
                gpus=n.gpus, gpu_model=gpu)
        t.count += 1
        for p in n.partitions:
            if p not in t.partitions:
                t.partitions.append(p)
    out = list(groups.values())
    seen: dict[str, int] = {}
    for t in out:  # same readable name for different feature sets: number them
        seen[t.name] = seen.get(t.name, 0) + 1
        if seen[t.name] > 1:
            t.name = f"{t.name}.{seen[t.name]}"
    for t in out:
        t.partitions.sort()
    return out


def summarise_cluster(name: str, types: list[NodeType], partitions: list[Partition],
                      error: str | None = None) -> ClusterSummary:
    parts = []
    for p in partitions:
        mine = [t.name for t in types if p.name in t.partitions]
        parts.append(PartitionSummary(
            name=p.name, default=p.default, max_time_s=p.max_time_s,
            nodes=p.total_nodes or len(p.nodes) or sum(t.count for t in types
                                                        if p.name in t.partitions),
            node_types=mine))
    return ClusterSummary(
        name=name, nodes=sum(t.count for t in types),
        architectures=sorted({t.architecture for t in types if t.architecture}),
        gpu_models=sorted({t.gpu_model for t in types if t.gpu_model}),
        partitions=parts, node_types=[t.name for t in types], error=error)


def summarise_site(site: str, clusters: list[ClusterSummary], types: list[NodeType], *,
                   login_arch: str | None, modules: list[SoftwareModule] | None,
                   module_system: str | None, runtimes: list[str] | None,
                   mpi: list[str] | None, errors: list[str],
                   discovered_at: datetime | None,
                   pmi: list[str] | None = None) -> SiteCapabilities:
    """The site's capabilities, summarised from its clusters' node types (and the login's
    own architecture when no scheduler reported one)."""
    archs = sorted({t.architecture for t in types if t.architecture}) or (
        [login_arch] if login_arch else [])
    feats = sorted({f for t in types for f in t.features})
    sources = {"architectures": "discovered", "features": "discovered",
               "gpu_models": "discovered", "node_types": "discovered"}
    for key, value in (("software", modules), ("container_runtimes", runtimes),
                       ("mpi", mpi), ("pmi", pmi)):
        if value is not None:
            sources[key] = "discovered"
    return SiteCapabilities(
        site=site, discovered_at=discovered_at, sources=sources, architectures=archs,
        features=feats, gpu_models=sorted({t.gpu_model for t in types if t.gpu_model}),
        module_system=module_system, software=modules, container_runtimes=runtimes,
        mpi=mpi, pmi=pmi, node_types=types, errors=errors)
