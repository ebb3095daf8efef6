"""Typed, scheduler-neutral models shared by every part of the engine."""

from __future__ import annotations

import copy
import difflib
import enum
import math
import re
import typing
import unicodedata
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from .digits import ascii_digits

# values no one can change in place: a copy shares them
_UNCHANGEABLE = frozenset({str, int, float, bool, bytes, type(None), datetime})


def copied(value: Any) -> Any:
    """A deep copy of `value` (a model, list, dict ...) to change: its models, lists, dicts
    and sets copied to any depth, its unchangeable values (text, numbers, times, enum
    members) shared, as `model_copy(deep=True)` gives it but without `copy.deepcopy`'s
    bookkeeping of each value (a workflow step's job is copied for each of its submits). A
    model with private or extra values, or a copy of its own (a shared read's), and any
    other value are copied by `copy.deepcopy`."""
    kind = type(value)
    if kind in _UNCHANGEABLE or isinstance(value, enum.Enum):
        return value
    if kind is list:
        return [copied(v) for v in value]
    if kind is dict:
        return {k: copied(v) for k, v in value.items()}
    if kind is tuple:
        return tuple(copied(v) for v in value)
    if isinstance(value, BaseModel) and not value.__pydantic_private__ \
            and not value.__pydantic_extra__ and not kind.__pydantic_root_model__ \
            and kind.__deepcopy__ is BaseModel.__deepcopy__:
        model = kind.__new__(kind)
        object.__setattr__(model, "__dict__", {k: copied(v) for k, v in value.__dict__.items()})
        object.__setattr__(model, "__pydantic_fields_set__", set(value.model_fields_set))
        for empty in ("__pydantic_extra__", "__pydantic_private__"):  # (None or {}: its own)
            object.__setattr__(model, empty, None if getattr(value, empty) is None else {})
        return model
    return copy.deepcopy(value)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def hms(seconds: float | None, *, days: bool = True) -> str:
    """A duration for people: H:MM:SS, from one day on D-HH:MM:SS; with `days=False` the hours
    keep counting past 24 (the job card, like the sidebar's). "-" when unknown."""
    if seconds is None:
        return "-"
    s = max(0, round(seconds))
    d, s = divmod(s, 86400) if days else (0, s)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{d}-{h:02d}:{m:02d}:{s:02d}" if d else f"{h}:{m:02d}:{s:02d}"


def hms_short(seconds: float) -> str:
    """'≈ 3 min' style: s below a minute, min below an hour, h with one decimal below two
    days, else d with one decimal. A value that rounds up to the next unit is said in it
    (59.6 s is "1 min", not "60 s")."""
    s = max(0.0, seconds)
    if round(s) < 60:
        return f"{s:.0f} s"
    if math.ceil(s / 60) < 60:
        return f"{math.ceil(s / 60):.0f} min"
    if s < 48 * 3600:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} d"


def describe_start(start_s: float, bound_s: float | None) -> str:
    """A pending job's predicted start for people: '≈ 3 min (90%: < 11 min)'."""
    text = f"≈ {hms_short(start_s)}"
    return text + (f" (90%: < {hms_short(bound_s)})" if bound_s is not None else "")


EXPLICIT_POLICY = "explicit"  # the placement of a job sent to a site given by name


def predicted_start(job: Job, now: datetime | None = None) -> dict[str, Any] | None:
    """The start the placement predicted for a job on its site: {"at", "bound" (the 90%
    upper bound, or None), "source" (the placement's: "calibrated", "scheduler" when the
    scheduler's own estimate is all there is, or "simulation"), "text": '≈ 3 min (90%: <
    11 min)', or "≈ 3 min (scheduler's estimate)", counted from `now` (default: from the
    decision)}; None when the job has no placement (an explicit site's comes just after its
    submit) or the placement had no estimate for its site."""
    pl = job.placement or {}
    mine = placed_verdict(job)
    if mine is None or not mine.get("estimated_start"):
        return None
    try:
        at = _aware(datetime.fromisoformat(mine["estimated_start"]))
        bound = _aware(datetime.fromisoformat(mine["start_bound"])) \
            if mine.get("start_bound") else None
        ref = _aware(now or datetime.fromisoformat(pl.get("now") or mine["estimated_start"]))
    except (TypeError, ValueError):
        return None
    text = describe_start((at - ref).total_seconds(),
                          (bound - ref).total_seconds() if bound else None)
    source = mine.get("start_source")
    if source == "scheduler" and bound is None:
        text += " (scheduler's estimate)"
    return {"at": at.isoformat(), "bound": bound.isoformat() if bound else None,
            "source": source, "text": text}


def placed_verdict(job: Job) -> dict[str, Any] | None:
    """The verdict the job's placement gave its own site (a dict, as stored), None when
    it has none or that site was not feasible."""
    return next((v for v in (job.placement or {}).get("ranked") or [] if isinstance(v, dict)
                 and v.get("site") == job.site and v.get("feasible")), None)


def _aware(t: datetime) -> datetime:
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class Directive(_Model):
    """A directive a dialect could not map onto JobSpec fields; kept verbatim."""

    dialect: str
    option: str  # e.g. "--mail-type", "-m", "-W"
    value: str | None = None
    raw: str  # the full original directive line, sentinel included


# spec.metadata key: the job's GPUs are its total (Slurm `--gpus=N` with no node count, Grid
# Engine's `-l gpu=N` beside an MPI PE), held in `gpus_per_node` with `nodes` unset; the
# scheduler may spread them over several nodes
GPUS_PER_JOB = "gpus_per_job"
# with it, what the job asks per GPU ({"cpus-per-gpu": C, "mem-per-gpu": MB}): on each node
# C and MB times the GPUs that node gets
PER_GPU = "per_gpu"


# spec.metadata key: True where any one of the job's dependencies suffices (Slurm
# `afterok:1?afternotok:2`, LSF `done(1) || exit(2)`), not all of them
DEPENDENCY_ANY = "dependency_any"


# spec.metadata key: the job's CPU-time limit in seconds, the CPU time all its processes
# may use together (PBS `-l cput`, Grid Engine `-l h_cpu`, LSF `-c`, normalized there)
CPU_TIME = "cpu_time_s"


# a PBS site's chunk resources that name the GPU model (`select=1:ngpus=2:gpu_model=a100`):
# the job's GPU type, kept as written for PBS
PBS_GPU_MODEL_KEYS = frozenset({"gpu_type", "gpu_model", "gputype", "gpu_model_name"})

# spec.metadata key: the job may run on any task count from MIN to MAX (LSF `-n MIN,MAX`, a
# Grid Engine MPI PE's slot range `-pe mpi MIN-MAX`), as [MIN, MAX]; `resources.tasks` is MIN
TASK_RANGE = "task_range"

# CPU architectures by their `uname -m` names, and every scheduler's other spelling of one
# (Grid Engine's `lx-*` arch strings, LSF's host types, Debian's `amd64`, Apple's `arm64`).
# i686 is 32-bit x86 and ia64 Itanium: neither runs an x86_64 program, so each is its own
# architecture. Grid Engine's lx-x86 and LSF's LINUX86 are 32-bit x86 Linux; LSF's LINUX64
# is Itanium Linux (its x86-64 Linux type is X86_64)
ARCHES = frozenset({"x86_64", "aarch64", "ppc64le", "ppc64", "riscv64", "i686", "ia64"})
ARCH_ALIASES = {"amd64": "x86_64", "x86-64": "x86_64", "x64": "x86_64", "arm64": "aarch64",
                "lx-amd64": "x86_64", "lx-arm64": "aarch64", "lx-aarch64": "aarch64",
                "lx-ppc64le": "ppc64le", "lx-ppc64": "ppc64", "lx-riscv64": "riscv64",
                "lx-x86": "i686", "lx-ia64": "ia64",
                "linux86": "i686", "linux64": "ia64", "linuxppc64le": "ppc64le",
                "linuxppc64": "ppc64", "linux_arm64": "aarch64"}


def arch_name(text: str | None) -> str | None:
    """A scheduler's architecture string as its `uname -m` name, or None where it names
    no CPU architecture (PBS's `linux`, an operating system only)."""
    a = (text or "").strip().lower()
    a = ARCH_ALIASES.get(a, a)
    return a if a in ARCHES else None


def gpus_of_job_over_unknown_nodes(spec: JobSpec) -> bool:
    """The GPUs are the job's total (GPUS_PER_JOB) and its several tasks have no node count:
    how many land on each node is the scheduler's choice, so no per-node count says it."""
    r = spec.resources  # tasks per node alone: one node (sbatch's default)
    return r.nodes is None and (r.tasks or 1) > 1 and r.gpus_per_node is not None \
        and spec.metadata.get(GPUS_PER_JOB) == r.gpus_per_node


def is_number_type(annotation: Any) -> bool:
    """Whether a field's type is a number (int or float, maybe Annotated or optional)."""
    if annotation in (int, float, "int", "float"):
        return True
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is Annotated:
        return is_number_type(args[0])
    return bool(args) and all(is_number_type(a) for a in args if a is not type(None))


def refuse_boolean_number(model: type[BaseModel], value: Any, field: str | None) -> Any:
    """`value` for `model`'s `field`; ValueError for a boolean where the field is a number:
    pydantic reads `true` as 1, so `"walltime_s": true` in a REST body (or `port: true` in
    a sites file) was a silent 1, not an error."""
    info = model.model_fields.get(field or "")
    if isinstance(value, bool) and info is not None and is_number_type(info.annotation) \
            and not any(getattr(m, "strict", False) for m in info.metadata):
        raise ValueError(f"expected a number, not the boolean {str(value).lower()}")
    return value


class Resources(_Model):
    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        return refuse_boolean_number(cls, value, info.field_name)

    nodes: int | None = None
    tasks: int | None = None
    tasks_per_node: int | None = None
    cpus_per_task: int | None = None
    gpus_per_node: int | None = None
    gpus_per_task: int | None = None
    gpu_type: str | None = None
    memory_mb: int | None = None  # per node
    memory_per_cpu_mb: int | None = None
    walltime_s: int | None = None
    # Processor affinity / GPU binding, kept in a neutral vocabulary:
    cpu_bind: str | None = None  # e.g. "cores", "threads", "none", "map_cpu:0,1"
    gpu_bind: str | None = None  # e.g. "closest", "none", "single:1"
    distribution: str | None = None  # e.g. "block", "cyclic"
    # a job component's own partition (a Slurm hetjob component naming another than the
    # first's); None: the job's `queue`. Unused in a job's own `resources`
    queue: str | None = None
    # a component in the site's default partition: a Slurm hetjob component naming none
    # where the first names one (sbatch does not carry --partition over to it)
    default_queue: bool = False
    # a component's own account and QOS (a Slurm hetjob component's; sbatch carries each
    # to the components after it); None: the job's
    account: str | None = None
    qos: str | None = None
    # a component's own advanced reservation (sbatch carries it to the components after
    # it, as the account); None: the job's. A component's own time limit is `walltime_s`
    # (None: the job's); the job's `walltime_s` is then the longest
    reservation: str | None = None
    # a component's own node features (a Slurm hetjob component's --constraint, which
    # sbatch does not carry over: [] a component asking none); None: the job's
    features: list[str] | None = None
    # a component's own exclusivity (a Slurm hetjob component's --exclusive, which sbatch
    # does not carry over); None: the job's
    exclusive: bool | None = None
    # a component's own generic resources beside its GPUs (a Slurm hetjob component's
    # --gres entries such as nvme:1, not carried over either); None: none
    gres: str | None = None


class Constraints(_Model):
    architecture: str | None = None  # x86_64, aarch64, ppc64le
    features: list[str] = Field(default_factory=list)
    exclusive: bool = False


class Environment(_Model):
    modules: list[str] = Field(default_factory=list)
    container_image: str | None = None
    variables: dict[str, str] = Field(default_factory=dict)
    export_all: bool | None = None  # Slurm --export=ALL / PBS -V
    # names whose value the submitting shell gives (Slurm --export=NAME, PBS and Grid
    # Engine -v NAME, flux --env=NAME): they matter where the environment is not exported
    passed: list[str] = Field(default_factory=list)


class StageEntry(_Model):
    source: str  # "SITE:PATH" or a local path
    destination: str
    recursive: bool = False
    # names starting with "." (`.ssh/`, `.bashrc`), at any depth, are left out of the copy
    # and listed as skipped: set on a tool call's job's copies from or to this machine
    skip_hidden: bool = False


