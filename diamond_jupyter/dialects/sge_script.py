"""Grid Engine batch scripts (#$, qsub of Son of Grid Engine 8.1 / SGE 6.2 / UGE):
parse into JobSpec and render from it.

Grid Engine counts slots, not nodes: a parallel job names a parallel environment and a slot
count (`-pe NAME N`); how slots spread over hosts is the PE's allocation rule, set by the
admin. A PE whose name says shared memory (smp, shm, threads, openmp, ...) is read as one
task of N CPUs on one host; any other as N tasks. Rendering uses the PE the spec came
with, else `smp` for a multi-CPU task and `mpi` for several tasks (`SMP_PE`, `MPI_PE`).
`-l h_vmem` is per slot (memory per CPU); `-l gpu` is a per-job consumable.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..digits import ascii_digits
from ..model import (
    ARCH_ALIASES,
    CPU_TIME,
    GPUS_PER_JOB,
    TASK_RANGE,
    ArraySpec,
    BadInput,
    Dependency,
    Directive,
    JobSpec,
)
from ..needs import kept_slurm_gpu_total
from ..wording import quantity
from .base import Rendered
from .begin_time import neutral, render_begin, sge_parts
from .node_lists import render_named_hosts
from .pbs_script import pro_array_range
from .scripts_common import (
    NO_MAIL,
    SGE_MAIL_SUSPEND,
    Item,
    SubmitWait,
    add_qsub_environment,
    array_from_one_refused,
    assemble,
    bad,
    begin_parse,
    carried_task_range,
    common_render_warnings,
    cpu_time_limit,
    dash_value_refused,
    dependencies_for,
    file_for_directory,
    fmt_hms,
    foreign_warnings,
    has_index_zero,
    is_placeholder,
    job_name_warning,
    kept_priority,
    kept_project,
    kept_stdin,
    launcher_only_warnings,
    mail_warning,
    map_out_pattern,
    mapped_or_placeholder,
    neutral_preamble,
    no_gpus_for_zero,
    no_memory_asked,
    note,
    one_shape,
    output_mode_warning,
    own_unknown_lines,
    parse_mem_mb,
    placeholder_note,
    quote,
    read_array,
    runs_where_submitted,
    set_output_path,
    sge_time,
    sh_quote,
    socket_gpus_per_node,
    take_variables,
    tokenize,
    unknown,
    without_submit_waits,
    zero_time_limit,
)
from .sge_commands import amount
from .warn_signal import carried as signal_carried
from .warn_signal import dropped, warn_signal

_HOST_PREFIX = re.compile(r"^[\w.\-]*:(?=[/$~.\w])")  # -o/-e [HOST:]PATH

SMP_PE = "smp"
MPI_PE = "mpi"
_SHARED_PE = re.compile(r"^(smp|shm|shmem|shared|threads?|threaded|openmp|omp|multithread\w*|"
                        r"make|pe_slots|serial|single|local)(?:[._-]?pe)?$", re.I)  # smp.pe
# qsub options and how many values each takes (0: a flag)
_ARITY = {
    "-N": 1, "-pe": 2, "-l": 1, "-q": 1, "-o": 1, "-e": 1, "-j": 1, "-t": 1, "-tc": 1,
    "-hold_jid": 1, "-hold_jid_ad": 1, "-cwd": 0, "-wd": 1, "-V": 0, "-v": 1, "-M": 1,
    "-m": 1, "-A": 1, "-P": 1, "-S": 1, "-h": 0, "-ar": 1, "-a": 1, "-b": 1, "-binding": 1,
    "-c": 1, "-ckpt": 1, "-clear": 0, "-dc": 1, "-ac": 1, "-sc": 1, "-dl": 1, "-i": 1,
    "-js": 1, "-jsv": 1, "-masterq": 1, "-notify": 0, "-now": 1, "-p": 1, "-r": 1, "-R": 1,
    "-shell": 1, "-soft": 0, "-hard": 0, "-sync": 1, "-w": 1, "-pty": 1, "-C": 1,
}
_SENTINEL = re.compile(r"^#\$(?=\s|-|$)\s*(.*)$")
_BINDING_INSTANCES = ("set", "env", "pe")  # -binding's optional first word (qsub(1))
# the resource limits queue_conf(5) names, each of which may be INFINITY
_LIMITS = ("h_rt", "s_rt", "h_cpu", "s_cpu", "h_vmem", "s_vmem", "h_data", "s_data",
           "h_stack", "s_stack", "h_core", "s_core", "h_rss", "s_rss", "h_fsize", "s_fsize")
_SGE_TIME = ("seconds, or H:M:S with all three fields (a zero field may be left empty, as in "
             "1::30), e.g. 5400 or 01:30:00; a leading 0 makes a number octal")
# the complexes read as the job's memory per slot (complex(5): h_vmem, h_data and mem_free
# are MEMORY, consumable per slot by default; Univa/Altair Grid Engine's built-in m_mem_free
# is a host consumable of type YES, per slot), the first a job asks of them in this order
# (the limits before the amount a host must have free); the others stay as written
MEMORY_COMPLEXES = ("h_vmem", "h_data", "mem_free", "m_mem_free")
_MAIL = {"b": "begin", "e": "end", "a": "fail"}
_MAIL_BACK = {"begin": "b", "end": "e", "fail": "a", "all": "bea"}
_ARCH = {name: arch for name, arch in ARCH_ALIASES.items() if name.startswith("lx-")}
_ARCH_BACK = {"x86_64": "lx-amd64", "aarch64": "lx-arm64", "ppc64le": "lx-ppc64le",
              "ppc64": "lx-ppc64", "riscv64": "lx-riscv64", "i686": "lx-x86", "ia64": "lx-ia64"}
_TRUE = {"true", "TRUE", "True", "1", "yes", "y"}
_ARRAY = re.compile(r"^([0-9]+)(?:-([0-9]+)(?::([0-9]+))?)?$")
_LATE = "read by qsub wherever it stands"
_SUB = "-l "  # unknown -l resources, folded back into the -l list on an sge round trip
_SOFTENED = ("-l", "-q", "-masterq")  # what -soft makes a preference (qsub(1))


def sge_arch(architecture: str | None) -> str | None:
    """The `-l arch` value a rendered script asks for an architecture (x86_64: lx-amd64);
    None where it asks none."""
    return _ARCH_BACK.get(architecture or "")


_QUOTES = str.maketrans("", "", "\"'")


def qsub_words(payload: str) -> list[str]:
    """A #$ line's words as qsub reads them (parse_script_file): split at blanks and tabs,
    every ' and " of each word deleted, a backslash kept as written. A word starting with #
    ends the line (diamond's reading: what qsub does with it is undocumented), and a
    <placeholder with blanks> stays one word (diamond's template, never submitted)."""
    words: list[str] = []
    for word in re.findall(r"<[^>]*>\S*|[^ \t]+", payload):
        if word.startswith("#"):
            break
        words.append(word if word.startswith("<") else word.translate(_QUOTES))
    return words


def _items(payload: str, lineno: int, raw: str) -> list[Item]:
    """qsub's options on one directive line; `-l a=1,b=2` gives one item per resource."""
    tokens = qsub_words(payload)
    out: list[Item] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        n = _ARITY.get(tok)
        if n is None:  # an option this table lacks, or a stray word
            value = None
            if tok.startswith("-") and i < len(tokens) and not tokens[i].startswith("-"):
                value, i = tokens[i], i + 1
            out.append(Item(tok, value, lineno, raw, known=False))
            continue
        if i + n > len(tokens):
            raise BadInput(f"line {lineno}: option {tok} needs "
                           f"{quantity(n, 'value')}: {raw.strip()}")
        if tok == "-binding" and tokens[i:i + 1] and tokens[i] in _BINDING_INSTANCES \
                and i + 1 < len(tokens):
            n = 2  # -binding [set|env|pe] strategy
        value = " ".join(tokens[i:i + n]) if n else None
        i += n
        if tok == "-l" and value:
            out += [Item("-l", part, lineno, raw) for part in value.split(",") if part]
        else:
            out.append(Item(tok, value, lineno, raw))
    return out


def _count(raw: str) -> int:
    m = _SENTINEL.match(raw)
    try:
        return len(_items(m.group(1), 0, raw)) if m else 0
    except BadInput:
        return 0


def is_shared_pe(name: str) -> bool:
    return bool(_SHARED_PE.match(name))


def submit_wait(d: Directive) -> SubmitWait | None:
    """qsub's options that make it wait: `-sync y` (qsub returns when the job ends, with
    its exit code); `-sync n` waits for nothing."""
    if d.option == "-sync" and (d.value or "").lower() not in ("n", "no"):
        return SubmitWait(False, f"-sync {d.value} makes qsub wait for the job to end")
    return None


class SgeScript:
    submit_wait = staticmethod(submit_wait)
    name = "sge"
    sentinel = "#$"

    def parse_script(self, text: str) -> JobSpec:
        header, spec = begin_parse(text, _SENTINEL, self.name, _LATE)
        # qsub reads directives anywhere in the script (measured on 8.1.9): the later ones
        # count too, and stay in the body as written
        spec.metadata["parse_notes"] = [n for n in spec.metadata.get("parse_notes", [])
                                        if not n.endswith(f"({_LATE})")]
        if not spec.metadata["parse_notes"]:
            del spec.metadata["parse_notes"]
        late = [(n, raw, m.group(1)) for n, raw in header.late
                if (m := _SENTINEL.match(raw))]
        state: dict[str, Any] = {}
        for lineno, raw, payload in header.directives + late:
            if payload.rstrip().endswith("\\"):  # parse_script_file: no continuation
                raise BadInput(f"line {lineno}: `{raw.strip()}` ends in a backslash: qsub "
                               "reads each #$ line alone, split at blanks with no escapes, "
                               "so the backslash is part of the last word (alone, a word "
                               "that is no option: qsub refuses the job, Unknown option); "
                               "remove it and write the next line's options on a #$ line "
                               "of their own")
            if (words := qsub_words(payload)) != (shell := tokenize(payload)):
                _refuse_quoted_blank(lineno, raw, words, shell)
                note(spec, f"line {lineno}: `{raw.strip()}` read as qsub reads it, the "
                           f"words {words} (qsub splits a #$ line at blanks and tabs and "
                           "deletes every quote, with no escapes; a shell would read "
                           f"{shell})")
        lines = [(d, False) for d in header.directives] + [(d, True) for d in late]
        # -clear resets what every option before it asked (qsub(1)): those are ignored
        cleared = [(i, item.lineno) for i, item in enumerate(
            item for (ln, raw, payload), _ in lines for item in _items(payload, ln, raw))
            if item.option == "-clear"]
        skip, clear_line = cleared[-1] if cleared else (0, None)
        said: set[int] = set()
        seen = 0
        for (lineno, raw, payload), in_body in lines:
            for item in _items(payload, lineno, raw):
                seen += 1
                if seen <= skip:
                    if lineno not in said:
                        said.add(lineno)
                        note(spec, f"line {lineno}: ignored `{raw.strip()}` (the -clear on "
                                   f"line {clear_line} resets the options before it)")
                    continue
                if item.option in ("-soft", "-hard"):  # qsub: the -l/-q after it are so
                    state["soft"] = "y" if item.option == "-soft" else ""
                elif state.get("soft") and item.option in _SOFTENED:
                    # a preference the scheduler may ignore, never a limit: kept as written
                    if not in_body:
                        unknown(spec, self.name, item, f"-soft {item.option}")
                    note(spec, f"line {lineno}: -soft {item.option} {item.value} is a "
                               "preference; kept as written")
                    continue
                state["in_body"] = in_body
                ok = mapped_or_placeholder(item, self.name, spec, self._map, spec, item, state)
                if ok and in_body:  # read as qsub reads it; said, as no other scheduler does
                    note(spec, f"line {lineno}: `{raw.strip()}` after the first command is "
                               "read too (qsub takes directives anywhere in the script, "
                               "a here-document's included)")
                if not ok and not in_body:  # one in the body stays there, as written
                    sub = _SUB + (item.value or "").partition("=")[0]
                    unknown(spec, self.name, item, sub if item.option == "-l" else None)
                elif not ok:
                    note(spec, f"line {lineno}: `{raw.strip()}` kept in the body "
                               f"({item.option}: no neutral form)")
        r = spec.resources
        if r.gpus_per_node is not None and r.nodes is None and (r.tasks or 1) > 1:
            # -l gpu is the job's: the PE spreads the slots over hosts of its choosing
            spec.metadata[GPUS_PER_JOB] = r.gpus_per_node
        slots = (r.tasks or 1) * (r.cpus_per_task or 1)
        if r.gpus_per_node and slots > 1:
            # complex(5): a consumable YES is asked per slot (a parallel job takes N x its
            # slots), JOB once per job; GPU complexes are set JOB where sites document
            # `-l gpu=N` as the job's GPUs: read so, the other reading said
            key = spec.metadata.get("sge_gpu", "gpu")
            note(spec, f"-l {key}={r.gpus_per_node} read as the job's "
                       f"{quantity(r.gpus_per_node, 'GPU')} (a consumable of type JOB); where the "
                       f"site's {key} complex is consumable YES (per slot) Grid Engine gives "
                       f"{r.gpus_per_node * slots} for the {quantity(slots, 'slot')}")
        if spec.join_output and spec.stderr:  # qsub(1): -e is set but ignored with -j y
            if spec.stderr != spec.stdout:
                note(spec, f"line {state.get('join_line')}: -j y: -e {spec.stderr} not "
                           "used (qsub writes both streams to the output file)")
            spec.stderr = None
        if "tc" in state:
            if spec.array is None:
                note(spec, "-tc without -t has no effect; dropped")
            else:
                spec.array = ArraySpec(expression=f"{spec.array.expression}%{state['tc']}")
        no_gpus_for_zero(spec, "-l gpu=0")
        return spec

    def _map(self, spec: JobSpec, item: Item, state: dict[str, Any]) -> bool:  # noqa: C901
        o, v = item.option, item.value or ""
        if o in ("-q", "-A", "-N", "-wd", "-ar") and is_placeholder(v):
            note(spec, placeholder_note(item, self.name, "kept as a raw value"))
        if o == "-l":
            return self._resource(spec, item, state)
        if o == "-pe":
            return self._pe(spec, item)
        if o == "-N":
            if re.search(_NAME_BAD, v) and not is_placeholder(v):  # qsub denies it
                raise bad(item, "bad job name", "a name without / : @ \\ * ? or blanks "
                          f"(qsub refuses them), e.g. {re.sub(_NAME_BAD, '_', v)}")
            _grid_engine_name(spec, item, v)
            spec.name = v
        elif o == "-P" and v.startswith("-"):
            raise dash_value_refused(item, self.name, "project", v, "a project is a name, "
                                     "and no scheduler's starts with '-'; give the name")
        elif o == "-q":
            self._queue(spec, item, v)
        elif o == "-A":
            spec.account = v
        elif o == "-ar":
            spec.reservation = v
        elif o == "-a":
            spec.begin = neutral(sge_parts(v, f"line {item.lineno}"))
        elif o in ("-o", "-e"):
            set_output_path(spec, item, _HOST_PREFIX, self.name)
        elif o == "-j":
            if v.lower() not in ("y", "yes", "n", "no", "true", "false"):
                raise bad(item, "bad -j value", "y or n")
            spec.join_output = v.lower() in ("y", "yes", "true")
            state["join_line"] = item.lineno
        elif o == "-t":
            m = _ARRAY.match(v)
            if not m:
                raise bad(item, "bad task range", "n[-m[:s]], e.g. 1-100:2")
            spec.array = read_array(item, v, "n[-m[:s]] (n <= m, s > 0), e.g. 1-100:2")
            if has_index_zero(v):  # qsub -t: 1 <= n
                raise bad(item, "bad task range", "n[-m[:s]] with 1 <= n <= m (Grid "
                          "Engine's task ids start at 1), e.g. 1-100:2")
        elif o == "-tc":
            if not ascii_digits(v) or int(v) == 0:
                raise bad(item, "bad -tc value", "a positive integer")
            state["tc"] = v
        elif o in ("-hold_jid", "-hold_jid_ad"):
            listed = [x for x in v.split(",") if x]
            ids = [x for x in listed if ascii_digits(x)]
            if not ids:
                return False  # job names or patterns: kept as written
            if names := [x for x in listed if not ascii_digits(x)]:
                # names or patterns beside job ids: the ids read, the names kept as one
                # option (the writer lists them with the ids again)
                kept = ",".join(names)
                unknown(spec, self.name, Item(o, kept, item.lineno, f"#$ {o} {kept}"))
            # -hold_jid_ad: task n of this array waits for task n of the named arrays
            dep = Dependency(kind="afterany", job_ids=ids, per_task=o == "-hold_jid_ad",
                             scheduler=self.name)
            if dep not in spec.dependencies:
                spec.dependencies.append(dep)
        elif o == "-cwd":
            spec.metadata["sge_cwd"] = True
        elif o == "-wd":
            spec.working_directory = v
        elif o == "-V":
            spec.environment.export_all = True
        elif o == "-v":
            return take_variables(spec, v)
        elif o == "-M":
            spec.mail_user = v
        elif o == "-m":
            if not set(v) <= set("beasn"):
                raise bad(item, "bad -m value", "letters from b, e, a, s, or n")
            if "n" in v:  # qsub: a value with n clears the mail options (the earlier too)
                spec.mail_events = []
                spec.metadata[NO_MAIL] = True
                spec.metadata.pop(SGE_MAIL_SUSPEND, None)
                return True
            spec.metadata.pop(NO_MAIL, None)
            if "s" in v:  # kept for Grid Engine's own qsub, said not carried elsewhere
                spec.metadata[SGE_MAIL_SUSPEND] = True
                note(spec, f"line {item.lineno}: mail on suspend (-m s) has no neutral form "
                           "(kept for Grid Engine only)")
            # qsub adds each -m to the earlier ones
            spec.mail_events += [_MAIL[c] for c in v
                                 if c in _MAIL and _MAIL[c] not in spec.mail_events]
        elif o == "-h":
            spec.hold = True
        elif o == "-r":
            if (v or "").lower() not in ("y", "yes", "n", "no"):
                raise bad(item, "bad -r value", "y (rerunnable) or n (never rerun)")
            spec.requeue = (v or "").lower() in ("y", "yes")
        elif o == "-S":
            if v.startswith("-"):  # qsub takes it as the shell's path, which it is not
                raise BadInput(f"line {item.lineno}: `{item.raw.strip()}` sets the shell to "
                               f"{v!r}, which starts with '-' (qsub takes the word after -S "
                               "as the shell's path whatever it is); give the shell's "
                               "absolute path (e.g. /bin/bash)")
            if ":" in v or "," in v:  # qsub's [host:]path list: a shell for each host named
                first = v.split(",")[0].rpartition(":")[2] or "/bin/bash"
                raise BadInput(f"line {item.lineno}: `{item.raw.strip()}` gives a list of "
                               f"shells by host ({v!r}: [host:]path entries, separated by "
                               "commas); a job here has one shell, run on every host: "
                               f"give its absolute path alone (e.g. #$ -S {first})")
            spec.shell = v
        else:
            return False
        return True

    def _pe(self, spec: JobSpec, item: Item) -> bool:
        name, _, slots = (item.value or "").partition(" ")
        ranged = re.fullmatch(r"([0-9]*)-([0-9]*)(?:,[0-9]*-?[0-9]*)*"
                              r"|[0-9]+(?:,[0-9]*-?[0-9]*)+", slots)
        if ranged:  # n-m, -m, n-, lists of them: qsub grants at least the smallest
            lows = [int(p.partition("-")[0] or 1) for p in slots.split(",") if p]
            slots = str(min(lows))
            note(spec, f"line {item.lineno}: slot range {item.value} read as at least "
                       f"{quantity(int(slots), 'slot')}; kept as written")
        if not ascii_digits(slots) or int(slots) < 1:
            raise bad(item, "bad slot count", "a positive integer or a range, e.g. -pe smp 4 "
                      "or -pe smp 4-8")
        r, n = spec.resources, int(slots)
        r.nodes = r.tasks = r.cpus_per_task = None  # qsub keeps the last -pe given
        spec.unknown = [d for d in spec.unknown if not (d.dialect == "sge" and d.option == "-pe")]
        spec.metadata["sge_pe"] = name
        spec.metadata.pop(TASK_RANGE, None)
        if is_shared_pe(name):
            r.nodes, r.cpus_per_task = 1, n
        else:
            r.tasks = n
            if m := re.fullmatch(r"([0-9]+)-([0-9]+)", (item.value or "").partition(" ")[2]):
                spec.metadata[TASK_RANGE] = [int(m.group(1)), int(m.group(2))]
        return not ranged  # a range stays as written (Grid Engine's own choice of count)

    def _resource(self, spec: JobSpec, item: Item, state: dict[str, Any]) -> bool:
        key, eq, val = (item.value or "").partition("=")
        r = spec.resources
        if key in _LIMITS and val.lower() in ("infinity", "inf"):  # complex(5): no limit
            note(spec, f"line {item.lineno}: -l {key}={val} asks no limit (Grid Engine's "
                       "INFINITY); other schedulers get their own default; kept as written")
            return False
        if key in ("h_rt", *MEMORY_COMPLEXES, "gpu") and is_placeholder(val, loose=True):
            raise bad(item, "placeholder", "a concrete value")
        if key == "h_rt":
            secs = sge_time(val)
            if secs is None:
                raise bad(item, "bad h_rt", _SGE_TIME)
            if secs == 0:
                return zero_time_limit(spec, item, f"h_rt={val}")
            octal_note(spec, item, f"h_rt={val}", secs)
            r.walltime_s = secs
        elif key in MEMORY_COMPLEXES:
            return _memory(spec, item, key, val, state)
        elif key in ("h_cpu", "s_cpu"):
            secs = sge_time(val)
            if secs is None:
                raise bad(item, f"bad {key}", _SGE_TIME)
            if not secs or not _first_of(spec, item, key, ("h_cpu", "s_cpu"), state, "cpu"):
                return False  # zero, or beside h_cpu: kept as written
            octal_note(spec, item, f"{key}={val}", secs)
            spec.metadata[CPU_TIME] = secs
            spec.metadata["sge_cpu"] = key
        elif key in ("gpu", "gpus", "ngpus"):
            if not ascii_digits(val):
                raise bad(item, "bad GPU count", "a non-negative integer, e.g. gpu=1")
            r.gpus_per_node = int(val)
            spec.metadata["sge_gpu"] = key
        elif key == "arch" and val in _ARCH:
            spec.constraints.architecture = _ARCH[val]
        elif key in ("exclusive", "excl") and (not eq or val in _TRUE):
            # a BOOL complex asked for without a value is asked for TRUE (complex(5))
            spec.constraints.exclusive = True
            spec.metadata["sge_exclusive"] = key
        else:
            return False
        return True

    # ------------------------------------------------------------------ render
    @staticmethod
    def _queue(spec: JobSpec, item: Item, value: str) -> None:
        """`-q` takes queues and queue instances (`all.q@node01`, `*@node01`, lists of
        them): other schedulers get the queues (none for `*`) and the hosts as far as they
        can name them (node_lists), and Grid Engine gets the value as written."""
        queues, hosts = [], []
        for part in value.split(","):
            queue, _, host = part.partition("@")
            if queue and queue != "*" and queue not in queues:
                queues.append(queue)
            if host:
                hosts.append(host)
        if not hosts:
            spec.queue = value
            return
        spec.queue = ",".join(queues) or None
        spec.metadata["sge_queue_instances"] = {"raw": value, "as": spec.queue,
                                                 "line": item.raw.strip()}
        note(spec, f"approximated: line {item.lineno}: -q {value}: other schedulers "
                   + (f"get the queue {spec.queue} and " if spec.queue else "")
                   + f"the hosts where they can name them (named here: {', '.join(hosts)})")

    @staticmethod
    def job_name(name: str) -> str:
        """The name as the scheduler keeps it (the rendered `-N`, see `_job_name`)."""
        return _job_name(name)

    def render_script(self, spec: JobSpec) -> Rendered:  # noqa: C901
        spec, waits = without_submit_waits(spec, self.name, self.submit_wait)
        spec, socket_gpus = socket_gpus_per_node(spec, self.name)
        warnings = common_render_warnings(spec, self.name) + waits + socket_gpus
        warnings = [w for w in warnings if not w.startswith("dropped: architecture")
                    or spec.constraints.architecture not in _ARCH_BACK]
        spec = one_shape(spec, self.name, warnings)  # a job of several shapes
        lines: list[str] = []

        def add(opt: str, val: object = None) -> None:
            if val is not None:
                _refuse_unwritable(opt, str(val))
            lines.append(f"#$ {opt}" + ("" if val is None else f" {quote(str(val))}"))

        r, c = spec.resources, spec.constraints
        own = [d for d in spec.unknown if d.dialect == self.name]
        if any(d.option == "-clear" for d in own):  # first: it resets the options before it
            add("-clear")
        shell = spec.shell or "/bin/bash"
        interp = shell.split()[0]
        add("-S", interp)  # the queue's shell would run the script otherwise
        if interp != shell:
            warnings.append(f"approximated: shell {shell!r} runs as {interp} (qsub -S takes "
                            "the interpreter alone)")
        if spec.name:
            name = _job_name(spec.name)
            warnings += job_name_warning(spec.name, name, "Grid Engine names cannot start "
                                         "with a digit, be NONE, ALL or TEMPLATE, nor hold / "
                                         ": @ \\ * ? blanks or quotes; one starting with "
                                         "'-' would read as an option to qacct -j")
            add("-N", name)
        kept = spec.metadata.get("sge_queue_instances")
        if spec.source_dialect == "sge" and isinstance(kept, dict) \
                and kept.get("as") == spec.queue:
            add("-q", kept["raw"])  # the queue instances as written, while still asked for
        elif spec.queue:
            add("-q", spec.queue)
        if spec.account:
            add("-A", spec.account)
        if spec.reservation and ascii_digits(spec.reservation):
            add("-ar", spec.reservation)
        elif spec.reservation:  # qsub -ar takes the number qrsub gave the reservation
            warnings.append(f"dropped: reservation {spec.reservation} (Grid Engine's -ar "
                            "takes an advance reservation's number, as qrstat lists them, "
                            "not a name)")
        if spec.begin and (at := render_begin(spec.begin, self.name, warnings)):
            add("-a", at)
        if spec.qos:
            warnings.append(f"dropped: QOS {spec.qos} (no Grid Engine equivalent)")
        if spec.comment:
            warnings.append(f"dropped: comment {spec.comment!r} (qsub cannot set one)")
        if spec.working_directory:
            add("-wd", spec.working_directory)
        elif runs_where_submitted(spec) is not False:
            add("-cwd")  # Slurm, LSF and flux run a job where it was submitted
        # else an sge script without -cwd, or a PBS one, runs in the home directory
        slots, per_host = self._slots(spec, lines, warnings)
        kept_gpus = None if r.gpus_per_node is not None or r.gpus_per_task is not None \
            else kept_slurm_gpu_total(spec)
        res = self._resources(spec, slots, per_host, kept_gpus, warnings)
        res += [d.value or "" for d in own if d.option.startswith(_SUB)]
        if res:
            add("-l", ",".join(res))
        if c.features:
            warnings.append(f"dropped: node features {', '.join(c.features)} (Grid Engine "
                            "asks for features as -l complexes the site defines)")
        if spec.array:
            self._array(spec.array.expression, add, warnings)
        # job names kept beside job ids of the same -hold_jid[_ad]: listed with them again
        names = {d.option: d for d in own if d.option in ("-hold_jid", "-hold_jid_ad")
                 and d.value}
        names_written: list[Directive] = []
        for d in dependencies_for(spec, self.name, warnings):
            if d.kind in ("after",):
                warnings.append(f"dropped: dependency {d.kind}:{':'.join(d.job_ids)} (Grid "
                                "Engine cannot wait for a job's start)")
                continue
            hold = "-hold_jid_ad" if d.per_task else "-hold_jid"
            if d.kind != "afterany":
                warnings.append(f"approximated: dependency {d.kind}:{':'.join(d.job_ids)} "
                                f"as {hold} (Grid Engine waits for the end, whatever the "
                                "exit status)")
            jobs = ",".join(d.job_ids)
            if (kept := names.pop(hold, None)) is not None:
                jobs, names_written = f"{jobs},{kept.value}", [*names_written, kept]
            add(hold, jobs)
        for opt, val in (("-o", spec.stdout), ("-e", spec.stderr)):
            if val:
                val = file_for_directory(val, "stdout" if opt == "-o" else "stderr",
                                         spec.source_dialect, self.name, warnings)
                add(opt, map_out_pattern(val, self.name, warnings))
        warnings += output_mode_warning(spec, "Grid Engine", "append")
        joined = spec.join_output or spec.source_dialect not in ("pbs", self.name)
        if joined and not spec.stderr:
            add("-j", "y")
        if spec.hold:
            add("-h")
        if spec.requeue is not None:
            add("-r", "y" if spec.requeue else "n")
        if spec.mail_user:
            add("-M", spec.mail_user)
        warnings += mail_warning(spec.mail_events, set(_MAIL_BACK), self.name)
        letters = "".join(x for x in "bea" if any(x in _MAIL_BACK.get(e, "")
                                                  for e in spec.mail_events))
        if spec.metadata.get(SGE_MAIL_SUSPEND) and spec.source_dialect == self.name:
            letters += "s"  # its own -m s, which no other scheduler has
        if letters:
            add("-m", letters)
        spec, exported = _unwritable_values_exported(spec)
        add_qsub_environment(spec, add)
        warnings += launcher_only_warnings(r, "Grid Engine")
        # a kept soft request carries its own -soft: a bare one would be written twice
        lines += own_unknown_lines(spec, self.name, self.sentinel, _count,
                                   skip=lambda d: d.option.startswith(_SUB)
                                   or d.option in ("-soft", "-pe", "-clear")
                                   or any(d is x for x in names_written))
        carried = []
        if project := kept_project(spec, self.name, warnings):  # a PBS Pro project
            add("-P", project[0])
            carried.append((project[1].option, project[1].value))
        if priority := kept_priority(spec, self.name, warnings):  # qsub -p N, both
            if priority[0] is not None:
                add("-p", priority[0])
            carried.append((priority[1].option, priority[1].value))
        if kept_gpus:  # named as carried, not as dropped
            d = next(d for d in spec.unknown if d.dialect == "slurm" and d.option == "--gpus")
            carried.append((d.option, d.value))
            warnings.append(f"approximated: {d.raw.strip()} as -l gpu={kept_gpus} (the job's "
                            "GPUs; Grid Engine places them with the slots)")
        carried += [("-n", d.value) for d in spec.unknown if d.dialect == "lsf"
                    and d.option == "-n" and any(f"{d.raw.strip()} as -pe" in w for w in warnings)]
        if spec.source_dialect != self.name and (ws := warn_signal(spec)):
            warnings.append(dropped(ws, self.name))  # said with why, not as unknown
            carried += signal_carried(ws)
        if stdin := kept_stdin(spec, self.name, warnings):  # sbatch --input, bsub -i
            add("-i", stdin[0])
            carried.append((stdin[1].option, stdin[1].value))
        hosts_said, hosts_read = render_named_hosts(spec, self.name, add)
        warnings += hosts_said + foreign_warnings(spec, self.name, skip=carried + hosts_read)
        preamble = exported + neutral_preamble(spec, variables_listed=True)
        return Rendered(assemble(spec, lines, preamble), warnings)

    @staticmethod
    def _slots(spec: JobSpec, lines: list[str], warnings: list[str]) -> tuple[int, int]:
        """`-pe NAME N` from tasks and CPUs; returns (slots, slots per host) for the
        per-slot limits."""
        r = spec.resources
        cpt = r.cpus_per_task or 1
        tasks = r.tasks or ((r.nodes or 1) * r.tasks_per_node if r.tasks_per_node else None)
        pe = spec.metadata.get("sge_pe") if spec.source_dialect == "sge" else None
        if tasks and tasks > 1:
            slots = tasks * cpt
            name = pe if pe and not is_shared_pe(pe) else MPI_PE
            if cpt > 1:
                warnings.append(f"approximated: {quantity(tasks, 'task')} x {quantity(cpt, 'CPU')} "
                                f"as {quantity(slots, 'slot')} of PE {name} (one slot per CPU; "
                                "the split is not kept)")
        elif cpt > 1:
            slots, name = cpt, pe if pe and is_shared_pe(pe) else SMP_PE
        else:  # one slot: a Grid Engine script's own PE stays (`-pe smp 1` is one host)
            slots, name = 1, pe
        nodes = r.nodes
        ranged = spec.source_dialect == "sge" and any(
            d.dialect == "sge" and d.option == "-pe" for d in spec.unknown)
        rng = carried_task_range(spec, tasks or 1, "lsf", "-n", f"-pe {name} {{0}}-{{1}}",
                                 warnings) if name and not is_shared_pe(name) else None
        if rng:  # another scheduler's range of task counts: the PE's slot range
            lines.append(f"#$ -pe {quote(name)} {rng[0]}-{rng[1]}")
        elif name is not None and not ranged:
            lines.append(f"#$ -pe {quote(name)} {slots}")  # two words, unquoted pair
        elif ranged:  # the kept slot range as written: its two words, each quoted alone
            kept = next(d for d in spec.unknown if d.dialect == "sge" and d.option == "-pe")
            pe_name, _, pe_range = (kept.value or "").partition(" ")
            lines.append(f"#$ -pe {quote(pe_name)} {quote(pe_range.strip())}")
        if nodes and nodes > 1 and name is None:  # no PE: one slot on one host
            warnings.append(f"approximated: {quantity(nodes, 'node')} as one slot on one host "
                            "(without a task count there is no parallel environment to spread over "
                            "hosts)")
        elif nodes and nodes > 1:
            warnings.append(f"approximated: {quantity(nodes, 'node')} (Grid Engine places the "
                            f"{quantity(slots, 'slot')} by PE {name}'s allocation rule)")
        elif nodes == 1 and name and not is_shared_pe(name):
            warnings.append(f"approximated: 1 node (PE {name}'s allocation rule decides "
                            "how its slots spread over hosts)")
        if r.tasks_per_node and not (nodes and nodes > 1):
            warnings.append(f"approximated: {quantity(r.tasks_per_node, 'task')} per node (Grid "
                            "Engine places slots by the PE's allocation rule)")
        per_host = slots if (name is None or is_shared_pe(name)) else \
            (-(-slots // nodes) if nodes else slots)
        return slots, per_host

    @staticmethod
    def _resources(spec: JobSpec, slots: int, per_host: int, kept_gpus: int | None,
                   warnings: list[str]) -> list[str]:
        r, c = spec.resources, spec.constraints
        out: list[str] = []
        if r.walltime_s is not None:
            out.append(f"h_rt={fmt_hms(r.walltime_s)}")
        if cpu := cpu_time_limit(spec):  # a Grid Engine script's own s_cpu stays s_cpu
            key = spec.metadata.get("sge_cpu") if spec.source_dialect == "sge" else None
            out.append(f"{key if key in ('h_cpu', 's_cpu') else 'h_cpu'}={fmt_hms(cpu)}")
        # a Grid Engine script's own memory complex (mem_free, h_data, m_mem_free) stays its own
        mem_key = spec.metadata.get("sge_memory") if spec.source_dialect == "sge" else None
        mem_key = mem_key if mem_key in MEMORY_COMPLEXES else "h_vmem"
        if r.memory_per_cpu_mb:
            out.append(f"{mem_key}={_fmt_mem(r.memory_per_cpu_mb)}")
            if r.memory_mb:
                warnings.append(f"dropped: memory per node {r.memory_mb}MB (Grid Engine "
                                "limits memory per slot)")
        elif r.memory_mb:
            per = r.memory_mb // max(per_host, 1)
            if per:
                out.append(f"{mem_key}={_fmt_mem(per)}")
            if per_host > 1 or not per:
                warnings.append(f"approximated: memory {r.memory_mb}MB per node as "
                                f"{per}MB per slot (-l h_vmem is per slot)")
        gpus = None  # 0 GPUs asks for none, as no count does: no -l gpu=0
        if r.gpus_per_node:
            gpus = r.gpus_per_node * (r.nodes or 1)
            if (r.nodes or 1) > 1:
                warnings.append(f"approximated: {quantity(r.gpus_per_node, 'GPU')} per node on "
                                f"{quantity(r.nodes, 'node')} as {quantity(gpus, 'GPU')} for the "
                                f"job (-l gpu is per job)")
        elif r.gpus_per_task:
            tasks = r.tasks or 1
            gpus = r.gpus_per_task * tasks
            warnings.append(f"approximated: {quantity(r.gpus_per_task, 'GPU')} per task as "
                            f"{quantity(gpus, 'GPU')} for the job (-l gpu is per job)")
        elif kept_gpus:  # Slurm's kept --gpus=N is the job's, as -l gpu is
            gpus = kept_gpus
        if gpus:
            out.append(f"{spec.metadata.get('sge_gpu', 'gpu')}={gpus}")
        if r.gpu_type:
            warnings.append(f"dropped: GPU type {r.gpu_type} (no standard Grid Engine "
                            "complex; sites define their own)")
        if c.architecture in _ARCH_BACK:
            out.append(f"arch={_ARCH_BACK[c.architecture]}")
        if c.exclusive and spec.metadata.get("sge_exclusive"):
            out.append(f"{spec.metadata['sge_exclusive']}=true")
        elif c.exclusive:
            warnings.append("dropped: exclusive node use (no standard Grid Engine complex; "
                            "sites that define one take -l exclusive=true)")
        return out

    @staticmethod
    def _array(expr: str, add, warnings: list[str]) -> None:
        body, _, limit = expr.partition("%")
        first = body.split(",")[0]
        if "," in body and _ARRAY.match(first):  # one range: exact where the list steps
            first, left_out = pro_array_range(body)  # evenly, else its largest part
            if left_out:
                warnings.append(f"approximated: array {expr} as {first} (qsub -t takes one "
                                f"n[-m[:s]] range; indexes {left_out} left out)")
        m = _ARRAY.match(first)
        if not m:
            warnings.append(f"dropped: array {expr} (not an n[-m[:s]] range)")
            return
        if has_index_zero(first):
            raise array_from_one_refused(expr, "sge", "Grid Engine", "qsub -t takes 1 <= n",
                                         "SGE_TASK_ID")
        add("-t", first)
        if limit:
            add("-tc", limit)


def _first_of(spec: JobSpec, item: Item, key: str, order: tuple[str, ...],
              state: dict[str, Any], slot: str) -> bool:
    """Whether `-l key=...` is the one of the complexes `order` ranks (first wins) that
    gives the job's `slot` (its memory, its CPU time): one ranked after the one that gave
    it stays as written (False); one ranked before takes it over, and the other goes back
    among the kept ones."""
    held = state.get(slot)  # (complex, item, in the body) that gave it
    if held is not None and held[0] != key:
        if order.index(key) > order.index(held[0]):
            return False
        if not held[2]:  # one in the body stays there, as written
            unknown(spec, "sge", held[1], _SUB + held[0])
    state[slot] = (key, item, state.get("in_body", False))
    return True


def octal_note(spec: JobSpec, item: Item, written: str, secs: int) -> None:
    """A time written with a leading 0 (`h_rt=0600`) is octal to Grid Engine, one of 0x
    hexadecimal: read as qsub reads it (384 seconds), and said, since it reads as 600."""
    value = written.partition("=")[2].strip()
    if len(value) > 1 and value[0] == "0" and ascii_digits(value.lstrip("0") or "0") \
            or value[:2] in ("0x", "0X"):
        base = "hexadecimal" if "x" in value.lower() else "octal"
        note(spec, f"line {item.lineno}: {written} is {base} to Grid Engine: read as qsub "
                   f"reads it, {secs} seconds ({fmt_hms(secs)}); write {secs} or "
                   f"{fmt_hms(secs)} if that is meant")


def _memory(spec: JobSpec, item: Item, key: str, val: str, state: dict[str, Any]) -> bool:
    """`-l h_vmem|h_data|mem_free|m_mem_free=SIZE`: the job's memory per slot, from the first
    of MEMORY_COMPLEXES it asks (metadata `sge_memory` names any but h_vmem); a complex
    after it in that order stays as written (checked as a consumable where a site has
    it), one before it takes the memory and sends the other back to the kept ones."""
    mb = _memory_mb(val)
    if mb is None:
        raise bad(item, f"bad {key}", "a number with K, M, G or T, e.g. 4G")
    if not _first_of(spec, item, key, MEMORY_COMPLEXES, state, "memory"):
        return False
    if mb == 0:
        no_memory_asked(spec, item.lineno, f"{key}={val}")
        return True
    spec.resources.memory_per_cpu_mb = mb
    if key == "h_vmem":
        spec.metadata.pop("sge_memory", None)
    else:
        spec.metadata["sge_memory"] = key
        note(spec, f"line {item.lineno}: -l {key}={val} read as the job's memory per slot "
                   f"(a MEMORY complex, consumable per slot unless the site's qconf -sc "
                   "says JOB or HOST)")
    return True


def _memory_mb(value: str) -> int | None:
    """A memory_specifier (sge_types(1)) in megabytes, rounded up: k, m, g, t multiply by
    powers of 1000 (4g is 3815MB, not 4096MB), K, M, G, T by powers of 1024, no suffix
    means bytes; None if unreadable."""
    size = amount(value)
    if size is None:
        return parse_mem_mb(value, default_unit="b")  # 4GB and the like, as before
    return max(1, math.ceil(size / 1024**2)) if size else 0


# what no Grid Engine takes in a job name (sge_types), and the quotes qsub deletes from a
# #$ line
_NAME_BAD = r"[/:@\\*?\s\"']"


# what each option rendered with a value holds, for a refusal of a value qsub cannot read
_VALUE_WORDS = {"-wd": "working directory", "-o": "stdout path", "-e": "stderr path",
                "-i": "stdin path", "-A": "account", "-q": "queue", "-M": "mail address",
                "-P": "project", "-N": "job name", "-S": "shell"}
_PATH_OPTIONS = {"-wd", "-o", "-e", "-i"}
# What a #$ value cannot hold: qsub (parse_script_file) splits the line at blanks and tabs,
# then deletes every ' and " of each word; no escapes (quoting a backslash doubles it). Other
# control characters (a newline) are refused by the spec's own check (`assemble`)
_UNWRITABLE = re.compile(r"[ \t\"'\\]")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _refuse_quoted_blank(lineno: int, raw: str, words: list[str], shell: list[str]) -> None:
    """A value quoted around a blank (`#$ -N "a -o /tmp/x"`): qsub splits it into other
    words, options too, so the job would not be what the line seems to ask; refused."""
    for i, value in enumerate(shell):
        if not re.search(r"[ \t]", value) or value.startswith("<"):
            continue
        opt = shell[i - 1] if i else value
        what = _VALUE_WORDS.get(opt, "value")
        fixed = _job_name(value) if opt == "-N" else re.sub(r"[ \t]", "_", value)
        raise BadInput(f"line {lineno}: bad {what} {value!r} in `{raw.strip()}`: qsub splits "
                       f"#$ lines at blanks and tabs, quoted or not, so it would read the "
                       f"words {words}; give {'an' if what[0] in 'aeiou' else 'a'} {what} "
                       f"without blanks, e.g. {fixed}")


def _refuse_unwritable(opt: str, value: str) -> None:
    """A #$ value qsub would not read back as itself (`#$ -wd "a b"` is `-wd a` and a stray
    `b`): refused, naming the option and what it takes, rather than written so."""
    m = _UNWRITABLE.search(value)
    if m is None or _CONTROL.search(value):  # the spec's own check says what that is
        return
    what = _VALUE_WORDS.get(opt, "value")
    bad = m.group()
    takes = ("a path without blanks, quotes or backslashes (a symbolic link to the same "
             "place will do)" if opt in _PATH_OPTIONS
             else f"{'an' if what[0] in 'aeiou' else 'a'} {what} without blanks, quotes or "
                  "backslashes")
    if bad.isspace():
        first = value.split()[0] if value.split() else ""
        read = f"it would read #$ {opt} {first!r} and a stray word"
    elif bad in "'\"":
        read = f"it would read #$ {opt} {value.replace(chr(34), '').replace(chr(39), '')!r}"
    else:
        read = "the backslash cannot be written so that qsub reads it alone"
    raise BadInput(f"sge cannot express the {what} {value!r} (#$ {opt}): qsub splits #$ "
                   f"lines at blanks and tabs and deletes quotes, with no escapes, so {read}; "
                   f"give {takes}")


def _unwritable_values_exported(spec: JobSpec) -> tuple[JobSpec, list[str]]:
    """The variables whose value holds what a #$ line cannot (a blank, a quote, a
    backslash: `_UNWRITABLE`), taken out of the spec for qsub's -v and set by `export` lines
    before the body instead, as the values holding a comma are (`neutral_preamble`)."""
    env = spec.environment
    blank = {k: v for k, v in env.variables.items() if _UNWRITABLE.search(v) and "," not in v}
    if not blank:
        return spec, []
    kept = {k: v for k, v in env.variables.items() if k not in blank}
    passed = [n for n in env.passed if n not in blank]
    spec = spec.model_copy(update={"environment": env.model_copy(
        update={"variables": kept, "passed": passed})})
    return spec, [f"export {k}={sh_quote(v)}" for k, v in blank.items()]


# The words Grid Engine keeps for itself, refused as any object's name (any case)
_KEYWORDS = ("NONE", "ALL", "TEMPLATE")


def _grid_engine_name(spec: JobSpec, item: Item, name: str) -> None:
    """A job name as Grid Engine takes it: qsub gives -N the next word whatever it is
    (`-N -x` names the job "-x", said), and its master refuses a name starting with a
    digit or that is one of its keywords, when the job is submitted (BadInput here)."""
    if is_placeholder(name):
        return
    at = f"line {item.lineno}: job name {name!r} in `{item.raw.strip()}`"
    if ascii_digits(name[:1]):
        raise BadInput(f"{at} starts with a digit: Grid Engine refuses the job (`denied: "
                       f"\"{name}\" is not a valid object name (cannot start with a digit)`); "
                       f"give one that starts otherwise (e.g. {_job_name(name)!r})")
    if name.upper() in _KEYWORDS:
        raise BadInput(f"{at} is one of Grid Engine's keywords (NONE, ALL, TEMPLATE, in any "
                       f"case), which it refuses as a name; give another (e.g. "
                       f"{_job_name(name)!r})")
    if name.startswith("-"):
        note(spec, f"{at}: qsub takes the word after -N as the name whatever it is, so the "
                   f"job is named {name!r} (if {name} was meant as an option, -N lacks its "
                   "name)")


def _job_name(name: str) -> str:
    """A name qsub accepts: no / : @ \\ * ? blanks or quotes, not starting with a digit, not
    a keyword (NONE, ALL, TEMPLATE); nor starting with `-`, which Grid Engine keeps but
    `qacct -j NAME`, finding the job by its name, would read as an option."""
    fixed = re.sub(_NAME_BAD, "_", name)
    return f"j{fixed}" if ascii_digits(fixed[:1]) or fixed[:1] == "-" \
        or fixed.upper() in _KEYWORDS else fixed


def _fmt_mem(mb: int) -> str:
    return f"{mb // 1024}G" if mb % 1024 == 0 else f"{mb}M"


sge_script = SgeScript()
