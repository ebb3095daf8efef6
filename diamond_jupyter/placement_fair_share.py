"""LSF fair share in placement: where a new job joins a busy fair share queue.

LSF dispatches a fair share queue's waiting jobs by their owners' dynamic priority, the
highest first (`bqueues -l` SHARE_INFO_FOR, or the host partition's `bhpart -r`), not in
the order they came. So the jobs waiting there of accounts of a higher priority than the
user's (and those of the user's own account, which came first) go ahead of the new job;
those of a lower priority wait behind it. The priorities are taken as they are now: LSF
lowers an account's priority as its jobs start, so a long wait ahead is an upper bound
rather than a prediction. A waiting job whose owner has no account read is kept ahead
(it is not known to go behind).
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import JobState, Partition, ShareAccount, SiteSnapshot
from .placement_sim import Demand


def account_of(user: str | None, accounts: list[ShareAccount],
               groups: dict[str, list[str]] | None) -> ShareAccount | None:
    """A user's fair share account: the row named for the user, else (a group's shares)
    that of a user group holding the user; None when neither is read."""
    if not user:
        return None
    own = next((a for a in accounts if a.name == user), None)
    if own is not None:
        return own
    return next((a for a in accounts if user in (groups or {}).get(a.name, [])), None)


@dataclass(frozen=True)
class FairShareView:
    """One fair share queue as the new job meets it: the user's account, and each waiting
    job's owner's account priority (None: not known)."""

    queue: str
    of: str  # "queue" or "host partition NAME"
    user: str
    mine: ShareAccount
    priority_by_job: dict[str, float | None]

    def goes_behind(self, native_id: str | None) -> bool:
        """Whether a waiting job of this queue waits behind the new job: its owner's
        account has a lower priority than the user's."""
        p = self.priority_by_job.get(native_id or "")
        return p is not None and p < self.mine.priority

    def order(self, queue: list[Demand]) -> tuple[list[Demand], int]:
        """The queue with this queue's jobs of a lower priority moved behind the new job,
        and the new job's place in it (`earliest_start`'s probe_at)."""
        behind = [d for d in queue if d.partition == self.queue and self.goes_behind(d.native_id)]
        if not behind:
            return queue, len(queue)
        moved = {id(d) for d in behind}
        ahead = [d for d in queue if id(d) not in moved]
        return ahead + behind, len(ahead)

    def note(self) -> str | None:
        """What the user reads of it where jobs wait in the queue: their share and
        priority, and how many jobs go ahead and behind; None where none wait."""
        waiting = list(self.priority_by_job)
        if not waiting:
            return None
        behind = sum(1 for j in waiting if self.goes_behind(j))
        where = "bqueues -l SHARE_INFO_FOR" if self.of == "queue" else f"bhpart -r, {self.of}"
        whose = "your" if self.mine.name == self.user else "your group's"
        return (f"queue {self.queue}: fair share ({where}): {whose} account "
                f"{self.mine.name} has {_share(self.mine.shares)}, dynamic priority "
                f"{self.mine.priority:g}; LSF dispatches the jobs of the highest priority "
                f"first: {_jobs(len(waiting) - behind, 'goes', 'go')} first (of a higher "
                f"priority, yours or of owners not listed), {_jobs(behind, 'waits', 'wait')} "
                "behind it (of a lower priority)")


def _share(shares: int | None) -> str:
    """An account's shares as said: not known where LSF printed a mark of none."""
    return f"share {shares}" if shares is not None else "a share not known (LSF printed " \
        "a mark of none)"


def _jobs(n: int, one: str, more: str) -> str:
    """`n` waiting jobs with their verb: '1 job waiting there goes'."""
    return f"{n} job{'' if n == 1 else 's'} waiting there {one if n == 1 else more}"


def fair_share_view(p: Partition, snap: SiteSnapshot) -> FairShareView | None:
    """The fair share the new job meets in LSF queue `p`; None where the queue has none
    read or the user's account is not known (`fair_share_unread` says so)."""
    if not p.fair_share:
        return None
    mine = account_of(snap.user, p.fair_share, snap.user_groups)
    if mine is None:
        return None
    owners: dict[str | None, float | None] = {}
    by_job: dict[str, float | None] = {}
    for j in snap.jobs:
        if j.state != JobState.PENDING or (j.partition or "") != p.name:
            continue
        if j.user not in owners:
            a = account_of(j.user, p.fair_share, snap.user_groups)
            owners[j.user] = a.priority if a is not None else None
        by_job[j.native_id] = owners[j.user]
    return FairShareView(p.name, p.fair_share_of or "queue", snap.user or "", mine, by_job)


def fair_share_unread(parts: list[Partition], snap: SiteSnapshot) -> list[str]:
    """The busy fair share queues the job may use whose share account of the user's is
    not read: the job was counted behind every job waiting there (not checked; where none
    waits, its priority does not matter)."""
    out = []
    for p in parts:
        if not p.fair_share or fair_share_view(p, snap) is not None or not any(
                j.state == JobState.PENDING and (j.partition or "") == p.name
                for j in snap.jobs):
            continue
        who = f"user {snap.user}" if snap.user else "who you run as (not known)"
        out.append(f"queue {p.name}'s fair share ({p.fair_share_of or 'queue'}): no account "
                   f"of {who} is listed (accounts: "
                   f"{', '.join(a.name for a in p.fair_share[:6])}"
                   f"{', ...' if len(p.fair_share) > 6 else ''}), so your dynamic priority "
                   "is not known; the job was counted behind every job waiting there")
    return out


def fair_share_misses(p: Partition, snap: SiteSnapshot) -> tuple[list[str], list[str]]:
    """A fair share queue's USER_SHARES against the user: LSF takes its jobs only from
    users with a share assignment (their own, `default`, `all` or a group's). (why it
    refuses the job, what cannot be told); nothing where USER_SHARES or the user is not
    known."""
    if p.user_shares is None or not snap.user:
        return [], []
    me, groups = snap.user, snap.user_groups
    if me in p.user_shares or {"default", "all"} & set(p.user_shares):
        return [], []
    if groups is None:
        return [], [f"queue {p.name}'s fair share assigns shares to "
                    f"{', '.join(p.user_shares)} (USER_SHARES), none to you ({me}) by name; "
                    "whether one is your group is not known here"]
    if any(me in groups.get(n, []) or "all" in groups.get(n, []) for n in p.user_shares):
        return [], []
    said = " ".join(f"[{n}, {'not known' if s is None else s}]"
                    for n, s in p.user_shares.items())
    return [f"queue {p.name} is a fair share queue and assigns you ({me}) no share, nor any "
            f"group of yours (USER_SHARES: {said}): LSF takes its jobs only from users with "
            "a share"], []
