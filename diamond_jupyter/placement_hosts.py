"""Which hosts a job may take, as each scheduler's host terms say: LSF `select[]` strings
(`lsf_select_hosts`), `-m` host lists and compound terms, Slurm's --nodelist and
--exclude, PBS Pro chunks and their `host=`/`vnode=`, Flux `--requires` host and rank
terms, Grid Engine `-l hostname=`; how chunks share hosts (`_chunk_fit`), and constraints
that ask several nodes together (`a100*2`, `[a|b]`). Pure code."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from diamond_jupyter.wording import quantity

from .config import SiteConfig
from .dialects.node_lists import HOST_TERM, carried, named_hosts, requires_terms
from .dialects.outputs_common import expand_hostlist
from .model import BadInput, JobSpec, Node, SiteSnapshot
from .needs import Constraint, Op, norm_arch
from .placement_fit import (
    SITE_WORDS,
    SLURM_WORDS,
    Req,
    Words,
    _few,
    first_fit,
    node_checks,
    node_usable,
    pack_chunks,
    part_met,
    partition_misses,
    request,
    words_of,
)


def _flux_hosts(spec: JobSpec, nodes: list[Node]) -> tuple[set[str], str] | None:
    """The nodes a Flux job's `--requires` host and rank terms (RFC 35: `host:HOSTLIST`,
    `rank:IDSET`, negated with `-` or `not`, several terms all met) leave it, and how to
    say them; None where it names none. Ranks are the nodes' order in the resource set.
    A term joined with `|`/`or` or in parentheses: BadInput (not read here)."""
    terms = [d.value or "" for d in spec.unknown
             if d.dialect == "flux" and d.option == "--requires"]
    words = [w for t in terms for w in t.replace("&", " ").split() if w.lower() != "and"]
    if not any(HOST_TERM.match(w) for w in words):
        return None
    if any(w in ("|", "or") or "|" in w or "(" in w for t in terms for w in t.split()):
        raise BadInput(f"--requires {' '.join(terms)!r}: host and rank terms joined by `|` or "
                       "in parentheses are not read; accepted: host:HOSTLIST, rank:IDSET, "
                       "-host:..., properties, all of them met")
    names = [n.name for n in nodes]
    allowed = set(names)
    for neg, kind, value, w in requires_terms(" ".join(terms)):
        if kind == "host":
            chosen = set(expand_hostlist(value))
        elif kind == "rank":
            chosen = {names[i] for i in _idset(value, w) if i < len(names)}
        else:
            continue  # a property: read as a feature elsewhere
        allowed = allowed - chosen if neg else allowed & chosen
    return allowed, f"--requires {' '.join(terms)} leaves {_few(allowed) if allowed else 'none'}"


def _idset(text: str, term: str) -> set[int]:
    """A Flux idset (`0-3,7`)."""
    out: set[int] = set()
    for part in text.strip("[]").split(","):
        m = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", part.strip())
        if not m:
            raise BadInput(f"--requires {term!r}: {part!r} is not an idset (accepted: "
                           "ranks as 0-3,7)")
        out.update(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    return out


_SELECT_TOKEN = re.compile(r"\s*(&&|\|\||==|!=|>=|<=|[<>=!()]|\"[^\"]*\"|'[^']*'|[\w.\-/:@]+)")


# what `lshosts`/`bhosts` (LSHOSTS_FIELDS, BHOSTS_FIELDS) give of a host, by select[] name
_SELECT_FIELDS: dict[str, Callable[[Node], float | str | None]] = {
    "ngpus": lambda n: n.gpus, "ncpus": lambda n: n.cpus, "maxcpus": lambda n: n.cpus,
    "maxmem": lambda n: n.memory_mb, "mem": lambda n: n.memory_mb - n.memory_allocated,
    "type": lambda n: norm_arch(n.architecture), "model": lambda n: n.host_model,
    "hname": lambda n: n.name}


# LSF's other built-in indices (load, swap, tmp, CPU factor ...): not in those outputs
_SELECT_UNREAD = {"r15s", "r1m", "r15m", "ut", "pg", "io", "ls", "it", "tmp", "swp", "maxswp",
                  "maxtmp", "cpuf", "ndisks", "ncores", "nthreads", "nprocs", "status",
                  "server", "rexpri"}


_SELECT_OPS: dict[str, Callable[[float, float], bool]] = {
    "==": lambda a, b: a == b, "=": lambda a, b: a == b, "!=": lambda a, b: a != b,
    ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    "<": lambda a, b: a < b}


class _Select:
    """An LSF select string read as LSF reads it (`||`/`or`, `&&`/`and`, `!`/`not`,
    parentheses, comparisons, `defined(x)`, bare boolean resources) and told per host in
    three values: True, False, None (a term the recorded outputs do not give)."""

    def __init__(self, body: str) -> None:
        self.toks, pos = [], 0
        while pos < len(body) and (m := _SELECT_TOKEN.match(body, pos)) is not None:
            self.toks.append(m.group(1))
            pos = m.end()
        if body[pos:].strip():
            raise ValueError(f"cannot read {body[pos:].strip()!r}")
        self.unread: list[str] = []
        self.checked = False

    def ok(self, n: Node) -> bool | None:
        self.i, self.n = 0, n
        got = self._or()
        if self.i != len(self.toks):
            raise ValueError(f"unexpected {self.toks[self.i]!r}")
        return got

    def _peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _take(self) -> str:
        if self.i >= len(self.toks):
            raise ValueError("it ends too soon")
        self.i += 1
        return self.toks[self.i - 1]

    def _or(self) -> bool | None:
        vals = [self._and()]
        while self._peek() in ("||", "or"):
            self._take()
            vals.append(self._and())
        return True if True in vals else None if None in vals else False

    def _and(self) -> bool | None:
        vals = [self._not()]
        while self._peek() in ("&&", "and"):
            self._take()
            vals.append(self._not())
        return False if False in vals else None if None in vals else True

    def _not(self) -> bool | None:
        if self._peek() in ("!", "not"):
            self._take()
            got = self._not()
            return None if got is None else not got
        return self._atom()

    def _atom(self) -> bool | None:
        tok = self._take()
        if tok == "(":
            got = self._or()
            if self._take() != ")":
                raise ValueError("a parenthesis is not closed")
            return got
        if tok == "defined" and self._peek() == "(":
            self._take()
            name = self._take()
            if self._take() != ")":
                raise ValueError("defined( is not closed")
            return self._said(f"defined({name})", self._defined(name))
        if self._peek() in _SELECT_OPS:
            op, want = self._take(), self._take().strip("\"'")
            return self._said(f"{tok}{op}{want}", self._compare(tok.lower(), op, want))
        # a bare word: a boolean resource the host has (lshosts RESOURCES)
        known = tok.lower() in _SELECT_FIELDS or tok.lower() in _SELECT_UNREAD
        return self._said(tok, None if known else tok in self.n.features)

    def _said(self, term: str, got: bool | None) -> bool | None:
        if got is None and term not in self.unread:
            self.unread.append(term)
        self.checked |= got is not None
        return got

    def _defined(self, name: str) -> bool | None:
        if name.lower() in _SELECT_FIELDS:
            return _SELECT_FIELDS[name.lower()](self.n) not in (None, "")
        return None if name.lower() in _SELECT_UNREAD else name in self.n.features

    def _compare(self, name: str, op: str, want: str) -> bool | None:
        if name not in _SELECT_FIELDS:
            return None
        have = _SELECT_FIELDS[name](self.n)
        if name in ("type", "model", "hname"):  # strings: equal or not
            if name == "type" and want.lower() == "any":
                return True
            if have is None or op not in ("==", "=", "!="):
                return None
            same = have == (norm_arch(want) if name == "type" else want)
            return same if op != "!=" else not same
        try:
            return _SELECT_OPS[op](float(have or 0), float(want))
        except ValueError:
            return None


def lsf_select_hosts(text: str, nodes: list[Node]) -> tuple[set[str] | None, list[str]]:
    """The hosts an LSF select string (`select[(ngpus>0 || model==EPYC) && !bigmem]`) lets
    the job use, and its terms that cannot be told from what the recorded `lshosts`/
    `bhosts` give of the hosts (ncpus, ngpus, maxmem/mem in MB, type, model, hname and
    boolean resources are; load indices, swap, tmp and others are left to bsub): None when
    no term can be checked. A string it cannot read is left to bsub whole."""
    body = text.strip()
    if body.startswith("select[") and body.endswith("]"):
        body = body[len("select["):-1]
    try:
        sel = _Select(body)
        meet = {n.name for n in nodes if sel.ok(n) is not False}
    except ValueError as e:
        return None, [f"select[{body}]: this code cannot read it ({e}; "
                      "bsub decides)"]
    return (meet if sel.checked else None), [
        f"select[] term {t!r}: the hosts' recorded outputs (lshosts, "
        "bhosts) do not give it (bsub decides)" for t in sel.unread]


def _lsf_hosts(text: str, snap: SiteSnapshot, nodes: list[Node], fit: set[str], req: Req,
               site_arch: str | None) -> tuple[list[str], set[str]]:
    """The hosts an LSF job's `-m` names (hosts, host groups from `bmgroup`, `others`,
    `~host`): why they leave it no place, and the nodes of `fit` among them."""
    from .dialects.lsf_commands import expand_hosts

    names = {n.name for n in nodes}
    groups = snap.host_groups or {}
    unknown = [h for h in text.split() if (b := re.sub(r"\+[0-9]+$", "", h).lstrip("~"))
               not in names and b.rstrip("/") not in groups
               and b not in ("all", "others", "allremote") and "@" not in b]
    if unknown and (snap.host_groups is not None or not all(h.endswith("/") for h in unknown)):
        return [f"-m names {', '.join(unknown)}: neither a host nor a host group here "
                f"(host groups: {', '.join(sorted(groups)) or 'none'})"], set()
    hosts = expand_hosts(text.split(), snap.host_groups, [n.name for n in nodes])
    if hosts is None:
        return [], fit  # a group not known: the scheduler decides
    mine = set(hosts)
    if not mine & fit:
        named = [n for n in nodes if n.name in mine]
        return [f"the hosts -m names ({text}) cannot run it: "
                + (partition_misses(req, named, site_arch, SITE_WORDS["lsf"]) if named
                   else "none is a host")], set()
    return [], fit & mine


def _hosts_among(spec: JobSpec, cfg: SiteConfig) -> tuple[list[str], str] | None:
    """The hosts a job's nodes are taken from (flux `--requires=host:`, Grid Engine
    `-l hostname=a|b`) and the directive that names them, where the script this site gets
    keeps them (as written in its own dialect, or carried: node_lists.carried); None where
    it names none or they do not reach this site. Flux sites read their own host terms
    (`_flux_hosts`), Slurm's --nodelist and LSF's -m are read on their own. Slurm's
    --nodelist and a PBS select's `host=` (each host the job's) are checked at the other
    schedulers' sites as they keep them."""
    named = named_hosts(spec)
    source = spec.source_dialect
    if named is None or named.among is None or named.why_not \
            or named.every and source == cfg.scheduler:
        return None  # (Slurm's own --nodelist: _named_hosts; a PBS select's: _pbs_chunks)
    if cfg.scheduler == source == "flux":
        return None
    if cfg.scheduler != source and not carried(named, spec, cfg.scheduler)[0]:
        return None  # the translation drops them, and says so
    return expand_hostlist(named.among), named.raw(named.among)


