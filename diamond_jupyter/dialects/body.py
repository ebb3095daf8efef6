"""The script body in translation: scheduler variables and launchers (pure text in, out).

A variable of the source scheduler becomes the target's variable with the same meaning;
`srun` and `mpirun` become `flux run` for Flux when every option has a Flux equivalent.
Whatever has no equivalent stays as written and is reported, one line each.
"""

from __future__ import annotations

import re
import shlex

from .scripts_common import shell_program, submit_directory_line, submit_directory_name
from .staging import burst_buffer_stage_reason, check_burst_buffer_line

# meaning -> the variable per scheduler (None: the scheduler has no such variable)
_VARS: dict[str, dict[str, str | None]] = {
    "job id": {"slurm": "SLURM_JOB_ID", "pbs": "PBS_JOBID", "lsf": "LSB_JOBID",
               "flux": "FLUX_JOB_ID", "sge": "JOB_ID"},
    "array index": {"slurm": "SLURM_ARRAY_TASK_ID", "pbs": "PBS_ARRAY_INDEX",
                    "lsf": "LSB_JOBINDEX", "flux": None, "sge": "SGE_TASK_ID"},
    "task count": {"slurm": "SLURM_NTASKS", "pbs": None, "lsf": "LSB_DJOB_NUMPROC",
                   "flux": None, "sge": "NSLOTS"},
    "node count": {"slurm": "SLURM_JOB_NUM_NODES", "pbs": None, "lsf": None,
                   "flux": "FLUX_JOB_NNODES", "sge": "NHOSTS"},
    "submit directory": {"slurm": "SLURM_SUBMIT_DIR", "pbs": "PBS_O_WORKDIR",
                         "lsf": "LS_SUBCWD", "flux": None, "sge": "SGE_O_WORKDIR"},
    "job name": {"slurm": "SLURM_JOB_NAME", "pbs": "PBS_JOBNAME", "lsf": "LSB_JOBNAME",
                 "flux": None, "sge": "JOB_NAME"},
    # the queue (partition) the job runs from
    "queue": {"slurm": "SLURM_JOB_PARTITION", "pbs": "PBS_QUEUE", "lsf": "LSB_QUEUE",
              "flux": None, "sge": "QUEUE"},
    # PBS Pro's NCPUS: the first chunk's ompthreads, else its ncpus; read (never written:
    # Torque has no such variable) as a task's CPUs where that is the job's one task
    "first chunk's threads": {"pbs": None},
    "task rank": {"slurm": "SLURM_PROCID", "pbs": None, "lsf": None,
                  "flux": "FLUX_TASK_RANK"},
    # each scheduler's list of the job's hosts has a form of its own, none another's: Slurm
    # a hostlist expression (n[01-03]), PBS and Torque a file of one host per slot, LSF the
    # hosts inline (one per slot; or host and count pairs), Grid Engine a file of host,
    # slots, queue and processor range lines; so each is kept and said, never swapped
    "node list": {"slurm": "SLURM_JOB_NODELIST"},
    "node file": {"pbs": "PBS_NODEFILE"},
    "hosts, one per slot": {"lsf": "LSB_HOSTS"},
    "hosts with slot counts": {"lsf": "LSB_MCPU_HOSTS"},
    "PE host file": {"sge": "PE_HOSTFILE"},
    "CPUs per task": {"slurm": "SLURM_CPUS_PER_TASK", "pbs": None, "lsf": None,
                      "flux": None},
    "array job id": {"slurm": "SLURM_ARRAY_JOB_ID", "pbs": None, "lsf": None, "flux": None},
    "array size": {"slurm": "SLURM_ARRAY_TASK_COUNT", "pbs": None, "lsf": None,
                   "flux": None},
}
# older or flavour-specific spellings of the same meanings
_ALIASES = {
    "slurm": {"SLURM_JOBID": "job id", "SLURM_NPROCS": "task count",
              "SLURM_NNODES": "node count", "SLURM_NODELIST": "node list"},
    # Torque's PBS_NP (execution slots) and PBS_NUM_NODES (nodes allocated)
    "pbs": {"PBS_ARRAYID": "array index", "PBS_NP": "task count",
            "PBS_NUM_NODES": "node count"},
    "lsf": {},
    "flux": {},
    "sge": {},
}
# metadata of a flux job of --cc copies: their id set (the job is read as an array of them)
FLUX_COPIES = "flux_cc"
# a --cc copy's id: the array index where the job has copies (they are its array); in a
# job without --cc flux sets no such variable, so it is kept as written, said so
_COPY_ID = {True: "array index", False: "a --cc copy's id, and the job has no --cc"}
_PREFIX = {"slurm": "SLURM_", "pbs": "PBS_", "lsf": "LSB_", "flux": "FLUX_", "sge": "SGE_"}
# Grid Engine's own variables mostly lack a common prefix; PBS Pro sets NCPUS, LSF its
# LS_ ones, Slurm SLURMD_NODENAME
_UNPREFIXED = {"sge": ("JOB_ID", "JOB_NAME", "JOB_SCRIPT", "NSLOTS", "NHOSTS", "NQUEUES",
                       "PE_HOSTFILE", "PE", "QUEUE", "REQUEST", "RESTARTED", "TASK_ID"),
               "pbs": ("NCPUS",), "lsf": ("LS_SUBCWD", "LS_EXECCWD", "LS_JOBPID"),
               "slurm": ("SLURMD_NODENAME",)}
