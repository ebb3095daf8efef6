"""The sites file: which clusters exist and how to reach them (YAML)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .model import BadInput

SCHEDULERS = ("slurm", "pbs", "lsf", "flux", "sge")


class _Cfg(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TransportConfig(_Cfg):
    kind: Literal["ssh", "local", "slurmrestd"] = "ssh"
    host: str | None = None  # may be a Host alias from ~/.ssh/config
    port: int | None = None
    user: str | None = None
    key_file: str | None = None
    # an OpenSSH certificate for key_file (`ssh-keygen -s`, e.g. from sshproxy), offered first
    cert_file: str | None = None
    known_hosts: str | None = None  # extra known_hosts file (system + user ones also load)
    trust_on_first_use: bool = False
    use_agent: bool = True
    ssh_config: str | None = None  # default ~/.ssh/config
    proxy_jump: str | None = None  # overrides ssh_config's ProxyJump
    keepalive_s: int = 30
    connect_timeout_s: float = 10.0
    # A command given no timeout of its own fails (SiteError) after this long.
    command_timeout_s: float = Field(default=300.0, gt=0)
    max_sessions: int = Field(default=10, ge=2)  # sshd MaxSessions: channels per connection
    reconnect_attempts: int = Field(default=3, ge=1)  # connects tried (backoff) per call
    # slurmrestd: the API's base URL (http[s]://HOST:PORT), its OpenAPI plugin version, and
    # where the user's JWT comes from: a command that prints it (`scontrol token`, as
    # `SLURM_JWT=...` or bare), or a file holding it; neither is ever logged or stored.
    url: str | None = Field(default=None, pattern=r"^https?://[^\s/]+(/[^\s]*)?$")
    api_version: str = Field(default="v0.0.38", pattern=r"^v0\.0\.\d+$")
    token_command: list[str] | None = None
    token_file: str | None = None
    token_refresh_s: float = Field(default=60.0, ge=0)  # renewed this long before expiry


class ClusterConfig(_Cfg):
    """One cluster behind a center's login: its name and the variables that point the
    scheduler's clients at it (e.g. SLURM_CONF)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    env: dict[str, str] = Field(default_factory=dict)


class DiscoveryConfig(_Cfg):
    """Live discovery of what a site has (scheduler features and GPUs, modules, container
    runtimes, MPI). The site's `metadata` adds to what is found, or replaces it key by key
    with `override`."""

    enabled: bool = True
    ttl_s: float = Field(default=600.0, ge=0)
    override: bool = False
    clusters: list[ClusterConfig] = Field(default_factory=list)  # default: the site alone


