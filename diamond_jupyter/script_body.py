"""What a batch script's body uses, read as the shell runs it (pure: text in).

`scan_body` reads the modules a job loads (`module load NAME[/VERSION]`, `module add`,
`ml NAME`, `module swap A B`), the containers it runs (apptainer/singularity, podman,
docker, shifter, charliecloud, enroot, sarus, pyxis's `srun --container-image`), its
launchers (`mpirun`, `mpiexec`, `srun`, `aprun`, `jsrun`, `ibrun`, `flux run`) and the GPU
vendor its tools imply. Words are split as the shell splits them (quotes, escapes,
operators, here-documents, line continuations); a need it cannot be sure of (a load in a
branch, after `module use`, in a here-document another program reads, one whose failure
the script tolerates, a hidden `.name`) is kept but marked unchecked, and what cannot be
checked at all (conda environments, pip installs at run time, spack loads, PATH entries,
sourced helpers, `$VAR` modules) becomes a note. The script's own functions count where
it calls them (their loads, containers and launchers; `module load "$1"` by each call's
arguments), a literal `for m in A B` loop's words name its `$m`, `bash -c '...'` strings
are read, a load's fallbacks (`|| module load B`, `if ! module load A; then module load
B`) are its alternatives, a branch on `$SLURM_CLUSTER_NAME` carries the clusters it runs
on, and a conda distribution the job activates its own environment from carries that
role. `needs.needs_of` joins this with the job's directives.
"""

from __future__ import annotations

import copy
import re
import threading
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from .digits import ascii_digits

MAX_SCRIPT_BYTES = 4 << 20  # a job script file read from disk (Slurm's default bound)
# a REST body by default: a script at MAX_SCRIPT_BYTES, with room for its JSON escapes and
# the body's other fields
MAX_BODY_BYTES = MAX_SCRIPT_BYTES + (1 << 20)

# ---------------------------------------------------------------- the body's needs

class NeedModel(BaseModel):
    """A need read from a job: its fields are closed (a misspelt one is an error)."""

    model_config = ConfigDict(extra="forbid")


class SoftwareNeed(NeedModel):
    name: str  # as written: "gromacs", "GROMACS"
    version: str | None = None  # as written: "2023", "2023.3-foss-2023a"
    line: int | None = None  # body line (1-based); None: from an option
    written: str | None = None  # the whole argument as written ("gromacs/2023")
    # why it is read but not held against a site (a load in a branch, after `module use`,
    # a try-load); None: checked
    unchecked: str | None = None
    # modules the script falls back to when this one fails (`module load a || module load
    # b`): any one of them does
    alternatives: list[str] = []
    # "conda" / "mamba": a conda distribution the job activates its own environment from,
    # so any distribution that gives that command serves; None: this package itself
    role: str | None = None
    # a load in a branch on $SLURM_CLUSTER_NAME: the cluster names (shell patterns) it runs
    # on, and "!PATTERN" for those of earlier arms, which win; checked where a site is named
    # by one of them
    clusters: list[str] = []
    # a top-level load after `module use PATH` (or MODULEPATH=PATH): the paths the job added
    # (checked at a site whose own module trees hold them all)
    trees: list[str] = []
    # the modules the script surely unloads after the load before this one and before this
    # one (`module unload gcc`, `ml -gcc`, the first name of `module swap gcc intel`);
    # PURGE_ALL for `module purge`; each after FORCED where sticky modules go too
    # (`module --force purge`: "!*")
    unloaded: list[str] = []

    @property
    def full(self) -> str:
        return self.written or (f"{self.name}/{self.version}" if self.version else self.name)


class ContainerNeed(NeedModel):
    image: str  # as written; "$IMG" when it is named at run time (image_known False)
    runtime: str | None = None  # apptainer, podman, docker, shifter, charliecloud, enroot,
    line: int | None = None     # pyxis (srun --container-image); None: any
    image_known: bool = True
    gpu: str | None = None  # "nvidia" (--nv), "amd" (--rocm)
    unchecked: str | None = None  # why it is not held against a site (used in a branch)


class EnvNeed(NeedModel):
    """An environment the job brings its programs from: a Spack package it loads (`spack
    load hdf5@1.14.3`), a Spack environment or a named conda environment it activates."""

    kind: str  # "spack" (a package), "spack-env", "conda" (an environment)
    name: str  # the package or environment as written (`hdf5`, `sim`, `/proj/envs/x`)
    version: str | None = None  # a Spack package's `@VERSION` (`1.14`, `1.14.3`)
    tool: str = "spack"  # the command: spack, conda, mamba, micromamba
    line: int | None = None
    unchecked: str | None = None  # why it is not held against a site (a branch, a path)
    written: str | None = None  # a Spack spec as written (`hdf5@1.14%gcc@12+mpi`)
    # the Spack instance the job sets up itself (`source ROOT/share/spack/setup-env.sh`):
    # checked only where discovery listed that one
    root: str | None = None

    @property
    def shown(self) -> str:
        what = {"spack": "spack load", "spack-env": "spack environment"}.get(
            self.kind, f"{self.tool} environment")
        name = f"{self.name}@{self.version}" if self.version else self.name
        return f"{what} {name!r} (line {self.line})" if self.kind != "spack" else \
            f"{what} {name} (line {self.line})"


# ---------------------------------------------------------------- shell words

_OPS = (";;", "&&", "||", "|&", "<<<", "<<-", "<<", ">>", ">&", "<&", "&>>", "&>", ">|", "<>",
        ";", "|", "&", "(", ")", ">", "<")
_REDIRECTS = {"<<<", "<<-", "<<", ">>", ">&", "<&", "&>>", "&>", ">|", "<>", ">", "<"}
_OP_STARTS = frozenset(o[0] for o in _OPS)


@dataclass
class _Word:
    text: str  # quotes removed, nothing expanded ("$X" stays "$X")
    start: int  # offsets of the word as written, in the whole body
    end: int
    op: bool = False


def _words(text: str, base: int = 0) -> list[_Word]:
    """Shell words and operators of one logical line (backslash-newlines are blanks),
    with their offsets; `#` starts a comment only at the start of a word; `$(...)`,
    `${...}` and backquotes stay inside their word. Unbalanced quotes run to the end."""
    out: list[_Word] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == "\\" and text.startswith(("\n", "\r\n"), i + 1):
            i += 2 if text[i + 1] == "\n" else 3  # a continued line
            continue
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        op = next((o for o in _OPS if text.startswith(o, i)), None) \
            if c in _OP_STARTS else None
        if op:
            out.append(_Word(op, base + i, base + i + len(op), op=True))
            i += len(op)
            continue
        start, buf = i, []
        while i < n and text[i] not in " \t\r\n;&|()<>":
            c = text[i]
            if c == "\\":
                if text.startswith(("\n", "\r\n"), i + 1):
                    break  # a continued line ends the word (the blank skips it)
                buf.append(text[i + 1:i + 2])
                i += 2
            elif c == "'":
                j = text.find("'", i + 1)
                j = n if j < 0 else j
                buf.append(text[i + 1:j])
                i = j + 1
            elif c == '"':
                j = i + 1
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                buf.append(re.sub(r'\\(["\\$`])', r"\1", text[i + 1:min(j, n)]))
                i = j + 1
            elif c == "$" and text[i + 1:i + 2] in ("(", "{"):
                opening, closing = text[i + 1], ")" if text[i + 1] == "(" else "}"
                depth, j = 0, i + 1
                while j < n:
                    depth += (text[j] == opening) - (text[j] == closing)
                    if depth == 0:
                        break
                    j += 1
                buf.append(text[i:j + 1])
                i = j + 1
            elif c == "`":
                j = text.find("`", i + 1)
                j = n if j < 0 else j
                buf.append(text[i:j + 1])
                i = j + 1
            else:
                buf.append(c)
                i += 1
        out.append(_Word("".join(buf), base + start, base + min(i, n)))
    return out


@dataclass
class _Cmd:
    words: list[_Word]
    sep: str | None  # the operator before it: ; && || | & ( () ... None at line start
    heredocs: list[tuple[str, bool]]  # (delimiter, leading tabs stripped)


def _split(words: list[_Word]) -> list[_Cmd]:
    """Simple commands, their redirections taken out (a here-document's delimiter kept)."""
    cmds: list[_Cmd] = []
    cur: list[_Word] = []
    docs: list[tuple[str, bool]] = []
    sep: str | None = None
    i = 0
    while i < len(words):
        w = words[i]
        if w.op and w.text in _REDIRECTS:
            if cur and ascii_digits(cur[-1].text) and cur[-1].end == w.start:
                cur.pop()  # the descriptor of 2>...
            target = words[i + 1] if i + 1 < len(words) and not words[i + 1].op else None
            if w.text in ("<<", "<<-") and target is not None:
                docs.append((target.text, w.text == "<<-"))
            i += 2 if target is not None else 1
            continue
        if w.op:
            if cur or docs:
                cmds.append(_Cmd(cur, sep, docs))
            cur, docs = [], []
            paired = w.text == "(" and i + 1 < len(words) and words[i + 1].text == ")"
            sep = "()" if paired else w.text
            i += 2 if paired else 1
            continue
        cur.append(w)
        i += 1
    if cur or docs or sep == "()":  # `name ()` alone: its body's `{` comes next line
        cmds.append(_Cmd(cur, sep, docs))
    return cmds


_LEADERS = {"exec", "time", "command", "nohup", "env", "stdbuf", "timeout", "taskset",
            "numactl", "then", "else", "elif", "do", "if", "while", "until", "!", "{"}