_NAMES = {d: rf"(?:{re.escape(_PREFIX[d])}\w+|{'|'.join(names)})\b"
          for d, names in _UNPREFIXED.items()}
# what $TMPDIR is in a job of each scheduler: only PBS's and Grid Engine's agree
_TMPDIR = {"slurm": "is not set by slurm (whatever the job's environment carries)",
           "pbs": "is a directory of the job's own, removed when it ends",
           "sge": "is a directory of the job's own, removed when it ends",
           "lsf": "is the job's own directory only where the site sets LSB_SET_TMPDIR",
           "flux": "is as the flux instance's job shell sets it"}
_TMPDIR_USE = re.compile(r"\$\{?TMPDIR\b")
# PBS Pro sets OMP_NUM_THREADS in the job (a chunk's ompthreads, else its ncpus); the
# other schedulers' jobs carry whatever the environment gives: said where a line reads it
_OMP_USE = re.compile(r"\$\{?OMP_NUM_THREADS\b")

# srun / mpirun option -> flux run option (None: takes no value)
_SRUN_FLUX = {"-n": "-n", "--ntasks": "-n", "-N": "-N", "--nodes": "-N",
              "-c": "-c", "--cpus-per-task": "-c", "--gpus-per-task": "-g",
              "--ntasks-per-node": "--tasks-per-node", "-l": "--label-io",
              "--label": "--label-io", "-u": "-u", "--unbuffered": "-u"}
_FLUX_SRUN = {"-n": "-n", "--ntasks": "-n", "-N": "-N", "--nodes": "-N", "-c": "-c",
              "--cores-per-task": "-c", "-g": "--gpus-per-task",
              "--gpus-per-task": "--gpus-per-task",
              "--tasks-per-node": "--ntasks-per-node", "--label-io": "--label", "-u": "-u",
              "--unbuffered": "-u"}
_FLAGS = {"-l", "--label", "-u", "--unbuffered", "--label-io"}
_MPIRUN_FLUX = {"-n": "-n", "-np": "-n", "-c": "-n", "--np": "-n"}
# where shell arithmetic reads bare variable names: $((..)) and ((..)) (one level of
# parentheses inside), `let ...` and an array subscript ${NAME[..]}
_ARITH = re.compile(r"\(\((?:[^()]|\([^()]*\))*\)\)|\blet\s[^;&|#]*|\$\{\w+\[[^\]]*\]")
# what may come before a command's name: variables set for it alone (`OMP_NUM_THREADS=2
# srun ...`), then exec, time or command
_LEAD = (r"\s*(?:[A-Za-z_]\w*=(?:\"[^\"]*\"|'[^']*'|[^\s;&|]*)\s+)*"
         r"(?:(?:exec|time|command)\s+)*")
