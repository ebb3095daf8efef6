"""Detect a batch script's dialect and translate it to another one."""

from __future__ import annotations

from typing import Literal

from ..model import BadInput, JobSpec
from ..wording import meant
from .body import (
    _SENTINEL_WORDS,
    SENTINELS,
    flux_copies,
    one_task_cpus,
    program_notes,
    translate_body,
)
from .flux_script import flux_script
from .lsf_script import lsf_script
from .pbs_script import pbs_script
from .scripts_common import live_components, resource_totals, split_header, summed_totals
from .sge_script import sge_script
from .slurm_script import slurm_script
from .staging import STAGING_DIALECTS, STAGING_LINES, STAGING_NOTES

SCRIPT_DIALECTS = {d.name: d for d in (slurm_script, pbs_script, lsf_script, flux_script,
                                         sge_script)}
_ALIASES = {"sbatch": "slurm", "torque": "pbs", "pbspro": "pbs", "openpbs": "pbs",
            "bsub": "lsf", "spectrum-lsf": "lsf", "gridengine": "sge", "grid-engine": "sge",
            "sog": "sge", "uge": "sge", "soge": "sge"}


def count_sentinels(text: str) -> dict[str, int]:
    lines = text.splitlines()
    return {name: sum(1 for ln in lines if rx.match(ln)) for name, rx in SENTINELS.items()}


def count_directives(text: str) -> dict[str, int]:
    """Each dialect's directive lines where its submit command reads them: the leading
    block of blank and comment lines (flux: from its first directive on), not the lines of
    a heredoc or a script the body writes out."""
    return {name: len(split_header(text, lambda ln, rx=rx: ln if rx.match(ln) else None,
                                   flux_rules=name == "flux").directives)
            for name, rx in SENTINELS.items()}


def detect_dialect(text: str) -> str:
    """The dialect with strictly the most directive lines in the leading block (else, where
    none is there, in the whole text); BadInput when none or a tie."""
    counts = count_directives(text)
    if not any(counts.values()):
        counts = count_sentinels(text)
    best = max(counts.values())
    winners = [n for n, c in counts.items() if c == best]
    if best == 0:
        raise BadInput("no batch directives found (looked for #SBATCH, #PBS, #BSUB, #flux:, #$); "
                       "pass the source dialect explicitly")
    if len(winners) > 1:
        raise BadInput(f"ambiguous dialect: {' and '.join(winners)} both have {best} "
                       "directive lines; pass the source dialect explicitly")
    return winners[0]


def get_script_dialect(name: str):
    key = _ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in SCRIPT_DIALECTS:
        hint = meant(name, list(SCRIPT_DIALECTS)).strip()
        raise BadInput(f"unknown dialect {name!r}; expected one of "
                       f"{', '.join(SCRIPT_DIALECTS)}" + (f" ({hint})" if hint else ""))
    return SCRIPT_DIALECTS[key]


def translate(text: str, to: str, from_: str | None = None, *,
              dependency_ids: Literal["source", "target"] = "source"
              ) -> tuple[str, list[str], JobSpec]:
    """Script in one dialect -> (script in `to`, one warning per dropped/approximated
    directive, the parsed JobSpec). A dependency's job ids are the source site's jobs
    (dropped for another scheduler, said), unless `dependency_ids` is "target": the script
    already names jobs of `to`'s site."""
    if dependency_ids not in ("source", "target"):
        raise BadInput(f"dependency_ids {dependency_ids!r}: expected source (the ids name "
                       "jobs of the site the script was written for) or target (jobs of "
                       "the site it is translated for)")
    target = get_script_dialect(to)
    source = get_script_dialect(from_) if from_ else get_script_dialect(detect_dialect(text))
    if from_:
        _refuse_another_dialects_script(text, source.name)
    try:
        # a translation is submitted by hand: its own scheduler's staging lines stay as
        # written (qsub/bsub moves the files); only a diamond submit moves them itself
        spec = source.parse_script(text, carry_staging=False) \
            if source.name == target.name and source.name in STAGING_DIALECTS \
            else source.parse_script(text)
        if dependency_ids == "target":
            spec.dependencies = [d.model_copy(update={"scheduler": None})
                                 for d in spec.dependencies]
        first = len(text.splitlines()) - len((spec.script or "").splitlines()) + 1
        body, body_notes = translate_body(spec.script or "", source.name, target.name,
                                          first_line=first,
                                          one_task_cpus=one_task_cpus(spec),
                                          copies=flux_copies(spec), shell=spec.shell)
        body_notes += program_notes(spec.script or "", source.name, target.name, spec.shell,
                                    first_line=first)
        spec.script = body if spec.script is not None else None
        rendered = target.render_script(spec)
    except BadInput:
        raise
    except (ValueError, LookupError, TypeError, AttributeError) as exc:  # safety net
        raise BadInput(f"could not translate this {source.name} script: {exc}") from exc
    warnings = _staging_dropped(spec, target.name, list(spec.metadata.get("parse_notes", [])))
    warnings += [w for w in rendered.warnings if w not in warnings] + body_notes  # said once
    warnings += _check_request(spec, target, rendered.script, warnings)
    others = {n: c for n, c in count_sentinels(spec.script or "").items()
              if c and n != source.name}
    for name, count in others.items():
        verb = "are read by" if name == target.name else "stay in the body for"
        warnings.append(f"kept: {count} {name} directive line(s) in the body; they {verb} "
                        f"{target.name if name == target.name else name}")
    return rendered.script, warnings, spec


