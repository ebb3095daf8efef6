"""Which kind of Site runs a sites-file entry."""

from __future__ import annotations

from typing import Any

from .config import SiteConfig
from .sites import Site


def make_site(cfg: SiteConfig, **kw: Any) -> Site:
    """The site of a sites-file entry: over a command transport (SSH, local), or over
    Slurm's REST API."""
    if cfg.transport.kind == "slurmrestd":
        from .sites_rest import RestSite  # its transport's libraries only where used

        return RestSite(cfg, **kw)
    return Site(cfg, **kw)
