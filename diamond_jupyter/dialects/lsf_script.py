"""IBM Spectrum LSF batch scripts (#BSUB): parse into JobSpec and render from it."""

from __future__ import annotations

import re

from ..digits import ascii_digits
from ..model import (
    CPU_TIME,
    DEPENDENCY_ANY,
    TASK_RANGE,
    BadInput,
    Dependency,
    Directive,
    JobSpec,
    Resources,
    gpus_of_job_over_unknown_nodes,
)
from ..wording import quantity
from .base import Rendered
from .begin_time import lsf_parts, neutral, render_begin, render_day_of_month
from .node_lists import render_named_hosts
from .scripts_common import (
    ODD_BLANK_REASON,
    Item,
    Opt,
    OptionTable,
    SubmitWait,
    any_of_dependencies,
    array_from_one_refused,
    assemble,
    bad,
    begin_parse,
    carried_task_range,
    common_render_warnings,
    component_sizes,
    counted_groups_as_or,
    cpu_time_limit,
    dependencies_for,
    describe_totals,
    file_for_directory,
    fmt_hms,
    fmt_mem,
    foreign_warnings,
    has_index_zero,
    is_placeholder,
    job_name_warning,
    kept_stdin,
    listed_name,
    listed_variables,
    live_components,
    mail_warning,
    map_out_pattern,
    mapped_or_placeholder,
    neutral_out_pattern,
    neutral_preamble,
    no_gpus_for_zero,
    no_memory_asked,
    note,
    one_shape,
    output_mode_of,
    own_unknown_lines,
    parse_mem_mb,
    passed_names,
    placeholder_note,
    queue_names,
    quote,
    read_alone,
    read_array,
    resource_totals,
    set_components,
    socket_gpus_per_node,
    split_quoted_variables,
    start_directory,
    summed_totals,
    tokenize,
    unknown,
    without_submit_waits,
    words,
    zero_time_limit,
)
from .staging import keep_as_written, read_lsf_file
from .warn_signal import carried as signal_carried
from .warn_signal import lsf_minutes, said, warn_signal

_WORDS_ARG = words("nnodes alloc_flags gpu cwd oo eo We app sla outdir ptl jsdl ext env cn_cu "
              "cn_mem core_isolation csm data smt step_cgroup stage freq Ep Jd "
              "Lp clusters notify pack rnc is sp wa wt network hostfile jobaff mig eptl")
# flags of bsub (no value): -Ne mail on exit, -ar autoresizable, -hl host-based memory
# limits, -Zs spooled command file, -datachk, -ti orphan termination with -w
_WORDS_FLAG = words("Is Ip IS ISs Ss rn XF tty K Ne ar hl Zs datachk ti")
_LETTERS_ARG = "abCcDEeFfGgiJkLMmnoPpQqRSstTUuvWw"
_LETTERS_FLAG = "BHINrxy"
TABLE = OptionTable(
    {w: Opt("-" + w) for w in _WORDS_ARG} | {w: Opt("-" + w, "none") for w in _WORDS_FLAG},
    {c: Opt("-" + c) for c in _LETTERS_ARG} | {c: Opt("-" + c, "none") for c in _LETTERS_FLAG},
    prefix=False,
)
_SENTINEL = re.compile(r"^\s*#BSUB(?:\s+(.*)|$)")
# options whose paths or commands are often spelled with a leading './' (a suggestion's form)
_PATH_VALUED = {"-o", "-oo", "-e", "-eo", "-i", "-cwd", "-outdir", "-f", "-L", "-E", "-Ep"}


def dash_value_refusal(option: str, value: str, where: str) -> BadInput:
    """bsub's reader can take a value starting with '-' for an option of its own (as it
    can a job name, `-J -x`), so no spelling of the directive is sure to give it: refused,
    WHERE naming the line or the field."""
    path = f" (a path or a command: ./{value})" if option in _PATH_VALUED else ""
    return BadInput(
        f"{where}: the value {value!r} of {option} starts with '-', which bsub can read as "
        f"an option of its own rather than {option}'s value; give a value that starts with a "
        f"letter, a digit, '_' or '/'{path}")


def _no_dash_value(item: Item) -> None:
    """`#BSUB -P -proj`, `#BSUB -Jd -x`: refused naming the line (`-gpu -`, the site's
    default GPU request, is bsub's own spelling and stays)."""
    value = item.value or ""
    if not item.known or not value.startswith("-") or (item.option, value) == ("-gpu", "-"):
        return
    raise dash_value_refusal(item.option, value, f"line {item.lineno}: `{item.raw.strip()}`")
# Linear time: a section name starts at a word boundary (else `\w+` would rescan a long word
# from each of its letters) and brackets nest one level at most.
_SECTION = re.compile(r"\b(\w+)\[([^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*)\]")
_ARRAY_SUFFIX = re.compile(r"\[[^\[\]]*\](?:%[0-9]+)?\Z")  # "name[1-10]%2"
_DEP = {"done": "afterok", "ended": "afterany", "exit": "afternotok", "started": "after"}
_DEP_BACK = {v: k for k, v in _DEP.items()}
# bsub -w `exit(ID, != 0)` (also `> 0`, `>= 1`): the job exited with any non-zero code
_EXIT_NOT_ZERO = re.compile(r"exit\(\s*([0-9]+(?:\[(?:\*|[0-9]+)\])?)\s*,"
                            r"\s*(?:!=\s*0|>\s*0|>=\s*1)\s*\)")
_AFF = {"core": "cores", "thread": "threads", "socket": "sockets", "numa": "ldoms"}
_AFF_BACK = {"cores": "core", "threads": "thread", "sockets": "socket", "ldoms": "numa"}
_SUB = ("-R ", "-gpu ")  # parts folded back into the -R / -gpu strings on an LSF round trip
# the cores (threads) of each task at the head of an affinity[] string with other options
# a compound resource requirement (LSF 10.1): `num1*{simple_string1} + num2*{...}`, each
# term asking its slots (num) for what its simple string says
_TERM = r"\s*([0-9]+)\s*\*\s*\{([^{}]*)\}\s*"
_COMPOUND = re.compile(rf"{_TERM}(?:\+{_TERM})*")
_AFF_CORES = re.compile(r"(core|thread)\(([0-9]+)(?:,(?:[^()]|\([^()]*\))*)?\)(?!\*)")


def _count(raw: str) -> int:
    m = _SENTINEL.match(raw)
    return len(TABLE.parse(tokenize(m.group(1) or ""), 0, raw, dash="-")) if m else 0


def _lsf_select(feature: str, warnings: list[str]) -> str:
    """A Slurm-style constraint (`a&b`, `a|b`, `[a|b]`, `a*2`) as an LSF select string."""
    text = counted_groups_as_or(feature, "LSF", warnings)
    if "[" in text or "]" in text:  # matching OR: every node has the same one of them
        text = text.replace("[", "(").replace("]", ")")
        warnings.append(f"approximated: constraint {feature} as {text} (LSF cannot ask for "
                        "the same one on every node)")
    if re.search(r"\*[0-9]+", text):
        text = re.sub(r"\*[0-9]+", "", text)
        warnings.append(f"approximated: node counts in constraint {feature} dropped (LSF "
                        "select has none)")
    return text.replace("&", " && ").replace("|", " || ")


# the other usages of an LSF usage string whose memory was read (`rusage[mem=4GB, lic=1]`):
# kept, each its own usage when written back
_OTHER_USAGES = "-R rusage (other usages)"
# the usages that reserve GPUs: LSF 10's ngpus_physical, and the GPU resources of LSF 9's
# GPU support (elim-reported, one a GPU mode: exclusive process, exclusive thread, shared),
# each read as GPUs per host; the mode of the older ones is LSF's alone (said)
_GPU_USAGES = {"ngpus_physical": None, "ngpus_excl_p": "exclusive process",
               "ngpus_excl_t": "exclusive thread", "ngpus_shared": "shared"}
_GPU_USAGE = re.compile(r"(?:^|:)\s*(?:" + "|".join(_GPU_USAGES) + r")\s*=")


