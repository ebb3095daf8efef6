"""Scheduler dialects: batch-script syntax (`*_script`) and commands/outputs (`*_commands`).

Pure code: text in, models out; models in, text out. No I/O here.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..model import BadInput

DIALECTS = ("slurm", "pbs", "lsf", "flux", "sge")
_SCRIPT_CLASSES = {"slurm": "SlurmScript", "pbs": "PbsScript", "lsf": "LsfScript",
                   "flux": "FluxScript", "sge": "SgeScript"}
_COMMAND_CLASSES = {"slurm": "SlurmCommands", "pbs": "PbsCommands", "lsf": "LsfCommands",
                    "flux": "FluxCommands", "sge": "SgeCommands"}


def _check(name: str) -> str:
    key = (name or "").lower()
    if key not in DIALECTS:
        from ..wording import meant

        raise BadInput(f"unknown dialect {name!r} ({meant(name or '', list(DIALECTS))}"
                       f"accepted: {', '.join(DIALECTS)})")
    return key


def get_script_dialect(name: str) -> Any:
    key = _check(name)
    mod = importlib.import_module(f".{key}_script", __name__)
    return getattr(mod, f"{key}_script")


def get_commands(name: str, **options: Any) -> Any:
    """A scheduler's argv builders and output parsers; `options` go to its constructor
    (e.g. `jobcomp=True` for Slurm without slurmdbd)."""
    key = _check(name)
    mod = importlib.import_module(f".{key}_commands", __name__)
    cls = getattr(mod, _COMMAND_CLASSES[key])
    import inspect

    accepted = inspect.signature(cls).parameters
    return cls(**{k: v for k, v in options.items() if k in accepted})
