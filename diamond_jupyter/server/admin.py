"""The admin's policy over the sites a user's server loads: partitions pinned per site, and
the user's own sites, accepted only on hosts the admin allows."""

from __future__ import annotations

import difflib
import fnmatch
import json
import re
from pathlib import Path
from typing import Any

from traitlets import Container, Dict, TraitError
from traitlets.config.loader import DeferredConfig, DeferredConfigList, DeferredConfigString

from ..config import FederationConfig, SiteConfig, _word, load_config
from ..model import BadInput


def pin_partitions(cfg: FederationConfig,
                   allowed: dict[str, list[str]]) -> FederationConfig:
    """Each named site's jobs may go only to the admin's partitions (replacing the sites
    file's `allowed_partitions`); a default partition outside them is dropped."""
    unknown = sorted(set(allowed) - {s.name for s in cfg.sites})
    if unknown:
        raise BadInput(f"DiamondApp.allowed_partitions names sites not in the sites file: "
                       f"{', '.join(unknown)}")
    for s in cfg.sites:
        if s.name in allowed:
            _check_pinned(s.name, list(allowed[s.name]), s.scheduler)
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


def _check_pinned(site: str, parts: list[str], scheduler: str) -> None:
    """The admin's partitions for SITE checked as the sites file's `allowed_partitions` are:
    at least one, each one word a scheduler could name (never an option), listed once (a
    Grid Engine entry may be a queue list, `all.q,short.q`)."""
    where = f"DiamondApp.allowed_partitions[{site!r}]"
    if not parts:
        raise BadInput(f"{where} is empty, which would refuse every job on {site!r}: list the "
                       f"partitions its jobs may use (e.g. {{{site!r}: ['debug']}}); to keep "
                       "users off the site, leave it out of DiamondApp.allowed_sites")
    for n, part in enumerate(parts):
        try:
            _word(part)
        except ValueError as e:
            raise BadInput(f"{where}: {part!r}: {e}") from None
        if "," in part and scheduler != "sge":
            items = ", ".join(repr(x) for x in part.split(",") if x)
            raise BadInput(f"{where}: {part!r} names several partitions in one item: list "
                           f"each as its own item ([{items}])")
        if part in parts[:n]:
            raise BadInput(f"{where}: {part!r} is listed twice; list each partition once")


def allowed_site_names(cfg: FederationConfig, allowed: list[str] | None,
                       sites_file: str) -> list[str] | None:
    """DiamondApp.allowed_sites as the sites file names them: `Alpha` is its `alpha` (no two
    of its names differ only in case); a name of no site there is refused, naming the file
    and its sites (a typo would leave that site out without a word)."""
    if allowed is None:
        return None
    by_fold = {s.name.casefold(): s.name for s in cfg.sites}
    unknown = [n for n in allowed if n.casefold() not in by_fold]
    if unknown:
        raise BadInput(f"DiamondApp.allowed_sites names {', '.join(map(repr, unknown))}, no "
                       f"site of the sites file {sites_file} (its sites: "
                       f"{', '.join(by_fold.values())})")
    return list(dict.fromkeys(by_fold[n.casefold()] for n in allowed))


def user_site_refusal(site: SiteConfig, admin_names: set[str],
                      host_patterns: list[str]) -> str | None:
    """Why a site from the user's own file is not loaded, or None when the admin allows it.
    Names are compared as the sites file compares them (`Alpha` is `alpha`), hosts as DNS
    does (`LOGIN.Partner.example` is `login.partner.example`)."""
    same = next((n for n in admin_names if n.casefold() == site.name.casefold()), None)
    if same == site.name:
        return f"{site.name}: the admin's sites file defines this name already"
    if same is not None:
        return (f"{site.name}: the admin's sites file defines {same} already (site names "
                "that differ only in case are one name: job ids and work directories would "
                "mix); give yours another name")
    t = site.transport
    if t.kind != "ssh" or not t.host:
        return f"{site.name}: user sites must be reached over SSH (transport kind {t.kind})"
    host = t.host.rstrip(".").lower()
    if not any(fnmatch.fnmatchcase(host, p.lower()) for p in host_patterns):
        allowed = ", ".join(host_patterns) or "none"
        return (f"{site.name}: host {t.host} is not one the admin lets users add "
                f"(DiamondApp.user_site_hosts: {allowed})")
    return None


def add_user_sites(cfg: FederationConfig, user_file: str,
                   host_patterns: list[str]) -> tuple[FederationConfig, list[str], list[str]]:
    """(config with the accepted user sites, their names, one line per refused site). No
    patterns: users add no sites, and their file is not read. A file that is not a valid
    sites file is refused whole, in one line naming where and why."""
    path = Path(user_file).expanduser()
    if not host_patterns or not path.exists():
        return cfg, [], []
    try:
        mine = load_config(path)
    except BadInput as e:  # the user's typo costs them their own sites, not the admin's
        return cfg, [], [f"{path}: not read, none of its sites is loaded: {e}"]
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


# -- the admin's DiamondApp settings, checked one by one -------------------------------------
CONFIG_FILES = ("jupyter_server_config.json", "jupyter_server_config.py")  # by rank


COMMAND_LINE = "the server's command line (under JupyterHub: c.Spawner.args)"


def setting_source(key: str, argv: list[str], config_dirs: list[str]) -> str:
    """Where `DiamondApp.KEY` is set: the server's command line, else the config file (and
    line) of the highest priority that names it (`config_dirs` highest first)."""
    return next(iter(setting_sources(key, argv, config_dirs)), "the server's configuration")