class ArraySpec(_Model):
    expression: str  # e.g. "1-10%2" in Slurm syntax (neutral form)


DEPENDENCY_KINDS = ("afterok", "afterany", "afternotok", "after")


class Dependency(_Model):
    # what every dialect parses and renders; another word would reach a directive as is
    kind: Literal["afterok", "afterany", "afternotok", "after"] = "afterok"
    job_ids: list[str] = Field(default_factory=list)
    # task by task: each task of this job array waits for the task of the same index of
    # the job(s) named (Slurm aftercorr, Grid Engine -hold_jid_ad, LSF done(ID[*]))
    per_task: bool = False
    # whose job ids these are: the scheduler of the script they were read from (its site's
    # jobs; another scheduler has none of those ids); None: the ids are those of the
    # scheduler the job goes to (the workflow engine's, an API caller's)
    scheduler: Literal["slurm", "pbs", "lsf", "flux", "sge"] | None = None


class JobSpec(_Model):
    name: str | None = None
    script: str | None = None  # body after the directives (shell)
    command: str | None = None  # alternative to script: one command line
    shell: str = "/bin/bash"
    working_directory: str | None = None
    resources: Resources = Field(default_factory=Resources)
    # a job of several shapes (PBS chunks that differ, Slurm hetjob components): each
    # component's own nodes, tasks, CPUs, GPUs and memory, in order; `resources` then holds
    # one shape none outgrows (what every node must offer) and the job's other settings
    components: list[Resources] = Field(default_factory=list)
    constraints: Constraints = Field(default_factory=Constraints)
    environment: Environment = Field(default_factory=Environment)
    queue: str | None = None  # partition / queue
    account: str | None = None
    qos: str | None = None
    reservation: str | None = None
    array: ArraySpec | None = None
    dependencies: list[Dependency] = Field(default_factory=list)
    stdout: str | None = None
    stderr: str | None = None
    join_output: bool = False
    # what the job does to an output file that exists already: "append" to it (LSF -o,
    # Grid Engine, Slurm --open-mode=append) or "truncate" it (Slurm's default, LSF -oo,
    # PBS, Flux); None: the scheduler's own default (see dialects.scripts_common
    # .output_mode_of)
    output_mode: Literal["append", "truncate"] | None = None
    hold: bool = False
    # no start before this: a value sbatch's --begin reads (the neutral form; PBS and Grid
    # Engine -a, LSF -b and flux --begin-time are read into it: dialects.begin_time)
    begin: str | None = None
    # may the scheduler run the job again after a node failure or preemption (Slurm
    # --requeue/--no-requeue, PBS and Grid Engine -r y|n, LSF -r/-rn); None: the site's default
    requeue: bool | None = None
    mail_user: str | None = None
    mail_events: list[str] = Field(default_factory=list)  # begin, end, fail
    comment: str | None = None  # the scheduler's free-text comment (Slurm --comment, LSF -Jd)
    stage_in: list[StageEntry] = Field(default_factory=list)
    stage_out: list[StageEntry] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)  # application, software, ...
    unknown: list[Directive] = Field(default_factory=list)
    source_dialect: str | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _no_hidden_commands(cls, data: Any, handler: Any, info: ValidationInfo) -> JobSpec:
        spec = handler(data)
        # checked when built from outside data; a spec read back from the store is shown
        # as it was recorded (it is checked again before anything renders it)
        if not isinstance(data, JobSpec) and not (info.context or {}).get("stored"):
            check_spec(spec)
            check_own_resources(spec)
        return spec


# Settings of one component of a job of several shapes (a Slurm hetjob's, a PBS chunk's): in
# the job's own `resources` no dialect reads them (the job ran without them, unsaid). Each
# with where the job's own setting goes (None: a directive in the script).
_COMPONENT_ONLY = {"queue": "queue", "default_queue": None, "account": "account",
                   "qos": "qos", "reservation": "reservation",
                   "features": "constraints.features", "exclusive": "constraints.exclusive",
                   "gres": None}


def check_own_resources(spec: JobSpec) -> None:
    """BadInput naming the first setting given in a job's own `resources` that only a
    component (an entry of `components`) carries, and where the job's own goes."""
    for name, home in _COMPONENT_ONLY.items():
        if getattr(spec.resources, name) in (None, False):
            continue
        instead = f"give the job's as {home} (beside resources, not in it)" if home else \
            "write it as a directive in the script (e.g. #SBATCH --gres=nvme:1)"
        raise BadInput(f"resources.{name}: a setting of one of a job's components (entries of "
                       f"components), which no scheduler reads in the job's own resources, so "
                       f"the job would run without it; {instead}")


# Control characters end a directive or shell line early (newline, CR) or are cut by C
# tools (NUL); Python's str.splitlines also breaks on the others, so none may appear in a
# one-line value. Tab is ordinary whitespace.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# What follows #!: an absolute interpreter path, then optional plain arguments (-l, bash)
_SHELL = re.compile(r"/[A-Za-z0-9_.+/-]+(?:[ \t]+[A-Za-z0-9_.+=/-]+)*")
# Fields that name a path, a queue, an account, an image or a GPU model: never read as an
# option by a tool (a container image is an argument of `docker run`/`apptainer exec`)
_NO_LEADING_DASH = {"working_directory", "stdout", "stderr", "queue", "account", "qos",
                    "reservation", "mail_user", "source", "destination", "container_image",
                    "gpu_type", "features"}
# ... of which these may be paths (./-x is then the file meant); the others are names only
_DASH_MAY_BE_PATH = {"working_directory", "stdout", "stderr", "source", "destination",
                     "container_image"}
# ... and what each of the others is, as a reason says it ("a account is a name" was said)
_A_NAME_OF = {"queue": "a queue is a name", "account": "an account is a name",
              "qos": "a QOS is a name", "reservation": "a reservation is a name",
              "mail_user": "a mail user is an address or a user name",
              "gpu_type": "a GPU type is a name",
              "features": "a node feature is a name (or an expression of names)"}
# Names a scheduler never gives a blank (a comma list of them for queue and reservation):
# `--partition "a b"` reached sbatch as one unknown name and LSF's `-q "a b"` as two queues
_ONE_WORD_NAMES = {"queue", "qos", "reservation"}
# ... of which these take a comma list of names (a job may start in any of them)
_NAME_LISTS = {"queue", "reservation"}
# What separates the entries of a GPU request in each scheduler's words (Slurm's
# `--gpus-per-node=TYPE:N,TYPE:N`, PBS's `ngpus=N:gpu_model=TYPE`, LSF's `num=N:gmodel=TYPE`):
# in a GPU type, one such character made another request of the type given
# (`h100:4,a100` with one GPU asked four H100s and an A100)
_GPU_TYPE_SEPARATORS = re.compile(r"[,:;=]")
# a workflow plan's shown template ("{its partition}"), filled in per step before a submit
_PLACEHOLDER = re.compile(r"\{its [a-z ]+\}")
# Multi-line by nature: the job body is the user's own program (only NUL is refused there)
_MULTILINE = {"script", "command"}
# The mail events a job may ask for (sbatch --mail-type's words, the neutral form): another
# word reached `#SBATCH --mail-type=` as written (`--uid=0` included)
MAIL_EVENTS = frozenset({"begin", "end", "fail", "all", "requeue", "invalid_depend",
                         "stage_out", "time_limit", "time_limit_90", "time_limit_80",
                         "time_limit_50", "array_tasks"})


# What a terminal acts on rather than shows: C0 and C1 controls (ESC starts the sequences that
# move the cursor, erase lines, retitle the window or write the clipboard; CSI is one byte in
# C1), DEL, the marks that reorder text (bidirectional overrides), and what takes no room: every
# format character (Unicode's Cf: zero-width spaces and joiners, the BOM, soft hyphen, the tag
# characters that spell hidden ASCII) and the letters drawn blank (Hangul fillers), so that two
# texts that look the same are the same. Tab and newline print.
_INVISIBLE = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u180e"
              "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0"
              "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
              "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f")
_UNSHOWN = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")
_SGR = re.compile(r"\x1b\[[0-9;:]*m")  # a colour or a weight: changes nothing but the look