def _among_misses(among: tuple[list[str], str], scheduler: str, req: Req, nodes: list[Node],
                  fit: set[str], site_arch: str | None, words: Words
                  ) -> tuple[list[str], set[str]]:
    """Why the hosts a job's nodes come from leave it no place here, and the nodes of
    `fit` among them. A host the site does not have: bsub refuses `-m` naming it, sbatch
    a --nodelist naming it, a PBS chunk on it never runs, and Grid Engine and flux never
    match it (the others named may still). At Slurm and PBS each host named is the job's."""
    hosts, said = among
    have = {n.name: n for n in nodes}
    missing = [h for h in hosts if h not in have]
    if missing and (scheduler in ("lsf", "slurm", "pbs") or len(missing) == len(hosts)):
        return [f"{said} names host(s) this site does not have: {_few(set(missing))}"
                + (" (bsub refuses -m naming a host it does not know)"
                   if scheduler == "lsf" else "")], set()
    mine = {h for h in hosts if h in have}
    if not fit:  # the site's nodes cannot run it at all: said already
        return [], fit
    if not mine & fit:
        return [f"the hosts {said} names cannot run it: " + partition_misses(
            req, [have[h] for h in sorted(mine)], site_arch, words)], set()
    if scheduler in ("slurm", "pbs"):  # --nodelist, host=: each is the job's (others may
        # join them at Slurm)
        if unfit := sorted(mine - fit):
            return [f"node(s) {', '.join(unfit)} named by {said} cannot run it: "
                    + partition_misses(req, [have[h] for h in unfit], site_arch, words)], set()
        return [], fit if len(mine) < req.nodes else fit & mine
    if len(mine & fit) < req.nodes:
        return [f"{said} leaves it {len(mine & fit)} node(s) that can run it, it needs "
                f"{req.nodes}"], set()
    return [], fit & mine


