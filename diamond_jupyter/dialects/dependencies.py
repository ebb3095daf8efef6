"""What a waiting job's dependency still waits for, read from PBS, LSF, Grid Engine and
Flux outputs as each scheduler means it, and said in squeue's words (pure).

Placement reads one form (`placement_deps.parse_dependency`): terms of a kind and parent
ids, each `(unfulfilled)`, joined by ',' (every one) or '?' (any one):
`afterok:12:13(unfulfilled),after:14(unfulfilled)`. The kinds: `after` (the parents'
start), `afterany` (their end), `afterok` (their end, a success), `afternotok` (a
failure), `aftercorr` (an array's tasks, task by task). Each reader answers None where the
output does not say what the job waits for in those terms (an LSF job name, a count of an
array's tasks, a negation, AND and OR mixed, PBS jobs still to come): placement then leaves
the job out, as it does any held job, and its note says so. A Grid Engine name is found
among the listing's jobs first (`sge_named`). A dialect sets `JobStatus.dependency` only on a job
that nothing but its dependency holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from ..digits import ascii_digits
from .flux_ids import flux_id_value

PENDING_TERM = "(unfulfilled)"


def squeue_words(terms: Iterable[tuple[str, list[str]]], every: bool = True) -> str | None:
    """Terms (kind, parent ids) in squeue's words; None for no term."""
    parts = [f"{kind}:{':'.join(ids)}{PENDING_TERM}" for kind, ids in terms if ids]
    return ("," if every else "?").join(parts) or None


# -- PBS (`qstat -f -F json` depend; Torque's `qstat -f -x` the same value) ---------------

# PBS kinds of a job's own wait (qsub -W depend): PBS Pro's, and Torque's on a whole array
# (`afterokarray:123[]`), each read as its kind on the array's record
_PBS_AFTER = {"after": "after", "afterok": "afterok", "afternotok": "afternotok",
              "afterany": "afterany", "afterstartarray": "after",
              "afterokarray": "afterok", "afternotokarray": "afternotok",
              "afteranyarray": "afterany"}
# a `before` kind names this job's children: each waits (`on:count`) as by the after kind
_PBS_BEFORE = {"before": "after", "beforeok": "afterok", "beforenotok": "afternotok",
               "beforeany": "afterany", "beforestartarray": "after",
               "beforeokarray": "afterok", "beforenotokarray": "afternotok",
               "beforeanyarray": "afterany"}
_PBS_ID = re.compile(r"[0-9]+(?:\[[0-9]*\])?(?:\.[\w.-]+)?")


def _pbs_terms(depend: str) -> list[tuple[str, list[str]]] | None:
    """`afterok:12.srv@host:13.srv,on:1` -> [(kind, ids)] (ids without `@host`; a colon
    PBS escapes, `@host\\:15001`, is no separator); None for a value that does not read."""
    out: list[tuple[str, list[str]]] = []
    for part in depend.split(","):
        kind, _, rest = part.strip().partition(":")
        if kind == "on":
            if not ascii_digits(rest.strip()):
                return None
            out.append(("on", [rest.strip()]))
            continue
        if kind not in _PBS_AFTER and kind not in _PBS_BEFORE:
            return None
        ids = [i.split("@", 1)[0] for i in re.split(r"(?<!\\):", rest)]
        if not ids or not all(_PBS_ID.fullmatch(i) for i in ids):
            return None  # an array with a count (`123[][5]`), an id that does not read
        out.append((kind, ids))
    return out