def _merge_rusage(sections: list[str], usages: list[str] = ()) -> list[str]:
    """One rusage section where there were several (`rusage[mem=4GB]` rendered and the
    `rusage[duration=10]` kept of the source, joined as one usage); `usages`: rusage
    sections of other usages of the source's string (`rusage[lic=1:duration=5]`), each
    kept a usage of its own after a comma (its duration its own): LSF reads one rusage
    section per resource string."""
    bodies = [x[len("rusage["):-1] for x in sections if x.startswith("rusage[")]
    apart = [x[len("rusage["):-1] for x in usages]
    if len(bodies) + len(apart) < 2:
        return sections + list(usages)
    first = next((i for i, x in enumerate(sections) if x.startswith("rusage[")),
                 len(sections))
    rest = [x for x in sections if not x.startswith("rusage[")]
    joined = ", ".join(([":".join(bodies)] if bodies else []) + apart)
    return rest[:first] + ["rusage[" + joined + "]"] + rest[first:]


def _said_gpu_mode(spec: JobSpec, item: Item, usage: str, count: str) -> None:
    """Say an LSF 9 GPU usage's mode (`ngpus_excl_p`: exclusive process ...), read as
    plain GPUs: no other scheduler's GPU request carries it."""
    if mode := _GPU_USAGES[usage]:
        note(spec, f"line {item.lineno}: rusage[{usage}={count}] read as "
                   f"{quantity(int(count), 'GPU')} per host (LSF 9's GPU resource); their {mode} "
                   "mode is LSF's alone: other schedulers get the GPUs in their default mode")


def _quoted(text: str) -> str:
    """A -R or -gpu string quoted as users write it: in double quotes, or in single quotes
    when it holds a double quote or a backslash (`select[type=="X86_64"]`), escaped inside
    double quotes only when it holds both kinds of quote; it always reads back whole."""
    if '"' not in text and "\\" not in text:
        return f'"{text}"'
    if "'" not in text:
        return f"'{text}'"
    return quote(text)  # never bare: the quotes in it are escaped


def _term_slots(c: Resources) -> int:
    """The slots of one shape's compound term: its tasks, else one per node (a Slurm
    hetjob component of `-N 1` alone), else one. The job's `-n` is their sum (it was its
    tasks alone: `-n 0` for components without tasks, which bsub refuses)."""
    t = resource_totals(c)
    return t["tasks"] or t["nodes"] or 1


def _shape_of(spec: JobSpec) -> list[dict[str, int | None]]:
    """The sizes a compound requirement was read as: while they stay, an LSF round trip
    writes the compound string back as it was."""
    return [component_sizes(c) for c in (live_components(spec) or [spec.resources])]


def parse_lsf_time(text: str) -> int | None:
    """bsub -W [hour:]minute[/host] -> seconds."""
    t = text.split("/")[0].strip()
    parts = t.split(":")
    if len(parts) > 2 or not all(ascii_digits(p) for p in parts):
        return None
    return (int(parts[0]) * 60 + int(parts[1])) * 60 if len(parts) == 2 else int(parts[0]) * 60


# bsub's interactive jobs: bsub waits at the terminal and carries its input and output
_INTERACTIVE = ("-I", "-Ip", "-Is", "-IS", "-ISp", "-ISs", "-IX")


def submit_wait(d: Directive) -> SubmitWait | None:
    """bsub's options that make it wait: an interactive job (`-I`, `-Is`, `-Ip`, `-IS*`,
    `-IX`) or SSH X11 forwarding (`-XF`, shown at the submitting terminal through the job's
    life) need a terminal; `-K` waits for the job to complete (LSF's bsub reference)."""
    if d.option in _INTERACTIVE:
        return SubmitWait(True, f"bsub {d.option} runs an interactive job: bsub waits at the "
                          "terminal until it ends, carrying the terminal's input and output",
                          f"remove it to run the script as a batch job, or run `bsub "
                          f"{d.option}` yourself from a login shell")
    if d.option == "-XF":
        return SubmitWait(True, "bsub -XF forwards the job's X11 windows over SSH to the "
                          "submitting terminal for the job's whole life",
                          "remove it (a batch job has no display), or run `bsub -XF -I` "
                          "yourself from a login shell with X forwarding")
    if d.option == "-K":
        return SubmitWait(False, "bsub -K waits for the job to complete")
    return None


def _lsf_job(jid: str) -> str:
    """A neutral job id as -w names it: one element of an array (`778812_3`) as
    `778812[3]`."""
    job, _, index = jid.partition("_")
    return f"{job}[{index}]" if index else job

# a MIG profile as Slurm names the GPU type (`1g.10gb`, NVML's `nvidia_a100_3g.40gb`): a GPU
# instance of N slices (its number before `g`)
_MIG_PROFILE = re.compile(r"(?:\w+_)?([0-9])g\.[0-9]+gb(?:\+me)?", re.IGNORECASE)