def _strip_leaders(cmd: list[str]) -> list[str]:
    """`exec`, `time -p`, `env A=b`, `timeout 1h`, `taskset -c 0-3`... in front of the real
    command."""
    i, after = 0, None
    while i < len(cmd):
        w = cmd[i]
        if re.fullmatch(r"[A-Za-z_]\w*=.*", w) or w in _LEADERS:
            after = w
        elif after in ("time", "env", "nohup", "stdbuf", "numactl", "timeout", "taskset") \
                and w.startswith("-"):
            pass  # an option of the leader
        elif after == "timeout" and re.fullmatch(r"[0-9]+(?:\.[0-9]+)?[smhd]?", w) or \
                after == "taskset" and re.fullmatch(r"(?:0x)?[0-9a-fA-F,-]+", w):
            after = None  # its duration / CPU list
        else:
            break
        i += 1
    return cmd[i:]


def _placeholder(word: str) -> bool:
    return "$" in word or "`" in word or "{" in word or "*" in word or "?" in word


# ---------------------------------------------------------------- module commands

# a need's `unchecked` for a module named with a part starting with '.': software.py checks
# it against the site's hidden modules where discovery listed them
HIDDEN_MODULE = "a hidden module"
_MODULE_CMD = re.compile(r"^(?:module|ml)$")
_SUBCMD_LOAD = {"load", "add", "try-load", "try-add"}
_NOT_LOADS = {"unload", "rm", "del", "purge", "list", "avail", "spider", "use", "unuse",
              "show", "display", "help", "whatis", "keyword", "save", "restore", "reset",
              "swap", "switch", "is-loaded", "is-avail", "savelist", "describe", "refresh",
              "update", "overview", "sl", "av", "disable", "initadd", "initrm", "test", "sw",
              "-t", "--terse"}
# options `ml` takes before a subcommand; another `-NAME` is an unload (`ml -cuda gcc`)
_ML_OPTIONS = {"-q", "--quiet", "-t", "--terse", "--ignore_cache", "--ignore-cache", "-f",
               "--force", "-D", "-d", "--default", "-T", "--trace", "-v", "--verbose",
               "--raw", "-r", "--regexp", "--redirect", "--no_redirect", "--no-redirect"}


_VARIANT_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*=")  # `fabric=ofi`; not `GCC/>=12`


def _names_module(word: str) -> bool:
    """Not an option, nor a variant of the module before it (Environment Modules 4.8's
    `module load hdf5@1.14.3 +mpi ~debug fabric=ofi`: on, off, a value)."""
    return not word.startswith(("-", "+", "~")) and not _VARIANT_VALUE.match(word)


def module_command(cmd: list[str]) -> tuple[str, list[int]] | None:
    """A `module`/`ml` command as (what it does, the indexes in `cmd` of the modules it
    names): "load" for load/add, `ml NAME` and the module `swap A B`/`switch A B` switches
    to; "try-load"; "load-any" (Environment Modules: the first of them that loads); "use"
    (the paths); another subcommand as itself. None: not one."""
    if not cmd or not _MODULE_CMD.match(cmd[0]):
        return None
    i = 1
    while i < len(cmd) and cmd[i].startswith("-"):
        if cmd[0] == "ml" and cmd[i] not in _ML_OPTIONS:
            break  # `ml -cuda ...`: the shorthand, where -NAME unloads
        i += 1
    if i >= len(cmd):
        return ("list", [])
    sub = cmd[i]
    rest = [k for k in range(i + 1, len(cmd)) if not cmd[k].startswith("-")]
    if cmd[0] == "ml" and sub not in _SUBCMD_LOAD | _NOT_LOADS:
        return ("load", [k for k in range(i, len(cmd)) if _names_module(cmd[k])])
    if sub in ("load", "add"):
        return ("load", [k for k in rest if _names_module(cmd[k])])
    if sub in ("try-load", "try-add"):
        return ("try-load", [k for k in rest if _names_module(cmd[k])])
    if sub in ("swap", "switch", "sw"):  # `sw`: Lmod's short name for swap
        return ("load", rest[-1:])  # `swap A B` loads B; `swap A/2` loads A/2
    return (sub, rest)


def _eval_modulecmd(cmd: list[_Word], body: str) -> list[_Word] | None:
    """`eval `modulecmd bash load gcc/12``, `eval "$(/usr/bin/modulecmd sh add x)"` or
    `eval $($LMOD_CMD bash load x)`: what the `module` function itself runs (Environment
    Modules 3 scripts written before it existed), as the `module` command it is (its
    module words where they are in the body, so a site may respell them); None: not one."""
    if len(cmd) != 2 or cmd[0].text != "eval":
        return None
    m = re.fullmatch(r"\$\((.*)\)|`(.*)`", cmd[1].text, re.S)
    text = (m.group(1) or m.group(2) or "") if m else ""
    at = body.find(text, cmd[1].start, cmd[1].end) if text else -1
    inner = [w for w in _words(text, max(at, 0)) if not w.op]
    if len(inner) < 3 or not (inner[0].text.rsplit("/", 1)[-1] in ("modulecmd",
                                                                    "modulecmd.tcl")
                              or inner[0].text in ("$LMOD_CMD", "${LMOD_CMD}")):
        return None
    if at < 0:  # not written as is (escapes): read, never respelled
        inner = [_Word(w.text, cmd[1].start, cmd[1].start) for w in inner]
    return [_Word("module", inner[0].start, inner[0].start), *inner[2:]]  # the shell's
    # name (`bash`) dropped


PURGE_ALL = "*"  # a SoftwareNeed's `unloaded`: every module but sticky ones (`module purge`)
# before a name in `unloaded`: the command was forced, so a sticky module goes too. Lmod
# (8.6, checked) forces only with `--force` before the subcommand: `module --force purge`,
# `ml --force -gcc`; `module purge --force` and `-f` keep its sticky modules
FORCED = "!"


def module_unloads(cmd: list[str]) -> list[str]:
    """The modules a `module`/`ml` command unloads before it loads any: `unload`/`rm`/`del`
    NAME..., `ml -NAME`, the first of `swap A B` (Lmod unloads A; a same-named B replaces A
    anyway), [PURGE_ALL] for `purge`; each after FORCED where the command is forced (a
    sticky module goes too); [] for another command."""
    got = module_command(cmd)
    if got is None:
        return []
    action, idx = got
    at = next((k for k in range(1, len(cmd)) if not cmd[k].startswith("-")
               or cmd[0] == "ml" and cmd[k] not in _ML_OPTIONS), len(cmd))
    mark = FORCED if "--force" in cmd[1:at] else ""
    if action == "purge":
        return [mark + PURGE_ALL]
    if action in ("unload", "rm", "del"):
        return [mark + cmd[k] for k in idx]
    if at < len(cmd) and cmd[at] in ("swap", "switch", "sw"):
        names = [w for w in cmd[at + 1:] if not w.startswith("-")]
        return [mark + names[0]] if len(names) == 2 else []
    if cmd[0] == "ml" and action == "load":  # `ml -gcc intel`: gcc goes, intel comes
        return [mark + w[1:] for w in cmd[at:] if w.startswith("-") and len(w) > 1
                and w not in _ML_OPTIONS]
    return []


def module_loads(cmd: list[str]) -> list[str] | None:
    """The modules a `module load ...`/`ml ...` command loads (None: not a load)."""
    got = module_command(cmd)
    if got is None or got[0] not in ("load", "try-load"):
        return None
    return [cmd[k] for k in got[1]]


# ---------------------------------------------------------------- containers

# the options of each runtime that take a value (the image is the first other word)
_RUNTIME_VALUED = {
    "apptainer": {"-B", "--bind", "--env", "--env-file", "-H", "--home", "-W", "--workdir",
                  "-S", "--scratch", "--overlay", "-o", "--security", "--network",
                  "--network-args", "--app", "--mount", "--pwd", "--hostname", "--dns",
                  "--apply-cgroups", "--drop-caps", "--add-caps", "--fusemount",
                  "--config", "--cpus", "--memory", "--pid-file", "--oci", "--arch",
                  "--library", "--docker-login", "--section", "--build-arg",
                  "--build-arg-file"},
    "podman": {"-v", "--volume", "-e", "--env", "--name", "-w", "--workdir", "--device",
               "--gpus", "--network", "--net", "-p", "--publish", "--mount", "-u", "--user",
               "--entrypoint", "--env-file", "--hostname", "-h", "--shm-size", "--cpus",
               "-m", "--memory", "--security-opt", "--ulimit", "--userns", "--cap-add",
               "--cap-drop", "--pull", "--platform", "--label", "-l", "--ipc", "--pid",
               "--uts", "--group-add", "--tmpfs", "--hooks-dir", "--annotation"},
    "charliecloud": {"-b", "--bind", "-c", "--cd", "-g", "--gid", "-u", "--uid",
                     "--set-env", "--unset-env", "-m", "--mount", "--storage", "-s"},
    "enroot": {"-m", "--mount", "-e", "--env", "-c", "--conf", "-n", "--name", "-o",
               "--output", "-a", "--arch"},
    "sarus": {"--mount", "-e", "--env", "-w", "--workdir", "--entrypoint"},
}
for _alias, _same in (("singularity", "apptainer"), ("docker", "podman"),
                      ("podman-hpc", "podman"), ("ch-image", "charliecloud"),
                      ("shifterimg", "podman")):
    _RUNTIME_VALUED[_alias] = _RUNTIME_VALUED[_same]
# the subcommands that run an image (the image: the first word after the options) and
# those that fetch or build one (the image: the last word)
_RUNTIME_SUBCMDS = {"apptainer": {"exec", "run", "shell", "test"},
                    "podman": {"run", "create"}, "enroot": {"start", "create"},
                    "sarus": {"run"}}
_RUNTIME_FETCH = {"apptainer": {"pull", "build"}, "podman": {"pull", "build"},
                  "enroot": {"import"}, "sarus": {"pull"}, "charliecloud": {"pull", "build"},
                  "shifter": {"pull"}}