def _named_hosts(req: Req, nodes: list[Node], fit: set[str], site_arch: str | None
                 ) -> list[str]:
    """Why the hosts a Slurm job names (--nodelist: each of them is the job's; --exclude:
    none of them is) leave it no place here."""
    names = {n.name for n in nodes}
    if missing := [h for h in req.nodelist if h not in names]:
        return [f"--nodelist names node(s) this site does not have: {', '.join(missing)}"]
    out = []
    if bad := [h for h in req.nodelist if h in req.exclude]:
        out.append(f"node(s) {', '.join(bad)} both in --nodelist and --exclude")
    if unfit := [n for n in nodes if n.name in req.nodelist and n.name not in fit]:
        out.append(f"node(s) {', '.join(n.name for n in unfit)} named by --nodelist cannot "
                   f"run it: {partition_misses(req, unfit, site_arch)}")
    left = fit - set(req.exclude)
    if fit and len(left) < req.nodes:
        kept = f"only {len(left)} other node(s) can" if left else "no other node can"
        out.append(f"--exclude {','.join(req.exclude)} leaves it too few nodes: "
                   f"{kept} run it, it needs {req.nodes}")
    return out


def _pbs_chunks(spec: JobSpec, cfg: SiteConfig, nodes: list[Node], site_arch: str | None
                ) -> tuple[list[tuple[Req, set[str]]], str, list[str], list[list[str]],
                           list[bool]] | None:
    """A PBS site's view of a job of chunks (`select=1:ncpus=4+2:ngpus=1`, or N of one
    shape that may share hosts): each chunk's request and the nodes that can hold one of
    it, how chunks share hosts, their texts, each one's reasons no node can hold it and
    whether its pieces take distinct hosts (never: `place` says); None for another
    scheduler or a job that asks no chunks."""
    if cfg.scheduler != "pbs" or cfg.flavor == "slurm":
        return None
    from .dialects.pbs_script import pbs_script

    got = pbs_script.chunk_shapes(spec)
    if got is None:
        return None
    biggest = max((n.cpus for n in nodes), default=0)
    words = words_of(cfg.scheduler, cfg.flavor)
    fits, texts, why = [], [], []
    for text, one in got[0]:
        r = request(one, biggest)
        found, ok = node_checks(r, nodes, site_arch, words=words)
        # a chunk that names its host (`host=`/`vnode=`) runs there only; N chunks of one
        # shape carry it in the spec
        named = _pbs_named_hosts(text) or (_pbs_named_hosts(one) if len(got[0]) == 1 else [])
        if named:
            found = found or _host_misses(named, r, nodes, ok, site_arch, "the chunk", words)
            ok &= set(named)
        fits.append((r, ok))
        texts.append(text)
        why.append(found)
    return fits, got[1], texts, why, [False] * len(fits)


