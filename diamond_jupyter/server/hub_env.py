"""The variables a JupyterHub spawner gives a single-user server, read at the server's start:
one missing or malformed is said in one line naming it, its value and what would be
accepted, instead of the hub's client retrying a URL it cannot use (a traceback per attempt)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

# Set by every spawner: the server was started by a hub
HUB_MARKERS = ("JUPYTERHUB_SERVICE_PREFIX", "JUPYTERHUB_API_TOKEN")
URL_VARS = ("JUPYTERHUB_API_URL", "JUPYTERHUB_SERVICE_URL")
PREFIX_VARS = ("JUPYTERHUB_SERVICE_PREFIX", "JUPYTERHUB_BASE_URL")


def _url_problem(name: str, value: str) -> str | None:
    try:
        parts = urlsplit(value)
        _ = parts.port  # raises on a port that is not a number
    except ValueError as e:
        return f"{name}={value!r} is not a URL ({e})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (f"{name}={value!r} is not an http(s) URL with a host "
                "(e.g. http://127.0.0.1:8081/hub/api)")
    return None


def hub_environment_problems(environ: Mapping[str, str]) -> list[str]:
    """What is wrong with the hub's variables in ENVIRON (none when the server was not
    started by a hub): each a line naming the variable, its value and what is accepted."""
    if not any(environ.get(m) for m in HUB_MARKERS):
        return []
    problems = []
    if not environ.get("JUPYTERHUB_API_URL"):
        problems.append("JUPYTERHUB_API_URL is not set: the server cannot ask the hub about "
                        "tokens (the spawner sets it; an admin's Spawner.environment must "
                        "not clear it)")
    for name in URL_VARS:
        value = environ.get(name)
        if value:
            problem = _url_problem(name, value)
            if problem:
                problems.append(problem)
    for name in PREFIX_VARS:
        value = environ.get(name)
        if value is not None and not (value.startswith("/") and value.endswith("/")):
            problems.append(f"{name}={value!r} must start and end with '/' "
                            "(e.g. /user/alice/)")
    return problems


def runs_as_hub_single_user(serverapp: Any) -> bool:
    """Whether SERVERAPP is JupyterHub's single-user server: its `jupyterhub-singleuser`
    extension is linked (JupyterHub >= 2 on Jupyter Server 2), or the server class is
    JupyterHub's own (its older, non-extension mode). A plain `jupyter server` started
    with the hub's variables left in its environment is not."""
    if type(serverapp).__module__.startswith("jupyterhub."):
        return True
    manager = getattr(serverapp, "extension_manager", None)
    apps = manager.extension_apps.values() if manager is not None else []
    return any(getattr(app, "name", None) == "jupyterhub-singleuser"
               for linked in apps for app in linked)