_RUNTIME_OF = {"apptainer": "apptainer", "singularity": "apptainer", "podman": "podman",
               "docker": "docker", "podman-hpc": "podman-hpc", "enroot": "enroot",
               "sarus": "sarus", "ch-run": "charliecloud", "ch-image": "charliecloud",
               "shifter": "shifter", "shifterimg": "shifter"}
_GLOBAL_FLAGS = {"-d", "--debug", "-q", "--quiet", "-s", "--silent", "-v", "--verbose",
                 "--nocolor"}  # apptainer's, before the subcommand


def container_use(cmd: list[str]) -> ContainerNeed | None:
    """`apptainer exec IMAGE ...` (`singularity`, `run`, `shell`, `instance start`, and
    `pull`/`build`, which need the runtime too), `podman`/`docker`/`podman-hpc run IMAGE`,
    `sarus run IMAGE`, `shifter --image=IMAGE`, `ch-run IMAGE -- ...`, `enroot start NAME`,
    `enroot import URI`, `srun --container-image=IMAGE` / `--container-name=NAME` (pyxis).
    An image given by a variable is kept as written (image_known False): the runtime is
    still known."""
    for i, w in enumerate(cmd):
        base = w.rsplit("/", 1)[-1]
        if base in ("srun", "shifter"):
            keys = ("--container-image", "--container-name") if base == "srun" else \
                ("--image",)
            for k, opt in enumerate(cmd[i + 1:], i + 1):
                key, eq, value = opt.partition("=")
                if key in keys:
                    image = value if eq else (cmd[k + 1] if k + 1 < len(cmd) else "")
                    if image:
                        need = _container(image, "pyxis" if base == "srun" else "shifter", cmd)
                        return need if key != "--container-name" else \
                            need.model_copy(update={"image_known": False})
            if base == "shifter":
                return None
            continue
        runtime = _RUNTIME_OF.get(base)
        if runtime is None:
            continue
        family = "apptainer" if runtime == "apptainer" else "podman" if base in (
            "podman", "docker", "podman-hpc") else runtime
        valued = _RUNTIME_VALUED.get(base) or _RUNTIME_VALUED.get(runtime, set())
        j = i + 1
        if base != "ch-run":
            while family == "apptainer" and j < len(cmd) and cmd[j] in _GLOBAL_FLAGS:
                j += 1
            sub = cmd[j] if j < len(cmd) else ""
            if family == "apptainer" and sub == "instance" and cmd[j + 1:j + 2] == ["start"]:
                j, sub = j + 1, "exec"  # `instance start IMAGE NAME`
            if sub in _RUNTIME_FETCH.get(family, ()):
                words = [x for x in cmd[j + 1:] if not x.startswith("-")]
                return _container(words[-1], runtime, cmd) if words else None
            if sub not in _RUNTIME_SUBCMDS.get(family, ()):
                continue
            j += 1
        while j < len(cmd) and cmd[j].startswith("-"):
            j += 1 if "=" in cmd[j] or cmd[j] not in valued else 2
        if j < len(cmd):
            return _container(cmd[j], runtime, cmd)
    return None


def _container(image: str, runtime: str, cmd: list[str]) -> ContainerNeed:
    devices = [cmd[k + 1] for k, w in enumerate(cmd[:-1]) if w == "--device"] + \
        [w.partition("=")[2] for w in cmd if w.startswith("--device=")]
    gpu = "nvidia" if {"--nv", "--nvccli", "--gpus"} & set(cmd) or (
        runtime == "podman-hpc" and "--gpu" in cmd) or any(  # NERSC's podman-hpc --gpu
        w.startswith("--gpus=") for w in cmd) or any(
        d.startswith("nvidia.com/gpu") for d in devices) else \
        "amd" if "--rocm" in cmd or "/dev/kfd" in devices else None
    return ContainerNeed(image=image, runtime=runtime, image_known=not _placeholder(image),
                         gpu=gpu)


# ---------------------------------------------------------------- the body

_NVIDIA_MODULES = {"cuda", "cudatoolkit", "cuda-toolkit", "cudnn", "nccl", "nvhpc",
                   "nvidia-hpc-sdk"}
_AMD_MODULES = {"rocm", "hip", "amd-mixed", "rocm-smi"}
# commands that talk to one vendor's GPUs (compilers do not: they build anywhere)
_VENDOR_COMMANDS = {"nvidia-smi": "nvidia", "nvidia-cuda-mps-control": "nvidia",
                    "dcgmi": "nvidia", "nsys": "nvidia", "ncu": "nvidia", "rocm-smi": "amd",
                    "rocminfo": "amd", "amd-smi": "amd", "rocprof": "amd", "rocprofv2": "amd"}
# launchers that exist only at some kinds of site (noted, not checked)
_SITE_LAUNCHERS = {"aprun": "Cray ALPS", "jsrun": "IBM LSF/CSM", "ibrun": "TACC"}


@dataclass
class ModuleLoad:
    """A module argument of the body: the need, where its word is (body offsets), and
    whether it may be respelled for a site (not when it may come from the job's own tree)."""

    need: SoftwareNeed
    start: int
    end: int
    rewrite: bool
    line: int | None = None  # the body line of the word when not the load's own (a loop's
    # list, a call's argument)


@dataclass
class BodyScan:
    software: list[SoftwareNeed]
    loads: list[ModuleLoad]
    container: ContainerNeed | None
    mpi: str | None
    gpu_vendor: str | None
    notes: list[str]
    gpu_use: str | None = None  # a command or container that runs on GPUs, and where
    pmi: str | None = None  # the MPI plugin srun launches with (`--mpi=`, SLURM_MPI_TYPE)
    # why the MPI launcher may be the job's own (a sourced helper such as oneAPI's
    # setvars.sh, a spack load, a PATH entry before it): not held against a site's MPI list
    mpi_own: str | None = None
    # where it comes from: the file sourced or the PATH entry, as a literal path (`~/` for
    # the home); None when not written out
    mpi_from: str | None = None
    # Spack packages and environments, conda environments the job brings programs from
    envs: list[EnvNeed] = field(default_factory=list)
    # whether a line is neither blank nor a comment (a script of only directives and
    # comments runs nothing)
    runs_commands: bool = False


def scan_body(body: str) -> BodyScan:
    """`_scan_body(body)`, read once for a body seen lately (a submit asks for it from
    placement, the site's check and the software checks: a long body took minutes); a copy,
    which the caller may change."""
    return copy.deepcopy(_scanned(body))


def module_trees(body: str) -> list[str]:
    """The module trees `body` adds (`module use DIR`, MODULEPATH=) before a load, each once
    in order (its scan's answer, read once with the rest: no copy)."""
    return list(dict.fromkeys(t for s in _scanned(body).software for t in s.trees))


def runs_commands(body: str) -> bool:
    """Whether `body` has a line that is neither blank nor a comment (its scan's answer,
    read once with the rest: no copy)."""
    return _scanned(body).runs_commands


def scanned_lately(body: str) -> bool:
    """Whether `body`'s scan is kept (`scan_body` answers at once, no scan to move off an
    event loop)."""
    return body in _SCANS


_SCANS: dict[str, BodyScan] = {}  # the latest scans, oldest first
_SCANS_KEPT = 8
_scans_lock = threading.Lock()


def _scanned(body: str) -> BodyScan:
    with _scans_lock:
        if (kept := _SCANS.pop(body, None)) is not None:
            _SCANS[body] = kept  # the newest now
            return kept
    scan = _scan_body(body)
    with _scans_lock:
        _SCANS[body] = scan
        while len(_SCANS) > _SCANS_KEPT:
            del _SCANS[next(iter(_SCANS))]
    return scan