def _lsf_terms(spec: JobSpec, nodes: list[Node], site_arch: str | None, allowed: set[str]
               ) -> tuple[list[tuple[Req, set[str]]], str, list[str], list[list[str]],
                          list[bool]] | None:
    """An LSF site's view of a compound job (`1*{rusage[mem=64GB]} + 16*{span[ptile=8]}`),
    as `_pbs_chunks` gives a PBS job's chunks: each term's pieces (its hosts where it has a
    span[], apart; else its slots, placed freely) on the hosts of `allowed` that fit it
    and its own select[]. GPUs of a term of free slots are asked of its hosts, not of
    each slot (LSF reserves them per host). None for a job of one shape."""
    from .dialects.lsf_script import lsf_script

    got = lsf_script.term_shapes(spec)
    if got is None:
        return None
    biggest = max((n.cpus for n in nodes), default=0)
    fits, texts, why, apart = [], [], [], []
    for text, one, spans in got:
        r = request(one, biggest)
        found, ok = node_checks(r, nodes, site_arch, words=SITE_WORDS["lsf"])
        for d in one.unknown:  # the term's own select[]
            if d.dialect == "lsf" and d.option == "-R select" and d.value:
                meet = lsf_select_hosts(d.value, nodes)[0]
                if meet is not None and not meet & ok and not found:
                    found = [f"no host meets {d.value} that can run it"]
                ok &= meet if meet is not None else ok
        if ok and not ok & allowed and not found:
            found = [f"none of the hosts -m and select[] leave it ({_few(allowed)}) can "
                     "run it: " + partition_misses(r, [n for n in nodes if n.name in allowed],
                                                   site_arch, SITE_WORDS["lsf"])]
        fits.append((r if spans else replace(r, gpn=0), ok & allowed))
        texts.append(text)
        why.append(found)
        apart.append(spans and r.nodes > 1)
    return fits, "terms", texts, why, apart


