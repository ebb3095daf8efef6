"""The tenth sweep of hostile inputs: what the ninth left (a job's colours that hide its own
text in `diamond logs`, a sites file near its size bound read slowly, a tool call's job that
stages a directory back), then new attacks on what no sweep covered.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py and after): bad input
is refused with one line naming what, where and what would be accepted; what comes from a
site, a job or a service is data, never a command, a record, a line of its own or a path
outside its place. Tests of attacks that already failed safely say so ("guard")."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest
import yaml

from diamond_jupyter.model import BadInput

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


# -- 1. a sites file near its size bound -----------------------------------------------------------

def _sites_text(n: int) -> str:
    return "sites:\n" + "".join(f"  - {{name: s{i}, transport: {{kind: local}}}}\n"
                                for i in range(n))


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "sites.yaml"
    p.write_text(text)
    p.chmod(0o600)
    return p


@pytest.fixture
def no_python_scanner(monkeypatch):
    """PyYAML's pure-Python scanner made to fail: what still reads was read by libyaml."""
    def refuse(self: Any) -> None:
        raise AssertionError("read by PyYAML's pure-Python scanner")
    monkeypatch.setattr(yaml.scanner.Scanner, "fetch_more_tokens", refuse)


def test_this_pyyaml_has_libyaml():
    """The venv's PyYAML is built with libyaml (what the sites file's reader relies on)."""
    assert yaml.__with_libyaml__ and hasattr(yaml, "CSafeLoader")


def test_a_sites_file_is_read_by_libyaml(tmp_path, no_python_scanner):
    """A sites file of 4 MB (40,000 entries) took PyYAML's pure-Python reader about 20 s
    before it was refused. It is read by libyaml now (the same safe constructor)."""
    from diamond_jupyter.config import load_config

    cfg = load_config(_write(tmp_path, _sites_text(3)))
    assert [s.name for s in cfg.sites] == ["s0", "s1", "s2"]


@pytest.mark.parametrize("text,error", [
    ("sites:\n  - {name: a, transport: {kind: local}}\n  - {name: a, name: b}\n",
     r"key 'name' is given twice \(first on line 3\)"),
    ("sites: !!python/object/apply:os.system [id]\n", r"could not determine a constructor"),
    ("sites:\n  - name: a\n    metadata: {x: " + "[" * 80 + "]" * 80 + "}\n",
     r"collections nested more than 64 deep"),
])
def test_libyaml_reads_with_the_same_safety(tmp_path, monkeypatch, text, error):
    """What the pure-Python reader refused libyaml's refuses too: a key given twice, a
    Python tag, flow collections nested past 64 (libyaml itself stops only at 1,000)."""
    from diamond_jupyter import strict_yaml
    from diamond_jupyter.config import load_config

    monkeypatch.setattr(strict_yaml, "RETELL_MAX_CHARS", 0)  # libyaml's own error
    with pytest.raises(BadInput, match=error):
        load_config(_write(tmp_path, text))


def test_reading_a_big_sites_file_runs_no_cycle_collection():
    """The reader's cost grew with the square of the file (4,000 sites 0.18 s, 32,000 sites
    2.9 s, in C): Python's cycle collector walked every node made so far, again and again.
    It is paused while a tree is built (and its state restored after: at most one
    collection follows each reading, where 20,000 sites ran hundreds)."""
    from diamond_jupyter.strict_yaml import compose, strict_load

    runs: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(info["generation"])

    text = _sites_text(20_000)
    gc.callbacks.append(count)
    try:
        assert len(strict_load(text)["sites"]) == 20_000
        assert compose(text) is not None
    finally:
        gc.callbacks.remove(count)
    assert len(runs) <= 2 and gc.isenabled()


def test_a_sites_file_of_more_sites_than_the_bound_is_refused_by_count(tmp_path):
    """1,001 sites (each is checked, connected to and polled): refused naming the count and
    the bound, before the entries are checked one by one; 1,000 are read."""
    from diamond_jupyter.config import MAX_SITES, load_config

    assert MAX_SITES == 1_000
    with pytest.raises(BadInput, match=r"lists 1001 sites; a sites file lists at most 1000"):
        load_config(_write(tmp_path, _sites_text(1_001)))
    assert len(load_config(_write(tmp_path, _sites_text(1_000))).sites) == 1_000


def test_a_big_sites_file_that_is_no_yaml_says_where_without_the_slow_reader(
        tmp_path, no_python_scanner):
    """A sites file past the size the pure-Python reader retells (256 KiB) whose last line
    is no YAML: libyaml's error, with its line, not a second slow reading."""
    from diamond_jupyter.config import load_config

    text = _sites_text(6_000) + "  - {name: x\n"
    with pytest.raises(BadInput, match=r"is not valid YAML: line 6003, column \d+: "):
        load_config(_write(tmp_path, text))


def test_a_small_sites_file_that_is_no_yaml_gets_the_same_message_as_before(tmp_path):
    """(the same, small) PyYAML's pure-Python reader retells it: the messages (and hints)
    the faces showed before stay."""
    from diamond_jupyter.config import load_config

    with pytest.raises(BadInput, match=r"line 3, column 1: expected ',' or '}', but got "
                                       r"'<stream end>'"):
        load_config(_write(tmp_path, "sites:\n  - {name: x\n"))


def test_a_sites_file_with_a_tab_between_key_and_value_is_refused_as_before(tmp_path):
    """libyaml takes `name:<TAB>value` (YAML allows a tab there); this reader refuses it,
    saying to put a space: a text with a tab is read by the pure-Python reader."""
    from diamond_jupyter.config import load_config

    with pytest.raises(BadInput, match=r"a tab after other text on the line"):
        load_config(_write(tmp_path, "sites:\n  - name:\ta\n"))
