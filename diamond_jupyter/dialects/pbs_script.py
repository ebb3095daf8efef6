"""PBS Pro and Torque batch scripts (#PBS): parse into JobSpec and render from it.

PBS Pro asks for chunks (`-l select=N:ncpus=..:mpiprocs=..`, `-J` arrays, `-l place=`);
Torque asks for nodes (`-l nodes=N:ppn=M:gpus=G`, `-t` arrays, `-d` workdir, `-n` exclusive).
The flavour seen while parsing is kept in metadata["pbs_flavor"] and used when rendering.
"""

from __future__ import annotations

import re

from ..digits import ascii_digits
from ..model import (
    CPU_TIME,
    PBS_GPU_MODEL_KEYS,
    ArraySpec,
    BadInput,
    Dependency,
    Directive,
    JobSpec,
    Resources,
    gpus_of_job_over_unknown_nodes,
)
from ..wording import quantity
from .base import Rendered
from .begin_time import neutral, pbs_parts, render_begin, render_day_of_month
from .node_lists import component_hosts, render_named_hosts
from .outputs_common import count_array_tasks, expand_hostlist
from .scripts_common import (
    NO_MAIL,
    SGE_MAIL_SUSPEND,
    Item,
    Opt,
    OptionTable,
    SubmitWait,
    add_qsub_environment,
    assemble,
    bad,
    begin_parse,
    common_render_warnings,
    component_sizes,
    cpu_time_limit,
    dependencies_for,
    describe_totals,
    file_for_directory,
    fmt_hms,
    fmt_mem,
    foreign_warnings,
    is_placeholder,
    job_name_warning,
    kept_priority,
    kept_project,
    launcher_only_warnings,
    live_components,
    mail_warning,
    map_out_pattern,
    mapped_or_placeholder,
    neutral_preamble,
    no_gpus_for_zero,
    no_memory_asked,
    note,
    one_queue,
    output_mode_warning,
    own_unknown_lines,
    parse_hms,
    parse_mem_mb,
    parse_slurm_time,
    pbs_gpu_model_key,
    placeholder_note,
    quote,
    read_array,
    set_components,
    set_output_path,
    sh_quote,
    socket_gpus_per_node,
    split_header,
    start_directory,
    summed_totals,
    take_variables,
    tokenize,
    unknown,
    whole_job_dependencies,
    without_submit_waits,
    zero_time_limit,
)
from .staging import keep_as_written, pbs_attributes, read_pbs_staging
from .warn_signal import carried as signal_carried
from .warn_signal import dropped, warn_signal

# a PBS size is an integer with an optional unit: qsub refuses a fraction
_SIZE = "a whole number with b, kb, mb, gb or tb (no fraction: 1536mb, not 1.5gb)"
_HOST_PREFIX = re.compile(r"^[\w.\-]+:(?=/)")  # -o/-e [HOST:]PATH

_ARGS = "aAbcCdDeIjJkKlmMNoPpqrSTtuvWwxz"
_FLAGS = "fhIVXxzn"
TABLE = OptionTable({}, {c: Opt("-" + c) for c in _ARGS if c not in _FLAGS}
                    | {c: Opt("-" + c, "none") for c in _FLAGS}, prefix=False,
                    getopt_short=True)  # qsub reads its options with getopt
_SENTINEL = re.compile(r"^\s*#PBS(?:\s+(.*)|$)")
_FEATURE = re.compile(r"[A-Za-z][\w.\-]*")  # one node feature name (a list is kept)
# `j` (PBS Pro): the a, b, e mail for each subjob of an array too, Slurm's ARRAY_TASKS
_MAIL = {"a": "fail", "b": "begin", "e": "end", "j": "array_tasks"}
_MAIL_BACK = {"fail": "a", "begin": "b", "end": "e", "all": "abe", "array_tasks": "j"}
_SUB = ("-l select:", "-l place:", "-l nodes:")  # options folded back into the -l lists
# Torque's GPU compute modes, written after gpus=N in a nodes spec
_TORQUE_GPU_MODES = {"exclusive_thread", "exclusive_process", "exclusive", "default", "shared",
                     "reseterr"}


def _items(payload: str, lineno: int, raw: str) -> list[Item]:
    out = []
    for it in TABLE.parse(tokenize(payload), lineno, raw, dash="-"):
        if it.option == "-l" and it.value:
            out += [Item("-l", part, lineno, raw) for part in it.value.split(",") if part]
        else:
            out.append(it)
    return out


def qsub_joined(text: str) -> tuple[str, list[str]]:
    """The script as qsub reads its directives (OpenPBS `get_script`): a #PBS line of the
    leading block ending in a backslash goes on with the next line, whatever it holds
    (the backslash and the line break removed), until a line ends otherwise. The lines
    joined are left empty, so later line numbers stay; with one note per join. Refused
    (BadInput): a backslash on the last line (qsub: unexpected end-of-file), and a joined
    line that starts with `#` (another #PBS line, a comment): its `#PBS` would be a word of
    the directive above, where qsub's option reading ends, not the continuation meant; and
    a joined directive left with words that are no options (a command line joined, `echo
    hi`), which qsub refuses as a directive error."""
    body = text[1:] if text.startswith("\ufeff") else text
    header = split_header(body, lambda s: (m.group(1) or "") if (m := _SENTINEL.match(s))
                          else None)
    # qsub looks at the last character alone (an escaped backslash goes on too)
    starts = [n - 1 for n, _, payload in header.directives if payload.endswith("\\")]
    if not starts:
        return text, []
    lines = body.splitlines(keepends=True)
    text_lines = [ln.rstrip("\r\n") for ln in lines]  # as written, for the messages
    notes: list[str] = []
    for i in starts:
        j = i  # the last line joined to line i
        while (bare := lines[i].rstrip("\r\n")).endswith("\\"):
            j += 1
            if j >= len(lines):
                raise BadInput(f"line {i + 1}: `{bare.strip()}` ends in a backslash on the "
                               "script's last line: qsub joins such a #PBS line with the "
                               "next one and fails (unexpected end-of-file); remove the "
                               "backslash")
            nxt = lines[j].rstrip("\r\n")
            if nxt.lstrip().startswith("#"):
                word = nxt.split()[0]
                raise BadInput(f"line {i + 1}: `{bare.strip()}` ends in a backslash: qsub "
                               f"joins line {j + 1} (`{nxt.strip()}`) to it, so `{word}` "
                               f"becomes a word of line {i + 1}'s directive, where qsub stops "
                               f"reading its options; remove the backslash (qsub reads each "
                               "#PBS line on its own) or continue on a line without `#`")
            notes.append(f"line {i + 1} goes on on line {j + 1} (`{nxt.strip()}`): qsub joins "
                         "a #PBS line ending in a backslash with the next line; read as one "
                         "directive")
            ending = lines[i][len(lines[i].rstrip("\r\n")):]
            lines[i] = bare[:-1] + lines[j]
            lines[j] = ending if ending else ""
        if j > i and (m := _SENTINEL.match(lines[i].rstrip("\r\n"))):
            # qsub (process_opts) refuses a directive that leaves words after its options
            # ("qsub: directive error"): a command line joined to it, `echo hi`
            loose = [it.option for it in _items(m.group(1) or "", i + 1, lines[i])
                     if not it.option.startswith("-")]
            if loose:
                raise BadInput(
                    f"line {i + 1}: `{text_lines[i].strip()}` ends in a backslash: qsub joins "
                    f"line {j + 1} (`{text_lines[j].strip()}`) to it and reads "
                    f"`{(m.group(1) or '').strip()}` as one directive, where "
                    f"`{' '.join(loose)}` is no option: qsub refuses the script (directive "
                    f"error); remove the backslash (qsub reads each #PBS line on its own) or "
                    "continue on a line of options")
    return ("\ufeff" if body is not text else "") + "".join(lines), notes


def _count(raw: str) -> int:
    m = _SENTINEL.match(raw)
    return len(_items(m.group(1) or "", 0, raw)) if m else 0



# the chunk resources whose values are numbers (an ALLCAPS word there is a placeholder;
# elsewhere it may be a site's own value: `gpu_model=A100-SXM4-80GB`, a host NODE07)
_MPP = ("mppwidth", "mppnppn", "mppdepth")  # Cray ALPS: tasks, tasks per node, CPUs each
_NUMERIC_CHUNK_KEYS = {"ncpus", "mpiprocs", "ompthreads", "ngpus", "mem", "vmem", "pmem",
                       "ppn", "gpus", "procs"}


def _numbers_of(chunks: str) -> str:
    """The parts of a select/nodes request that should be numbers: each chunk's count and
    its numeric resources."""
    out = []
    for chunk in chunks.split("+"):
        parts = chunk.split(":")
        out += [parts[0]] if "=" not in parts[0] else []
        out += [v for k, eq, v in (p.partition("=") for p in parts)
                if eq and k.lower() in _NUMERIC_CHUNK_KEYS]
    return " ".join(out)