def pbs_dependencies(depends: dict[str, str], held: Iterable[str],
                     queued: Iterable[str] = ()) -> dict[str, str]:
    """The dependency still to be met of each job of `held` (held by its dependency alone:
    PBS's system hold, `Hold_Types = s`), in squeue's words, from every queued job's
    `depend` (by native id): its own after kinds, and a `before` kind of another job
    naming it. PBS writes each registration on both jobs (`qsub -W depend=beforeok:A`
    puts `afterok:B` on A, `afterok:A` puts `beforeok:B` on A: a before kind names jobs
    that wait for this one), so either side is enough. A parent id is the queue's own
    spelling of it where the server's name differs (`12.srv` for `12.srv.example.org`).
    A job still showing `on:N` (the jobs still to name it: the server counts N down as
    each registers, and drops it at 0) waits for jobs not submitted yet, and one whose
    value does not read: left out (not known; `pbs_awaited`). `queued`: the ids of the
    listing's other jobs."""
    by_short = {jid.split(".", 1)[0]: jid for jid in (*queued, *depends)}
    parsed = {jid: _pbs_terms(text) for jid, text in depends.items()}

    def own(pid: str) -> str:
        return pid if pid in depends else by_short.get(pid.split(".", 1)[0], pid)

    children: dict[str, list[tuple[str, str]]] = {}  # child -> (kind, parent)
    for jid, terms in parsed.items():
        for kind, ids in terms or ():
            if kind in _PBS_BEFORE:
                for child in ids:
                    children.setdefault(own(child), []).append((_PBS_BEFORE[kind], jid))
    out: dict[str, str] = {}
    for jid in held:
        terms = parsed.get(jid)
        if terms is None:
            continue
        kinds: dict[str, list[str]] = {}
        for kind, ids in terms:
            if kind in _PBS_AFTER:
                for pid in ids:
                    if own(pid) not in kinds.setdefault(_PBS_AFTER[kind], []):
                        kinds[_PBS_AFTER[kind]].append(own(pid))
        registered = children.get(jid, [])
        for kind, pid in registered:
            if pid not in kinds.setdefault(kind, []):
                kinds[kind].append(pid)
        if any(int(ids[0]) > 0 for kind, ids in terms if kind == "on"):
            continue  # parents to come: not submitted yet
        if (text := squeue_words(kinds.items())) is not None:
            out[jid] = text
    return out


def pbs_awaited(depend: str) -> int:
    """How many jobs a job's `depend` still waits to be named by (`on:N`: jobs to be
    submitted with a before kind naming it); 0 for none, or a value that does not read."""
    terms = _pbs_terms(depend) or []
    return sum(int(ids[0]) for kind, ids in terms if kind == "on")


# -- LSF (`bjobs -o dependency`, `bjobs -l`'s "Dependency Condition:") --------------------

# LSF conditions on one job, as the kind each waits for (bsub -w): done (ended DONE),
# ended (DONE or EXIT), exit (EXIT), started (run, or past it), post_done / post_err (its
# post-execution ended, well or not)
_LSF_KIND = {"done": "afterok", "ended": "afterany", "exit": "afternotok",
             "started": "after", "post_done": "afterok", "post_err": "afternotok"}
_LSF_COND = re.compile(r"(\w+)\(\s*([0-9]+(?:\[[0-9]+\])?)\s*(?:,[^()]*)?\)"
                       r"|([0-9]+(?:\[[0-9]+\])?)")


def lsf_dependency(expr: str | None) -> str | None:
    """An LSF dependency expression -> squeue's words: `&&` every one (the last to come
    frees the job), `||` any one (the first); None for none, or one not read here (a job
    name or wildcard, `!`, the num* counts of an array, `&&` and `||` mixed)."""
    got = _lsf_expr((expr or "").strip())
    if got is None or not got[0]:
        return None
    terms, every = got
    by_kind: dict[str, list[str]] = {}
    for kind, pid in terms:
        if pid not in by_kind.setdefault(kind, []):
            by_kind[kind].append(pid)
    if every:
        return squeue_words(by_kind.items())
    return squeue_words(((k, [p]) for k, p in terms), every=False)


def _lsf_expr(text: str) -> tuple[list[tuple[str, str]], bool] | None:
    """(terms (kind, id), every) of an expression with one joiner at each level (a
    parenthesised part with the other joiner: None)."""
    parts, ops, depth, start, i = [], set(), 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and text[i:i + 2] in ("&&", "||"):
            parts.append(text[start:i])
            ops.add(text[i:i + 2])
            start = i + 2
            i += 1
        i += 1
    parts.append(text[start:])
    if len(ops) > 1 or depth != 0:
        return None
    every = ops != {"||"}
    terms: list[tuple[str, str]] = []
    for part in (p.strip() for p in parts):
        if part.startswith("(") and part.endswith(")") and _closes_at_end(part):
            inner = _lsf_expr(part[1:-1].strip())
            if inner is None or (len(inner[0]) > 1 and inner[1] != every):
                return None
            terms += inner[0]
            continue
        m = _LSF_COND.fullmatch(part)
        if m is None or (m.group(1) is not None and m.group(1) not in _LSF_KIND):
            return None
        terms.append((_LSF_KIND[m.group(1)], m.group(2)) if m.group(1) is not None
                     else ("afterok", m.group(3)))  # a bare id: done(id)
    return terms, every