def _scan_body(body: str) -> BodyScan:
    """What the body needs, read as the shell would run it: `module load`/`ml`/`module
    swap` arguments (those in a branch, after `||`, after `module use` or a try-load are
    kept but not checked; `$VAR`s and paths are only noted), the first container, the first
    launcher, the GPU vendor its commands imply, and notes on what cannot be checked (conda
    and virtual environments, pip installs at run time, spack loads, PATH entries).
    Here-documents are skipped unless a shell reads them; nothing after a top-level `exit`
    or `exec CMD` counts."""
    software: list[SoftwareNeed] = []
    unloads: list[str] = []  # surely unloaded since the last load (its `unloaded`)

    def _add_load(need: SoftwareNeed) -> None:
        need.unloaded = unloads[:]
        unloads.clear()
        software.append(need)
    loads: list[ModuleLoad] = []
    container: ContainerNeed | None = None
    mpi: str | None = None
    pmi: str | None = None
    exported_pmi: str | None = None  # `export SLURM_MPI_TYPE=...` at the top level
    vendors: dict[str, str] = {}
    notes: list[str] = []
    lines = body.split("\n")
    offsets = [0]
    for ln in lines[:-1]:
        offsets.append(offsets[-1] + len(ln) + 1)
    stack: list[bool] = []  # each open block: whether what runs in it is conditional
    func_pending = False
    func_name: str | None = None  # the function whose body opens next
    funcs: list[tuple[str, int]] = []  # the functions being read: (name, its block in stack)
    defined: set[str] = set()
    # calls of the script's functions: (calling function or None, callee, conditional, line)
    calls: list[tuple[str | None, str, bool, int]] = []
    in_function: list[tuple[SoftwareNeed, str, int]] = []  # loads a call decides on
    # containers, launchers and GPU tools a call decides on: (function, kind, what, line)
    uses: list[tuple[str, str, Any, int]] = []
    fallback_of: dict[int, str] = {}  # command index (this line) -> the load it backs up
    activates: set[str] = set()  # "conda" / "mamba": the job activates its own environment
    guards: list[_Guard] = []  # `if ! module load X; then ...`: the ifs being read
    branches: list[_ClusterBranch] = []  # `case $SLURM_CLUSTER_NAME in ...`, `if [[ ... ]]`
    arm: list[str] | None = None  # the case arm a line goes on in (from the lines before)
    # `need() { module load "$1"; }`: (function, the parameter, line, conditional in it,
    # after `module use`); each call's arguments name the modules
    param_loads: list[tuple[str, str, int, bool, bool]] = []
    call_args: list[tuple[str | None, str, bool, list[_Word]]] = []
    exiting: set[str] = set()  # the script's functions that end the job (`die() {...exit 1}`)
    # `for m in GCC/12.3.0 OpenMPI/4.1.5; do module load $m; done`: the loop's variable,
    # its literal values and the stack's size inside the loop
    loop_vars: dict[str, tuple[list[_Word], int]] = {}
    tree: str | None = None  # a module tree the job added (`module use`, MODULEPATH=)
    tree_paths: list[str] = []  # the paths it added (`$VAR` and `~` ones too)
    own_tools: str | None = None  # the first line that may bring programs of its own
    own_from: str | None = None  # ... and the path it brings them from, when written out
    mpi_own: str | None = None
    mpi_from: str | None = None
    skip_lines: set[int] = set()
    envs: list[EnvNeed] = []
    runs_commands = False

    def note(text: str) -> None:
        if text not in notes:
            notes.append(text)

    i = 0
    stop = False
    while i < len(lines) and not stop:
        first = i
        quote = _open_quote(lines[i])
        while i + 1 < len(lines) and (quote or lines[i].rstrip("\r").endswith("\\")):
            i += 1  # a continued line, or a quoted string that goes on
            quote = _open_quote("\n" + lines[i], quote)
        if quote:  # never closed (a template, a typo): read its lines one by one
            i = first
            while lines[i].rstrip("\r").endswith("\\") and i + 1 < len(lines):
                i += 1
        lineno, last = first + 1, i
        i += 1
        # (every line the loop leaves unread, a here-document's or after `exit`, follows one
        # with a command)
        runs_commands = runs_commands or any(
            (ln := lines[k].strip()) and not ln.startswith("#") for k in range(first, last + 1))
        if first in skip_lines:
            continue
        text = body[offsets[first]:offsets[last] + len(lines[last])]
        cmds = _split(_words(text, offsets[first]))
        after_module = False
        # the case arms this line starts or ends, by offset: (where, patterns or None)
        in_case = bool(branches) and branches[-1].kind == "case" or \
            _CLUSTER_CASE.search(text) is not None
        events = _arm_events(text, offsets[first]) if in_case else []
        for ci, cmd in enumerate(cmds):
            ws = cmd.words
            words = [w.text for w in ws]
            head = words[0] if words else ""
            if cmd.sep == "()":
                func_pending = True
                prev = cmds[ci - 1].words if ci else []
                func_name = prev[-1].text if prev else None
            if head in ("fi", "done", "esac", "}"):
                if stack:
                    stack.pop()
                if funcs and funcs[-1][1] >= len(stack):
                    funcs.pop()  # the function's body ended
                while guards and guards[-1].depth > len(stack):
                    _settle(guards.pop(), in_function, vendors)
                while branches and branches[-1].depth > len(stack):
                    branches.pop()
                ws, words = ws[1:], words[1:]
                head = words[0] if words else ""
            guard = guards[-1] if guards and guards[-1].depth == len(stack) else None
            if guard is not None and head in ("then", "else", "elif") and guard.part != "elif":
                guard.part = head  # after an elif, which branch runs on failure is unclear
            failing = guard is not None and guard.part == ("then" if guard.negated else "else")
            if head == "function":
                func_pending = True
                func_name = words[1] if len(words) > 1 else None
                if "{" not in words:
                    continue
                stack.append(True)  # `function NAME {`: what follows is its body
                _open_function(func_name, stack, funcs, defined)
                func_pending = False
                cut = words.index("{") + 1
                ws, words = ws[cut:], words[cut:]
                head = words[0] if words else ""
            elif head == "{":
                stack.append(func_pending or cmd.sep in ("||", "&&") or any(stack))
                if func_pending:
                    _open_function(func_name, stack, funcs, defined)
            # `else if ...`, `do while ...` and `{ if ...` open a block inside the one they
            # continue
            opener = next((w for w in words[1 if head == "{" else 0:]
                           if w not in ("then", "else", "do", "!")), "")
            opens_if = opener == "if"
            if opener in ("if", "case"):
                stack.append(True)
            tested = _cluster_test(words)
            if opener == "case" and _CLUSTER_VAR.fullmatch(
                    words[words.index("case") + 1] if words.index("case") + 1 < len(words)
                    else ""):
                branches.append(_ClusterBranch(len(stack), "case"))
                arm = None
            elif opens_if and tested:
                first_arm = [tested]
                branches.append(_ClusterBranch(len(stack), "if", [first_arm], first_arm))
            elif branches and branches[-1].kind == "if" and branches[-1].depth == len(stack) \
                    and head in ("else", "elif"):
                b = branches[-1]
                b.current = [tested] if head == "elif" and tested else \
                    [] if head == "elif" else None
                b.other_test = b.other_test or b.current == []
                if b.current:
                    b.arms.append(b.current)
            elif opener in ("while", "until", "for", "select"):
                stack.append(any(stack))
            if head != "{" and words:
                func_pending = False
            # `module is-loaded x || module load x`: x is there either way
            either = cmd.sep == "||" and ci > 0 and (module_command(_strip_leaders(
                [w.text for w in cmds[ci - 1].words])) or ("",))[0] == "is-loaded"
            conditional = any(stack) or cmd.sep == "||" and not either or \
                (cmd.sep == "&&" and not after_module)
            # inside a function: conditional within its body (the call decides the rest)
            here = funcs[-1][0] if funcs else None
            inner = any(stack[funcs[-1][1] + 1:]) or cmd.sep == "||" and not either or \
                (cmd.sep == "&&" and not after_module) if funcs else conditional
            if not stack and cmd.sep not in ("||", "&&", "|") and head == "exit":
                stop = True
                break
            if here is not None and not inner and head in ("exit", "{") and \
                    words[1 if head == "{" else 0:][:1] == ["exit"]:
                exiting.add(here)
            for var in [v for v, (_, depth) in loop_vars.items() if depth > len(stack)]:
                del loop_vars[var]  # its loop ended
            if opener == "for" and words[words.index("for") + 2:][:1] == ["in"]:
                at = words.index("for")
                values = [w for w in ws[at + 3:] if w.text not in ("do", ";")]
                if values and not any(_placeholder(v.text) for v in values):
                    loop_vars[words[at + 1]] = (values, len(stack))
            if failing and guard is not None and cmd.sep not in ("||", "&&", "|") and \
                    words[1 if head in ("then", "else") else 0:][:1] in (["exit"], ["return"]):
                guard.exits = True
            ends = not stack and cmd.sep not in ("||", "&&", "|") and head == "exec" \
                and len(words) > 1
            core = _strip_leaders(words)
            ws = ws[len(words) - len(core):]
            evaled = _eval_modulecmd(ws, body) if len(core) == 2 else None
            if evaled is not None:  # read as the `module ...` command it runs
                core, ws = [w.text for w in evaled], evaled
            # the assignments before the command (for it alone), then those it exports
            assigned = [(w, False) for w in words[:len(words) - len(core)]]
            if words[:1] == ["export"]:
                assigned += [(w, True) for w in words[1:]]
            for w, exported in assigned:
                key, eq, value = w.partition("=")
                if eq and exported and key == "SLURM_MPI_TYPE" and not conditional:
                    exported_pmi = _pmi_name(value)
                if eq and key == "MODULEPATH":
                    tree = f"MODULEPATH set at line {lineno}"
                    tree_paths += _tree_paths(value)
                    note(f"MODULEPATH set at line {lineno}: module trees the site may not "
                         "have; the modules loaded after it are checked only at a site "
                         "whose module list comes from those trees")
                elif eq and key == "PATH":
                    added = _path_note(value, lineno, note)
                    if added and not conditional and own_tools is None:
                        own_tools, own_from = added, _first_dir(value)
            # `module purge && module load x` runs x; `module is-avail x && ...` tests first
            after_module = bool(core) and core[0] in ("module", "ml", "source", ".") and \
                (module_command(core) or ("",))[0] not in ("is-avail", "is-loaded", "is-saved",
                                                           "is-used", "test")
            if core and core[0] in defined:
                calls.append((here, core[0], inner, lineno))
                call_args.append((here, core[0], inner, ws[1:]))
            kind = _activation(core)
            if kind:
                activates.add(kind)
            got = module_command(core)
            if got is not None and not conditional and here is None:
                unloads.extend(module_unloads(core))
            if got is not None:
                action, idx = got
                any_of: list[str] = []  # `module load-any a b c`: a, else b, else c
                if action == "load-any" and idx:
                    any_of = [core[k] for k in idx[1:] if not _placeholder(core[k])]
                    action, idx = "load", idx[:1]
                if action == "use":
                    paths = [core[k] for k in idx]
                    if paths:
                        tree = f"'module use {' '.join(paths)}' at line {lineno}"
                        tree_paths += paths
                        note(f"module use {' '.join(paths)} (line {lineno}): a module tree "
                             "the site may not have; the modules loaded after it are checked "
                             "only at a site whose module list comes from that tree")
                elif action == "restore":
                    note(f"module restore {' '.join(core[k] for k in idx) or '(default)'} "
                         f"(line {lineno}): a saved collection; its modules are not known "
                         "here")
                chain, tolerated = _fallbacks(cmds[ci + 1:], exiting) \
                    if action == "load" else ([], False)
                for j in range(len(chain)):
                    fallback_of.setdefault(ci + 1 + j, " ".join(core[k] for k in idx))
                for n, k in enumerate(idx if action in ("load", "try-load") else []):
                    m = core[k]
                    if not m.strip() or m.startswith("/") and not m.strip("/"):
                        continue  # an empty word ('' or a quote never closed) names nothing
                    var = re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", m)
                    if var and var.group(1) in loop_vars:
                        for word in loop_vars[var.group(1)][0]:  # respelled in the list
                            name, _, version = word.text.partition("/")
                            need = SoftwareNeed(
                                name=name, version=version or None, line=lineno,
                                written=word.text, unchecked=(
                                    f"may come from the tree of {tree}" if tree else
                                    f"loaded only in a branch or function (line {lineno})"
                                    if inner or here else None))
                            _add_load(need)
                            loads.append(ModuleLoad(need, word.start, word.end, tree is None,
                                                    bisect_right(offsets, word.start)))
                        continue
                    param = re.fullmatch(r"\$\{?([1-9@*])\}?", m)
                    if param and here is not None and action == "load":
                        param_loads.append((here, param.group(1), lineno, inner or tolerated
                                            or bool(tree), bool(tree)))
                        continue
                    if _placeholder(m):
                        note(f"module {m} (line {lineno}): named at run time; not checked")
                        continue
                    if m.startswith(("/", "./", "../", "~")):
                        note(f"module {m} (line {lineno}): a modulefile given by path; not "
                             "checked")
                        continue
                    after = body[ws[k].end:ws[k].end + 1] if ws[k].end > ws[k].start else ""
                    if after in ("<", ">") and m.endswith(("/", "@")):
                        # `gcc/>=12` unquoted: the shell reads `>=12` as a redirection
                        note(f"module {m} (line {lineno}): the '{after}' right after it is a "
                             "redirection of the shell, not part of the version (a range "
                             "such as gcc/>=12 is no module syntax; Environment Modules "
                             "reads gcc@12: with advanced_version_spec); this loads the "
                             f"default {m.rstrip('/@')}")
                    name, _, version = m.partition("/")
                    hidden = any(p.startswith(".") for p in m.split("/"))
                    why = "try-load" if action == "try-load" else \
                        f"may come from the tree of {tree}" if tree else \
                        f"a fallback if '{fallback_of[ci]}' fails (line {lineno})" \
                        if ci in fallback_of else None
                    branch = why is None and inner  # only in a branch: unless its if decides
                    # the condition of an if (not itself in a branch): the branch run on its
                    # failure decides
                    tested = branch and opens_if and not (
                        any(stack[funcs[-1][1] + 1:-1]) if funcs else any(stack[:-1]))
                    where = [] if not branch or tested or here is not None else [
                        w for w in _cluster_context(branches, events, arm, ws[k].start,
                                                    len(stack)) or (
                            [_cluster_test([w.text for w in cmds[ci - 1].words]) or ""]
                            if cmd.sep == "&&" and ci else []) if w]
                    why = why or (
                        f"its failure is tolerated (if on line {lineno})" if tested else
                        "loaded only on a cluster not named by "
                        f"{', '.join(c[1:] for c in where if c[0] == '!')} (line {lineno})"
                        if where[:1] == ["*"] and len(where) > 1 else
                        "loaded only on cluster "
                        f"{', '.join(c for c in where if c[0] != '!')} (line {lineno})"
                        if where else
                        f"loaded only in a branch or function (line {lineno})" if branch else
                        f"its failure is tolerated (|| on line {lineno})" if tolerated else
                        None)
                    deferred = why is None and here is not None  # the calls decide
                    if deferred:
                        why = f"in function {here}, which the script never calls"
                    elif why is None and hidden:  # checked against a listing holding them
                        why = f"{HIDDEN_MODULE} (line {lineno}): checked where the site " \
                            "lists hidden modules"
                    # after `module use` only: checked where the site has those trees
                    trees = list(tree_paths) if tree and action == "load" and \
                        here is None and not hidden and not inner and not tolerated and \
                        ci not in fallback_of else []
                    need = SoftwareNeed(name=name, version=version or None, line=lineno,
                                        written=m, unchecked=why,
                                        alternatives=any_of + _alternatives(chain, n,
                                                                            len(idx)),
                                        clusters=where, trees=trees)
                    _add_load(need)
                    loads.append(ModuleLoad(need, ws[k].start, ws[k].end,
                                            rewrite=tree is None and not hidden))
                    vendor = _module_vendor(name)
                    if tested:
                        if not guards or guards[-1].depth != len(stack) or \
                                guards[-1].line != lineno:
                            guards.append(_Guard(len(stack), lineno, here,
                                                 negated="!" in words[:words.index(core[0])]))
                        guards[-1].needs.append(need)
                    if failing and guard is not None and cmd.sep not in ("||", "&&", "|") \
                            and action == "load":
                        guard.fallbacks.append(need)
                    if deferred and here is not None:
                        in_function.append((need, here, lineno))
                    elif vendor and not why:
                        vendors.setdefault(vendor, f"module {m}, line {lineno}")
            found = container_use(core)
            if found is not None:
                found = found.model_copy(update={"line": lineno, "unchecked": (
                    f"used only in a branch or function (line {lineno})" if conditional
                    else None)})
                if container is None or _better(found, container):
                    container = found
                if found.gpu and not conditional:
                    vendors.setdefault(found.gpu, f"{found.runtime} with GPUs, line {lineno}")
                if here is not None and not inner:
                    uses.append((here, "container", found, lineno))
                scheme = re.match(r"(docker|library|oras|shub|https?)://", found.image)
                if scheme and found.image_known:
                    note(f"{found.runtime} fetches {found.image} at run time (line {lineno}):"
                         " the compute nodes need network access; not checked")
            if core:
                prog = core[0].rsplit("/", 1)[-1]
                launcher = _launcher(prog, core)
                if launcher and mpi is None and not conditional:
                    mpi, mpi_own, mpi_from = launcher, own_tools, own_from
                if launcher == "srun" and pmi is None and not conditional:
                    pmi = _srun_pmi(core) or _pmi_name(next(
                        (w.partition("=")[2] for w in words[:len(words) - len(core)]
                         if w.startswith("SLURM_MPI_TYPE=")), "")) or exported_pmi
                if launcher and here is not None and not inner:
                    uses.append((here, "launcher", launcher, lineno))
                if launcher in _SITE_LAUNCHERS:
                    note(f"{launcher} (line {lineno}) is the launcher of "
                         f"{_SITE_LAUNCHERS[launcher]} sites; not checked")
                # the command itself, or what a launcher runs (`srun nvidia-smi -L`)
                for word in core[:1] + (core[1:] if launcher else []):
                    tool = word.rsplit("/", 1)[-1]
                    if tool in _VENDOR_COMMANDS and not conditional:
                        vendors.setdefault(_VENDOR_COMMANDS[tool], f"{tool}, line {lineno}")
                    elif tool in _VENDOR_COMMANDS and here is not None and not inner:
                        uses.append((here, "tool", tool, lineno))
                found_envs: list[EnvNeed] = []
                own = _env_notes(core, lineno, note, found_envs)
                for env in found_envs:
                    why = env.unchecked or (
                        f"used only in a branch or function (line {lineno})"
                        if conditional or here is not None else None)
                    envs.append(env.model_copy(update={"unchecked": why}))
                if own and not conditional and own_tools is None:
                    own_tools = own
                    own_from = literal_path(core[1]) if prog in ("source", ".") and \
                        len(core) > 1 else None
                script = _shell_string(core, bool(launcher)) if found is None else None
                # where the string's text starts in the body, when it is written as is
                # (`'...'`, or `"..."` without escapes): its loads are respelled there
                at = next((w.start + 1 for w in ws if w.text == script and
                           body[w.start:w.end] in (f"'{script}'", f'"{script}"')), None)
                for ld in scan_body(script).loads if script else []:
                    # `bash -c 'module load x && ...'`: read as this line's own loads
                    why = ld.need.unchecked or (
                        f"loaded only in a branch or function (line {lineno})" if inner
                        else None)
                    need = ld.need.model_copy(update={"line": lineno, "unchecked": why})
                    if why is None and here is not None:
                        need.unchecked = f"in function {here}, which the script never calls"
                        in_function.append((need, here, lineno))
                    _add_load(need)
                    loads.append(ModuleLoad(need, ld.start + (at or 0), ld.end + (at or 0),
                                            rewrite=at is not None and ld.rewrite
                                            and tree is None))
            if ends:
                stop = True
                break
        if events:
            arm = events[-1][1]  # the arm the next line goes on in
        for delim, tabs, reader in [(d, t, c) for c in cmds for d, t in c.heredocs]:
            k = i
            while k < len(lines) and (lines[k].lstrip("\t") if tabs else lines[k]
                                      ).rstrip("\r").strip() != delim:
                k += 1
            if _shell_reads(reader):
                skip_lines.add(k)  # its lines are the body's own commands
                continue
            # data for another program (often a job script written or submitted): its
            # loads are kept, but not checked nor respelled
            inner = scan_body(body[offsets[i]:offsets[k]] if k < len(lines) else
                              body[offsets[i]:]) if i < len(lines) else None
            prog = reader.words[0].text if reader.words else "another program"
            for ld in inner.loads if inner else []:
                need = ld.need.model_copy(update={
                    "line": (ld.need.line or 0) + i,
                    "unchecked": f"in a here-document {prog} reads (line {lineno})"})
                software.append(need)
                loads.append(ModuleLoad(need, ld.start + offsets[i], ld.end + offsets[i],
                                        rewrite=False))
            i = k + 1
    called, maybe = _called(calls)
    for need in _by_arguments(param_loads, call_args, called, software, loads, note,
                              offsets):
        if vendor := _module_vendor(need.name):
            vendors.setdefault(vendor, f"module {need.full}, line {need.line}")
    for need, func, lineno in in_function:
        if func in called:
            need.unchecked = None
            if vendor := _module_vendor(need.name):
                vendors.setdefault(vendor, f"module {need.full}, line {lineno}")
        elif func in maybe:
            need.unchecked = f"in function {func}, called only in a branch (line {lineno})"
    for func, kind, what, lineno in uses:
        if func not in called:
            continue
        if kind == "container":  # used in a function the script surely calls
            what.unchecked = None
            if container is not what and (container is None or _better(what, container)):
                container = what
            if what.gpu:
                vendors.setdefault(what.gpu, f"{what.runtime} with GPUs, line {lineno}")
        elif kind == "launcher":
            if mpi is None:
                mpi, mpi_own, mpi_from = what, own_tools, own_from
        else:
            vendors.setdefault(_VENDOR_COMMANDS[what], f"{what}, line {lineno}")
    role = "mamba" if "mamba" in activates else "conda" if activates else None
    for need in software if role else []:
        if any(_CONDA_DIST.fullmatch(p) for p in need.full.split("/")):
            need.role = role
    # a conda the job sets up itself (a distribution's module, its conda.sh, a hook from a
    # path) keeps environments the login's `conda env list` may not show
    own_conda = next((f"module {n.full} (line {n.line})" for n in software if n.role), None) \
        or _own_conda_setup(lines)
    spack_root = _own_spack_setup(lines)
    for env in envs:
        if env.kind in ("spack", "spack-env") and spack_root is not None:
            env.root = spack_root[0]
    if spack_root is not None and any(e.kind.startswith("spack") for e in envs):
        note(f"sources {spack_root[0]}/share/spack/setup-env.sh (line {spack_root[1]}): its "
             "packages and environments are checked only where the login's spack is "
             f"{spack_root[0]}/bin/spack")
    for env in envs:
        if env.kind == "conda" and env.unchecked is None and own_conda:
            env.unchecked = f"the job sets its conda up itself ({own_conda})"
        checked = f"environment '{env.name}' (line {env.line}) must exist at the site" \
            f"{_conda_how(env.name)}"
        if env.kind == "conda" and env.unchecked and not env.unchecked.startswith(
                ("a path", "named at run time")):
            notes[:] = [n.replace(checked, checked.replace(
                _conda_how(env.name), f" (not checked: {env.unchecked})")) for n in notes]
        if env.kind == "spack" and env.unchecked:  # the note's "checked where ..." is not so
            said = f"spack load {env.written} (line {env.line}): Spack packages are not in " \
                "the site's module list; "
            notes[:] = [n.replace(said + _SPACK_CHECKED, said + f"not checked: {env.unchecked}")
                        if n.startswith(said) else n for n in notes]
    vendor = next(iter(vendors)) if len(vendors) == 1 else None
    use = next((v for v in vendors.values() if not v.startswith("module ")), None)
    return BodyScan(software, loads, container, mpi, vendor, notes, use, pmi, mpi_own,
                    mpi_from, envs, runs_commands)