_LAUNCH = re.compile(rf"^(?P<lead>{_LEAD})(?P<cmd>srun|mpirun|mpiexec)(?=\s|$)(?P<rest>.*)$")
# srun after another command on its line (`cd run && srun ./a`, `x=$(srun hostname)`)
_SRUN_LATER = re.compile(rf"(?:[;&|(]|\$\()(?:{_LEAD})srun(?=\s|$)")
# IBM's launchers under LSF (CSM's jsrun; lrun, LLNL's wrapper of it): no other scheduler has them
_LSF_LAUNCH = re.compile(rf"^{_LEAD}(?P<cmd>jsrun|lrun)(?=\s|$)")
# Cray's ALPS launcher (XE/XC systems under PBS or Torque): runs only where ALPS does
_ALPS_LAUNCH = re.compile(rf"^{_LEAD}aprun(?=\s|$)")
# TACC's MPI launcher (its Slurm clusters): found at no other center
_TACC_LAUNCH = re.compile(rf"^{_LEAD}ibrun(?=\s|$)")
_LAUNCHER_HINT = {"slurm": "srun", "flux": "flux run", "pbs": "mpirun/mpiexec",
                  "sge": "mpirun/mpiexec"}


def _meanings(dialect: str, table: dict[str, dict[str, str | None]],
              one_task_cpus: bool = False, copies: bool = False) -> dict[str, str]:
    names = {v[dialect]: k for k, v in table.items() if v.get(dialect)}
    if dialect == "pbs":
        names["NCPUS"] = "CPUs per task" if one_task_cpus else "first chunk's threads"
    if dialect == "flux":
        names["FLUX_JOB_CC"] = _COPY_ID[copies]
    return names | _ALIASES.get(dialect, {})


def flux_copies(spec) -> bool:
    """The job is a flux job's --cc copies (read as an array, $FLUX_JOB_CC its index)."""
    return bool(spec.array) and FLUX_COPIES in spec.metadata


def one_task_cpus(spec) -> bool:
    """The job is one task of several CPUs (Grid Engine's NSLOTS, PBS Pro's NCPUS are
    that task's CPUs); not where a PBS chunk's ompthreads sets NCPUS apart."""
    r = spec.resources
    threads = any(d.dialect == "pbs" and d.option.endswith(":ompthreads")
                  for d in spec.unknown)
    return (r.tasks or 1) == 1 and (r.nodes or 1) == 1 and (r.tasks_per_node or 1) == 1 \
        and (r.cpus_per_task or 1) > 1 and not threads


def _own_names(body: str, names: tuple[str, ...]) -> set[str]:
    """Those of `names` the script sets itself (`QUEUE=x`, `export NCPUS=4`, `for JOB_ID
    in`): its own variables, left alone."""
    return {n for n in names
            if re.search(rf"(?:^|[\s;&|(])(?:(?:export|local|declare|readonly)\s+"
                         rf"(?:-\w+\s+)*)?{n}=|\b(?:for|read)\s+(?:-\w+\s+)*{n}\b",
                         body, re.M)}


def _vars(one_task_cpus: bool) -> dict[str, dict[str, str | None]]:
    """The variable table; for a job of one task of several CPUs, Grid Engine's NSLOTS (the
    slots of a shared-memory PE) is that task's CPUs, not a task count."""
    if not one_task_cpus:
        return _VARS
    table = {k: dict(v) for k, v in _VARS.items()}
    table["task count"]["sge"] = None
    table["CPUs per task"]["sge"] = "NSLOTS"
    return table


# The lines each scheduler reads as its directives (RFC 36 for Flux).
SENTINELS = {
    "slurm": re.compile(r"^#SBATCH"),  # sbatch: only at a line's start
    "pbs": re.compile(r"^[ \t]*#PBS"),
    "lsf": re.compile(r"^[ \t]*#BSUB"),
    "flux": re.compile(r"^[ \t]*(?:#flux:|# flux:|#FLUX:|# FLUX:)"),
    "sge": re.compile(r"^#\$(?=\s|-|$)"),
}
_SENTINEL_WORDS = {"slurm": "#SBATCH", "pbs": "#PBS", "lsf": "#BSUB", "flux": "#flux:",
                   "sge": "#$"}


