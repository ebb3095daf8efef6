"""Unseen inputs, twelfth sweep: workflow files and sites files written by an attacker or in
a hurry. What the earlier sweeps (tests/test_adversarial_inputs*.py,
tests/test_workflow_unseen*.py, tests/test_config_unseen*.py) did not try: a "billion
laughs" of aliases in each field of a step (in `inputs` and `retries` it took minutes and
gigabytes before an error: the check walked, copied or printed every expanded value), a
retry count that retried a down site for ever, a sites file written as TOML or INI, and
values that are refused already but were never asked (`user: --help`, a zero timeout, a
name with a right-to-left mark). Each gets one line naming what, where and what is accepted;
`diamond` exits 2 on it. The tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diamond_jupyter.config import load_config
from diamond_jupyter.model import BadInput
from diamond_jupyter.strict_yaml import MAX_ALIAS_VALUES
from diamond_jupyter.workflow.model import load_workflow

SITES = ["alpha", "beta"]
SCRIPT = '"#!/bin/bash\\n#SBATCH -t 5\\necho hi\\n"'
BOMB_SAID = (f"anchors and aliases (&name, *name) make it hold more than "
             f"{MAX_ALIAS_VALUES:,} values")
GUARD_S = 20  # a refusal takes milliseconds; before the fix, minutes


def _bomb(kind: str) -> str:
    """Nine levels of nine aliases each (387 million values once expanded), as `x-` keys:
    `&i` is the last level."""
    if kind == "list":
        first = "x-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        level = "x-{c}: &{c} [" + ", ".join(["*{p}"] * 9) + "]\n"
    else:
        first = "x-a: &a {" + ", ".join(f"k{j}: lol" for j in range(9)) + "}\n"
        level = "x-{c}: &{c} {{" + ", ".join(f"k{j}: *{{p}}" for j in range(9)) + "}}\n"
    return first + "".join(level.format(c=chr(98 + i), p=chr(97 + i)) for i in range(8))


def _bombed_step(field: str) -> str:
    """A two-step workflow whose second step's `field` is the bomb (`inputs.X`: one key of
    its input)."""
    if field.startswith("inputs."):
        ref = {"from": "a", "path": "o", "as": "in"}
        ref[field.split(".")[1]] = "*i"
        line = "    inputs: [{" + ", ".join(f"{k}: {v}" for k, v in ref.items()) + "}]\n"
    else:
        line = f"    {field}: *i\n"
    script = "" if field == "script" else f"    script: {SCRIPT}\n"
    return (f"steps:\n  - name: a\n    script: {SCRIPT}\n    outputs: [o]\n"
            f"  - name: b\n{script}    needs: [a]\n{line}")


FIELDS = ["site", "needs", "inputs", "inputs.from", "inputs.path", "inputs.as", "outputs",
          "retries", "gang", "on_failure", "dialect", "script", "script_file"]


@pytest.mark.parametrize("kind", ["list", "map"])
@pytest.mark.parametrize("field", FIELDS)
def test_fault_a_billion_laughs_in_any_field_is_refused_at_once(kind, field):
    text = "name: w\n" + _bomb(kind) + _bombed_step(field)
    start = time.monotonic()
    with pytest.raises(BadInput) as e:
        load_workflow(text, sites=SITES)
    assert time.monotonic() - start < GUARD_S
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 400
    # named at the innermost level past the bound: x-f (9^6 items) or x-e (a map's keys
    # count too: 18^5)
    line = 7 if kind == "list" else 6
    assert msg.startswith(f"the workflow: not valid YAML at line {line}, column 6: "
                          + BOMB_SAID), msg


@pytest.mark.parametrize("where", ["steps", "queue_ahead", "step", "top-x"])
def test_fault_a_billion_laughs_anywhere_else_is_refused(where):
    body = {"steps": "steps: *i\n", "queue_ahead": f"queue_ahead: *i\n{_bombed_step('gang')}",
            "step": "steps:\n  - *i\n",
            "top-x": f"x-z: *i\nsteps:\n  - name: a\n    script: {SCRIPT}\n"}[where]
    if where == "queue_ahead":
        body = body.replace("    gang: *i\n", "")
    with pytest.raises(BadInput, match=r"not valid YAML at line \d+, column \d+: " +
                       BOMB_SAID.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        load_workflow("name: w\n" + _bomb("list") + body, sites=SITES)


def test_aliases_that_repeat_a_template_many_times_still_load():
    """Everyday anchors: 2,000 steps each merging a shared template and aliasing a shared
    site list (tens of thousands of values through aliases) load as before."""
    steps = "".join(f"  - name: s{i}\n    <<: *defaults\n    site: *cpu\n"
                    f"    outputs: *outs\n" for i in range(2000))
    text = (f"name: w\nx-defaults: &defaults {{script: {SCRIPT}, retries: 2, on_failure: "
            "resubmit-elsewhere}\nx-cpu: &cpu [alpha, beta]\nx-outs: &outs [" +
            ", ".join(f"o{j}.txt" for j in range(10)) + "]\nsteps:\n" + steps)
    w = load_workflow(text, sites=SITES)
    assert len(w.steps) == 2000 and w.steps[-1].retries == 2
    assert w.steps[1999].among == ["alpha", "beta"] and len(w.steps[0].outputs) == 10


def test_a_collection_that_holds_itself_is_sized_once():
    """(guard) `&l [1, *l]` under an x- key: the size check does not walk it for ever."""
    text = f"name: w\nx-l: &l [1, *l]\nx-m: &m {{me: *m}}\nsteps: [{{name: a, script: {SCRIPT}}}]\n"
    assert [s.name for s in load_workflow(text, sites=SITES).steps] == ["a"]


# -- sites files ------------------------------------------------------------------------------

def _site(d: Path, text: str, name: str = "sites.yaml") -> Path:
    p = d / name
    p.write_text(text)
    p.chmod(0o600)
    return p


def _ssh(**kw: object) -> str:
    keys = {"kind": "ssh", "host": "login.example.org", **kw}
    return "sites:\n  - name: alpha\n    transport: {" + ", ".join(
        f"{k}: {v}" for k, v in keys.items()) + "}\n"


@pytest.mark.parametrize("text,said", [
    # fault: 10**12 connects tried per call, each up to connect_timeout_s plus a pause
    (_ssh(reconnect_attempts=11), "transport.reconnect_attempts: Input should be less than "
                                  "or equal to 10"),
    (_ssh(reconnect_attempts=10**12), "transport.reconnect_attempts: Input should be less "
                                      "than or equal to 10"),
    (_ssh(user="'--help'"), "transport.user: '--help' is not a login name (letters, digits, "
                            ". _ -, not starting with -)"),
    (_ssh(user="'-oProxyCommand=id'"), "is not a login name"),
    (_ssh(host="'-oProxyCommand=touch /tmp/x'"), "transport: host: '-oProxyCommand=touch "
                                                 "/tmp/x' is not a host"),
    (_ssh(host="'a:0'"), "the port must be a number from 1 to 65535"),
    (_ssh(port=0), "transport.port: Input should be greater than or equal to 1"),
    (_ssh(port=65536), "transport.port: Input should be less than or equal to 65535"),
    (_ssh(port=-22), "transport.port: Input should be greater than or equal to 1"),
    (_ssh(port=".inf"), "transport.port: Input should be a finite number"),
    (_ssh(connect_timeout_s=0), "transport.connect_timeout_s: Input should be greater than 0"),
    (_ssh(connect_timeout_s=".nan"), "transport.connect_timeout_s: Input should be a finite "
                                     "number"),
    (_ssh(max_sessions=0), "transport.max_sessions: Input should be greater than or equal "
                           "to 2"),
    (_ssh(key_file='"/k\\nProxyCommand id"'), "transport.key_file: must be one line of "
                                              "printable text"),
    (_ssh(proxy_jump="'a;id'"), "transport.proxy_jump: 'a;id' is not a host"),
    ("sites:\n  - name: \"a\\u202eb\"\n", "name: 'a\\u202eb' is not a site name"),
    ("sites:\n  - name: alpha\n    workdir: \"~/x\\ny\"\n", "workdir: must be one line"),
    ("sites:\n  - name: alpha\n    speed_factor: 0\n", "speed_factor: Input should be greater "
                                                      "than 0"),
    ("fetch_max_file_bytes: 1.5\nsites:\n  - name: alpha\n",
     "fetch_max_file_bytes: Input should be a valid integer, got a number with a fractional "
     "part"),
])
def test_sites_file_values_refused_with_what_is_accepted(tmp_path, text, said):
    with pytest.raises(BadInput) as e:
        load_config(_site(tmp_path, text))
    msg = str(e.value)
    assert said in msg and "\n" not in msg, msg


def test_ten_reconnects_are_still_accepted(tmp_path):
    cfg = load_config(_site(tmp_path, _ssh(reconnect_attempts=10)))
    assert cfg.sites[0].transport.reconnect_attempts == 10


TOML = '[[sites]]\nname = "alpha"\nscheduler = "slurm"\n\n[sites.transport]\nkind = "local"\n'
INI = "[alpha]\nscheduler = slurm\nhost = login.example.org\n"
NOT_READ = ("it looks like TOML or INI, which is not read: a sites file is YAML (or JSON), "
            "`sites:` and one `- name: alpha` item per site")


@pytest.mark.parametrize("name,text,first", [
    ("sites.toml", TOML, "is not valid YAML: line 2, column 1"),
    ("sites.yaml", TOML, "is not valid YAML: line 2, column 1"),  # told by its lines
    ("sites.ini", INI, "is not valid YAML: line 2, column 1"),
    ("sites.toml", 'name = "alpha"\n', "the file holds one value, 'name = \"alpha\"' (line 1), "
                                       "not a mapping"),
])
def test_fault_a_toml_or_ini_sites_file_is_told_what_is_read(tmp_path, name, text, first):
    with pytest.raises(BadInput) as e:
        load_config(_site(tmp_path, text, name))
    assert first in str(e.value) and NOT_READ in str(e.value), str(e.value)


def test_a_yaml_error_in_a_yaml_sites_file_gets_no_toml_advice(tmp_path):
    with pytest.raises(BadInput) as e:
        load_config(_site(tmp_path, "sites:\n  - name: [alpha\n"))
    assert "TOML" not in str(e.value)


def test_a_json_sites_file_is_read(tmp_path):
    p = _site(tmp_path, '{"sites": [{"name": "alpha", "transport": {"kind": "local"}}]}',
              "sites.json")
    assert [s.name for s in load_config(p).sites] == ["alpha"]


# -- the command line: exit 2, one line, no traceback ----------------------------------------

def _diamond(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    sites = _site(tmp_path, "sites:\n  - name: alpha\n    transport: {kind: local}\n")
    env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"),
           "DIAMOND_CONFIG": str(sites), "DIAMOND_ENGINE": "local", "DIAMOND_HANDOVER": "0"}
    return subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *argv],
                          capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)


def test_fault_diamond_workflow_run_refuses_a_bomb_in_retries_with_exit_2(tmp_path):
    (tmp_path / "bomb.yaml").write_text("name: w\n" + _bomb("list") + _bombed_step("retries"))
    r = _diamond(tmp_path, "workflow", "run", "bomb.yaml")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        f"diamond: bomb.yaml: not valid YAML at line 7, column 6: {BOMB_SAID} (an alias "
        "repeats all its anchor holds, and aliases of aliases multiply): write the repeated "
        "part out, or repeat it fewer times"]


def test_fault_diamond_sites_refuses_a_toml_sites_file_with_exit_2(tmp_path):
    toml = _site(tmp_path, TOML, "mine.toml")
    r = _diamond(tmp_path, "sites", "--config", str(toml))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    [line] = r.stderr.strip().splitlines()
    assert line.startswith(f"diamond: sites file {toml} is not valid YAML") and NOT_READ in line