_SHELLS = {"bash", "sh", "zsh", "ksh", "dash"}


def _shell_string(cmd: list[str], launched: bool) -> str | None:
    """The command string a shell runs (`bash -c '...'`, `bash -lc "..."`, `srun bash -c
    '...'`); None when the command is no such shell."""
    starts = [0] if cmd[0].rsplit("/", 1)[-1] in _SHELLS else \
        [k for k, w in enumerate(cmd) if w.rsplit("/", 1)[-1] in _SHELLS][:1] if launched \
        else []
    for k in range(starts[0] + 1, len(cmd) - 1) if starts else ():
        if not cmd[k].startswith("-"):
            return None  # a script file, not a string
        if not cmd[k].startswith("--") and "c" in cmd[k][1:]:
            return cmd[k + 1]
    return None


# conda distributions a site may give as modules (Anaconda3, miniconda3, Miniforge3, ...)
_CONDA_DIST = re.compile(r"(?i)(?:ana|mini)conda[0-9]*|miniforge[0-9]*|mambaforge[0-9]*"
                         r"|conda|mamba")


_CLUSTER_VAR = re.compile(r"\$\{?SLURM_CLUSTER_NAME\}?")
_CLUSTER_CASE = re.compile(r"\bcase\s+[\"']?\$\{?SLURM_CLUSTER_NAME\}?[\"']?\s+in\b")
_ARM = re.compile(r"(?:^|;;&?|;&|\bin\b|\n)\s*\(?\s*([^\s()|;\"'$]+(?:\s*\|\s*[^\s()|;\"'$]+)*)"
                  r"\s*\)")