def _comment_out_leading(body: str, target: str) -> tuple[str, int]:
    """The body with `target`'s directive lines in its leading block of blank and comment
    lines made plain comments by a second `#` (`##PBS`), and how many: the target's submit
    command would read them after the rendered header, over it (the engine's job name and
    its token among them), though the source's scheduler never read them (or, sbatch's
    #PBS/#BSUB lines, read them into the header: slurm_wrappers)."""
    rx, out, count, leading = SENTINELS.get(target), [], 0, True
    if rx is None:
        return body, 0
    for line in body.split("\n"):
        stripped = line.strip()
        if leading and stripped and not stripped.startswith("#"):
            leading = False
        if leading and rx.match(line):
            line, count = re.sub(r"^([ \t]*)#", r"\1##", line, count=1), count + 1
        out.append(line)
    return "\n".join(out), count


_SHELL_NAMES = {"sh", "bash", "dash", "ash", "ksh", "mksh", "zsh", "csh", "tcsh"}


def interpreter_of(shell: str | None) -> str | None:
    """The program a `#!` line runs the script with, where it is no shell (`python3` of
    `/usr/bin/env python3`, `Rscript`); None for a shell or where none is said."""
    words = (shell or "").split()
    if words and words[0].rsplit("/", 1)[-1] == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    if not words:
        return None
    name = words[0].rsplit("/", 1)[-1]
    return None if name in _SHELL_NAMES else name


def program_notes(body: str, source: str, target: str, shell: str | None,
                  first_line: int = 1) -> list[str]:
    """A body a program that is no shell runs (`#!/usr/bin/env python3`) reads the
    scheduler's variables by name (`os.environ["SLURM_JOB_ID"]`), which the translation
    (a shell's `$NAME` only) does not rewrite: one note a line naming them."""
    program = interpreter_of(shell)
    if program is None or source == target or not body:
        return []
    pattern = re.compile(r"(?<![\w$])" + _NAMES.get(source, re.escape(_PREFIX[source]) + r"\w+"))
    notes = []
    for n, line in enumerate(body.split("\n"), first_line):
        if found := list(dict.fromkeys(m.group(0) for m in pattern.finditer(line))):
            notes.append(f"kept: line {n}: {', '.join(found)} read by the {program} body, "
                         f"which is not translated (a shell's $NAME is): {target} does not "
                         f"set {'it' if len(found) == 1 else 'them'}")
    return notes


# Slurm's burst buffer directives (burst_buffer.conf's Directive: #DW for the datawarp
# plugin, #BB_LUA for the lua one; #BB for persistent buffers): read by sbatch from the
# leading block as #SBATCH lines are
_BURST_BUFFER = re.compile(r"^#(?:BB_LUA|BB|DW)(?=\s|$)")
_BURST_BUFFER_VARS = re.compile(r"\$\{?(DW_(?:JOB|PERSISTENT)_\w+)")


def burst_buffer_notes(body: str, source: str, target: str, first_line: int = 1) -> list[str]:
    """One report a burst buffer line a Slurm script's leading block holds, where the
    target is another scheduler: the line stays a plain comment there, so the job would
    run without the buffer and its staging of files in and out."""
    if source != "slurm" or target == "slurm":
        return []
    notes: list[str] = []
    leading = True
    for n, line in enumerate(body.split("\n"), first_line):
        stripped = line.strip()
        leading = leading and (not stripped or stripped.startswith("#"))
        if leading and _BURST_BUFFER.match(line):
            staged = check_burst_buffer_line(n, line)
            why = "" if staged is None else ("; not carried as the job's diamond stage "
                                             f"entry: {burst_buffer_stage_reason(staged)}")
            notes.append(f"dropped: line {n}: `{stripped}` (a Slurm burst buffer directive: "
                         f"{target} has none, so the job runs without that buffer, and "
                         f"files it stages in or out are not moved{why})")
        elif notes and not leading and (used := _BURST_BUFFER_VARS.findall(line)):
            notes.append(f"kept: line {n}: ${', $'.join(dict.fromkeys(used))} (the burst "
                         f"buffer's path, set by Slurm) is not set under {target}")
    return notes


