"""What a site has: the capability model discovery fills and the needs matcher reads.

Pure data. Discovery (from the scheduler, the module system, the login's PATH) fills a
`SiteCapabilities`; the sites file's `metadata` can add to it or override it
(`from_metadata` turns a static description into the same model). A list that is None
means "not known": the matcher does not check that kind of need at that site; an empty
list means "known to have none".
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .model import listed_names, without_avail_marks

# where Intel oneAPI is installed unless told otherwise (its installer's defaults: system
# wide, and in the home for a user's own install); discovery looks there (and at
# $ONEAPI_ROOT) for a `setvars.sh` beside an `mpi/` component, so a job's MPI from under one
# of them is known missing at a site where discovery found none there
ONEAPI_ROOTS = ("/opt/intel/oneapi", "~/intel/oneapi")


class _Caps(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SoftwareModule(_Caps):
    """One loadable module as the site spells it: `GROMACS/2023.3-foss-2023a` is
    name "GROMACS", version "2023.3-foss-2023a"."""

    name: str
    version: str | None = None
    default: bool = False  # the version `module load NAME` picks (Lmod's "(D)")
    # the site made it sticky (Lmod's "(S)", Environment Modules' `<sticky>` tag): a plain
    # `module purge` or `module unload` leaves it loaded; only `module --force ...` unloads it
    sticky: bool = False
    # the site hid it without a dotted name (Lmod's `hide_version`, Environment Modules'
    # `module-hide`; marked `<H>`/`(H)`): it loads only by its whole name, never as the
    # version `module load NAME` or a shorter version picks
    hidden: bool = False
    # Lmod's hierarchy: the modules to load before this one shows (`module spider
    # NAME/VERSION`: "load all module(s) on any one of the lines below"), one list per
    # line, any one line does; empty: it loads directly, or nothing was said
    requires: list[list[str]] = Field(default_factory=list)

    @property
    def full(self) -> str:
        return f"{self.name}/{self.version}" if self.version else self.name

    @classmethod
    def parse(cls, text: str, default: bool = False, at_version: bool = True
              ) -> SoftwareModule:
        """'GROMACS/2023.3-foss-2023a' or 'gromacs@2023' or 'python3' -> a module; with
        deeper paths (`Core/gcc/12`) the last part is the version, the rest the name.
        `at_version` False: a name spelt `cmake@3.27.9` (a module listing's, which is the
        whole name `module load` takes) is kept whole."""
        text = text.strip().replace("@", "/", 1) if "/" not in text and at_version \
            else text.strip()
        name, _, version = text.rpartition("/")
        if not name:
            return cls(name=version, default=default)
        return cls(name=name, version=version or None, default=default)


class NodeType(_Caps):
    """A class of identical nodes (placement decides at this level): where they are
    (cluster, partitions) and what each one has."""

    name: str
    cluster: str | None = None  # a center's cluster behind the same login
    partitions: list[str] = Field(default_factory=list)
    count: int = 0
    architecture: str | None = None
    features: list[str] = Field(default_factory=list)
    cpus: int = 0
    memory_mb: int = 0
    gpus: int = 0
    gpu_model: str | None = None


class SiteCapabilities(_Caps):
    site: str
    discovered_at: datetime | None = None
    # where each field came from: "discovered", "configured" or "configured+discovered"
    sources: dict[str, str] = Field(default_factory=dict)
    architectures: list[str] = Field(default_factory=list)
    features: list[str] = Field(default_factory=list)
    gpu_models: list[str] = Field(default_factory=list)
    module_system: str | None = None  # "lmod", "environment-modules"
    software: list[SoftwareModule] | None = None
    # the module trees the listing came from (its `/path:` headers, the login's MODULEPATH):
    # a job's `module use` of one of them adds nothing this site's list lacks
    module_trees: list[str] | None = None
    # the hidden modules (a part starting with '.', `python/.3.14.0-beta`) the site's
    # listing holds (Lmod's `--show_hidden`, Environment Modules 4.6+'s `--all`); None:
    # hidden modules were not listed, a job's are not checked
    hidden_modules: list[str] | None = None
    # Lmod's extensions the listing marks `(E)` (`numpy/1.26.4`: a package a module such as
    # a Python provides, loaded with it, never by its own name); None: none listed
    extensions: list[str] | None = None
    container_runtimes: list[str] | None = None  # apptainer, singularity, podman, docker
    mpi: list[str] | None = None  # MPI stacks: openmpi, mpich, intel-mpi, ...
    pmi: list[str] | None = None  # srun's MPI plugins (`srun --mpi=list`): pmix, pmi2, ...
    # where the MPI is (launchers' directories, oneAPI roots; `~` the home); None: not
    # looked for
    mpi_paths: list[str] | None = None
    # the scheduler's own names for its clusters (Slurm's ClusterName, which a job reads
    # as $SLURM_CLUSTER_NAME), one per cluster behind the login; None: not known
    cluster_names: list[str] | None = None
    # what Spack has installed at the site (`spack find`: "name@version") and its named
    # environments (`spack env list`), where `spack` is on the login's PATH; None: not known
    spack_packages: list[str] | None = None
    spack_envs: list[str] | None = None
    spack_root: str | None = None  # the instance listed (/opt/spack for /opt/spack/bin/spack)
    # the named conda environments each tool lists (`conda env list`; "conda" also for
    # mamba, which shares conda's environments, "micromamba" for its own root); a tool
    # missing from it is not known
    conda_envs: dict[str, list[str]] | None = None
    node_types: list[NodeType] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)  # what discovery could not read

    def module_names(self) -> list[str]:
        return [m.full for m in self.software or []]


def _listed_module(text: str) -> SoftwareModule:
    """A sites file's software name; marks copied from `module avail` after it are read as
    they are meant (`(D)`/`(default)`: the default version; Lmod's `(S)`, Environment
    Modules' `<sticky>`: a sticky module), not as part of the version."""
    name, default = without_avail_marks(text)
    marks = text.strip()[len(name):]
    return SoftwareModule.parse(name, default=default).model_copy(update={
        "sticky": bool(_STICKY_MARK.search(marks)), "hidden": bool(_HIDDEN_MARK.search(marks))})


# `(S)`, `(S,L)` (Lmod), `<sticky>`, `<L:super-sticky>` (Environment Modules 5)
_STICKY_MARK = re.compile(r"\((?:[^()]*,)?S(?:,[^()]*)?\)|<[^<>]*\bsticky\b[^<>]*>")
# `(H)`, `<H>` (Lmod's long listing), `<hidden>`, `<H:L>` (Environment Modules 5)
_HIDDEN_MARK = re.compile(r"[(<](?:[^()<>]*[,:])?(?:H|hidden)(?:[,:][^()<>]*)?[)>]")


def from_metadata(site: str, metadata: dict[str, Any]) -> SiteCapabilities:
    """A site's static description (the sites file's `metadata`) as capabilities; keys it
    does not give stay unknown (None)."""
    caps = SiteCapabilities(site=site)
    if metadata.get("architecture"):
        caps.architectures = listed_names(metadata["architecture"])
        caps.sources["architectures"] = "configured"
    for key in ("features", "gpu_models"):
        if key in metadata:
            setattr(caps, key, listed_names(metadata[key]))
            caps.sources[key] = "configured"
    if "software" in metadata:
        caps.software = [_listed_module(s) for s in listed_names(metadata["software"])]
        caps.sources["software"] = "configured"
    for key in ("container_runtimes", "mpi", "pmi"):
        if key in metadata:
            setattr(caps, key, [s.lower() for s in listed_names(metadata[key])])
            caps.sources[key] = "configured"
    return caps


def merge(discovered: SiteCapabilities, configured: dict[str, Any],
          override: bool = False) -> SiteCapabilities:
    """Discovery plus the sites file: the file's entries are added to what was found, or
    replace it for the keys it gives when `override`."""
    extra = from_metadata(discovered.site, configured)
    out = discovered.model_copy(deep=True)
    for key, how in extra.sources.items():
        mine, theirs = getattr(out, key), getattr(extra, key)
        if override or mine is None:
            setattr(out, key, theirs)
            out.sources[key] = how
            continue
        seen = {x.full if isinstance(x, SoftwareModule) else x for x in mine}
        add = [x for x in theirs if (x.full if isinstance(x, SoftwareModule) else x)
               not in seen]
        setattr(out, key, mine + add)
        out.sources[key] = "configured+discovered" if add else out.sources.get(key, how)
    return out