_PBS_HOST = re.compile(r"(?:^|:)(?:host|vnode)=([\w.\-]+)")


def _pbs_named_hosts(where: JobSpec | str) -> list[str]:
    """The hosts a PBS select names (`host=gpu1`, `vnode=gpu1[0]`): of one chunk's text, or
    of a spec's kept `-l select:host`/`select:vnode`."""
    if isinstance(where, str):
        return list(dict.fromkeys(_PBS_HOST.findall(where)))
    return list(dict.fromkeys(d.value for d in where.unknown if d.dialect == "pbs" and d.value
                              and d.option in ("-l select:host", "-l select:vnode")))


def _host_misses(named: list[str], req: Req, nodes: list[Node], fit: set[str],
                 site_arch: str | None, who: str, words: Words = SLURM_WORDS) -> list[str]:
    """Why the hosts a PBS select names cannot run it: not the site's, or too small."""
    have = {n.name: n for n in nodes}
    missing = [h for h in named if h not in have]
    if missing:
        return [f"host {', '.join(missing)} named by {who} (host=/vnode=) is not one of the "
                f"site's nodes ({_few(set(have))})"]
    if not set(named) & fit:
        return [f"host {', '.join(named)} named by {who}: "
                + partition_misses(req, [have[h] for h in named], site_arch, words)]
    return []


