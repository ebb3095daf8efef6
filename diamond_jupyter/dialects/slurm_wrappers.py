"""sbatch's PBS and LSF compatibility: the `#PBS` and `#BSUB` lines of a Slurm script.

Unless `--ignore-pbs` is given, sbatch reads a script's `#BSUB` lines after its `#SBATCH`
lines (or, where there is none, its `#PBS` lines), anywhere in the first hundred lines
that are not comments, and applies what it understands of them over what `#SBATCH` said:
a job ported from PBS that keeps its old `#PBS -l walltime=` runs with that limit. This
reads them as sbatch does for the job's identity, files, mail, hold, begin time, array,
dependencies, time limit and exclusivity; each other option they give is said (read by
sbatch, not here), never dropped unsaid. Pure: text in, spec updated."""

from __future__ import annotations

import re

from ..model import JobSpec
from .scripts_common import note

_MAX_NON_COMMENTS = 100  # sbatch stops looking after so many lines that are not comments
# JobSpec fields sbatch's wrappers set, as the PBS and LSF readers read them
_FIELDS = ("name", "queue", "account", "stdout", "stderr", "hold", "begin", "mail_user",
           "mail_events", "dependencies", "array", "working_directory")
# what sbatch's PBS wrapper takes and does nothing with (-c -C -I -j -k -r -S -u -V -z)
_PBS_NO_OPS = ("-c", "-C", "-I", "-j", "-k", "-r", "-S", "-u", "-V", "-z")
_SIZES = ("nodes", "tasks", "tasks_per_node", "cpus_per_task", "gpus_per_node",
          "gpus_per_task", "memory_mb", "memory_per_cpu_mb")
_IGNORE = "#SBATCH --ignore-pbs turns it off"


def wrapper_lines(text: str) -> tuple[str, list[tuple[int, str]]] | None:
    """The `#BSUB` lines sbatch reads (or, where none, the `#PBS` ones) as (sentinel,
    [(line number, line)]); None where there are none. Each starts the line, as sbatch
    matches it; it stops looking after 100 lines that are not comments."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    for magic in ("#BSUB", "#PBS"):
        found, others = [], 0
        for n, line in enumerate(lines, start=1):
            if line.startswith(magic):
                found.append((n, line))
            elif not line.startswith("#"):
                others += 1
                if others > _MAX_NON_COMMENTS:
                    break
        if found:
            return magic, found
    return None


def apply_wrapper_lines(spec: JobSpec, text: str, ignored: bool) -> None:
    """Apply the `#PBS`/`#BSUB` lines sbatch reads over what the `#SBATCH` lines set in
    `spec` (nothing where `--ignore-pbs` was given: `ignored`), each line noted."""
    found = wrapper_lines(text)
    if found is None or ignored:
        return
    magic, lines = found
    if magic == "#PBS":
        from .pbs_script import PbsScript as Reader
    else:
        from .lsf_script import LsfScript as Reader  # type: ignore[assignment]
    what = "PBS" if magic == "#PBS" else "LSF"
    blank = JobSpec()
    for n, line in lines:
        try:
            one = Reader().parse_script(f"#!/bin/bash\n{line}\n")
        except Exception as exc:  # noqa: BLE001 - sbatch's own reading may differ: said
            why = re.sub(r"^line [0-9]+: ", "", str(exc))  # the line of the one-line script
            note(spec, f"line {n}: `{line.strip()}` is read by sbatch ({what} "
                       f"compatibility; {_IGNORE}) but not here: {why}")
            continue
        applied, unread = [], []
        for key in _FIELDS:
            if (value := getattr(one, key)) != getattr(blank, key):
                setattr(spec, key, value)
                applied.append(key.replace("_", " "))
        if (wall := one.resources.walltime_s) is not None:
            spec.resources.walltime_s = wall
            applied.append("time limit")
        if one.constraints.exclusive:
            spec.constraints.exclusive = True
            applied.append("exclusive")
        if any(getattr(one.resources, k) is not None for k in _SIZES):
            unread.append("its sizes (the #SBATCH ones are kept)")
        env = one.environment
        if env.variables or env.passed:  # sbatch adds them to --export (none else: ALL)
            unread.append("its variables (-v)")
        unread += [d.option for d in one.unknown
                   if not (magic == "#PBS" and d.option in _PBS_NO_OPS)]
        said = f"line {n}: `{line.strip()}` is read by sbatch after the #SBATCH lines " \
               f"({what} compatibility; {_IGNORE})"
        if applied:
            note(spec, f"{said}: its {', '.join(applied)} taken over the #SBATCH ones")
        if unread:
            note(spec, f"{said}; not read here: {', '.join(unread)}")
