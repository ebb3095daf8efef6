"""Limits read from text outputs of PBS Pro and Grid Engine: PBS reservations (`pbs_rstat
-f`), Grid Engine resource quota sets (`qconf -srqs`, sge_resource_quota(5)) and calendars
(`qconf -scal`, calendar_conf(5)). Each probe prints its exit status last (`RC_MARK`), so
a listing that failed is told from one that is empty.

Pure: text in, models out.
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo

from ..digits import ascii_digits
from ..model import PbsReservation, SgeCalendar, SgeQuotaFilter, SgeQuotaRule, SgeQuotaSet
from .outputs_common import clean, parse_local_time
from .pbs_text import CTIME_FORMATS, parse_full

RC_MARK = "#diamond-rc="


def with_status(command: str) -> list[str]:
    """`command` (constant text, no user input) run so its output ends with its exit
    status on a line of its own; its stderr joins its output (the reason it failed)."""
    return ["sh", "-c", f'out=$({command} 2>&1); rc=$?; printf "%s\\n{RC_MARK}%s\\n" '
            '"$out" "$rc"']


def split_status(stdout: str) -> tuple[str, int | None]:
    """A `with_status` output -> (the command's output, its exit status; None: the mark
    is missing, as from a probe of an older version)."""
    text, sep, rc = stdout.rstrip("\n").rpartition(f"\n{RC_MARK}")
    if not sep:
        if stdout.startswith(RC_MARK):  # no output at all
            rc = stdout[len(RC_MARK):].strip()
            return "", int(rc) if ascii_digits(rc) else None
        return stdout, None
    return text, int(rc.strip()) if ascii_digits(rc.strip()) else None


def _why(text: str, rc: int | None) -> str:
    said = " ".join(text.split())[:160] or "no output"
    return f"exit {rc}: {said}" if rc is not None else said


# -- PBS Pro reservations ------------------------------------------------------------
# a line when the server holds none; anything else a failing pbs_rstat prints is an error
_NO_RESV = re.compile(r"^\s*$|no (such )?reservation", re.I)


def parse_pbs_reservations(stdout: str, tz: tzinfo | None = None
                           ) -> tuple[list[PbsReservation] | None, str | None]:
    """`pbs_rstat -f` (as `with_status` runs it): the reservations, or None and why they
    could not be read."""
    text, rc = split_status(stdout)
    if rc not in (0, None) and not _NO_RESV.search(text):
        return None, f"pbs_rstat -f failed ({_why(text, rc)})"
    if "Resv ID:" not in text:
        return [], None
    out = []
    for name, a in parse_full(text, "pbs_rstat -f", block="Resv ID").items():
        def when(key: str, a: dict = a) -> datetime | None:
            return parse_local_time(clean(a.get(key)), tz, CTIME_FORMATS)

        out.append(PbsReservation(
            name=name, queue=clean(a.get("queue")) or name.split(".")[0],
            state=(clean(a.get("reserve_state")) or "").split()[0] if clean(
                a.get("reserve_state")) else "",
            start=when("reserve_start"), end=when("reserve_end"),
            owner=clean(a.get("Reserve_Owner")),
            users=_names(a.get("Authorized_Users")), groups=_names(a.get("Authorized_Groups")),
            nodes=resv_nodes(clean(a.get("resv_nodes")) or "")))
    return out, None


def _names(value: object) -> list[str] | None:
    text = clean(value)
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def resv_nodes(text: str) -> dict[str, dict[str, int]]:
    """`(node1:ncpus=4:ngpus=1)+(node2[0]:ncpus=8)` -> host -> what the reservation holds
    there (a vnode `host[N]` counts for its host)."""
    out: dict[str, dict[str, int]] = {}
    for chunk in re.findall(r"\(([^)]*)\)", text):
        vnode, *items = chunk.split(":")
        host = re.sub(r"\[[0-9]+\]$", "", vnode.strip())
        if not host:
            continue
        have = out.setdefault(host, {})
        for item in items:
            key, _, value = item.partition("=")
            if ascii_digits(value.strip()):
                have[key.strip()] = have.get(key.strip(), 0) + int(value)
    return out


# -- Grid Engine resource quota sets -------------------------------------------------
_SCOPES = ("users", "projects", "pes", "queues", "hosts")


def parse_sge_quotas(stdout: str) -> tuple[list[SgeQuotaSet] | None, str | None]:
    """`qconf -srqs` (as `with_status` runs it): the resource quota sets, or None and
    why they could not be read. qconf fails, saying so, where none is defined: that is
    none."""
    text, rc = split_status(stdout)
    if rc not in (0, None):
        if re.search(r"no resource quota set", text, re.I):
            return [], None
        return None, f"qconf -srqs failed ({_why(text, rc)})"
    sets = []
    for body in re.findall(r"\{(.*?)^\s*\}", re.sub(r"\\\n\s*", " ", text), re.S | re.M):
        name, enabled, rules = None, True, []
        for line in body.splitlines():
            key, _, value = line.strip().partition(" ")
            value = value.strip()
            if key == "name":
                name = value
            elif key == "enabled":
                enabled = value.upper() != "FALSE"
            elif key == "limit":
                rule = parse_quota_rule(value)
                if rule is None:
                    return None, f"qconf -srqs: rule set {name}: unreadable rule {value!r}"
                rules.append(rule)
        if name:
            sets.append(SgeQuotaSet(name=name, enabled=enabled, rules=rules))
    if text.strip() and not sets:
        return None, f"qconf -srqs: no rule set in {_why(text, None)!r}"
    return sets, None


def parse_quota_rule(text: str) -> SgeQuotaRule | None:
    """`[name NAME] [users X] [projects X] [pes X] [queues X] [hosts X] to A=V,B=V`;
    None when it does not read so."""
    head, sep, limits = text.partition(" to ")
    if not sep:
        return None
    words = head.split()
    rule = SgeQuotaRule()
    if len(words) % 2:
        return None
    for key, value in zip(words[::2], words[1::2], strict=True):
        if key == "name":
            rule.name = value
        elif key in _SCOPES:
            each = value.startswith("{") and value.endswith("}")
            rule.filters[key] = SgeQuotaFilter(
                names=[x for x in value.strip("{}").split(",") if x], each=each)
        else:
            return None
    for item in limits.replace(" ", "").split(","):
        key, eq, value = item.partition("=")
        if not eq or not key or not value:
            return None
        rule.limits[key] = value
    return rule


# -- Grid Engine calendars -----------------------------------------------------------
def parse_sge_calendars(stdout: str) -> tuple[dict[str, SgeCalendar] | None, str | None]:
    """`qconf -scal` of each calendar (as `with_status` runs the loop): by name, or None
    and why they could not be read."""
    text, rc = split_status(stdout)
    if rc not in (0, None):
        return None, f"qconf -scal failed ({_why(text, rc)})"
    out: dict[str, SgeCalendar] = {}
    cur: SgeCalendar | None = None
    for line in re.sub(r"\\\n\s*", " ", text).splitlines():
        key, _, value = line.strip().partition(" ")
        entries = [x for x in value.split() if x.upper() != "NONE"]
        if key == "calendar_name":
            cur = out[value.strip()] = SgeCalendar(name=value.strip())
        elif key == "year" and cur is not None:
            cur.year = entries
        elif key == "week" and cur is not None:
            cur.week = entries
    return out, None
