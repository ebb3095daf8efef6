"""The hosts a job names, carried between schedulers only where the meaning is kept exactly.

Two meanings: the job's nodes come from among the hosts named (Flux `--requires=host:`
(RFC 35), LSF `-m`, Grid Engine `-l hostname=`), or the job holds every host named (Slurm
`--nodelist`). The two are the same job when it asks for exactly as many nodes as are
named. Hosts the job must not have (Flux `-host:`, Slurm `--exclude`) mean the same
everywhere they can be said. Anything else (Flux `rank:`, terms joined with `or` or in
parentheses, a property among the host terms) is said untranslatable, never dropped
silently. Pure: text in, text out."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..digits import ascii_digits
from ..model import Directive, JobSpec
from .outputs_common import expand_hostlist

# flux's `--requires` operators for hosts and ranks (flux-core's constraint parser):
# `host`/`hosts` mean RFC 31's `hostlist`, `rank` its `ranks`, and the RFC 31 names
# themselves are taken as they are; each is read here as `host` or `rank`
FLUX_HOST_OPERATORS = {"host": "host", "hosts": "host", "hostlist": "host",
                       "rank": "rank", "ranks": "rank"}
HOST_TERM = re.compile(r"(?:-|not\s*)?(?:hosts?|hostlist|ranks?):", re.IGNORECASE)


@dataclass
class NamedHosts:
    """What a job's directives say of its hosts (`named_hosts`)."""

    read_from: list[Directive]  # the directives it comes from (carried, or said untranslatable)
    among: str | None = None  # a hostlist the job's nodes are taken from
    every: bool = False  # the job holds each host of `among` (Slurm --nodelist)
    exclude: list[str] = field(default_factory=list)  # hostlists the job never gets
    why_not: str | None = None  # the reason it cannot be carried anywhere, when it cannot
    said_by: dict[str, Directive] = field(default_factory=dict)  # a hostlist's directive
    # PBS chunks of different shapes: each chunk's host (None: it names none), in order
    per_chunk: list[str | None] = field(default_factory=list)

    def raw(self, hostlist: str | None = None) -> str:
        if hostlist in self.said_by:
            return self.said_by[hostlist].raw.strip()
        return "; ".join(dict.fromkeys(d.raw.strip() for d in self.read_from))


def named_hosts(spec: JobSpec, foreign_to: str | None = None) -> NamedHosts | None:
    """The hosts the job's scheduler directives name (Flux host terms of `--requires`,
    Slurm `--nodelist`/`--exclude`, LSF `-m`, Grid Engine `-l hostname=` and `-q q@host`,
    PBS `select`'s `host=`), those of `foreign_to`'s own dialect left out; None where they
    name none."""
    flux = [d for d in spec.unknown if d.dialect == "flux" != foreign_to
            and d.option == "--requires" and HOST_TERM.search(d.value or "")]
    if flux:
        return _flux(flux)
    slurm, component = [], 0
    for d in spec.unknown:
        if d.dialect == "slurm" != foreign_to:
            component += d.option in ("hetjob", "packjob")  # `#SBATCH hetjob`: the next one
            if d.value and d.option in ("--nodelist", "--exclude"):
                slurm.append((component, d))
    if spec.source_dialect == "slurm" != foreign_to and len(spec.components) > 1:
        later = spec.metadata.get("slurm_component_nodelists") or []
        if slurm or any(later):
            return _component_nodelists(slurm, later)
    if not slurm:
        chosen = [d for d in spec.unknown if d.dialect != foreign_to and d.value and (
            d.dialect == "lsf" and d.option == "-m"
            or d.dialect == "sge" and d.option in ("-l hostname", "-l h"))]
        if chosen:
            return _chosen_hosts(chosen)
        pbs = [d for d in spec.unknown if d.dialect == "pbs" != foreign_to and d.value
               and d.option in ("-l select:host", "-l select:vnode")]
        if pbs:
            return _pbs_select_hosts(spec, pbs)
        torque = spec.metadata.get("pbs_nodes_chunks")
        if isinstance(torque, dict) and foreign_to != "pbs" and spec.source_dialect == "pbs" \
                and any(not ascii_digits(c.split(":")[0]) for c in torque["raw"].split("+")):
            return _torque_hosts(torque)
        kept = spec.metadata.get("sge_queue_instances")
        if isinstance(kept, dict) and foreign_to != "sge" and spec.source_dialect == "sge":
            return _queue_instances(kept)
        return None
    out = NamedHosts([d for _, d in slurm])
    for component, d in slurm:
        if component:
            out.why_not = "the hosts of one component of a heterogeneous job"
        elif "/" in (d.value or ""):
            out.why_not = f"{d.option}={d.value} names a file of hosts, read where sbatch runs"
        elif d.option == "--nodelist":
            out.among, out.every = d.value, True  # sbatch keeps the last one
        else:
            out.exclude = [d.value or ""]
        out.said_by[d.value or ""] = d
    return out