# a here-document's operator: `<<WORD`, `<<-WORD`, `<< 'WORD'`, `<<"WORD"`, `<<\WORD` (not
# the here-string `<<<`); the word quoted (in part) means nothing in its lines is expanded
_HEREDOC = re.compile(r"""(?<![<\w])<<(?!<)(-?)\s*(\\?)(['"]?)([A-Za-z_][\w.-]*)\3""")


def heredoc_lines(lines: list[str]) -> dict[int, bool]:
    """The indexes of `lines` inside a here-document (its text, not its closing word), each
    with whether its word was quoted: the shell expands nothing in those lines then."""
    inside: dict[int, bool] = {}
    pending: list[tuple[str, bool, bool]] = []  # (word, quoted, tabs stripped), in order
    for i, line in enumerate(lines):
        if pending:
            word, quoted, tabs = pending[0]
            if (line.lstrip("\t") if tabs else line) == word:
                pending.pop(0)
            else:
                inside[i] = quoted
            continue
        if line.lstrip().startswith("#"):
            continue
        pending = [(m.group(4), bool(m.group(2) or m.group(3)), m.group(1) == "-")
                   for m in _HEREDOC.finditer(line)]
    return inside


def translate_body(body: str, source: str, target: str, *, first_line: int = 1,
                   one_task_cpus: bool = False, copies: bool = False,
                   shell: str | None = None) -> tuple[str, list[str]]:
    """(the body for `target`, one report per line that kept something untranslated);
    `first_line`: the body's first line number in the whole script, for the reports;
    `one_task_cpus`: the job is one task of several CPUs (its slots are that task's CPUs);
    `copies`: a flux job of --cc copies, read as an array ($FLUX_JOB_CC its index); for a
    flux `target`, an array a Flux site runs as one job per task, its index in
    $FLUX_JOB_CC. `shell`: the script's `#!` interpreter: a shell's (sh or csh) body read
    under flux gets the source's submit directory variable set as its first line (flux has
    none; unset, `cd $PBS_O_WORKDIR` went to the home), said. Read from flux, those lines
    go and the variables they set are read as the submit directory, the target's own."""
    if source == target or not body:
        return body, []
    set_by_flux: tuple[str, ...] = ()  # the submit directory, as a translation into flux set
    if source == "flux":
        body, set_by_flux, first_line = _without_submit_directory_lines(body, first_line)
    body, quieted = _comment_out_leading(body, target)
    table = _vars(one_task_cpus)
    if copies and target == "flux":
        table = {**table, "array index": {**table["array index"], "flux": "FLUX_JOB_CC"}}
    names = _meanings(source, table, one_task_cpus, copies) | \
        dict.fromkeys(set_by_flux, "submit directory")
    prefix = _PREFIX[source]
    own = _own_names(body, _UNPREFIXED.get(source, ()))
    pattern = _NAMES.get(source, re.escape(prefix) + r"\w+")
    if set_by_flux:
        pattern = rf"(?:{pattern}|(?:{'|'.join(set_by_flux)})\b)"
    if own:  # the script's own variables of those names are not the scheduler's
        pattern = rf"(?!(?:{'|'.join(own)})\b){pattern}"
    var = re.compile(r"(\$\{?)(" + pattern + ")")
    # in arithmetic a variable needs no `$`: $((LSB_JOBINDEX+9)), ${FILES[SGE_TASK_ID]}
    bare = re.compile(r"()(?<![\w${])(" + pattern + r")(?!\w)")
    tmpdir = {_TMPDIR[source], _TMPDIR[target]} != {_TMPDIR["pbs"]} \
        and not _own_names(body, ("TMPDIR",))
    omp = source == "pbs" and not _own_names(body, ("OMP_NUM_THREADS",))
    program = shell_program(shell or "/bin/bash")
    csh = program in ("csh", "tcsh")
    # where the target has no submit directory variable (flux), a shell body sets the
    # source's to where the job starts
    set_here = target == "flux" and (csh or interpreter_of(shell) is None)
    defined: dict[str, int] = {}  # the variables set so, each with its first line
    out, notes = [], []
    if quieted:
        word = _SENTINEL_WORDS[target]
        notes.append(f"approximated: {quieted} {word} line(s) at the top of the body made "
                     f"#{word} comments, so {target} does not read them after the header, "
                     f"which says what the {source} job asks (a script of both headers: read "
                     f"it as {target} to keep them)")
    notes += burst_buffer_notes(body, source, target, first_line)
    lines = body.split("\n")
    in_heredoc = heredoc_lines(lines)
    for n, line in enumerate(lines, first_line):
        if line.lstrip().startswith("#"):
            out.append(line)
            continue
        if in_heredoc.get(n - first_line):  # a quoted here-document's text: as written
            if _launcher(line, n, source, target) != (line, None):
                notes.append(_heredoc_launcher(n))
            out.append(line)
            continue
        missing: list[str] = []

        def swap(m: re.Match[str], missing: list[str] = missing, n: int = n) -> str:
            meaning = names.get(m.group(2))
            new = table.get(meaning, {}).get(target) if meaning else None
            if new is None and set_here and meaning == "submit directory":
                defined.setdefault(m.group(2), n)
                return m.group(0)
            if new is None:
                missing.append(f"${m.group(2)}" + (f" ({meaning})" if meaning else ""))
                return m.group(0)
            return m.group(1) + new
        line = var.sub(swap, line)
        line = _ARITH.sub(lambda a: bare.sub(swap, a.group(0)), line)
        if missing:
            notes.append(f"kept: line {n}: {', '.join(dict.fromkeys(missing))} has no "
                         f"{target} equivalent")
        if tmpdir and _TMPDIR_USE.search(line):
            notes.append(f"kept: line {n}: $TMPDIR: under {source} it {_TMPDIR[source]}; "
                         f"under {target} it {_TMPDIR[target]}")
        if omp and _OMP_USE.search(line):
            notes.append(f"kept: line {n}: $OMP_NUM_THREADS: PBS Pro sets it (the chunk's "
                         f"ompthreads, else its ncpus); the {target} job written here does "
                         "not: set it in the script (export OMP_NUM_THREADS=N)")
        launched, note = _launcher(line, n, source, target)
        if n - first_line in in_heredoc and (note or launched != line):
            note = _heredoc_launcher(n)
        else:
            line = launched
        if note:
            notes.append(note)
        out.append(line)
    for name, n in defined.items():
        line = submit_directory_line(name, csh)
        notes.append(f"kept: line {n}: ${name} (submit directory): {target} sets none, so "
                     f"`{line.split('  #')[0]}` was added as the body's first line (flux "
                     "starts the job in the directory it was submitted from)")
    head = [submit_directory_line(name, csh) for name in defined]
    return "\n".join(head + out), notes


