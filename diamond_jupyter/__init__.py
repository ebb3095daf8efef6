"""diamond-jupyter: run scientific work across several HPC clusters from a notebook."""

from __future__ import annotations

try:
    from ._version import __version__
except ImportError:  # running from a source tree that was never built
    __version__ = "0.0.0.dev0"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "diamond-jupyter"}]


def _jupyter_server_extension_points() -> list[dict[str, object]]:
    from .server.app import DiamondApp

    return [{"module": "diamond_jupyter", "app": DiamondApp}]


def load_ipython_extension(ipython) -> None:  # %load_ext diamond_jupyter
    from .kernel.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython) -> None:
    from .kernel.magics import unload_ipython_extension as _unload

    _unload(ipython)
