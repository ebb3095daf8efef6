"""Flux batch scripts (RFC 36 `#flux:` / `# flux:` / `#FLUX:` directives for `flux batch`)."""

from __future__ import annotations

import fnmatch
import math
import re

from ..digits import ascii_digits
from ..model import (
    ARRAY_TASKS_WAITED,
    ArraySpec,
    BadInput,
    Dependency,
    Directive,
    JobSpec,
    gpus_of_job_over_unknown_nodes,
)
from ..wording import quantity
from .base import Rendered
from .begin_time import flux_parts, neutral, render_begin
from .body import FLUX_COPIES as FLUX_CC
from .flux_commands import array_tasks
from .flux_ids import flux_id_problem, flux_id_value
from .flux_quotes import flux_word, is_opening, join_triple_quotes, string_lines
from .node_lists import render_named_hosts
from .scripts_common import (
    ODD_BLANK_REASON,
    Item,
    Opt,
    OptionTable,
    SubmitWait,
    assemble,
    bad,
    begin_parse,
    common_render_warnings,
    counted_groups_as_or,
    dependencies_for,
    ends_in_backslash,
    file_for_directory,
    foreign_warnings,
    is_placeholder,
    job_name_warning,
    listed_name,
    map_out_pattern,
    mapped_or_placeholder,
    neutral_out_pattern,
    neutral_preamble,
    no_gpus_for_zero,
    note,
    one_queue,
    one_shape,
    output_mode_of,
    own_unknown_lines,
    passed_names,
    placeholder_note,
    quote,
    socket_gpus_per_node,
    start_directory,
    tokenize,
    unknown,
    whole_job_dependencies,
    without_submit_waits,
    words,
)
from .warn_signal import carried, said, warn_signal

_REQUIRED = words("nslots cores-per-slot gpus-per-slot nodes time-limit queue job-name output "
                  "error cores tasks-per-node gpus-per-node "
             "cwd urgency setopt setattr requires dependency begin-time env env-remove env-file "
             "rlimit add-file conf broker-opts flags signal input bank cc bcc log log-stderr "
             "taskmap")
_NONE = words("exclusive wrap quiet label-io unbuffered verbose debug dry-run")
TABLE = OptionTable(
    {n: Opt(n) for n in _REQUIRED} | {n: Opt(n, "none") for n in _NONE}
    | {"dump": Opt("dump", "optional")},
    {"n": Opt("nslots"), "c": Opt("cores-per-slot"), "g": Opt("gpus-per-slot"),
     "N": Opt("nodes"), "t": Opt("time-limit"), "q": Opt("queue"), "o": Opt("setopt"),
     "S": Opt("setattr"), "B": Opt("bank"), "v": Opt("verbose", "none"),
     "x": Opt("exclusive", "none")},
    argparse=True,
)
_SENTINEL = re.compile(r"^\s*#\s*(?:flux|FLUX):(.*)$")
# a variable a flux env rule's value refers to (`$PATH`, `${HOME}`; `$$` is a `$`): flux
# fills it in at submission (python's string.Template)
_ENV_REFERENCE = re.compile(r"(?<!\$)(?:\$\$)*\$\{?([A-Za-z_]\w*)")


def _env_pattern(pattern: str):
    """A flux env rule's pattern of names as a test: a regex between slashes, else a shell
    glob; None for a regex Python cannot read (flux judges it)."""
    if pattern.startswith("/"):
        try:
            rx = re.compile(pattern[1:].removesuffix("/"))
        except re.error:
            return None
        return lambda name: rx.search(name) is not None
    return lambda name: fnmatch.fnmatchcase(name, pattern)

_SENTINEL_TAG = re.compile(r"^\s*#\s*(?:flux|FLUX):")  # a directive's sentinel, as written
# what flux batch reads as a directive anywhere in the file (RFC 36): `flux:` after any
# prefix of non-letters, `#` or none (a Python docstring's lines), `--` (Lua), `//`, `##`
_ANY_SENTINEL = re.compile(r"^([^\w]*)(?:flux|FLUX):")
_READ_PREFIX = re.compile(r"\s*#\s*")  # the prefixes this reader takes
_FSD = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([smhd]?)$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DEPS = {"after", "afterany", "afterok", "afternotok"}


def parse_fsd(text: str, default_unit: str = "m") -> int | None:
    """Flux standard duration ('30m', '2h', '1d', '90s'; bare number = minutes for -t)."""
    m = _FSD.match(text.strip())
    if not m:
        return None
    return round(float(m.group(1)) * _UNIT[m.group(2) or default_unit])


def fmt_fsd(seconds: int) -> str:
    for unit in "dhm":
        if seconds % _UNIT[unit] == 0:
            return f"{seconds // _UNIT[unit]}{unit}"
    return f"{seconds}s"


def _count(raw: str) -> int:
    """How many options a kept directive line holds; -1 for a line that opens a string over
    several lines (never written back alone: its options are rebuilt)."""
    if is_opening(raw):
        return -1
    m = _SENTINEL.match(raw)
    return len(TABLE.parse(tokenize(m.group(1)), 0, raw)) if m else 0


