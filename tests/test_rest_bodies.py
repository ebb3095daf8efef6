"""REST bodies are read by the skills' input models: a bad one is a 400 whose message names
the field (through a real Jupyter server with the extension; a local site, no test bed)."""

from __future__ import annotations

import pytest
import yaml

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


@pytest.fixture
def jp_server_config(tmp_path, data_dir):
    from server_conftest import diamond_config

    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{"name": "here",
                                                "transport": {"kind": "local"}}]}))
    return diamond_config(str(sites), str(tmp_path / "store.sqlite3"))


CASES = [
    ("jobs", {"script": 42}, "script"),
    ("jobs", {"spec": "true"}, "spec"),
    ("jobs", {"script": "echo hi", "origin": "cell 3"}, "origin"),
    ("jobs", {}, "body"),
    ("place", {"script": "echo hi", "policy": 7}, "policy"),
    ("translate", {"script": "#SBATCH -N 1\necho\n"}, "to"),
    ("translate", {"script": "#SBATCH -N 1\necho\n", "to": "pbs", "from": ["slurm"]}, "from"),
    ("transfers", {"src": "here:a"}, "dst"),
    ("transfers", {"src": "here:a", "dst": "here:b", "recursive": "sometimes"}, "recursive"),
    ("tasks", {"prompt": "   "}, "prompt"),
    ("tasks", {"prompt": "hello", "approval": "always"}, "approval"),
]


async def test_a_bad_body_is_a_400_naming_the_field(api):
    for path, body, field in CASES:
        r = await api.call("POST", path, body, expect=400, validate=False)
        assert r.body["reason"] == "bad-input", (path, body, r.body)
        msg = r.body["message"]
        assert msg.split(":")[0] == field, (path, body, msg)
        assert "\n" not in msg, msg
    assert (await api.get("jobs"))["total"] == 0  # nothing was recorded


async def test_unknown_keys_are_ignored_as_before(api):
    r = await api.call("POST", "translate", {"script": "#SBATCH -N 2\necho\n", "to": "pbs",
                                             "colour": "blue"}, validate=False)
    assert "#PBS" in r.body["script"]