@dataclass
class _ClusterBranch:
    """A branch on the cluster the job runs on: `case $SLURM_CLUSTER_NAME in a|b) ...` or
    `if [[ $SLURM_CLUSTER_NAME == a ]]; then ... elif ...`."""

    depth: int  # the stack's size while its block is open
    kind: str  # "case" / "if"
    arms: list[list[str]] = field(default_factory=list)  # each arm's patterns, in order
    current: list[str] | None = None  # the if-branch being read (None: else)
    # an `elif` on something else than the cluster: its else runs on no cluster for sure
    other_test: bool = False


def _cluster_test(words: list[str]) -> str | None:
    """The cluster name a test compares $SLURM_CLUSTER_NAME with (`[[ $SLURM_CLUSTER_NAME
    == a ]]`, `[ "$SLURM_CLUSTER_NAME" = a ]`, `test ...`); None for another test."""
    for k, w in enumerate(words[:-2]):
        if _CLUSTER_VAR.fullmatch(w) and words[k + 1] in ("=", "==") and \
                not _placeholder(words[k + 2]) and words[k + 2] not in ("]", "]]"):
            return words[k + 2]
    return None


def _arm_events(text: str, base: int) -> list[tuple[int, list[str] | None]]:
    """Where case arms start (`a|b)`, with their patterns) and end (`;;`) in a line."""
    events: list[tuple[int, list[str] | None]] = [
        (base + m.end(), [p.strip() for p in m.group(1).split("|")])
        for m in _ARM.finditer(text) if m.group(1) not in ("esac", "in", "case")]
    events += [(base + m.start(), None) for m in re.finditer(r";;&?|;&", text)]
    return sorted(events, key=lambda e: e[0])


def _cluster_context(branches: list[_ClusterBranch], events: list[tuple[int, list[str] | None]],
                     arm: list[str] | None, at: int, depth: int) -> list[str]:
    """The clusters a word at offset `at` runs on: the innermost cluster branch it is in,
    as patterns ("!P" for an earlier arm's P, which wins); [] when unknown or `*`."""
    for b in reversed(branches):
        if b.depth > depth:
            continue
        if b.kind == "if":
            here = b.current
            if here is None:  # the else: every cluster no arm above names
                if b.other_test:
                    return []
                here = ["*"]
                earlier = [p for a in b.arms for p in a]
            else:
                seen = next((i for i, a in enumerate(b.arms) if a is here), 0)
                earlier = [p for a in b.arms[:seen] for p in a]
        else:
            here = arm
            for pos, patterns in events:
                if pos <= at:
                    here = patterns
            if here is not None and here not in b.arms:
                b.arms.append(here)
            earlier = [p for a in b.arms[:b.arms.index(here)] for p in a] if here else []
        if not here:
            return []
        if "*" in here:  # a `*` arm: any cluster the arms before it do not name
            here = ["*"]
        return here + [f"!{p}" for p in earlier]
    return []


@dataclass
class _Guard:
    """An `if` whose condition loads modules (`if ! module load X; then ...; fi`, `if
    module load X; then ...; else ...; fi`): its branch that runs when the load fails
    decides whether X is needed (that branch exits, or loads a fallback) or tolerated."""

    depth: int  # the stack's size while its block is open
    line: int
    func: str | None  # the function it is in
    negated: bool  # `if !`: the `then` branch runs on failure, else the `else` one
    needs: list[SoftwareNeed] = field(default_factory=list)  # the condition's loads
    part: str = "if"  # where the reading is: "if", "then", "else", "elif"
    exits: bool = False  # the failure branch ends the job
    fallbacks: list[SoftwareNeed] = field(default_factory=list)


def _settle(guard: _Guard, in_function: list[tuple[SoftwareNeed, str, int]],
            vendors: dict[str, str]) -> None:
    """At the `fi`: the condition's loads are needed when the failure branch exits or loads
    a fallback (which is then an alternative); an `elif` or a branch that goes on without
    them leaves them tolerated."""
    if guard.part == "elif" or not (guard.exits or guard.fallbacks):
        return
    first = " ".join(n.full for n in guard.needs)
    for need in guard.needs:
        need.alternatives = [f.full for f in guard.fallbacks]
        if guard.func is not None:
            need.unchecked = f"in function {guard.func}, which the script never calls"
            in_function.append((need, guard.func, guard.line))
            continue
        need.unchecked = None
        if vendor := _module_vendor(need.name):
            vendors.setdefault(vendor, f"module {need.full}, line {guard.line}")
    for f in guard.fallbacks:
        f.unchecked = f"a fallback if '{first}' fails (line {f.line})"


def _by_arguments(param_loads: list[tuple[str, str, int, bool, bool]],
                  call_args: list[tuple[str | None, str, bool, list[_Word]]], called: set[str],
                  software: list[SoftwareNeed], loads: list[ModuleLoad], note: Any,
                  offsets: list[int]) -> list[SoftwareNeed]:
    """The modules a function loads by its parameters (`module load "$1"`), named by the
    arguments of each call: needed where the call surely runs, kept unchecked elsewhere;
    respelled in the call's words. Returns the needed ones."""
    needed: list[SoftwareNeed] = []
    for func, param, line, conditional, tree in param_loads:
        named = False
        for caller, callee, in_branch, args in call_args:
            if callee != func:
                continue
            values = args if param in "@*" else args[int(param) - 1:int(param)]
            sure = not conditional and not in_branch and (caller is None or caller in called)
            for word in values:
                value = word.text
                if _placeholder(value) or not value.strip() or value.startswith(("/", ".", "~")):
                    continue
                named = True
                name, _, version = value.partition("/")
                why = None if sure else \
                    f"in function {func}, called only in a branch or not at all (line {line})"
                need = SoftwareNeed(name=name, version=version or None, line=line,
                                    written=value, unchecked=why)
                software.append(need)
                loads.append(ModuleLoad(need, word.start, word.end, not tree,
                                        bisect_right(offsets, word.start)))
                if sure:
                    needed.append(need)
        if not named:
            note(f"module ${param} (line {line}): named at run time; not checked")
    return needed