def submit_wait(d: Directive) -> SubmitWait | None:
    """qsub's options that make it wait: an interactive job (`-I`, `-W interactive=true`)
    and its X11 forwarding (`-X`, with -I only) need a terminal; `-W block=true` makes qsub
    return when the job ends (PBS Pro's qsub reference)."""
    if d.option in ("-I", "-X"):
        what = "qsub -I runs an interactive job: qsub waits at the terminal until it ends, " \
            "carrying the terminal's input and output" if d.option == "-I" else \
            "qsub -X forwards an interactive job's X11 windows to the submitting terminal"
        return SubmitWait(True, what, "remove it to run the script as a batch job, or run "
                          "`qsub -I` yourself from a login shell")
    if d.option != "-W" or not d.value:
        return None
    items = [x.strip() for x in d.value.split(",") if x.strip()]
    key = {x.partition("=")[0].lower(): x.partition("=")[2].lower() for x in items}
    if key.get("interactive") in ("true", "1", "y", "yes"):
        return SubmitWait(True, "-W interactive=true runs an interactive job (qsub -I): qsub "
                          "waits at the terminal until it ends",
                          "remove it to run the script as a batch job, or run `qsub -I` "
                          "yourself from a login shell")
    if key.get("block") in ("true", "1", "y", "yes"):
        rest = [x for x in items if x.partition("=")[0].lower() != "block"]
        return SubmitWait(False, "-W block=true makes qsub return only when the job ends",
                          rest=",".join(rest) or None)
    return None



# set by a site whose sites-file entry says `flavor: torque` (the script's own flavor aside)
TARGET_FLAVOR = "pbs_target_flavor"


# Torque's dependency kinds on a whole job array (`afterokarray:123[]`, qsub(1) of Torque
# 2.5 on), each the kind a job's own dependency has (the writer's `_depend_terms` back)
_TORQUE_ARRAY_KINDS = {"afterstartarray": "after", "afterokarray": "afterok",
                       "afternotokarray": "afternotok", "afteranyarray": "afterany"}
_TORQUE_ARRAY_ID = re.compile(r"[0-9]+\[\](?:\.[\w.\-]+)?")


def _depend_terms(deps: list, torque: bool) -> list[str]:
    """`-W depend=` terms. Torque (2.5 on) waits on a whole job array only through its
    array kinds (`afterokarray:123[]`); its plain `afterok` names one job, which an
    array's id (`123[].srv`) is not. PBS Pro takes `afterok:123[]` for the array."""
    out = []
    for d in deps:
        arrays = [i for i in d.job_ids if "[]" in i]
        rest = [i for i in d.job_ids if "[]" not in i]
        if torque and arrays:
            kind = "afterstart" if d.kind == "after" else d.kind  # Torque's names
            out += [f"{kind}array:{i}" for i in arrays]
            if rest:
                out.append(f"{d.kind}:{':'.join(rest)}")
        else:
            out.append(f"{d.kind}:{':'.join(d.job_ids)}")
    return out

_PMEM = "pbs_pmem"  # metadata: -l pmem's MB (applied to every chunk once all are read)
_EXCLHOST = "pbs_exclhost"  # metadata: place= asked exclhost, not excl
_JOINED = "pbs_join"  # metadata: the last -j's value and line (resolved after -o, -e)
_ONE_INDEX = "pbs_one_index"  # metadata: a -J of one index qsub refuses, and what says so


# metadata while a script is read: the lines of its `-l select` and of a job-wide
# `-l ncpus`/`-l ngpus`/`-l mem`, by key ("select", "ncpus", ...): (line number, directive)
_SELECT_OR_JOBWIDE = "pbs_select_or_jobwide"
# the job-wide host resources PBS Pro converts to a chunk (flagged so in its resource
# definitions), which it therefore refuses beside a select of the job's own chunks
_CHUNK_CONVERTED = ("ncpus", "ngpus", "mem")


def _no_jobwide_beside_select(spec: JobSpec, item: Item, key: str) -> None:
    """PBS Pro's qsub refuses a job-wide host resource beside a select, whichever comes
    first (`"-lresource=" cannot be used with "select" or "place"`): `-l select=1:ncpus=8`
    then `-l ncpus=4` was read as 4 CPUs without a word, and `-l mem=16gb` as the job's
    memory in place of the chunks'. BadInput naming both lines."""
    seen: dict[str, tuple[int, str]] = spec.metadata.setdefault(_SELECT_OR_JOBWIDE, {})
    seen.setdefault(key, (item.lineno, item.raw.strip()))
    jobwide = next((k for k in _CHUNK_CONVERTED if k in seen), None)
    if "select" not in seen or jobwide is None:
        return
    (at, said), (select_at, select_said) = seen[jobwide], seen["select"]
    beside = f"the select of line {select_at} (`{select_said}`)" if select_at != at \
        else "the select in the same -l list"
    raise BadInput(
        f"line {at}: a job-wide -l {jobwide} (`{said}`) beside {beside}: PBS Pro's qsub "
        f"refuses a job-wide {jobwide} with a select; ask it in the select's chunks "
        f"(select=N:{jobwide}=X) or drop the -l {jobwide} line")


def _pbs_time(value: str, example: str) -> str:
    """What a PBS time (decode_time) takes, said for `value`: a fraction of hours or
    minutes (`1.5:00:00`) named as such."""
    whole, dot, rest = value.partition(".")
    fraction = " in whole numbers but for a fraction of the seconds (1.5:00:00 is none: " \
        "write 01:30:00)" if dot and ":" in rest else ""
    return f"[[[D:]H:]M:]S{fraction}, e.g. {example}"