def _refuse_another_dialects_script(text: str, source: str) -> None:
    """BadInput when a script said to be `source` holds none of its directives where they
    are read, and another dialect's there: every one of those was passed over (kept as
    comments), and the translation asked for nothing the script asks for."""
    counts = count_directives(text)
    if counts.get(source):
        return
    found = {n: c for n, c in counts.items() if c}
    if not found:
        return  # no directives at all: a plain script, read as the dialect given
    other = max(found, key=lambda n: found[n])
    raise BadInput(f"the script was given as {source}, but holds no "
                   f"{_SENTINEL_WORDS.get(source, source)} directive, and "
                   f"{found[other]} {_SENTINEL_WORDS.get(other, other)} one(s) ({other}'s), "
                   f"which a {source} reading passes over: translate it from {other}, or give "
                   "no source dialect to have it detected")


def _staging_dropped(spec: JobSpec, target: str, notes: list[str]) -> list[str]:
    """`notes` with each staging line's "carried" said truthfully for a translation: the
    script submitted by hand to `target` stages nothing (it has no such directive), so each
    entry is dropped there, named with its line; a diamond submit carries it."""
    carried = set(spec.metadata.get(STAGING_NOTES) or [])
    out = [n for n in notes if not (n in carried and n.startswith("carried:"))]
    said: dict[tuple[int, str], list[str]] = {}
    for rec in spec.metadata.get(STAGING_LINES) or []:
        said.setdefault((rec["line"], rec["entry"]), []).append(rec["direction"])
    for (line, entry), directions in said.items():
        ways = " and ".join(f"stage-{d}" for d in dict.fromkeys(directions))
        out.append(f"dropped: line {line}: staging entry {entry!r} ({target} has no directive "
                   "that moves it: submitted by hand the job runs without it; `diamond "
                   f"submit` of the original script moves it as the job's {ways})")
    return out


QUANTITIES = ("nodes", "tasks", "cpus", "gpus", "memory_mb")


def left_to_default(quantity: str, before: dict[str, int | None],
                    after: dict[str, int | None]) -> bool:
    """The target left `quantity` unwritten where its default gives what the job asked:
    every scheduler gives a job that asks for none one task (slot) of one CPU, which is on
    one node (Grid Engine has no -pe for one slot); one node of several tasks is not that
    (a PE's allocation rule may spread them)."""
    if after[quantity] is not None or before[quantity] != 1:
        return False
    return quantity in ("tasks", "cpus") or (quantity == "nodes"
                                             and (before["tasks"] or 1) == 1)
# Where each quantity is asked for, per dialect: named in reports and refusals.
_DIRECTIVES = {
    "slurm": {"nodes": "--nodes", "tasks": "--ntasks/--ntasks-per-node",
              "cpus": "tasks x --cpus-per-task", "gpus": "--gpus*/--gres=gpu",
              "memory_mb": "--mem/--mem-per-cpu"},
    "pbs": {"nodes": "-l select/nodes", "tasks": "-l select:mpiprocs / nodes:ppn",
            "cpus": "-l select:ncpus / ncpus", "gpus": "-l ngpus / nodes:gpus",
            "memory_mb": "-l mem/pmem / select:mem"},
    "lsf": {"nodes": "-nnodes / span[]", "tasks": "-n", "cpus": "-n / affinity[]",
            "gpus": "-gpu", "memory_mb": "-R rusage[mem] / -M"},
    "flux": {"nodes": "--nodes", "tasks": "--nslots/--tasks-per-node",
             "cpus": "--cores-per-slot/--cores", "gpus": "--gpus-per-slot/--gpus-per-node",
             "memory_mb": "(none)"},
    "sge": {"nodes": "(none: slots)", "tasks": "-pe NAME N", "cpus": "-pe smp N",
            "gpus": "-l gpu", "memory_mb": "-l h_vmem"},
}
_LABELS = {"nodes": "node(s)", "tasks": "task(s)", "cpus": "CPU(s)", "gpus": "GPU(s)",
           "memory_mb": "MB of memory"}
_WORDS = {"nodes": "node", "tasks": "task", "cpus": "cpu", "gpus": "gpu", "memory_mb": "mem"}


def request_totals(spec: JobSpec) -> dict[str, int | None]:
    """The whole job's nodes, tasks, CPUs, GPUs and memory (MB); None where the script
    does not say (the scheduler's default applies). A job of several shapes: summed over
    its components."""
    comps = live_components(spec)
    return summed_totals(comps) if comps else resource_totals(spec.resources)


def _check_request(spec: JobSpec, target, script: str, warnings: list[str]) -> list[str]:
    """Read the translation back: a larger request is refused (BadInput); a smaller or lost
    one is reported, naming the source directive, unless a warning already names it."""
    try:
        back = target.parse_script(script)
    except BadInput as exc:
        raise BadInput(f"refused: the {target.name} translation does not read back "
                       f"({exc})") from None
    before, after = request_totals(spec), request_totals(back)
    src = spec.source_dialect or "source"
    names = _DIRECTIVES.get(src, {})
    extra = []
    for q in QUANTITIES:
        was, now = before[q], after[q]
        if was is not None and now is not None and now > was:
            raise BadInput(f"refused: {target.name} cannot express the {src} request for "
                           f"{was} {_LABELS[q]} ({names.get(q, q)}) exactly; the "
                           f"translation would ask for {now}")
        if left_to_default(q, before, after):
            continue  # what the target's scheduler gives a job that asks for none
        if was is not None and (now is None or now < was):
            said = any(_WORDS[q] in w.lower() for w in warnings
                       if w.startswith(("dropped", "approximated")))
            if not said:
                extra.append(f"dropped: {was} {_LABELS[q]} -> "
                             f"{'unset' if now is None else now} ({src} {names.get(q, q)}: "
                             f"{target.name} does not carry it)")
    return extra
