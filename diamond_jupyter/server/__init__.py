"""The Jupyter server extension: REST API under /diamond/api/ and jupyter_events schemas."""

from __future__ import annotations


def __getattr__(name: str):  # lazy: importing the package must not import jupyter_server
    if name == "DiamondApp":
        from .app import DiamondApp

        return DiamondApp
    raise AttributeError(name)


__all__ = ["DiamondApp"]