class PbsScript:
    submit_wait = staticmethod(submit_wait)
    name = "pbs"
    sentinel = "#PBS"

    def parse_script(self, text: str, *, carry_staging: bool = True) -> JobSpec:
        """`carry_staging` False: `-W stagein`/`stageout` stay as written (a script for
        PBS itself), not read into the job's stage entries."""
        text, joins = qsub_joined(text)
        header, spec = begin_parse(text, _SENTINEL, self.name,
                                   "after the first command; qsub ignores it")
        keep_as_written(spec, not carry_staging)
        for said in joins:
            note(spec, said)
        total_mem: list[int] = []
        limit: Item | None = None  # -W max_run_subjobs=N: the array's, once -J is read
        for lineno, raw, payload in header.directives:
            for item in _items(payload, lineno, raw):
                if item.option == "-W" and (item.value or "").startswith("max_run_subjobs="):
                    n = item.value.partition("=")[2]
                    if not ascii_digits(n) or int(n) == 0:
                        raise bad(item, "bad max_run_subjobs", "a positive integer")
                    limit = item
                    continue
                ok = mapped_or_placeholder(item, self.name, spec, self._map, spec, item, total_mem)
                if not ok:
                    unknown(spec, self.name, item)
        for f in spec.metadata.pop("pbs_moab_features", []):
            if f not in spec.constraints.features:
                spec.constraints.features.append(f)
        if limit is not None:
            self._array_limit(spec, limit)
        self._per_process_memory(spec)
        self._joined(spec)
        self._packed(spec)
        self._mpp_sizes(spec)
        r = spec.resources
        if total_mem:  # -l mem is per job: spread over the nodes
            n = r.nodes or 1
            r.memory_mb = -(-total_mem[-1] // n)
            if spec.components:  # on every component's nodes alike
                for c in spec.components:
                    c.memory_mb, c.memory_per_cpu_mb = r.memory_mb, None
                set_components(spec, spec.components)
            if n > 1:
                note(spec, f"PBS job memory {total_mem[-1]}MB read as {r.memory_mb}MB per node")
        spec.metadata.pop(_SELECT_OR_JOBWIDE, None)
        keep_as_written(spec, False)
        no_gpus_for_zero(spec, "ngpus=0, or Torque gpus=0")
        self._zero_counts(spec)
        return spec

    @staticmethod
    def _zero_counts(spec: JobSpec) -> None:
        """`ncpus=0`, `-l procs=0` (`mpiprocs=0`: `_select`): PBS takes a chunk or a job
        asking none, but a count of 0 is no count elsewhere (sbatch refuses
        --cpus-per-task=0): read as not given (the scheduler's default, one), and said."""
        zero = {"cpus_per_task": "ncpus=0", "tasks": "procs=0 / ncpus=0"}
        said: list[str] = []
        for r in (spec.resources, *spec.components):
            for key, spelled in zero.items():
                if getattr(r, key) == 0:
                    setattr(r, key, None)
                    said += [spelled] if spelled not in said else []
        if said:
            note(spec, f"{', '.join(said)}: a count of 0 read as not given (other schedulers "
                       "take no 0 there; each gets its default of one)")

    @staticmethod
    def _per_process_memory(spec: JobSpec) -> None:
        """`-l pmem=M`: M for each process of every chunk, on whichever line it comes. It
        was set on the job's one shape as read so far: after chunks of several shapes
        (`nodes=1:ppn=8:gpus=2+2:ppn=4`) that made the job one shape of the largest chunk
        on every node (24 tasks and 6 GPUs for 16 and 2); before them, lost."""
        mb = spec.metadata.pop(_PMEM, None)
        if mb is None:
            return
        if not spec.components:
            spec.resources.memory_per_cpu_mb = mb
            return
        for c in spec.components:
            c.memory_per_cpu_mb = mb
        set_components(spec, spec.components)
        for key in ("select", "nodes"):  # the chunks as written are still what it asks
            if isinstance(kept := spec.metadata.get(f"pbs_{key}_chunks"), dict):
                kept["as"] = PbsScript._shape(spec.resources)

    @staticmethod
    def _joined(spec: JobSpec) -> None:
        """`-j oe` merges stderr into the output file, `-j eo` stdout into the error file
        (-e, else NAME.eID); the other path is then not used. Read as the job's one output
        file (other schedulers write both streams where --output/-o says): `-j eo` was read
        as an error file alone (stdout sent to the scheduler's default file), and the
        unused path of either was written out, splitting the streams again."""
        how, lineno = spec.metadata.pop(_JOINED, ("n", 0))
        if how == "n":
            return
        unused, used = (spec.stderr, spec.stdout) if how == "oe" else (spec.stdout,
                                                                        spec.stderr)
        if unused and unused != used:
            note(spec, f"line {lineno}: -j {how}: {'-e' if how == 'oe' else '-o'} {unused} "
                       "not used (qsub writes both streams to the other file)")
        if how == "oe":
            spec.stderr = None
        elif spec.stderr:
            note(spec, f"line {lineno}: -j eo: both streams go to the error file "
                       f"{spec.stderr} (read as the job's output file)")
            spec.stdout, spec.stderr = spec.stderr, None
        else:
            spec.stdout = None
            note(spec, f"line {lineno}: -j eo: both streams go to the error file, named "
                       "%x.e%j by default (read as the job's output file, named %x.o%j)")

    def _map(self, spec: JobSpec, item: Item, total_mem: list[int]) -> bool:  # noqa: C901
        o, v = item.option, item.value or ""
        if o == "-l":
            return self._resource(spec, item, total_mem)
        if o in ("-q", "-A", "-N", "-d") and is_placeholder(v):
            note(spec, placeholder_note(item, self.name, "kept as a raw value"))
        if o == "-q":
            if v.startswith("@"):
                return False
            queue, _, server = v.partition("@")
            spec.queue = queue
            if server:  # queue@server: PBS gets it as written; the others the queue
                spec.metadata["pbs_queue_server"] = {"raw": v, "as": queue}
                note(spec, f"approximated: line {item.lineno}: -q {v}: other schedulers get "
                           f"the queue {queue} (the PBS server {server} has no equivalent)")
        elif o == "-A":
            spec.account = v
        elif o == "-N":
            if v.startswith("-"):  # qsub's getopt takes it as the name, then refuses it
                raise BadInput(
                    f"line {item.lineno}: job name {v!r} in `{item.raw.strip()}` starts with "
                    "'-': qsub takes it as -N's value and refuses it (a PBS job name starts "
                    f"with a letter); give one that does (e.g. {'j' + v!r})")
            spec.name = v
        elif o in ("-o", "-e"):
            set_output_path(spec, item, _HOST_PREFIX, self.name)
        elif o == "-j":
            if v not in ("oe", "eo", "n"):
                return False
            spec.join_output = v != "n"
            # which file takes both streams: resolved once -o and -e are read
            spec.metadata[_JOINED] = (v, item.lineno)
        elif o in ("-J", "-t"):
            spec.array = read_array(item, v, "X-Y[:STEP][%LIMIT] (X < Y, STEP and LIMIT > "
                                    "0), e.g. 1-100:2" if o == "-J" else "indexes and ranges "
                                    "X-Y (X <= Y), comma separated, then %LIMIT > 0, e.g. 1-10%2")
            spec.metadata["pbs_flavor"] = "pro" if o == "-J" else "torque"
            spec.metadata.pop(_ONE_INDEX, None)  # qsub keeps the last -J
            if o == "-J" and (held := pro_one_index_range(v)) != v:
                said = (f"line {item.lineno}: -J {v}: PBS Pro's qsub refuses a range whose end "
                        "is not past its start (illegal -J value); it takes X-Y[:STEP]"
                        f"[%LIMIT] with X < Y; read as index {_first_index(v)} alone, "
                        f"written -J {held} for PBS Pro (the range holding it alone)")
                spec.metadata[_ONE_INDEX] = (v, said)
                note(spec, said)
        elif o == "-W":
            rest = read_pbs_staging(spec, item)
            if rest is None:
                return self._depend(spec, item, v)
            # the attributes beside the staging: a depend= read (whatever its place on
            # the line), the others kept as one -W with the staging kept as written
            others = [a for a in pbs_attributes(rest) if a and not self._depend(
                spec, Item("-W", a, item.lineno, f"#PBS -W {a}"), a)]
            if others:
                kept = ",".join(others)
                unknown(spec, self.name, Item("-W", kept, item.lineno, f"#PBS -W {kept}"))
        elif o == "-V":
            spec.environment.export_all = True
        elif o == "-v":
            return take_variables(spec, v, quoted_values=True)
        elif o == "-m":
            if not set(v) <= set("abejn"):
                raise bad(item, "bad -m value", "letters from a, b, e (with j: for each "
                          "subjob of an array too), or n")
            if "j" in v and not set(v) & set("abe"):  # PBS Pro: j only beside a, b or e
                raise bad(item, "bad -m value", "j (mail for each subjob) with a, b or e, "
                          "e.g. -m abej")
            if "n" in v:  # no mail at all, not even qsub's default on abort (-m a)
                spec.mail_events = []
                spec.metadata[NO_MAIL] = True
                return True
            spec.metadata.pop(NO_MAIL, None)
            spec.mail_events += [_MAIL[c] for c in v if c in _MAIL]
        elif o == "-M":
            spec.mail_user = v
        elif o == "-h":
            spec.hold = True
        elif o == "-a":
            at = pbs_parts(v, f"line {item.lineno}")
            spec.begin = neutral(at) if at else None  # qsub keeps the last -a
            if at is None:
                note(spec, f"line {item.lineno}: -a {v}: a day of the month without the month "
                           "has no neutral form (sbatch has none); kept as written")
                return False
        elif o == "-r":
            if v not in ("y", "n"):
                raise bad(item, "bad -r value", "y (rerunnable) or n (never rerun)")
            spec.requeue = v == "y"
        elif o == "-d":
            spec.working_directory = v
            spec.metadata["pbs_flavor"] = "torque"
        elif o == "-n":  # Torque's qsub -n: the job's nodes are its alone (what we render)
            spec.constraints.exclusive = True
            spec.metadata.setdefault("pbs_flavor", "torque")
        else:
            return False
        return True

    def _mpp_sizes(self, spec: JobSpec) -> None:
        """Cray ALPS sizes: `-l mppwidth=N` tasks (processing elements), `mppnppn=K` of
        them on each node, `mppdepth=D` CPUs each. Read where the script gives no other
        size (select, nodes, procs); else, or without mppwidth, kept as written."""
        mpp, items = spec.metadata.get("pbs_mpp"), spec.metadata.pop("_pbs_mpp_items", [])
        r = spec.resources
        if not mpp:
            return
        if "mppwidth" not in mpp or r.tasks or r.nodes or r.tasks_per_node \
                or r.cpus_per_task or spec.components:
            spec.metadata.pop("pbs_mpp")
            for item in items:
                unknown(spec, self.name, item)
            return
        width, nppn, depth = mpp["mppwidth"], mpp.get("mppnppn"), mpp.get("mppdepth")
        r.tasks = width
        if nppn:
            r.tasks_per_node = min(nppn, width)
            r.nodes = -(-width // nppn)
        r.cpus_per_task = depth
        where = f", {r.tasks_per_node} per node on {quantity(r.nodes, 'node')}" if nppn else ""
        each = f", {quantity(depth, 'CPU')} each" if depth else ""
        note(spec, "Cray ALPS sizes (" + ", ".join(f"{k}={v}" for k, v in mpp.items())
             + f") read as {quantity(width, 'task')}{where}{each}")

    @staticmethod
    def _mpp_as_written(spec: JobSpec) -> list[str] | None:
        """A PBS script's Cray ALPS sizes, as written, while the job is still what they
        say (and asks no memory or GPUs, which they cannot carry); else None."""
        mpp = spec.metadata.get("pbs_mpp") if spec.source_dialect == "pbs" else None
        r = spec.resources
        if not mpp or "mppwidth" not in mpp or spec.components or r.memory_mb \
                or r.memory_per_cpu_mb or r.gpus_per_node or r.gpus_per_task:
            return None
        nppn = mpp.get("mppnppn")
        same = (r.tasks, r.tasks_per_node, r.nodes, r.cpus_per_task) == (
            mpp["mppwidth"], min(nppn, mpp["mppwidth"]) if nppn else None,
            -(-mpp["mppwidth"] // nppn) if nppn else None, mpp.get("mppdepth"))
        return [f"{k}={v}" for k, v in mpp.items()] if same else None

    @staticmethod
    def _forget_chunks(spec: JobSpec, key: str) -> None:
        """qsub keeps the last `-l select` (`-l nodes`): what an earlier one asked (its
        counts, GPUs, memory, properties, kept chunk resources) no longer counts."""
        r = spec.resources
        r.nodes = r.tasks_per_node = r.cpus_per_task = r.gpus_per_node = r.memory_mb = None
        r.tasks = None  # a part-filled chunk list's task count (_part_filled)
        spec.components = []
        if key == "nodes":
            spec.constraints.features = []
        spec.unknown = [d for d in spec.unknown if not d.option.startswith(f"-l {key}:")]
        spec.metadata.pop(f"pbs_{key}_chunks", None)

    def _packed(self, spec: JobSpec) -> None:
        """`-l place=pack`: PBS Pro puts every chunk on one host, so the job is one node
        holding all the chunks' tasks, CPUs, GPUs and memory (it was read as one node per
        chunk). Unequal chunks: the CPUs per task rounded up so that none is short. The
        select stays as written for PBS."""
        raw = spec.metadata.pop("pbs_select", None)
        place = {d.option.split(":", 1)[1] for d in spec.unknown
                 if d.dialect == self.name and d.option.startswith("-l place:")}
        r = spec.resources
        if "pack" not in place or raw is None or (r.nodes or 1) == 1:
            return
        shapes = []
        for chunk in raw.split("+"):
            one = JobSpec()
            self._select(one, Item("-l", f"select={chunk}", 0, ""), chunk, in_chunks=True)
            shapes.append(one.resources)
        tasks = cpus = gpus = mem = 0
        for o in shapes:
            n, tpn = o.nodes or 1, o.tasks_per_node or 1
            tasks += n * tpn
            cpus += n * tpn * (o.cpus_per_task or 1)
            gpus += n * (o.gpus_per_node or 0)
            mem += n * (o.memory_mb or 0)
        r.nodes, r.tasks_per_node, r.tasks = 1, tasks, None
        spec.components = []  # one host holds them all: one shape
        r.cpus_per_task = -(-cpus // tasks)
        r.gpus_per_node, r.memory_mb = gpus or None, mem or None
        spec.metadata["pbs_select_chunks"] = {"raw": raw, "as": self._shape(r)}
        notes = spec.metadata.get("parse_notes", [])  # no longer one node per chunk
        notes[:] = [n for n in notes if f"select={raw} (" not in n]
        note(spec, ("approximated: " if cpus % tasks else "")
                   + f"select={raw} with place=pack read as one node of {quantity(tasks, 'task')}"
                   + (f", {r.cpus_per_task} CPUs each" if r.cpus_per_task > 1 else "")
                   + (" (rounded up: the chunks differ)" if cpus % tasks else ""))

    @staticmethod
    def _array_limit(spec: JobSpec, item: Item) -> None:
        """`-W max_run_subjobs=N` (PBS Pro 2020.1+): at most N subjobs of the -J array run
        at once, as `-J X-Y%N` says; without an array (or with a limit in -J) kept."""
        n = (item.value or "").partition("=")[2]
        if spec.array is None or "%" in spec.array.expression:
            unknown(spec, "pbs", item)
            note(spec, f"line {item.lineno}: -W {item.value} without a -J range of its "
                       "own; kept as written")
            return
        spec.array = ArraySpec(expression=f"{spec.array.expression}%{n}")

    @staticmethod
    def _depend(spec: JobSpec, item: Item, v: str) -> bool:
        """`-W depend=`: each `kind:ID[:ID]` the model holds read; the others (`beforeok`,
        `on:N`, a Torque array's task count) kept as one `-W depend=` beside them (the
        writer joins them again); none read: kept as written."""
        if not v.startswith("depend="):
            return False
        deps, rest = [], []
        for part in v[7:].split(","):
            kind, _, ids = part.partition(":")
            if kind in _TORQUE_ARRAY_KINDS:  # Torque's wait on a whole array (`123[]`)
                if not all(_TORQUE_ARRAY_ID.fullmatch(i) for i in ids.split(":")):
                    rest.append(part)  # a count of its tasks (`123[][5]`): as written
                    continue
                kind = _TORQUE_ARRAY_KINDS[kind]
            if "" in ids.split(":"):  # an empty id (`afterok:12:`): the whole kept as
                return False  # written, for qsub to judge, as sbatch's
            if kind not in ("after", "afterok", "afternotok", "afterany"):
                rest.append(part)
                continue
            deps.append(Dependency(kind=kind, job_ids=ids.split(":"), scheduler="pbs"))
        if not deps:
            return False
        spec.dependencies += deps
        if rest:
            kept = "depend=" + ",".join(rest)
            unknown(spec, "pbs", Item("-W", kept, item.lineno, f"#PBS -W {kept}"))
        return True

    def _resource(self, spec: JobSpec, item: Item, total_mem: list[int]) -> bool:  # noqa: C901
        key, _, val = (item.value or "").partition("=")
        r = spec.resources
        if is_placeholder(val, loose=key in ("walltime", "mem", "ncpus")) or (
                key in ("nodes", "select") and is_placeholder(_numbers_of(val), loose=True)):
            raise bad(item, "placeholder", "a concrete value")
        if key == "walltime":
            secs = parse_hms(val)
            if secs is None:
                raise bad(item, "bad walltime", _pbs_time(val, "12:00:00"))
            if secs == 0:
                return zero_time_limit(spec, item, f"walltime={val}")
            r.walltime_s = secs
        elif key == "cput":  # the CPU time all the job's processes may use together
            secs = parse_hms(val)
            if secs is None:
                raise bad(item, "bad cput", _pbs_time(val, "96:00:00"))
            if secs == 0:
                return False  # kept as written
            spec.metadata[CPU_TIME] = secs
        elif key in ("mem", "pmem"):
            mb = parse_mem_mb(val, default_unit="b", whole=True, iec=False)
            if mb is None:
                raise bad(item, "bad memory size", _SIZE)
            if mb == 0:
                no_memory_asked(spec, item.lineno, f"{key}={val}")
            elif key == "pmem":  # per process, every chunk's: applied once all are read
                spec.metadata[_PMEM] = mb
            else:
                if key == "mem":
                    _no_jobwide_beside_select(spec, item, key)
                total_mem.append(mb)
        elif key in ("ncpus", "ngpus", "procs") and ascii_digits(val):
            if key != "procs":
                _no_jobwide_beside_select(spec, item, key)
            attr = {"ncpus": "cpus_per_task", "ngpus": "gpus_per_node", "procs": "tasks"}[key]
            setattr(r, attr, int(val))
            if key != "procs":  # a job-wide request (`-l ncpus=96`): written back so
                spec.metadata["pbs_jobwide"] = True
            if key == "procs":  # Torque's (Moab's): processors anywhere; PBS Pro has none
                spec.metadata.setdefault("pbs_flavor", "torque")
        elif key == "select":
            _no_jobwide_beside_select(spec, item, key)
            self._forget_chunks(spec, key)
            spec.metadata["pbs_select"] = val  # as written (place=pack may need it)
            return self._select(spec, item, val)
        elif key == "nodes":
            self._forget_chunks(spec, key)
            return self._nodes(spec, item, val)
        elif key == "place":
            spec.metadata["pbs_flavor"] = "pro"
            spec.metadata.pop(_EXCLHOST, None)  # the last place= holds
            for part in val.split(":"):
                if part in ("excl", "exclhost"):
                    spec.constraints.exclusive = True
                    if part == "exclhost":  # the whole host, all its vnodes: written back
                        spec.metadata[_EXCLHOST] = True
                else:
                    unknown(spec, self.name, item, "-l place:" + part)
        elif key in _MPP and ascii_digits(val) and int(val) > 0:
            # Cray ALPS sizes (Torque / PBS Pro on Cray XE/XC): read once every line is
            spec.metadata.setdefault("pbs_mpp", {})[key] = int(val)
            spec.metadata.setdefault("_pbs_mpp_items", []).append(item)
        elif key == "qos" and _FEATURE.fullmatch(val):
            # Moab's `-l qos=NAME` (Torque sites; what this renderer writes for Torque)
            spec.qos = val
            spec.metadata.setdefault("pbs_flavor", "torque")
        elif key == "naccesspolicy" and val.lower() == "singlejob":
            spec.constraints.exclusive = True
        elif key.lower() in PBS_GPU_MODEL_KEYS and _FEATURE.fullmatch(val):
            # a job-wide GPU model (NCAR's `-l gpu_type=v100`): the GPU type elsewhere,
            # kept as written for PBS
            r.gpu_type = r.gpu_type or val
            return False
        elif key == "feature" and _FEATURE.fullmatch(val):
            # Moab's `-l feature=k80` (Torque sites): a node feature, as a nodes= property;
            # added once every line is read (a later -l nodes= replaces only its own)
            spec.metadata.setdefault("pbs_moab_features", []).append(val)
            spec.metadata.setdefault("pbs_flavor", "torque")
        else:
            return False
        return True

    def _select(self, spec: JobSpec, item: Item, val: str, in_chunks: bool = False) -> bool:
        spec.metadata["pbs_flavor"] = "pro"
        if "+" in val:
            return self._chunks(spec, item, val, "select", self._select)
        parts = val.split(":")
        r = spec.resources
        if parts[0] == "0" * len(parts[0]):  # qsub: a chunk count of at least 1
            raise bad(item, "bad select", "N:ncpus=C:... with a chunk count N of 1 or more")
        if ascii_digits(parts[0]):
            r.nodes = int(parts.pop(0))
        elif "=" not in parts[0]:
            raise bad(item, "bad select", "N:ncpus=C:mpiprocs=M[:ngpus=G][:mem=X]")
        res = dict(p.partition("=")[::2] for p in parts)
        ncpus, procs = res.pop("ncpus", None), res.pop("mpiprocs", None)
        for k, x in (("ncpus", ncpus), ("mpiprocs", procs)):
            if x is not None and not ascii_digits(x):
                raise bad(item, f"bad {k}", "a positive integer")
        if procs is not None and not int(procs):  # no MPI ranks here: as if not given
            note(spec, f"line {item.lineno}: mpiprocs=0: a count of 0 read as not given "
                       "(other schedulers take no 0 there; each gets its default of one)")
            procs = None
        if procs:
            r.tasks_per_node = int(procs)
            if ncpus and int(ncpus) % int(procs) == 0:
                r.cpus_per_task = int(ncpus) // int(procs)
            elif ncpus:
                res["ncpus"] = ncpus
        elif ncpus:
            r.tasks_per_node, r.cpus_per_task = 1, int(ncpus)
        if (g := res.pop("ngpus", None)) is not None:
            if not ascii_digits(g):
                raise bad(item, "bad ngpus", "a positive integer")
            r.gpus_per_node = int(g)
        if (m := res.pop("mem", None)) is not None:
            mb = parse_mem_mb(m, default_unit="b", whole=True, iec=False)
            if mb is None:
                raise bad(Item("-l", f"mem={m}", item.lineno, item.raw), "bad mem", _SIZE)
            if mb == 0:
                no_memory_asked(spec, item.lineno, f"mem={m}")
            else:
                r.memory_mb = mb
        for k, x in res.items():
            if k.lower() in PBS_GPU_MODEL_KEYS and x and r.gpu_type is None:
                # a site's GPU-model resource (`gpu_model=a100`): the GPU type elsewhere,
                # kept as written for PBS
                r.gpu_type = x
            unknown(spec, self.name, Item("-l", x or None, item.lineno, item.raw), "-l select:" + k)
        return True

    def _nodes(self, spec: JobSpec, item: Item, val: str, in_chunks: bool = False) -> bool:
        spec.metadata["pbs_flavor"] = "torque"
        parts = val.split(":")
        if not in_chunks and ("+" in val or not ascii_digits(parts[0])):  # chunks, or a host
            return self._chunks(spec, item, val, "nodes", self._nodes)
        r = spec.resources
        if not ascii_digits(parts[0]):
            parts[0] = "1"  # a named host is one node
        elif not int(parts[0]):  # qsub: at least one node
            raise bad(item, "bad nodes", "N[:ppn=P][:gpus=G][:property] with N of 1 or more")
        r.nodes = int(parts.pop(0))
        gpus = any(p.startswith("gpus=") for p in parts)
        for p in parts:
            k, eq, x = p.partition("=")
            if gpus and p in _TORQUE_GPU_MODES:  # the GPUs' compute mode, not a property
                unknown(spec, self.name, Item("-l", None, item.lineno, item.raw), "-l nodes:" + p)
            elif eq and k in ("ppn", "gpus"):
                if not ascii_digits(x):
                    raise bad(item, f"bad {k}", "a positive integer")
                if k == "ppn":
                    r.tasks_per_node = int(x)
                else:
                    r.gpus_per_node = int(x)
            elif not eq:
                spec.constraints.features.append(p)
            else:
                unknown(spec, self.name, Item("-l", x, item.lineno, item.raw), "-l nodes:" + k)
        return True

    def _chunks(self, spec: JobSpec, item: Item, val: str, key: str, parse_one) -> bool:
        """A request of several chunks (`select=1:ncpus=4+8:ncpus=32`, Torque's
        `nodes=2:ppn=4+node07:ppn=8`) as one shape no chunk outgrows: as many nodes as all
        the chunks together, each with the largest chunk's tasks, CPUs per task, GPUs and
        memory. Other schedulers get that superset (a warning says so); PBS gets the chunks
        as written while the resources are still that superset."""
        shapes = []
        for k, chunk in enumerate(val.split("+")):
            one = JobSpec()
            parse_one(one, Item(item.option, f"{key}={chunk}", item.lineno, item.raw), chunk,
                      in_chunks=True)
            if one.resources.nodes is None:
                raise bad(item, f"bad chunk {k + 1} ({chunk!r})",
                          "chunks joined by '+', each N:name=value[:...]")
            shapes.append(one)
            for said in one.metadata.get("parse_notes", []):  # a chunk's (`mem=0`) too
                if said not in spec.metadata.get("parse_notes", []):
                    note(spec, said)
            spec.constraints.features += [f for f in one.constraints.features
                                          if f not in spec.constraints.features]
            spec.unknown += one.unknown
        r = spec.resources
        comps = [o.resources for o in shapes]
        r.gpu_type = next((c.gpu_type for c in comps if c.gpu_type), r.gpu_type)
        if all(c.model_copy(update={"nodes": None}) == comps[0].model_copy(update={"nodes": None})
               for c in comps):  # one shape (hosts named one by one): its nodes summed
            for k in ("tasks_per_node", "cpus_per_task", "gpus_per_node", "memory_mb"):
                setattr(r, k, getattr(comps[0], k))
            r.nodes = sum(c.nodes or 1 for c in comps)
        else:  # shapes that differ: each a component, the resources one none outgrows
            set_components(spec, comps)
        spec.metadata[f"pbs_{key}_chunks"] = {"raw": val, "as": self._shape(r),
                                               "line": item.raw.strip()}
        hosts = [c.split(":")[0] for c in val.split("+") if not ascii_digits(c.split(":")[0])]
        if len(shapes) > 1 and not hosts and self._part_filled(shapes, r):
            spec.components = []  # exact: N tasks, at most M a node (-n N --ntasks-per-node=M)
            return True
        if spec.components:
            note(spec, f"line {item.lineno}: {key}={val} ({quantity(len(shapes), 'chunk')}) read "
                       f"as a job of {quantity(len(shapes), 'shape')}: "
                       f"{describe_totals(summed_totals(comps))} in all"
                 + (f"; hosts named here: {', '.join(hosts)} (each target says whether "
                    "it keeps them)" if hosts else ""))
        elif hosts:  # carried where a target keeps their meaning (node_lists), else dropped
            note(spec, f"line {item.lineno}: {key}={val}: hosts named here: {', '.join(hosts)} "
                       "(each target says whether it keeps them)")
        return True

    @staticmethod
    def _part_filled(shapes: list[JobSpec], r: Resources) -> bool:
        """Chunks alike but for their tasks, the last host part-filled (`select=1:ncpus=4:
        mpiprocs=4+1:ncpus=2:mpiprocs=2`, as Slurm places -n 6 --ntasks-per-node=4): the
        job's tasks are their sum, at most the largest chunk's on a node (set on `r`)."""
        res = [o.resources for o in shapes]
        if any(x.tasks_per_node is None for x in res) or any(
                len({getattr(x, a) for x in res}) > 1
                for a in ("cpus_per_task", "memory_mb", "gpus_per_node", "gpu_type")):
            return False
        total = sum((x.nodes or 1) * (x.tasks_per_node or 1) for x in res)
        if r.tasks_per_node is None or r.nodes != -(-total // r.tasks_per_node):
            return False
        r.tasks = total
        return True

    @staticmethod
    def _shape(r) -> list:
        return [r.nodes, r.tasks_per_node, r.cpus_per_task, r.gpus_per_node, r.memory_mb]

    @classmethod
    def _kept_chunks(cls, spec: JobSpec, key: str) -> str | None:
        """The chunks a PBS script asked for as written, while its resources are still the
        superset parsed from them (a changed request is rendered from the resources)."""
        kept = spec.metadata.get(f"pbs_{key}_chunks")
        if spec.source_dialect == "pbs" and isinstance(kept, dict) \
                and kept.get("as") == cls._shape(spec.resources):
            return f"{key}={kept['raw']}"
        return None

    def chunk_shapes(self, spec: JobSpec) -> tuple[list[tuple[str, JobSpec]], str] | None:
        """The chunks a PBS site will get as written (`select=1:ncpus=4+2:ncpus=1:ngpus=1`),
        each as its text and a spec of its own (`resources.nodes` its count), and how they
        may share
        hosts: "free" (PBS Pro's default: chunks fill hosts as their resources allow),
        "scatter" (each on a host of its own: `place=scatter`, Torque's `nodes=`) or "pack"
        (all on one host); None when the spec holds no chunks, or they are no longer
        what its resources say."""
        for key in ("select", "nodes"):
            raw = (self._kept_chunks(spec, key) or "").partition("=")[2]
            if "+" not in raw:
                continue
            shapes = []
            for chunk in raw.split("+"):
                one = JobSpec()
                parse = self._select if key == "select" else self._nodes
                parse(one, Item("-l", f"{key}={chunk}", 0, ""), chunk, in_chunks=True)
                one.constraints = spec.constraints.model_copy(deep=True)
                one.metadata = dict(spec.metadata)
                one.unknown = list(spec.unknown)
                shapes.append((chunk, one))
            place = {d.option.split(":", 1)[1] for d in spec.unknown
                     if d.dialect == self.name and d.option.startswith("-l place:")}
            how = "scatter" if key == "nodes" or place & {"scatter", "vscatter"} else \
                "pack" if "pack" in place else "free"
            return shapes, how
        if spec.source_dialect != "pbs" and live_components(spec):
            # another scheduler's job of several shapes (a Slurm hetjob): the chunks its
            # rendering here writes, one a component, read back
            try:
                back = self.parse_script(self.render_script(spec).script)
            except BadInput:
                return None  # its translation is refused: placed as its superset shape
            return self.chunk_shapes(back) if back.source_dialect == "pbs" else None
        r = spec.resources
        if spec.source_dialect == "pbs" and spec.metadata.get("pbs_flavor") == "pro" \
                and (r.nodes or 1) > 1 and not r.tasks:
            # N chunks of one shape (`select=4:ncpus=8`): they too share hosts as `place`
            # says, free by default, where their nodes count is not a count of hosts
            place = {d.option.split(":", 1)[1] for d in spec.unknown
                     if d.dialect == self.name and d.option.startswith("-l place:")}
            how = "scatter" if place & {"scatter", "vscatter"} else \
                "pack" if "pack" in place else "free"
            ncpus = (r.tasks_per_node or 1) * (r.cpus_per_task or 1)
            text = f"{r.nodes}:ncpus={ncpus}" + (f":ngpus={r.gpus_per_node}"
                                                 if r.gpus_per_node else "") \
                + (f":mem={r.memory_mb}mb" if r.memory_mb else "")
            return [(text, spec.model_copy(deep=True))], how
        return None

    # ------------------------------------------------------------------ render
    @staticmethod
    def job_name(name: str) -> str:
        """The name as the scheduler keeps it (the rendered `-N`). qsub -N (Torque's and
        PBS's manual) takes printable characters without white space, the first one
        alphabetic: a blank becomes '_', a name starting otherwise (a digit, '_', '.', or
        '-', which qsub would also read as an option) gets a 'j' first."""
        fixed = re.sub(r"\s", "_", name)
        first = fixed[:1]
        return fixed if not fixed or (first.isascii() and first.isalpha()) else "j" + fixed

    def render_script(self, spec: JobSpec) -> Rendered:  # noqa: C901
        spec, waits = without_submit_waits(spec, self.name, self.submit_wait)
        spec, socket_gpus = socket_gpus_per_node(spec, self.name)
        warnings = common_render_warnings(spec, self.name) + waits + socket_gpus
        # a Torque site's jobs in Torque's words (`nodes=`, `-t`), whatever the script's
        # dialect; elsewhere a PBS script keeps the flavor it was written in
        torque = spec.metadata.get(TARGET_FLAVOR) == "torque" or (
            spec.metadata.get("pbs_flavor") == "torque" and spec.source_dialect == "pbs")
        flavor = "Torque" if torque else "PBS Pro"
        lines: list[str] = []

        def add(opt: str, val: object = None) -> None:
            lines.append(f"#PBS {opt}" + ("" if val is None else f" {quote(str(val))}"))

        r, c = spec.resources, spec.constraints
        own = [d for d in spec.unknown if d.dialect == self.name]
        extra = {p: [d for d in own if d.option.startswith(p)] for p in _SUB}
        if spec.name:
            name = self.job_name(spec.name)  # qsub refuses some, or reads `-N -x` as an option
            warnings += job_name_warning(spec.name, name, "qsub takes a name without blanks "
                                         "that starts with a letter")
            add("-N", name)
        if spec.queue:
            kept = spec.metadata.get("pbs_queue_server")
            same = spec.source_dialect == "pbs" and isinstance(kept, dict) \
                and kept.get("as") == spec.queue
            add("-q", kept["raw"] if same else one_queue(spec, "PBS", warnings))
        if spec.account:
            add("-A", spec.account)
        if spec.comment:
            warnings.append(f"dropped: comment {spec.comment!r} (qsub cannot set one)")
        res = self._chunk(spec, torque, extra, warnings)
        times, times_kept = ([], []) if torque else self._shrink_to_fit(spec, warnings)
        res += times
        if r.walltime_s is not None and not times:
            res.append(f"walltime={fmt_hms(r.walltime_s)}")
        if cpu := cpu_time_limit(spec):
            res.append(f"cput={fmt_hms(cpu)}")
        place = [d.option.split(":", 1)[1] for d in extra["-l place:"]]
        if torque and place:  # PBS Pro's placement: Torque has none (nodes= are hosts)
            warnings.append(f"dropped: place={':'.join(place)} (Torque has no place; "
                            "nodes=N asks N hosts"
                            + (", and -n asks the nodes whole" if c.exclusive else "") + ")")
            place = []
        if not torque and spec.source_dialect != self.name and _node_count(r) > 1 \
                and not {"free", "pack", "scatter", "vscatter"} & set(place):
            # another scheduler's node count means that many hosts; PBS Pro's default
            # (place=free) may put several chunks on one host
            place.insert(0, "scatter")
        if c.exclusive and not torque:  # a PBS job's exclhost (whole host) kept as such
            place.append("exclhost" if spec.metadata.get(_EXCLHOST)
                         and spec.source_dialect == self.name else "excl")
        written = next((d.value for d in extra["-l place:"] if d.value), "") or ""
        if sorted(as_written := written.removeprefix("place=").split(":")) == sorted(place):
            place = as_written  # the parts in the order the script wrote them
        if place:
            res.append("place=" + ":".join(place))
        if spec.qos and torque:
            res.append(f"qos={spec.qos}")
        elif spec.qos:
            warnings.append(f"dropped: QOS {spec.qos} (no {flavor} equivalent)")
        for item in res:
            add("-l", item)
        if c.exclusive and torque:
            add("-n")
        if spec.reservation:
            warnings.append(f"dropped: reservation {spec.reservation} (in PBS submit to the "
                            "reservation's queue with -q)")
        if spec.array:
            expr = spec.array.expression
            if not torque and "," in expr:
                indexes, pct, limit = expr.partition("%")
                one, left_out = pro_array_range(indexes)
                if left_out:
                    warnings.append(f"approximated: array {expr} as {one}{pct}{limit} (PBS "
                                    f"Pro -J takes one X-Y[:Z] range; indexes {left_out} "
                                    "left out)")
                expr = one + pct + limit
            if not torque:
                expr = pro_one_index_range(expr)
                one_index = spec.metadata.get(_ONE_INDEX)
                if one_index and one_index[0] == spec.array.expression:
                    warnings.append(one_index[1])  # the submit says it too
            # X-Y[:Z]%N: at most N subjobs at once (PBS Pro 2020.1+, max_run_subjobs)
            add("-t" if torque else "-J", expr)
        carried = times_kept  # an LSF day of the month without its month: PBS's DDhhmm
        if spec.begin and (at := render_begin(spec.begin, self.name, warnings)):
            add("-a", at)
        elif day := render_day_of_month(spec.unknown, spec.source_dialect, self.name,
                                        warnings):
            add("-a", day[0])
            carried.append((day[1].option, day[1].value))
        # a kept `-W depend=` (beforeok, on:N) of a job whose others are read too: one
        # depend= again
        kept_depend = next((d for d in spec.unknown if d.dialect == self.name
                            and d.option == "-W" and (d.value or "").startswith("depend=")),
                           None)
        depend_joined: list[Directive] = []
        if deps := whole_job_dependencies(dependencies_for(spec, self.name, warnings),
                                          flavor, warnings):
            terms = _depend_terms(deps, torque)
            if kept_depend is not None:
                terms.append((kept_depend.value or "")[len("depend="):])
                depend_joined.append(kept_depend)
            add("-W", "depend=" + ",".join(terms))
        for opt, val in (("-o", spec.stdout), ("-e", spec.stderr)):
            if val:
                val = file_for_directory(val, "stdout" if opt == "-o" else "stderr",
                                         spec.source_dialect, self.name, warnings)
                add(opt, map_out_pattern(val, "torque" if torque else self.name, warnings))
        if spec.join_output and not spec.stderr:
            add("-j", "oe")
        warnings += output_mode_warning(spec, flavor, "truncate")
        if spec.hold:
            add("-h")
        if spec.requeue is not None:
            add("-r", "y" if spec.requeue else "n")
        if spec.mail_user:
            add("-M", spec.mail_user)
        events = spec.mail_events
        others = {e for e in events if e in _MAIL_BACK} - {"array_tasks"}  # a, b, e
        if "array_tasks" in events and (torque or not spec.array or not others):
            # PBS Pro's qsub takes j for an array's subjobs, beside a, b or e only
            why = "Torque has no -m j" if torque else "the job is no array" \
                if not spec.array else "no a, b or e mail is asked"
            events = [e for e in events if e != "array_tasks"]
            warnings.append("dropped: mail event array_tasks (PBS Pro's -m j is for an array's "
                            f"subjobs, beside a, b or e: {why})")
        warnings += mail_warning(events, set(_MAIL_BACK), self.name)
        # in the events' order (`-m bea` back as written; qsub reads the letters as a set)
        letters = "".join(dict.fromkeys(x for e in events for x in _MAIL_BACK.get(e, "")))
        if letters:
            add("-m", letters)
        elif spec.metadata.get(NO_MAIL) or spec.mail_events \
                or spec.metadata.get(SGE_MAIL_SUSPEND):
            # no mail at all, or only on events PBS has no letter for (said dropped): else
            # qsub mails on abort (-m a, its default), which the job never asked
            add("-m", "n")
        add_qsub_environment(spec, add)
        preamble = neutral_preamble(spec, variables_listed=True)
        if spec.working_directory and torque:
            add("-d", spec.working_directory)
        elif spec.working_directory:
            preamble.insert(0, f"cd {sh_quote(spec.working_directory)}")
            warnings.append(f"approximated: working directory {spec.working_directory} "
                            "(PBS Pro has no -d; a cd line was added before the body)")
        enter, entered = start_directory(spec, self.name, preamble)
        warnings += entered
        warnings += launcher_only_warnings(r, flavor)
        lines += own_unknown_lines(spec, self.name, self.sentinel, _count,
                                   skip=lambda d: d.option.startswith(_SUB)
                                   or any(d is x for x in depend_joined))
        if not torque and (project := kept_project(spec, self.name, warnings)):
            add("-P", project[0])  # a Grid Engine project (Torque's -P is a user)
            carried.append((project[1].option, project[1].value))
        if priority := kept_priority(spec, self.name, warnings):  # qsub -p N, both
            if priority[0] is not None:
                add("-p", priority[0])
            carried.append((priority[1].option, priority[1].value))
        if spec.source_dialect != self.name and (ws := warn_signal(spec)):
            warnings.append(dropped(ws, self.name))  # said with why, not as unknown
            carried += signal_carried(ws)
        def add_hosts(opt: str, val: str) -> str | None:
            return _chunks_on_hosts(lines, val.split(","), torque)

        comps = live_components(spec)
        if per_comp := component_hosts(spec, len(comps), self.name) if comps else None:
            hosts_read = [(d.option, d.value) for d in per_comp[1].read_from]
            hosts_said = []  # said where each chunk got its host (_component_chunks)
        else:
            hosts_said, hosts_read = render_named_hosts(spec, self.name, add_hosts)
        warnings += hosts_said + foreign_warnings(spec, self.name, skip=carried + hosts_read)
        return Rendered(assemble(spec, lines, preamble, enter=enter), warnings)

    @staticmethod
    def _shrink_to_fit(spec: JobSpec, warnings: list[str]
                       ) -> tuple[list[str], list[tuple[str, str | None]]]:
        """sbatch's --time-min (beside --time, or alone: up to the partition's limit) lets
        Slurm cut the job's time down to it so it starts sooner: PBS Pro's shrink-to-fit
        job, `-l min_walltime` (and `-l max_walltime` for --time; PBS takes no walltime
        beside them). The `-l` values, and the Slurm option carried."""
        kept = [d for d in spec.unknown if d.dialect == "slurm" and d.option == "--time-min"]
        least = parse_slurm_time(kept[-1].value or "") if kept else None  # the last holds
        most = spec.resources.walltime_s
        if spec.source_dialect != "slurm" or not least or (most is not None and least > most):
            return [], []
        times = [f"min_walltime={fmt_hms(least)}"]
        if most is not None:
            times.append(f"max_walltime={fmt_hms(most)}")
        warnings.append(f"kept: {kept[-1].raw.strip()} as "
                        + ", ".join(f"-l {t}" for t in times) + " (a shrink-to-fit job: PBS "
                        "Pro sets its walltime "
                        + ("between its --time-min and its --time" if most is not None else
                           "from its --time-min up to the queue's limit") + " as it starts)")
        return times, [(d.option, d.value) for d in kept]

    @classmethod
    def _chunk(cls, spec: JobSpec, torque: bool, extra: dict, warnings: list[str]
               ) -> list[str]:
        r, c = spec.resources, spec.constraints
        tpn = r.tasks_per_node
        nodes = r.nodes
        if nodes and r.tasks and not tpn and r.tasks % nodes == 0:
            tpn = r.tasks // nodes
        if not nodes and r.tasks and tpn:
            nodes = -(-r.tasks // tpn)
        elif not nodes and tpn:  # tasks per node alone: on one node (Slurm's default)
            nodes = 1
        # tasks that leave the last node part-filled (Slurm's -n 6 --ntasks-per-node=4, or
        # -N 2 -n 5: 4+2, 3+2 as Slurm places them): full chunks and one with the rest
        rest = 0
        if r.tasks and nodes and (tpn or r.tasks % nodes):
            per = tpn or -(-r.tasks // nodes)
            full, rest = divmod(r.tasks, per)
            if rest and full + 1 == nodes:
                tpn = per
            else:
                rest = 0
        cpt = r.cpus_per_task or 1
        gpn = r.gpus_per_node
        if gpn is None and r.gpus_per_task:
            gpn = r.gpus_per_task * (tpn or 1)
            if not tpn:
                warnings.append(f"approximated: {quantity(r.gpus_per_task, 'GPU')} per task as "
                                "GPUs per chunk")
        out: list[str] = []
        if (kept := cls._kept_chunks(spec, "nodes" if torque else "select")) is not None:
            out.append(kept)
            # -l pmem: the job's one shape's, or every chunk's alike
            each = {x.memory_per_cpu_mb for x in spec.components}
            pmem = r.memory_per_cpu_mb if torque else None
            if pmem is None and len(each) == 1 and None not in each:
                pmem = each.pop()
            if pmem:
                out.append(f"pmem={fmt_mem(pmem, 'pbs')}")
            return out
        if (mpp := cls._mpp_as_written(spec)) is not None:
            return mpp
        if comps := live_components(spec):  # a job of several shapes: a chunk for each
            return cls._component_chunks(spec, comps, torque, extra, warnings)

        def gpus_for(tasks_here: int | None) -> int | None:  # a chunk's GPUs
            if r.gpus_per_node is None and r.gpus_per_task and tasks_here:
                return r.gpus_per_task * tasks_here
            return gpn

        if torque:
            if r.gpu_type and (gpn or r.gpus_per_task):
                warnings.append(f"dropped: GPU type {r.gpu_type} (Torque's gpus= takes a "
                                "count only; a site may name the model as a node property)")
            if nodes or tpn or gpn or (cpt > 1 and not r.tasks):
                props = "".join(f":{f}" for f in c.features)
                props += "".join(f":{d.option.split(':', 1)[1]}"
                                 + ("" if d.value is None else f"={d.value}")
                                 for d in extra["-l nodes:"])

                def torque_chunk(count_: int, tasks_here: int | None) -> str:
                    g = gpus_for(tasks_here)
                    # one task a node where none is given (Slurm's -N 2 -c 8): its CPUs
                    ppn = tasks_here * cpt if tasks_here else cpt if cpt > 1 else None
                    return (f"{count_}" + (f":ppn={ppn}" if ppn else "")
                            + (f":gpus={g}" if g else "") + props)
                spec_ = "nodes=" + torque_chunk((nodes or 1) - (1 if rest else 0), tpn)
                spec_ += f"+{torque_chunk(1, rest)}" if rest else ""
                out.append(spec_)
            elif r.tasks:
                out.append(f"procs={r.tasks * cpt}")  # Torque counts processors
            if r.memory_mb:
                out.append(f"mem={fmt_mem(r.memory_mb * (nodes or 1), 'pbs')}")
            if r.memory_per_cpu_mb:
                out.append(f"pmem={fmt_mem(r.memory_per_cpu_mb, 'pbs')}")
            return out
        if spec.source_dialect == "pbs" and spec.metadata.get("pbs_jobwide") \
                and nodes is None and tpn is None and not r.tasks:
            # job-wide resources as written (`-l ncpus=96 -l mem=380GB`): the server (or
            # a site's hook, as NCI Gadi's spreads ncpus over whole nodes) shapes them
            out += [f"ncpus={r.cpus_per_task}"] if r.cpus_per_task else []
            out += [f"ngpus={gpn}"] if gpn else []
            out += [f"mem={fmt_mem(r.memory_mb, 'pbs')}"] if r.memory_mb else []
            return out
        # the job's GPUs over tasks on nodes of the scheduler's choice (Grid Engine's -l gpu
        # beside an MPI PE): spread over the one-task chunks, not each chunk's
        job_gpus = gpn if not torque and gpus_of_job_over_unknown_nodes(spec) else None
        if job_gpus:
            gpn = None
        count, ncpus, procs = nodes, None, None
        if nodes:
            ncpus, procs = ((tpn * cpt, tpn) if tpn else (r.cpus_per_task, None))
        elif r.tasks:
            count, ncpus, procs = r.tasks, cpt, 1
        elif r.cpus_per_task or gpn or r.memory_mb or r.memory_per_cpu_mb:
            count, ncpus = 1, r.cpus_per_task  # a one-CPU job's memory: one chunk holds it
        if count is None:
            return out
        chunk = f"select={count - (1 if rest else 0)}" + (f":ncpus={ncpus}" if ncpus else "")
        chunk += f":mpiprocs={procs}" if procs else ""
        chunk += f":ngpus={gpn}" if gpn else ""
        mem = r.memory_mb
        if mem and not nodes and r.tasks and r.tasks > 1:
            # a node's memory and no node count (Slurm's -n 4 --mem=8G): the job's memory,
            # as on one node, shared by its one-task chunks (rounded down: never more)
            mem = max(1, r.memory_mb // r.tasks)
            warnings.append(f"approximated: memory {r.memory_mb}MB per node as {mem}MB per "
                            "chunk (one chunk per task: no node count)")
        if mem is None and r.memory_per_cpu_mb:
            mem = r.memory_per_cpu_mb * (ncpus or 1)
            warnings.append(f"approximated: memory per CPU {r.memory_per_cpu_mb}MB as {mem}MB "
                            "per chunk")
        chunk += f":mem={fmt_mem(mem, 'pbs')}" if mem else ""
        kept_res = "".join(f":{d.option.split(':', 1)[1]}" + (f"={d.value}" if d.value else "")
                           for d in extra["-l select:"])
        chunk += kept_res
        if rest:  # the part-filled node: the rest of the tasks, the same per node otherwise
            g = gpus_for(rest)
            last_mem = r.memory_per_cpu_mb * rest * cpt if r.memory_mb is None \
                and r.memory_per_cpu_mb else mem
            chunk += (f"+1:ncpus={rest * cpt}:mpiprocs={rest}" + (f":ngpus={g}" if g else "")
                      + (f":mem={fmt_mem(last_mem, 'pbs')}" if last_mem else "") + kept_res)
        kept_model = spec.source_dialect == "pbs" and any(
            pbs_gpu_model_key(d) for d in spec.unknown)
        if r.gpu_type and not kept_model:
            warnings.append(f"dropped: GPU type {r.gpu_type} (PBS Pro has no standard GPU "
                            "model resource)")
        for f in c.features:
            warnings.append(f"dropped: node feature {f} (PBS Pro has no generic node features; "
                            "use a site resource in select)")
        if job_gpus and count:
            chunk = cls._spread_job_gpus(chunk, count, job_gpus, warnings)
        out.append(chunk)
        return out

    @staticmethod
    def _spread_job_gpus(chunk: str, count: int, gpus: int, warnings: list[str]) -> str:
        """`select=T:BODY` of T one-task chunks holding the job's `gpus` in all: as even a
        share on each chunk as whole GPUs allow (`select=2:BODY:ngpus=1+6:BODY` for 2 GPUs
        over 8 tasks); PBS Pro places the chunks freely, as Grid Engine's PE its slots."""
        body = chunk.removeprefix("select=").partition(":")[2]
        each, more = divmod(gpus, count)
        parts = [f"{more}:{body}:ngpus={each + 1}".replace("::", ":")] if more else []
        if count - more:
            parts.append(f"{count - more}:{body}" + (f":ngpus={each}" if each else ""))
        shares = ([f"{more} with ngpus={each + 1}"] if more else []) + \
            ([f"{count - more} with " + (f"ngpus={each}" if each else "none")]
             if count - more else [])
        warnings.append(f"approximated: {quantity(gpus, 'GPU')} for the whole job over its "
                        f"{quantity(count, 'one-task chunk')}: {', '.join(shares)} (PBS Pro asks "
                        f"ngpus per chunk)")
        return "select=" + "+".join(p.replace("::", ":").rstrip(":") for p in parts)


    @classmethod
    def _component_chunks(cls, spec: JobSpec, comps: list[Resources], torque: bool,
                          extra: dict, warnings: list[str]) -> list[str]:
        """Each component's chunks, joined by '+' (a Torque job's memory is one total)."""
        chunks: list[str] = []
        per_comp = component_hosts(spec, len(comps), "pbs")
        for i, comp in enumerate(comps):
            one = spec.model_copy(update={"components": [], "resources": spec.resources
                                          .model_copy(update=component_sizes(comp))})
            said: list[str] = []
            got = cls._chunk(one, torque, extra, said)
            warnings += [w for w in said if w not in warnings]
            mine = [x.partition("=")[2] for x in got if x.startswith(("select=", "nodes="))]
            # a component that asks for nothing: the scheduler's one task on one CPU
            mine = mine or ["1:ppn=1" if torque else "1:ncpus=1"]
            if per_comp and per_comp[0][i]:  # its own hosts: a chunk on each
                mine = _on_hosts(mine, per_comp[0][i], torque, i, warnings)
            chunks += mine
        out = [("nodes=" if torque else "select=") + "+".join(chunks)]
        mem = summed_totals(comps)["memory_mb"]
        if torque and mem:
            out.append(f"mem={fmt_mem(mem, 'pbs')}")
        return out


pbs_script = PbsScript()


def pro_array_range(indexes: str) -> tuple[str, str | None]:
    """A list of array indexes (`1,3,5-9`) as PBS Pro's one range X-Y[:Z] (Y > X): exact
    when the indexes step evenly (`1,3,5,7` is 1-7:2), else the list's largest part (or
    its first two indexes); with the indexes left out, None when none is."""
    parts = indexes.split(",")
    values: list[int] = []
    if (count_array_tasks(indexes) or 0) <= 100_000:  # else the largest part, unexpanded
        for part in parts:
            lo, _, rest = part.partition("-")
            hi, _, step = rest.partition(":")
            values += range(int(lo), int(hi or lo) + 1, int(step or 1))
    values = sorted(set(values))
    gaps = {b - a for a, b in zip(values, values[1:], strict=False)}
    if len(values) >= 2 and len(gaps) == 1:
        step = values[1] - values[0]
        return f"{values[0]}-{values[-1]}" + (f":{step}" if step > 1 else ""), None
    best = max(parts, key=lambda p: count_array_tasks(p) or 0)
    if (count_array_tasks(best) or 0) >= 2:
        one = best
    elif len(values) >= 2:
        one = f"{values[0]}-{values[1]}" + (f":{values[1] - values[0]}"
                                            if values[1] - values[0] > 1 else "")
    else:
        return pro_one_index_range(parts[0]), None if len(values) == 1 else indexes
    kept = set(_indexes_of(one))
    left = [v for v in values if v not in kept] if values else None
    if not left:
        return one, "the others"
    return one, (",".join(map(str, left)) if len(left) <= 10
                 else f"{len(left)} of them, {left[0]} to {left[-1]}")


def pro_one_index_range(expression: str) -> str:
    """A one-index array (`5`, `5-5`) as PBS Pro's -J takes it: qsub refuses a range whose
    end is not past its start ("illegal -J value"), so index X is written X-(X+1):2, a
    range holding X alone. Any other expression, and a `%N` limit, are kept."""
    indexes, pct, limit = expression.partition("%")
    lo, _, rest = indexes.partition("-")
    hi = rest.partition(":")[0]
    if "," in indexes or not ascii_digits(lo) or (ascii_digits(hi) and int(hi) > int(lo)):
        return expression
    return f"{lo}-{int(lo) + 1}:2{pct}{limit}"


def _first_index(expression: str) -> str:
    return expression.partition("%")[0].partition("-")[0].partition(":")[0]


def _indexes_of(one: str) -> range:
    lo, _, rest = one.partition("-")
    hi, _, step = rest.partition(":")
    return range(int(lo), int(hi or lo) + 1, int(step or 1))


def _node_count(r: Resources) -> int:
    """The hosts a job asks for: its node count, or its tasks over its tasks per node."""
    if r.nodes:
        return r.nodes
    return -(-r.tasks // r.tasks_per_node) if r.tasks and r.tasks_per_node else 1


def _on_hosts(terms: list[str], hostlist: str, torque: bool, index: int,
              warnings: list[str]) -> list[str]:
    """One component's chunk terms (`2:ncpus=4`) put on the hosts its Slurm --nodelist
    names, one chunk a host (`1:ncpus=4:host=a+1:ncpus=4:host=b`), said; as they were,
    said dropped, when the hosts are not one a node."""
    hosts = expand_hostlist(hostlist)
    count, _, body = terms[0].partition(":")
    if len(terms) != 1 or count != str(len(hosts)) or any("[" in h for h in hosts):
        warnings.append(f"dropped: --nodelist={hostlist} of hetjob component {index} (its "
                        f"{terms[0]} is not one node on each host named: no pbs form)")
        return terms
    warnings.append(f"kept: --nodelist={hostlist} of hetjob component {index} as "
                    f"{'its chunks on' if len(hosts) > 1 else 'its chunk on'} "
                    f"{', '.join(hosts)} ({'a chunk per host' if torque else 'host='})")
    return [f"{h}:{body}" if torque else f"1:{body}:host={h}" for h in hosts]


def _chunks_on_hosts(lines: list[str], hosts: list[str], torque: bool) -> str | None:
    """Put each chunk of the job's `select=N:BODY` (Torque: `nodes=N:BODY`) on one of the N
    `hosts` (`select=1:BODY:host=h1+1:BODY:host=h2`, `nodes=h1:BODY+h2:BODY`), in `lines`;
    None once done, else why not (chunks of several shapes: which goes where is unknown)."""
    key = "nodes=" if torque else "select="
    for i, line in enumerate(lines):
        if not line.startswith(f"#PBS -l {key}"):
            continue
        count, _, body = line.removeprefix(f"#PBS -l {key}").partition(":")
        if "+" in body or count != str(len(hosts)):
            return f"the chunks differ ({key}{count}:{body}): which one runs on which host " \
                   "is not known"
        each = [f"{h}:{body}" if torque else f"1:{body}:host={h}" for h in hosts]
        lines[i] = f"#PBS -l {key}" + "+".join(p.rstrip(":") for p in each)
        return None
    return f"no {key} line to name hosts in"