def _open_function(name: str | None, stack: list[bool], funcs: list[tuple[str, int]],
                   defined: set[str]) -> None:
    """A function's body opens (its block is the last in `stack`)."""
    if name:
        funcs.append((name, len(stack) - 1))
        defined.add(name)


def _called(calls: list[tuple[str | None, str, bool, int]]) -> tuple[set[str], set[str]]:
    """(functions the script surely calls, those it calls only in a branch): a call at the
    top level, or in a function that is itself called, counts."""
    sure: set[str] = set()
    maybe: set[str] = set()
    changed = True
    while changed:
        changed = False
        for caller, callee, conditional, _ in calls:
            if caller is None or caller in sure:
                into = maybe if conditional else sure
            elif caller in maybe:
                into = maybe
            else:
                continue
            if callee not in into and callee not in sure:
                into.add(callee)
                changed = True
    return sure, maybe - sure


def _fallbacks(rest: list[_Cmd], exiting: set[str]) -> tuple[list[list[str]], bool]:
    """After a load: the loads it falls back to (`|| module load b || ml c`), each as its
    modules, and whether the last failure is tolerated too (`|| true`, `|| echo ...`)
    rather than ending the job (`|| exit 1`, or nothing)."""
    chain: list[list[str]] = []
    k = 0
    while k < len(rest) and rest[k].sep == "||":
        core = _strip_leaders([w.text for w in rest[k].words])
        got = module_command(core)
        if got is None or got[0] != "load":
            break
        chain.append([core[i] for i in got[1]])
        k += 1
    if not chain:
        return [], _tolerated(rest, exiting)
    return chain, _tolerated(rest[k:], exiting)


def _alternatives(chain: list[list[str]], n: int, count: int) -> list[str]:
    """The modules that stand in for the n-th of `count` loaded together: the n-th of
    each fallback load of as many modules, else all of a fallback's."""
    out: list[str] = []
    for mods in chain:
        out += [mods[n]] if len(mods) == count else mods
    return [m for m in out if not _placeholder(m)]


def _activation(cmd: list[str]) -> str | None:
    """"conda" / "mamba" for a command that activates a named environment (`conda activate
    ENV`, `source activate ENV`, `mamba activate ENV`, `source $CONDA_PREFIX/bin/activate
    ENV`); None otherwise (`micromamba` is its own program, not a distribution's)."""
    if not cmd:
        return None
    prog = cmd[0].rsplit("/", 1)[-1]
    args = [w for w in cmd[1:] if not w.startswith("-")]
    if prog in ("conda", "mamba") and args[:1] == ["activate"] and len(args) > 1:
        return prog
    if prog in ("source", ".") and len(args) > 1 and args[0].rsplit("/", 1)[-1] == "activate":
        return "conda"
    return None


def _better(new: ContainerNeed, old: ContainerNeed) -> bool:
    """The container to keep: one used outside branches, then one whose image is known."""
    return (new.unchecked is None, new.image_known) > (old.unchecked is None, old.image_known)


