"""Detect a batch script's dialect and translate it to another one."""

from __future__ import annotations

import re

from ..model import BadInput, JobSpec
from .flux_script import flux_script
from .lsf_script import lsf_script
from .pbs_script import pbs_script
from .slurm_script import slurm_script

SCRIPT_DIALECTS = {d.name: d for d in (slurm_script, pbs_script, lsf_script, flux_script)}
_ALIASES = {"sbatch": "slurm", "torque": "pbs", "pbspro": "pbs", "openpbs": "pbs",
            "bsub": "lsf", "spectrum-lsf": "lsf"}
# The lines each scheduler reads as its directives (RFC 36 for Flux).
SENTINELS = {
    "slurm": re.compile(r"^[ \t]*#SBATCH"),
    "pbs": re.compile(r"^[ \t]*#PBS"),
    "lsf": re.compile(r"^[ \t]*#BSUB"),
    "flux": re.compile(r"^[ \t]*(?:#flux:|# flux:|#FLUX:|# FLUX:)"),
}


def count_sentinels(text: str) -> dict[str, int]:
    lines = text.splitlines()
    return {name: sum(1 for ln in lines if rx.match(ln)) for name, rx in SENTINELS.items()}


def detect_dialect(text: str) -> str:
    """The dialect with strictly the most directive lines; BadInput when none or a tie."""
    counts = count_sentinels(text)
    best = max(counts.values())
    winners = [n for n, c in counts.items() if c == best]
    if best == 0:
        raise BadInput("no batch directives found (looked for #SBATCH, #PBS, #BSUB, #flux:); "
                       "pass the source dialect explicitly")
    if len(winners) > 1:
        raise BadInput(f"ambiguous dialect: {' and '.join(winners)} both have {best} "
                       "directive lines; pass the source dialect explicitly")
    return winners[0]


def get_script_dialect(name: str):
    key = _ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in SCRIPT_DIALECTS:
        raise BadInput(f"unknown dialect {name!r}; expected one of "
                       f"{', '.join(SCRIPT_DIALECTS)}")
    return SCRIPT_DIALECTS[key]


def translate(text: str, to: str, from_: str | None = None) -> tuple[str, list[str], JobSpec]:
    """Script in one dialect -> (script in `to`, one warning per dropped/approximated
    directive, the parsed JobSpec)."""
    target = get_script_dialect(to)
    source = get_script_dialect(from_) if from_ else get_script_dialect(detect_dialect(text))
    try:
        spec = source.parse_script(text)
        rendered = target.render_script(spec)
    except BadInput:
        raise
    except (ValueError, LookupError, TypeError, AttributeError) as exc:  # safety net
        raise BadInput(f"could not translate this {source.name} script: {exc}") from exc
    warnings = list(spec.metadata.get("parse_notes", [])) + rendered.warnings
    others = {n: c for n, c in count_sentinels(spec.script or "").items()
              if c and n != source.name}
    for name, count in others.items():
        verb = "are read by" if name == target.name else "stay in the body for"
        warnings.append(f"kept: {count} {name} directive line(s) in the body; they {verb} "
                        f"{target.name if name == target.name else name}")
    return rendered.script, warnings, spec