class LsfScript:
    submit_wait = staticmethod(submit_wait)
    name = "lsf"
    sentinel = "#BSUB"

    def parse_script(self, text: str, *, carry_staging: bool = True) -> JobSpec:
        """`carry_staging` False: `-f` stays as written (a script for LSF itself), not read
        into the job's stage entries."""
        header, spec = begin_parse(text, _SENTINEL, self.name,
                                   "after the first command; bsub ignores it")
        keep_as_written(spec, not carry_staging)
        limit: Item | None = None  # -M: read once the whole header is (rusage[mem] wins)
        resreqs: list[Item] = []  # every -R, in order (bsub merges them into one string)
        directives = read_alone(text, header.directives, spec, "bsub", "#BSUB")
        for lineno, raw, payload in directives:
            for item in TABLE.parse(tokenize(payload), lineno, raw, dash="-"):
                _no_dash_value(item)
                if item.known and item.option == "-M":
                    limit = item  # bsub keeps the last -M
                    continue
                if item.known and item.option == "-R":
                    resreqs.append(item)
                ok = mapped_or_placeholder(item, self.name, spec, self._map, spec, item)
                if not ok:
                    unknown(spec, self.name, item)
        if spec.stderr is None and spec.stdout:
            spec.join_output = True
        self._output_mode(spec)
        for key in ("lsf_span", "lsf_rusage_mem"):  # read: what each -R said is in the spec
            spec.metadata.pop(key, None)
        self._compound_job(spec, resreqs)
        self._ptile_without_slots(spec, spec.metadata.pop("lsf_ptile_at", None))
        self._job_memory(spec, spec.metadata.pop("lsf_mem_per_job", None))
        if limit is not None:
            self._mem_limit(spec, limit)
        self._slot_memory(spec)
        keep_as_written(spec, False)
        no_gpus_for_zero(spec, "-gpu num=0 or rusage[ngpus_physical=0]")
        return spec

    @staticmethod
    def _ptile_without_slots(spec: JobSpec, at: tuple[int, str] | None) -> None:
        """`span[ptile=N]` puts at most N of the job's slots on each host; it adds no slot.
        Without -n the job has bsub's default, one slot (unless the queue's PROCLIMIT
        names another default); with -n below N, every slot is on one host. Either way
        read as that many tasks on one node, the ptile kept for LSF as written (it was read
        as N tasks on a host: more than asked). `at`: the ptile's line and raw directive."""
        r = spec.resources
        if r.nodes is not None or r.tasks_per_node is None \
                or (r.tasks is not None and r.tasks >= r.tasks_per_node):
            return
        tpn, given = r.tasks_per_node, r.tasks
        r.tasks, r.nodes, r.tasks_per_node = given or 1, 1, None
        lineno, raw = at or (0, "")
        unknown(spec, "lsf", Item("-R", f"span[ptile={tpn}]", lineno, raw), "-R span")
        if given is None:
            note(spec, f"line {lineno}: span[ptile={tpn}] without -n: the job has bsub's "
                       "default single slot (ptile spreads the slots over hosts, it adds "
                       "none; a queue's PROCLIMIT may give another default): read as 1 task "
                       "on 1 node; give -n for more")
        else:
            note(spec, f"line {lineno}: span[ptile={tpn}] with -n {given}: every slot fits "
                       f"on one host: read as {quantity(given, 'task')} on 1 node")

    @staticmethod
    def _output_mode(spec: JobSpec) -> None:
        """-o/-e append to an existing file, -oo/-eo overwrite it (bsub): the job's mode
        when the files named agree; when they differ, read as appending (noted)."""
        named = [x for x, path in (("o", spec.stdout), ("e", spec.stderr)) if path]
        overwrite = {bool(spec.metadata.get("lsf_overwrite_" + x)) for x in named}
        if overwrite == {True}:
            spec.output_mode = "truncate"
        elif len(overwrite) > 1:
            note(spec, "the output file is overwritten and the error file appended to (or "
                       "the other way): other schedulers open both one way; read as append")

    def _mem_limit(self, spec: JobSpec, item: Item) -> None:
        """`-M mem_limit[!]`: a memory limit per process (LSF's default; one process per
        task, so per slot), a bare number in MB (LSF_UNIT_FOR_LIMITS=MB, as LSF installs
        it; KB only where a site leaves the built-in default), `!` a hard limit. It is the
        job's memory when no rusage[mem] reserves any; else kept as written."""
        value = (item.value or "").strip()
        hard = value.endswith("!")
        mb = parse_mem_mb(value.removesuffix("!").strip(), iec=False)
        if not mb:
            if is_placeholder(value, loose=True):
                note(spec, placeholder_note(item, self.name))
                unknown(spec, self.name, item)
                return
            raise bad(item, "bad memory limit", "a positive number with an optional KB, MB, "
                      "GB or TB unit (MB when none), then ! for a hard limit, e.g. 4GB")
        r = spec.resources
        if r.memory_per_cpu_mb or r.memory_mb or "lsf_compound" in spec.metadata:
            unknown(spec, self.name, item)  # the limit over a reservation: LSF's alone
            return
        r.memory_per_cpu_mb = mb
        spec.metadata["lsf_mem_limit"] = "!" if hard else ""
        bare = ascii_digits(value.removesuffix("!").strip().replace(".", "", 1))
        note(spec, f"line {item.lineno}: -M {value} read as {mb}MB per task (a limit per "
                   "process" + (", hard" if hard else "")
             + ("; a number without a unit is MB, LSF_UNIT_FOR_LIMITS=MB as LSF installs "
                "it: where a site left the built-in KB, write the unit" if bare else "") + ")")

    def _job_memory(self, spec: JobSpec, per_job: tuple[int, Item, str] | None) -> None:
        """`rusage[mem=N/job]` (LSF 10.1.0.9: reserved once for the whole job), read once the
        slots are: on one host, N for that host; over several slots, N shared evenly per
        slot (rounded down, said); what cannot be shared out (a compound requirement, a slot
        range `-n MIN,MAX`) is kept as written, said."""
        if per_job is None:
            return
        mb, item, usage = per_job
        r = spec.resources
        slots = r.tasks or 1
        said = f"line {item.lineno}: rusage[{usage}] (the whole job's)"
        ranged = self._kept_slot_range(spec, slots)  # `-n 2,8`: how many share it is not known
        if spec.components or mb < slots or ranged:
            why = "a compound requirement's terms do not share it out" if spec.components \
                else "a slot range (-n MIN,MAX) does not say how many slots share it" \
                if ranged else f"less than 1MB for each of its {slots} slots"
            note(spec, f"{said}: {why}; kept as written, no memory read")
            unknown(spec, self.name, Item("-R", f"rusage[{usage}]", item.lineno, item.raw),
                    "-R rusage")
            return
        if slots == 1 or r.nodes == 1:
            r.memory_mb = mb
            spec.metadata["lsf_mem_per_host"] = mb  # on one host, LSF's /host says the same
            note(spec, f"{said} read as {mb}MB on its one host")
            return
        r.memory_per_cpu_mb = mb // slots
        rounded = " (rounded down)" if mb % slots else ""
        note(spec, f"{said} read as {mb // slots}MB per slot of {slots}{rounded}")

    @staticmethod
    def _slot_memory(spec: JobSpec) -> None:
        """rusage[mem] is per slot (one slot per task); with several cores per task it is
        not per CPU: per node when the tasks per host are known, else per CPU (rounded
        down, noted)."""
        r = spec.resources
        per_slot, cpt = r.memory_per_cpu_mb, r.cpus_per_task or 1
        if not per_slot or cpt == 1:
            return
        r.memory_per_cpu_mb = None
        if r.tasks_per_node:
            r.memory_mb = per_slot * r.tasks_per_node
        elif r.nodes == 1 and r.tasks:
            r.memory_mb = per_slot * r.tasks
        else:
            r.memory_per_cpu_mb = per_slot // cpt
            note(spec, f"rusage[mem={per_slot}MB] per slot of {quantity(cpt, 'core')} read as "
                       f"{r.memory_per_cpu_mb}MB per CPU")

    @staticmethod
    def _kept_slot_range(spec: JobSpec, tasks: int) -> bool:
        """A kept `-n MIN,MAX` whose minimum is still the task count says it as written
        (a second `-n MIN` line would only repeat it)."""
        return any(d.dialect == "lsf" and d.option == "-n"
                   and (d.value or "").partition(",")[0] == str(tasks) for d in spec.unknown)

    def _map(self, spec: JobSpec, item: Item) -> bool:  # noqa: C901 - one branch per option
        o, v = item.option, item.value or ""
        r = spec.resources
        if o == "-f":  # a file staged in or out: the job's stage entries
            return read_lsf_file(spec, item)
        if o in ("-n", "-nnodes"):
            # bsub keeps the last one: an earlier MIN,MAX kept as written is gone
            spec.unknown = [d for d in spec.unknown if not (d.dialect == "lsf" and d.option == o)]
            lo, comma, hi = v.partition(",")  # bsub -n MIN,MAX: at least MIN slots
            if not ascii_digits(lo) or int(lo) < 1 or (o == "-n" and comma and not (
                    ascii_digits(hi) and int(hi) >= int(lo))):
                raise bad(item, "bad count", "a positive integer, or MIN,MAX slots for -n")
            spec.metadata.pop(TASK_RANGE, None)
            if comma:
                r.tasks = int(lo)
                spec.metadata[TASK_RANGE] = [int(lo), int(hi)]
                note(spec, f"line {item.lineno}: slot range {v} kept as minimum {lo}")
                return False
            if o == "-n":
                r.tasks = int(v)
            else:
                r.nodes = int(v)
                spec.metadata["lsf_nnodes"] = True
        elif o == "-c":  # [hour:]minute[/host]: normalized CPU time of the whole job
            secs = parse_lsf_time(v)
            if secs is None or "/" in v:
                return False  # a host's CPU factor named, or unreadable: kept as written
            spec.metadata[CPU_TIME] = secs
        elif o == "-W":
            secs = parse_lsf_time(v)
            limit, slash, host = v.partition("/")
            if secs is None or (slash and not host.strip()):
                raise bad(item, "bad run limit", "[hours:]minutes[/host_name or /host_model], "
                          "e.g. 24:00")
            if secs == 0:
                return zero_time_limit(spec, item, f"-W {v}")
            r.walltime_s = secs
            spec.metadata.pop("lsf_runlimit_host", None)  # bsub keeps the last -W
            if slash:  # a limit in hostA's time: LSF scales it by the running host's CPU factor
                spec.metadata["lsf_runlimit_host"] = host.strip()
                note(spec, f"approximated: line {item.lineno}: -W {v} is {limit.strip()} on "
                           f"{host.strip()}'s CPU factor (LSF scales it by the host the job "
                           f"runs on); other schedulers get the limit as written")
        elif o == "-R":
            return self._resreq(spec, item, v)
        elif o == "-gpu":
            return self._gpu(spec, item, v)
        elif o in ("-q", "-P", "-U", "-cwd", "-u"):
            attr = {"-q": "queue", "-P": "account", "-U": "reservation",
                    "-cwd": "working_directory", "-u": "mail_user"}[o]
            if is_placeholder(v):
                note(spec, placeholder_note(item, self.name, "kept as a raw value"))
            if o == "-q":  # `-q "short normal"`: any of the queues, a comma list in the model
                v = ",".join(v.split()) or v
            setattr(spec, attr, v)
        elif o == "-Jd":
            spec.comment = v
        elif o == "-J":
            m = _ARRAY_SUFFIX.search(v)
            name, arr = (v[: m.start()], m.group(0)) if m else (v, None)
            spec.name = name or None
            if arr:
                expr = arr[1:].replace("]", "", 1)
                spec.array = read_array(item, expr, "NAME[X-Y[:STEP],...][%LIMIT] (X <= Y, "
                                        "STEP and LIMIT > 0), e.g. sweep[1-100:2]%10")
                if has_index_zero(expr):  # bsub: indexes are positive integers
                    raise bad(item, "bad job array", "NAME[X-Y[:STEP],...] with 1 <= X <= Y "
                              "(LSF's array indexes start at 1), e.g. sweep[1-100:2]%10")
        elif o in ("-o", "-oo", "-e", "-eo"):
            setattr(spec, "stdout" if o[1] == "o" else "stderr",
                    neutral_out_pattern(v, self.name))
            if o in ("-oo", "-eo"):
                spec.metadata["lsf_overwrite_" + o[1]] = True
        elif o == "-x":
            spec.constraints.exclusive = True
        elif o == "-b":
            at = lsf_parts(v, f"line {item.lineno}")
            spec.begin = neutral(at) if at else None  # bsub keeps the last -b
            if at is None:
                note(spec, f"line {item.lineno}: -b {v}: a day of the month without the month "
                           "has no neutral form (sbatch has none); kept as written")
                return False
        elif o == "-H":
            spec.hold = True
        elif o in ("-r", "-rn"):  # rerunnable / never rerun
            spec.requeue = o == "-r"
        elif o in ("-B", "-N", "-Ne"):  # flags, whatever their order: mail at begin, at the
            # end, or at the end only when the job exits in failure (-Ne)
            got = {*spec.mail_events, {"-B": "begin", "-N": "end", "-Ne": "fail"}[o]}
            spec.mail_events = [e for e in ("begin", "end", "fail") if e in got]
        elif o == "-w":
            deps = []
            # `||` alone between them: any one suffices (DEPENDENCY_ANY); mixed with `&&`
            # or in brackets, kept as written
            any_of = "||" in v and "&&" not in v
            for term in re.split(r"\s*\|\|\s*" if any_of else r"\s*&&\s*", v.strip()):
                # ID[*]: each element waits for the element of the same index (one to one);
                # ID[N]: on element N alone (neutral: Slurm's ID_N). A bare ID is done(ID):
                # bsub tests a job named without a condition for DONE
                if re.fullmatch(r"[0-9]+(?:\[(?:\*|[0-9]+)\])?", term):
                    note(spec, f"line {item.lineno}: -w {term} read as done({term}) (bsub's "
                               "condition for a job named without one)")
                    term = f"done({term})"
                if failed := _EXIT_NOT_ZERO.fullmatch(term):
                    # an exit code other than 0: a job that exits does so with one (bsub's
                    # EXIT state), so the same jobs as exit(ID)
                    note(spec, f"line {item.lineno}: -w {term} read as exit({failed.group(1)}) "
                               "(a job in EXIT state ended with a non-zero code; elsewhere "
                               "the job waits for it to fail)")
                    term = f"exit({failed.group(1)})"
                m = re.fullmatch(r"(done|ended|exit|started)\(\s*([0-9]+)"
                                 r"(\[(?:\*|([0-9]+))\])?\s*\)", term)
                if not m:
                    return False
                one = f"{m.group(2)}_{m.group(4)}" if m.group(4) else m.group(2)
                deps.append(Dependency(kind=_DEP[m.group(1)], job_ids=[one],
                                       per_task=bool(m.group(3)) and not m.group(4),
                                       scheduler=self.name))
            if spec.dependencies and (any_of or spec.metadata.get(DEPENDENCY_ANY)):
                return False  # an any-of beside another -w's: no one neutral form
            spec.dependencies += deps
            if any_of:
                spec.metadata[DEPENDENCY_ANY] = True
        elif o == "-env":
            text = _env_text(v)
            head, _, rest = text.partition(",")
            keyword = head if head in ("all", "none") else None
            listed = split_quoted_variables(rest if keyword else text)
            if not listed or (keyword and listed[1]) or (not keyword and not (
                    listed[0] or listed[1])) or ",," in text or text.endswith(","):
                return False  # all, ~NAME (or all, NAME): kept as written
            env = spec.environment
            # all: the whole environment; none, or only the variables listed: NAME (its
            # value at submission) or NAME=VALUE
            env.export_all = keyword == "all"
            env.variables.update(listed[0])
            env.passed += [n for n in listed[1] if n not in env.passed]
        else:
            return False
        return True

    def _compound(self, spec: JobSpec, item: Item, v: str) -> None:
        """A compound resource requirement (`1*{rusage[mem=4000]} + 16*{span[ptile=8]
        rusage[mem=1000]}`): each term's slots with its own simple string, read as a job
        of several shapes once every line is read (`_compound_job`). What a term asks
        that has no neutral form is kept, named by its term (`-R{2} select`)."""
        if "lsf_compound_terms" in spec.metadata:
            raise bad(item, "second compound resource requirement", "one compound -R per "
                      "job (bsub takes no other -R beside a compound one)")
        comps: list[Resources] = []
        for k, m in enumerate(re.finditer(_TERM, v), 1):
            num, body = int(m.group(1)), m.group(2).strip()
            if num < 1:
                raise bad(item, f"bad slot count {num} in term {k}", "num*{simple string} "
                          "with num a positive integer, e.g. 16*{span[ptile=8]}")
            one = JobSpec()
            sub = Item("-R", body, item.lineno, item.raw)
            if body not in ("", "-") and not self._resreq(one, sub, body):  # {-}: nothing
                unknown(spec, self.name, sub, f"-R{{{k}}}")  # unreadable: kept as written
            r = one.resources
            r.tasks = num
            one.metadata.pop("lsf_ptile_at", None)
            if r.tasks_per_node and r.tasks_per_node >= num:  # every slot on one host
                r.nodes, r.tasks_per_node = 1, None
            elif r.tasks_per_node:
                r.nodes = -(-num // r.tasks_per_node)
            self._slot_memory(one)
            r.cpu_bind = None
            if one.constraints.features:  # this term's hosts only: kept with the term
                unknown(spec, self.name, Item("-R", "select[" + " && ".join(
                    one.constraints.features) + "]", item.lineno, item.raw), f"-R{{{k}}} select")
            for d in one.unknown:
                spec.unknown.append(d.model_copy(update={
                    "option": d.option.replace("-R ", f"-R{{{k}}} ", 1)}))
            comps.append(r)
        spec.metadata["lsf_compound_terms"] = (item, v.strip(), comps)

    @staticmethod
    def _compound_job(spec: JobSpec, resreqs: list[Item]) -> None:
        """The compound requirement's terms as the job's shapes: its slots are the terms'
        sum (a -n that differs is noted), a -gpu request (per host) on every term's hosts.
        bsub refuses another -R beside a compound one (LSF 10.1: compound resource
        requirements do not support multiple -R options)."""
        got = spec.metadata.pop("lsf_compound_terms", None)
        if got is None:
            return
        item, raw, comps = got
        if other := next((i for i in resreqs if i is not item), None):
            raise BadInput(f"line {other.lineno}: -R {other.value!r} beside the compound "
                           f"resource requirement of line {item.lineno}; bsub takes no other "
                           "-R with a compound one: put every section in the compound "
                           "string's terms, e.g. 1*{select[bigmem] rusage[mem=64GB]} + "
                           "16*{span[ptile=8]}")
        r = spec.resources
        slots = sum(c.tasks or 0 for c in comps)
        if r.tasks is not None and r.tasks != slots:
            note(spec, f"line {item.lineno}: -n {r.tasks} differs from the "
                       f"{quantity(slots, 'slot')} of "
                       "the compound resource requirement; read as its terms' slots (LSF "
                       "checks -n against them)")
        if r.gpus_per_node is not None or r.gpus_per_task is not None:
            for c in comps:  # -gpu asks per host (or per task): every term's alike
                c.gpus_per_node, c.gpus_per_task = r.gpus_per_node, r.gpus_per_task
                c.gpu_type = r.gpu_type
        else:  # each term's own rusage[ngpus_physical=N]: the job's model the first named
            r.gpu_type = next((c.gpu_type for c in comps if c.gpu_type), None)
        r.tasks = None
        if len(comps) == 1:
            for k, val in component_sizes(comps[0]).items():
                setattr(r, k, val)
        else:
            set_components(spec, comps)
        spec.metadata["lsf_compound"] = {"raw": raw, "as": _shape_of(spec)}
        note(spec, f"line {item.lineno}: compound resource requirement of {len(comps)} "
                   f"term{'s' if len(comps) > 1 else ''} read as "
                   + (f"a job of {len(comps)} shapes: " if len(comps) > 1 else "")
                   + describe_totals(summed_totals(comps)) + " in all")

    def _resreq(self, spec: JobSpec, item: Item, v: str) -> bool:
        if _COMPOUND.fullmatch(v):
            self._compound(spec, item, v)
            return True
        sections = _SECTION.findall(v)
        if not sections or _SECTION.sub("", v).strip():
            return False
        r = spec.resources
        for kind, body in sections:
            if kind == "rusage" and ("||" in body or "," in body):
                self._alternative_gpus(spec, item, body)  # read, the string kept whole
                if "||" in body:
                    self._alternative_mem(spec, item, body)  # read, the string kept whole
            elif kind == "rusage" and not (body := self._rusage_gpus(spec, item, body)):
                continue  # GPUs alone: read
            text = f"{kind}[{body}]"
            done = False
            if kind == "span" and (m := re.fullmatch(r"ptile=([0-9]+)|hosts=1", body)):
                earlier = spec.metadata.get("lsf_span")
                if earlier is not None and earlier[1] != text:
                    # bsub merges the -R strings into one; a second span is not documented
                    # as merged: read as the last one, said
                    note(spec, f"line {item.lineno}: {text} after {earlier[1]} (line "
                               f"{earlier[0]}) in another -R: read as the last one")
                    if earlier[1].startswith("span[hosts"):
                        r.nodes = None
                    r.tasks_per_node = None
                spec.metadata["lsf_span"] = (item.lineno, text)
            if kind == "span":
                if m := re.fullmatch(r"ptile=([0-9]+)", body):
                    r.tasks_per_node, done = int(m.group(1)), True
                    spec.metadata["lsf_ptile_at"] = (item.lineno, item.raw)
                elif body == "hosts=1":
                    r.nodes, done = 1, True
            elif kind == "rusage" and self._rusage_mem(spec, item, body):
                done = True
            elif kind == "select" and re.fullmatch(r"[\w.\-]+(\s*&&\s*[\w.\-]+)*", body):
                spec.constraints.features += re.split(r"\s*&&\s*", body)
                done = True
            elif kind == "affinity":
                m = re.fullmatch(r"(core|thread|socket|numa)\(([0-9]+)\)(?::cpubind=(\w+))?", body)
                if m and (m.group(3) or m.group(1)) in _AFF:
                    r.cpu_bind, done = _AFF[m.group(3) or m.group(1)], True
                    if m.group(1) in ("core", "thread") and r.cpus_per_task is None:
                        r.cpus_per_task = int(m.group(2))
                elif (m := _AFF_CORES.match(body)) and r.cpus_per_task is None:
                    # core(4,same=socket):distribute=pack...: each task's 4 cores read, the
                    # placement options kept as written (with the count, for LSF)
                    r.cpus_per_task = int(m.group(2))
            if not done:
                unknown(spec, self.name, Item("-R", text, item.lineno, item.raw), "-R " + kind)
        return True

    def _rusage_mem(self, spec: JobSpec, item: Item, body: str) -> bool:
        """The memory of a usage string (`rusage[mem=4000:duration=10]`, or of one of
        several usages, `rusage[lic=1:duration=5, mem=4GB:duration=10]`, each usage with its
        own duration and decay): read, per slot (LSF's default, and `/task`) or per host
        (`/host`). The rest of its usage is kept to be written after the memory (one
        usage, its duration the memory's too), the other usages kept apart (each its own).
        False when it reserves no memory, or has alternatives (`||`: kept whole)."""
        if "||" in body:
            return False
        usages = [u.strip() for u in body.split(",")]
        at = next((n for n, u in enumerate(usages)
                   if any(p.strip().startswith("mem=") for p in u.split(":"))), None)
        if at is None:
            return False
        parts = [p.strip() for p in usages[at].split(":")]
        mem = next(p for p in parts if p.startswith("mem="))
        if mem.startswith("mem=("):  # multi-phase: an amount for each of several durations
            note(spec, f"line {item.lineno}: rusage[{usages[at]}] reserves memory in phases "
                       "(each amount for its duration); kept as written, no memory read")
            return False
        m = re.fullmatch(r"mem=([0-9.]+\s*[A-Za-z]*)(?:/(task|host|job))?", mem)
        mb = parse_mem_mb(m.group(1), iec=False) if m else None
        if mb is None:
            raise bad(item, "bad rusage mem", "a number with an optional KB, MB or GB, and "
                      "an optional /task, /host or /job")
        if (first := spec.metadata.get("lsf_rusage_mem")) is not None:
            # bsub merges every -R into one string, where a load index may appear once only
            # (LSF: "A given load index cannot appear more than once")
            raise bad(item, f"rusage mem again (line {first} reserves it already)",
                      "one rusage[mem=...] for the job: bsub merges the -R strings and "
                      "refuses a load index given twice")
        spec.metadata["lsf_rusage_mem"] = item.lineno
        r = spec.resources
        if mb == 0:
            no_memory_asked(spec, item.lineno, f"rusage[{usages[at]}]")
        elif m.group(2) == "job":  # LSF 10.1.0.9: once for the whole job, read with -n
            spec.metadata["lsf_mem_per_job"] = (mb, item, usages[at])
        elif m.group(2) == "host":  # LSF 10: reserved once on each host of the job
            r.memory_mb = mb
            spec.metadata["lsf_mem_per_host"] = mb  # written back so for LSF
        else:  # per slot (LSF's default method, and /task)
            r.memory_per_cpu_mb = mb
        # the rest (duration=, decay=, other resources) has no portable meaning
        if rest := ":".join(p for p in parts if p is not mem and p):
            unknown(spec, self.name, Item("-R", f"rusage[{rest}]", item.lineno, item.raw),
                    "-R rusage")
        if others := [u for n, u in enumerate(usages) if n != at and u]:
            unknown(spec, self.name, Item("-R", f"rusage[{', '.join(others)}]", item.lineno,
                                          item.raw), _OTHER_USAGES)
        return True

    @staticmethod
    def _gpus_in_rusage(spec: JobSpec) -> bool:
        """An LSF script that asked its GPUs as rusage[ngpus_physical=N] gets them back so
        (a site without LSB_GPU_NEW_SYNTAX takes no -gpu), while they are per host."""
        r = spec.resources
        return spec.source_dialect == "lsf" and bool(spec.metadata.get("lsf_gpu_rusage")) \
            and bool(r.gpus_per_node) and not r.gpus_per_task \
            and not gpus_of_job_over_unknown_nodes(spec) and not live_components(spec)

    @staticmethod
    def _alternative_gpus(spec: JobSpec, item: Item, body: str) -> None:
        """A usage string of several parts: `,` joins usages all reserved, `||` alternatives
        LSF tries in order. The GPUs (`ngpus_physical=N[:gmodel=X]`) of the first
        alternative are what the job asks first: read (per host, as in one usage); the
        string is kept whole as written (LSF gets it back, with no -gpu beside it)."""
        first = body.split("||")[0]
        got: dict[str, str] = {}
        for usage in first.split(","):
            for part in usage.split(":"):
                k, _, x = (p.strip() for p in part.partition("="))
                if (k in _GPU_USAGES or k == "gmodel") and x:
                    got.setdefault("gpus" if k in _GPU_USAGES else k, x)
                    if k in _GPU_USAGES:
                        got.setdefault("usage", k)
        n = got.get("gpus", "")
        if not ascii_digits(n):
            return
        _said_gpu_mode(spec, item, got["usage"], n)
        r = spec.resources
        r.gpus_per_node, r.gpus_per_task = int(n), None
        r.gpu_type = got.get("gmodel") or r.gpu_type
        spec.metadata["lsf_gpus_in_kept_rusage"] = int(n)
        alternatives = "its first alternative's" if "||" in body else "its"
        note(spec, f"line {item.lineno}: rusage[{body.strip()}]: {alternatives} GPUs read ({n} "
                   f"per host{', ' + r.gpu_type if r.gpu_type else ''}); the usage string is "
                   "kept as written (the other parts have no neutral form)")

    def _alternative_mem(self, spec: JobSpec, item: Item, body: str) -> None:
        """Usage-string alternatives (`rusage[mem=32GB:duration=10 || mem=16GB]`: LSF tries
        each in order): the memory of the first, what the job asks first, is read (per
        slot, or per host with /host); the string is kept whole as written (LSF gets it
        back, with no other memory beside it)."""
        first = body.split("||")[0]
        mem = next((p.strip() for u in first.split(",") for p in u.split(":")
                    if p.strip().startswith("mem=")), None)
        if mem is None:
            return
        self._rusage_mem(spec, item, mem)  # reads it and says a second one is bad input
        r = spec.resources
        spec.metadata["lsf_mem_in_kept_rusage"] = (r.memory_mb, r.memory_per_cpu_mb)
        note(spec, f"line {item.lineno}: rusage[{body.strip()}]: its first alternative's "
                   f"memory read ({mem[4:]}); the usage string is kept as written")

    @staticmethod
    def _mem_kept_in_rusage(spec: JobSpec) -> bool:
        """The memory was read from usage-string alternatives kept whole and is still what
        they ask: an LSF script gets it back in them alone."""
        r = spec.resources
        kept = spec.metadata.get("lsf_mem_in_kept_rusage")
        return spec.source_dialect == "lsf" and kept is not None \
            and tuple(kept) == (r.memory_mb, r.memory_per_cpu_mb)

    @staticmethod
    def _mem_per_host(spec: JobSpec) -> int | None:
        """An LSF script's memory read from `rusage[mem=N/host]` and still what the job
        asks (per node, none per CPU): N, to be written back per host; else None."""
        r = spec.resources
        mb = spec.metadata.get("lsf_mem_per_host")
        if spec.source_dialect == "lsf" and mb is not None and r.memory_mb == mb \
                and not r.memory_per_cpu_mb and not spec.components \
                and not LsfScript._mem_kept_in_rusage(spec):  # alternatives: kept whole
            return mb
        return None

    @staticmethod
    def _gpus_kept_in_rusage(spec: JobSpec) -> bool:
        """The GPUs were read from a usage string kept whole (`_alternative_gpus`) and are
        still what it asks: an LSF script gets them back in it alone."""
        return spec.source_dialect == "lsf" and spec.resources.gpus_per_node is not None \
            and spec.metadata.get("lsf_gpus_in_kept_rusage") == spec.resources.gpus_per_node \
            and not spec.resources.gpus_per_task

    @staticmethod
    def _rusage_gpus(spec: JobSpec, item: Item, body: str) -> str:
        """`rusage[ngpus_physical=N:gmodel=X]` (LSF's GPU request inside a resource string,
        the form of compound and alternative requirements): N GPUs on each host (LSF
        reserves ngpus_physical per host unless a site sets it per task, as -gpu num= is
        per host) and their model; returns what the usage string asks besides. A string of
        several usages (`,` or `||`) is left whole."""
        if "||" in body or "," in body or not _GPU_USAGE.search(body):
            return body
        r, rest = spec.resources, []
        for part in body.split(":"):
            k, _, x = (p.strip() for p in part.partition("="))
            if k in _GPU_USAGES and ascii_digits(x):
                r.gpus_per_node, r.gpus_per_task = int(x), None
                spec.metadata["lsf_gpu_rusage"] = k  # written back in this form
                _said_gpu_mode(spec, item, k, x)
            elif k == "gmodel" and x:
                r.gpu_type = x
            else:
                rest.append(part)
        return ":".join(rest)

    def _gpu(self, spec: JobSpec, item: Item, v: str) -> bool:
        r = spec.resources  # bsub keeps the last -gpu: an earlier one's request is gone
        r.gpus_per_node = r.gpus_per_task = r.gpu_type = r.gpu_bind = None
        spec.unknown = [d for d in spec.unknown if not d.option.startswith("-gpu ")]
        if v == "-":  # the site's default GPU request (num=1 unless configured)
            r.gpus_per_node = 1
            return True
        for part in v.split(":"):
            k, _, x = part.partition("=")
            if k == "num":
                num, _, per = x.partition("/")
                if not ascii_digits(num) or per not in ("", "host", "task"):
                    raise bad(item, "bad GPU num", "num=N, num=N/task or num=N/host")
                if per == "task":
                    r.gpus_per_task = int(num)
                else:
                    r.gpus_per_node = int(num)
            elif k == "gmodel":
                r.gpu_type = x
            elif k == "aff" and x in ("yes", "no"):
                r.gpu_bind = "closest" if x == "yes" else "none"
            else:
                unknown(spec, self.name, Item("-gpu", part, item.lineno, item.raw), "-gpu " + k)
        return True

    def term_shapes(self, spec: JobSpec) -> list[tuple[str, JobSpec, bool]] | None:
        """The terms an LSF site gets of a job of several shapes (its compound requirement,
        as rendered), each as its text, a spec of the pieces it is placed in and whether it
        spans hosts: a term with a span[] is its hosts (ptile slots each, on distinct
        hosts; hosts=1: one piece of every slot), one without is its slots placed
        freely (LSF fills hosts as their slots allow). A term's GPUs are per host: on free
        slots they are asked of the hosts it may use, not of each slot. None for a job of
        one shape, or shapes no compound string says."""
        comps = live_components(spec)
        text = self._compound_text(spec, []) if comps else None
        if text is None:
            return None
        texts = [m.group(0).strip() for m in re.finditer(_TERM, text)]
        if len(texts) != len(comps):
            return None
        out = []
        for k, (term, c) in enumerate(zip(texts, comps, strict=True), 1):
            hosts, slots = resource_totals(c)["nodes"], _term_slots(c)
            one = JobSpec()
            one.constraints = spec.constraints.model_copy(deep=True)
            one.metadata = {m: v for m, v in spec.metadata.items() if m != "lsf_compound"}
            # this term's own select[] (`-R{2} select`) as the whole job's
            one.unknown = [d.model_copy(update={"option": "-R select"})
                           if d.option == f"-R{{{k}}} select" else d for d in spec.unknown
                           if d.option == f"-R{{{k}}} select" or d.option != "-R select"
                           and not d.option.startswith("-R{")]
            r = one.resources
            r.walltime_s = spec.resources.walltime_s
            r.gpu_type = c.gpu_type or spec.resources.gpu_type
            r.cpus_per_task, r.memory_per_cpu_mb = c.cpus_per_task, c.memory_per_cpu_mb
            r.gpus_per_node = c.gpus_per_node
            if hosts:
                r.nodes, r.tasks_per_node, r.memory_mb = hosts, -(-slots // hosts), c.memory_mb
            else:
                r.nodes, r.tasks_per_node = slots, 1
                r.memory_mb = c.memory_mb // slots if c.memory_mb else None
            out.append((term, one, bool(hosts)))
        return out

    # ------------------------------------------------------------------ render
    @staticmethod
    def job_name(name: str) -> str:
        """The name as the scheduler keeps it (the rendered `-J`): brackets become `_`, as
        bsub reads `NAME[1-1000]` as a job array of 1000 jobs, not as a name, and so does a
        tab (any white space but the plain blank, `listed_name`)."""
        return listed_name(name.replace("[", "_").replace("]", "_"))

    def render_script(self, spec: JobSpec) -> Rendered:  # noqa: C901
        spec, waits = without_submit_waits(spec, self.name, self.submit_wait)
        spec, socket_gpus = socket_gpus_per_node(spec, self.name)
        warnings = common_render_warnings(spec, self.name) + waits + socket_gpus
        lines: list[str] = []
        if self._compound_text(spec, []) is None:
            spec = one_shape(spec, self.name, warnings)  # a job of several shapes

        def add(opt: str, val: object = None) -> None:
            text = "" if val is None else str(val)
            text = _quoted(text) if opt in ("-R", "-gpu") else quote(text)  # quoted by habit
            lines.append(f"#BSUB {opt}" + ("" if val is None else f" {text}"))

        r, c = spec.resources, spec.constraints
        own = [d for d in spec.unknown if d.dialect == self.name]
        if spec.name or spec.array:
            name = self.job_name(spec.name) if spec.name else "array"
            if name.startswith("-"):
                # `#BSUB -J -x`: bsub's option reader may take the name for an option of
                # its own, and no quoting of the directive makes it a name for certain
                raise BadInput(
                    f"lsf cannot express the job name {spec.name!r}: bsub can read a name "
                    "starting with '-' as an option rather than the name of `-J`; give one "
                    f"that starts with a letter, a digit or '_' (e.g. {'j' + name!r})")
            if spec.name:
                why = [w for w, changed in (
                    ("bsub reads NAME[...] as a job array", "[" in spec.name or "]" in spec.name),
                    (ODD_BLANK_REASON, listed_name(spec.name) != spec.name)) if changed]
                warnings += job_name_warning(spec.name, name, "; ".join(why))
            indexes, pct, limit = (spec.array.expression if spec.array else "").partition("%")
            if spec.array and has_index_zero(indexes):
                raise array_from_one_refused(spec.array.expression, "lsf", "LSF",
                                             "bsub -J takes positive indexes", "LSB_JOBINDEX")
            # the running-task limit follows the brackets: name[1-100]%10
            add("-J", name + (f"[{indexes}]" if spec.array else "") + pct + limit)
        if spec.comment:
            if spec.comment.startswith("-"):
                raise dash_value_refusal("-Jd", spec.comment, "lsf cannot express the comment")
            add("-Jd", spec.comment)
        queues = " ".join(queue_names(spec.queue)) or None  # bsub's list: space separated
        for opt, val in (("-q", queues), ("-P", spec.account), ("-U", spec.reservation),
                         ("-cwd", spec.working_directory)):
            if val:
                add(opt, val)
        if spec.qos:
            warnings.append(f"dropped: QOS {spec.qos} (no LSF equivalent)")
        compound = self._compound_text(spec, warnings)
        if compound is not None:  # slots and sizes in the compound string's terms
            slots = sum(_term_slots(x) for x in live_components(spec) or [spec.resources])
            if not self._kept_slot_range(spec, slots):  # a kept -n MIN,MAX says it
                add("-n", slots)
            add("-R", compound)
        else:
            self._simple_resreq(spec, add, own, warnings)
        if (compound is None or "ngpus_physical" not in compound) \
                and not self._gpus_in_rusage(spec) \
                and not self._gpus_kept_in_rusage(spec):  # else in the resource string
            self._render_gpu(spec, add, own, warnings)
        if r.walltime_s is not None:
            mins = -(-r.walltime_s // 60)  # whole minutes, rounded up (exact for any int)
            host = spec.metadata.get("lsf_runlimit_host") if spec.source_dialect == "lsf" else None
            add("-W", f"{mins // 60}:{mins % 60:02d}" + (f"/{host}" if host else ""))
            if r.walltime_s % 60:
                warnings.append(f"approximated: walltime {r.walltime_s}s rounded up to minutes")
        if cpu := cpu_time_limit(spec):
            mins = -(-cpu // 60)
            add("-c", f"{mins // 60}:{mins % 60:02d}")
            if spec.source_dialect != self.name:
                warnings.append(f"approximated: CPU-time limit {fmt_hms(cpu)} as -c "
                                f"{mins // 60}:{mins % 60:02d} (LSF scales it by the CPU "
                                "factor of the host the job runs on; whole minutes, rounded "
                                "up)")
        if r.distribution:
            warnings.append(f"dropped: task distribution {r.distribution} (no LSF directive)")
        if c.exclusive:
            add("-x")
        truncate = output_mode_of(spec) == "truncate"
        for opt, val in (("o", spec.stdout), ("e", spec.stderr)):
            if val:
                val = file_for_directory(val, "stdout" if opt == "o" else "stderr",
                                         spec.source_dialect, self.name, warnings)
                # -oo / -eo: the file overwritten, not appended to (an LSF script's own
                # choice per file, else the job's mode)
                over = spec.metadata.get("lsf_overwrite_" + opt) \
                    if spec.source_dialect == self.name else truncate
                add(f"-{opt}{'o' if over else ''}", map_out_pattern(val, self.name, warnings))
        if spec.hold:
            add("-H")
        day_carried = []  # a PBS day of the month without its month: bsub's d:h:m
        if spec.begin and (at := render_begin(spec.begin, self.name, warnings)):
            add("-b", at)
        elif day := render_day_of_month(spec.unknown, spec.source_dialect, self.name,
                                        warnings):
            add("-b", day[0])
            day_carried.append((day[1].option, day[1].value))
        if spec.requeue is not None:
            add("-r" if spec.requeue else "-rn")
        if spec.mail_user:
            add("-u", spec.mail_user)
        ev = set(spec.mail_events)
        warnings += mail_warning(spec.mail_events, {"begin", "end", "fail", "all"}, self.name)
        if ev & {"begin", "all"}:
            add("-B")
        if ev & {"end", "all"}:
            add("-N")  # at the end, whatever its outcome (a failure included)
        elif "fail" in ev:
            add("-Ne")  # only when the job exits in failure
        if deps := dependencies_for(spec, self.name, warnings):
            add("-w", (" || " if any_of_dependencies(spec) else " && ").join(
                f"{_DEP_BACK[d.kind]}({_lsf_job(i)}{'[*]' if d.per_task else ''})"
                for d in deps for i in d.job_ids))
        env = spec.environment
        if env.export_all is not None or env.variables:
            add("-env", _env_list(spec, warnings))
        if compound is None or compound != (spec.metadata.get("lsf_compound") or {}).get("raw"):
            warnings += [f"dropped: {d.value} of the compound requirement's term "
                         f"{d.option[3:].partition('}')[0]} (the job's shapes have changed)"
                         for d in own if d.option.startswith("-R{")]
        lines += own_unknown_lines(spec, self.name, self.sentinel, _count,
                                   skip=lambda d: d.option.startswith((*_SUB, "-R{")))
        carried = [("-pe", d.value) for d in spec.unknown if d.dialect == "sge"
                   and d.option == "-pe" and any(f"{d.raw.strip()} as -n" in w for w in warnings)]
        if spec.source_dialect != self.name and (ws := warn_signal(spec)):
            minutes = lsf_minutes(ws)
            add("-wa", ws.name)
            add("-wt", minutes)
            rounded = ", rounded up to whole minutes" if ws.seconds % 60 else ""
            warnings.append(said(ws, self.name, f"-wa {ws.name} -wt {minutes}", rounded))
            carried += signal_carried(ws)
        hosts_said, hosts_read = render_named_hosts(spec, self.name, add)
        if stdin := kept_stdin(spec, self.name, warnings):  # sbatch --input, qsub -i
            add("-i", stdin[0])
            carried.append((stdin[1].option, stdin[1].value))
        warnings += hosts_said + foreign_warnings(spec, self.name,
                                                  skip=carried + day_carried + hosts_read)
        enter, entered = start_directory(spec, self.name)  # a PBS job started in the home
        preamble = neutral_preamble(spec, variables_listed=True)
        return Rendered(assemble(spec, lines, preamble, enter=enter), warnings + entered)


    def _compound_text(self, spec: JobSpec, warnings: list[str]) -> str | None:
        """The job's compound resource requirement: an LSF script's as written while its
        sizes stay, else one term per shape of a job of several shapes (`2*{span[ptile=1]
        rusage[mem=4GB]} + 32*{span[ptile=16]}`). None for a job of one shape, or shapes
        a compound string cannot say here (GPUs that differ between them, tasks that do
        not divide among a shape's nodes)."""
        kept = spec.metadata.get("lsf_compound")
        if spec.source_dialect == self.name and isinstance(kept, dict) \
                and kept.get("as") == _shape_of(spec):
            return kept["raw"]
        comps = live_components(spec)
        if not comps or any(x.gpus_per_task for x in comps):
            return None
        # GPUs that differ between the shapes: each term's own, as -gpu asks every host alike
        term_gpus = len({x.gpus_per_node for x in comps}) > 1
        said: list[str] = []
        select = " && ".join(_lsf_select(f, said) for f in spec.constraints.features)
        terms = []
        for x in comps:
            nodes, slots, cpt = resource_totals(x)["nodes"], _term_slots(x), x.cpus_per_task or 1
            sections = [f"select[{select}]"] if select else []
            if nodes and slots % nodes:
                return None  # no ptile puts these slots on exactly these hosts
            if nodes:
                sections.append("span[hosts=1]" if nodes == 1 else
                                f"span[ptile={slots // nodes}]")
            per_slot = x.memory_per_cpu_mb * cpt if x.memory_per_cpu_mb else None
            if x.memory_mb:  # a node's memory shared by its slots (rounded down)
                per_host = slots // nodes if nodes else slots
                per_slot = x.memory_mb // per_host or None
                if x.memory_mb % per_host:
                    said.append(f"approximated: memory {x.memory_mb}MB per node as "
                                f"{per_slot}MB per slot of {per_host} (rounded down)")
            usage = [f"mem={fmt_mem(per_slot, 'lsf')}"] if per_slot else []
            if term_gpus and x.gpus_per_node:
                usage.append(f"ngpus_physical={x.gpus_per_node}")
                kind = x.gpu_type or spec.resources.gpu_type
                usage += [f"gmodel={kind}"] if kind else []
            if usage:
                sections.append(f"rusage[{':'.join(usage)}]")
            if cpt > 1:
                sections.append(f"affinity[core({cpt})]")
            terms.append(f"{slots}*{{{' '.join(sections) or '-'}}}")  # {-}: nothing more
        if term_gpus:
            said.append("approximated: each shape's GPUs as its term's rusage[ngpus_physical=N] "
                        "(N on each of its hosts where LSF reserves ngpus_physical per host, "
                        "its default; -gpu would ask every host alike)")
        warnings += [w for w in said if w not in warnings]
        return " + ".join(terms)

    def _simple_resreq(self, spec: JobSpec, add, own: list, warnings: list[str]) -> None:
        """-n and the one -R string of a job of one shape."""
        r, c = spec.resources, spec.constraints
        tpn, cpt = r.tasks_per_node, r.cpus_per_task or 1
        # tasks per node alone: on one node (Slurm's default node count)
        tasks = r.tasks or ((r.nodes or 1) * tpn if tpn else None)
        sections: list[str] = []
        if r.nodes and not tasks and spec.metadata.get("lsf_nnodes"):
            add("-nnodes", r.nodes)
        elif r.nodes and not tasks:
            add("-n", r.nodes)
            sections.append("span[ptile=1]")
            warnings.append(f"approximated: {quantity(r.nodes, 'node')} without a task count "
                            "rendered as one slot per host")
        elif tasks and (rng := carried_task_range(spec, tasks, "sge", "-pe", "-n {0},{1}",
                                                  warnings)):
            add("-n", f"{rng[0]},{rng[1]}")  # another scheduler's slot range: LSF's MIN,MAX
        elif tasks and not self._kept_slot_range(spec, tasks):
            add("-n", tasks)  # one slot per task; CPUs per task through affinity[core(N)]
        elif cpt > 1:
            add("-n", 1)
        if any(d.option == "-R span" for d in own):
            pass  # the script's own span, kept as written: one span per string
        elif tpn:
            sections.append(f"span[ptile={tpn}]")
        elif r.nodes == 1 and tasks:
            sections.append("span[hosts=1]")
        elif r.nodes and tasks:
            sections.append(f"span[ptile={-(-tasks // r.nodes)}]")
        # the slots on each node: the memory per node shared among them; a slot is a task
        # (its CPUs through affinity[]), so it holds the memory of each of its CPUs
        spn = tpn or (tasks // r.nodes if r.nodes and tasks and tasks % r.nodes == 0 else None)
        # a node's memory shared among its slots, rounded down: never a larger request
        per_slot = r.memory_per_cpu_mb * cpt if r.memory_per_cpu_mb else \
            (max(1, r.memory_mb // (spn or 1)) if r.memory_mb else None)
        if r.memory_mb and not r.memory_per_cpu_mb and not r.nodes and not tpn and tasks:
            # a node's memory and no node count (Slurm's -n 4 --mem=8G): the job's memory,
            # as on one node, shared by its slots (rounded down: never a larger request)
            spn, per_slot = tasks, max(1, r.memory_mb // tasks)
        limit = spec.metadata.get("lsf_mem_limit") if spec.source_dialect == "lsf" else None
        per_host = self._mem_per_host(spec)
        if per_host:  # an LSF script's rusage[mem=.../host]: once on each host, as written
            sections.append(f"rusage[mem={fmt_mem(per_host, 'lsf')}/host]")
        elif per_slot and limit is not None:  # an LSF script's -M, as it was written
            add("-M", fmt_mem(per_slot, "lsf") + limit)
        elif per_slot and not self._mem_kept_in_rusage(spec):  # else in the kept string
            sections.append(f"rusage[mem={fmt_mem(per_slot, 'lsf')}]")
        if self._mem_kept_in_rusage(spec) or per_host:
            pass  # as the script's own usage string says it
        elif r.memory_per_cpu_mb and r.memory_mb:
            warnings.append(f"dropped: memory per node {r.memory_mb}MB (LSF reserves per slot)")
        elif r.memory_mb and spn != 1:
            warnings.append(f"approximated: memory {r.memory_mb}MB per node as {per_slot}MB per "
                            "slot (LSF rusage[mem] is per slot on most sites)")
        if c.features:
            sections.append("select[" + " && ".join(
                _lsf_select(f, warnings) for f in c.features) + "]")
        kept_affinity = spec.source_dialect == "lsf" and any(
            d.option == "-R affinity" for d in own)  # as written, the cores in it
        if kept_affinity:
            pass
        elif cpt > 1 and r.cpu_bind in (None, "none"):
            sections.append(f"affinity[core({cpt})]")
            if r.cpu_bind == "none":
                warnings.append("dropped: CPU binding none (LSF's affinity[core(N)] binds)")
        elif r.cpu_bind and r.cpu_bind != "none":
            if r.cpu_bind in _AFF_BACK:
                pu = _AFF_BACK[r.cpu_bind]
                sections.append(f"affinity[{pu}({cpt})]" if pu in ("core", "thread")
                                else f"affinity[core({cpt}):cpubind={pu}]")
            else:
                warnings.append(f"dropped: CPU binding {r.cpu_bind} (no LSF affinity "
                                "equivalent)")
        if self._gpus_in_rusage(spec):  # the script's own form (sites without -gpu)
            usage = [f"{spec.metadata['lsf_gpu_rusage']}={r.gpus_per_node}"]
            usage += [f"gmodel={r.gpu_type}"] if r.gpu_type else []
            sections.append(f"rusage[{':'.join(usage)}]")
        sections = _merge_rusage(sections + [d.value or "" for d in own if d.option.startswith(
            "-R ") and d.option != _OTHER_USAGES], [d.value or "" for d in own
                                                    if d.option == _OTHER_USAGES])
        if sections:
            add("-R", " ".join(sections))

    @staticmethod
    def _render_gpu(spec: JobSpec, add, own: list, warnings: list[str]) -> None:
        r = spec.resources
        parts = []
        if r.gpus_per_task:
            parts.append(f"num={r.gpus_per_task}/task")
        elif r.gpus_per_node and gpus_of_job_over_unknown_nodes(spec):
            warnings.append(f"dropped: {quantity(r.gpus_per_node, 'GPU')} for the whole job (LSF "
                            "-gpu num= is per host, and the hosts of its tasks are LSF's choice)")
        elif r.gpus_per_node:
            parts.append(f"num={r.gpus_per_node}")
        mig = _MIG_PROFILE.fullmatch(r.gpu_type or "")
        if parts and mig and spec.source_dialect != "lsf":
            parts.append(f"mig={mig.group(1)}")
            warnings.append(f"approximated: GPU type {r.gpu_type} (a MIG profile, a GPU "
                            f"instance of {mig.group(1)} slice(s)) as -gpu mig={mig.group(1)} "
                            "(LSF asks MIG instances by their size; a gmodel= names a GPU "
                            "model, which no host would have)")
        elif parts and r.gpu_type:
            parts.append(f"gmodel={r.gpu_type}")
        elif r.gpu_type:
            warnings.append(f"dropped: GPU type {r.gpu_type} without a GPU count (LSF's "
                            "gmodel= goes with -gpu num=)")
        if r.gpu_bind in ("closest", "none") and parts:
            parts.append("aff=" + ("yes" if r.gpu_bind == "closest" else "no"))
            if r.gpu_bind == "closest" and spec.source_dialect != "lsf":
                warnings.append("approximated: --gpu-bind=closest as LSF -gpu aff=yes")
        elif r.gpu_bind:
            warnings.append(f"dropped: GPU binding {r.gpu_bind} (no LSF equivalent)")
        parts += [d.value or "" for d in own if d.option.startswith("-gpu ")]
        if parts:
            add("-gpu", ":".join(parts))


lsf_script = LsfScript()


def _env_text(value: str) -> str:
    """bsub -env's list with the blanks around its commas dropped, but in a value quoted to
    hold commas (`all, TEST='A, B'`: LSF takes the single quotes off, TEST is `A, B`)."""
    return "".join(part if part.startswith("'") else re.sub(r"\s*,\s*", ",", part)
                   for part in re.split(r"('[^']*')", value.strip()))


def _env_list(spec: JobSpec, warnings: list[str]) -> str:
    """bsub's -env: `all[, K=V ...]` where the whole environment goes; where it does not,
    only the variables listed (`NAME` with its value at submission, `K=V` as given), or
    `none` when nothing is listed (bsub takes `none` alone, never with variables)."""
    env = spec.environment
    pairs = [f"{k}={v}" for k, v in listed_variables(spec).items()]
    if env.export_all is not False:
        return ", ".join(["all", *pairs])
    names = passed_names(spec)
    if reserved := [n for n in names if n.lower() in ("all", "none")]:
        warnings.append(f"dropped: {', '.join(reserved)} from the submitting shell (LSF -env "
                        "reads 'all' and 'none' as keywords, never as variable names)")
        names = [n for n in names if n not in reserved]
    return ", ".join([*names, *pairs]) or "none"
