"""`yes`, `on`, `no`, `off` in a sites or workflow file's number field: YAML 1.1 reads them as
booleans, and the field refused "the boolean true", a word the file does not hold (left by
the twelfth sweep). The message now names the word written as well: "(line 5; YAML reads
`on` as true)". `true`/`false` are said as before; a boolean field takes all of them. The
tests marked `fault` failed before the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from diamond_jupyter.config import load_config
from diamond_jupyter.model import BadInput
from diamond_jupyter.strict_yaml import boolean_word, compose, node_at
from diamond_jupyter.workflow.model import load_workflow


def _site(d: Path, line: str) -> Path:
    p = d / "sites.yaml"
    p.write_text(f"sites:\n  - name: alpha\n    transport:\n      host: h\n      {line}\n")
    p.chmod(0o600)
    return p


@pytest.mark.parametrize("word,read", [("on", "true"), ("yes", "true"), ("Off", "false"),
                                       ("NO", "false")])
def test_fault_a_number_field_names_the_word_yaml_read_as_a_boolean(tmp_path, word, read):
    p = _site(tmp_path, f"keepalive_s: {word}")
    with pytest.raises(BadInput) as e:
        load_config(p)
    assert str(e.value) == (f"sites file {p}: site 'alpha' (sites[0]): transport.keepalive_s: "
                            f"expected a number, not the boolean {read} (line 5; YAML reads "
                            f"`{word}` as {read})")


def test_fault_a_workflow_number_field_names_the_word_too():
    with pytest.raises(BadInput) as e:
        load_workflow("name: w\nsteps:\n  - name: a\n    script: ./a\n    retries: on\n",
                      sites=["alpha"])
    assert str(e.value).endswith("not True (line 5; YAML reads `on` as true)"), e.value


def test_true_is_said_as_before_and_a_boolean_field_takes_every_word(tmp_path):
    """(guard)"""
    p = _site(tmp_path, "keepalive_s: true")
    with pytest.raises(BadInput) as e:
        load_config(p)
    assert str(e.value).endswith("not the boolean true (line 5)")
    for word, value in (("yes", True), ("off", False), ("true", True)):
        cfg = load_config(_site(tmp_path, f"trust_on_first_use: {word}"))
        assert cfg.sites[0].transport.trust_on_first_use is value


def test_only_a_boolean_written_otherwise_than_true_or_false_is_named():
    root = compose("a: on\nb: 'on'\nc: false\nd: [1, off]\n")
    assert [boolean_word(node_at(root, loc)) for loc in
            (("a",), ("b",), ("c",), ("d", 1), ("e",))] == \
        ["; YAML reads `on` as true", "", "", "; YAML reads `off` as false", ""]
