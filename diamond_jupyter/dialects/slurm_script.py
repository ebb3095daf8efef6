"""Slurm batch scripts (#SBATCH): parse into JobSpec and render from it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..digits import ascii_digits
from ..model import (
    DEPENDENCY_ANY,
    GPUS_PER_JOB,
    MAIL_EVENTS,
    PER_GPU,
    BadInput,
    Dependency,
    Directive,
    JobSpec,
    Resources,
    gpus_of_job_over_unknown_nodes,
)
from ..needs import Feature, Op, join_features, parse_constraint
from ..wording import quantity
from .base import Rendered
from .begin_time import render_begin, slurm_parts
from .node_lists import component_hosts, render_named_hosts
from .outputs_common import expand_hostlist
from .scripts_common import (
    COMPONENT_NODELISTS,
    ODD_BLANK_REASON,
    OUTPUT_LINES,
    Item,
    Opt,
    OptionTable,
    SubmitWait,
    any_of_dependencies,
    assemble,
    bad,
    begin_parse,
    common_render_warnings,
    component_sizes,
    component_times,
    dependencies_for,
    describe_totals,
    file_for_directory,
    fmt_hms,
    fmt_mem,
    foreign_warnings,
    is_placeholder,
    job_name_warning,
    kept_stdin,
    listed_name,
    listed_variables,
    live_components,
    map_out_pattern,
    mapped_or_placeholder,
    neutral_preamble,
    no_gpus_for_zero,
    note,
    output_mode_of,
    own_unknown_lines,
    parse_mem_mb,
    parse_slurm_time,
    passed_names,
    pbs_shrink_to_fit,
    placeholder_note,
    quote,
    read_alone,
    read_array,
    set_components,
    sh_quote,
    split_variables,
    start_directory,
    summed_totals,
    to_int,
    unknown,
    whole_job_dependencies,
    without_submit_waits,
    without_zero_gpus,
    words,
)
from .slurm_wrappers import apply_wrapper_lines
from .staging import check_burst_buffer_block
from .warn_signal import carried as signal_carried
from .warn_signal import said, slurm_value, warn_signal

_NONE = words("contiguous hold ignore-pbs no-requeue overcommit oversubscribe parsable quiet "
              "reboot "
         "requeue spread-job test-only use-min-nodes verbose wait help usage version "
         "wait-all-nodes")
_OPTIONAL = words("exclusive get-user-env nice no-kill")
_REQUIRED = words(
    "account acctg-freq array batch bb bbf begin chdir cluster-constraint clusters comment "
    "constraint container container-id core-spec cores-per-socket cpu-freq cpus-per-gpu "
    "cpus-per-task deadline delay-boot dependency distribution error exclude export export-file "
    "extra extra-node-info gid gpu-bind gpu-freq gpus gpus-per-node gpus-per-socket "
    "gpus-per-task gres gres-flags hint input job-name kill-on-invalid-dep licenses mail-type "
    "mail-user mcs-label mem mem-bind mem-per-cpu mem-per-gpu mincpus network nodefile "
    "nodelist nodes ntasks ntasks-per-core ntasks-per-gpu ntasks-per-node ntasks-per-socket "
    "open-mode output partition power prefer priority profile propagate qos reservation "
    "segment signal sockets-per-node switches thread-spec threads-per-core time time-min tmp "
    "tres-bind tres-per-task uid wckey wrap cpu-bind"
)
# sbatch's file name patterns (`%j`, `%3a`, `%x`...), filled in stdio file names only
_FILE_PATTERN = re.compile(r"(?<!%)%[0-9]*[AaJjNnstux]")
_ALIASES = {"tasks-per-node": "ntasks-per-node", "workdir": "chdir", "cpu_bind": "cpu-bind",
            "mem_bind": "mem-bind", "cluster": "clusters", "gres_flags": "gres-flags"}
# what a node must have at least (sbatch(1)), kept as written: the forms sbatch reads
_NODE_MINIMUMS = {
    "tmp": (r"[0-9]+[KMGTkmgt]?", "a size: MB, or a number with K, M, G or T"),
    "mincpus": (r"[0-9]+", "a whole number of CPUs a node"),
    "sockets-per-node": (r"[0-9]+", "a whole number of sockets"),
    "cores-per-socket": (r"[0-9]+", "a whole number of cores"),
    "threads-per-core": (r"[0-9]+", "a whole number of threads"),
    "extra-node-info": (r"(?:[0-9]+|\*)(?::(?:[0-9]+|\*)){0,2}",
                        "sockets[:cores[:threads]], each a whole number or *"),
}
_LONGS = {n: Opt(n, "none") for n in _NONE} | {n: Opt(n, "optional") for n in _OPTIONAL}
_LONGS |= {n: Opt(n) for n in _REQUIRED}
_LONGS |= {a: _LONGS[t] for a, t in _ALIASES.items()}
_SHORTS = dict(
    A="account", a="array", B="extra-node-info", b="begin", C="constraint", c="cpus-per-task",
    D="chdir", d="dependency", e="error", F="nodefile", G="gpus", i="input", J="job-name",
    L="licenses", M="clusters", m="distribution", N="nodes", n="ntasks", o="output",
    p="partition", q="qos", S="core-spec", t="time", w="nodelist", x="exclude",
)
_SHORT_OPTS = {k: _LONGS[v] for k, v in _SHORTS.items()}
_SHORT_OPTS |= {k: Opt(v, "none") for k, v in dict(
    H="hold", h="help", O="overcommit", Q="quiet", s="oversubscribe", V="version",
    v="verbose", W="wait").items()}
_SHORT_OPTS["k"] = Opt("no-kill", "optional")
TABLE = OptionTable(_LONGS, _SHORT_OPTS, getopt_short=True)  # sbatch: getopt_long

# sbatch reads a directive only where a line starts with #SBATCH (src/sbatch/opt.c compares
# the line's first characters): an indented one is a comment
_SENTINEL = re.compile(r"^#SBATCH(?:\s+(.*)|$)")
_INDENTED = re.compile(r"^\s+#SBATCH(?:\s|$)")
_NUMERIC = {"nodes", "ntasks", "ntasks-per-node", "cpus-per-task", "gpus", "gpus-per-node",
            "gpus-per-task", "gres", "mem", "mem-per-cpu", "time", "dependency", "export",
            "cpus-per-gpu", "mem-per-gpu"}
_DEP_KINDS = {"after", "afterany", "afterok", "afternotok", "aftercorr"}
_MAIL = MAIL_EVENTS | {"none"}  # NONE adds no event


_FOREIGN_IN_BODY = re.compile(r"^[ \t]*#(PBS|BSUB)\b", re.M)
EXPORT_NIL = "slurm_export_nil"  # metadata: `--export=NIL` (not NONE) was written
_HET_SEPARATORS = {"hetjob", "packjob"}  # `#SBATCH hetjob`: the next component starts
# what a later hetjob component may ask for and still be read: its sizes, and the options
# sbatch does not carry over from the first component (heterogeneous_jobs.html lists the
# ones it does), when they are the first's
_COMPONENT_OPTIONS = {"nodes", "ntasks", "ntasks-per-node", "cpus-per-task", "mem",
                      "mem-per-cpu", "gpus-per-node", "gpus-per-task", "gres", "partition",
                      "constraint", "exclusive", "account", "qos", "reservation", "time",
                      "cpus-per-gpu", "mem-per-gpu", "nodelist"}
_GRES_GPU = re.compile(r"gpu(?::[\w.\-]+)?(?::[0-9]+)?")  # gpu[:type][:count]


def _other_gres_only(value: str | None) -> bool:
    """Whether a `--gres` value names generic resources other than GPUs only (`nvme:1`,
    `shard:2,mps:50`): no `gpu` entry, no empty entry."""
    entries = (value or "").split(",")
    return bool(value) and all(e and e.split(":")[0] != "gpu" for e in entries)


_SLURM_MEM = re.compile(r"[0-9]+(?:[KMGT]B?)?", re.I)


def _slurm_mem_mb(item: Item) -> int:
    """sbatch's memory size: a whole number, megabytes unless a K, M, G or T unit (with an
    optional B) follows; sbatch refuses anything else, a fraction (1.5G) included."""
    v = (item.value or "").strip()
    mb = parse_mem_mb(v) if _SLURM_MEM.fullmatch(v) else None
    if mb is None:
        raise bad(item, "bad memory size", "a whole number with an optional K, M, G or T "
                  "unit (no fraction: 1536M, not 1.5G)")
    return mb


# sbatch(1): --ntasks-per-gpu "is not compatible with" these
_NOT_WITH_TASKS_PER_GPU = ("gpus-per-task", "gpus-per-socket", "ntasks-per-node")


@dataclass
class _Later:
    """Options that resolve only once every line is read (a later line may set the nodes or
    the GPUs): `--gpus` (a job total) and the per-GPU CPUs and memory, each as
    (line, raw line, value[, number])."""

    gpus: tuple[int, str, str | None] | None = None
    # --gpus (the job's total) beside a per-node count (--gpus-per-node, --gres=gpu:N):
    # both hold, (line, raw line, value, total); and the per-node option's line
    gpus_with_per_node: tuple[int, str, str | None, int] | None = None
    per_node_line: int | None = None
    per_gpu: dict[str, tuple[int, str, str | None, int]] = field(default_factory=dict)
    tasks_per_gpu: tuple[int, str, str | None, int] | None = None  # --ntasks-per-gpu
    memory: dict[str, int] = field(default_factory=dict)  # --mem* option -> its line
    # --cpus-per-task (or --tres-per-task=cpu=N) and --cpus-per-gpu -> the line of each
    cpus: dict[str, int] = field(default_factory=dict)
    # the options sbatch refuses beside --ntasks-per-gpu -> the line of each
    not_per_gpu: dict[str, int] = field(default_factory=dict)


def fmt_slurm_time(seconds: int) -> str:
    days, rest = divmod(seconds, 86400)
    return f"{days}-{fmt_hms(rest)}" if days else fmt_hms(rest)


def _gpu_count(item: Item, text: str) -> tuple[str | None, int]:
    """'[type:]N' -> (type, N)."""
    kind, _, num = text.rpartition(":")
    if not ascii_digits(num):
        raise bad(item, "bad GPU count", "[type:]N, e.g. 2 or a100:2")
    return (kind or None), int(num)


def sbatch_words(text: str, lineno: int = 0, raw: str = "",
                 cut: list[str] | None = None) -> list[str]:
    """The words of an #SBATCH line as sbatch reads them (src/sbatch/opt.c): a backslash
    takes the next character as it is, inside '...' and "..." too; the quotes group and are
    removed; an unquoted, unescaped `#` ends the line, inside a word too (that word, as
    written to the line's end, is appended to `cut`). An unmatched quote is bad input
    (sbatch refuses the script). A `<placeholder with spaces>` of a template stays one
    word."""
    words_: list[str] = []
    cur: list[str] = []
    has, quote_ch, i, start = False, "", 0, 0
    while i < len(text):
        ch = text[i]
        if not has and not quote_ch and not ch.isspace():
            start = i  # where the word begins
        if ch == "\\":
            i += 1
            if i < len(text):  # at the line's end it escapes nothing: no word of its own
                cur.append(text[i])
                has = True
        elif quote_ch:
            if ch == quote_ch:
                quote_ch = ""
            else:
                cur.append(ch)
        elif ch in "\"'":
            quote_ch, has = ch, True
        elif ch.isspace():
            if has:
                words_.append("".join(cur))
                cur, has = [], False
        elif ch == "#":
            if has and cut is not None:
                cut.append(text[start:].rstrip())
            break
        elif ch == "<" and (end := text.find(">", i)) > 0:
            cur.append(text[i:end + 1])
            has, i = True, end
        else:
            cur.append(ch)
            has = True
        i += 1
    if quote_ch:
        raise BadInput(f"line {lineno}: unmatched {quote_ch} in `{raw.strip() or text}`; "
                       "sbatch refuses it: close the quote, or escape the quote character "
                       "with a backslash")
    if has:
        words_.append("".join(cur))
    return words_


def _directive_count(raw: str) -> int:
    m = _SENTINEL.match(raw)
    return len(TABLE.parse(sbatch_words(m.group(1) or "", 0, raw), 0, raw)) if m else 0


_DEP_ID = re.compile(r"[0-9]+(?:_[0-9]+)?")
_DELAYED_ID = re.compile(r"[0-9]+(?:_[0-9]+)?\+[0-9]+")  # after:ID+MINUTES


def dependency_value(deps: list[Dependency], warnings: list[str], any_of: bool = False) -> str:
    """sbatch's --dependency value (every one must hold; `any_of`: any one, `?` between
    them): a task-by-task dependency on the jobs' success is aftercorr; Slurm has no other
    task-by-task kind, so the others wait for the whole job (warned)."""
    exact = [d for d in deps if not d.per_task or d.kind == "afterok"]
    rest = whole_job_dependencies([d for d in deps if d not in exact], "slurm", warnings)
    return ("?" if any_of else ",").join(
        f"{'aftercorr' if d.per_task else d.kind}:{':'.join(d.job_ids)}" for d in exact + rest)


# sbatch's options after which it submits nothing (what it does instead)
_SUBMITS_NOTHING = {"--test-only": "only says when and where the job would start",
                    "--help": "prints its help", "--usage": "prints its usage",
                    "--version": "prints its version"}
_NO_JOB = "the engine would find no job to follow"


def submit_wait(d: Directive) -> SubmitWait | None:
    """sbatch's options that make it wait (`--wait`, `-W`: sbatch returns when the job ends,
    with its exit code), and those after which it submits no job (`--test-only`: refused)."""
    if d.option == "--wait":
        return SubmitWait(False, "sbatch --wait returns only when the job ends")
    if d.option in _SUBMITS_NOTHING:
        return SubmitWait(True, f"sbatch {d.option} {_SUBMITS_NOTHING[d.option]} and submits "
                          "no job", f"remove it to submit the job, or run `sbatch "
                          f"{d.option}` yourself", why=_NO_JOB)
    return None


def _cpus_per_node(c: Resources) -> int | None:
    """A component's CPUs on each of its nodes, where they are the same on every node."""
    per_task = c.cpus_per_task or 1
    if c.tasks_per_node:
        return c.tasks_per_node * per_task
    if c.nodes == 1:
        return (c.tasks or 1) * per_task
    return None


