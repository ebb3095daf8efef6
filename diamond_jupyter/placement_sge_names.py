"""Grid Engine complexes by the names a site gives them, and its FORCED complexes.

A job, a resource quota and a queue's or host's complex_values may each name a complex
by its full name or by its shortcut (`qconf -sc`: `arch`/`a`, `h_vmem`/`mem`): both are
read as the complex. A complex whose requestable column says FORCED binds the queue
instances and hosts whose complex_values set it to the jobs that request it
(complex(5)). A string or boolean value a queue instance's or host's complex_values set
(`ssd=TRUE`, `site=ber`) takes only the jobs whose request of that complex matches it
(`value_misses`). Pure code.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from .dialects.sge_commands import amount
from .dialects.sge_script import MEMORY_COMPLEXES, sge_arch
from .digits import ascii_digits
from .model import (
    ARCH_ALIASES,
    Directive,
    JobSpec,
    Node,
    Partition,
    SgeComplexName,
    SiteSnapshot,
)
from .sge_expression import ExpressionError, expression_matches, ge_bool

_GPU_COMPLEXES = ("gpu", "gpus", "ngpus")
_TEXT_TYPES = ("STRING", "CSTRING", "RESTRING", "HOST")  # complex(5)'s string types
_CASELESS = ("CSTRING", "HOST")


def full_names(snap: SiteSnapshot) -> dict[str, str]:
    """Each complex's full name by its name and by its shortcut (`qconf -sc`); empty where
    the table was not read."""
    table = snap.sge_complex_names or {}
    by_short = {c.shortcut: c.name for c in table.values() if c.shortcut}
    return by_short | {name: name for name in table}


def with_full_names(spec: JobSpec, snap: SiteSnapshot) -> JobSpec:
    """`spec` with each `-l SHORTCUT=VALUE` it kept as written named by its complex's full
    name; one that is the job's memory (`-l mem=4G` where mem is h_vmem's shortcut), its
    architecture (`-l a=lx-amd64`) or its GPUs (`-l g=2`), where the script asks it no
    other way, read as that. Unchanged where the site's complexes were not read."""
    names = full_names(snap)
    renamed: dict[int, tuple[str, str]] = {}  # index in spec.unknown -> (full name, value)
    for i, d in enumerate(spec.unknown):
        short = d.option[3:] if d.dialect == "sge" and d.option.startswith("-l ") else None
        full = names.get(short or "")
        if short is not None and full is not None and full != short:
            renamed[i] = (full, (d.value or "").partition("=")[2])
    if not renamed:
        return spec
    spec = spec.model_copy(deep=True)
    r, c = spec.resources, spec.constraints
    unknown: list[Directive] = []
    for i, d in enumerate(spec.unknown):
        full, value = renamed.get(i, ("", ""))
        size = amount(value)
        if not full:
            unknown.append(d)
        elif full in MEMORY_COMPLEXES and size and r.memory_per_cpu_mb is None:
            r.memory_per_cpu_mb = max(1, math.ceil(size / 2**20))
            if full != "h_vmem":
                spec.metadata["sge_memory"] = full
        elif full == "arch" and value.startswith("lx-") and value in ARCH_ALIASES \
                and c.architecture is None:
            c.architecture = ARCH_ALIASES[value]
        elif full in _GPU_COMPLEXES and ascii_digits(value) and r.gpus_per_node is None:
            r.gpus_per_node = int(value)
            spec.metadata["sge_gpu"] = full
        else:
            unknown.append(d.model_copy(update={
                "option": f"-l {full}", "value": f"{full}={value}" if value else full}))
    spec.unknown = unknown
    return spec


def requested(spec: JobSpec, gpu_complex: str | None = None) -> set[str]:
    """The complexes a Grid Engine job requests (`-l`), by full name once `with_full_names`
    has read its shortcuts: those kept as written and those its fields stand for (its
    walltime h_rt, its memory, its GPUs, its architecture, exclusive use, CPU time)."""
    out = {d.option[3:] for d in spec.unknown if d.dialect == "sge" and d.option.startswith("-l ")}
    r, c, meta = spec.resources, spec.constraints, spec.metadata
    if r.walltime_s:
        out.add("h_rt")
    if r.memory_per_cpu_mb or r.memory_mb:
        out.add(str(meta.get("sge_memory") or "h_vmem"))
    if r.gpus_per_node:
        out.add(str(meta.get("sge_gpu") or gpu_complex or "gpu"))
    if c.architecture:
        out.add("arch")
    if c.exclusive:
        out.add(str(meta.get("sge_exclusive") or "exclusive"))
    if isinstance(meta.get("sge_cpu"), str):
        out.add(meta["sge_cpu"])
    return out


def forced_misses(spec: JobSpec, snap: SiteSnapshot, p: Partition, hosts: list[str]
                  ) -> dict[str, list[str]]:
    """The hosts of `hosts` whose instance of queue `p` never takes the job: by host, the
    FORCED complexes its queue instance's or host's complex_values set that the job does
    not request."""
    forced = {c.name for c in (snap.sge_complex_names or {}).values()
              if c.requestable == "FORCED"}
    if not forced:
        return {}
    asked = requested(spec, snap.gpu_complex)
    nodes: Mapping[str, Node] = {n.name: n for n in snap.nodes}
    out = {}
    for h in hosts:
        node = nodes.get(h)
        here = set((p.instance_complexes or {}).get(h, [])) | set(
            (node.complex_values or []) if node is not None else [])
        if missed := sorted((here & forced) - asked):
            out[h] = missed
    return out