def _without_submit_directory_lines(body: str, first_line: int
                                    ) -> tuple[str, tuple[str, ...], int]:
    """(`body` without the `submit_directory_line`s a translation into flux began it with,
    the variables they set, the first line number of what is left). A variable the body
    sets again itself is its own: its line stays."""
    lines = body.split("\n")
    added = next((n for n, x in enumerate(lines) if submit_directory_name(x) is None),
                 len(lines))
    rest = "\n".join(lines[added:])
    named = [submit_directory_name(x) or "" for x in lines[:added]]
    own = _own_names(rest, tuple(named))
    kept = [x for x, name in zip(lines[:added], named, strict=True) if name in own]
    return "\n".join(kept + lines[added:]), tuple(n for n in named if n not in own), \
        first_line + added - len(kept)


def _heredoc_launcher(n: int) -> str:
    return (f"kept: line {n}: a launcher inside a here-document (the text of a file or of a "
            "command's input, not a command of this job) is left as written")


def _launcher(line: str, n: int, source: str, target: str) -> tuple[str, str | None]:
    m = _LAUNCH.match(line)
    fm = re.match(rf"^(?P<lead>{_LEAD})flux\s+run(?=\s|$)(?P<rest>.*)$", line)
    if fm and target == "slurm":
        got = _flux_options(fm.group("rest"), _FLUX_SRUN)
        if got is not None:
            opts, rest = got
            return f"{fm.group('lead')}srun{''.join(' ' + o for o in opts)}{rest}", None
        return line, (f"kept: line {n}: flux run options without an srun equivalent; the "
                      "line is unchanged")
    if target != "lsf" and (jm := _LSF_LAUNCH.match(line)):
        return line, (f"kept: line {n}: {jm.group('cmd')} (IBM's launcher under LSF) has no "
                      f"{target} equivalent (use {_LAUNCHER_HINT.get(target, 'mpirun')} or "
                      "the site's launcher)")
    if _ALPS_LAUNCH.match(line):
        return line, (f"kept: line {n}: aprun (Cray's ALPS launcher) has no {target} "
                      f"equivalent (use {_LAUNCHER_HINT.get(target, 'mpirun')} or the "
                      "site's launcher)")
    if target != "slurm" and _TACC_LAUNCH.match(line):
        return line, (f"kept: line {n}: ibrun (TACC's MPI launcher) has no {target} "
                      f"equivalent (use {_LAUNCHER_HINT.get(target, 'mpirun')} or the "
                      "site's launcher)")
    if not m and target != "slurm" and _SRUN_LATER.search(line):
        return line, (f"kept: line {n}: srun has no {target} equivalent (use "
                      f"{_LAUNCHER_HINT.get(target, 'mpirun')}, or the site's launcher)")
    if not m:
        sub = re.match(rf"^{_LEAD}flux\s+([a-z][\w-]*)", line)
        if target != "flux" and sub:  # any flux command: only a flux instance runs it
            launches = sub.group(1) in ("run", "submit", "bulksubmit", "batch", "alloc")
            hint = (f"use {_LAUNCHER_HINT.get(target, 'mpirun')} or the site's launcher"
                    if launches else "only a flux instance runs it")
            return line, (f"kept: line {n}: `flux {sub.group(1)}` has no {target} "
                          f"equivalent ({hint})")
        return line, None
    cmd = m.group("cmd")
    if target != "flux":
        if cmd == "srun" and target != "slurm":
            return line, (f"kept: line {n}: srun has no {target} equivalent (use "
                          "mpirun/mpiexec, or the site's launcher)")
        return line, None
    flux_opts = _flux_options(m.group("rest"), _SRUN_FLUX if cmd == "srun" else _MPIRUN_FLUX)
    if flux_opts is None:
        return line, (f"kept: line {n}: {cmd} options without a flux run equivalent; "
                      "the line is unchanged")
    opts, rest = flux_opts
    return f"{m.group('lead')}flux run{''.join(' ' + o for o in opts)}{rest}", None