def setting_overrides(keys: list[str], argv: list[str], config_dirs: list[str]) -> list[str]:
    """One line for each setting of KEYS given in more than one place: the place whose value
    the server uses, and the places it wins over."""
    said = []
    for key in keys:
        first, *others = setting_sources(key, argv, config_dirs) or [""]
        if others:
            said.append(f"DiamondApp.{key} is set in {first} and in {'; and in '.join(others)}:"
                        f" the value in {first} is used")
    return said


def setting_sources(key: str, argv: list[str], config_dirs: list[str]) -> list[str]:
    """Every place `DiamondApp.KEY` is set, the one whose value is used first: the server's
    command line, then each config file (and line) that names it, as traitlets ranks them
    (a directory's .json over its .py), then the `jupyter_server_config.d` files (each
    directory's last file first), which fill only what nothing else sets."""
    flag = f"--DiamondApp.{key}"
    found = [COMMAND_LINE] if any(a == flag or a.startswith(flag + "=") for a in argv) else []
    files = [Path(d) / n for d in config_dirs for n in CONFIG_FILES]
    files += [f for d in config_dirs
              for f in sorted((Path(d) / "jupyter_server_config.d").glob("*.json"),
                              reverse=True)]
    for f in files:
        try:
            text = f.read_text(errors="replace")
        except OSError:
            continue
        needle = f'"{key}"' if f.suffix == ".json" else f"DiamondApp.{key}"
        if "DiamondApp" not in text or needle not in text:
            continue
        line = text[:text.index(needle)].count("\n") + 1
        found.append(f"{f} (line {line})")
    return found


def check_settings(app: Any, section: dict[str, Any], argv: list[str],
                   config_dirs: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """({key: value as `app` takes it}, {key: why} for each setting it would refuse (unknown
    name or value), each naming where it is set and what would be accepted). Checked one by
    one, so that one bad setting neither hides nor drops the others. A list given by one
    flag on the command line is a list of that one item (traitlets would read `alpha` as no
    list at all, and `allowed_sites` None is every site)."""
    traits = app.traits(config=True)
    values, refused = {}, {}
    for key, value in section.items():
        where = setting_source(key, argv, config_dirs)
        trait = traits.get(key)
        if trait is None:
            near = difflib.get_close_matches(key, traits, n=1)
            hint = f"did you mean {near[0]}? " if near else ""
            own = sorted(type(app).class_own_traits(config=True))
            refused[key] = (f"DiamondApp.{key} in {where}: unknown setting ({hint}the diamond "
                            f"settings: {', '.join(own)})")
            continue
        if isinstance(value, DeferredConfigList) and len(value) > 1 and \
                not isinstance(trait, (Container, Dict)):
            refused[key] = (f"DiamondApp.{key} is given {len(value)} times in {where}: "
                            f"{', '.join(map(str, value))}; it takes one value: give it once "
                            "(a spawner hook giving a user their own value replaces the "
                            "admin's flag in spawner.args, rather than adding another)")
            continue
        try:
            if isinstance(value, DeferredConfigString) and hasattr(trait, "from_string_list"):
                value = DeferredConfigList([str(value)])
            if isinstance(value, DeferredConfig):
                value = value.get_value(trait)
            if key == "allowed_partitions" and (why := _partitions_left_empty(value)):
                raise ValueError(why)
            values[key] = trait._validate(app, value)
        except (TraitError, ValueError) as e:
            why = re.sub(r"^The '\w+' trait of an? \w+ instance ", "", str(e)).rstrip(".")
            shown = str(value) if isinstance(value, DeferredConfig) else repr(value)
            refused[key] = f"DiamondApp.{key} = {shown} in {where}: {why}"
    return values, refused


def _partitions_left_empty(value: Any) -> str:
    """Why DiamondApp.allowed_partitions given with no value (None, JSON null), whole or for
    one site, is refused, with what to write; '' when it has values. As in the sites file,
    no value is no list: leaving the site (or the setting) out is what allows every
    partition."""
    if value is None:
        return ("no value: give {site: [partition, ...]} for the sites whose partitions are "
                "pinned, or leave the setting out (or {}) to keep each site's "
                "allowed_partitions from the sites file")
    empty = [site for site, parts in value.items() if parts is None] \
        if isinstance(value, dict) else []
    if not empty:
        return ""
    site = empty[0]
    return (f"{site!r} is given no value: list the partitions its jobs may use "
            f"({{{site!r}: ['debug']}}), or leave {site!r} out to keep the sites file's "
            "allowed_partitions for it")


def config_d_settings(config_dirs: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The DiamondApp settings of every `jupyter_server_config.d/*.json` under the config
    directories (`config_dirs` highest priority first; a later file of one directory wins),
    which Jupyter reads for which extensions are enabled only; and {file: why} for a file
    that is not a JSON object."""
    values, refused = {}, {}
    for d in reversed(config_dirs):
        for f in sorted((Path(d) / "jupyter_server_config.d").glob("*.json")):
            try:
                data = json.loads(f.read_text())
            except OSError as e:
                refused[str(f)] = f"{f} cannot be read: {e.strerror}"
                continue
            except ValueError as e:
                where = f" (line {e.lineno})" if isinstance(e, json.JSONDecodeError) else ""
                refused[str(f)] = f"{f} is not valid JSON{where}: {getattr(e, 'msg', e)}"
                continue
            section = data.get("DiamondApp") if isinstance(data, dict) else None
            if isinstance(section, dict):
                values.update(section)
            elif section is not None:
                refused[str(f)] = (f"{f}: DiamondApp is {type(section).__name__}, expected "
                                   "an object of settings")
    return values, refused
