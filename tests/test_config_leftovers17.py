"""What the seventeenth sweep of sites files left: a key path starting with a blank, read
beside the sites file and said missing with the blank unseen, is refused naming the file,
the site, the key, the line and what would be accepted (the tests marked `fault` failed
before); `allowed_partitions` left out or listed keeps its meaning. (`allowed_partitions:`
with no value, YAML null, is refused at the file's line since the eighteenth sweep, a
configuration's dump leaving the unset key out: tests/test_config_unseen18.py.)"""

from __future__ import annotations

import pytest
import sweep_helpers
from test_config_unseen2 import loads, refused

key_dir = sweep_helpers.key_dir
LOCAL = "    transport: {kind: local}\n"


# ---- allowed_partitions left out or listed ----------------------------------------------

def test_allowed_partitions_left_out_still_allows_every_partition(key_dir):
    site = loads(key_dir, f"sites:\n  - name: a\n{LOCAL}").sites[0]
    assert site.allowed_partitions is None


def test_allowed_partitions_listed_are_kept(key_dir):
    site = loads(key_dir, f"sites:\n  - name: a\n{LOCAL}    allowed_partitions:\n"
                          "      - debug\n      - gpu\n").sites[0]
    assert site.allowed_partitions == ["debug", "gpu"]


def test_an_empty_list_of_allowed_partitions_is_still_refused(key_dir):
    got = refused(key_dir, f"sites:\n  - name: a\n{LOCAL}    allowed_partitions: []\n")
    assert "allowed_partitions:" in got and got.endswith("(line 4)"), got


# ---- a key path starting with a blank --------------------------------------------------------

def _site_with(d, key: str, value: str) -> str:
    lines = {"key_file": f"{d}/id_ed25519", "known_hosts": f"{d}/known_hosts"}
    lines[key] = value
    return ("sites:\n  - name: a\n    transport:\n      host: login.example.org\n"
            "      use_agent: false\n"
            + "".join(f"      {k}: {v}\n" for k, v in lines.items()))


@pytest.mark.parametrize("key", ["key_file", "known_hosts"])
def test_fault_an_absolute_key_path_starting_with_a_blank_is_pointed_out(key_dir, key):
    """`key_file: ' /k/id_ed25519'` was said `DIR/ /k/id_ed25519 does not exist`."""
    path = f"{key_dir}/{'id_ed25519' if key == 'key_file' else key}"
    got = refused(key_dir, _site_with(key_dir, key, f"' {path}'"))
    assert (f"site 'a' (sites[0]): transport.{key}: ' {path}': the path starts with a blank, "
            f"which makes it a name beside the sites file, not {path}: remove the blank"
            ) in got, got
    assert got.endswith(f"(line {6 if key == 'key_file' else 7})"), got


def test_fault_a_home_key_path_starting_with_blanks_is_pointed_out(key_dir):
    got = refused(key_dir, _site_with(key_dir, "key_file", "'  ~/.ssh/id_ed25519'"))
    assert ("transport.key_file: '  ~/.ssh/id_ed25519': the path starts with a blank, which "
            "makes it a name beside the sites file, not ~/.ssh/id_ed25519: remove the blank"
            ) in got, got


def test_fault_a_relative_key_path_starting_with_a_blank_is_pointed_out(key_dir):
    got = refused(key_dir, _site_with(key_dir, "key_file", "' id_ed25519'"))
    assert ("transport.key_file: ' id_ed25519': the path starts with a blank, part of the "
            "file's name as written: remove the blank (line 6)") in got, got


def test_a_key_path_with_a_blank_inside_a_name_is_read_as_written(key_dir):
    (key_dir / "my keys").mkdir()
    key = key_dir / "my keys" / "id_ed25519"
    key.write_text("not parsed before connecting\n")
    key.chmod(0o600)
    cfg = loads(key_dir, _site_with(key_dir, "key_file", f"'{key}'"))
    assert cfg.sites[0].transport.key_file == str(key)
