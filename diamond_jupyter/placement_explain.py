"""How `Placement.explain` keeps a large federation readable. In the table, refused sites
that give the same verdict and reasons share one row naming them (`grouped_refusals`), and
a refusal too long for a row shows its deciding reason and counts the rest
(`refused_text`). Under the table, per site: every reason it was refused for where its row
counted them, the limits the job waits for (they decide its start), notes on the
estimate, then what was not checked, each said once (a reason the site gives for several
partitions names them in one line), at most `MAX_UNCHECKED_LINES` of them and a count of
the rest. A site whose view was read long before the decision says how long, once
(`view_age_line`). A partition's nodes that take no job are named by state, in hostlist
form (`held_nodes_text`), a long reason cut there and given in full in the site's block
(`cut_reasons`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel

from .dialects.outputs_common import compact_hostlist
from .model import Node, SiteSnapshot, hms, one_line
from .wording import quantity

MAX_UNCHECKED_LINES = 5
MAX_PARTITIONS_NAMED = 6  # in one merged line; the rest counted (`NotChecked.partitions`)
MAX_SITES_NAMED = 6  # in one row of refused sites; the rest counted (`--json`: every site)
MAX_REFUSED_ROW_CHARS = 160  # a refused row's reasons past this: the first, the rest counted
# node groups (a state and reason) named, and hostlist runs in each, as many as sites in a
# row; the rest counted
MAX_NODE_GROUPS_NAMED = MAX_RANGES_NAMED = MAX_SITES_NAMED
MAX_NODE_REASON_CHARS = 60  # an admin's reason past this is cut: a row stays readable

_PARTITION = re.compile(r"\bpartition (\S+?)(?=[\s,;:)]|$)")
# where a not-checked line's what ends and its why begins: a line that says "not checked"
# itself there, else at its first colon outside brackets, else at its first bracket
_SAID_NOT_CHECKED = (" not checked: ",)


class NotChecked(BaseModel):
    """One thing a site's limits were not checked for: `what`, and `why` not (the site's
    reason, or what the job was taken to meet instead); `partitions` where the same was
    said of several of the site's partitions."""

    site: str
    what: str
    why: str
    partitions: list[str] = []
    text: str  # the line `explain` prints after "SITE not checked: "


def merged_unchecked(site: str, said: Iterable[str]) -> list[NotChecked]:
    """A site's not-checked lines, each once: lines that differ only by the partition they
    name become one, naming every partition ("in partitions a, b")."""
    groups: dict[str, list[tuple[str, str | None]]] = {}  # merged text -> (line, partition)
    for line in said:
        names = _PARTITION.findall(line)
        one = names[0] if len(names) == 1 else None  # a line naming one partition merges
        key = _PARTITION.sub("partition {}", line, count=1) if one else line
        if (line, one) not in groups.setdefault(key, []):
            groups[key].append((line, one))
    out = []
    for key, lines in groups.items():
        parts = [p for _, p in lines if p is not None]
        text = lines[0][0] if len(parts) < 2 else \
            key.replace("partition {}", "partitions " + _named(parts), 1)
        what, why = _split(text)
        out.append(NotChecked(site=site, what=what, why=why,
                              partitions=parts if len(parts) > 1 else [], text=text))
    return out


def _named(partitions: list[str]) -> str:
    """Partition names for a line: the first `MAX_PARTITIONS_NAMED`, then how many more."""
    more = len(partitions) - MAX_PARTITIONS_NAMED
    return ", ".join(partitions[:MAX_PARTITIONS_NAMED]) + (f" and {more} more" if more > 0
                                                           else "")


def _split(text: str) -> tuple[str, str]:
    """A not-checked line as (what, why): at its earliest separator; a why in brackets
    loses them."""
    at = [(i, sep) for sep in _SAID_NOT_CHECKED if (i := text.find(sep)) > 0] or \
        [(i, sep) for i, sep in ((_top_level_colon(text), ": "), (text.find(" ("), " ("))
         if i > 0][:1]
    if not at:
        return text, ""
    i, sep = min(at)
    why = text[i + len(sep):].strip()
    if why.startswith("(") and why.endswith(")"):
        why = why[1:-1]
    elif sep == " (" and why.endswith(")") and why.count("(") < why.count(")"):
        why = why[:-1]
    return text[:i].strip(), why


def _top_level_colon(text: str) -> int:
    """Where the first ": " outside brackets is in `text` (-1: none)."""
    depth = 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth == 0 and text.startswith(": ", i):
            return i
    return -1


def unchecked_lines(site: str, items: list[NotChecked]) -> list[str]:
    """The lines `explain` prints of a site's not-checked items: the first
    `MAX_UNCHECKED_LINES`, then how many more there are."""
    shown = [f"  {site} not checked: {n.text}" for n in items[:MAX_UNCHECKED_LINES]]
    if len(items) > MAX_UNCHECKED_LINES:
        shown.append(f"  {site} not checked: {len(items) - MAX_UNCHECKED_LINES} more "
                     "(--json lists them all)")
    return shown


def refused_text(reasons: list[str], *, blocks_below: bool = False) -> str:
    """A refused row's reasons: all of them where they fit in `MAX_REFUSED_ROW_CHARS`, else
    the deciding (first) one and how many more, and where the rest are: in the site's
    block right below the table (`refused_lines`) where `blocks_below`, else from
    `--explain`."""
    joined = "; ".join(reasons)
    if len(joined) <= MAX_REFUSED_ROW_CHARS or len(reasons) < 2:
        return joined
    more = len(reasons) - 1
    return (f"{reasons[0]}; and {more} more reason{'s' if more > 1 else ''} "
            + ("(listed below)" if blocks_below else "(--explain lists them)"))