def _opening_prefix(raw: str) -> str:
    """The part of a string's option value on its opening line (`user.conf=` of
    `--setattr=user.conf=` and a triple quote)."""
    m = _SENTINEL.match(raw)
    try:
        items = TABLE.parse(tokenize(m.group(1)[:-3]), 0, raw) if m else []
    except BadInput:  # the option's value is the string alone
        return ""
    return (items[-1].value or "") if items else ""


def _kept_strings(spec: JobSpec, sentinel: str) -> dict[int, list[str]]:
    """Each kept option whose value is a string over several lines (the last option of its
    opening line), by the id of its Directive: the directive lines that write it back."""
    last: dict[str, Directive] = {}
    for d in spec.unknown:
        if d.dialect == "flux" and is_opening(d.raw):
            last[d.raw] = d
    out = {}
    for raw, d in last.items():
        prefix = _opening_prefix(raw)
        if (d.value or "").startswith(prefix):
            out[id(d)] = string_lines(sentinel, raw, d.option, prefix, d.value or "")
    return out


# flux run's per-task sizes, which flux batch refuses (it sizes a job in slots), and the
# batch option for each
_PER_TASK = {"--ntasks": "-n/--nslots", "--cores-per-task": "-c/--cores-per-slot",
             "--gpus-per-task": "-g/--gpus-per-slot"}

# an RFC 22 idset as --cc takes it (`1-10`, `0,2,5-7`, `[1-4]`)
_IDSET = re.compile(r"\[?([0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*)\]?")
_CC = "{cc}"  # what flux replaces with each copy's id in the options of a --cc submission
# an --output/--error word of a directive, whose {cc} is read as the array index
_OUT_WORD = re.compile(r"--(?:output|error)(?:=|\s+)\S+")
# metadata: the idset of the script's --cc (its copies, read as the job's array), its line
FLUX_CC_LINE = "flux_cc_line"

# the two ways flux sizes a job (flux-run(1): "mutually exclusive")
_MODES = {"nslots": "per-slot", "cores-per-slot": "per-slot", "gpus-per-slot": "per-slot",
          "cores": "per-resource", "tasks-per-node": "per-resource",
          "gpus-per-node": "per-resource"}



def _requires(feature: str, warnings: list[str]) -> str:
    """A Slurm-style constraint as a flux --requires query (RFC 35 takes `|`, `&` and
    parentheses): a matching OR `[a|b]` (the same one on every node) becomes a plain OR and
    the node counts of `a*2` are dropped, each reported; flux would refuse them as written."""
    text = counted_groups_as_or(feature, "flux", warnings)
    if "[" in text or "]" in text:
        text = text.replace("[", "(").replace("]", ")")
        warnings.append(f"approximated: constraint {feature} as {text} (flux cannot ask for "
                        "the same one on every node)")
    if re.search(r"\*[0-9]+", text):
        text = re.sub(r"\*[0-9]+", "", text)
        warnings.append(f"approximated: node counts in constraint {feature} dropped (flux "
                        "--requires has none)")
    return text


def submit_wait(d: Directive) -> SubmitWait | None:
    """flux's submission options that make the command wait for the job (`--wait`, for an
    event of it `--wait-event`, for its output `--watch`)."""
    if d.option in ("--wait", "--wait-event", "--watch"):
        return SubmitWait(False, f"{d.option} makes the submitting flux command wait for the "
                          "job" + (" (its output)" if d.option == "--watch" else ""))
    if d.option == "--dry-run":
        return SubmitWait(True, "flux batch --dry-run prints the jobspec and submits no job",
                          "remove it to submit the job, or run `flux batch --dry-run` "
                          "yourself", why="the engine would find no job to follow")
    return None


def _copies_refusal(spec: JobSpec) -> str:
    ids = spec.metadata[FLUX_CC]
    line = spec.metadata.get(FLUX_CC_LINE)
    where = f"line {line}: " if line else ""
    return (f"{where}--cc={ids}: flux batch cannot express copies of a job (it has no --cc, "
            "and a job array is no flux batch concept); split the job into one batch script "
            f"per copy, or run the script with `flux submit --cc={ids}` and its #flux: "
            "options on that command line")


def array_refusal(spec: JobSpec) -> str | None:
    """Why a Flux site cannot run the job's array, which it runs as one `flux batch` per
    task (flux batch has no arrays): a flux script's own `--cc` (said as flux batch says
    it), an index expression that does not read, or more tasks than it submits one by one.
    None for an array it runs, and without an array."""
    if spec.array is None:
        return None
    if FLUX_CC in spec.metadata:  # a flux script's own --cc: said as flux batch would
        return _copies_refusal(spec)
    try:
        array_tasks(spec.array.expression)
    except BadInput as e:
        return str(e)
    return None


def orphan_directive(body: str) -> str | None:
    """Why flux batch refuses a job whose commands `body` hold a line it reads as a
    directive (`# flux: -N 4`, a here-document's included): directives stop at the first
    command, and one after it is an error (RFC 36, an orphan directive); None when none."""
    for lineno, line in enumerate(body.splitlines(), 1):
        if _ANY_SENTINEL.match(line):
            return (f"line {lineno} of the job's commands, `{line.strip()[:80]}`, is a flux "
                    "directive after the first command: flux batch refuses the script (an "
                    "orphan directive; it reads every line of the file, a here-document's "
                    "too); move it up among the job's directives if it is meant for this "
                    "job, or, if it is another script's text, write that script to a file "
                    "of its own, or start the line with a letter (printf '# flux: ...\\n' "
                    "> inner.sh)")
    return None