def _chunk_fit(chunks: tuple[list[tuple[Req, set[str]]], str, list[str], list[list[str]],
                             list[bool]], req: Req, nodes: list[Node],
               names: list[str] | None = None) -> tuple[list[str], set[str], Req]:
    """Reasons the chunks cannot be placed on the site, the nodes any chunk may use, and
    the request the start is estimated with (the hosts the chunks take, each asked the
    least any chunk asks, a lower bound; for chunks of one shape, the hosts they share
    evenly, `_free_shape`). `names`: how the reasons name each chunk (else its number and
    text)."""
    fits, how, texts, why, apart = chunks
    word = "term" if how == "terms" else "chunk"
    names = names or [f"{word} {i + 1} ({t})" for i, t in enumerate(texts)]
    reasons = [f"{names[i]}: {r}" if len(why) > 1 else r
               for i, found in enumerate(why) for r in found]
    fit = set().union(*(ok for _, ok in fits))
    hosts = pack_chunks(fits, [n for n in nodes if n.name in fit and node_usable(n)], how,
                        apart) if not reasons else None
    if not reasons and hosts is None:
        hosts, missed = first_fit(fits, [n for n in nodes if n.name in fit], how, apart)
        if hosts is None:  # not for lack of up nodes (the partitions say that)
            mine = [n for n in nodes if n.name in fit]
            short = [f"{sum(get(r) * r.nodes for r, _ in fits)} {what} in all, the nodes "
                     f"that can hold them have {sum(have(n) for n in mine)}"
                     for what, get, have in (("GPUs", lambda r: r.gpn, lambda n: n.gpus),
                                             ("CPUs", lambda r: r.cpn, lambda n: n.cpus))
                     if sum(get(r) * r.nodes for r, _ in fits) > sum(have(n) for n in mine)]
            count = sum(r.nodes for r, _ in fits)
            if how == "scatter" and count > len(mine):  # a host each: too few hosts
                short.insert(0, f"{quantity(count, 'host')}, one a chunk, and {len(mine)} can "
                                f"hold one")
            reasons.append(f"the {word}s {'+'.join(texts)} do not fit the site's nodes "
                           "together (" + ("each term's span" if how == "terms" else
                                           f"{how} placement") + ")"
                           + (f": they ask {'; '.join(short)}" if short else "")
                           + (f"; {names[missed]} is the one left "
                              "without a host" if missed is not None
                              and len(texts) > 1 else ""))
    per = 1
    if len(fits) == 1 and hosts and how == "free":
        hosts, per = _free_shape(fits[0][0], fits[0][1], nodes, hosts)
    elif len(fits) == 1 and hosts:
        per = -(-fits[0][0].nodes // hosts)
    elif hosts and how not in ("scatter", "pack"):
        # shapes that share hosts: first fit on empty hosts may take more than they need
        # (a small piece alone on a host another's piece leaves room on); the fewest they
        # can take is the most pieces one shape keeps apart
        hosts = max([1, *(r.nodes for (r, _), own in zip(fits, apart, strict=True) if own)])
    cpn = min(r.cpn for r, _ in fits) * per
    probe = replace(req, nodes=hosts or 1, tpn=1, cpt=cpn, cpn=cpn,
                    gpn=min(r.gpn for r, _ in fits) * per,
                    mem=min(r.mem for r, _ in fits) * per)
    return reasons, fit, probe


def _free_shape(chunk: Req, ok: set[str], nodes: list[Node], packed: int) -> tuple[int, int]:
    """How N chunks of one shape placed freely are estimated: (hosts, chunks on each).
    The fewest hosts whose free CPUs, GPUs and memory hold an even share of them now
    (chunks fill what running jobs leave), else as tightly as the hosts' sizes allow
    (`packed` hosts, waiting for them to free)."""
    free = [n for n in nodes if n.name in ok and node_usable(n)]
    for h in range(packed, min(chunk.nodes, len(free)) + 1):
        per = -(-chunk.nodes // h)
        room = [n for n in free if n.cpus - n.cpus_allocated >= per * chunk.cpn
                and n.gpus - n.gpus_allocated >= per * chunk.gpn
                and (not n.memory_mb or n.memory_mb >= per * chunk.mem)]
        if len(room) >= h:
            return h, per
    return packed, -(-chunk.nodes // packed)


def _grouped_short(req: Req, counted: list, brackets: list[Op], partition: str,
                   nodes: list[Node], site_arch: str | None) -> list[str]:
    """Why a partition's `nodes` (those that can run the job) fall short of what its
    constraint asks of several nodes together: `a100*2` (that many of them with it) or
    `[a|b]` (all of them with the same alternative)."""
    out = [f"constraint '{c.text()}' needs {quantity(c.count or 0, 'node')} with it, "
           f"partition {partition} has {k}" for c in counted
           if (k := sum(part_met(c, n, site_arch) for n in nodes)) < (c.count or 0)]
    return out + [_bracket_short(c, partition, req.nodes, nodes, site_arch) for c in brackets
                  if _bracket_most(c, nodes, site_arch) < req.nodes]


def _bracket_most(c: Op, nodes: list[Node], site_arch: str | None) -> int:
    """The most of `nodes` that meet one same alternative of `[a|b|c]`."""
    return max((sum(part_met(alt, n, site_arch) for n in nodes) for alt in c.items),
               default=0)


def _bracket_short(c: Op, partition: str, wanted: int, nodes: list[Node],
                   site_arch: str | None) -> str:
    counts = ", ".join(f"{alt.text()}: {sum(part_met(alt, n, site_arch) for n in nodes)}"
                       for alt in c.items)
    return (f"constraint '{c.text()}' needs all {quantity(wanted, 'node')} with the same one of "
            f"them, partition {partition} has at most {_bracket_most(c, nodes, site_arch)} "
            f"({counts})")


def _meeting(c: Constraint, elig: list[int], nodes: list[Node], idx: dict[str, int],
             site_arch: str | None) -> list[int]:
    """The simulation's indices, among `elig`, of the nodes that meet `c`."""
    met = {idx[n.name] for n in nodes if n.name in idx and part_met(c, n, site_arch)}
    return [i for i in elig if i in met]