def _component_nodelists(first: list[tuple[int, Directive]], later: list[str | None]
                         ) -> NamedHosts:
    """A Slurm hetjob's hosts, component by component: the first's `--nodelist` (its
    `--exclude` has no per-component form elsewhere), then each later one's own."""
    lines = [d for _, d in first]
    lines += [Directive(dialect="slurm", option="--nodelist", value=h,
                        raw=f"#SBATCH --nodelist={h} (component {i})")
              for i, h in enumerate(later, start=1) if h]
    out = NamedHosts(lines, why_not="the hosts of one component of a heterogeneous job")
    if any(d.option != "--nodelist" or "/" in (d.value or "") for _, d in first):
        return out
    out.per_chunk = [first[-1][1].value if first else None, *later]
    return out


def requires_terms(text: str) -> Iterator[tuple[bool, str, str, str]]:
    """A Flux `--requires` constraint's terms (RFC 35), all of them to be met, as (negated,
    kind, value, the word as written): `-host:x` and `not host:x` are negated, `and`/`&`
    only join; `hosts:`/`hostlist:` come as the kind `host`, `ranks:` as `rank`. Terms
    joined by `or` or in parentheses are the caller's to refuse."""
    negate = False
    for w in text.replace("&", " ").split():
        low = w.lower()
        if low == "and":
            continue
        if low == "not":
            negate = True
            continue
        neg, body = (True, w[1:]) if w.startswith("-") else (negate, w)
        negate = False
        kind, _, value = body.partition(":")
        yield neg, FLUX_HOST_OPERATORS.get(kind.lower(), kind), value, w


def _flux(directives: list[Directive]) -> NamedHosts:
    out = NamedHosts(directives)
    for d in directives:
        words = (d.value or "").replace("&", " ").split()
        if any(w.lower() in ("or", "|") or "|" in w or "(" in w or ")" in w for w in words):
            out.why_not = "terms joined with `or` or in parentheses"
            return out
        for neg, kind, value, w in requires_terms(d.value or ""):
            if kind.lower() == "rank":
                out.why_not = ("rank: names brokers by their order in the instance's "
                               "resource set, which no other scheduler numbers")
                return out
            if kind.lower() != "host" or not value:
                out.why_not = f"{w!r} is a property among host terms"
                return out
            out.said_by.setdefault(value, d)
            if neg:
                out.exclude.append(value)
            elif out.among is not None:
                out.why_not = "several host: terms (all of them met)"
                return out
            else:
                out.among = value
    return out


_PLAIN_HOST = re.compile(r"[A-Za-z0-9][\w.-]*")


def _chosen_hosts(directives: list[Directive]) -> NamedHosts:
    """Grid Engine `-l hostname=h1|h2` (`h=`): the job's hosts come from among those named,
    as flux's `host:` (the last directive counts, as qsub keeps it); `!h1&!h2`, hosts the
    job never gets; another pattern (`node*`, `h1&h2`) has no other scheduler's form. LSF
    `-m` is read only to say why it is not carried: it names hosts, host groups and
    compute units alike (bsub(1)), which no other scheduler's host list can tell apart (a
    group's name would be a host that never exists: refused, or a job that never starts)."""
    out = NamedHosts(directives)
    d = directives[-1]
    if d.dialect == "lsf":
        out.why_not = ("LSF's -m names hosts, host groups and compute units alike, which "
                       "cannot be told apart here")
        return out
    value = (d.value or "").partition("=")[2]
    negated = value.split("&")
    if all(n.startswith("!") and _PLAIN_HOST.fullmatch(n[1:]) for n in negated):
        # `!h1&!h2` (complex(5): not h1 and not h2): hosts the job never gets, as
        # Slurm's --exclude and flux's -host:
        out.exclude = [",".join(n[1:] for n in negated)]
        out.said_by[out.exclude[0]] = d
        return out
    names = value.split("|")
    odd = next((n for n in names if not _PLAIN_HOST.fullmatch(n)), None)
    if odd is not None:
        out.why_not = f"{odd!r} is a host pattern (wildcards, `!`, `&`), not a host"
        return out
    out.among = ",".join(names)
    out.said_by[out.among] = d
    return out


# a select's chunks, a resource's value quoted or not (`host="n1"`, qsub drops the quotes)
_SELECT = re.compile(r"""\bselect=((?:[^\s,"']|"[^"]*"|'[^']*')+)""")


