"""A float written in base 60 (`connect_timeout_s: 1:30.5`) in a sites or workflow file:
YAML 1.1 reads `1:30.5` as 90.5 and `1:00:00.25` as 3600.25, which no one writing a timeout
means, and it was taken without a word (left by the twelfth sweep: whole numbers in base 60
were refused since session 27, floats were not). Now refused as the whole numbers are: one
line naming the key, its line and column, the value YAML would read and what to write
instead. Decimal floats and quoted text are read as before. The tests marked `fault`
failed before the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from diamond_jupyter.config import load_config
from diamond_jupyter.model import BadInput
from diamond_jupyter.strict_yaml import NumberNotAsWritten, strict_load
from diamond_jupyter.workflow.model import load_workflow


def _site(d: Path, value: str) -> Path:
    p = d / "sites.yaml"
    p.write_text("sites:\n  - name: alpha\n    transport:\n      host: login.example.org\n"
                 f"      connect_timeout_s: {value}\n")
    p.chmod(0o600)
    return p


@pytest.mark.parametrize("written,read", [("1:30.5", "90.5"), ("1:00:00.25", "3600.25"),
                                          ("-0:30.0", "-30.0"), ("2:0.", "120.0")])
def test_fault_a_base_60_float_in_a_sites_file_is_refused_naming_its_place(tmp_path, written,
                                                                            read):
    p = _site(tmp_path, written)
    with pytest.raises(BadInput) as e:
        load_config(p)
    assert str(e.value) == (
        f"sites file {p}: line 5, column 26: site 'alpha' (sites[0]): connect_timeout_s: "
        f"{written} is read by YAML as "
        f"{read}, not as written (numbers joined by ':' are one number in base 60): write "
        f"the number meant in decimal ({read} if that is it), or quote it ('{written}') if "
        "it is text")


@pytest.mark.parametrize("written,seconds", [("90.5", 90.5), ("2.", 2.0), ("1_0.5", 10.5),
                                             ("7", 7.0)])
def test_a_decimal_float_in_a_sites_file_is_read_as_written(tmp_path, written, seconds):
    """(guard)"""
    cfg = load_config(_site(tmp_path, written))
    assert cfg.sites[0].transport.connect_timeout_s == seconds


def test_fault_a_base_60_float_in_a_workflow_or_a_list_is_refused():
    with pytest.raises(BadInput) as e:
        load_workflow("name: w\nsteps:\n  - name: a\n    script: ./a\n    retries: 1:30.5\n",
                      sites=["alpha"])
    assert str(e.value).startswith(
        "the workflow: line 5, column 14: retries: 1:30.5 is read by YAML as 90.5, not as "
        "written"), e.value
    with pytest.raises(NumberNotAsWritten, match=r"^waits\[1\]: 1:00:00\.25 is read by "
                                                 r"YAML as 3600\.25"):
        strict_load("waits: [1.5, 1:00:00.25]\n")


def test_quoted_a_base_60_float_is_text_and_other_floats_are_numbers():
    """(guard) Quoted, it is the text written; decimal floats, exponents as YAML 1.1 reads
    them (`1.5e3` is text there) and `.inf` are unchanged."""
    assert strict_load("a: '1:30.5'\nb: 2.5\nc: 1.5e3\nd: .inf\ne: -0.25\n") == {
        "a": "1:30.5", "b": 2.5, "c": "1.5e3", "d": float("inf"), "e": -0.25}
