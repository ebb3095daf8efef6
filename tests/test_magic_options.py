"""The magic's option parsing (pure): --time takes every sbatch --time form."""

from __future__ import annotations

import pytest

from diamond_jupyter.kernel.magics import walltime
from diamond_jupyter.model import BadInput


@pytest.mark.parametrize("text, secs", [
    ("30", 1800), ("1:30", 90), ("01:00:00", 3600), ("2-0", 172800),
    ("1-12", 129600), ("1-2:30", 95400), ("1-02:03:04", 93784),
])
def test_time_forms(text, secs):
    assert walltime(text) == secs


@pytest.mark.parametrize("text", ["", "soon", "1:2:3:4", "-5"])
def test_bad_time_names_the_forms(text):
    with pytest.raises(BadInput, match="--time .*expected minutes, HH:MM:SS or D-HH"):
        walltime(text)