def _mem_not_carried(comps: list[Resources], warnings: list[str]) -> list[Resources]:
    """A hetjob's components as sbatch must get them: it carries a component's --mem into
    the ones after it that set no memory of their own, so where a later one asks none, a
    --mem before it is written as the same memory per CPU (not carried) when its CPUs on
    each node divide it; else that component gets the --mem before it, said."""
    bare = [i for i, c in enumerate(comps)
            if i and c.memory_mb is None and c.memory_per_cpu_mb is None]
    if not bare:
        return comps
    out = []
    for i, c in enumerate(comps):
        cpn = _cpus_per_node(c)
        if i < bare[-1] and c.memory_mb and c.memory_per_cpu_mb is None and cpn \
                and c.memory_mb % cpn == 0:
            c = c.model_copy(update={"memory_mb": None, "memory_per_cpu_mb": c.memory_mb // cpn})
        out.append(c)
    carried = None
    for i, c in enumerate(out):
        if c.memory_mb is not None:
            carried = c.memory_mb
        elif c.memory_per_cpu_mb is None and carried is not None:
            warnings.append(f"approximated: component {i} gets --mem={fmt_mem(carried)} of a "
                            "component before it (sbatch carries --mem over; it asked none)")
    return out


# an srun step's components of a heterogeneous job (`--het-group=1`, `0,2-3`; `--pack-group`
# before Slurm 20.02)
_HET_GROUP = re.compile(r"(?<!\S)--(?:het|pack)-group(?:=|\s+)(['\"]?)([^\s'\"]+)\1")


def _check_het_groups(text: str, components: int, het_line: int) -> None:
    """BadInput for an `srun --het-group=N` in the body naming a component the job does not
    have (srun fails that step at run time, after the job waited in the queue: "Attempt to
    run a job step with het group value of N, but the job allocation has maximum value of
    M"). A value given by a variable or otherwise than as offsets is not checked."""
    for lineno, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        code = line.strip()
        if code.startswith("#") or not re.search(r"(?<![\w/.-])srun(?![\w.-])", code):
            continue
        for m in _HET_GROUP.finditer(code):
            expr = m.group(2)
            if not re.fullmatch(r"[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*", expr):
                continue  # $GROUP, a typo srun itself refuses
            top = max(int(n) for n in re.split(r"[,-]", expr))
            if top >= components:
                raise BadInput(
                    f"line {lineno}: `{m.group(0).strip()}` names component {top}, but the "
                    f"heterogeneous job (line {het_line}) has {components} components, "
                    f"numbered 0 to {components - 1}: srun would fail that step once the "
                    "job runs; name a component the job has, or add one (`#SBATCH hetjob` "
                    "and its options)")


class SlurmScript:
    submit_wait = staticmethod(submit_wait)
    name = "slurm"
    sentinel = "#SBATCH"

    # ------------------------------------------------------------------ parse
    def parse_script(self, text: str) -> JobSpec:
        header, spec = begin_parse(text, _SENTINEL, self.name,
                                   "after the first command; sbatch ignores it")
        if header.directives and not text.lstrip("\ufeff").startswith("#!"):
            note(spec, f"line 1: no #! interpreter line (sbatch refuses such a script); "
                       f"written with #!{spec.shell}")
        self._indented(spec, text)
        check_burst_buffer_block(text)  # a malformed staging line: refused, as sbatch does
        het_line = None  # a heterogeneous job: its first component maps onto the spec
        later = _Later()
        parts: list[list[Item]] = []  # the later components' options, separator first
        directives = read_alone(text, header.directives, spec, "sbatch", "#SBATCH")
        for lineno, raw, payload in directives:
            cut: list[str] = []
            words = sbatch_words(payload, lineno, raw, cut)
            if cut:
                note(spec, f"line {lineno}: `{cut[0]}`: sbatch reads an unquoted # as the "
                           "start of a comment, inside a word too, so the value ends before "
                           "it (quote the value, or write \\# to keep it)")
            for item in TABLE.parse(words, lineno, raw):
                if not item.known and item.option in _HET_SEPARATORS:
                    het_line = het_line or lineno
                    parts.append([item])
                elif het_line is None:
                    self._apply(spec, item, later)
                else:
                    parts[-1].append(item)
        apply_wrapper_lines(spec, text, ignored=any(  # #PBS/#BSUB lines sbatch reads too
            d.dialect == self.name and d.option == "--ignore-pbs" for d in spec.unknown))
        if len(later.memory) > 1:  # sbatch: fatal, whatever their order
            given = ", ".join(f"--{k} (line {n})" for k, n in sorted(later.memory.items(),
                                                                     key=lambda x: x[1]))
            raise BadInput(f"{given}: sbatch refuses these together (--mem, --mem-per-cpu "
                           "and --mem-per-gpu are mutually exclusive); keep one")
        if "cpus-per-gpu" in later.cpus and len(later.cpus) > 1:  # sbatch: fatal too
            given = ", ".join(f"--{k} (line {n})" for k, n in sorted(later.cpus.items(),
                                                                     key=lambda x: x[1]))
            raise BadInput(f"{given}: sbatch refuses these together (--cpus-per-task, "
                           "--tres-per-task=cpu:N and --cpus-per-gpu are mutually "
                           "exclusive); keep one")
        self._hint_beside_layout(spec)
        self._nodes_of_nodelist(spec)
        self._tasks_per_gpu(spec, later)
        self._spread_gpus(spec, later.gpus)
        self._total_with_per_node(spec, later)
        self._per_gpu(spec, later.per_gpu)
        if het_line is not None:
            self._components(spec, het_line, parts, "mem" in later.memory)
            _check_het_groups(text, len(parts) + 1, het_line)
        spec.join_output = spec.stderr is None  # sbatch sends both streams to --output
        no_gpus_for_zero(spec, "--gres=gpu:0, --gpus-per-node=0 or --gpus-per-task=0")
        return spec

    def _components(self, spec: JobSpec, het_line: int, parts: list[list[Item]],
                    first_mem: bool) -> None:
        """A heterogeneous job's later components: each one's own sizes (sbatch resets them
        in each component), its own partition (none: the default one, as sbatch does not
        carry --partition over) and its own account and QOS (which sbatch carries to the
        components after it), when it asks for nothing else but the first's constraint
        and its own constraint (none: no constraint, as sbatch does not carry --constraint
        over), its own time limit and reservation, its own exclusivity (none: shared, as
        sbatch does not carry --exclusive over) and its own generic resources beside its
        GPUs (`--gres=...,nvme:1`, not carried over either), when it asks for nothing
        else; the whole job then a job of several shapes. A component otherwise (other
        options, `--exclusive=user`): every later one kept as written, only the first
        read."""
        comps = []
        c = spec.constraints
        carried = {"account": spec.account, "qos": spec.qos,  # what sbatch propagates
                   "reservation": spec.reservation}
        # --mem is carried too (sbatch's option table resets --mem-per-cpu and --mem-per-gpu
        # in each component, not --mem): the memory of the last component that set it
        prev_mem = spec.resources.memory_mb if first_mem else None
        own_hosts: list[str | None] = []  # each one's --nodelist (sbatch keeps the last)
        for part in parts:
            one = JobSpec()
            items = part[1:]
            if not all(i.known and i.option in _COMPONENT_OPTIONS for i in items):
                break
            hosts = [i.value or "" for i in items if i.option == "nodelist"]
            if any(not h or "/" in h for h in hosts):
                break  # a file of hosts, read where sbatch runs: kept as written
            own_hosts.append(hosts[-1] if hosts else None)
            items = [i for i in items if i.option != "nodelist"]
            # sbatch keeps a component's last --gres
            last_gres = max((k for k, i in enumerate(items) if i.option == "gres"), default=-1)
            items = [i for k, i in enumerate(items) if i.option != "gres" or k == last_gres]
            later = _Later()  # its own per-GPU CPUs and memory, read once it is whole
            try:
                for i in items:
                    if i.option == "gres" and _other_gres_only(i.value):
                        one.resources.gres = i.value  # sbatch keeps the last --gres
                        continue
                    if not self._map(one, i, later):
                        raise BadInput("kept")
                self._per_gpu(one, later.per_gpu)  # what it cannot hold stays unknown
            except BadInput:
                break
            # its --gres entries beside its GPUs (nvme:1): its own, not carried over
            kept_gres = [d for d in one.unknown if d.option == "--gres" and d.value]
            if kept_gres:
                one.resources.gres = kept_gres[-1].value
                one.unknown = [d for d in one.unknown if d not in kept_gres]
            if one.unknown:  # nothing else is kept apart: the component stays as written
                break
            if one.constraints.exclusive != c.exclusive:
                # its own exclusivity (sbatch does not carry the first's over)
                one.resources.exclusive = one.constraints.exclusive
            if one.constraints.features != c.features:  # its own (or no) constraint
                one.resources.features = list(one.constraints.features)
            r1 = one.resources
            if any(i.option == "mem" for i in items):
                prev_mem = r1.memory_mb
            elif r1.memory_mb is None and r1.memory_per_cpu_mb is None:
                r1.memory_mb = prev_mem  # asks none of its own: the --mem before it
            if one.queue != spec.queue:  # a partition of its own, or the default one
                one.resources.queue = one.queue
                one.resources.default_queue = one.queue is None
            for attr in carried:
                carried[attr] = getattr(one, attr) or carried[attr]
                if carried[attr] != getattr(spec, attr):
                    setattr(one.resources, attr, carried[attr])
            comps.append(one.resources)
        else:
            first = spec.resources.model_copy()
            set_components(spec, [first, *comps])
            if any(own_hosts):
                spec.metadata[COMPONENT_NODELISTS] = own_hosts
            r = spec.resources
            # each component keeps its own time limit; the job's is the longest (what a
            # scheduler of one time per job must give it)
            if any(x.walltime_s not in (None, first.walltime_s) for x in comps):
                r.walltime_s = max(x.walltime_s for x in spec.components if x.walltime_s)
            r.gpu_type = r.gpu_type or next((c.gpu_type for c in comps if c.gpu_type), None)
            note(spec, f"line {het_line}: heterogeneous job of {len(parts) + 1} components: "
                       f"{describe_totals(summed_totals(spec.components))} in all")
            return
        for item in (i for part in parts for i in part):  # kept as written, in its place
            unknown(spec, self.name, item, item.option if not item.known else "--" + item.option)
        note(spec, f"line {het_line}: heterogeneous job: only its first component is "
                   "read; the later components are kept as written")

    @staticmethod
    def _indented(spec: JobSpec, text: str) -> None:
        """An indented `#SBATCH` line of the leading block is a comment to sbatch: noted."""
        for lineno, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                return  # the first command ends the directives
            if _INDENTED.match(line):
                note(spec, f"line {lineno}: ignored `{stripped}` (indented; sbatch reads a "
                           "directive only where the line starts with #SBATCH)")

    def _apply(self, spec: JobSpec, item: Item, later: _Later) -> None:
        if item.known and item.option in _NOT_WITH_TASKS_PER_GPU:
            later.not_per_gpu[item.option] = item.lineno
        if item.known:  # sbatch keeps the last of an option: an earlier one kept is gone
            spec.unknown = [d for d in spec.unknown if d.option != "--" + item.option]
            if item.option == "time":
                spec.resources.walltime_s = None
        handled = mapped_or_placeholder(item, self.name, spec, self._map, spec, item, later)
        if not handled:
            unknown(spec, self.name, item, item.option if not item.known else "--" + item.option)

    def _map(self, spec: JobSpec, item: Item,  # noqa: C901 - one branch per option
             later: _Later) -> bool:
        key, v = item.option, item.value
        r = spec.resources
        if is_placeholder(v):
            if key in _NUMERIC:
                note(spec, placeholder_note(item, self.name))
                return False
            note(spec, placeholder_note(item, self.name, "kept as a raw value"))
        if key in _NODE_MINIMUMS:  # kept as written; placement reads them: well formed
            if not re.fullmatch(_NODE_MINIMUMS[key][0], v or ""):
                raise bad(item, f"bad --{key}", _NODE_MINIMUMS[key][1])
            return False
        if key == "nodes":
            # N, MIN-MAX, or a size list (`1,4,8`, `2-16:2`): the job gets one of the counts
            parts = [re.fullmatch(r"([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?", p)
                     for p in (v or "").split(",")]
            if not all(parts) or any(m.group(2) and int(m.group(2)) < int(m.group(1))
                                     for m in parts if m):
                raise bad(item, "bad node count", "N, MIN-MAX, or sizes such as 1,4,8 or "
                          "2-16:2 (sbatch --nodes)")
            lows = [int(m.group(1)) for m in parts if m]
            r.nodes = to_int(Item(key, str(min(lows)), item.lineno, item.raw))
            if v != str(r.nodes):
                note(spec, f"line {item.lineno}: node range {v} kept as minimum {r.nodes}")
                return False
        elif key == "ntasks":
            r.tasks = to_int(item)
        elif key == "ntasks-per-node":
            r.tasks_per_node = to_int(item)
        elif key == "cpus-per-task":
            r.cpus_per_task = to_int(item)
            later.cpus[key] = item.lineno
        elif key in ("gpus-per-node", "gpus-per-task", "gpus") and "," in (v or ""):
            # GPUs of several types (`a100:2,v100:1`): the model holds one type; it was
            # read as one GPU of type `a100:2,v100`. Kept as written (placement reads it)
            for part in (v or "").split(","):
                _gpu_count(item, part)  # each [type:]N, else bad input
            note(spec, f"line {item.lineno}: --{key}={v} asks GPUs of several types; kept "
                       "as written")
            return False
        elif key in ("gpus-per-node", "gpus-per-task", "gpus"):
            kind, n = _gpu_count(item, v or "")
            r.gpu_type = kind or r.gpu_type
            if key == "gpus-per-task":  # beside the job's --gpus total, not in its place
                r.gpus_per_task = n
            elif key == "gpus" and later.per_node_line is not None:
                # a total beside a per-node count: both hold (resolved once all are read)
                later.gpus_with_per_node = (item.lineno, item.raw, v, n)
            elif key == "gpus":  # the job's total: spread over the nodes once all are read
                later.gpus_with_per_node = None  # a later --gpus replaces an earlier one
                later.gpus = (item.lineno, item.raw, v)
                r.gpus_per_node = n
            else:
                self._per_node_gpus(later, r.gpus_per_node, item.lineno)
                r.gpus_per_node = n
        elif key == "gres":
            return self._gres(spec, item, v or "", later)
        elif key == "tres-per-task":
            return self._tres_per_task(spec, item, v or "", later)
        elif key == "ntasks-per-gpu":
            later.tasks_per_gpu = (item.lineno, item.raw, v, to_int(item))
        elif key in ("cpus-per-gpu", "mem-per-gpu"):
            (later.memory if key == "mem-per-gpu" else later.cpus)[key] = item.lineno
            n = to_int(item) if key == "cpus-per-gpu" else _slurm_mem_mb(item)
            # per GPU: resolved once the GPU count (maybe on a later line) is known
            later.per_gpu[key] = (item.lineno, item.raw, v, n)
        elif key in ("mem", "mem-per-cpu"):
            mb = _slurm_mem_mb(item)
            later.memory[key] = item.lineno
            if key == "mem":
                r.memory_mb = mb
            else:
                r.memory_per_cpu_mb = mb
        elif key == "time":
            s = parse_slurm_time(v or "")
            if s == 0 or (v or "").upper() in ("UNLIMITED", "INFINITE"):
                return False  # no time limit at all (sbatch reads -t 0 so): kept as written
            if s is None:
                raise bad(item, "bad time", "M, M:S, H:M:S, D-H, D-H:M or D-H:M:S")
            r.walltime_s = s
        elif key == "constraint":
            spec.constraints.features = []  # sbatch keeps the last --constraint
            try:
                expr = parse_constraint(v or "")
            except BadInput:
                return False  # kept verbatim: sbatch judges it
            if isinstance(expr, Op) and expr.kind == "" and set(expr.ops) == {"&"} \
                    and all(isinstance(i, Feature) and i.count is None for i in expr.items):
                spec.constraints.features += [i.name for i in expr.items]
            else:
                spec.constraints.features.append(expr.text())
        elif key == "exclusive":
            if v not in (None, ""):
                return False
            spec.constraints.exclusive = True
        elif key in ("partition", "account", "qos", "reservation"):
            setattr(spec, "queue" if key == "partition" else key, v)
        elif key == "begin":
            spec.begin = None  # sbatch keeps the last --begin
            if slurm_parts(v or "") is None:
                return False  # sbatch refuses it; kept as written (placement says why)
            spec.begin = v
        elif key == "job-name":
            spec.name = v
        elif key in ("output", "error"):
            setattr(spec, "stdout" if key == "output" else "stderr", v)
            spec.metadata.setdefault(OUTPUT_LINES, {})[key] = item.lineno
        elif key == "open-mode":
            # sbatch reads the first letter (a: append, t: truncate) and ignores the rest
            mode = {"a": "append", "t": "truncate"}.get((v or " ")[0].lower())
            if mode is None:
                note(spec, f"line {item.lineno}: --open-mode={v} is neither append nor "
                           "truncate: sbatch ignores it (the site's JobFileAppend decides); "
                           "kept as written")
                return False
            spec.output_mode = mode
        elif key == "chdir":
            spec.working_directory = v
            if found := list(dict.fromkeys(_FILE_PATTERN.findall(v or ""))):
                # sbatch keeps --chdir as given (made absolute); slurmstepd expands only
                # the stdio file names
                note(spec, f"line {item.lineno}: --chdir={v}: {', '.join(found)} kept as "
                           "written (sbatch fills in its file name patterns in --output, "
                           "--error and --input only)")
        elif key == "array":
            spec.array = read_array(item, v or "", "indexes and ranges X-Y[:STEP] (X <= Y, "
                                    "STEP > 0), comma separated, then %LIMIT > 0, e.g. 0-99:2%10")
        elif key == "hold":
            spec.hold = True
        elif key in ("requeue", "no-requeue"):
            spec.requeue = key == "requeue"
        elif key == "mail-user":
            spec.mail_user = v
        elif key == "comment":
            spec.comment = v
        elif key == "mail-type":
            events = [e.strip().lower() for e in (v or "").split(",") if e.strip()]
            if not set(events) <= _MAIL:
                return False
            # sbatch adds each --mail-type to the earlier ones (NONE adds nothing)
            spec.mail_events += [e for e in dict.fromkeys(events)
                                 if e != "none" and e not in spec.mail_events]
        elif key == "dependency":
            return self._dependency(spec, item, v or "")
        elif key == "export":
            return self._export(spec, v or "")
        elif key == "cpu-bind":
            opts = [o for o in (v or "").split(",") if o not in ("verbose", "quiet", "v", "q")]
            r.cpu_bind = "none" if opts == ["no"] else ",".join(opts)
        elif key == "gpu-bind":
            r.gpu_bind = ",".join(o for o in (v or "").split(",") if o != "verbose")
        elif key == "distribution":
            r.distribution = v
        else:
            return False
        return True

    @staticmethod
    def _gres(spec: JobSpec, item: Item, v: str, later: _Later) -> bool:
        """`--gres=gpu[:type][:N][,nvme:1,...]`: the one GPU entry goes to the resources; the
        other entries are kept as one `--gres` (rendered back on the GPUs' line: sbatch keeps
        only the last --gres). No GPU entry, or several: the whole value kept as written."""
        entries = [e for e in v.split(",") if e]
        gpus = [e for e in entries if e.split(":")[0] == "gpu"]
        if len(gpus) != 1:
            return False
        if not _GRES_GPU.fullmatch(gpus[0]):  # e.g. scontrol's gpu:1(S:0): sbatch judges it
            note(spec, f"line {item.lineno}: --gres entry {gpus[0]} is not gpu[:type][:count]; "
                       "kept as written")
            return False
        fields = gpus[0].split(":")
        r = spec.resources
        SlurmScript._per_node_gpus(later, r.gpus_per_node, item.lineno)
        num = fields[-1] if len(fields) > 1 and ascii_digits(fields[-1]) else "1"
        r.gpus_per_node = int(num)
        if len(fields) == 3 or (len(fields) == 2 and not ascii_digits(fields[1])):
            r.gpu_type = fields[1]
        if rest := [e for e in entries if e != gpus[0]]:
            unknown(spec, "slurm", Item("gres", ",".join(rest), item.lineno, item.raw), "--gres")
        return True

    @staticmethod
    def _shrink_to_fit(spec: JobSpec, add: Callable[..., None],
                       warnings: list[str]) -> list[tuple[str, str | None]]:
        """A PBS Pro shrink-to-fit job (`-l min_walltime=`, maybe `-l max_walltime=`, no
        walltime): PBS gives it a time limit between the two (up to the queue's limit
        without a max) as it starts it, so it may start sooner; sbatch's --time-min beside
        --time is that. The PBS options carried: (option, value) of each."""
        if (shrink := pbs_shrink_to_fit(spec)) is None:
            return []  # kept, said dropped
        least, most, kept = shrink
        if most is not None:
            add("time", fmt_slurm_time(most))
        add("time-min", fmt_slurm_time(least))
        said = ", ".join(d.raw.strip() for d in kept)
        warnings.append(f"kept: {said} as "
                        + (f"--time={fmt_slurm_time(most)} " if most is not None else "")
                        + f"--time-min={fmt_slurm_time(least)} (a shrink-to-fit job: "
                        "its time limit is set between them as it starts"
                        + ("" if most is not None else ", up to the partition's") + ")")
        return [(d.option, d.value) for d in kept]

    @staticmethod
    def _tres_per_task(spec: JobSpec, item: Item, v: str, later: _Later) -> bool:
        """`--tres-per-task=cpu=N,gres/gpu[:type]=N,...` (sbatch: TYPE[/NAME]=COUNT, `:COUNT`
        too): cpu is --cpus-per-task, gres/gpu --gpus-per-task; the other entries (licenses,
        other gres) are kept as one `--tres-per-task`. A count that is not a plain number
        (a k/m suffix) or a repeated entry: the whole value kept as written."""
        mapped: dict[str, tuple[str | None, int]] = {}
        rest = []
        for entry in (e for e in v.split(",") if e):
            name, eq, count = entry.rpartition("=") if "=" in entry else entry.rpartition(":")
            if not name or not ascii_digits(count):
                return False
            kind, _, gtype = name.partition(":")
            if kind in ("cpu", "gres/gpu") and kind not in mapped \
                    and (kind == "gres/gpu" or not gtype) and ":" not in gtype:
                mapped[kind] = (gtype or None, int(count))
            else:
                rest.append(entry)
        r = spec.resources
        if "cpu" in mapped:
            r.cpus_per_task = mapped["cpu"][1]
            later.cpus["tres-per-task=cpu"] = item.lineno
        if "gres/gpu" in mapped:
            gtype, r.gpus_per_task = mapped["gres/gpu"]
            r.gpu_type = gtype or r.gpu_type
            later.gpus = None  # a later GPU option replaces --gpus
        if rest:  # written back alone: the mapped entries have options of their own
            kept = ",".join(rest)
            unknown(spec, "slurm", Item("tres-per-task", kept, item.lineno,
                                        f"#SBATCH --tres-per-task={quote(kept)}"),
                    "--tres-per-task")
        return True

    @staticmethod
    def _kept_node_range(spec: JobSpec) -> bool:
        """A kept `--nodes=MIN-MAX` whose minimum is still the node count says it as
        written (a `--nodes=MIN` line beside it was written twice: the range last)."""
        for d in spec.unknown:
            if d.dialect == "slurm" and d.option in _HET_SEPARATORS:
                return False
            lows = [p.partition("-")[0] for p in (d.value or "").split(",")]
            if d.dialect == "slurm" and d.option == "--nodes" \
                    and all(ascii_digits(x) for x in lows) \
                    and min(int(x) for x in lows) == spec.resources.nodes:
                return True  # (a placeholder such as %NODES% is no range: written as kept)
        return False

    @staticmethod
    def _kept_gres(spec: JobSpec) -> list[Directive]:
        """The first component's kept `--gres` entries (a later hetjob component's stay
        with it, as written)."""
        out = []
        for d in spec.unknown:
            if d.dialect == "slurm" and d.option in _HET_SEPARATORS:
                break
            if d.dialect == "slurm" and d.option == "--gres" and d.value:
                out.append(d)
        return out

    @staticmethod
    def _dependency(spec: JobSpec, item: Item, v: str) -> bool:
        """`--dependency`: each `kind:ID[:ID]` the model holds read; where every one must
        hold (`,`), the others (`singleton`, `after:ID+MIN`) kept as one `--dependency`
        beside them (the writer joins them again), where any one suffices (`?`) the whole
        value kept as written."""
        spec.dependencies = []  # sbatch keeps the last --dependency
        spec.metadata.pop(DEPENDENCY_ANY, None)
        deps, rest = [], []
        # `?` between them: any one suffices (sbatch takes `,` or `?`, not both); each job
        # of `afterok:1:2` is one of the alternatives then
        any_of = "?" in v and "," not in v
        for part in v.split("?" if any_of else ","):
            kind, _, ids = part.partition(":")
            idl = ids.split(":")
            # a job, or one task of an array job (`778812_3`)
            unread = not ids or not all(_DEP_ID.fullmatch(i) for i in idl) \
                or (kind == "aftercorr" and any("_" in i for i in idl))
            delayed = kind == "after" and all(_DELAYED_ID.fullmatch(i) for i in idl)
            readable = kind in _DEP_KINDS and not unread
            if not readable and ("?" in v or (kind in _DEP_KINDS and not delayed)):
                return False  # alternatives, or an id sbatch would judge: as written
            if not readable:  # singleton, after:ID+MIN: kept beside the others
                rest.append(part)
                continue
            # aftercorr: each array task waits for the same task of the job(s) named, and
            # for its success
            deps.append(Dependency(kind="afterok", job_ids=idl, per_task=True,
                                   scheduler="slurm")
                        if kind == "aftercorr" else
                        Dependency(kind=kind, job_ids=idl, scheduler="slurm"))
        if rest and not deps:
            return False  # nothing read: kept as written
        spec.dependencies += deps
        if any_of:
            spec.metadata[DEPENDENCY_ANY] = True
        if rest:
            kept = ",".join(rest)
            unknown(spec, "slurm", Item("dependency", kept, item.lineno,
                                        f"#SBATCH --dependency={quote(kept)}"), "--dependency")
        return True

    @staticmethod
    def _hint_beside_layout(spec: JobSpec) -> None:
        """sbatch ignores `--hint` beside --ntasks-per-core, --threads-per-core, -B or a
        --cpu-bind other than verbose ("mutually exclusive with --hint ... Ignoring
        --hint"): dropped, said, so placement does not read a `nomultithread` the job will
        not have."""
        first = []  # the first component's kept options (a later one's are its own)
        for d in spec.unknown:
            if d.option in _HET_SEPARATORS:
                break
            first.append(d)
        hints = [d for d in first if d.dialect == "slurm" and d.option == "--hint"]
        beside = [o for o in ("--ntasks-per-core", "--threads-per-core", "--extra-node-info")
                  if any(d.dialect == "slurm" and d.option == o for d in first)]
        bind = spec.resources.cpu_bind
        if bind and bind.split(",")[0] not in ("verbose", "v"):
            beside.append(f"--cpu-bind={bind}")
        if not hints or not beside:
            return
        spec.unknown = [d for d in spec.unknown if not any(d is h for h in hints)]
        note(spec, f"ignored --hint={hints[-1].value} (sbatch ignores --hint beside "
                   f"{', '.join(beside)})")

    @staticmethod
    def _nodes_of_nodelist(spec: JobSpec) -> None:
        """`--nodelist=HOSTS` (kept as written): the job holds every host named, so without
        --nodes it asks for that many nodes at least (sbatch raises its minimum so). A
        file name (with a `/`) or more hosts than tasks: left to sbatch."""
        r, value = spec.resources, None
        for d in spec.unknown:
            if d.option in _HET_SEPARATORS:
                break  # a later component's hosts are its own
            if d.dialect == "slurm" and d.option == "--nodelist" and d.value:
                value = d.value  # sbatch keeps the last one
        if r.nodes is not None or value is None or "/" in value:
            return
        hosts = set(expand_hostlist(value))
        if len(hosts) > 1 and not any("[" in h for h in hosts) \
                and (r.tasks is None or r.tasks >= len(hosts)):
            r.nodes = len(hosts)
            note(spec, f"--nodelist={value} read as at least {quantity(r.nodes, 'node')}")

    @staticmethod
    def _tasks_per_gpu(spec: JobSpec, later: _Later) -> None:
        """`--ntasks-per-gpu=K` (sbatch): with the GPUs given and no task count, the job
        runs K tasks per GPU (K x the GPU total); with --ntasks and no GPUs, it gets
        ceil(tasks / K) GPUs, held per node when a node count divides them. Either way
        K tasks share each GPU (--gpu-bind=single:K). Else kept as written."""
        if later.tasks_per_gpu is None:
            return
        lineno, raw, value, k = later.tasks_per_gpu
        if later.not_per_gpu:
            given = ", ".join(f"--{o} (line {n})" for o, n in sorted(
                later.not_per_gpu.items(), key=lambda x: x[1]))
            raise BadInput(f"--ntasks-per-gpu (line {lineno}) with {given}: sbatch refuses "
                           "--ntasks-per-gpu beside --gpus-per-task, --gpus-per-socket or "
                           "--ntasks-per-node; keep one")
        r = spec.resources
        gpn = r.gpus_per_node
        total = gpn if later.gpus else (gpn * (r.nodes or 1) if gpn else None)
        if total and not r.tasks and not r.tasks_per_node and not r.gpus_per_task:
            r.tasks = total * k
            what = f"{quantity(r.tasks, 'task')} ({k} per GPU of {total})"
        elif r.tasks and gpn is None and not r.gpus_per_task and r.nodes \
                and -(-r.tasks // k) % r.nodes == 0:
            r.gpus_per_node = -(-r.tasks // k) // r.nodes
            what = f"{quantity(r.gpus_per_node, 'GPU')} per node ({quantity(k, 'task')} per GPU)"
        else:
            unknown(spec, "slurm", Item("ntasks-per-gpu", value, lineno, raw),
                    "--ntasks-per-gpu")
            return
        r.gpu_bind = r.gpu_bind or f"single:{k}"
        note(spec, f"line {lineno}: --ntasks-per-gpu={value} read as {what}")

    @staticmethod
    def _per_node_gpus(later: _Later, total: int | None, lineno: int) -> None:
        """A per-node GPU count is read: an earlier --gpus (the job's total, held as the
        per-node count until now) still holds beside it, as sbatch keeps both."""
        if later.gpus is not None and total is not None:
            later.gpus_with_per_node = (*later.gpus, total)
        later.gpus = None
        later.per_node_line = lineno

    @staticmethod
    def _total_with_per_node(spec: JobSpec, later: _Later) -> None:
        """`--gpus=8` beside `--gpus-per-node=4`: each node has 4 and the job 8, so the job
        is 2 nodes; read so where the count divides (and agrees with --nodes), else the
        total is kept as written, said. It was lost: the job read as 4 GPUs on one node."""
        if later.gpus_with_per_node is None:
            return
        lineno, raw, value, total = later.gpus_with_per_node
        r = spec.resources
        gpn, nodes = r.gpus_per_node, r.nodes
        per_node = (f"line {lineno}: --gpus={value} (the job's) with {quantity(gpn, 'GPU')} "
                    f"per node (line {later.per_node_line})")
        if gpn and total % gpn == 0 and nodes in (None, total // gpn):
            r.nodes = total // gpn
            note(spec, f"{per_node} read as {quantity(r.nodes, 'node')} of {quantity(gpn, 'GPU')}")
            return
        unknown(spec, "slurm", Item("gpus", value, lineno, raw), "--gpus")
        held = f" on {quantity(nodes, 'node')}" if nodes else ""
        note(spec, f"{per_node}{held}: no whole number of nodes holds both; kept as written")

    @staticmethod
    def _spread_gpus(spec: JobSpec, got: tuple[int, str, str | None] | None) -> None:
        """`--gpus=N` is the whole job's: N / nodes per node when the nodes divide it, else
        kept as written (no per-node form). Without --nodes and several tasks, Slurm may
        spread them over up to one node per task: kept as written too; with one task, read
        as N on a node, the total noted so that a Slurm site may spread it."""
        r = spec.resources
        if got is None:
            return
        lineno, raw, value = got
        if r.nodes is None and (r.tasks or 1) > 1:
            r.gpus_per_node = None
            unknown(spec, "slurm", Item("gpus", value, lineno, raw), "--gpus")
            note(spec, f"line {lineno}: --gpus={value} is the job's total over as many nodes "
                       f"as Slurm picks for {quantity(r.tasks, 'task')}; kept as written")
            return
        if r.nodes is None and r.gpus_per_node:
            # one task, no node count: Slurm takes as many nodes as the GPUs need (placement
            # reads it so; the renderer writes --gpus back)
            spec.metadata[GPUS_PER_JOB] = r.gpus_per_node
        if (r.nodes or 1) == 1:
            return
        total, nodes = r.gpus_per_node or 0, r.nodes or 1
        if total % nodes == 0:
            r.gpus_per_node = total // nodes
            note(spec, f"line {lineno}: --gpus={value} (job total) read as "
                       f"{quantity(r.gpus_per_node, 'GPU')} per node on {quantity(nodes, 'node')}")
            return
        r.gpus_per_node = None
        unknown(spec, "slurm", Item("gpus", value, lineno, raw), "--gpus")
        note(spec, f"line {lineno}: --gpus={value} does not divide among "
                   f"{quantity(nodes, 'node')}; "
                   "kept as written")

    @staticmethod
    def _per_gpu(spec: JobSpec, got: dict[str, tuple[int, str, str | None, int]]) -> None:
        """`--cpus-per-gpu=C` / `--mem-per-gpu=M` where the model holds them exactly: C x
        the GPUs per node as CPUs per task when the tasks per node (one by default) share
        them evenly, and M x the GPUs per node as memory per node; sbatch takes neither with
        --cpus-per-task or --mem. Else kept as written (placement counts them per node)."""
        r = spec.resources
        tpn = r.tasks_per_node or (1 if not r.tasks else r.tasks // r.nodes
                                   if r.nodes and r.tasks % r.nodes == 0 else None)
        gpn = r.gpus_per_node or (r.gpus_per_task * tpn if r.gpus_per_task and tpn else None)
        gpt = r.gpus_per_task if not r.gpus_per_node else None
        for key in sorted(got):  # the CPUs first: memory per CPU needs them
            lineno, raw, value, n = got[key]
            if key == "cpus-per-gpu" and r.cpus_per_task is None and gpt:
                r.cpus_per_task = n * gpt
            elif key == "cpus-per-gpu" and r.cpus_per_task is None and gpn and tpn \
                    and n * gpn % tpn == 0:
                r.cpus_per_task = n * gpn // tpn
            elif key == "mem-per-gpu" and r.memory_mb is None and r.memory_per_cpu_mb is None \
                    and gpn:
                r.memory_mb = n * gpn
            elif key == "mem-per-gpu" and r.memory_mb is None and r.memory_per_cpu_mb is None \
                    and gpt and n * gpt % (r.cpus_per_task or 1) == 0:
                # a task's GPUs' memory shared by its CPUs: the same on any node layout
                r.memory_per_cpu_mb = n * gpt // (r.cpus_per_task or 1)
            else:
                unknown(spec, "slurm", Item(key, value, lineno, raw), "--" + key)
                continue
            if GPUS_PER_JOB in spec.metadata:  # per GPU still, wherever they are spread
                spec.metadata.setdefault(PER_GPU, {})[key] = n
            note(spec, f"line {lineno}: --{key}={value} read as "
                       + (f"{quantity(r.cpus_per_task, 'CPU')} per task" if key == "cpus-per-gpu"
                          else f"{r.memory_mb}MB per node" if r.memory_mb
                          else f"{r.memory_per_cpu_mb}MB per CPU" if r.memory_per_cpu_mb
                          else "--mem=0: all the memory of each node" if r.memory_mb == 0
                          else "--mem-per-cpu=0"))

    @staticmethod
    def _export(spec: JobSpec, v: str) -> bool:
        """`--export`: sbatch keeps the last one whole (an earlier one's variables are
        gone, not merged)."""
        env = spec.environment
        env.export_all, env.variables, env.passed = None, {}, []
        parts = [p for p in v.split(",") if p]
        got = split_variables(",".join(p for p in parts if p not in ("ALL", "NONE", "NIL")))
        if got is None:
            return False  # kept as written, alone
        env.export_all = "ALL" in parts  # NONE, NIL or only variables: not everything
        env.variables = dict(got[0])
        env.passed = list(dict.fromkeys(got[1]))  # NAME: its value at submission
        # NIL is NONE without the login environment sbatch loads for NONE (as
        # --get-user-env): written back as NIL, not NONE
        spec.metadata.pop(EXPORT_NIL, None)
        if parts == ["NIL"]:
            spec.metadata[EXPORT_NIL] = True
        return True

    # ------------------------------------------------------------------ render
    @staticmethod
    def job_name(name: str) -> str:
        """The name as the scheduler keeps it: as given, but a tab (any white space but
        the plain blank) made '_' (`listed_name`)."""
        return listed_name(name)

    def render_script(self, spec: JobSpec) -> Rendered:
        lines: list[str] = []
        spec, waits = without_submit_waits(without_zero_gpus(spec), self.name, self.submit_wait)
        warnings = common_render_warnings(spec, self.name) + waits

        def add(opt: str, val: object = None) -> None:
            lines.append(f"#SBATCH --{opt}" + ("" if val is None else f"={quote(str(val))}"))

        comps = _mem_not_carried(live_components(spec), warnings)
        own_times = component_times(spec)  # each component's own (the first's on its lines)
        if comps:  # the first component here, the later ones after `hetjob` lines below
            spec = spec.model_copy(update={"resources": spec.resources.model_copy(
                update=component_sizes(comps[0]))})
        r, c = spec.resources, spec.constraints
        if spec.name:
            name = self.job_name(spec.name)
            warnings += job_name_warning(spec.name, name, ODD_BLANK_REASON)
            add("job-name", name)
        if spec.comment:
            add("comment", spec.comment)
        for opt, val in (("partition", spec.queue), ("account", spec.account),
                         ("qos", spec.qos), ("reservation", spec.reservation),
                         ("chdir", spec.working_directory)):
            if val:
                add(opt, val)
        ranged = self._kept_node_range(spec)
        for opt, val in (("nodes", None if ranged else r.nodes), ("ntasks", r.tasks),
                         ("ntasks-per-node", r.tasks_per_node),
                         ("cpus-per-task", r.cpus_per_task)):
            if val is not None:
                add(opt, val)
        prefix = f"{r.gpu_type}:" if r.gpu_type else ""
        kept_gres = self._kept_gres(spec)
        gres = ",".join(d.value or "" for d in kept_gres)
        if r.gpus_per_node is not None and gres \
                and not any(e.split(":")[0] == "gpu" for e in gres.split(",")):
            gres = f"gpu:{prefix}{r.gpus_per_node},{gres}"  # one --gres with every entry
        elif r.gpus_per_node is not None and r.nodes is None \
                and spec.metadata.get(GPUS_PER_JOB) == r.gpus_per_node:
            add("gpus", f"{prefix}{r.gpus_per_node}")  # the job's, on as many nodes as needed
            if gpus_of_job_over_unknown_nodes(spec):  # read back as kept, not as lost
                warnings.append(f"approximated: {quantity(r.gpus_per_node, 'GPU')} for the whole "
                                f"job as --gpus={prefix}{r.gpus_per_node} (Slurm spreads them over "
                                f"the nodes it picks for the {quantity(r.tasks, 'task')})")
        elif r.gpus_per_node is not None:
            add("gpus-per-node", f"{prefix}{r.gpus_per_node}")
        if gres:
            add("gres", gres)
        if r.gpus_per_task is not None:
            add("gpus-per-task", f"{prefix}{r.gpus_per_task}")
        if r.gpu_type and r.gpus_per_node is None and r.gpus_per_task is None \
                and not any(x.gpus_per_node or x.gpus_per_task for x in comps):
            warnings.append(f"dropped: GPU type {r.gpu_type} without a GPU count")
        if r.memory_mb is not None:
            add("mem", fmt_mem(r.memory_mb))
            if r.memory_per_cpu_mb is not None:
                warnings.append(f"dropped: memory per CPU {r.memory_per_cpu_mb}MB (sbatch "
                                "does not accept --mem with --mem-per-cpu)")
        elif r.memory_per_cpu_mb is not None:
            add("mem-per-cpu", fmt_mem(r.memory_per_cpu_mb))
        if (first_time := own_times[0] if own_times else r.walltime_s) is not None:
            add("time", fmt_slurm_time(first_time))
        stf_kept = self._shrink_to_fit(spec, add, warnings)
        if stdin := kept_stdin(spec, self.name, warnings):  # bsub/qsub -i FILE
            add("input", stdin[0])
            stf_kept.append((stdin[1].option, stdin[1].value))
        if c.features:
            add("constraint", join_features(c.features))
        if c.exclusive:
            add("exclusive")
        if r.gpu_bind:
            add("gpu-bind", r.gpu_bind)
        if r.distribution:
            add("distribution", r.distribution)
        if spec.array:
            add("array", spec.array.expression)
        if spec.begin and (at := render_begin(spec.begin, self.name, warnings)):
            add("begin", at)
        # a kept `--dependency` (singleton, after:ID+MIN) of a job whose others are read
        # too: one option again (sbatch keeps only the last --dependency)
        kept_dep = next((d for d in spec.unknown if d.dialect == self.name
                         and d.option == "--dependency" and d.value), None)
        joined: list[Directive] = []
        if deps := dependencies_for(spec, self.name, warnings):
            value = dependency_value(deps, warnings, any_of_dependencies(spec))
            if kept_dep is not None and not any_of_dependencies(spec):
                value, joined = f"{value},{kept_dep.value}", [kept_dep]
            add("dependency", value)
        for opt, val in (("output", spec.stdout), ("error", spec.stderr)):
            if val:
                val = file_for_directory(val, "stdout" if opt == "output" else "stderr",
                                         spec.source_dialect, self.name, warnings)
                add(opt, map_out_pattern(val, self.name, warnings))
        mode = output_mode_of(spec)
        if mode and (spec.output_mode or spec.source_dialect != self.name):
            # said outright: the site's JobFileAppend would decide otherwise
            add("open-mode", mode)
        if spec.hold:
            add("hold")
        if spec.requeue is not None:
            add("requeue" if spec.requeue else "no-requeue")
        if spec.mail_user:
            add("mail-user", spec.mail_user)
        if spec.mail_events:
            add("mail-type", ",".join(e.upper() for e in spec.mail_events))
        self._render_env(spec, add, warnings)
        lines += own_unknown_lines(spec, self.name, self.sentinel, _directive_count,
                                   skip=lambda d: any(d is g for g in [*kept_gres, *joined]))
        signal_kept: list[tuple[str, str | None]] = []
        if spec.source_dialect != self.name and (ws := warn_signal(spec)) \
                and (value := slurm_value(ws)):
            add("signal", value)
            warnings.append(said(ws, self.name, f"--signal={value}"))
            signal_kept = signal_carried(ws)
        # chunks of several shapes naming their hosts: each hetjob component its own
        per_comp = component_hosts(spec, len(comps), self.name) if len(comps) > 1 else None
        if per_comp is not None:
            own_hosts, named = per_comp
            if own_hosts[0]:
                add("nodelist", own_hosts[0])
            hosts_read = [(d.option, d.value) for d in named.read_from]
            hosts_said = [f"kept: {named.raw()} as the --nodelist of each hetjob component ("
                          + ", ".join(f"component {i}: {h or 'any host'}"
                                      for i, h in enumerate(own_hosts)) + ")"]
        else:  # a Slurm hetjob's own: the later components' (the first's is kept)
            own_hosts = [None, *spec.metadata.get(COMPONENT_NODELISTS, [])] \
                if spec.source_dialect == self.name else []
            hosts_said, hosts_read = render_named_hosts(spec, self.name, add)
        warnings += hosts_said + foreign_warnings(spec, self.name,
                                                  skip=signal_kept + hosts_read + stf_kept)
        if spec.source_dialect == self.name and _FOREIGN_IN_BODY.search(spec.script or ""):
            # sbatch read them in the original too (slurm_wrappers): read again, the same
            if not any(d.option == "--ignore-pbs" for d in spec.unknown):
                warnings.append("kept: #PBS/#BSUB lines in the body, which sbatch reads "
                                "after the #SBATCH lines, as it did the original's")
        elif _FOREIGN_IN_BODY.search(spec.script or ""):
            # sbatch would read leftover #PBS/#BSUB lines (its PBS compatibility); the
            # original scheduler ignored them, so keep it that way
            add("ignore-pbs")
            warnings.append("approximated: #PBS/#BSUB lines left in the body are ignored "
                            "(#SBATCH --ignore-pbs)")
        carried = {"account": spec.account, "qos": spec.qos,  # what sbatch propagates
                   "reservation": spec.reservation}
        for i, comp in enumerate(comps[1:], start=1):  # each one's sizes after `hetjob`
            lines.append("#SBATCH hetjob")
            if comp.queue or spec.queue and not comp.default_queue:
                add("partition", comp.queue or spec.queue)  # not carried over: said again
            for opt, job in carried.items():
                own = getattr(comp, opt) or getattr(spec, opt)
                if own and own != job:
                    add(opt, own)
                elif own != job:  # sbatch would carry the one before over: none to reset to
                    warnings.append(f"approximated: component {i} gets {opt} {job} of the "
                                    f"component before it (sbatch carries it over; it asked none)")
                carried[opt] = own or job
            if own_times and own_times[i] is not None:  # not carried over: its own or none
                add("time", fmt_slurm_time(own_times[i]))
            # not carried over: its own (none when it asked none), else the job's again
            if features := (c.features if comp.features is None else comp.features):
                add("constraint", join_features(features))
            if c.exclusive if comp.exclusive is None else comp.exclusive:  # not carried
                add("exclusive")
            if i < len(own_hosts) and own_hosts[i]:  # its own hosts (a chunk's)
                add("nodelist", own_hosts[i])
            for opt, val in (("nodes", comp.nodes), ("ntasks", comp.tasks),
                             ("ntasks-per-node", comp.tasks_per_node),
                             ("cpus-per-task", comp.cpus_per_task)):
                if val is not None:
                    add(opt, val)
            kind = f"{comp.gpu_type or r.gpu_type}:" if comp.gpu_type or r.gpu_type else ""
            gpn = comp.gpus_per_node
            if comp.gres:  # its other generic resources: one --gres (sbatch keeps the last)
                add("gres", comp.gres if gpn is None else f"gpu:{kind}{gpn},{comp.gres}")
            for opt, val in (("gpus-per-node", None if comp.gres else gpn),
                             ("gpus-per-task", comp.gpus_per_task)):
                if val is not None:
                    add(opt, f"{kind}{val}")
            if comp.memory_mb is not None:
                add("mem", fmt_mem(comp.memory_mb))
            elif comp.memory_per_cpu_mb is not None:
                add("mem-per-cpu", fmt_mem(comp.memory_per_cpu_mb))
        preamble = neutral_preamble(spec, variables_listed=True)
        if r.cpu_bind:  # sbatch has no --cpu-bind; srun reads SLURM_CPU_BIND
            preamble.insert(0, f"export SLURM_CPU_BIND={sh_quote(r.cpu_bind)}")
        enter, entered = start_directory(spec, self.name)  # a PBS job started in the home
        return Rendered(assemble(spec, lines, preamble, enter=enter), warnings + entered)

    @staticmethod
    def _render_env(spec: JobSpec, add, warnings: list[str]) -> None:
        env = spec.environment
        pairs = [f"{k}={v}" for k, v in listed_variables(spec).items()]
        if env.export_all is False:  # only these (NAME alone: its value at submission)
            add("export", ",".join(passed_names(spec) + pairs)
                or ("NIL" if spec.metadata.get(EXPORT_NIL) else "NONE"))
        elif pairs:
            add("export", ",".join(["ALL", *pairs]))
        elif env.export_all:
            add("export", "ALL")


slurm_script = SlurmScript()