class SiteConfig(_Cfg):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    scheduler: Literal["slurm", "pbs", "lsf", "flux", "sge"] = "slurm"
    # the scheduler's variant where its commands differ: pbs "pro" (default), "torque",
    # or "slurm" (Slurm's own PBS/Torque wrappers, slurm-wlm-torque)
    flavor: str | None = None
    transport: TransportConfig = Field(default_factory=TransportConfig)
    # the file door of a site whose transport moves no files (slurmrestd): how its logs and
    # result files are reached, e.g. SFTP to the same cluster's login node (kind ssh, host
    # keys checked as for an SSH site) or `local` where the server shares its file system
    files: TransportConfig | None = None
    # chosen by `--site auto`; false for an entry that is a second door to a cluster listed
    # already (the same machines must not be counted twice), used only when named
    auto: bool = True
    # command paths, e.g. {"sbatch": "/opt/slurm/bin/sbatch"}
    commands: dict[str, str] = Field(default_factory=dict)
    preamble: str = ""  # shell lines run before every scheduler command (module loads)
    env: dict[str, str] = Field(default_factory=dict)
    workdir: str = "~/.diamond"  # remote dir for scripts, job outputs and event files
    default_partition: str | None = None
    default_account: str | None = None
    allowed_partitions: list[str] | None = None
    globus_collection: str | None = None
    globus_path_map: dict[str, str] = Field(default_factory=dict)
    charge_factor: float = 1.0
    speed_factor: float = 1.0  # >1: jobs run faster than the walltime suggests
    jobcomp: bool = False  # Slurm: accounting from jobcomp/filetxt (`sacct -c`)
    hedge: bool = True  # may take copies of hedged submissions (`submit --hedge N`)
    metadata: dict[str, Any] = Field(default_factory=dict)  # architecture, software, ...
    discovery: DiscoveryConfig = Field(default_factory=DiscoveryConfig)

    @model_validator(mode="after")
    def _transport_fits(self) -> SiteConfig:
        t = self.transport
        if t.kind == "slurmrestd":
            if self.scheduler != "slurm":
                raise ValueError("a slurmrestd transport needs scheduler: slurm")
            if not t.url:
                raise ValueError("a slurmrestd transport needs url (http://HOST:PORT)")
            if not (t.token_command or t.token_file):
                raise ValueError("a slurmrestd transport needs token_command or token_file")
            if not self.workdir.startswith("/"):
                raise ValueError("a slurmrestd site needs an absolute workdir (the REST API "
                                 "cannot tell the home directory)")
        if self.files is not None:
            if t.kind != "slurmrestd":
                raise ValueError("files (a file door) is for a slurmrestd site; a site over "
                                 f"{t.kind} moves its files itself")
            if self.files.kind not in ("ssh", "local"):
                raise ValueError(f"files.kind must be ssh or local, not {self.files.kind}")
        if self.flavor is not None and self.scheduler != "pbs":
            raise ValueError(f"flavor is for scheduler pbs, not {self.scheduler}")
        if self.flavor not in (None, "pro", "torque", "slurm"):
            raise ValueError(f"unknown pbs flavor {self.flavor!r} (accepted: pro, torque, "
                             "slurm)")
        return self


class TransferPolicy(_Cfg):
    """Retries of a copy (stage-in, stage-out, transfers) that lost its connection: each try
    resumes where the last one stopped; the waits between tries double up to the maximum."""

    attempts: int = Field(default=6, ge=1)  # tries in all, the first one included
    backoff_s: float = Field(default=1.0, ge=0)  # wait before the second try
    backoff_max_s: float = Field(default=30.0, ge=0)


class FederationConfig(_Cfg):
    sites: list[SiteConfig] = Field(default_factory=list)
    store: str | None = None  # SQLite path; default in the user's data dir
    # The most of a log file `logs` returns, whatever the number of lines asked for (one
    # progress-bar "line" can be many megabytes).
    log_tail_bytes: int = Field(1 << 20, gt=0)
    transfers: TransferPolicy = Field(default_factory=TransferPolicy)

    def site(self, name: str) -> SiteConfig:
        for s in self.sites:
            if s.name == name:
                return s
        known = ", ".join(s.name for s in self.sites) or "none configured"
        raise BadInput(f"unknown site {name!r} (known: {known})")


def default_config_path() -> Path:
    env = os.environ.get("DIAMOND_CONFIG")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config"))
    return base / "diamond" / "sites.yaml"


def default_data_dir() -> Path:
    base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return Path(os.environ.get("DIAMOND_DATA_DIR", base / "diamond"))


def _yaml_problem(e: yaml.YAMLError) -> str:
    """One line: where and what (PyYAML's own text spans several lines)."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + " ".join(str(problem).split())


def _printable(text: str) -> str:
    """Control characters escaped, so that an error stays one readable line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def load_config(path: str | Path | None = None) -> FederationConfig:
    p = Path(path) if path else default_config_path()
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(
            f"sites file {p} not found (give --config FILE or set DIAMOND_CONFIG;"
            " `diamond testbed up` writes one)"
        ) from None
    except UnicodeDecodeError as e:
        raise BadInput(f"sites file {p} is not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise BadInput(f"sites file {p} cannot be read: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise BadInput(f"sites file {p} is not valid YAML: {_yaml_problem(e)}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise BadInput(f"sites file {p}: expected a mapping with a 'sites' list")
    try:
        cfg = FederationConfig.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        where = _printable(".".join(str(x) for x in first["loc"]))
        raise BadInput(f"sites file {p}: {where}: {_printable(first['msg'])}") from None
    names = [s.name for s in cfg.sites]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise BadInput(f"sites file {p}: duplicate site names {sorted(dup)}")
    return cfg