def _shown(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


_TIME_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def time_value(text: str) -> int | None:
    """Seconds of a time as ssh_config writes one (`600`, `10m`, `1h30m`: units s, m, h, d, w
    in either case, as sshd_config(5)'s TIME FORMATS); None when `text` is not one."""
    written = text.strip().lower()
    parts = re.findall(r"([0-9]+)([smhdw]?)", written)
    if not parts or "".join(n + u for n, u in parts) != written:
        return None
    return sum(int(n) * _TIME_UNITS[u] for n, u in parts)


def visible(text: str, *, keep_colour: bool = False) -> str:
    """`text` (from a job, a scheduler, a user) safe to print on a terminal: each character
    a terminal would act on rather than show is written out (ESC as \\x1b), so what is shown
    is what the text holds. `keep_colour`: colour sequences (ESC [ ... m) stay, but none
    that hides text (`_Colours`), and the colours are reset at the end when the text left
    any set (what is printed after it is not in the job's colours)."""
    if not keep_colour:
        return _UNSHOWN.sub(_shown, text)
    colours = _Colours()
    out, at = [], 0
    for m in _SGR.finditer(text):
        out += [_UNSHOWN.sub(_shown, text[at:m.start()]), colours.sequence(m.group())]
        at = m.end()
    out.append(_UNSHOWN.sub(_shown, text[at:]))
    if colours.changed:
        out.append("\x1b[0m")
    return "".join(out)


# xterm's 16 colours (a theme may change them; the same index is the same colour anywhere)
_BASIC_RGB = [(0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205),
              (0, 205, 205), (229, 229, 229), (127, 127, 127), (255, 0, 0), (0, 255, 0),
              (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255), (255, 255, 255)]
_CUBE = (0, 95, 135, 175, 215, 255)
_TOO_CLOSE = 48  # RGB distance under which text on a background cannot be read
_CONCEAL = 8  # SGR "concealed": text drawn in the background's colour


def _rgb(index: int) -> tuple[int, int, int]:
    """A 256-colour palette index as RGB (xterm's)."""
    if index < 16:
        return _BASIC_RGB[index]
    if index < 232:
        i = index - 16
        return _CUBE[i // 36], _CUBE[i // 6 % 6], _CUBE[i % 6]
    grey = 8 + 10 * (index - 232)
    return grey, grey, grey


class _Colours:
    """A text's SGR sequences, one after the other, rewritten so that none hides text: the
    concealed attribute (8) is dropped, and where a foreground and a background are both set
    (in one sequence or across several) and the same or nearly the same colour (black on
    black, 38;5;16 on 40, RGB 1;1;1 on 0;0;0), the foreground becomes white or black,
    whichever the background is not. Parameters a terminal would not read are dropped.
    What stays unknown: the terminal's own colours (black text on a black terminal)."""

    def __init__(self) -> None:
        self.fg: tuple[int, int, int] | None = None  # None: the terminal's default
        self.bg: tuple[int, int, int] | None = None
        self.changed = False  # a sequence set something since the last reset

    def sequence(self, seq: str) -> str:
        params = seq[2:-1].split(";") if seq[2:-1] else ["0"]
        kept: list[str] = []
        i = 0
        while i < len(params):
            p, i = params[i], i + 1
            head, _, sub = p.partition(":")
            if not ascii_digits(head) or sub and head not in ("4", "38", "48", "58"):
                break  # not an SGR parameter: it and what follows it dropped
            n = int(head)
            if n in (38, 48, 58):  # an extended colour: 38;5;N, 38;2;R;G;B or with colons
                args = sub.split(":") if sub else params[i:i + 4]
                colour, used = _extended(args, colons=bool(sub))
                if colour is None:
                    break
                if not sub:
                    i += used
                kept.append(";".join([head, *args[:used]]) if not sub else p)
                if n != 58:  # 58: the underline's colour
                    self._set(n == 38, colour)
                continue
            if n == _CONCEAL:
                continue
            if n == 0:
                self.fg = self.bg = None
            elif 30 <= n <= 37 or 90 <= n <= 97:
                self._set(True, _BASIC_RGB[n - 30 if n < 90 else n - 82])
            elif 40 <= n <= 47 or 100 <= n <= 107:
                self._set(False, _BASIC_RGB[n - 40 if n < 100 else n - 92])
            elif n in (39, 49):
                self._set(n == 39, None)
            kept.append(p)
        if kept:  # set since the last reset: what follows the last 0
            last_reset = max((k for k, x in enumerate(kept) if x == "0"), default=-1)
            self.changed = last_reset < len(kept) - 1
        if self.fg is not None and self.bg is not None and \
                sum((a - b) ** 2 for a, b in zip(self.fg, self.bg, strict=True)) < _TOO_CLOSE ** 2:
            light = sum(self.bg) > 3 * 128
            self.fg = (0, 0, 0) if light else (255, 255, 255)
            kept.append("38;5;16" if light else "38;5;231")  # fixed colours, not a theme's
        return f"\x1b[{';'.join(kept)}m" if kept else ""

    def _set(self, foreground: bool, colour: tuple[int, int, int] | None) -> None:
        if foreground:
            self.fg = colour
        else:
            self.bg = colour


def _extended(args: list[str], colons: bool) -> tuple[tuple[int, int, int] | None, int]:
    """(the colour, how many of `args` it took) for what follows 38/48/58: 5;N or 2;R;G;B
    (with colons, ITU's 2:CS:R:G:B too); (None, 0) when it is no colour."""
    if not args or not all(ascii_digits(a) or colons and a == "" for a in args[:1]):
        return None, 0
    if args[0] == "5" and len(args) >= 2 and ascii_digits(args[1]) and int(args[1]) < 256:
        return _rgb(int(args[1])), 2
    if args[0] == "2":
        rgb = args[1:]
        if colons and len(rgb) == 4:  # 2:CS:R:G:B (a colour space id, often empty)
            rgb = rgb[1:]
        rgb = rgb[:3]
        if len(rgb) == 3 and all(ascii_digits(x) and int(x) < 256 for x in rgb):
            return (int(rgb[0]), int(rgb[1]), int(rgb[2])), 4
    return None, 0


# What a module's name and version are made of (Lmod, Environment Modules, EasyBuild and
# Spack names): ASCII letters, digits and `_ . + - / @ % : , = ~`. A name with anything
# else (shell syntax, quotes, control or invisible characters) is no module a site really
# has: it would go into the user's `module load` lines and the notes shown on a terminal.
MODULE_NAME = re.compile(r"[A-Za-z0-9_.+\-/@%:,=~]+")
# the marks `module avail` prints after a name, which a sites file copied from it keeps:
# Lmod's (D), (L), (L,D), <aL>; Environment Modules' (default), (default:latest), <L:sticky>
_AVAIL_MARK = re.compile(r"\s*(\(([^()/]*)\)|<[A-Za-z][A-Za-z0-9,:-]*>)\s*$")


def without_avail_marks(text: str) -> tuple[str, bool]:
    """(a listed module name without the marks `module avail` prints after it, whether a
    mark says it is the default version: `(D)`, `(default)`)."""
    default = False
    text = text.strip()
    while m := _AVAIL_MARK.search(text):
        default = default or any(t.strip() in ("D", "default")
                                 for t in re.split(r"[,:]", m.group(2) or ""))
        text = text[:m.start()]
    return text, default


def listed_names(x: Any) -> list[str]:
    """The names a sites file's list, mapping or comma-separated text gives."""
    if not x:
        return []
    if isinstance(x, str):
        return [s.strip() for s in x.split(",") if s.strip()]
    if isinstance(x, dict):
        return [str(k) for k in x]
    return [str(s) for s in x]


_BREAKS = re.compile(r"[\t\n]")


def one_line(text: str) -> str:
    """`text` as `visible` shows it, its tabs and newlines written out too (\\x09, \\x0a): a
    cell of a one-row-per-line listing (a name another user gave a job, a reason) cannot
    start a forged row or shift the columns after it."""
    return _BREAKS.sub(_shown, visible(text))


def hidden_characters(text: str, most: int = 5) -> list[str]:
    """Where `text` holds a character that `visible` writes out (one that is invisible,
    reorders text or drives a terminal): 'line L, column C: U+XXXX NAME', the first `most`
    of them, then how many more."""
    found = []
    for n, m in enumerate(_UNSHOWN.finditer(text)):
        if n == most:
            rest = sum(1 for _ in _UNSHOWN.finditer(text)) - most
            found.append(f"and {rest} more")
            break
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        found.append(f"line {line}, column {col}: U+{ord(m.group()):04X} "
                     f"{_char_name(m.group())}")
    return found


def _char_name(ch: str) -> str:
    return {"\n": "newline", "\r": "carriage return", "\x00": "NUL", "\x1b": "escape"}.get(
        ch, unicodedata.name(ch, "CONTROL" if unicodedata.category(ch) == "Cc"
                             else f"U+{ord(ch):04X}"))


# An agent's request (`diamond ask`, `%%diamond ask`, POST tasks): all of it goes to the LLM
# with each of the task's turns and is kept in the task's events, which every face replays
MAX_REQUEST_CHARS = 100_000


def check_request(text: str, what: str = "ask: the request") -> None:
    """BadInput when an agent's request is longer than MAX_REQUEST_CHARS (said before any
    LLM is set up or asked: no setting makes it fit)."""
    if len(text) > MAX_REQUEST_CHARS:
        raise BadInput(f"{what} is {len(text)} characters, more than the {MAX_REQUEST_CHARS} "
                       "a request may hold (all of it goes to the LLM at each of the task's "
                       "turns, and into its events); write the request short and name the "
                       "files it concerns")


def check_text(field: str, value: str, *, multiline: bool = False,
               unshown: bool = False) -> None:
    """BadInput naming `field` when `value` could end a line or hide a command, or holds
    what is no text (a NUL; a lone surrogate: a file name's byte that is not UTF-8, as
    Python gives it, which no record, event or command line can carry). `unshown`: nor
    any character `visible` writes out (a C1 control, a bidirectional mark, one that takes
    no room), in a value a scheduler keeps and shows others (a job's name, a partition)."""
    if (bad := _SURROGATE.search(value)) is not None:
        raw = ord(bad.group())
        byte = f" (the byte 0x{raw - 0xDC00:02X} of a name that is not UTF-8)" \
            if 0xDC80 <= raw <= 0xDCFF else ""
        fix = " (rename the file, e.g. with convmv)" if byte else ""
        raise BadInput(f"{field} holds U+{raw:04X} at position {bad.start()}{byte}, which "
                       f"is not text: only UTF-8 text is accepted{fix}")
    if multiline:
        if "\x00" in value:
            raise BadInput(f"{field} contains a NUL byte at position {value.index(chr(0))}")
        return
    m = _CONTROL.search(value)
    if m:
        raise BadInput(f"{field} contains a control character ({_char_name(m.group())}, "
                       f"U+{ord(m.group()):04X}) at position {m.start()}; "
                       "only printable characters and tabs are accepted")
    if unshown and (m := _UNSHOWN.search(value)) is not None:
        raise BadInput(f"{field} holds U+{ord(m.group()):04X} {_char_name(m.group())} at "
                       f"position {m.start()}, which is not shown as itself (it drives a "
                       "terminal, reorders or hides text), so the value would not be what "
                       "anyone reading it sees; only characters that show as themselves and "
                       "tabs are accepted (retype the value rather than paste it)")


# Free-form JSON (a spec's metadata, a submit's origin) nests at most this deep: the store
# serialises it, and pydantic refuses past a few hundred levels ("Maximum serialization
# depth exceeded", which reached a REST client as a 500).
MAX_JSON_DEPTH = 32


def check_nesting(field: str, value: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """BadInput naming `field` when its lists and mappings nest deeper than `limit`, or where
    it holds a number that is not finite (JSON's `NaN`, `Infinity` or `1e999`, which
    Python's reader takes: stored, it came back as null, the value lost unsaid). Checked
    without recursion, so any depth is measured safely."""
    todo: list[tuple[Any, int, str]] = [(value, 1, field)]
    while todo:
        v, depth, where = todo.pop()
        if isinstance(v, float) and not math.isfinite(v):
            raise BadInput(f"{where} is {v!r}, which is no JSON number (it would be kept as "
                           "null); give a finite number, or null")
        if isinstance(v, (dict, list, tuple)):
            if depth > limit:
                raise BadInput(f"{field} nests lists or mappings more than {limit} levels "
                               "deep; give it a flatter shape")
            items = v.items() if isinstance(v, dict) else enumerate(v)
            todo += [(x, depth + 1, f"{where}.{k}" if isinstance(v, dict) else f"{where}[{k}]")
                     for k, x in items]


# The largest time limit Slurm stores (2^32 - 2 minutes); no scheduler here takes more.
MAX_WALLTIME_S = (2**32 - 2) * 60
# A limit of 0 is no limit to sbatch and flux, yet a job with no time at all to PBS, LSF
# and Grid Engine: the scripts' readers keep `-t 0` as written, a spec field cannot say it.
ZERO_TIME_LIMIT = ("a time limit of 0 is no limit to sbatch and flux but no time at all to "
                   "PBS, LSF and Grid Engine; give 1 minute or more, or leave it out for the "
                   "site's default limit")
# entries of one job's stage_in (or stage_out): each is a recorded copy; more files go as
# a directory (recursive) or an archive
MAX_STAGE_ENTRIES = 1000
# components of one job (a Slurm hetjob's, PBS chunks): Slurm takes at most 128; 5000 given
# over the API took 16 s of the server's loop to check, place and render
MAX_COMPONENTS = 128
MAX_COUNT = 2**53  # any other number: beyond it a float (JSON, a renderer's arithmetic) errs


def _field_submodel(info: FieldInfo) -> type[BaseModel] | None:
    """The pydantic model a field holds, through Optional, unions and lists (Optional[list[X]]
    -> X); None when it holds none."""
    inner = [a for a in typing.get_args(info.annotation) or (info.annotation,)
             for a in typing.get_args(a) or (a,)]
    return next((a for a in inner if isinstance(a, type) and issubclass(a, BaseModel)), None)


def number_range(model: type[BaseModel], loc: tuple[int | str, ...]) -> str | None:
    """What the number field at `loc` (a validation error's) of `model` takes, e.g. "a whole
    number from 1 to 8": its declared bounds, else for a JobSpec's counts the bounds
    `check_spec` holds them to; None when `loc` names no number field with a known range."""
    fields, info, in_spec = model.model_fields, None, model is JobSpec
    for part in loc:
        if isinstance(part, int) or fields is None:  # a list's index
            continue
        info = fields.get(part)
        if info is None:
            return None
        sub = _field_submodel(info)
        in_spec = in_spec or sub is JobSpec
        fields = sub.model_fields if sub is not None else None
    if info is None or fields is not None:
        return None
    kinds = typing.get_args(info.annotation) or (info.annotation,)
    kind = "a whole number" if int in kinds else "a number" if float in kinds else None
    if kind is None:
        return None
    bounds = {k: getattr(m, k) for m in info.metadata for k in ("ge", "gt", "le", "lt")
              if getattr(m, k, None) is not None}
    if not bounds and in_spec and kind == "a whole number":
        bounds = {"ge": 1, "le": MAX_WALLTIME_S} if loc[-1] == "walltime_s" else \
            {"ge": 0, "le": MAX_COUNT}
    if "ge" in bounds and "le" in bounds:
        return f"{kind} from {_num(bounds['ge'])} to {_num(bounds['le'])}"
    said = {"ge": "at least", "gt": "above", "le": "at most", "lt": "below"}
    parts = [f"{said[k]} {_num(v)}" for k, v in bounds.items()]
    return f"{kind} {' and '.join(parts)}" if parts else None


_OUT_OF_RANGE = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def field_problem(model: type[BaseModel], error: Any) -> str:
    """What is wrong with the field of pydantic `error` (one of a ValidationError's errors()
    for `model`), after its dotted place; a number out of range (JSON's 1e309, infinity
    once read) says the range the field takes."""
    where = ".".join(str(x) for x in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"{where}: {_unknown_field(model, tuple(error['loc']))}"
    if error["type"] in _OUT_OF_RANGE:  # the range in the CLI's words: `from 1 to 8`
        takes = number_range(model, tuple(error["loc"]))
        if takes:
            return f"{where}: expected {takes}, not {error['input']!r}"
    if error["type"] != "finite_number":
        return f"{where}: {error['msg']}"
    takes = number_range(model, tuple(error["loc"]))
    return (f"{where}: the number is out of range (beyond what a JSON number holds, it "
            f"reads as infinity); give {takes or 'a finite number'}")


# A scheduler's or a face's word for a JobSpec field ("partition" to Slurm users): the key
# read where the word was written. Only those the model at hand has are suggested.
FIELD_WORDS = {"partition": "queue", "time": "walltime_s", "walltime": "walltime_s",
               "time_limit": "walltime_s", "mem": "memory_mb", "memory": "memory_mb",
               "gpus": "gpus_per_node", "ntasks": "tasks", "cpus": "cpus_per_task",
               "env": "environment", "job_name": "name", "chdir": "working_directory",
               "workdir": "working_directory", "cwd": "working_directory",
               "constraint": "features", "arch": "architecture", "image": "container_image",
               "container": "container_image", "module": "modules"}


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model whose field `loc` names (its last part), or None when `loc` passes
    through anything else (a mapping's key, a plain value)."""
    for part in loc[:-1]:
        if isinstance(part, int):  # a list's index: the same item model
            continue
        info = model.model_fields.get(part)
        if info is None:
            return None
        sub = _field_submodel(info)
        if sub is None:
            return None
        model = sub
    return model


def _unknown_field(model: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """What a key no field reads is told: the field meant, when its word is known or it is
    a near spelling, and the fields taken there."""
    at = _model_at(model, loc)
    if at is None:
        return "not a field here (it would be ignored); remove it"
    given, fields = str(loc[-1]), list(at.model_fields)
    # the fields here, then those one level in (`resources.walltime_s` from a JobSpec)
    reachable = fields + [f"{name}.{sub}" for name in fields
                          if (inner := _model_at(at, (name, ""))) is not at
                          and inner is not None for sub in inner.model_fields]
    word = FIELD_WORDS.get(given.lower().replace("-", "_"), given.lower())
    near = next((f for f in reachable if word in (f, f.rpartition(".")[2])), None) \
        or next(iter(difflib.get_close_matches(given.lower(), fields, n=1, cutoff=0.6)), None)
    meant = f" (did you mean {near}?)" if near else ""
    if at is Resources and "components" not in loc and near in _COMPONENT_ONLY:
        home = _COMPONENT_ONLY[near]  # a job's own is no setting of its resources
        meant = f" (did you mean {home}, beside resources?)" if home else ""
    return (f"not a field of {at.__name__}{meant}; the fields there are "
            f"{', '.join(fields)}")


def _num(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def leading_dash_advice(field: str, value: object) -> str | None:
    """What to give instead when FIELD may not start with '-' and VALUE does (None when
    it may, or does not): a path may be written ./-x, a name has no such spelling."""
    if field not in _NO_LEADING_DASH or not isinstance(value, str) or not value.startswith("-"):
        return None
    if field in _DASH_MAY_BE_PATH:
        return f"give a name or a path such as ./{value}"
    return f"{_A_NAME_OF[field]}, and no scheduler's starts with '-'; give the name"


def _walk(prefix: str, value: Any, leaf: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool):
        if leaf == "walltime_s" and value == 0:
            raise BadInput(f"{prefix} 0: {ZERO_TIME_LIMIT}")
        if leaf == "walltime_s" and value > MAX_WALLTIME_S:
            minutes = value // 60 if value % 60 == 0 else round(value / 60, 2)
            raise BadInput(f"{prefix} {value} s ({minutes} minutes) is too long: at most "
                           f"{MAX_WALLTIME_S // 60} minutes (Slurm's largest time limit)")
        if value < 0:
            raise BadInput(f"{prefix} {value} is negative: give 0 or more")
        if abs(value) > MAX_COUNT:
            raise BadInput(f"{prefix} {value} is too large (at most {MAX_COUNT})")
    elif isinstance(value, str):
        check_text(prefix, value, unshown=True)
        if (give := leading_dash_advice(leaf, value)) is not None:
            raise BadInput(f"{prefix} {value!r} starts with '-' (it would be read as an "
                           f"option); {give}")
        if leaf == "working_directory" and not value.startswith("/") \
                and ".." in value.split("/"):
            raise BadInput(f"{prefix} {value!r} climbs with '..' from where it starts (a "
                           "relative directory is taken in the site's home), as a stage path "
                           "may not; give an absolute path (e.g. /scratch/project/run)")
        if leaf in _NAME_LISTS and "," in value and not all(n.strip()
                                                           for n in value.split(",")):
            raise BadInput(f"{prefix} {value!r} has an empty name in its list (a comma with "
                           "no name beside it); give names separated by single commas (a,b), "
                           "or one name")
        if leaf == "gpu_type" and (bad := _GPU_TYPE_SEPARATORS.search(value)):
            raise BadInput(f"{prefix} {value!r} holds {bad.group()!r}, which separates the "
                           "entries of a scheduler's GPU request, so the job would ask for "
                           "other GPUs than the count given; a GPU type is one name (e.g. "
                           "a100, h100, a100_1g.5gb)")
        if leaf in _ONE_WORD_NAMES and not _PLACEHOLDER.fullmatch(value) and any(
                re.search(r"\s", n.strip()) for n in value.split(",")):
            hint = "its one name" if leaf == "qos" else "one name, or several separated by " \
                "commas (a,b)"
            raise BadInput(f"{prefix} {value!r} has a blank inside a name, and no scheduler's "
                           f"{leaf} name holds one; give {hint}")
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            if (field := getattr(value, name)) is not None:  # (unset: nothing to check)
                _walk(f"{prefix}.{name}", field, name)
    elif isinstance(value, dict):
        for k, v in value.items():
            _walk(f"{prefix} key", str(k), "")
            _walk(f"{prefix}[{k!r}]", v, leaf)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _walk(f"{prefix}[{i}]", v, leaf)


def spec_error_at(model: type[BaseModel], data: Any, error: BadInput) -> str:
    """`error`, raised by a JobSpec's own checks while `data` was read as `model`, after the
    place of that JobSpec in `data` (`spec.name holds ...`), as pydantic's errors give
    theirs; as it was when no field of `model` holds the spec that raised it."""
    if isinstance(data, dict):
        for name, info in model.model_fields.items():
            if name not in data or JobSpec not in (info.annotation,
                                                   *typing.get_args(info.annotation)):
                continue
            try:
                JobSpec.model_validate(data[name])
            except BadInput as inner:
                if str(inner) == str(error):
                    return f"{name}.{error}"
            except ValidationError:
                pass
    return str(error)


def check_field(label: str, value: Any, field: str) -> None:
    """BadInput when `value` would be refused as JobSpec field `field` (or a Resources
    field), named `label`: what the user wrote it as (`--partition` for `queue`)."""
    _walk(label, value, field)


# Variables that run or change code before a job script's first line: bash sources $BASH_ENV
# (sh $ENV) at start, SHELLOPTS/BASHOPTS/IFS/PS4 change how it reads every line, the dynamic
# loader loads $LD_PRELOAD/$LD_AUDIT into every program. Given in a job's environment (a
# directive), they would run a file the script never names.
STARTUP_VARIABLES = frozenset({"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4",
                               "LD_PRELOAD", "LD_AUDIT"})


def check_spec(spec: JobSpec) -> None:
    """Every field of a JobSpec is safe to render: BadInput naming the first bad field.

    Directive values and paths must be one printable line and never look like options;
    the shell must be an absolute interpreter path; the body may span lines but hold no
    NUL. `metadata` is informational and never rendered."""
    check_nesting("metadata", spec.metadata)
    if (n := len(spec.components)) > MAX_COMPONENTS:
        raise BadInput(f"components: {n} entries, more than the {MAX_COMPONENTS} a job may "
                       "have (Slurm's own bound on a heterogeneous job); submit several jobs, "
                       "or give the job one shape")
    for name in ("stage_in", "stage_out"):
        if (n := len(getattr(spec, name))) > MAX_STAGE_ENTRIES:
            raise BadInput(f"{name}: {n} entries, more than the {MAX_STAGE_ENTRIES} a job "
                           "may stage; stage a directory (recursive: true) or an archive "
                           "holding the files instead")
    for name, side, entries in (("stage_in", "destination", spec.stage_in),
                                ("stage_out", "source", spec.stage_out)):
        for i, entry in enumerate(entries):  # the site's end, relative to the job's directory
            path = getattr(entry, side)
            if not path.startswith(("/", "~")) and ".." in path.replace("\\", "/").split("/"):
                raise BadInput(f"{name}[{i}].{side} {path!r} climbs with '..' out of the "
                               "job's directory on the site, as a script's staging directive "
                               "and a workflow's paths may not; give a path inside it, or an "
                               "absolute one (e.g. /scratch/project/in.dat)")
    for name in JobSpec.model_fields:
        value = getattr(spec, name)
        if name == "metadata" or value is None:
            continue
        if name in _MULTILINE:
            check_text(name, value, multiline=True)
        elif name == "shell":
            check_text(name, value)
            if not _SHELL.fullmatch(value):
                raise BadInput(f"shell {value!r} is not an absolute interpreter path (letters, "
                               "digits, . _ + - /, then optional plain arguments, e.g. "
                               "/bin/bash or /usr/bin/env bash)")
        else:
            _walk(name, value, name)
    for key in spec.environment.variables:
        if not _VARIABLE_NAME.fullmatch(key):
            raise BadInput(f"environment.variables: name {key!r} is not a variable name (a "
                           "letter or _, then letters, digits or _)")
        if key in STARTUP_VARIABLES:
            raise BadInput(f"environment.variables: {key} acts before the script's first line "
                           "(on the batch shell, or on every program the loader starts, the "
                           "engine's own included), so what the script shows is not all that "
                           f"runs; set it in the script itself (export {key}=...)")
    for i, name in enumerate(spec.environment.passed):
        if not _VARIABLE_NAME.fullmatch(name):  # `A=1` here set a value unchecked (PBS -v)
            raise BadInput(f"environment.passed[{i}]: {name!r} is not a variable name (a "
                           "letter or _, then letters, digits or _): list names only here, "
                           "each copied from the submitting shell; a value goes in "
                           "environment.variables")
    for i, module in enumerate(spec.environment.modules):
        if (problem := software_name_problem(module)) is not None:
            raise BadInput(f"environment.modules[{i}]: {problem}")
    for i, event in enumerate(spec.mail_events):
        if event not in MAIL_EVENTS:
            meant = event.strip().lower()
            hint = f"did you mean {meant}? " if meant in MAIL_EVENTS else ""
            raise BadInput(f"mail_events[{i}] {event!r} is not a mail event ({hint}accepted: "
                           f"{', '.join(sorted(MAIL_EVENTS))})")
    if spec.array is not None:
        check_array(spec.array.expression)
    check_dependency_kinds(spec)


# A job array in the neutral (Slurm) syntax: indexes and ranges X-Y[:STEP], comma-separated,
# then %LIMIT of tasks at once. Nine digits at most: above any scheduler's array size.
_INDEX = r"[0-9]{1,9}"
_RANGE = rf"{_INDEX}(?:-{_INDEX}(?::{_INDEX})?)?"
_ARRAY = re.compile(rf"{_RANGE}(?:,{_RANGE})*(?:%{_INDEX})?")
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_array(expr: str) -> None:
    """BadInput unless `expr` is indexes and ranges every dialect reads as such."""
    bad = not _ARRAY.fullmatch(expr)
    if not bad:
        ranges, _, limit = expr.partition("%")
        for part in ranges.split(","):
            lo, _, rest = part.partition("-")
            hi, _, step = rest.partition(":")
            bad = bad or (hi != "" and int(hi) < int(lo)) or (step != "" and int(step) == 0)
        bad = bad or (limit != "" and int(limit) == 0)
    if bad:
        raise BadInput(f"array.expression {expr!r} is not a list of job-array indexes (e.g. "
                       "0-15, 1,3,5, 1-9:2, 1-10%2: ranges X-Y[:STEP] with X <= Y, then "
                       "%LIMIT > 0)")


def check_dependency_kinds(spec: JobSpec) -> None:
    """BadInput naming the first dependency whose kind no dialect knows (parsers and older
    stores fill them without validation)."""
    for i, d in enumerate(spec.dependencies):
        if d.kind not in DEPENDENCY_KINDS:
            raise BadInput(f"dependencies[{i}].kind {d.kind!r} is not one of "
                           f"{', '.join(DEPENDENCY_KINDS)}")


class JobState(str, enum.Enum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    TIMEOUT = "TIMEOUT"
    UNKNOWN = "UNKNOWN"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_STATES

    @property
    def rank(self) -> int:
        """Order used so that states never go backwards."""
        return {JobState.UNKNOWN: 0, JobState.PENDING: 1, JobState.RUNNING: 2}.get(self, 3)


TERMINAL_STATES = frozenset(
    {JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED, JobState.TIMEOUT}
)


class JobStatus(_Model):
    """One scheduler observation of a job (what a dialect's parsers return)."""

    native_id: str
    state: JobState
    native_state: str | None = None
    name: str | None = None
    user: str | None = None
    partition: str | None = None
    nodes: int | None = None
    cpus: int | None = None
    gpus: int | None = None
    walltime_s: int | None = None
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    estimated_start: datetime | None = None
    exit_code: int | None = None
    reason: str | None = None
    comment: str | None = None
    # PBS: the idempotency token the job carries in its environment (`-v DIAMOND_TOKEN=`),
    # where the server's job-name limit leaves no room for it in the name
    token: str | None = None
    node_list: str | None = None
    # Slurm: how long it has run (squeue %M; time suspended not counted); None: not read
    time_used_s: int | None = None
    qos: str | None = None  # Slurm: the QOS the job runs under (its limits count it)
    account: str | None = None  # Slurm: the account it runs under (its associations count
    # it); PBS: its project (`-P`; the project limits count it); Grid Engine: its project
    # (`-P`, qstat -r's JB_project; a resource quota's `projects` filter counts it)
    pe: str | None = None  # Grid Engine: the parallel environment granted it (granted_pe)
    group: str | None = None  # PBS: the group it runs as (egroup: group limits count it)
    memory_mb: int | None = None  # PBS: the memory it asked (max_run_res.mem counts it)
    # Slurm: the licenses it holds (running) or asks, name -> count (squeue -O Licenses);
    # None: not read (an entry of `a|b`, any one of them, is not known either)
    licenses: dict[str, int] | None = None
    # Slurm: what a waiting job's dependency still waits for, as squeue prints it (-O
    # Dependency, %E: `afterok:123(unfulfilled)`); PBS, LSF, Grid Engine, Flux: the same
    # in squeue's words (`dialects.dependencies`), on a job only its dependency holds;
    # None: none, or not read
    dependency: str | None = None
    # LSF: the site's numeric resources a running job reserves (the rusage[] of its
    # effective resource requirement, `bjobs -o effective_resreq`: licenses and the like),
    # name -> amount; None: not read (or it reserves one of several alternatives unsaid).
    # Grid Engine: what a running job takes of each consumable in its queue instance (its
    # hard requests, `qstat -r`, as the complexes take them: per slot, once a job or host)
    shared_use: dict[str, float] | None = None
    # Slurm: may other jobs share its CPUs (squeue %h "YES": it asked --oversubscribe, or
    # its partition forces sharing); None: not known
    shares: bool | None = None
    # a job array's status folded from its tasks' records: the state of each task a record
    # names (index -> state; a record of waiting tasks, `123_[5-9]`, names each of them up
    # to TASKS_EXPANDED); None: not an array, or no task named
    tasks: dict[str, JobState] | None = None
    # PBS: a job array's own record (`123[]`): how many of its subjobs wait
    # (array_indices_remaining) and run (array_state_count), and at most how many run at
    # once (max_run_subjobs); None: not such a record, or not said (Slurm and Grid Engine
    # say theirs in a waiting range's id: `placement_sim.array_record`). `array_limit` is
    # also the throttle of a Grid Engine array's waiting range (`-tc`, read by `qstat -j`)
    # and of each LSF array element's record (`%k`, read by `bjobs -A -w`)
    array_waiting: int | None = None
    array_running: int | None = None
    array_limit: int | None = None

    @field_validator("exit_code")
    @classmethod
    def _exit_code_or_none(cls, code: int | None) -> int | None:
        """An exit code past what a 32-bit status holds (signed or not) is none a job
        ended with: a site's mistake or a hostile answer, which SQLite cannot keep either."""
        return code if code is None or -2**31 <= code < 2**32 else None


def provisional_id(site: str, token: str) -> str:
    """The id of a job its site has not named yet (its submit not answered, or the answer
    lost): SITE:pending-TOKEN."""
    return f"{site}:pending-{token}"


def is_provisional(job_id: str, site: str | None = None) -> bool:
    """Whether `job_id` is a provisional id (`provisional_id`), of `site` where one is given."""
    site_part, sep, _ = job_id.partition(":pending-")
    return bool(sep) and site in (None, site_part)


class Job(_Model):
    # "SITE:NATIVE_ID" (what JOB means for the CLI); "SITE:NATIVE_ID@SUBMITTED" once the
    # scheduler gave that native id to a newer job (see `reused_by`)
    id: str
    site: str
    native_id: str | None = None
    name: str | None = None
    state: JobState = JobState.UNKNOWN
    token: str | None = None  # idempotency token placed in name/comment
    submitted_at: datetime | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    exit_code: int | None = None
    reason: str | None = None
    workdir: str | None = None
    stdout_path: str | None = None
    stderr_path: str | None = None
    spec: JobSpec | None = None
    placement: dict[str, Any] | None = None  # why this site was chosen
    origin: dict[str, Any] | None = None  # e.g. notebook path + cell id
    reused_by: str | None = None  # the newer job that now holds this job's native id
    hedge_group: str | None = None  # a hedged submission's copies share it (first start wins)
    # a job array's tasks its scheduler listed on their own, index -> state (each task's
    # dependents are judged by it); None: none listed. Not in `job_json`: it may be long
    tasks: dict[str, JobState] | None = None


# spec metadata of a job array a Flux site runs as one job per task: index -> the task's id
TASK_IDS = "flux_task_ids"
# spec metadata of a Flux job waiting for such arrays whole: an array's id as a number ->
# its tasks' ids (it waits for each of them)
ARRAY_TASKS_WAITED = "flux_array_tasks_waited"
# spec metadata of a Flux job waiting for one task of such an array by that task's own id:
# the id as written -> [the array's native id, the task's index] (what it waits for)
TASKS_NAMED = "flux_tasks_named"


def task_ids(job: Job) -> dict[str, str] | None:
    """Each task's own job id by its index, for a job array its site runs as one job per
    task (Flux); None for another job."""
    ids = job.spec.metadata.get(TASK_IDS) if job.spec else None
    return dict(ids) if isinstance(ids, dict) and ids else None


def hedged_reason(winner_id: str | None) -> str:
    """The reason a hedged copy is cancelled with: it names the copy that started first."""
    return f"hedged: {winner_id or 'another copy'} started first"


def hedge_winner_of(job: Job) -> str | None:
    """The id of the copy that won over `job`, a hedged copy cancelled for it; else None."""
    m = re.fullmatch(r"hedged: (\S+:\S+) started first", job.reason or "")
    if not job.hedge_group or job.state != JobState.CANCELLED or m is None:
        return None
    return m.group(1) if m.group(1) != job.id else None


def job_json(job: Job) -> dict[str, Any]:
    """A job as every face shows it (REST, events, `--json`): without its spec, with its time
    limit in seconds (None when it asked for none) and the start its placement predicted
    (`predicted_start`; None until an explicit site's prediction is recorded)."""
    limit = job.spec.resources.walltime_s if job.spec else None
    return job.model_dump(mode="json", exclude={"spec", "tasks"}) | {
        "time_limit_s": limit, "predicted_start": predicted_start(job),
        "array_tasks": array_task_counts(job)}


TASKS_EXPANDED = 10_000  # task states kept per array at most (an array may hold millions)


def array_task_counts(job: Job) -> dict[str, Any] | None:
    """A job array's tasks as the faces count them (not each task: an array may hold
    thousands): how many its scheduler listed and how many are in each state, by its latest
    record of each; None for a job that is not an array, or whose tasks none was listed."""
    if not job.tasks:
        return None
    counts: dict[str, int] = {}
    for state in job.tasks.values():
        counts[state.value] = counts.get(state.value, 0) + 1
    return {"total": len(job.tasks), "states": dict(sorted(counts.items()))}


def array_tasks_said(job: Job) -> str | None:
    """A job array's task counts as every text face says them ("array tasks: 4 (1 RUNNING,
    2 PENDING, 1 COMPLETED)", the states in the job vocabulary's order); None for a job
    that is not an array, or whose tasks none was listed."""
    counts = array_task_counts(job)
    if counts is None:
        return None
    each = ", ".join(f"{counts['states'][s.value]} {s.value}" for s in JobState
                     if s.value in counts["states"])
    return f"array tasks: {counts['total']} ({each})"


class QueueLimit(_Model):
    """One PBS queue limit entry: `max_run_res.ncpus = [u:PBS_GENERIC=64]` is attribute
    "max_run", resource "ncpus", scope "u", who "PBS_GENERIC", value 64 (resource "jobs"
    for max_run / max_queued themselves)."""

    attribute: Literal["max_run", "max_queued"]
    resource: str = "jobs"
    scope: Literal["o", "u", "g", "p"] = "o"
    who: str = "PBS_ALL"
    value: int  # MB for resource "mem"
    # "server": the server's own limit (`qmgr -c 'p s'`, `qstat -B -f`): the jobs of every
    # queue count against it
    on: Literal["queue", "server"] = "queue"


class UserAcl(_Model):
    """A list of users a queue takes (or, `deny`, refuses) the jobs of: its entries are user
    names, `@group` for a Unix group (Grid Engine), `name@host` (PBS); `source` names it as
    the site's configuration does (`acl_users`, `user_lists staff`)."""

    source: str
    users: list[str]
    deny: bool = False


class ShareAccount(_Model):
    """One LSF fair share account (a row of `bqueues -l`'s SHARE_INFO_FOR table, or of
    `bhpart -r`'s): a user or user group, its shares and its dynamic priority (LSF
    dispatches the waiting jobs of the account of the highest priority first)."""

    name: str  # a user or a user group (a group printed `grp/` is stored without its `/`)
    shares: int | None  # None: not known (LSF printed a mark of none, 2147483647)
    priority: float
    started: int | None = 0  # job slots of its running or suspended jobs (None: not known)
    reserved: int | None = 0  # job slots reserved for its waiting jobs (None: not known)


# a PBS queue enabled but not started: it takes jobs and runs none until started
NOT_STARTED = "NOT_STARTED"


# Slurm OverTimeLimit=UNLIMITED (a partition's or the site's): a job past its time limit
# is never killed for it
OVER_TIME_UNLIMITED = -1.0


class Partition(_Model):
    name: str
    default: bool = False
    state: str = "UP"
    max_time_s: int | None = None  # None = unlimited
    max_nodes: int | None = None
    max_cpus_per_node: int | None = None  # Slurm MaxCPUsPerNode: a job's CPUs on any node
    # LSF HJOB_LIMIT (bqueues -l JL/H): the job slots the queue's jobs may hold on one host
    max_slots_per_host: int | None = None
    # LSF PJOB_LIMIT (bqueues -l JL/P): the job slots the queue's jobs may hold per
    # processor of a host (a host of N CPUs: at most floor(limit x N) of its slots)
    max_slots_per_processor: float | None = None
    nodes: list[str] = Field(default_factory=list)
    total_nodes: int = 0
    total_cpus: int = 0
    allowed_accounts: list[str] | None = None
    # Grid Engine: the parallel environments the queue offers (its pe_list); None: unknown
    parallel_environments: list[str] | None = None
    # the time limit of a job that gives none (Slurm DefaultTime, PBS resources_default
    # .walltime); None: the MaxTime
    default_time_s: int | None = None
    min_nodes: int | None = None  # Slurm MinNodes: a job's fewest nodes here
    # what a job that asks no memory gets (Slurm DefMemPerCPU / DefMemPerNode), and the
    # most it may have (MaxMemPerCPU: more per CPU raises its CPUs; MaxMemPerNode), MB
    def_mem_per_cpu_mb: int | None = None
    # what a job of GPUs that says no CPUs / memory gets per GPU (Slurm JobDefaults
    # DefCpuPerGPU, DefMemPerGPU)
    def_cpus_per_gpu: int | None = None
    def_mem_per_gpu_mb: int | None = None
    allowed_groups: list[str] | None = None  # Slurm AllowGroups (None: all)
    def_mem_per_node_mb: int | None = None
    max_mem_per_cpu_mb: int | None = None
    max_mem_per_node_mb: int | None = None
    denied_accounts: list[str] | None = None  # Slurm DenyAccounts
    allowed_qos: list[str] | None = None  # Slurm AllowQos (None: all)
    denied_qos: list[str] | None = None  # Slurm DenyQos
    # LSF: the select[] of the queue's RES_REQ (bqueues -l): a host must meet it as well as
    # the job's own select (lsb.queues(5)); None: none
    res_req_select: str | None = None
    # LSF: the queue RES_REQ's rusage[mem] (MB a slot) and span (`hosts=1`, `ptile=N`):
    # what a job that asks none of its own gets (bsub merges them with the job's)
    res_req_mem_mb: int | None = None
    res_req_span: str | None = None
    # LSF: the queue RES_REQ's same[], order[] and cu[] sections as written (not modelled
    # by placement: said); None: none
    res_req_unchecked: list[str] | None = None
    # LSF: a queue inactive outside its run or dispatch windows (Open:Inact_Win) takes
    # jobs and dispatches them again at this time (its windows from `bqueues -l`)
    opens_at: datetime | None = None
    # LSF fair share (`bqueues -l` SHARE_INFO_FOR, else the `bhpart -r` host partition
    # whose hosts it uses): each account's shares and dynamic priority; `fair_share_of`
    # says whose ("queue", "host partition NAME"); USER_SHARES as configured (name ->
    # shares; `default`: every user not named). None: no fair share, or not read
    fair_share: list[ShareAccount] | None = None
    fair_share_of: str | None = None
    user_shares: dict[str, int | None] | None = None  # a share of None: a mark, not known
    # Flux: the node properties the queue requires (flux-config-queues(5) `requires`, all
    # of them); [] requires none; None: its configuration was not read
    requires: list[str] | None = None
    # Slurm RootOnly=YES (only root's jobs), ReqResv=YES (only jobs naming a reservation)
    root_only: bool = False
    req_resv: bool = False
    # Slurm OverSubscribe: "EXCLUSIVE" (whole nodes to every job), "FORCE[:N]", "YES[:N]",
    # "NO"; None: unknown
    oversubscribe: str | None = None
    # Slurm OverTimeLimit: minutes its running jobs may run past their time limit before
    # they are killed, as seconds; OVER_TIME_UNLIMITED: no end; None: the site's (NONE)
    over_time_s: float | None = None
    # Slurm PreemptMode (OFF, REQUEUE, CANCEL, SUSPEND[,GANG]) and PriorityTier: a job in a
    # partition whose PreemptMode is not OFF may be preempted by the jobs of a partition of
    # a higher tier sharing its nodes
    preempt_mode: str | None = None
    priority_tier: int | None = None
    # Slurm GraceTime (seconds): how long a job of this partition chosen for preemption
    # runs on before it is stopped; None: not read (0, Slurm's default)
    grace_time_s: int | None = None
    # Slurm ResumeTimeout / SuspendTimeout a partition sets for its own nodes (seconds; a
    # node in several partitions boots within the longest); None: GLOBAL, the site's
    resume_timeout_s: int | None = None
    suspend_timeout_s: int | None = None
    # Slurm PriorityJobFactor: the partition factor of a job's multifactor priority (its
    # share of the largest of the site's)
    priority_job_factor: int | None = None
    # PBS queue Priority (qstat -Qf): the scheduler takes the jobs of a queue of a higher
    # priority first (sched_config by_queue, the default)
    queue_priority: int | None = None
    # PBS backfill_depth (the queue's, else the server's): how many of the top waiting
    # jobs backfill may not delay; 0 turns backfilling off; None: unset (1, EASY)
    backfill_depth: int | None = None
    # PBS: the backfill_depth is the queue's own: its top jobs are counted among its own
    # jobs (the server's counts the top jobs of the queues without one, together)
    backfill_depth_own: bool = False
    # Grid Engine s_rt (qconf -sq): past it a job is sent SIGUSR1 and ended once the
    # queue's notify time has passed too, whatever its h_rt: the job's real limit
    soft_time_s: int | None = None
    notify_s: int | None = None
    # a job's totals here (PBS resources_max.ncpus / .mem / .ngpus, LSF PROCLIMIT)
    max_cpus: int | None = None
    max_mem_mb: int | None = None
    max_gpus: int | None = None
    # Grid Engine: the queue's hard limit of memory per slot (its h_vmem): a job asking more
    # per slot cannot run in it
    max_mem_per_slot_mb: int | None = None
    # Grid Engine queue consumables (`qconf -sq`'s complex_values, qc:), per queue instance
    # (by host) and complex: what the instance has, what is left of it now, and what each
    # running job in it (native id) holds (given back when it ends); None: none set
    queue_consumables: dict[str, dict[str, float]] | None = None
    queue_consumables_left: dict[str, dict[str, float]] | None = None
    queue_consumables_held: dict[str, dict[str, dict[str, float]]] | None = None
    # Grid Engine: the slots of each of the queue's instances (by host; `qstat -f`'s
    # slots_total): a job's slots on a host come from the instances there that take it
    instance_slots: dict[str, int] | None = None
    # Grid Engine: the h_rt of each of the queue's instances (by host, seconds; None:
    # INFINITY) where `qconf -sq` gives some hosts or host groups their own
    # (`24:00:00,[@short=1:00:00]`); max_time_s is then the longest of them. None: one
    # h_rt for every host
    instance_time_s: dict[str, int | None] | None = None
    # ... of those, what is taken now (slots_used plus slots_resv, held for advance
    # reservations), and what each running job there holds (native id -> its slots in
    # the instance, given back when it ends)
    instance_slots_taken: dict[str, int] | None = None
    instance_slots_held: dict[str, dict[str, int]] | None = None
    # LSF MEMLIMIT: a process of the job above it is killed, MB
    max_mem_per_process_mb: int | None = None
    # Slurm MaxCPUsPerSocket: a job's CPUs on any one socket of a node (None: no cap)
    max_cpus_per_socket: int | None = None
    # Slurm Hidden=YES: left out of users' listings; a job goes there only by naming it
    hidden: bool = False
    # PBS resources_min: the fewest CPUs / MB memory / GPUs a job in all may ask here, and
    # the shortest walltime (s)
    min_cpus: int | None = None
    min_mem_mb: int | None = None
    min_gpus: int | None = None
    min_time_s: int | None = None
    # LSF TASKLIMIT's default: the tasks (one CPU each) a job that asks no task count gets
    default_tasks: int | None = None
    # a PBS routing queue: it runs nothing, it sends each job to the first of these
    # destinations that takes it; None for a queue that runs jobs
    routes_to: list[str] | None = None
    # PBS max_run (of everyone's jobs, `[o:PBS_ALL=N]`): the most jobs the queue runs at
    # once; more wait for one of them to end
    max_running: int | None = None
    # LSF JL/U: the job slots each user's running jobs may hold in the queue at once
    max_slots_per_user: int | None = None
    # Slurm QOS=: the partition's QOS, whose limits every job in it meets
    qos: str | None = None
    # PBS limits on what a user (or everyone) has in the queue: max_run, max_queued and
    # their `_res.RESOURCE` forms (`[u:PBS_GENERIC=5]`, `[u:bob=2]`, `[o:PBS_ALL=100]`)
    limits: list[QueueLimit] = Field(default_factory=list)
    # LSF USERS: the users and user groups (`grp/`) whose jobs the queue takes, `~name`
    # excluded; None: everyone
    allowed_users: list[str] | None = None
    # PBS acl_users (where acl_user_enable is True), Grid Engine user_lists and xuser_lists
    # (their access lists' entries): who the queue takes jobs of, by user; None: everyone
    user_acls: list[UserAcl] | None = None
    # Grid Engine: the calendar of each of the queue's instances (by host; None: NONE),
    # where some instance has one (`qconf -sq` calendar); None: none has
    instance_calendars: dict[str, str | None] | None = None
    # ... and the hosts whose instance its calendar alone closes now (qstat's D, C)
    calendar_closed: list[str] | None = None
    # Grid Engine: the hosts whose instance takes no batch job (its qtype, as `qconf -sq`
    # gives it there, lacks BATCH: INTERACTIVE or NONE), and the projects the queue takes
    # jobs of (`projects`: a job of another, or of none, is not run there) and refuses
    # (`xprojects`), by host; None: every host's is NONE (or not read)
    no_batch_hosts: list[str] | None = None
    projects_by_host: dict[str, list[str]] | None = None
    xprojects_by_host: dict[str, list[str]] | None = None
    # Grid Engine: the complexes each queue instance's complex_values set (by host), by
    # full name (a shortcut written there read as its complex)
    instance_complexes: dict[str, list[str]] | None = None
    # ... and the value each sets (by host, then full name), as written there
    instance_complex_values: dict[str, dict[str, str]] | None = None
    # Slurm LLN=YES: jobs go to the least loaded nodes (most idle CPUs), not by Weight
    lln: bool = False
    # Slurm ExclusiveUser=YES: a node runs the jobs of one user at a time
    exclusive_user: bool = False

    @field_validator("max_time_s", "max_nodes", "max_cpus_per_node", "max_slots_per_host",
                     "default_time_s", "min_nodes", "def_mem_per_cpu_mb", "def_cpus_per_gpu",
                     "def_mem_per_gpu_mb", "def_mem_per_node_mb", "max_mem_per_cpu_mb",
                     "max_mem_per_node_mb", "max_cpus", "max_mem_mb", "max_gpus",
                     "max_mem_per_slot_mb")
    @classmethod
    def _no_limit_below_zero(cls, limit: int | None) -> int | None:
        """A limit a scheduler printed below 0 (-1 for none) is none, not one no job meets."""
        return None if limit is not None and limit < 0 else limit

    @property
    def tier(self) -> int:
        """Slurm PriorityTier, 1 (slurm.conf's default) where not read; 0 is a tier below it."""
        return 1 if self.priority_tier is None else self.priority_tier


class QosLimits(_Model):
    """A Slurm QOS's limits a job meets (`sacctmgr show qos`): TRES by name (`cpu`, `node`,
    `mem` in MB, `gres/gpu`), empty where the QOS sets none."""

    name: str
    max_tres_per_job: dict[str, int] = Field(default_factory=dict)
    max_tres_per_node: dict[str, int] = Field(default_factory=dict)
    max_tres_per_user: dict[str, int] = Field(default_factory=dict)
    grp_tres: dict[str, int] = Field(default_factory=dict)
    max_wall_s: int | None = None
    # job counts: running under the QOS in all (GrpJobs), queued or running in all
    # (GrpSubmitJobs), running per user (MaxJobsPerUser), queued or running per user
    # (MaxSubmitJobsPerUser); None: no limit
    grp_jobs: int | None = None
    grp_submit_jobs: int | None = None
    max_jobs_per_user: int | None = None
    max_submit_jobs_per_user: int | None = None
    # the least of each TRES a job under it must ask (MinTRESPerJob: below it, the job pends
    # until changed) and its flags (DenyOnLimit: a job past a Max or Min limit is refused at
    # submit instead)
    min_tres_per_job: dict[str, int] = Field(default_factory=dict)
    flags: list[str] = Field(default_factory=list)
    # TRES-minutes: GrpTRESMins (all its jobs', past, present and future) with what it has
    # used (decayed unless NoDecay), GrpTRESRunMins (its running jobs' still to run) with
    # theirs now, both from `scontrol show assoc_mgr flags=qos`; MaxTRESMins (one job's
    # walltime x TRES); empty: not set or not known
    grp_tres_mins: dict[str, int] = Field(default_factory=dict)
    tres_mins_used: dict[str, int] = Field(default_factory=dict)
    grp_tres_run_mins: dict[str, int] = Field(default_factory=dict)
    tres_run_mins: dict[str, int] = Field(default_factory=dict)
    max_tres_mins_per_job: dict[str, int] = Field(default_factory=dict)
    # False where the source gives the TRES-minutes limits but not what was used of them
    # (slurmrestd): a job is then checked against each whole limit only, and that is said
    tres_mins_used_known: bool = True
    # under PreemptType=preempt/qos: the QOS whose running jobs a job of this one preempts
    # (Preempt), how its own jobs are preempted (PreemptMode: cluster, i.e. the site's,
    # requeue, cancel, suspend, off) and how long they run on once chosen (GraceTime, s)
    preempts: list[str] = Field(default_factory=list)
    preempt_mode: str | None = None
    grace_time_s: int | None = None


class LsfLimit(_Model):
    """One row of LSF's `blimits`: a limit of lsb.resources on the jobs of its consumers
    (users, queues, hosts, projects: None for any; a user group ends in `/`), what they
    use of it and its most ("slots", "jobs", or "mem" in MB)."""

    name: str
    users: list[str] | None = None
    queues: list[str] | None = None
    hosts: list[str] | None = None
    projects: list[str] | None = None
    resource: Literal["slots", "jobs", "mem"]
    used: int = 0
    limit: int


class SgeComplex(_Model):
    """A Grid Engine consumable complex (`qconf -sc`): how a job takes it ("slot": per
    slot, consumable YES; "job": once, on its master host, JOB; "host": once a host, HOST)
    and what a job that does not ask for it takes (its default, in its own units)."""
    name: str
    shortcut: str | None = None
    per: Literal["slot", "job", "host"] = "slot"
    default: float = 0.0


class SgeComplexName(_Model):
    """Any complex of `qconf -sc`, consumable or not: its name, its shortcut (a job's `-l`,
    a quota's limit or a complex_values entry may name it by either) and whether a job may
    (YES), may not (NO) or must (FORCED) request it."""
    name: str
    shortcut: str | None = None
    requestable: Literal["YES", "NO", "FORCED"] = "YES"
    # its type column (STRING, CSTRING, RESTRING, HOST, BOOL, INT, MEMORY ...); None: not read
    type: str | None = None


class Reservation(_Model):
    """A Slurm advanced reservation (`scontrol show res -o`): its window, nodes (hostlist
    entries), who may use it (None: not limited that way; Slurm's `-name` entries deny),
    its flags (FLEX, MAINT, IGNORE_JOBS ...) and state (ACTIVE once started)."""

    name: str
    start: datetime | None = None
    end: datetime | None = None
    nodes: list[str] = Field(default_factory=list)
    users: list[str] | None = None
    accounts: list[str] | None = None
    groups: list[str] | None = None  # Unix groups whose members may use it
    flags: list[str] = Field(default_factory=list)
    state: str = "INACTIVE"


class PbsReservation(_Model):
    """A PBS Pro reservation (`pbs_rstat -f`): advance (R), standing (S) or maintenance
    (M). Its queue (`R123`) takes the jobs of the users it admits, on its nodes (host ->
    the resources it holds there, from resv_nodes), between its start and end."""

    name: str  # R123.server
    queue: str | None = None
    state: str = ""  # RESV_CONFIRMED, RESV_RUNNING, RESV_UNCONFIRMED ...
    start: datetime | None = None
    end: datetime | None = None
    owner: str | None = None  # user@host
    # Authorized_Users / Authorized_Groups entries as written (`user@host`, `-user`, `*`);
    # None: not set (the owner alone)
    users: list[str] | None = None
    groups: list[str] | None = None
    nodes: dict[str, dict[str, int]] = Field(default_factory=dict)


class SgeQuotaFilter(_Model):
    """One filter of a Grid Engine resource quota rule (`users {*}`, `queues all.q,!b.q`):
    its names as written (`!` negates, `*` any, `@group`), and whether the limit holds for
    each of them apart (`{}`) or for all of them together."""

    names: list[str]
    each: bool = False


class SgeQuotaRule(_Model):
    """A `limit` line of a resource quota set: its filters by scope (users, projects, pes,
    queues, hosts; a scope not given matches any) and its limits (complex -> value as
    written: `64`, `$num_proc*2`)."""

    name: str | None = None
    filters: dict[str, SgeQuotaFilter] = Field(default_factory=dict)
    limits: dict[str, str] = Field(default_factory=dict)


class SgeQuotaSet(_Model):
    """A Grid Engine resource quota set (`qconf -srqs`): its rules in order (the first
    that matches a job binds it) and whether it is enabled."""

    name: str
    enabled: bool = True
    rules: list[SgeQuotaRule] = Field(default_factory=list)


class SgeCalendar(_Model):
    """A Grid Engine calendar (`qconf -scal`): its `year` and `week` entries as written
    (`mon-fri=6-20=off`, `24.12.2026=on`); empty: NONE."""

    name: str
    year: list[str] = Field(default_factory=list)
    week: list[str] = Field(default_factory=list)


class Association(_Model):
    """One of the user's Slurm associations (`sacctmgr show assoc`): the account (and
    partition, None for any) it is for, its default QOS and the QOS it may use; or, of
    level "account", one of the accounts above the user's (its `parent` the next up).
    Limits as the listing shows them (None or empty: none set there): GrpTRES, GrpJobs,
    GrpSubmitJobs (of every job in its subtree), MaxJobs, MaxSubmitJobs (each user's),
    MaxTRES (each job's), TRES by name as in QosLimits."""

    account: str | None = None
    partition: str | None = None
    default_qos: str | None = None
    qos: list[str] | None = None  # None: not said
    level: Literal["user", "account"] = "user"
    parent: str | None = None
    grp_tres: dict[str, int] = Field(default_factory=dict)
    grp_jobs: int | None = None
    grp_submit_jobs: int | None = None
    max_jobs: int | None = None
    max_submit_jobs: int | None = None
    max_tres_per_job: dict[str, int] = Field(default_factory=dict)
    # TRES-minutes (`sshare -l`): GrpTRESMins (past, present and future jobs' in all) with
    # what its subtree has used (GrpTRESRaw, decayed), and GrpTRESRunMins (its running
    # jobs' still to run) with theirs now (TRESRunMins); empty: not set or not known
    grp_tres_mins: dict[str, int] = Field(default_factory=dict)
    tres_mins_used: dict[str, int] = Field(default_factory=dict)
    grp_tres_run_mins: dict[str, int] = Field(default_factory=dict)
    tres_run_mins: dict[str, int] = Field(default_factory=dict)
    # MaxTRESMins: TRES-minutes one job may ask (walltime x TRES); empty: not set
    max_tres_mins_per_job: dict[str, int] = Field(default_factory=dict)
    # False where the limits are known but not their use (slurmrestd without `shares`)
    tres_mins_used_known: bool = True


class Node(_Model):
    name: str
    state: str  # idle, mixed, allocated, down, drain ...
    cpus: int = 0
    cpus_allocated: int = 0
    memory_mb: int = 0
    gpus: int = 0
    gpus_allocated: int = 0
    gpu_type: str | None = None
    features: list[str] = Field(default_factory=list)
    partitions: list[str] = Field(default_factory=list)
    architecture: str | None = None
    # generic resources other than GPUs by name, per node ({"mps": 400, "shard": 16});
    # None: not reported (not checked)
    gres: dict[str, int] | None = None
    # memory its running jobs hold (Slurm AllocMem), MB: a job asking more than what is
    # left waits for them
    memory_allocated: int = 0
    # the snapshot gives the node's memory but not what its jobs hold (sinfo alone, a
    # scontrol without AllocMem): `memory_allocated` 0 says nothing then
    memory_allocated_unknown: bool = False
    # Grid Engine host consumables (`qhost -F`'s hc: values) by complex name: what is left
    # now and what the host has (left plus what its running jobs asked: qstat -r), in
    # the complex's own units (bytes for a memory complex); None: not reported
    consumables_left: dict[str, float] | None = None
    consumables_total: dict[str, float] | None = None
    # Grid Engine: the host's numeric values (`qhost -F`: num_proc, mem_total, load values),
    # by complex name, in its own units; a dynamic quota limit (`$num_proc*2`) reads them
    host_values: dict[str, float] | None = None
    # Grid Engine: the complexes the host's (and the global host's) complex_values set
    # (`qhost -F`'s fixed and consumable values: hf, hc, gf, gc), by full name
    complex_values: list[str] | None = None
    # ... and the values they set that are no consumable (`qhost -F` hf, gf: `ssd=1.000000`,
    # `site=ber`), by full name, as printed; None: none set or not read
    complex_texts: dict[str, str] | None = None
    # Grid Engine: the architecture the host reports (`qhost`'s arch_string, `lx-amd64`),
    # what a job's `-l arch` expression is matched against; None: not reported
    arch_string: str | None = None
    # hardware threads a core and sockets (Slurm ThreadsPerCore, Sockets); None: not known
    threads_per_core: int | None = None
    sockets: int | None = None
    # cores a socket and local temporary disk, MB (Slurm CoresPerSocket, TmpDisk): what
    # `--cores-per-socket`/`-B` and `--tmp` ask at least; None: not known (not checked)
    cores_per_socket: int | None = None
    tmp_disk_mb: int | None = None
    # cores the node keeps for the system (Slurm CoreSpecCount, or CPUSpecList's cores),
    # already out of `cpus`; a job's own --core-spec takes the place of this count
    spec_cores: int = 0
    # GPUs by type on a node of several types (Slurm Gres=gpu:a100:2,gpu:v100:2); None: one
    # type (gpu_type) or none
    gpu_types: dict[str, int] | None = None
    # Slurm Weight: nodes of the lowest weight are allocated first; None: not said
    weight: int | None = None
    # GPUs by the socket they are bound to (Gres `(S:0)`); None: any socket's CPUs serve
    gpu_sockets: dict[int, int] | None = None
    # the host's model as the scheduler names it (LSF lshosts `model`); None: not said
    host_model: str | None = None
    # of `features`, those it has only after a reboot (Slurm AvailableFeatures not in
    # ActiveFeatures: KNL modes and other node_features plugins)
    reboot_features: list[str] = Field(default_factory=list)
    # why an admin took it out of service (Slurm's Reason, without its `[user@time]`);
    # None: none given or not read
    reason: str | None = None
    # Slurm ResumeAfterTime: when a node an admin set DOWN or DRAIN with `ResumeAfter=`
    # returns to service by itself; None: not set (or not read)
    resume_after: datetime | None = None

    @field_validator("cpus", "cpus_allocated", "memory_mb", "memory_allocated", "gpus",
                     "gpus_allocated")
    @classmethod
    def _none_below_zero(cls, count: int) -> int:
        """A count a scheduler printed below 0 (its own miscount, or -1 for none) is 0: a
        node never has more free than it has."""
        return max(0, count)


class LsfSharedInstance(_Model):
    """One instance of an LSF shared resource (a `bhosts -s` line): a job takes from the
    instance its hosts share."""

    total: float  # TOTAL: the amount for scheduling, what jobs reserve included
    reserved: float = 0.0  # RESERVED: what jobs reserve of it now
    hosts: list[str] = Field(default_factory=list)  # LOCATION (`all`: every host)


# names of SiteSnapshot.unreported: Slurm's MaxArraySize, SchedulerParameters' bf_window,
# and what was used of the GrpTRESMins (QOS' and associations')
UNREPORTED_MAX_ARRAY = "MaxArraySize"
UNREPORTED_BF_WINDOW = "bf_window"
UNREPORTED_TRES_MINS_USED = "TRES-minutes used"
# Slurm's PriorityWeight* (slurm.conf's, served by no slurmrestd version)
UNREPORTED_PRIORITY_WEIGHTS = "priority factor weights"
# Slurm's SchedulerType (slurm.conf's, served by no slurmrestd version: backfill is assumed
# where the `diag` statistics show no backfill cycle)
UNREPORTED_SCHEDULER_TYPE = "SchedulerType"
# Flux: the queues' configuration (`flux config get queues`: their `requires`)
UNREPORTED_QUEUE_REQUIRES = "queue requires"


class SlurmPriority(_Model):
    """What Slurm's multifactor priority plugin weighs a new job by, as the site reports it:
    `scontrol show config` (PriorityType, PriorityWeight*, PriorityFavorSmall,
    PriorityFlags), the user's FairShare factor by account (`sshare -U`), each QOS's
    Priority (`sacctmgr show qos`) and the user's default account. A part not read is None,
    and `unread` says why, by part ("fair share", "qos", "weights": a PriorityWeight*
    line of no weight)."""

    plugin: str | None = None  # PriorityType, e.g. "priority/multifactor"
    weights: dict[str, int] = Field(default_factory=dict)  # Age, Fairshare, JobSize, ...
    tres_weights: str | None = None  # PriorityWeightTRES as set (None: not set)
    favor_small: bool = False
    flags: list[str] = Field(default_factory=list)
    fair_share: dict[str, float] | None = None  # the user's FairShare factor, by account
    level_fs: dict[str, str] | None = None  # its LevelFS (Fair Tree), by account, as said
    qos_priority: dict[str, int] | None = None  # each QOS's Priority
    default_account: str | None = None
    unread: dict[str, str] = Field(default_factory=dict)


class SiteSnapshot(_Model):
    site: str
    taken_at: datetime = Field(default_factory=utcnow)
    reachable: bool = True
    error: str | None = None
    # an unreachable site's view is what was last read: when that was (None: at taken_at,
    # or nothing read yet) and since when the site has not answered (None: it answers)
    read_at: datetime | None = None
    unreachable_since: datetime | None = None
    partitions: list[Partition] = Field(default_factory=list)
    nodes: list[Node] = Field(default_factory=list)
    jobs: list[JobStatus] = Field(default_factory=list)  # the queue: running + pending
    # why the whole queue could not be read (too large for the transport's cap, ...): the
    # site answered and its nodes are known, but `jobs` is unknown, not empty
    queue_error: str | None = None
    # Grid Engine: the parallel environments defined (`qconf -spl`); None: unknown
    parallel_environments: list[str] | None = None
    # Grid Engine: each parallel environment's allocation_rule (`qconf -sp`): `$pe_slots`
    # (every slot on one host), `$fill_up`, `$round_robin` (spread) or a number (so many
    # slots on every host); None: unknown
    pe_rules: dict[str, str] | None = None
    # Slurm: the QOS defined, by name, with their limits; None: not known
    qos: dict[str, QosLimits] | None = None
    # who the probe ran as (its own jobs count against per-user limits); None: not known
    user: str | None = None
    # PBS: that user's primary group (a job's group unless it names one); None: not known
    group: str | None = None
    # Slurm: the user's associations (default QOS, QOS allowed); None: not known
    associations: list[Association] | None = None
    # LSF: host groups (`bmgroup`) and user groups (`bugroup`), each name -> its members,
    # nested groups expanded (`all` for every host); None: not known
    host_groups: dict[str, list[str]] | None = None
    user_groups: dict[str, list[str]] | None = None
    # Grid Engine: each project's acl and xacl (their access lists' entries), the users
    # who may submit jobs under it; None: not read
    project_acls: dict[str, list[UserAcl]] | None = None
    # LSF: the resource allocation limits `blimits` shows (lsb.resources); None: not known
    lsf_limits: list[LsfLimit] | None = None
    # LSF: the resources the site defines (`lsinfo -r`), and its numeric shared ones
    # (`bhosts -s`: licenses and the like, name -> the most one instance has); None: not
    # known
    lsf_resource_names: list[str] | None = None
    lsf_shared: dict[str, float] | None = None
    # LSF: each numeric shared resource's instances now (`bhosts -s`, read with every
    # queue): what each has for scheduling (TOTAL), how much of it jobs reserve (RESERVED)
    # and the hosts that share it (LOCATION); None: not known
    lsf_shared_now: dict[str, list[LsfSharedInstance]] | None = None
    # Slurm: the advanced reservations (`scontrol show res`); None: not known
    reservations: list[Reservation] | None = None
    # PBS Pro: the reservations (`pbs_rstat -f`); None: not known
    pbs_reservations: list[PbsReservation] | None = None
    # Grid Engine: the resource quota sets (`qconf -srqs`) and the calendars (`qconf
    # -scal`) by name; None: not known
    sge_quotas: list[SgeQuotaSet] | None = None
    sge_calendars: dict[str, SgeCalendar] | None = None
    # Grid Engine: the time zone its hosts report (`TZ`, /etc/localtime's zone, else
    # `date +%z`'s offset, `+0100`), in which a calendar's hours are read; None: not read
    site_time_zone: str | None = None
    # Grid Engine: the host groups (`@NAME` -> its hosts, resolved) and access lists (name
    # -> its entries) a quota rule may name; None: not read
    sge_host_groups: dict[str, list[str]] | None = None
    sge_access_lists: dict[str, list[str]] | None = None
    # limits that could not be read, by what they are ("resource quotas", "reservations",
    # "calendars"), with why: placement says each as not checked
    limits_unread: dict[str, str] = Field(default_factory=dict)
    # Slurm: the licenses the site defines (`scontrol show licenses`), name -> how many in
    # all; {}: none defined; None: not known
    licenses: dict[str, int] | None = None
    # Slurm: the site's SlurmdTimeout, ResumeTimeout, SuspendTimeout and SuspendTime (idle
    # time before a node powers down) (`scontrol show config`; slurmrestd: the timeouts its
    # partitions all agree on), KillWait and OverTimeLimit (OVER_TIME_UNLIMITED: no end) in
    # seconds, by those names; None or a name missing: Slurm's default
    node_timeouts: dict[str, float] | None = None
    # Grid Engine: maxujobs (`qconf -ssconf`): how many jobs a user may have running at
    # once in the whole cell; None: no such limit (0) or not read
    sge_max_user_jobs: int | None = None
    # Grid Engine: max_u_jobs and max_jobs (`qconf -sconf global`): how many active jobs
    # (waiting or running) a user, and everyone, may have in the cell; qsub refuses one
    # more. None: no such limit (0) or not read
    sge_max_u_jobs: int | None = None
    sge_max_jobs: int | None = None
    # Grid Engine (`qconf -ssconf`): the longest a job that can start waits for the
    # scheduler's run after its submit, and after a running job's end: flush_submit_sec /
    # flush_finish_sec where set (a run that many seconds after), else schedule_interval;
    # None: not read
    sge_submit_run_s: int | None = None
    sge_finish_run_s: int | None = None
    # Slurm: PreemptType (`scontrol show config`: preempt/none, preempt/partition_prio,
    # preempt/qos) and PreemptExemptTime (seconds a job runs before it may be preempted);
    # None: not read
    preempt_type: str | None = None
    preempt_exempt_s: float | None = None
    # Slurm: the site-wide PreemptMode (`scontrol show config`: OFF, REQUEUE, CANCEL,
    # SUSPEND[,GANG]), what a QOS of PreemptMode=cluster goes by; None: not read
    site_preempt_mode: str | None = None
    # Slurm: MaxArraySize (`scontrol show config`): an array's indexes run 0 to one less;
    # None: not known
    max_array_size: int | None = None
    # Slurm: SchedulerParameters' bf_max_job_user (`scontrol show config`): how many of a
    # user's waiting jobs its backfill tests at most; None: no such cap (or not known)
    bf_max_job_user: int | None = None
    # Slurm: SchedulerParameters' bf_window (`scontrol show config`, minutes; 1440 when
    # not set) in seconds: how far ahead its backfill plans; a waiting job expected to start
    # later keeps no slot. None: not known (the plan reaches as far as it must)
    bf_window_s: float | None = None
    # Slurm: more of SchedulerParameters (`scontrol show config`), None where not set:
    # bf_max_job_part (how many waiting jobs of one partition its backfill tests at most),
    # bf_resolution in seconds (the grid its backfill plans starts and ends on; 60 when not
    # set), bf_min_prio_reserve (a waiting job of a lower priority keeps no slot) and
    # bf_min_age_reserve in seconds (nor one that has waited less)
    bf_max_job_part: int | None = None
    bf_resolution_s: int | None = None
    bf_min_prio_reserve: int | None = None
    bf_min_age_reserve_s: int | None = None
    # bf_job_part_count_reserve: only that many of the highest-priority waiting jobs of each
    # partition keep a slot in Slurm's backfill plan (the rest start only where they delay
    # none of those); None: not set (every waiting job keeps one)
    bf_job_part_count_reserve: int | None = None
    # bf_max_job_user_part: how many waiting jobs of one user in one partition its backfill
    # tests at most; None: not set
    bf_max_job_user_part: int | None = None
    # bf_max_job_test: how many waiting jobs in all its backfill tests at most, in priority
    # order; None: not set
    bf_max_job_test: int | None = None
    # Slurm: whether memory is a consumable resource (SelectTypeParameters CR_*_Memory):
    # False where it is not (CR_Core, CR_CPU: jobs' memory is not added up on a node, only
    # each job's is held to the node's size); None: not read
    memory_consumable: bool | None = None
    # Slurm: EnforcePartLimits (ALL, ANY, NO): with ALL, sbatch refuses a job listing
    # several partitions whose limits one of them does not meet; None: not read
    enforce_part_limits: str | None = None
    # Slurm SelectType (`scontrol show config`: select/cons_tres, select/linear ...):
    # select/linear gives every job whole nodes; None: not read
    select_type: str | None = None
    # Slurm multifactor priority: how a new job's priority is weighed (None: not read),
    # and each waiting job's priority (`sprio` %Y, by job id; None: not read)
    priority: SlurmPriority | None = None
    job_priorities: dict[str, int] | None = None
    # what the site's interface does not report, by name (UNREPORTED_*), with who does
    # not ("slurmrestd v0.0.38"): placement says so where it matters, as not checked
    unreported: dict[str, str] = Field(default_factory=dict)
    # why what was used of the GrpTRESMins could not be read, by whose ("qos",
    # "associations"): the query failed, or its answer left them out. Placement says so
    # once, as not checked (where not given, the interface does not report it: above)
    tres_mins_unread: dict[str, str] = Field(default_factory=dict)
    # Slurm: how many of each are free now (Free=, else Total-Used-Reserved); None: not
    # known (then only the totals are checked)
    licenses_free: dict[str, int] | None = None
    # Grid Engine: the consumable complexes (`qconf -sc`) by name; None: not known
    sge_complexes: dict[str, SgeComplex] | None = None
    # Grid Engine: every complex of `qconf -sc` by its full name (the consumables above are
    # some of them); None: the table not read
    sge_complex_names: dict[str, SgeComplexName] | None = None
    # Grid Engine: the complex the site counts GPUs in, where its sites entry names one
    # (`gpu_complex`); None: the usual names (gpu, gpus, ngpus)
    gpu_complex: str | None = None
    # Grid Engine global consumables (`qhost -F`'s global host, gc: values) by complex
    # name: what is left now, and what the cluster has (that plus the running jobs' use)
    global_consumables_left: dict[str, float] | None = None
    global_consumables_total: dict[str, float] | None = None
    # what each running job (native id) holds of them: it gives it back when it ends
    global_consumables_held: dict[str, dict[str, float]] | None = None
    # how the scheduler's backfill protects waiting jobs, where its configuration says so
    # ("plan", "easy", "none": see `placement_sim.reservation_for`; "fifo": no backfill,
    # Slurm's SchedulerType sched/builtin); None: by its type
    backfill: Literal["plan", "easy", "none", "fifo"] | None = None
    # where a new job joins the waiting queue: "submit" last (it has waited least),
    # "slots" by the slots it asks, more first (Grid Engine's default urgency); None: by
    # the scheduler's type
    queue_order: Literal["submit", "slots"] | None = None
    # records of the scheduler's outputs that could not be read and were left out of this
    # view, each naming the site, the output, the line or record and why
    warnings: list[str] = Field(default_factory=list)

    @property
    def running(self) -> list[JobStatus]:
        return [j for j in self.jobs if j.state == JobState.RUNNING]

    @property
    def pending(self) -> list[JobStatus]:
        return [j for j in self.jobs if j.state == JobState.PENDING]


class Event(_Model):
    seq: int | None = None  # assigned by the store
    kind: str  # job.state, site.snapshot, transfer.progress, agent.step, ...
    at: datetime = Field(default_factory=utcnow)
    job_id: str | None = None
    site: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class DiamondError(Exception):
    """Base error. `exit_code` follows the CLI contract (2 bad input, 1 site/network)."""

    exit_code = 1


class BadInput(DiamondError):
    exit_code = 2


class SiteError(DiamondError):
    exit_code = 1


class SubmitUnsure(SiteError):
    """A submit whose answer was lost (`lost`: how): the scheduler may have taken job
    `job_id`, whose intent is left open (`Federation.find_lost_submit` keeps looking for
    it) until it is `settle_s` old."""

    def __init__(self, message: str, job_id: str, settle_s: float, lost: str = "") -> None:
        super().__init__(message)
        self.job_id, self.settle_s, self.lost = job_id, settle_s, lost or message


def software_name_problem(entry: Any) -> str | None:
    """Why a sites file's `software` entry is no module name (None: it is one), with
    what is accepted: checked as discovered names are (`MODULE_NAME`), after the marks
    `module avail` prints (`(D)`, `<L>`)."""
    if not isinstance(entry, (str, int, float)) or isinstance(entry, bool):
        return f"{type(entry).__name__} {str(entry)[:60]!r} is not a module name"
    name = without_avail_marks(str(entry))[0]
    if not name:
        return f"{str(entry)[:60]!r} is empty"
    if name.startswith("-"):  # `module load -f/x` would read an option
        return (f"{name[:80]!r} is not a module name: it starts with '-', which `module "
                "load` reads as an option")
    if MODULE_NAME.fullmatch(name):
        return None
    bad = next(c for c in name if not MODULE_NAME.fullmatch(c))
    hint = " (one module an entry: a list, or names separated by commas)" \
        if bad.isspace() else ""
    return (f"{name[:80]!r} is not a module name: {bad!r} is not allowed{hint}; a module "
            "name is ASCII letters, digits and _ . + - / @ % : , = ~, as `module avail` "
            "lists it")
