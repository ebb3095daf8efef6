"""Slurm's multifactor priority as a site reports it: pure parsers, text in, model out.

- `scontrol show config` (already read for the node timeouts): `PriorityType`,
  `PriorityWeightAge = 1000` and the other weights, `PriorityWeightTRES = (null)`,
  `PriorityFavorSmall = No`, `PriorityFlags = FAIR_TREE,...`.
- `PRIORITY_PROBE`'s sections: the user's own rows of `sshare -nP -U -o
  Account,User,FairShare,LevelFS` (`physics|bob|0.620000|1.25`; FairShare is the factor
  the configured algorithm gives, Fair Tree's rank or the classic 2^(-usage/shares); the
  account column may be indented by depth), `sacctmgr -nP show qos format=Name,Priority`
  (`normal|0`) and the user's DefaultAccount (`sacctmgr -nP show user`).
- `sprio -h -o %i|%Y|%r` (`1234|1840|batch`): each waiting job's priority, one line per
  partition it may run in.
"""

from __future__ import annotations

import re

from ..digits import ascii_digits
from ..model import SlurmPriority
from .outputs_common import known_count

# a failed command of the probe: this word, then its exit status (`usage_unread`'s form)
_EXIT = "exit status"
_SECTIONS = ("#sshare", "#qos", "#default_account")
# the user's fair share rows, the QOS priorities and the default account, each after its
# section's mark; a command that fails prints its error and exit status in its section
PRIORITY_PROBE = (
    'u=$(id -un); echo "#sshare"; timeout 10 sshare -nP -U -u "$u" '
    "-o Account,User,FairShare,LevelFS 2>&1 || echo \"" + _EXIT + ' $?"; echo "#qos"; '
    "timeout 10 sacctmgr -nP show qos format=Name,Priority 2>&1 || echo \"" + _EXIT
    + ' $?"; echo "#default_account"; timeout 10 sacctmgr -nP show user "$u" '
    "format=DefaultAccount 2>&1 || echo \"" + _EXIT + ' $?"; exit 0')
# each waiting job's priority, by partition (a site without the multifactor plugin says
# so, and nothing is read)
SPRIO_PROBE = "timeout 10 sprio -h -o '%i|%Y|%r' 2>&1; exit 0"
MULTIFACTOR = "priority/multifactor"

_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_WEIGHT = re.compile(r"PriorityWeight(\w+)")


def _config(text: str) -> dict[str, str]:
    """`KEY = VALUE` lines of `scontrol show config` whose key begins with Priority."""
    out = {}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq and key.strip().startswith("Priority"):
            out[key.strip()] = value.strip()
    return out


def _sections(text: str) -> dict[str, list[str]]:
    """The probe's output split at its section marks: mark -> its non-empty lines."""
    out: dict[str, list[str]] = {}
    here: list[str] | None = None
    for line in text.splitlines():
        if line.strip() in _SECTIONS:
            here = out.setdefault(line.strip(), [])
        elif here is not None and line.strip():
            here.append(line.strip())
    return out


def _why(lines: list[str], command: str) -> str:
    """Why a section gave nothing: its command failed (exit status, last error line), or
    printed nothing it reads."""
    said = [x for x in lines if not x.startswith(_EXIT)]
    status = next((x[len(_EXIT):].strip() for x in lines if x.startswith(_EXIT)), None)
    if status == "124":
        return f"{command} did not answer within 10 s"
    last = said[-1][:200] if said else ""
    if status:
        return f"{command} failed (exit {status})" + (f": {last}" if last else "")
    return f"{command} printed " + (f"no line it reads: {last}" if last else "nothing")


def priority_plugin(config: str) -> str | None:
    """`PriorityType` of `scontrol show config` (None: no such line, the config not read)."""
    return _config(config).get("PriorityType") or None


def parse_priority(config: str, probe: str | None) -> SlurmPriority | None:
    """The multifactor settings of `scontrol show config` and the user's factors of
    `PRIORITY_PROBE`'s output (None: not run); None without a PriorityType line."""
    conf = _config(config)
    if "PriorityType" not in conf:
        return None
    weights: dict[str, int] = {}
    unread_weights: list[str] = []
    for key, value in conf.items():
        if not (m := _WEIGHT.fullmatch(key)) or m.group(1) == "TRES":
            continue
        # a mark of none (NO_VAL, INFINITE) or a value of no number is no weight: said
        if (weight := known_count(value) if ascii_digits(value) else None) is None:
            unread_weights.append(f"{key} = {value or '(empty)'}")
        else:
            weights[m.group(1).lower()] = weight
    tres = conf.get("PriorityWeightTRES", "")
    flags = [f.strip().upper() for f in conf.get("PriorityFlags", "").split(",") if f.strip()]
    out = SlurmPriority(
        plugin=conf["PriorityType"], weights=weights,
        tres_weights=tres if tres and tres != "(null)" else None,
        favor_small=conf.get("PriorityFavorSmall", "").lower() in ("yes", "1", "true"),
        flags=flags)
    if unread_weights:
        out.unread["weights"] = ("not a weight (a mark of none or no whole number): "
                                 + ", ".join(unread_weights))
    if probe is None:
        out.unread.update({"fair share": "sshare was not run", "qos": "sacctmgr was not run"})
        return out
    parts = _sections(probe)
    shares: dict[str, float] = {}
    levels: dict[str, str] = {}
    for line in parts.get("#sshare", []):
        f = [x.strip() for x in line.split("|")]
        if len(f) >= 3 and f[0] and f[1] and _NUMBER.fullmatch(f[2]):
            shares[f[0]] = float(f[2])
            if len(f) > 3 and f[3]:
                levels[f[0]] = f[3]
    qos: dict[str, int] = {}
    for line in parts.get("#qos", []):
        f = [x.strip() for x in line.split("|")]
        if len(f) >= 2 and f[0] and " " not in f[0] and ascii_digits(f[1]) \
                and (priority := known_count(f[1])) is not None:
            qos[f[0]] = priority
    default = [x for x in parts.get("#default_account", [])
               if re.fullmatch(r"[\w.-]+", x) and not x.startswith(_EXIT)]
    out.fair_share = shares or None
    out.level_fs = levels or None
    out.qos_priority = qos or None
    out.default_account = default[0] if default else None
    if not shares:
        out.unread["fair share"] = _why(parts.get("#sshare", []), "sshare -U")
    if not qos:
        out.unread["qos"] = _why(parts.get("#qos", []), "sacctmgr show qos")
    return out


def parse_job_priorities(text: str) -> dict[str, int] | None:
    """`sprio -h -o '%i|%Y|%r'` -> {job id: its highest priority over its partitions};
    None where no line reads (the plugin is not multifactor, sprio failed). A priority
    that is a mark of none (4294967294, NO_VAL) is not known: its job is left out."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) < 2 or not re.fullmatch(r"[0-9]+(?:_[0-9]+)?", f[0]) or not ascii_digits(f[1]):
            continue
        # a mark of none (NO_VAL, INFINITE) is no priority: the job's is not known, so it
        # is not counted behind the new job
        if (priority := known_count(f[1])) is not None:
            out[f[0]] = max(out.get(f[0], 0), priority)
    return out or None
