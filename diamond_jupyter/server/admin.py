"""The admin's policy over the sites a user's server loads: partitions pinned per site, and
the user's own sites, accepted only on hosts the admin allows."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from ..config import FederationConfig, SiteConfig, load_config
from ..model import BadInput


def pin_partitions(cfg: FederationConfig,
                   allowed: dict[str, list[str]]) -> FederationConfig:
    """Each named site's jobs may go only to the admin's partitions (replacing the sites
    file's `allowed_partitions`); a default partition outside them is dropped."""
    unknown = sorted(set(allowed) - {s.name for s in cfg.sites})
    if unknown:
        raise BadInput(f"DiamondApp.allowed_partitions names sites not in the sites file: "
                       f"{', '.join(unknown)}")
    sites = []
    for s in cfg.sites:
        if s.name in allowed:
            parts = list(allowed[s.name])
            update: dict = {"allowed_partitions": parts}
            if s.default_partition is not None and s.default_partition not in parts:
                update["default_partition"] = parts[0] if parts else None
            s = s.model_copy(update=update)
        sites.append(s)
    return cfg.model_copy(update={"sites": sites})


def user_site_refusal(site: SiteConfig, admin_names: set[str],
                      host_patterns: list[str]) -> str | None:
    """Why a site from the user's own file is not loaded, or None when the admin allows it."""
    if site.name in admin_names:
        return f"{site.name}: the admin's sites file defines this name already"
    t = site.transport
    if t.kind != "ssh" or not t.host:
        return f"{site.name}: user sites must be reached over SSH (transport kind {t.kind})"
    if not any(fnmatch.fnmatchcase(t.host, p) for p in host_patterns):
        allowed = ", ".join(host_patterns) or "none"
        return (f"{site.name}: host {t.host} is not one the admin lets users add "
                f"(DiamondApp.user_site_hosts: {allowed})")
    return None


def add_user_sites(cfg: FederationConfig, user_file: str,
                   host_patterns: list[str]) -> tuple[FederationConfig, list[str], list[str]]:
    """(config with the accepted user sites, their names, one line per refused site). No
    patterns: users add no sites, and their file is not read."""
    path = Path(user_file).expanduser()
    if not host_patterns or not path.exists():
        return cfg, [], []
    mine = load_config(path)
    names = {s.name for s in cfg.sites}
    accepted, refused = [], []
    for s in mine.sites:
        why = user_site_refusal(s, names, host_patterns)
        if why is None:
            accepted.append(s)
            names.add(s.name)
        else:
            refused.append(why)
    merged = cfg.model_copy(update={"sites": [*cfg.sites, *accepted]})
    return merged, [s.name for s in accepted], refused