def _pbs_select_hosts(spec: JobSpec, directives: list[Directive]) -> NamedHosts:
    """PBS Pro's `select=1:ncpus=8:host=n1+1:ncpus=8:host=n2`: each chunk naming a host
    runs there, so the job holds every host named (others for the chunks naming none), as
    Slurm's --nodelist. Carried only where the host list keeps that: one chunk a host, the
    chunks of one shape (else which chunk goes where is lost), hosts and not vnodes."""
    out = NamedHosts(directives)
    if any(d.option == "-l select:vnode" for d in directives):
        out.why_not = "vnode= names one of PBS's virtual nodes, which other schedulers lack"
        return out
    kept = spec.metadata.get("pbs_select_chunks")
    found = _SELECT.search(directives[-1].raw)
    text = kept["raw"] if isinstance(kept, dict) else found.group(1) if found else ""
    return _chunks_hosts(out, re.sub(r"""["']""", "", text), torque=False)


def _torque_hosts(kept: dict) -> NamedHosts:
    """Torque's `nodes=host1:ppn=4+host2:ppn=4`: a node spec begins with a node count or a
    host name, the bare words after it are properties (`nodes=1:ppn=4:gpu`: gpu is one),
    so each spec led by a name runs on that host, as PBS Pro's `host=`."""
    raw = str(kept["raw"])
    line = Directive(dialect="pbs", option="-l nodes", value=raw,
                     raw=str(kept.get("line") or f"#PBS -l nodes={raw}"))
    return _chunks_hosts(NamedHosts([line]), raw, torque=True)


def _chunks_hosts(out: NamedHosts, text: str, torque: bool) -> NamedHosts:
    """The hosts of PBS chunks (`+`-joined; each names its host as `host=H`, or in
    Torque's words as its first part) set on `out`, or why they cannot be carried."""
    hosts: list[str] = []
    shapes = set()
    each: list[str | None] = []
    for chunk in text.split("+"):
        parts = chunk.split(":")
        if torque:
            named = [] if ascii_digits(parts[0]) else [parts[0]]
            body = parts[1:]
        else:
            named = [p.partition("=")[2] for p in parts if p.lower().startswith("host=")]
            body = [p for p in parts[1 if ascii_digits(parts[0]) else 0:]
                    if not p.lower().startswith("host=")]
        if named and ascii_digits(parts[0]) and int(parts[0]) > 1:
            out.why_not = f"the {parts[0]} chunks of {chunk} share host {named[0]}"
            return out
        if (odd := next((h for h in named if not _PLAIN_HOST.fullmatch(h)), None)) is not None:
            out.why_not = f"{odd!r} is not a host name"  # `host=` with no name too
            return out
        hosts += named
        each.append(named[0] if named else None)
        shapes.add(frozenset(body))
    if not hosts or len(set(hosts)) < len(hosts):
        out.why_not = "chunks sharing one host"
        return out
    if len(shapes) > 1:
        out.why_not = ("each chunk's host goes with that chunk's shape, and the chunks "
                       "differ: one host list would lose which chunk runs where")
        out.per_chunk = each  # where each chunk is a component of its own: its host
        return out
    out.among, out.every = ",".join(hosts), True
    out.said_by[out.among] = out.read_from[0]
    return out


def _queue_instances(kept: dict) -> NamedHosts:
    """Grid Engine's `-q all.q@node07,all.q@node08`: the job's slots in those queues on
    those hosts, so its hosts come from among them (the queue goes as the job's queue);
    `@@group` (a host group) and patterns have no other scheduler's form."""
    raw = str(kept.get("raw") or "")
    line = Directive(dialect="sge", option="-q", value=raw,
                     raw=str(kept.get("line") or f"#$ -q {raw}"))
    out = NamedHosts([line])
    hosts = [p.partition("@")[2] for p in raw.split(",")]
    if not all(hosts):
        out.why_not = "queues named without a host beside queue instances"
    elif odd := next((h for h in hosts if not _PLAIN_HOST.fullmatch(h)), None):
        out.why_not = f"{odd!r} is a host group or pattern, not a host"
    else:
        out.among = ",".join(dict.fromkeys(hosts))
        out.said_by[out.among] = line
    return out


def node_count(spec: JobSpec) -> int | None:
    """How many nodes the job asks for, where that is one number (None: unsaid, left to the
    scheduler's placement of its tasks)."""
    r = spec.resources
    if r.nodes is not None:
        return r.nodes
    if (r.tasks or 1) == 1 and (r.tasks_per_node or 1) == 1:
        return 1
    return None