def refused_lines(site: str, reasons: list[str]) -> list[str]:
    """Every reason a site was refused for, one line each, where its row counted them."""
    if refused_text(reasons) == "; ".join(reasons):
        return []
    return [f"  {site} refused: {why}" for why in reasons]


def grouped_refusals(rows: list[tuple[str, ...]], refused: list[bool]) -> list[tuple[str, ...]]:
    """The table's rows, those of refused sites with the same verdict and reasons as one,
    at the first one's place: "N sites" and the reasons, then the first `MAX_SITES_NAMED`
    of the sites and how many more. A row is (mark, site, verdict, ...); a refused one
    (mark, site, verdict, reasons)."""
    groups: dict[tuple[str, ...], list[str]] = {}  # (mark, verdict, reasons) -> sites
    order: list[tuple[str, ...]] = []  # rows kept, and each group's key at its first row
    for row, is_refused in zip(rows, refused, strict=True):
        if not is_refused:
            order.append(row)
            continue
        key = (row[0], row[2], row[3])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(row[1])
    out = []
    for row in order:
        sites = groups.get(row) if len(row) == 3 else None
        if sites is None:
            out.append(row)
        elif len(sites) == 1:
            out.append((row[0], sites[0], row[1], row[2]))
        else:
            more = len(sites) - MAX_SITES_NAMED
            named = ", ".join(sites[:MAX_SITES_NAMED]) + (f" and {more} more" if more > 0
                                                          else "")
            out.append((row[0], f"{len(sites)} sites", row[1], f"{row[2]} ({named})"))
    return out


def stale_view(snap: SiteSnapshot, now: datetime, stale_after_s: float | None
               ) -> tuple[datetime | None, datetime | None]:
    """(when the view of `snap` was read, since when the site has not answered) where it was
    read more than `stale_after_s` before `now` (an unreachable site's last view, a cached
    one), else (None, None): a view within it needs no word."""
    read_at = snap.read_at or snap.taken_at
    if stale_after_s is None or (now - read_at).total_seconds() <= stale_after_s:
        return None, None
    return read_at, None if snap.reachable else snap.unreachable_since


def view_age_line(site: str, read_at: datetime, unreachable_since: datetime | None,
                  now: datetime) -> str:
    """`  SITE view read 2:14:03 ago (site unreachable since ...)`: the line `explain`
    prints once for a site placed on a view read long ago."""
    why = (f"site unreachable since {unreachable_since.isoformat(timespec='seconds')}"
           if unreachable_since is not None else
           f"read at {read_at.isoformat(timespec='seconds')}, not asked again since")
    return f"  {site} view read {hms((now - read_at).total_seconds())} ago ({why})"


def held_nodes_text(held: list[Node], label: dict[str, str] | None = None) -> str:
    """Nodes that take no new job named by state (or `label`, by node name), each state's
    in hostlist form with its reason: `down n[01-02]; drained n07 (bad disk)`; at most
    `MAX_NODE_GROUPS_NAMED` groups of `MAX_RANGES_NAMED` ranges each, the rest counted."""
    groups: dict[tuple[str, str], list[str]] = {}
    for n in held:
        state = (label or {}).get(n.name) or _state_word(n.state)
        reason = (n.reason or "").strip()
        if len(reason) > MAX_NODE_REASON_CHARS:
            reason = reason[:MAX_NODE_REASON_CHARS - 1].rstrip() + "…"
        groups.setdefault((state, one_line(reason)), []).append(n.name)
    shown = []
    for (state, reason), names in list(groups.items())[:MAX_NODE_GROUPS_NAMED]:
        listed, more = compact_hostlist(names, MAX_RANGES_NAMED)
        shown.append(f"{state} {listed}" + (f" and {quantity(more, 'more node')}" if more
                                           else "") + (f" ({reason})" if reason else ""))
    rest = sum(len(v) for v in list(groups.values())[MAX_NODE_GROUPS_NAMED:])
    return "; ".join(shown) + (f"; {quantity(rest, 'more node')}" if rest else "")


def cut_reasons(held: list[Node]) -> list[str]:
    """The reasons `held_nodes_text` cut, in full, by the nodes that give each (hostlist
    form), written out as untrusted text (`one_line`): `s2: queue all.q marked ...`."""
    by_reason: dict[str, list[str]] = {}
    for n in held:
        reason = (n.reason or "").strip()
        if len(reason) > MAX_NODE_REASON_CHARS:
            by_reason.setdefault(reason, []).append(n.name)
    return [f"{compact_hostlist(names, MAX_RANGES_NAMED)[0]}: {one_line(reason)}"
            for reason, names in by_reason.items()]


# the state word a node takes for a job that a recurring or floating Slurm reservation
# never leaves room for there (`placement_resv`): out, as a node down is
NEVER_ROOM = "reserved_always"


def _state_word(state: str) -> str:
    """A node state for a list, in the words of Slurm's sinfo: `down`, `drained` (a DRAIN
    flag on an idle node), `draining` (on one still running jobs), else the state as read
    without the flag marks schedulers append (Slurm's `*` not responding, `~` powered
    off, ...): PBS `offline`, LSF `closed_adm`."""
    words = set(re.split(r"[^a-z_]+", state.lower()))
    if "down" in words:
        return "down"
    if NEVER_ROOM in words:
        return "in a reservation that never leaves the job room"
    if words & {"drain", "drained", "draining"}:
        busy = words & {"draining", "allocated", "alloc", "mixed", "mix", "completing"}
        return "draining" if busy else "drained"
    return state.strip().lower().rstrip("*~#!%$@^-") or "unknown"