def forced_said(p: Partition, missed: dict[str, list[str]], snap: SiteSnapshot,
                passed_over: bool = False) -> str:
    """Why the hosts of `missed` (`forced_misses`) do not take the job in queue `p`
    (`passed_over`: it may run on its other hosts)."""
    names = sorted({n for m in missed.values() for n in m})
    hosts = sorted(missed)
    where = (f"its instance on {hosts[0]}" if len(hosts) == 1 else
             f"its instances on {', '.join(hosts[:4])}{', ...' if len(hosts) > 4 else ''}")
    table = snap.sge_complex_names or {}
    asks = " ".join(f"-l {n}=VALUE" for n in names)
    shortcuts = [f"{n} ({table[n].shortcut})" if n in table and table[n].shortcut
                 and table[n].shortcut != n else n for n in names]
    one = len(names) == 1
    return (f"queue {p.name}: {'passed over: ' if passed_over else ''}{where} "
            f"{'sets' if len(hosts) == 1 else 'set'} "
            f"complex{'' if one else 'es'} {', '.join(shortcuts)} in complex_values, "
            f"requestable FORCED in qconf -sc: Grid Engine starts there only a job that "
            f"requests {'it' if one else 'them'}, which this job does not (ask {asks})")


def text_admits(asked: str, value: str, kind: str | None) -> bool | None:
    """Whether a job's request `asked` of a complex of type `kind` (qconf -sc; None: not
    read, taken from the value) matches the `value` a host or queue sets: a BOOL as truth
    (TRUE, FALSE, 1, 0; `1.000000` as qhost prints TRUE), a string as GE matches a request
    expression against it (`sge_expression`; CSTRING and HOST in any case). None: not
    compared (a number, a request that is no BOOL or no expression)."""
    boolean = kind == "BOOL" if kind else ge_bool(value) is not None and amount(value) is None
    if boolean:
        holds, wanted = ge_bool(value), ge_bool(asked)
        return None if holds is None or wanted is None else holds == wanted
    if kind not in _TEXT_TYPES if kind else amount(value) is not None:
        return None
    try:
        return expression_matches(asked, value, kind in _CASELESS)
    except ExpressionError:
        return None


def value_misses(spec: JobSpec, snap: SiteSnapshot, p: Partition, hosts: list[str],
                 texts: Mapping[str, str]) -> dict[str, list[tuple[str, str, str, str]]]:
    """The hosts of `hosts` whose instance of queue `p` never takes the job: by host, each
    (where, complex, value set, value asked) where its queue instance's ("queue") or the
    host's ("host") complex_values set a string or boolean complex the job asks (`texts`:
    `job_texts`) to a value its request does not match, or where the architecture the host
    reports ("reported", qhost's arch_string; its complex_values' arch, when set, instead)
    does not match the job's `-l arch` expression. A plain architecture the script names
    (`-l arch=lx-amd64`) is left to the hosts' architecture check."""
    table: Mapping[str, SgeComplexName] = snap.sge_complex_names or {}
    nodes: Mapping[str, Node] = {n.name: n for n in snap.nodes}
    arch_asked = texts.get("arch") != sge_arch(spec.constraints.architecture)
    out: dict[str, list[tuple[str, str, str, str]]] = {}
    for h in hosts:
        node = nodes.get(h)
        host_texts = (node.complex_texts or {}) if node else {}
        reported = {"arch": node.arch_string} if arch_asked and node is not None \
            and node.arch_string and "arch" not in host_texts else {}
        for where, set_here in (("queue", (p.instance_complex_values or {}).get(h, {})),
                                ("host", host_texts), ("reported", reported)):
            for name, value in set_here.items():
                asked = texts.get(name)
                kind = table[name].type if name in table else None
                if asked is not None and text_admits(asked, value, kind) is False:
                    out.setdefault(h, []).append((where, name, value, asked))
    return out


def value_said(p: Partition, missed: dict[str, list[tuple[str, str, str, str]]],
               passed_over: bool = False) -> str:
    """Why the hosts of `missed` (`value_misses`) do not take the job in queue `p`
    (`passed_over`: it may run on its other hosts), naming each host or queue and
    complex."""
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for h, misses in missed.items():
        for m in misses:
            groups.setdefault(m, []).append(h)
    said = []
    for (where, name, value, asked), hosts in groups.items():
        named = ", ".join(sorted(hosts)[:4]) + (", ..." if len(hosts) > 4 else "")
        one = len(hosts) == 1
        said.append((f"its instance{'' if one else 's'} on {named} set{'s' if one else ''} "
                     f"{name}={value} in the queue's complex_values" if where == "queue" else
                     f"host{'' if one else 's'} {named} report{'s' if one else ''} "
                     f"{name}={value} (qhost)" if where == "reported" else
                     f"host{'' if one else 's'} {named} set{'s' if one else ''} "
                     f"{name}={value} in {'its' if one else 'their'} complex_values")
                    + f", which the job's -l {name}={asked} does not match")
    return (f"queue {p.name}: {'passed over: ' if passed_over else ''}{'; '.join(said)}: "
            "Grid Engine starts there only a job whose request matches the value set")