def _open_quote(text: str, quote: str = "") -> str:
    """The quote (' or ") `text` ends inside, given the one it starts inside ("" none)."""
    i, start = 0, not quote
    while i < len(text):
        c = text[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            i += 1
        elif quote == '"':
            quote = "" if c == '"' else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and start:
            j = text.find("\n", i)
            if j < 0:
                return ""
            i = j
        start = c in " \t\n;&|()" and not quote
        i += 1
    return quote


def _tolerated(rest: list[_Cmd], exiting: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether the commands after one (on its line) let it fail: `|| echo ...`,
    `|| true`, `|| module load OTHER`, but not `|| exit 1`, `|| { ...; exit 1; }`, nor a
    call of one of the script's functions that exits (`|| die "no gcc"`)."""
    if not rest or rest[0].sep != "||":
        return False
    depth = 0
    for k, cmd in enumerate(rest):
        if k and depth == 0 and cmd.sep not in ("||", "&&"):
            break  # the and-or list ended
        words = [w.text for w in cmd.words]
        if words[:1] == ["{"]:
            depth, words = depth + 1, words[1:]
        if words[:1] == ["}"]:
            depth, words = depth - 1, words[1:]
        if words[:1] in (["exit"], ["return"], ["false"], ["kill"]) or \
                words[:1] and words[0] in exiting:
            return False
    return True


def _shell_reads(cmd: _Cmd) -> bool:
    """A here-document a shell runs (`bash <<EOF`, `srun bash -s <<EOF`), not data."""
    words = [w.text for w in cmd.words]
    return bool(words) and words[0] not in ("cat", "tee") and any(
        w.rsplit("/", 1)[-1] in ("bash", "sh", "zsh", "ksh", "dash") for w in words)


# MPI launchers named for their MPI: HPE MPT's mpiexec_mpt, MVAPICH's mpirun_rsh
_NAMED_LAUNCHERS = {"orterun": "mpirun", "mpiexec_mpt": "mpiexec", "mpirun_rsh": "mpirun"}


def _launcher(prog: str, cmd: list[str]) -> str | None:
    stem = prog.split(".", 1)[0]
    if stem in ("mpirun", "mpiexec") or stem in _NAMED_LAUNCHERS:
        return _NAMED_LAUNCHERS.get(stem, stem)
    if prog in ("srun", "aprun", "jsrun", "ibrun"):
        return prog
    if prog == "flux" and len(cmd) > 1 and cmd[1] in ("run", "submit", "mini", "bulksubmit"):
        return "flux"
    return None


def _pmi_name(value: str) -> str | None:
    """An MPI plugin's name as srun takes it (`pmix`, `pmix_v4`, `pmi2`); None for what
    only the shell knows (`$TYPE`) or is not a plugin name."""
    value = value.strip("'\"").lower()
    return value if re.fullmatch(r"[a-z][a-z0-9_]*", value) else None


def _srun_pmi(cmd: list[str]) -> str | None:
    """srun's `--mpi=TYPE` (or `--mpi TYPE`), before the program it runs."""
    for k, w in enumerate(cmd[1:], 1):
        if w.startswith("--mpi="):
            return _pmi_name(w.split("=", 1)[1])
        if w == "--mpi" and k + 1 < len(cmd):
            return _pmi_name(cmd[k + 1])
    return None


def _module_vendor(name: str) -> str | None:
    low = name.lower()
    if low in _NVIDIA_MODULES or low.startswith("craype-accel-nvidia"):
        return "nvidia"
    if low in _AMD_MODULES or low.startswith("craype-accel-amd"):
        return "amd"
    return None


def _path_note(value: str, lineno: int, note: Any) -> str | None:
    """Notes the directories a PATH assignment adds; what it adds (`$HOME/opt/bin` too: a
    program the job runs may come from there), or None for nothing but $PATH."""
    dirs = [d for d in value.split(":") if d.startswith("/")]
    if dirs:
        note(f"PATH adds {', '.join(dirs)} (line {lineno}): must exist at the site; "
             "not checked")
    added = [d for d in value.split(":") if d and d not in ("$PATH", "${PATH}")]
    return f"PATH adds {', '.join(added)} (line {lineno})" if added else None


def literal_path(word: str) -> str | None:
    """A path as written in a script, the home spelt `~`: `$HOME/x`, `${HOME}/x` and `~/x`
    are `~/x`; None for a relative path or one holding another variable."""
    path = re.sub(r"^(?:\$HOME|\$\{HOME\}|~)(?=/|$)", "~", word)
    if "$" in path or not path.startswith(("/", "~/")):
        return None
    return re.sub(r"/+", "/", path).rstrip("/") or "/"


def _first_dir(value: str) -> str | None:
    """The first directory a PATH assignment adds, as a literal path."""
    return next((p for d in value.split(":") if d not in ("$PATH", "${PATH}")
                 for p in [literal_path(d)] if p), None)


def _tree_paths(value: str) -> list[str]:
    """The module trees a MODULEPATH assignment adds (not the `$MODULEPATH` it keeps)."""
    return [p for p in value.split(":") if p and p not in ("$MODULEPATH", "${MODULEPATH}")]


# what a job sources only to set its shell up: the module system's and the tools' own
# scripts (`/etc/profile.d/modules.sh`, `$LMOD_PKG/init/bash`, `conda.sh`, Spack's
# `setup-env.sh`)
_SHELL_SETUP = re.compile(r"^/etc/(?:profile|bashrc)|/init/(?:bash|sh|zsh|ksh|profile)$|"
                          r"(?:^|/)(?:modules|lmod|z00_lmod|conda|mamba|setup-env)\.(?:sh|bash)$")


# a Spack spec's package: its name, then `@VERSION` up to a variant, compiler or dependency
_SPACK_SPEC = re.compile(r"([a-z0-9][a-z0-9_.-]*)(?:@([^%+~^\s]*))?")


def _spack_need(spec: str, lineno: int) -> EnvNeed:
    """`hdf5@1.14.3%gcc@12+mpi` -> hdf5, version 1.14.3; a version range (`@1.12:1.14`,
    `@1.14:`) or a list is kept by its name only."""
    m = _SPACK_SPEC.match(spec)
    name, version = (m.group(1), m.group(2)) if m else (spec, None)
    if version and (":" in version or "," in version or "=" in version):
        version = None
    return EnvNeed(kind="spack", name=name, version=version or None, line=lineno,
                   written=spec, unchecked=(f"named at run time (line {lineno})"
                                            if _placeholder(spec) else None))


def _env_notes(cmd: list[str], lineno: int, note: Any,
               envs: list[EnvNeed] | None = None) -> str | None:
    """Environments the job activates or builds at run time, as notes (and, in `envs`,
    the Spack packages and named environments a site's discovery can check); what may
    bring programs of its own (a sourced helper, Spack, a conda environment), or None."""
    envs = envs if envs is not None else []
    prog = cmd[0].rsplit("/", 1)[-1]
    if prog == "eval":  # `eval "$(spack load --sh hdf5)"`: the command that prints it
        own = None
        for arg in cmd[1:]:
            inner = re.fullmatch(r"\$\((.*)\)|`(.*)`", arg, re.S)
            words = [w.text for w in _words(inner.group(1) or inner.group(2) or "")
                     if not w.op] if inner else []
            if words:
                own = own or _env_notes(words, lineno, note, envs)
        return own
    own = None
    args = [w for w in cmd[1:] if not w.startswith("-")]
    if prog in ("conda", "mamba", "micromamba") and args[:1] == ["activate"] and len(args) > 1:
        note(f"{prog} environment '{args[1]}' (line {lineno}) must exist at the site"
             + _conda_how(args[1]))
        envs.append(_conda_need(prog, args[1], lineno))
        own = f"{prog} environment '{args[1]}' (line {lineno})"  # may hold an MPI (mpich)
    elif prog in ("conda", "mamba", "micromamba") and args[:1] == ["run"] and \
            (env := _run_env(cmd[cmd.index("run") + 1:])) is not None:
        # `conda run -n NAME prog`, `micromamba run -p PATH prog`: the program runs in it
        note(f"{prog} environment '{env}' (line {lineno}) must exist at the site"
             + _conda_how(env))
        envs.append(_conda_need(prog, env, lineno))
        own = f"{prog} environment '{env}' (line {lineno})"
    elif prog in ("source", ".") and args and args[0].rsplit("/", 1)[-1] == "activate":
        if len(args) > 1:
            note(f"conda environment '{args[1]}' (line {lineno}) must exist at the site"
                 + _conda_how(args[1]))
            envs.append(_conda_need("conda", args[1], lineno))
            own = f"conda environment '{args[1]}' (line {lineno})"
        elif "/" in args[0]:
            note(f"virtual environment {args[0].rsplit('/', 2)[0]} (line {lineno}) must "
                 "exist at the site")
    elif prog in ("source", ".") and args and not _SHELL_SETUP.search(args[0]):
        note(f"sources {args[0]} (line {lineno}): a helper read at run time; the modules "
             "and environments it loads are not known here")
        own = f"sources {args[0]} (line {lineno})"
    installs = (prog in ("pip", "pip3") and args[:1] == ["install"]) or (
        prog.startswith("python") and cmd[1:3] == ["-m", "pip"] and "install" in cmd) or (
        prog in ("conda", "mamba", "micromamba") and args[:1] in (["install"], ["create"]))
    if installs and "--no-index" not in cmd and "--offline" not in cmd:
        note(f"{prog} installs packages at run time (line {lineno}): the compute nodes "
                 "need network access")
    # project environments a tool builds (or checks) when the job runs: the tool must be
    # on the site's PATH, and a missing environment is fetched from the network
    if prog == "pixi" and args[:1] in (["run"], ["shell"], ["exec"]):
        note(f"pixi {args[0]} (line {lineno}): pixi must be on the site's PATH; it installs "
             "the project's environment (pixi.toml) at run time where it is missing, so the "
             "compute nodes need network access unless it is installed; not checked")
        own = f"pixi environment (line {lineno})"
    if prog == "uv" and args[:1] == ["run"] or prog == "uvx" or \
            prog == "uv" and args[:2] == ["tool", "run"]:
        what = "uvx" if prog == "uvx" else f"uv {' '.join(args[:2 if args[0] == 'tool' else 1])}"
        note(f"{what} (line {lineno}): uv must be on the site's PATH; it syncs the project's "
             "environment (or the tool's) at run time, so the compute nodes need network "
             "access unless it is there already; not checked")
        if (prog == "uvx" or args[0] == "tool" or "--with" in cmd or any(
                a.startswith("--with=") or a == "--with-requirements" for a in cmd)) and \
                "--offline" not in cmd:
            note(f"{prog} installs packages at run time (line {lineno}): the compute "
                 "nodes need network access")
        own = f"uv environment (line {lineno})"
    spack = _spack_words(cmd) if prog == "spack" else []
    if spack[:1] == ["load"]:
        for pkg in [a for a in spack[1:] if a[:1].isalnum()]:  # not +variant, ^dep, %comp,
            # nor `--sh`, nor a hash (`/abc1234`)
            note(f"spack load {pkg} (line {lineno}): Spack packages are not in the site's "
                 f"module list; {_SPACK_CHECKED}")
            envs.append(_spack_need(pkg, lineno))
            own = own or f"spack load {pkg} (line {lineno})"
    if spack[:2] == ["env", "activate"] or prog == "spacktivate":
        words = spack[2:] if prog == "spack" else _spack_words(["spack", "env", "activate",
                                                               *cmd[1:]])[2:]
        env = words[:1]
        if env:
            note(f"spack environment '{env[0]}' (line {lineno}) must exist at the site; its "
                 "packages are not checked")
            as_dir = any(w in ("-d", "--dir") or w.startswith("--dir=") for w in cmd)
            envs.append(EnvNeed(kind="spack-env", name=env[0], line=lineno, unchecked=(
                f"named at run time (line {lineno})" if _placeholder(env[0]) else
                f"a directory (line {lineno}), not a named environment"
                if as_dir or "/" in env[0] or env[0].startswith((".", "~")) else None)))
            own = f"spack environment '{env[0]}' (line {lineno})"
    return own


_SPACK_CHECKED = "checked where discovery listed Spack's installed packages (`spack find`)"
# Spack's options that take a value: its own before the subcommand (`spack -e ENV load`),
# and `load --only package`, `env activate -v VIEW`
_SPACK_VALUED = {"-e", "--env", "-D", "--env-dir", "-C", "--config-scope", "-c", "--config",
                 "--only", "-v", "--with-view"}


def _spack_words(cmd: list[str]) -> list[str]:
    """A `spack ...` command's subcommand and arguments without its options and their
    values (`spack -e proj load --only package hdf5` -> ['load', 'hdf5']); a directory
    given to `env activate -d DIR` is kept (it is what is activated)."""
    out: list[str] = []
    i = 1
    while i < len(cmd):
        w = cmd[i]
        if w in _SPACK_VALUED:
            i += 2
            continue
        if not w.startswith("-"):
            out.append(w)
        i += 1
    return out


_CONDA_SETUP = re.compile(r"^\s*(?:source|\.)\s+(\S*(?:conda|mamba)\.sh)\b|"
                          r"^\s*eval\s+\S*\$\((/\S*(?:conda|mamba))\s+shell|"
                          # `source ~/miniconda3/bin/activate NAME`: that install's activate
                          r"^\s*(?:source|\.)\s+(\S+/bin/activate)\s+[\w.+-]+\s*(?:#.*)?$")


_SPACK_SETUP = re.compile(r"^\s*(?:source|\.)\s+[\"']?(\S+?)/share/spack/setup-env\."
                          r"(?:sh|bash|csh|fish)[\"']?(?:\s|$)")


def _own_spack_setup(lines: list[str]) -> tuple[str, int] | None:
    """(the Spack root, line) of `source /opt/spack/share/spack/setup-env.sh`, the first."""
    for i, line in enumerate(lines, 1):
        if m := _SPACK_SETUP.search(line):
            return m.group(1).rstrip("/"), i
    return None


def _own_conda_setup(lines: list[str]) -> str | None:
    """`source /opt/miniforge3/etc/profile.d/conda.sh` or `eval "$(/opt/x/bin/conda shell.bash
    hook)"`: a conda other than the login's own, said with its line."""
    for i, line in enumerate(lines, 1):
        if m := _CONDA_SETUP.search(line):
            return f"{m.group(1) or m.group(2) or m.group(3)} (line {i})"
    return None


# `conda|mamba|micromamba run` options that take a value other than the environment's
_RUN_VALUE_OPTIONS = {"--cwd", "-r", "--root-prefix", "-a", "--attach", "--label", "-e",
                      "--env", "--rc-file"}


def _run_env(words: list[str]) -> str | None:
    """The environment `conda run` (mamba's, micromamba's) runs its program in: `-n NAME`,
    `--name=NAME`, `-p PATH`, `--prefix PATH`, read up to the program; None when it names
    none (the active or base environment)."""
    i = 0
    while i < len(words) and words[i].startswith("-"):
        w = words[i]
        for opt in ("--name", "--prefix"):
            if w.startswith(opt + "="):
                return w.split("=", 1)[1] or None
        if w in ("-n", "--name", "-p", "--prefix"):
            return words[i + 1] if i + 1 < len(words) else None
        i += 2 if w in _RUN_VALUE_OPTIONS else 1
    return None


def _conda_need(tool: str, env: str, lineno: int) -> EnvNeed:
    """A conda environment activated by name (checked where discovery listed the tool's
    environments) or by path (`/proj/envs/x`, `$ENVS/x`, `~/envs/x`: never checked)."""
    return EnvNeed(kind="conda", name=env, tool=tool, line=lineno, unchecked=(
        f"named at run time (line {lineno}): not checked" if _placeholder(env) else
        f"a path (line {lineno}): not checked" if "/" in env or env.startswith(("~", "."))
        else None))


def _conda_how(env: str) -> str:
    return " (named at run time: not checked)" if _placeholder(env) else \
        " (a path: not checked)" if "/" in env or env.startswith(("~", ".")) else \
        " (checked where discovery listed its environments)"


def body_needs(body: str) -> tuple[list[SoftwareNeed], ContainerNeed | None, str | None]:
    """Modules loaded, the first container used and the first MPI launcher, from the body."""
    scan = scan_body(body)
    return scan.software, scan.container, scan.mpi