class FluxScript:
    submit_wait = staticmethod(submit_wait)
    name = "flux"
    sentinel = "#flux:"

    @staticmethod
    def _one_sentinel(directives: list[tuple[int, str, str]]) -> None:
        """flux batch: every directive uses the same sentinel (the prefix and tag up to
        `flux:`, `#flux:` or `# FLUX:`), else it raises an error (flux-batch(1), RFC 36)."""
        first: tuple[int, str] | None = None
        for lineno, raw, _ in directives:
            m = _SENTINEL_TAG.match(raw)
            if m is None:
                continue
            if first is None:
                first = (lineno, m.group(0))
            elif m.group(0) != first[1]:
                raise BadInput(f"line {lineno}: sentinel `{m.group(0).strip()}` differs from "
                               f"line {first[0]}'s `{first[1].strip()}`: flux batch refuses "
                               "directives with different sentinels; write every one as "
                               f"`{first[1].strip()}`")

    @staticmethod
    def _other_prefixes(text: str) -> None:
        """BadInput at a line flux batch reads as a directive under a prefix other than
        `#` (`-- flux:`, `## flux:`, a bare `flux:`): before any `#` one, its request would
        be lost here (this reader takes `#` prefixes only); after one, flux batch refuses
        the script (one sentinel for every directive, none after the commands)."""
        first: tuple[int, str] | None = None
        for lineno, line in enumerate(text.removeprefix("\ufeff").splitlines(), 1):
            m = _ANY_SENTINEL.match(line.rstrip("\r"))
            if m is None or (lineno == 1 and line.startswith("#!")):
                continue
            if _READ_PREFIX.fullmatch(m.group(1)):
                first = first or (lineno, m.group(0).strip())
                continue
            shown = f"`{line.strip()}`"
            prefix = f"under the prefix `{m.group(1).strip()}`" if m.group(1).strip() \
                else "with no prefix"
            if first is None:
                raise BadInput(
                    f"line {lineno}: {shown} is a flux directive {prefix} (flux batch "
                    "reads `flux:` after any non-letters); this reader takes `#` ones only "
                    "(`#flux:`, `# flux:`), so the job's request would be lost: write the "
                    "directives as `# flux: ...` lines (a shell, Python, Perl or R script), "
                    "or submit a script in another language with flux batch itself")
            raise BadInput(
                f"line {lineno}: {shown} reads to flux batch as a directive under another "
                f"sentinel than line {first[0]}'s `{first[1]}`: flux batch refuses the "
                "script (every directive shares one sentinel and none follows the "
                "commands, a here-document's lines included); to disable a directive put "
                f"`#` after its sentinel (`{first[1]} # -N 8`), and start a line of data "
                "with a letter")

    def parse_script(self, text: str) -> JobSpec:
        self._other_prefixes(text)
        header, spec = begin_parse(
            text, _SENTINEL, self.name,
            "directives must be grouped; flux batch rejects this one", flux_rules=True)
        self._one_sentinel(header.directives)
        directives, strings = join_triple_quotes(header.directives)
        for lineno, raw, payload in directives:
            if ends_in_backslash(payload.rstrip("\r")):  # flux batch: shlex fails there
                raise BadInput(f"line {lineno}: `{raw.strip()}` ends in a backslash: flux "
                               "batch refuses it (a directive is split as one shell line, "
                               "where a final backslash escapes nothing: No escaped "
                               "character); a directive does not go on on the next line: "
                               "put the options on one line, or on several `flux:` lines")
        modes: dict[str, str] = {}  # per-slot / per-resource -> the first option of it
        for lineno, raw, payload in directives:
            items = TABLE.parse(tokenize(payload), lineno, raw)
            for item in items:
                kept_before = len(spec.unknown)
                mode = _MODES.get(item.option) if item.known else None
                if mode:
                    modes.setdefault(mode, f"--{item.option} (line {lineno})")
                ok = mapped_or_placeholder(item, self.name, spec, self._map, spec, item)
                if not ok:
                    unknown(spec, self.name, item, item.option if not item.known
                            else "--" + item.option)
                if lineno in strings and item is items[-1] and len(spec.unknown) == kept_before:
                    raise BadInput(
                        f"line {lineno}: `{raw.strip()}` opens a string over several lines "
                        f"as the value of {item.option}, which the reader takes into the "
                        "job's settings, where a value is one line; give it on one line "
                        "(between triple quotes there too), or keep several lines for an "
                        "option flux batch passes on as written (--setattr=user.KEY, "
                        "--add-file)")
                if not item.known and item.option in _PER_TASK:
                    note(spec, f"line {lineno}: {item.option} is a flux run option; flux "
                               f"batch refuses it (a batch job is sized in slots: "
                               f"{_PER_TASK[item.option]}); kept as written")
        spec.join_output = spec.stderr is None
        self._copy_ids(spec, text)
        if len(modes) > 1:  # flux: the two ways to size a job do not mix
            raise BadInput(f"{modes['per-slot']} and {modes['per-resource']}: flux refuses "
                           "per-slot options (-n, -c, -g) with per-resource ones (--cores, "
                           "--tasks-per-node, --gpus-per-node); use one set")
        r = spec.resources
        if r.gpus_per_node is not None and not r.nodes:
            raise BadInput(f"--gpus-per-node={r.gpus_per_node} without --nodes: flux refuses "
                           "it (GPUs per node need a node count); add --nodes=N, or ask "
                           "GPUs per slot with -g/--gpus-per-slot")
        if r.nodes and r.tasks and r.nodes > r.tasks:  # flux: slots spread over the nodes
            raise BadInput(f"--nodes={r.nodes} is more than --nslots={r.tasks}: flux batch "
                           "refuses a node without a slot; ask for as many slots as nodes "
                           "at least, or --nodes alone (one slot on each)")
        if spec.constraints.exclusive and not r.nodes:  # flux-core: "exclusive can only be
            # set with a node count"
            raise BadInput(f"line {spec.metadata.pop('flux_exclusive_line', '?')}: --exclusive "
                           "without --nodes: flux batch refuses it (whole nodes need a node "
                           "count); add --nodes=N, or drop --exclusive")
        spec.metadata.pop("flux_exclusive_line", None)
        spec.metadata.pop("flux_env_kept", None)
        self._slot_per_node(spec)
        self._resolve_cores(spec)
        self._apply_duration(spec)
        self._apply_queue(spec)
        no_gpus_for_zero(spec, "-g 0 or --gpus-per-node=0")
        return spec

    @staticmethod
    def _apply_queue(spec: JobSpec) -> None:
        """`--setattr=system.queue=NAME` is the job's queue (what --queue sets), over any
        --queue: it was kept unread, so placement chose among every queue and a
        translation said it dropped."""
        got = spec.metadata.pop("flux_queue", None)
        if got is None:
            return
        name, lineno = got
        if spec.queue is not None and spec.queue != name:
            note(spec, f"line {lineno}: --setattr queue={name} is the queue (flux sets it "
                       f"after --queue, which asked {spec.queue})")
        spec.queue = name

    @staticmethod
    def _slot_per_node(spec: JobSpec) -> None:
        """`--nodes` without `--nslots` (and none of the per-resource options): flux gives
        one slot per node and the nodes whole (`--exclusive` implied), so -N 2 -c 4 is two
        slots of 4 cores, not one."""
        r = spec.resources
        if r.nodes and r.gpus_per_node is not None and r.tasks is None \
                and r.tasks_per_node is None and "flux_cores" not in spec.metadata:
            # per-resource options with no task layout (`-N 2 --gpus-per-node=4`): one slot
            # on each node holding its GPUs, as with --cores on N nodes (and as written back)
            r.tasks_per_node = 1
            note(spec, f"--nodes={r.nodes} --gpus-per-node={r.gpus_per_node} without "
                       "--tasks-per-node read as one slot on each node")
            return
        if not r.nodes or r.tasks is not None or r.tasks_per_node is not None \
                or r.gpus_per_node is not None or "flux_cores" in spec.metadata:
            return
        r.tasks = r.nodes
        spec.constraints.exclusive = True
        note(spec, f"--nodes={r.nodes} without --nslots read as {quantity(r.nodes, 'slot')}, one "
                   "per node, on whole nodes (flux implies --exclusive)")

    @staticmethod
    def _resolve_cores(spec: JobSpec) -> None:
        """`--cores=C` (a job total) as CPUs per task when the task layout divides it.
        Without one, as flux builds a per-resource request: with `--nodes=N`, one slot of
        C/N cores on each node (flux refuses C not a multiple of N); without, C slots of
        one core, wherever flux finds them."""
        cores = spec.metadata.pop("flux_cores", None)
        if cores is None:
            return
        r = spec.resources
        tasks = r.tasks or ((r.nodes or 1) * r.tasks_per_node if r.tasks_per_node else None)
        if tasks and cores % tasks == 0 and r.cpus_per_task is None:
            r.cpus_per_task = cores // tasks
        elif not tasks and r.nodes:
            if cores < r.nodes or cores % r.nodes:
                raise BadInput(f"--cores={cores} does not divide among --nodes={r.nodes}; "
                               "flux asks the same cores on each node: give a multiple of "
                               f"{r.nodes}")
            r.tasks, r.cpus_per_task = r.nodes, cores // r.nodes
            note(spec, f"--cores={cores} on {quantity(r.nodes, 'node')} read as one slot of "
                       f"{quantity(r.cpus_per_task, 'core')} on each")
        elif not tasks:
            r.tasks = cores
            note(spec, f"--cores={cores} without a task layout read as {quantity(cores, 'slot')} "
                       "of one core (flux may spread them over nodes)")
        else:
            note(spec, f"--cores={cores} does not divide among {quantity(tasks, 'task')}; kept as "
                       f"{quantity(r.cpus_per_task or 1, 'CPU')} per task")

    def _map(self, spec: JobSpec, item: Item) -> bool:  # noqa: C901 - one branch per option
        o, v = item.option, item.value or ""
        r = spec.resources
        if o in ("nslots", "cores-per-slot", "gpus-per-slot", "nodes", "tasks-per-node",
                 "gpus-per-node", "cores"):
            if not ascii_digits(v) or not int(v) and not o.startswith("gpus"):
                # flux batch refuses 0 slots, cores or nodes (0 GPUs: none, said later)
                raise bad(item, "bad count", "a whole number of GPUs" if o.startswith("gpus")
                          else "a positive integer")
            if o == "cores":  # per-resource mode: a job total, resolved after all options
                spec.metadata["flux_cores"] = int(v)
                return True
            attr = {"nslots": "tasks", "cores-per-slot": "cpus_per_task",
                    "gpus-per-slot": "gpus_per_task", "nodes": "nodes",
                    "tasks-per-node": "tasks_per_node", "gpus-per-node": "gpus_per_node"}[o]
            setattr(r, attr, int(v))
        elif o == "time-limit":
            secs = parse_fsd(v)
            if secs == 0 or v.strip().lower() in ("inf", "infinity"):
                return False  # no time limit at all (RFC 23 `inf`; 0 is none): kept
            if secs is None:
                raise bad(item, "bad time limit", "minutes or an FSD such as 30m, 2h, 1d, 90s")
            r.walltime_s = secs
        elif o in ("queue", "job-name", "cwd"):
            if is_placeholder(v):
                note(spec, placeholder_note(item, self.name, "kept as a raw value"))
            setattr(spec, {"queue": "queue", "job-name": "name", "cwd": "working_directory"}[o],
                    v)
        elif o in ("output", "error"):
            setattr(spec, "stdout" if o == "output" else "stderr",
                    neutral_out_pattern(v, self.name))
        elif o == "exclusive":
            spec.constraints.exclusive = True
            spec.metadata["flux_exclusive_line"] = item.lineno
        elif o == "begin-time":
            at = flux_parts(v)
            spec.begin = neutral(at) if at else None  # the last --begin-time counts
            if at is None:
                note(spec, f"line {item.lineno}: --begin-time={v} is a phrase flux's date "
                           "parser reads; only +FSD and YYYY-MM-DD HH:MM[:SS] are read; kept "
                           "as written")
                return False
        elif o == "urgency":
            if v not in ("0", "hold"):
                return False
            spec.hold = True
        elif o == "requires":
            if not re.fullmatch(r"[\w.\-]+", v):
                return False
            spec.constraints.features.append(v)
        elif o == "dependency":
            kind, _, jid = v.partition(":")
            if kind not in _DEPS or not jid:
                return False  # singleton, begin-time:..., a URI with a query: kept
            if (problem := flux_id_problem(jid)) is not None:
                raise bad(item, f"{problem}: --dependency",
                          f"{kind}:JOBID, JOBID in any spelling flux prints")
            spec.dependencies.append(Dependency(kind=kind, job_ids=[jid], scheduler=self.name))
        elif o == "cc":
            self._copies(spec, item, v)
        elif o == "bank":  # flux's --bank=NAME is --setattr=bank=NAME (system.bank)
            spec.account = v
        elif o == "setattr":
            key, _, val = v.partition("=")
            key = key.lstrip(".").removeprefix("system.")  # flux implies `system.`
            if key == "duration":
                return self._duration_attribute(spec, item, val)
            if key == "queue" and re.fullmatch(r"[\w.\-]+", val):
                # --queue=NAME sets system.queue too; flux applies --setattr after it
                spec.metadata["flux_queue"] = (val, item.lineno)
                return True
            if key != "bank" or not val:
                return False
            spec.account = val
        elif o == "setopt":
            return self._shell_option(spec, v)
        elif o == "env-remove":  # --env-remove=PATTERN is --env=-PATTERN
            return self._env_rule(spec, item, f"-{v}")
        elif o == "env":
            return self._env_rule(spec, item, v)
        else:
            return False
        return True

    @staticmethod
    def _copies(spec: JobSpec, item: Item, idset: str) -> None:
        """`--cc=IDSET`: a copy of the job per id, each told its id by FLUX_JOB_CC: read
        as a job array of those indexes (each id its own index, as written)."""
        m = _IDSET.fullmatch(idset.strip())
        if m is None or any(int(lo) > int(hi) for lo, _, hi in
                            (r.partition("-") for r in m.group(1).split(",")) if hi):
            raise bad(item, "bad id set", "ids and ranges of ids such as 1-10 or 0,2,5-7 "
                      "(each range from its lower id)")
        spec.array = ArraySpec(expression=m.group(1))
        spec.metadata[FLUX_CC] = idset
        spec.metadata[FLUX_CC_LINE] = item.lineno
        note(spec, f"line {item.lineno}: `{item.raw.strip()}`: flux batch would refuse it "
                   "(--cc is an option of flux submit and flux bulksubmit); its copies, each "
                   f"told its id by $FLUX_JOB_CC, read as a job array of indexes {m.group(1)}")

    @staticmethod
    def _refuse_copies(spec: JobSpec) -> None:
        """A job of --cc copies cannot be a flux batch script: flux batch has no --cc (and
        no arrays to write them as), so the line it would refuse is never written."""
        raise BadInput(_copies_refusal(spec))

    @staticmethod
    def _copy_ids(spec: JobSpec, text: str) -> None:
        """`{cc}`, which a --cc submission replaces with each copy's id in its options: in
        --output/--error the array index (%a); anywhere else it is said by name."""
        if FLUX_CC not in spec.metadata:
            return
        for attr in ("stdout", "stderr"):
            if _CC in (getattr(spec, attr) or ""):
                setattr(spec, attr, getattr(spec, attr).replace(_CC, "%a"))
        for n, line in enumerate(text.splitlines(), 1):
            directive = _SENTINEL.match(line) is not None
            if directive:
                line = _OUT_WORD.sub("", line)  # the paths, read above
            elif line.lstrip().startswith("#"):
                continue  # a comment
            if _CC not in line:
                continue
            where = "its directive" if directive else "the script's text, which flux " \
                "does not fill in (only a --cc submission's options)"
            note(spec, f"line {n}: {_CC} (each copy's id under --cc) in {where}: kept as "
                       "written; use $FLUX_JOB_CC in the script for the copy's id")

    @staticmethod
    def _env_rule(spec: JobSpec, item: Item, rule: str) -> bool:
        """One flux env rule (flux-submit(1), ENV RULES): `-PATTERN` removes, `VAR=VAL` sets
        (VAL's `$NAME` filled in from the environment, `$$` a `$`), `NAME` copies. flux
        applies them in their order. The rules up to the first one kept as written (a
        removal by pattern, a value naming a variable, `^FILE`, a pattern of names) are
        read; those after it are kept as written too, so the script's own dialect gives
        them back in their order (a removal is also read, while only removals were kept
        before it: removing twice changes nothing). True when read alone."""
        env, kept = spec.environment, spec.metadata.setdefault("flux_env_kept", [])
        only_removals = all(k == "removal" for k, _ in kept)
        after_kept = f"line {item.lineno}: env rule `{rule}` kept as written, as " \
            f"`{kept[0][1]}` before it is (flux applies env rules in their order)" if kept else ""
        if rule.startswith("-"):
            pattern = "*" if rule[1:] in ("/.*/", "/.*") else rule[1:]  # all names
            if only_removals:
                matches = _env_pattern(pattern)
                for name in [k for k in env.variables if matches and matches(k)]:
                    del env.variables[name]
                env.passed[:] = [n for n in env.passed if not (matches and matches(n))]
                if pattern == "*":
                    env.export_all = False
                    return True
            elif pattern == "*":
                note(spec, after_kept)
            kept.append(("removal", rule))
            return False
        if kept:
            note(spec, after_kept)
            kept.append(("rule", rule))
            return False
        name, eq, val = rule.partition("=")
        if eq and re.fullmatch(r"[A-Za-z_]\w*", name):
            if refs := _ENV_REFERENCE.findall(val):
                names = ", ".join(f"${r}" for r in dict.fromkeys(refs))
                note(spec, f"line {item.lineno}: `--env={rule}`: flux fills in {names} from "
                           "the submitting environment, which no other scheduler's directive "
                           "does; kept as written")
                kept.append(("rule", rule))
                return False
            env.variables[name] = val.replace("$$", "$")
            return True
        if not eq and re.fullmatch(r"[A-Za-z_]\w*", rule):  # NAME: copied from the shell
            if rule not in env.passed:
                env.passed.append(rule)
            return True
        kept.append(("rule", rule))  # ^FILE, a pattern of names
        return False

    @staticmethod
    def _duration_attribute(spec: JobSpec, item: Item, val: str) -> bool:
        """`--setattr=system.duration=SECONDS`: the time limit in the jobspec itself. flux
        applies --setattr after -t, so it wins wherever it is written; 0 is no limit (kept
        as written), and what is no number of seconds is kept for flux to judge."""
        if not re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", val):
            return False
        secs = math.ceil(float(val))
        spec.metadata["flux_duration"] = (secs, item.lineno)
        return secs > 0

    @staticmethod
    def _apply_duration(spec: JobSpec) -> None:
        got = spec.metadata.pop("flux_duration", None)
        if got is None:
            return
        secs, lineno = got
        r = spec.resources
        if r.walltime_s is not None and r.walltime_s != secs:
            limit = f"{secs} s is the time limit" if secs else "0 asks no time limit"
            note(spec, f"line {lineno}: --setattr duration={limit} (flux sets it after "
                       f"-t/--time-limit, which asked {r.walltime_s} s)")
        r.walltime_s = secs or None

    @staticmethod
    def _shell_option(spec: JobSpec, v: str) -> bool:
        key, _, val = v.partition("=")
        r = spec.resources
        if key == "cpu-affinity":
            if val in ("per-task", "off"):
                r.cpu_bind = "cores" if val == "per-task" else "none"
            elif val.startswith("map:"):
                r.cpu_bind = "map_cpu:" + val[4:].replace(";", ",")
            else:
                return False
        elif key == "gpu-affinity":
            if val == "per-task":
                r.gpu_bind = f"per_task:{r.gpus_per_task or 1}"
            elif val == "off":
                r.gpu_bind = "none"
            else:
                return False
        elif key == "output.mode" and val in ("append", "truncate"):
            spec.output_mode = val  # the shell opens the output files so (flux-shell(1))
        else:
            return False
        return True

    # ------------------------------------------------------------------ render
    @staticmethod
    def job_name(name: str) -> str:
        """The name as the scheduler keeps it: as given, but a tab (any white space but
        the plain blank) made '_' (`listed_name`)."""
        return listed_name(name)

    def render_script(self, spec: JobSpec) -> Rendered:  # noqa: C901
        spec, waits = without_submit_waits(spec, self.name, self.submit_wait)
        spec, socket_gpus = socket_gpus_per_node(spec, self.name)
        warnings = common_render_warnings(spec, self.name) + waits + socket_gpus
        lines: list[str] = []
        spec = one_shape(spec, self.name, warnings)  # a job of several shapes

        def add(opt: str, val: object = None) -> None:
            lines.append(f"#flux: --{opt}" + ("" if val is None
                                                else f"={flux_word(str(val), quote)}"))

        r, c = spec.resources, spec.constraints
        if spec.name:
            name = self.job_name(spec.name)
            warnings += job_name_warning(spec.name, name, ODD_BLANK_REASON)
            add("job-name", name)
        if spec.queue:
            add("queue", one_queue(spec, "flux", warnings))
        if spec.account:
            add("setattr", f"system.bank={spec.account}")
        for what, val in (("QOS", spec.qos), ("reservation", spec.reservation),
                          ("comment", spec.comment)):
            if val:
                warnings.append(f"dropped: {what} {val} (no flux equivalent)")
        tpn = r.tasks_per_node
        if not r.nodes and r.tasks and tpn and r.tasks % tpn == 0:
            # 16 tasks, 4 per node (LSF's span[ptile=4], or Slurm's): on 4 nodes
            r = r.model_copy(update={"nodes": r.tasks // tpn})
        elif not r.nodes and not r.tasks and tpn:  # tasks per node alone: on one node
            r = r.model_copy(update={"nodes": 1})
        tasks = r.tasks or (r.nodes * tpn if r.nodes and tpn else None)
        gpt = r.gpus_per_task
        per_node_gpus = False
        if gpt is None and r.gpus_per_node:
            per = tpn or (tasks // r.nodes if tasks and r.nodes and tasks % r.nodes == 0
                          else 1 if tasks == 1 else None)  # one task: on one node
            if per and r.gpus_per_node % per == 0 and (r.nodes or not tasks or tasks == per):
                gpt = r.gpus_per_node // per  # the same GPUs in total, a share per slot
            elif tasks and not r.nodes and gpus_of_job_over_unknown_nodes(spec):
                # the job's GPUs (Grid Engine's -l gpu beside an MPI PE): flux asks per slot
                if r.gpus_per_node % tasks == 0:
                    gpt = r.gpus_per_node // tasks
                else:
                    warnings.append(f"dropped: {quantity(r.gpus_per_node, 'GPU')} for the whole "
                                    f"job (flux -g is per slot, and they do not divide among "
                                    f"its {quantity(tasks, 'task')})")
            elif tasks and not r.nodes:
                raise BadInput(f"cannot express {quantity(r.gpus_per_node, 'GPU')} per node in "
                               f"flux: the {quantity(tasks, 'task')} have no node count, so the "
                               "GPU total is unknown; give a node count")
            else:
                per_node_gpus = True  # exact: flux's per-resource --gpus-per-node
        if per_node_gpus:  # it names a node count (one, when the job gave none)
            r = r.model_copy(update={"nodes": self._render_per_node(r, tasks, add, warnings)})
        else:
            if r.nodes:
                add("nodes", r.nodes)
            if tasks or r.nodes:  # --nodes alone would be one slot per whole node
                add("nslots", tasks or r.nodes)
            if tpn and not r.nodes:
                warnings.append(f"dropped: {quantity(tpn, 'task')} per node without a node count")
            if r.cpus_per_task:
                add("cores-per-slot", r.cpus_per_task)
            if gpt:
                add("gpus-per-slot", gpt)
        if r.gpu_type:
            add("requires", r.gpu_type)
            warnings.append(f"approximated: GPU type {r.gpu_type} as a node property")
        if r.memory_mb or r.memory_per_cpu_mb:
            warnings.append("dropped: memory request "
                            f"({r.memory_mb or r.memory_per_cpu_mb}MB; flux batch has none)")
        if r.walltime_s is not None:
            add("time-limit", fmt_fsd(r.walltime_s))
        if c.exclusive and r.nodes:
            add("exclusive")
        elif c.exclusive:  # flux batch refuses --exclusive without a node count
            warnings.append("dropped: exclusive node use (flux batch takes --exclusive only "
                            "with --nodes, and the job asks for no node count)")
        for f in c.features:
            add("requires", _requires(f, warnings))
        self._render_binding(spec, add, warnings)
        if r.distribution:
            warnings.append(f"dropped: task distribution {r.distribution} (use flux run "
                            "--taskmap inside the script)")
        if spec.array and FLUX_CC in spec.metadata:
            self._refuse_copies(spec)
        if spec.array:
            warnings.append(f"dropped: array {spec.array.expression} (flux batch has no "
                            "arrays; use flux bulksubmit)")
        # an array a Flux site ran as one job per task is waited for task by task
        arrays = spec.metadata.get(ARRAY_TASKS_WAITED) or {}
        for d in whole_job_dependencies(dependencies_for(spec, self.name, warnings),
                                        self.name, warnings):
            for jid in d.job_ids:
                tasks = arrays.get(str(flux_id_value(jid)), [jid])
                if d.kind == "afternotok" and len(tasks) > 1:
                    warnings.append(f"approximated: afternotok:{jid} waits for every task of "
                                    "that array to fail (flux jobs of their own), not one")
                for one in tasks:
                    add("dependency", f"{d.kind}:{one}")
        for opt, val in (("output", spec.stdout), ("error", spec.stderr)):
            if val:
                val = file_for_directory(val, "stdout" if opt == "output" else "stderr",
                                         spec.source_dialect, self.name, warnings)
                add(opt, map_out_pattern(val, self.name, warnings))
        if (spec.stdout or spec.stderr) and output_mode_of(spec) == "append":
            add("setopt", "output.mode=append")  # the shell truncates by default
        if spec.working_directory:
            add("cwd", spec.working_directory)
        if spec.hold:
            add("urgency", 0)
        if spec.begin and (at := render_begin(spec.begin, self.name, warnings)):
            add("begin-time", at)
        if spec.requeue is not None:
            warnings.append("dropped: " + ("rerun" if spec.requeue else "never rerun")
                            + " after a node failure (flux batch has no such option)")
        if spec.mail_user or spec.mail_events:
            what = " ".join(filter(None, (spec.mail_user, ",".join(spec.mail_events))))
            warnings.append(f"dropped: mail notification ({what}; flux has none)")
        # before the env rules kept as written, which came after these (_env_rule)
        if spec.environment.export_all is False:
            add("env", "-*")
            for name in passed_names(spec):
                add("env", name)
        for k, v in spec.environment.variables.items():
            add("env", f"{k}={v.replace('$', '$$')}")  # flux would fill in a $NAME
        # a kept line as written, but under this script's one sentinel (flux batch refuses
        # a `# flux:` line among `#flux:` ones)
        strings = _kept_strings(spec, self.sentinel)
        lines += [_SENTINEL_TAG.sub(self.sentinel, x, count=1)
                  for x in own_unknown_lines(spec, self.name, self.sentinel, _count,
                                             skip=lambda d: id(d) in strings,
                                             written=lambda v: flux_word(v, quote))]
        lines += [x for written in strings.values() for x in written]
        signal_kept: list[tuple[str, str | None]] = []
        if spec.source_dialect != self.name and (ws := warn_signal(spec)):
            add("signal", f"{ws.name}@{fmt_fsd(ws.seconds)}")
            warnings.append(said(ws, self.name, f"--signal={ws.name}@{fmt_fsd(ws.seconds)}"))
            signal_kept = carried(ws)
        hosts_said, hosts_read = render_named_hosts(spec, self.name, add)
        warnings += hosts_said + foreign_warnings(spec, self.name,
                                                  skip=signal_kept + hosts_read)
        enter, entered = start_directory(spec, self.name)  # a PBS job started in the home
        return Rendered(assemble(spec, lines, neutral_preamble(spec), enter=enter),
                        warnings + entered)

    @staticmethod
    def _render_per_node(r, tasks: int | None, add, warnings: list[str]) -> int:
        """GPUs per node exactly: flux's per-resource options (never mixed with the
        per-slot ones): --nodes, --gpus-per-node, --tasks-per-node, --cores (job total).
        The node count written."""
        nodes = r.nodes or 1
        tpn = r.tasks_per_node or (tasks // nodes if tasks and tasks % nodes == 0 else None)
        if not tasks:  # no task count: one task on each node
            tpn = 1
        add("nodes", nodes)
        add("gpus-per-node", r.gpus_per_node)
        if tpn:
            add("tasks-per-node", tpn)
            if r.cpus_per_task:
                add("cores", nodes * tpn * r.cpus_per_task)
        elif tasks:
            warnings.append(f"dropped: {quantity(tasks, 'task')} over {quantity(nodes, 'node')} "
                            "(uneven; flux's per-node GPU request takes tasks per node only)")
        if r.cpus_per_task and not tpn:
            warnings.append(f"dropped: {quantity(r.cpus_per_task, 'CPU')} per task (no task layout "
                            "to take them with flux's per-node GPU request)")
        return nodes

    @staticmethod
    def _render_binding(spec: JobSpec, add, warnings: list[str]) -> None:
        r = spec.resources
        cpu = {"cores": "per-task", "none": "off"}.get(r.cpu_bind or "")
        if r.cpu_bind and r.cpu_bind.startswith("map_cpu:"):
            cpu = "map:" + r.cpu_bind[8:].replace(",", ";")
        if cpu:
            add("setopt", f"cpu-affinity={cpu}")
        elif r.cpu_bind:
            warnings.append(f"dropped: CPU binding {r.cpu_bind} (flux shell has per-task, "
                            "off and map: only)")
        gpu = "off" if r.gpu_bind == "none" else None
        if r.gpu_bind and (r.gpu_bind.startswith("per_task:") or r.gpu_bind == "closest"):
            gpu = "per-task"
            if r.gpu_bind == "closest":
                warnings.append("approximated: --gpu-bind=closest as gpu-affinity=per-task")
        if gpu:
            add("setopt", f"gpu-affinity={gpu}")
        elif r.gpu_bind:
            warnings.append(f"dropped: GPU binding {r.gpu_bind} (no flux shell equivalent)")
        if (cpu or gpu) and spec.source_dialect != "flux":
            warnings.append("approximated: affinity shell options on flux batch apply to the "
                            "batch shell; also pass them to flux run inside the script")


flux_script = FluxScript()
