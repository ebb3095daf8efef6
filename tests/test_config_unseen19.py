"""Sites files, nineteenth sweep: `pbs_servers:` written with no value (refused at its line
as `allowed_partitions:` is, and left out of a dump when unset); a `default_account` longer
than any scheduler keeps an account's name; a number YAML reads in another base named with
the site it is in; a site's description saying "every partition" for an unset
`allowed_partitions`. The tests marked `fault` failed before this sweep's fixes."""

from __future__ import annotations

import json

import pytest
import sweep_helpers
import yaml
from test_config_unseen2 import loads, refused, write

from diamond_jupyter.config import ACCOUNT_MAX_BYTES, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.store import Store

key_dir = sweep_helpers.key_dir
PBS = "sites:\n  - name: a\n    scheduler: pbs\n    transport: {kind: local}\n"
TO_WRITE = ("list the names of the site's own PBS server ([pbs01, pbs01.example.org], or one "
            "`- pbs01` per line), or leave the key out when jobs name no server "
            "(`-q QUEUE@SERVER`)")


# ---- pbs_servers: with no value ------------------------------------------------------------

@pytest.mark.parametrize("written,said", [
    ("", "written with no value"), (" ~", "`~` is no value"), (" null", "`null` is no value"),
    ("  # later", "written with no value")])
def test_fault_pbs_servers_with_no_value_is_refused_at_its_line(key_dir, written, said):
    """It was taken as the key left out: every `-q queue@SERVER` refused as another
    server's, where the admin meant to list this one's names."""
    got = refused(key_dir, f"{PBS}    pbs_servers:{written}\n    default_account: p\n")
    assert got.endswith(f"site 'a' (sites[0]): pbs_servers: {said} (YAML reads it as null, "
                        f"not a list): {TO_WRITE} (line 5)"), got


def test_fault_pbs_servers_with_no_value_from_a_merge_key_names_the_anchors_line(key_dir):
    got = refused(key_dir, "x-pbs: &pbs\n  scheduler: pbs\n  pbs_servers:\n"
                           "sites:\n  - <<: *pbs\n    name: a\n    transport: {kind: local}\n")
    assert "site 'a' (sites[0]): pbs_servers: written with no value" in got, got
    assert got.endswith("(line 3)"), got


def test_pbs_servers_left_out_or_listed_keeps_its_meaning(key_dir):
    cfg = loads(key_dir, f"{PBS}  - name: b\n    scheduler: pbs\n    transport: {{kind: local}}"
                         "\n    pbs_servers: [pbs01, pbs01.example.org]\n")
    assert [s.pbs_servers for s in cfg.sites] == [None, ["pbs01", "pbs01.example.org"]]


@pytest.mark.parametrize("servers", [None, ["pbs01"]])
def test_fault_a_pbs_sites_dump_written_as_a_sites_file_reads_back(key_dir, servers):
    site = SiteConfig(name="a", scheduler="pbs", transport=TransportConfig(kind="local"),
                      pbs_servers=servers)
    dumped = site.model_dump(mode="json")
    assert ("pbs_servers" in dumped) == (servers is not None), dumped
    path = write(key_dir, yaml.safe_dump({"sites": [dumped]}))
    assert loads(key_dir, path.read_text()).sites[0].pbs_servers == servers


# ---- default_account's length -------------------------------------------------------------

@pytest.mark.parametrize("account,size", [("p" * 5000, 5000),
                                          ("é" * 128, 256)])  # 128 letters, 2 bytes each
def test_fault_an_account_longer_than_a_scheduler_keeps_is_refused(key_dir, account, size):
    got = refused(key_dir, f"sites:\n  - name: a\n    transport: {{kind: local}}\n"
                           f"    default_account: {account}\n")
    assert f"site 'a' (sites[0]): default_account: {account[:20]!r}... is {size} bytes " \
           f"long" in got and f"stores at most {ACCOUNT_MAX_BYTES}" in got and \
           f"at most {ACCOUNT_MAX_BYTES} characters (line 4)" in got, got
    assert len(got) < 600, got  # the name is not echoed whole


def test_an_account_of_the_longest_length_kept_is_taken(key_dir):
    account = "p" * ACCOUNT_MAX_BYTES
    cfg = loads(key_dir, f"sites:\n  - name: a\n    transport: {{kind: local}}\n"
                         f"    default_account: {account}\n")
    assert cfg.sites[0].default_account == account


# ---- a number in another base names its site ----------------------------------------------

@pytest.mark.parametrize("entry,said", [
    ("  - name: alpha\n    transport: {kind: local}\n  - name: beta\n"
     "    transport: {kind: local, port: 022}\n",
     "line 5, column 36: site 'beta' (sites[1]): port: 022 is read by YAML as 18"),
    ("  - name: alpha\n    transport: {kind: local}\n    env: {UMASK: 0022}\n",
     "line 4, column 18: site 'alpha' (sites[0]): UMASK: 0022 is read by YAML as the number "
     "18"),
    ("  - transport: {kind: local}\n    default_account: 0x1F\n    name: gamma\n",
     "line 3, column 22: site 'gamma' (sites[0]): default_account: 0x1F is read by YAML as "
     "the number 31"),
    ("  - name: 0755\n    transport: {kind: local}\n",
     "line 2, column 11: site (sites[0]): name: 0755 is read by YAML as the number 493"),
])
def test_fault_a_number_not_as_written_names_the_site(key_dir, entry, said):
    got = refused(key_dir, f"sites:\n{entry}")
    assert said in got, got


def test_a_number_outside_the_sites_names_no_site(key_dir):
    got = refused(key_dir, "x-port: 0x10\nsites:\n  - name: a\n    transport: {kind: local}\n")
    assert ": line 1, column 9: x-port: 0x10 is read by YAML as 16" in got and \
        "site" not in got.split("x-port")[1], got


# ---- a site's description of its partitions -------------------------------------------------

@pytest.mark.parametrize("written,shown", [("", "every partition"),
                                           ("    allowed_partitions: [debug, gpu]\n",
                                            ["debug", "gpu"])])
def test_fault_an_unset_allowed_partitions_is_described_as_every_partition(key_dir, tmp_path,
                                                                            written, shown):
    """`diamond sites`'s configuration and the REST /sites said `null`."""
    fed = Federation(write(key_dir, f"sites:\n  - name: a\n    transport: {{kind: local}}\n"
                                    f"{written}"), store=Store(tmp_path / "s.sqlite"))
    [described] = fed.site_configs()
    assert described["allowed_partitions"] == shown and \
        json.dumps(described["allowed_partitions"]) != "null", described