def _closes_at_end(text: str) -> bool:
    """Whether the '(' opening `text` closes at its end (not `(a) && (b)`)."""
    depth = 0
    for i, c in enumerate(text):
        depth += c == "("
        depth -= c == ")"
        if depth == 0:
            return i == len(text) - 1
    return False


# -- Grid Engine (`qstat -r`: predecessor_jobs, ad_predecessor_jobs; qstat -j:
#    jid_predecessor_list, ja_ad_predecessor_list) -------------------------------------

def sge_dependency(predecessors: list[str], ad_predecessors: list[str]) -> str | None:
    """A job's `-hold_jid` predecessors (it starts once every one has ended, whatever its
    exit) and `-hold_jid_ad` ones (an array's tasks, each once the same task of each has
    ended), by job number, in squeue's words; None for none or an id that does not read
    (a name: `sge_named` finds its jobs first)."""
    ids = [p.strip() for p in predecessors if p.strip()]
    ad = [p.strip() for p in ad_predecessors if p.strip()]
    if not all(ascii_digits(p) for p in [*ids, *ad]):
        return None
    return squeue_words([("afterany", list(dict.fromkeys(ids))),
                         ("aftercorr", list(dict.fromkeys(ad)))])


@dataclass(frozen=True)
class ListedJob:
    """A job of a Grid Engine listing, as a `-hold_jid` name is matched against it."""

    number: str  # its job number (an array's, for a task's record)
    name: str | None
    owner: str | None


def sge_named(entries: list[str], number: str, owner: str | None,
              listed: Iterable[ListedJob]) -> tuple[list[str], list[str]]:
    """`-hold_jid` entries of job `number` of `owner` (job numbers, job names, wildcard
    patterns: `*`, `?`, `[...]`) -> (the job numbers they stand for, the names standing
    for none). A name stands for every job of the same owner of a matching name submitted
    before it (a smaller number): Grid Engine resolves names when the job is submitted
    (qsub(1)), so a job submitted after it is none of them, and one that has ended holds
    it no more."""
    ids: list[str] = []
    unmatched: list[str] = []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        if ascii_digits(entry):
            ids.append(entry)
            continue
        found = [j.number for j in listed
                 if owner is not None and j.owner == owner and j.name is not None
                 and fnmatchcase(j.name, entry) and ascii_digits(j.number)
                 and ascii_digits(number) and int(j.number) < int(number)]
        if found:
            ids += found
        else:
            unmatched.append(entry)
    return list(dict.fromkeys(ids)), unmatched


# -- Flux (`flux jobs --json` / `-o {dependencies}`) ------------------------------------

# the descriptions flux's dependency-after plugin gives a job's outstanding dependencies
# (`after-success=ƒ2sbY3L5P`: the id as the user wrote it)
_FLUX_KIND = {"after-start": "after", "after-finish": "afterany",
              "after-success": "afterok", "after-failure": "afternotok",
              "after-except": "afternotok"}


def flux_dependency(dependencies: Iterable[str]) -> str | None:
    """A Flux job's outstanding dependencies -> squeue's words, every one to be met (each
    id in decimal, as `flux jobs --json` gives ids); None for none or one not read here
    (`begin-time=`: `flux_begin_time`; another plugin's, an id in words)."""
    kinds: dict[str, list[str]] = {}
    for dep in dependencies:
        kind, _, jid = str(dep).strip().partition("=")
        value = flux_id_value(jid.strip())
        if kind not in _FLUX_KIND or value is None:
            return None
        if str(value) not in kinds.setdefault(_FLUX_KIND[kind], []):
            kinds[_FLUX_KIND[kind]].append(str(value))
    return squeue_words(kinds.items())


def flux_begin_time(dependencies: Iterable[str]) -> float | None:
    """When a Flux job whose one outstanding dependency is its begin time (flux's
    begin-time plugin: `begin-time=1772360000.000`, seconds since the epoch) may start;
    None for another (with others too, the job is not read: `flux_dependency`)."""
    deps = [str(d).strip() for d in dependencies]
    if len(deps) != 1 or not deps[0].startswith("begin-time="):
        return None
    try:
        return float(deps[0].partition("=")[2])
    except ValueError:
        return None
