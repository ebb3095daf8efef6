"""What a job needs from a site, read from the job itself (pure: text and specs in).

A job says what it needs in its directives (`--constraint` expressions with features and
`arch=...`, GPU type, memory) and in its body: modules, containers, launchers and GPU
tools, read as the shell runs it (`script_body.scan_body`). Options of the faces
(`--arch`, `--software`, `--container`, `--gpu-type`, `--memory`) add to it.

Constraint expressions follow Slurm: features joined by `&` (and) and `|` (or), brackets
`[a|b]` (one choice for every node), parentheses, and `*N` counts; evaluated left to
right as Slurm does (`a|b&c` is `(a|b)&c`). A feature may contain `=` (`arch=aarch64`);
a term `arch=X` also matches a node whose reported architecture is X.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from .digits import ascii_digits
from .model import (
    ARCH_ALIASES,
    ARCHES,
    PBS_GPU_MODEL_KEYS,
    BadInput,
    JobSpec,
    Node,
    gpus_of_job_over_unknown_nodes,
)
from .script_body import ContainerNeed, EnvNeed, NeedModel, SoftwareNeed, scan_body

_ARCHES = ARCHES  # (model.py)
_PBS_GPU_KEYS = PBS_GPU_MODEL_KEYS  # (model.py)


def norm_arch(x: Any) -> str | None:
    if not x:
        return None
    a = str(x).strip().lower()
    return ARCH_ALIASES.get(a, a)


def metadata_arch(value: Any) -> str | None:
    """The sites file's `metadata.architecture` as the one architecture of the site's nodes
    that carry none of their own: `x86_64`, `[x86_64]`; None where it names several
    (`[x86_64, aarch64]`, `x86_64, aarch64`: each node's own then decides) or none."""
    names = value if isinstance(value, (list, tuple)) else str(value or "").split(",")
    archs = {norm_arch(str(n)) for n in names if str(n).strip()} - {None}
    return archs.pop() if len(archs) == 1 else None


def node_arch(n: Node, fallback: str | None = None) -> str | None:
    """A node's architecture: an admin's `arch=...` label or architecture-named feature (what
    users select with `-C arch=...`) wins over what the node daemon reports; `fallback` (the
    site's) when neither says."""
    for f in n.features:
        fl = f.strip().lower()
        if fl.startswith("arch="):
            return norm_arch(fl[5:])
        if norm_arch(fl) in _ARCHES:
            return norm_arch(fl)
    return norm_arch(n.architecture) or fallback


# ---------------------------------------------------------------- GPU models

# Each scheduler and site spells the same GPU its own way: Slurm's GRES type (`a100`,
# `nvidia_a100`, `a100-sxm4-40gb`), PBS's custom resource (`gpu_model=A100-SXM4-80GB`),
# LSF's gmodel from NVML (`TeslaV100_SXM2_32GB`, `NVIDIAA100_SXM4_80GB`), nvidia-smi's
# name (`NVIDIA A100-SXM4-80GB`, `NVIDIA A100 80GB PCIe`). `gpu_key` reads each as
# (model, memory GB, form factor): case-insensitive, words split at blanks, `-` and `_`;
# vendor and brand words (NVIDIA, Tesla, GeForce, Quadro, RTX, AMD, Instinct, Intel) are
# dropped, alone or glued to the model (`TeslaV100` is `v100`); a word of memory (`80gb`,
# `80g`, `40GiB`) and one of form factor (`sxm4`, `pcie`, `nvl`, `hbm3`) are qualifiers;
# every other word is the model (`a100`, `v100s`, `l40s`, a MIG slice `a100 3g.40gb`).
# A request matches an offer with the same model where every qualifier both name agrees
# (LSF's own rule for gmodel: the brand alone, or with its memory): `a100` takes any A100
# and `A100-SXM4-80GB`; `a100_80g` (`NVIDIAA100_SXM4_80GB`) an 80 GB A100, never a 40 GB
# one; an offer that names no memory or form (a site's plain `a100`) is matched by its
# family, which `gpu_family_only` tells apart (placement says so in a note); `v100` never
# an A100, nor `a10` an A100.
_GPU_BRANDS = ("nvidia", "tesla", "geforce", "quadro", "rtx", "amd", "radeon", "instinct",
               "intel")
_GPU_MEMORY = re.compile(r"([0-9]+)(?:g|gb|gib)")
_GPU_FORM = re.compile(r"sxm[0-9]*|pcie|pci|nvl|nvlink|hbm[0-9]*e?|mxm")


@dataclass(frozen=True)
class GpuKey:
    model: tuple[str, ...]
    memory_gb: int | None = None
    form: str | None = None

    def offers(self, wanted: GpuKey) -> bool:
        """Whether a GPU of this key satisfies a request for `wanted`."""
        # the model's words compared joined: `GTX 1080 Ti` is `gtx1080ti`, `RTX 3090` `3090`
        return bool(wanted.model) and "".join(self.model) == "".join(wanted.model) \
            and (self.memory_gb is None or wanted.memory_gb in (None, self.memory_gb)) \
            and (self.form is None or wanted.form is None or self.form.startswith(wanted.form))

    def family_only(self, wanted: GpuKey) -> bool:
        """Whether it offers `wanted` by the model alone: the request names a memory or form
        this offer does not say (an 80 GB A100 asked of a site's plain `a100`)."""
        return self.offers(wanted) and (wanted.memory_gb is not None and self.memory_gb is None
                                        or wanted.form is not None and self.form is None)


def gpu_key(name: str) -> GpuKey:
    """A GPU model name, as any scheduler or site writes it, in the neutral form above."""
    words = [w for w in re.split(r"[\s_\-/]+", name.strip().lower()) if w]
    model: list[str] = []
    memory = form = None
    for w in words:
        if w in _GPU_BRANDS:
            continue
        if not model:  # a brand glued to the model: TeslaV100, NVIDIAA100, GeForceRTX3090
            stripped = True
            while stripped:
                stripped = False
                for b in _GPU_BRANDS:
                    if w.startswith(b) and len(w) > len(b):
                        w, stripped = w[len(b):], True
        if memory is None and (m := _GPU_MEMORY.fullmatch(w)):
            memory = int(m.group(1))
        elif form is None and _GPU_FORM.fullmatch(w):
            form = w
        else:
            model.append(w)
    return GpuKey(tuple(model), memory, form)


def gpu_matches(wanted: str, offered: str | None) -> bool:
    """Whether a GPU model `offered` by a node satisfies a request for `wanted`."""
    return offered is not None and gpu_key(offered).offers(gpu_key(wanted))


def gpu_family_note(wanted: str, offered: Iterable[str]) -> str | None:
    """A note where the GPU models `offered` that satisfy a request for `wanted` do so by
    family only (the site says no memory or form where the request names one); None where
    one matches exactly, or none matches."""
    want = gpu_key(wanted)
    matching = [m for m in dict.fromkeys(offered) if gpu_key(m).offers(want)]
    if not matching or not all(gpu_key(m).family_only(want) for m in matching):
        return None
    keys = [gpu_key(m) for m in matching]
    unsaid = [what for what, asked, known in (
        ("memory", want.memory_gb, all(k.memory_gb is not None for k in keys)),
        ("form factor", want.form, all(k.form is not None for k in keys))) if asked and not known]
    said = " ".join(x for x in (f"{want.memory_gb} GB" if want.memory_gb else None,
                                want.form.upper() if want.form else None) if x)
    return (f"GPU {wanted}: taken as the site's {', '.join(matching)} (the same model); the "
            f"site does not say its {' or '.join(unsaid)}, so whether they are {said} cards "
            "is not checked")


# a feature that reads as a GPU model (`a100`, `v100s`, `l40s`, `gh200`, `mi250x`, `t4`)
_GPU_FEATURE = re.compile(r"(?!x86)[a-z]{1,2}[0-9]{1,4}[a-z]{0,2}")


def gpus_of(n: Node, kind: str | None) -> int:
    """The GPUs of node `n` a job asking GPUs of `kind` (None: any) may have: on a node of
    several types, those of that type only."""
    if kind is None or not n.gpu_types:
        return n.gpus
    return sum(c for t, c in n.gpu_types.items() if gpu_matches(kind, t))


def node_gpu_models(n: Node) -> list[str]:
    """The GPU models a node offers as its scheduler reports them: its GPU type (Slurm's
    GRES type, PBS's gpu_model), else, where the scheduler reports none (LSF and Grid
    Engine hosts), the features of a node with GPUs that name a GPU model (an LSF boolean
    resource `v100`, a Slurm feature `a100`)."""
    if n.gpu_types:
        return list(n.gpu_types)
    if n.gpu_type:
        return [n.gpu_type]
    if not n.gpus:
        return []
    return [f for f in n.features if len(k := gpu_key(f).model) == 1
            and _GPU_FEATURE.fullmatch(k[0])]


# ---------------------------------------------------------------- constraint expressions

_FEATURE = re.compile(r"[A-Za-z0-9_.:+/=@-]+")


@dataclass(frozen=True)
class Feature:
    name: str
    count: int | None = None  # `name*N`: N nodes with it (every node is checked alone here)

    def text(self) -> str:
        return self.name + (f"*{self.count}" if self.count is not None else "")

    def matches(self, features: set[str], arch: str | None) -> bool:
        low = self.name.lower()
        if low in features:
            return True
        key, eq, value = low.partition("=")
        return bool(eq) and key == "arch" and arch is not None and norm_arch(value) == arch


@dataclass(frozen=True)
class Op:
    """`op` applied left to right over `items` (Slurm has no precedence); `kind` is the
    grouping the text used: "" none, "(" parentheses, "[" matching brackets."""

    items: tuple[Any, ...]
    ops: tuple[str, ...]  # len(items) - 1 operators, each "&" or "|"
    kind: str = ""
    count: int | None = None  # `(a&b)*N`: N nodes with all of it (each node checked alone)

    def text(self) -> str:
        inner = self.items[0].text() + "".join(
            o + i.text() for o, i in zip(self.ops, self.items[1:], strict=True))
        return {"": inner, "(": f"({inner})", "[": f"[{inner}]"}[self.kind] + (
            f"*{self.count}" if self.count is not None else "")

    def matches(self, features: set[str], arch: str | None) -> bool:
        result = self.items[0].matches(features, arch)
        for op, item in zip(self.ops, self.items[1:], strict=True):
            here = item.matches(features, arch)
            result = (result and here) if op == "&" else (result or here)
        return result


Constraint = Feature | Op


def parse_constraint(text: str) -> Constraint:
    """A Slurm `--constraint` expression -> a tree; BadInput saying where it goes wrong."""
    src = text.strip()
    if not src:
        raise BadInput("constraint is empty; expected features joined by & or |, "
                       "e.g. avx2&arch=x86_64")
    pos = 0

    def fail(what: str) -> BadInput:
        return BadInput(f"constraint {text!r}: {what} at position {pos}; expected features "
                        "joined by & or |, with (...) or [...] groups and *N counts")

    def group(close: str | None) -> Op | Feature:
        nonlocal pos
        items: list[Any] = [operand()]
        ops: list[str] = []
        while pos < len(src) and src[pos] in "&|":
            ops.append(src[pos])
            pos += 1
            items.append(operand())
        if close is not None:
            if pos >= len(src) or src[pos] != close:
                raise fail(f"missing '{close}'")
            pos += 1
        elif pos < len(src):
            raise fail(f"unexpected {src[pos]!r}")
        return items[0] if not ops and close is None else \
            Op(tuple(items), tuple(ops), {None: "", ")": "(", "]": "["}[close])

    def operand() -> Any:
        nonlocal pos
        while pos < len(src) and src[pos] == " ":
            pos += 1
        if pos < len(src) and src[pos] in "([":
            opening = src[pos]
            pos += 1
            node = group(")" if opening == "(" else "]")
        else:
            m = _FEATURE.match(src, pos)
            if not m:
                raise fail("a feature name is missing" if pos >= len(src) or src[pos] in "&|)]"
                           else f"character {src[pos]!r} not allowed in a feature name")
            pos = m.end()
            node = Feature(m.group())
        if pos < len(src) and src[pos] == "*":
            m = re.compile(r"\*([0-9]+)").match(src, pos)
            if not m:
                raise fail("a count after '*' is missing")
            pos = m.end()
            # sbatch's own example: [(knl&snc4&flat)*4&haswell*1]
            node = Feature(node.name, int(m.group(1))) if isinstance(node, Feature) else \
                Op(node.items, node.ops, node.kind, int(m.group(1)))
        while pos < len(src) and src[pos] == " ":
            pos += 1
        return node

    return group(None)


def constraint_of(features: Iterable[str]) -> Constraint | None:
    """The spec's `constraints.features` (each an expression, all of them required)."""
    parts = [parse_constraint(f) for f in features if f and f.strip()]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return Op(tuple(_grouped(p) for p in parts), ("&",) * (len(parts) - 1))


def _grouped(c: Constraint) -> Constraint:
    return Op(c.items, c.ops, "(") if isinstance(c, Op) and c.kind == "" and "|" in c.ops \
        else c


def join_features(features: list[str]) -> str:
    """Several required expressions as one Slurm constraint (or-expressions in parentheses,
    so that left-to-right evaluation keeps their meaning)."""
    c = constraint_of(features)
    return "" if c is None else c.text()


def required_arch(c: Constraint | None) -> str | None:
    """The architecture an expression demands on every node (`arch=X` and-ed at the top)."""
    if c is None:
        return None
    terms = [c] if isinstance(c, Feature) else \
        list(c.items) if c.kind != "[" and set(c.ops) == {"&"} else []
    for t in terms:
        if isinstance(t, Feature):
            key, eq, value = t.name.lower().partition("=")
            if eq and key == "arch":
                return norm_arch(value)
    return None


def feature_names(c: Constraint | None) -> list[str]:
    if c is None:
        return []
    if isinstance(c, Feature):
        return [c.name]
    return [n for i in c.items for n in feature_names(i)]


# ---------------------------------------------------------------- the job's needs

class Needs(NeedModel):
    architecture: str | None = None
    constraint: str | None = None  # the feature expression, as Slurm reads it
    software: list[SoftwareNeed] = Field(default_factory=list)
    container: ContainerNeed | None = None
    gpu_type: str | None = None
    gpus: int | None = None  # per node
    memory_mb: int | None = None  # per node
    mpi: str | None = None  # the launcher the body uses: mpirun, mpiexec, srun, aprun, ...
    mpi_own: str | None = None  # why that launcher may be the job's own (not the site's)
    mpi_from: str | None = None  # the file sourced or PATH entry it comes from (`~/`: home)
    pmi: str | None = None  # the MPI plugin its srun asks for: pmix, pmix_v4, pmi2, ...
    gpu_vendor: str | None = None  # "nvidia" / "amd", when the body's use says which
    # Spack packages and environments, conda environments the body activates: checked
    # where discovery listed them
    envs: list[EnvNeed] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # read from the body, never checked

    def empty(self) -> bool:
        return self == Needs()

    def summary(self) -> list[str]:
        """One short phrase per need (for plans, errors and `place --explain`); what was
        read but is not checked says so."""
        out = []
        if self.architecture:
            out.append(f"architecture {self.architecture}")
        if self.constraint:
            out.append(f"features {self.constraint}")
        out += [f"software {s.full}" + "".join(f" or {a}" for a in s.alternatives)
                + (f" ({s.unchecked}: checked where discovery read the cluster's name)"
                   if s.unchecked and s.clusters[:1] == ["*"] else
                   f" ({s.unchecked}: checked at a site of that name)" if s.unchecked
                   and s.clusters else
                   f" (not checked: {s.unchecked})" if s.unchecked else
                   " (any conda distribution)" if s.role == "conda" else
                   " (any distribution with mamba)" if s.role == "mamba" else "")
                for s in self.software]
        if c := self.container:
            how = [x for x in (c.runtime, None if c.image_known else "image named at run time",
                               f"{c.gpu} GPUs" if c.gpu else None,
                               f"not checked: {c.unchecked}" if c.unchecked else None) if x]
            out.append(f"container {c.image}" + (f" ({', '.join(how)})" if how else ""))
        if self.gpu_type:
            out.append(f"GPU {self.gpu_type}")
        elif self.gpu_vendor:
            out.append(f"{self.gpu_vendor} GPUs (from the body)")
        if self.memory_mb:
            out.append(f"memory {self.memory_mb} MB per node")
        if self.mpi:
            out.append(f"MPI ({self.mpi}" + (f" --mpi={self.pmi}" if self.pmi else "")
                       + (f"; not checked: may be the job's own, {self.mpi_own})"
                          if self.mpi_own else ")"))
        return out + [f"note: {n}" for n in self.notes]


def needs_of(spec: JobSpec) -> Needs:
    """Everything the job needs: directives, body and the faces' options (metadata)."""
    scan = scan_body(spec.script or spec.command or "")
    software, container, mpi = scan.software, scan.container, scan.mpi
    meta = spec.metadata or {}
    try:
        c = constraint_of(spec.constraints.features)
    except BadInput:
        c = None  # kept verbatim by the dialect: the scheduler judges it
    arch = norm_arch(spec.constraints.architecture or meta.get("architecture")) \
        or required_arch(c)
    for s in _names(meta.get("software")):
        name, _, version = s.replace("@", "/", 1).partition("/")
        if not any(x.full == s for x in software):
            software.append(SoftwareNeed(name=name, version=version or None, written=s))
    image = spec.environment.container_image or _image(meta.get("container"))
    if image:
        runtime = meta.get("container_runtime")
        if isinstance(meta.get("container"), dict):
            runtime = runtime or meta["container"].get("runtime")
        container = ContainerNeed(image=image, runtime=str(runtime).lower() if runtime else None)
    r = spec.resources
    pbs_type, pbs_arch = pbs_chunk_needs(spec)
    gpu_type = r.gpu_type or pbs_type
    arch = arch or pbs_arch
    tasks_per_node = r.tasks_per_node or (-(-r.tasks // r.nodes) if r.tasks and r.nodes else 1)
    kept_type, kept_gpus = kept_slurm_gpus(spec)
    gpus = r.gpus_per_node or ((r.gpus_per_task or 0) * tasks_per_node) or kept_gpus or None
    if gpus_of_job_over_unknown_nodes(spec):  # up to one node per task: a share on each
        gpus = -(-(r.gpus_per_node or 0) // (r.tasks or 1))
    notes = scan.notes
    shifter = next((d for d in spec.unknown if d.dialect == "slurm" and d.option == "--image"
                    and d.value), None)
    if shifter is not None and (container is None or container.unchecked or (
            container.runtime == "shifter" and not container.image_known)):
        # NERSC's shifter option (`#SBATCH --image=docker:IMAGE`, then `srun shifter CMD`):
        # sbatch refuses it where the shifter plugin is not installed
        container = ContainerNeed(image=shifter.value, runtime="shifter")
    pyxis = next((d for d in spec.unknown if d.dialect == "slurm" and d.option in (
        "--container-image", "--container-name")), None)
    if pyxis is not None and (container is None or container.unchecked):
        # pyxis's own sbatch options: sbatch refuses them ("unrecognized option") where
        # the pyxis plugin is not installed; the whole job runs in the image
        container = ContainerNeed(image=pyxis.value or "?", runtime="pyxis",
                                  image_known=bool(pyxis.value))
        if pyxis.value and f"{pyxis.value}#" in pyxis.raw.replace(" ", "="):
            notes = [*notes, f"{pyxis.raw.strip()}: sbatch reads the `#` as the start of a "
                     f"comment, so the image is {pyxis.value!r}; escape it "
                     f"({pyxis.value}\\#...) to name the registry's image"]
    if scan.gpu_use and not gpus and not (gpu_type or kept_type):
        notes = [*notes, f"the body uses GPUs ({scan.gpu_use}) but the job requests none: "
                 "a site gives it none unless its nodes are whole"]
    return Needs(architecture=arch, constraint=c.text() if c is not None else None,
                 software=software, container=container, gpu_type=gpu_type or kept_type,
                 gpus=gpus, memory_mb=r.memory_mb or None, mpi=mpi, mpi_own=scan.mpi_own,
                 mpi_from=scan.mpi_from,
                 pmi=scan.pmi, gpu_vendor=scan.gpu_vendor, envs=scan.envs, notes=notes)


def pbs_chunk_needs(spec: JobSpec) -> tuple[str | None, str | None]:
    """(GPU model, architecture) a PBS Pro script asks in its chunks through a site's
    custom resources (`select=1:ngpus=2:gpu_model=a100`, `arch=aarch64`), kept as written."""
    gpu_type = arch = None
    for d in spec.unknown:
        key = d.option.rpartition(":")[2].lower()
        if d.dialect == "pbs" and d.value and key in _PBS_GPU_KEYS:
            gpu_type = gpu_type or d.value
        elif d.dialect == "pbs" and d.value and key == "arch" and norm_arch(d.value) in _ARCHES:
            arch = arch or norm_arch(d.value)
    return gpu_type, arch


def kept_slurm_gpus(spec: JobSpec, nodes: int | None = None) -> tuple[str | None, int | None]:
    """(GPU type, GPUs per node) of the GPU options a Slurm script's first component keeps
    as written (no exact form in the model), read for feasibility: `--gpus=[type:]N` (the
    job's total) on nodes that do not divide it needs ceil(N / nodes) on each node (what
    every node of a partition of equal nodes must hold); without --nodes, Slurm may spread
    the tasks over up to one node per task, so each node needs ceil(N / tasks) at least;
    `--gpus-per-socket=[type:]N` needs N x --sockets-per-node (N alone when the sockets
    are not given). `nodes`: the node count a placement chose, if any."""
    kept = _kept_slurm(spec)
    nodes = nodes or spec.resources.nodes or spec.resources.tasks or 1
    for option in ("--gpus", "--gpus-per-socket"):
        if "," in kept.get(option, ""):
            continue  # GPUs of several types: kept_gpu_mix reads them
        kind, _, num = kept.get(option, "").rpartition(":")
        if not ascii_digits(num) or not int(num):
            continue
        if option == "--gpus":
            return kind or None, -(-int(num) // nodes)
        sockets = kept.get("--sockets-per-node", "")
        return kind or None, int(num) * (int(sockets) if ascii_digits(sockets) else 1)
    return None, None


def _kept_slurm(spec: JobSpec) -> dict[str, str]:
    """The options a Slurm script's first component keeps as written, by option."""
    kept: dict[str, str] = {}
    for d in spec.unknown:
        if d.dialect == "slurm" and d.option in ("hetjob", "packjob"):
            break  # a later component's options are its own
        if d.dialect == "slurm" and d.value is not None:
            kept[d.option] = d.value
    return kept


_GPU_ENTRY = re.compile(r"(?:gpu:)?(?:([\w.\-]+):)?([0-9]+)")  # [gpu:][type:]N


def kept_gpu_mix(spec: JobSpec, tasks_per_node: int, nodes: int) -> list[tuple[str | None, int]]:
    """The GPUs of several types a Slurm script's first component keeps as written, as
    (type, count) a node must hold: `--gres=gpu:a100:2,gpu:v100:1` and
    `--gpus-per-node=a100:2,v100:1` per node, `--gpus-per-task=...` times the tasks a
    node, `--gpus=...` (the job's) shared by its nodes, rounded up. Empty for none."""
    kept = _kept_slurm(spec)
    mix: dict[str | None, int] = {}
    for option, scale in (("--gres", 1), ("--gpus-per-node", 1),
                          ("--gpus-per-task", tasks_per_node), ("--gpus", 0)):
        value = kept.get(option, "")
        entries = [e for e in value.split(",") if e]
        if option == "--gres":  # its GPU entries only (nvme:1 is another resource's)
            entries = [e for e in entries if e.split(":")[0] == "gpu"]
        elif "," not in value:
            continue  # one type: read where the model holds it (kept_slurm_gpus)
        for e in entries:
            m = _GPU_ENTRY.fullmatch(e)
            if m is None or not int(m.group(2)):
                continue
            n = int(m.group(2))
            n = n * scale if scale else -(-n // max(nodes, 1))
            mix[m.group(1)] = mix.get(m.group(1), 0) + n
    return list(mix.items())


def kept_slurm_gpu_total(spec: JobSpec) -> int | None:
    """The job's GPU total of a `--gpus=[type:]N` a Slurm script keeps as written."""
    value = _kept_slurm(spec).get("--gpus", "")
    if "," in value:  # several types: their sum
        counts = [m.group(2) for e in value.split(",") if (m := _GPU_ENTRY.fullmatch(e))]
        return sum(map(int, counts)) or None
    num = value.rpartition(":")[2]
    return int(num) if ascii_digits(num) and int(num) else None


def _image(x: Any) -> str | None:
    if isinstance(x, dict):
        return x.get("image")
    return str(x) if x else None


def _names(x: Any) -> list[str]:
    """'a,b' or ['a', 'b,c'] -> ['a', 'b', 'c']."""
    if not x:
        return []
    items = [x] if isinstance(x, str) else [str(s) for s in x]
    return [p.strip() for item in items for p in item.split(",") if p.strip()]


def with_options(spec: JobSpec, *, arch: str | None = None,
                 software: Iterable[str] | str | None = None, container: str | None = None,
                 gpu_type: str | None = None, memory: str | None = None,
                 said_as: Mapping[str, str] | None = None) -> JobSpec:
    """The faces' `--arch`, `--software`, `--container`, `--gpu-type`, `--memory` added to
    a spec. BadInput for a value that cannot be read names it as the face's user wrote it:
    `said_as` maps each of these keys to the face's word (`--memory` on the command line);
    a key it does not map is named as is (the JSON field of a REST body or a tool call)."""
    from .dialects.scripts_common import parse_mem_mb

    def said(key: str) -> str:
        return (said_as or {}).get(key, key)

    meta = dict(spec.metadata)
    upd: dict[str, Any] = {}
    if arch:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", arch):
            raise BadInput(f"{said('arch')} {arch!r}: expected an architecture such as x86_64, "
                           "aarch64 or ppc64le")
        meta["architecture"] = norm_arch(arch)
    given = [software] if isinstance(software, str) else list(software or [])

    def entry(i: int) -> str:  # a JSON list's entry by its index: software[1]
        listed = not isinstance(software, str) and "software" not in (said_as or {})
        return f"software[{i}]" if listed else said("software")

    for i, g in enumerate(map(str, given)):
        if g.strip() and not _names(g):
            raise BadInput(f"{entry(i)} {g!r} names no software (only commas and blanks); "
                           "give NAME or NAME/VERSION (e.g. gromacs/2023), or leave it out")
        for s in _names(g):
            if not re.fullmatch(r"[A-Za-z0-9_.+][A-Za-z0-9_.+-]*(?:[/@][A-Za-z0-9_.+-]+)*", s):
                raise BadInput(f"{entry(i)} {s!r}: expected NAME or NAME/VERSION "
                               "(e.g. gromacs/2023)")
    names = _names(software)
    if names:
        meta["software"] = list(dict.fromkeys(_names(meta.get("software")) + names))
    res: dict[str, Any] = {}
    if gpu_type:
        if not re.fullmatch(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*", gpu_type):
            raise BadInput(f"{said('gpu_type')} {gpu_type!r}: expected a GPU model such as "
                           "a100")
        res["gpu_type"] = gpu_type
        if not (spec.resources.gpus_per_node or spec.resources.gpus_per_task
                or kept_slurm_gpus(spec)[1]):
            res["gpus_per_node"] = 1  # a GPU of that type: at least one
    if memory:
        if re.fullmatch(r"\s*[0-9]+(?:\.[0-9]+)?\s*", memory):
            # a scheduler reads a bare number as MB; one typing `--memory 4` means GB
            n = memory.strip()
            if not float(n):  # `0`: no unit would make it a size to ask for
                raise BadInput(f"{said('memory')} {memory!r}: expected a size above 0 with a "
                               "unit, such as 4G or 500M")
            raise BadInput(f"{said('memory')} {memory!r} has no unit: give one, e.g. {n}G "
                           f"for {n} GB or {n}M for {n} MB")
        mb = parse_mem_mb(memory)
        if not mb:
            raise BadInput(f"{said('memory')} {memory!r}: expected a size such as 4G or 500M "
                           "(a number above 0 with an optional K, M, G or T unit)")
        res["memory_mb"] = mb
    if res:
        upd["resources"] = spec.resources.model_copy(update=res)
    if container:
        why = "it starts with '-'" if container.startswith("-") else \
            "it has blanks" if not container.strip() or any(c.isspace() for c in container) \
            else None
        if why:
            raise BadInput(f"{said('container')} {container!r}: expected an image such as "
                           f"docker://ubuntu:22.04 or ./image.sif ({why}, which the container "
                           "runtime would read as options)")
        upd["environment"] = spec.environment.model_copy(update={"container_image": container})
    if meta != spec.metadata:
        upd["metadata"] = meta
    return JobSpec.model_validate(spec.model_copy(update=upd).model_dump()) if upd else spec


NEED_OPTIONS = ("arch", "software", "container", "gpu_type", "memory")