def carried(named: NamedHosts, spec: JobSpec, target: str
            ) -> tuple[list[tuple[str, str, str]], list[str]]:
    """What `target` writes for `named`, as (option, value, the source directive) for its
    renderer's `add` (`("nodelist", "c[1-3]", ...)` at Slurm), and the report lines, one
    per meaning not carried exactly."""
    if named.why_not:
        return [], [f"dropped: {named.raw()} ({named.why_not}: no {target} equivalent)"]
    out: list[tuple[str, str, str]] = []
    said = []
    hosts = expand_hostlist(named.among) if named.among else []
    nodes = node_count(spec)
    among = named.raw(named.among)
    if named.among is not None:
        if target == "slurm" and named.every and nodes is not None and nodes > len(hosts):
            # sbatch's --nodelist beside more nodes: these, and others up to the count
            out.append(("nodelist", named.among, among))
        elif (target == "slurm" or named.every) and nodes != len(hosts):
            # "from among N hosts" and "every one of N hosts" are one job only at N nodes
            asked = f"{nodes} node(s)" if nodes else "no single node count"
            source = "gives the job every one" if named.every else \
                "takes the job's nodes from among them"
            said.append(f"dropped: {among} (the job asks {asked} of the {len(hosts)} "
                        f"host(s) named, which its scheduler {source}; no {target} form "
                        "means the same)")
        elif target in ("slurm", "flux"):
            out.append(("nodelist", named.among, among) if target == "slurm"
                       else ("requires", f"host:{named.among}", among))
        elif target in ("lsf", "sge") and any("[" in h or "]" in h for h in hosts):
            said.append(f"dropped: {among} (a host list too long to write out for {target})")
        elif target == "lsf":
            out.append(("-m", " ".join(hosts), among))
        elif target == "sge":
            out.append(("-l", f"hostname={'|'.join(hosts)}", among))
        elif nodes == len(hosts):  # as many nodes as hosts: each chunk on its own host
            out.append(("host=", ",".join(hosts), among))
        else:
            said.append(f"dropped: {among} ({target} names one host per chunk (host=); no "
                        "form takes a job's nodes from among a list)")
    for ex in named.exclude:
        if target == "slurm":
            out.append(("exclude", ex, named.raw(ex)))
        elif target == "flux":
            out.append(("requires", f"-host:{ex}", named.raw(ex)))
        elif target == "sge" and named.among is None \
                and not any("[" in h or "]" in h for h in expand_hostlist(ex)):
            # complex(5)'s `!h1&!h2`; beside a hostname= of its own it would be a second
            # hostname request (qsub keeps one)
            out.append(("-l", "hostname=" + "&".join(f"!{h}" for h in expand_hostlist(ex)),
                        named.raw(ex)))
        elif target == "sge" and named.among is not None:
            said.append(f"dropped: {named.raw(ex)} (the hosts {ex} the job must not have: "
                        "qsub keeps one hostname request, the hosts named)")
        else:
            said.append(f"dropped: {named.raw(ex)} (the hosts {ex} the job must not have: "
                        f"no {target} form excludes hosts)")
    return out, said


def component_hosts(spec: JobSpec, components: int, target: str
                    ) -> tuple[list[str | None], NamedHosts] | None:
    """The host each component of a job of several shapes runs on, where the job's hosts
    are named chunk by chunk (PBS `select=1:ncpus=4:host=a+1:ncpus=8:host=b`, Torque
    `nodes=a:ppn=4+b:ppn=8`) and each chunk is one of its `components`; None otherwise."""
    named = named_hosts(spec, foreign_to=target)
    if named is None or len(named.per_chunk) != components:
        return None
    return named.per_chunk, named


def render_named_hosts(spec: JobSpec, target: str,
                       add: Callable[[str, str], str | None]
                       ) -> tuple[list[str], list[tuple[str, str | None]]]:
    """Write the hosts another scheduler's directives of `spec` name with `add` (the
    target renderer's: None once written, else why it could not be), as far as `target`
    keeps their meaning; returns the report lines and the (option, value) of the
    directives now said (for `foreign_warnings`' skip)."""
    named = named_hosts(spec, foreign_to=target)
    if named is None:
        return [], []
    opts, said = carried(named, spec, target)
    for opt, value, raw in opts:
        why = add(opt, value)
        said.append(f"dropped: {raw} ({why})" if why
                    else f"kept: {raw} as {_shown(target, opt, value)}")
    return said, [(d.option, d.value) for d in named.read_from]


def _shown(target: str, opt: str, value: str) -> str:
    if target in ("slurm", "flux"):
        return f"--{opt}={value}"
    if opt == "host=":
        return "one chunk on each of " + value
    return f"{opt} {value}"
