"""LSF fair share as `bqueues -l` and `bhpart -r` print it (pure: text in, models out).

A fair share queue's `bqueues -l` has `USER_SHARES:  [alice, 10] [default, 1]` (the
shares as configured) and a `SHARE_INFO_FOR: QUEUE/` table, one row an account, its
columns named by a header (`USER/GROUP SHARES PRIORITY STARTED RESERVED CPU_TIME RUN_TIME
ADJUST`, more in later releases). Host partition fair share (lsb.hosts) is printed by
`bhpart -r` the same way under `HOST_PARTITION_NAME: NAME` and its `HOSTS:` (a host group
written `grp/`). Only the top level of a hierarchy is read: a user's account there is the
user's own row or that of a group holding the user.
"""

from __future__ import annotations

import math
import re

from ..digits import ascii_digits
from ..model import Partition, ShareAccount
from .outputs_common import known_count

_PAIR = re.compile(r"\[\s*([^,\[\]\s]+)\s*,\s*([0-9]+)\s*\]")


def _sections(text: str, key: str) -> dict[str, list[str]]:
    """The lines under each `KEY: NAME` line, by NAME."""
    out: dict[str, list[str]] = {}
    lines: list[str] | None = None
    for line in text.splitlines():
        if m := re.match(rf"\s*{key}:\s*(\S+)", line):
            lines = out.setdefault(m.group(1), [])
        elif lines is not None:
            lines.append(line)
    return out


def _priority(text: str | None) -> float | None:
    """An account's dynamic priority (a float); None where it is no finite number, or one
    written otherwise than in digits 0-9 (float() reads '١' and '1_0')."""
    if text is not None and (not text.isascii() or "_" in text):
        return None
    try:
        x = float(text) if text is not None else None
    except ValueError:
        return None
    return x if x is not None and math.isfinite(x) else None


def _count(text: str | None) -> int | None:
    """A count of the table (shares, job slots): 0 where the column is not printed, None
    where it is a mark of none (2147483647) or no count (not known)."""
    return 0 if text is None else known_count(text)


def share_table(lines: list[str], name: str) -> list[ShareAccount] | None:
    """The top level share table of one section: the one under `SHARE_INFO_FOR: NAME/`,
    else (no such line: `bhpart` without -r) the first; None when there is none. A row
    whose SHARES or PRIORITY is not a number is left out; a count that is a mark of none
    (INT_MAX) is kept as not known (None)."""
    start = None
    for i, line in enumerate(lines):
        m = re.match(r"\s*SHARE_INFO_FOR:\s*(\S+)", line)
        if m and m.group(1).strip("/") == name:
            start = i + 1
            break
    if start is None and any(re.match(r"\s*SHARE_INFO_FOR:", ln) for ln in lines):
        return None  # tables of the hierarchy's lower levels only
    header: list[str] | None = None
    out: list[ShareAccount] = []
    for line in lines[start or 0:]:
        cols = line.split()
        if header is None:
            if "USER/GROUP" in cols and "PRIORITY" in cols:
                header = cols
            continue
        if not cols or re.match(r"\s*[A-Z_]+:", line):
            break  # the table ends at a blank line or the next `KEY:` line
        row = dict(zip(header, cols, strict=False))
        shares = row.get("SHARES", "")
        priority = _priority(row.get("PRIORITY"))
        if not ascii_digits(shares) or priority is None:
            continue
        out.append(ShareAccount(
            name=row["USER/GROUP"].rstrip("/"), shares=known_count(shares), priority=priority,
            started=_count(row.get("STARTED") or row.get("STARTED_JOBS")),
            reserved=_count(row.get("RESERVED"))))
    return out if header is not None else None


UserShares = dict[str, int | None]  # USER_SHARES: name -> shares (None: a mark, not known)


def parse_queue_fair_share(bqueues_l: str
                           ) -> dict[str, tuple[UserShares | None, list[ShareAccount] | None]]:
    """`bqueues -l`: each fair share queue's USER_SHARES (name -> shares) and its top level
    SHARE_INFO_FOR table; a queue with neither is left out."""
    out = {}
    for queue, lines in _sections(bqueues_l, "QUEUE").items():
        shares: UserShares | None = None
        for i, line in enumerate(lines):
            if re.match(r"\s*USER_SHARES:", line):
                text = line
                for more in lines[i + 1:]:  # a long list goes on over the next lines
                    if not more.strip().startswith("["):
                        break
                    text += " " + more
                shares = {n.rstrip("/"): known_count(s) for n, s in _PAIR.findall(text)}
                break
        table = share_table(lines, queue)
        if shares is not None or table is not None:
            out[queue] = (shares, table)
    return out


def parse_host_partitions(bhpart: str) -> dict[str, tuple[list[str], list[ShareAccount]]]:
    """`bhpart -r`: each host partition's HOSTS as written (`all`, hosts, `grp/`) and its
    top level share table; one without a table is left out."""
    out = {}
    for name, lines in _sections(bhpart, "HOST_PARTITION_NAME").items():
        hosts = next((ln.split(":", 1)[1].split() for ln in lines
                      if re.match(r"\s*HOSTS:", ln)), [])
        table = share_table(lines, name)
        if table is not None:
            out[name] = (hosts, table)
    return out


def with_fair_share(parts: list[Partition], bqueues_l: str, bhpart: str,
                    host_groups: dict[str, list[str]] | None, hosts: list[str]
                    ) -> list[Partition]:
    """Each queue with its fair share: its own (`bqueues -l`), else that of the one host
    partition (`bhpart -r`) holding its hosts (a queue of no HOSTS uses every host); a
    queue whose hosts are in several host partitions gets none (which of them dispatches
    a job depends on its hosts)."""
    queues = parse_queue_fair_share(bqueues_l)
    partitions = {name: (_expanded(h, host_groups, hosts), table)
                  for name, (h, table) in parse_host_partitions(bhpart).items()}
    out = []
    for p in parts:
        if p.name in queues:
            shares, table = queues[p.name]
            out.append(p.model_copy(update={"user_shares": shares, "fair_share": table,
                                            "fair_share_of": "queue"}))
            continue
        mine = set(p.nodes) if p.nodes else set(hosts)
        holding = [(n, t) for n, (hs, t) in partitions.items() if mine & hs]
        if len(holding) == 1:
            n, table = holding[0]
            out.append(p.model_copy(update={"fair_share": table,
                                            "fair_share_of": f"host partition {n}"}))
        else:
            out.append(p)
    return out


def _expanded(names: list[str], host_groups: dict[str, list[str]] | None,
              hosts: list[str]) -> set[str]:
    """A host partition's HOSTS as host names: `all` every host, `grp/` its group's."""
    out: set[str] = set()
    for n in names:
        if n in ("all", "all/"):
            out |= set(hosts)
        elif n.endswith("/"):
            members = (host_groups or {}).get(n.rstrip("/"), [])
            out |= set(hosts) if "all" in members else set(members)
        else:
            out.add(n)
    return out
