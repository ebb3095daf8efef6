"""Transports: run commands and move bytes on a site (SSH or the local machine), or carry
requests to Slurm's REST API (slurmrestd)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..config import TransportConfig
from .base import (
    AuthError,
    CommandFailed,
    CommandNotSent,
    CommandResult,
    CommandTimeout,
    ConnectionLost,
    FileStat,
    HostKeyError,
    OutputTooLarge,
    Transport,
)
from .local import LocalTransport


def make_transport(cfg: TransportConfig, site: str, *, private_vars: Iterable[str] = (),
                   **kw: Any) -> Transport:
    """`kw`: for ssh `interactive_handler`, `max_sessions`, `reconnect_attempts`;
    for local `workdir`. `private_vars`: environment variables of this process a local
    command never gets (an SSH or REST door sends none)."""
    if cfg.kind == "local":
        return LocalTransport(site, command_timeout_s=cfg.command_timeout_s,
                              max_output_bytes=cfg.max_output_bytes,
                              private_vars=private_vars, **kw)
    if cfg.kind == "slurmrestd":
        from .slurmrestd import SlurmRestTransport  # httpx only when needed

        return SlurmRestTransport(cfg, site=site)
    from .ssh import SSHTransport  # paramiko only when needed

    return SSHTransport(cfg, site=site, **kw)


__all__ = [
    "AuthError",
    "CommandFailed",
    "CommandResult",
    "CommandTimeout",
    "CommandNotSent",
    "ConnectionLost",
    "FileStat",
    "HostKeyError",
    "LocalTransport",
    "OutputTooLarge",
    "Transport",
    "make_transport",
]
