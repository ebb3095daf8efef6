"""Notebooks the UI tests open: a Python 3 notebook of code cells, as JSON contents for the
server's contents API."""

from __future__ import annotations

from typing import Any


def code_cell(cell_id: str, source: str, outputs: list[dict[str, Any]] | None = None,
              execution_count: int | None = None) -> dict[str, Any]:
    """A code cell; not run (no outputs) unless `outputs` are given."""
    return {"cell_type": "code", "id": cell_id, "metadata": {}, "source": source,
            "outputs": outputs or [], "execution_count": execution_count}


def python_notebook(cells: list[dict[str, Any]]) -> dict[str, Any]:
    """An nbformat 4.5 notebook of `cells` on the python3 kernel."""
    return {"nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}},
            "cells": cells}