def _flux_options(rest: str, table: dict[str, str]) -> tuple[list[str], str] | None:
    """Leading launcher options as flux run options, and the untouched command after
    them; None when an option has no equivalent or the line cannot be split."""
    try:
        words = shlex.split(rest, posix=True)
    except ValueError:
        return None
    opts: list[str] = []
    i = 0
    while i < len(words) and words[i].startswith("-"):
        word = words[i]
        key, eq, value = word.partition("=")
        if key not in table and re.fullmatch(r"-[A-Za-z](?:[0-9]+|\$\{?\w+\}?)", word) \
                and word[:2] in table and word[:2] not in _FLAGS:
            key, eq, value = word[:2], "=", word[2:]  # a short option's value attached: -n4
        if key not in table:
            return None
        if key in _FLAGS:
            opts.append(table[key])
            i += 1
            continue
        if not eq:
            if i + 1 >= len(words):
                return None
            value = words[i + 1]
            i += 1
        if not re.fullmatch(r"\$?\{?\w+\}?", value):
            return None
        opts.append(f"{table[key]}={value}" if table[key].startswith("--")
                    else f"{table[key]} {value}")
        i += 1
    # the command after the options, as written (quoting kept): drop the consumed prefix
    consumed = words[:i]
    text = rest
    for w in consumed:
        pos = text.find(w)
        if pos < 0 or text[:pos].strip():  # a quoted option: not split the same way
            return None
        text = text[pos + len(w):]
    return opts, text
