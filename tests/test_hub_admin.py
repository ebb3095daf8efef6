"""The admin's defaults under a hub (DiamondApp traitlets, pinned on each server's command
line): partitions per site, and the user's own sites only on hosts the admin allows."""

from __future__ import annotations

import asyncio
import json

import pytest
import yaml
from fake_llm import FakeLLM, text

from diamond_jupyter.config import FederationConfig, load_config
from diamond_jupyter.hub.config import trait_args
from diamond_jupyter.hub.sites import hub_sites
from diamond_jupyter.model import BadInput
from diamond_jupyter.server.admin import add_user_sites, pin_partitions

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")

ADMIN = {"sites": [
    {"name": "home", "transport": {"kind": "ssh", "host": "127.0.0.1", "port": 1},
     "default_partition": "batch", "allowed_partitions": ["batch", "debug", "gpu"]},
    {"name": "other", "transport": {"kind": "ssh", "host": "127.0.0.1", "port": 1}},
]}
MINE = {"sites": [
    {"name": "lab", "transport": {"kind": "ssh", "host": "login.partner.example"}},
    {"name": "rogue", "transport": {"kind": "ssh", "host": "evil.example.com"}},
    {"name": "home", "transport": {"kind": "ssh", "host": "x.partner.example"}},
    {"name": "here", "transport": {"kind": "local"}},
]}


def _cfg() -> FederationConfig:
    return FederationConfig.model_validate(ADMIN)


def test_pinned_partitions_replace_the_files_and_move_the_default():
    cfg = pin_partitions(_cfg(), {"home": ["debug"]})
    home = cfg.site("home")
    assert home.allowed_partitions == ["debug"] and home.default_partition == "debug"
    assert cfg.site("other").allowed_partitions is None  # not named: as the file says


def test_pinning_an_unknown_site_is_refused_by_name():
    with pytest.raises(BadInput, match="allowed_partitions names sites not in the sites "
                                       "file: nowhere"):
        pin_partitions(_cfg(), {"nowhere": ["x"]})


def test_user_sites_load_only_on_allowed_hosts(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text(yaml.safe_dump(MINE))
    cfg, names, refused = add_user_sites(_cfg(), str(f), ["*.partner.example"])
    assert names == ["lab"]
    assert [s.name for s in cfg.sites] == ["home", "other", "lab"]
    assert cfg.site("home").transport.port == 1  # the admin's entry, not the user's
    text = "\n".join(refused)
    assert "rogue: host evil.example.com is not one the admin lets users add" in text
    assert "home: the admin's sites file defines this name already" in text
    assert "here: user sites must be reached over SSH (transport kind local)" in text


def test_without_allowed_hosts_the_users_file_is_not_even_read(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("sites: [this is not: valid")  # would fail to parse
    cfg, names, refused = add_user_sites(_cfg(), str(f), [])
    assert (names, refused) == ([], []) and cfg == _cfg()


def test_the_hub_sites_file_is_the_test_beds_as_each_user():
    tb = {"sites": [
        {"name": "alpha", "transport": {"kind": "ssh", "host": "10.0.0.2", "user": "diamondtb",
                                        "key_file": "/tmp/tb/id", "known_hosts": "/tmp/kh"},
         "workdir": "/home/diamondtb/.diamond"},
        {"name": "beta-rest", "transport": {"kind": "slurmrestd", "url": "http://x:1",
                                            "token_command": ["t"]}, "workdir": "/x"},
    ]}
    out = hub_sites(tb)
    assert [s["name"] for s in out["sites"]] == ["alpha"]  # no test user's token
    t = out["sites"][0]["transport"]
    assert "user" not in t and t["key_file"] == "~/.ssh/id_ed25519"
    assert t["known_hosts"] == "/tmp/kh" and out["sites"][0]["workdir"] == "~/.diamond/alpha"
    FederationConfig.model_validate(out)
    local = hub_sites(tb, local_site="alpha")["sites"][0]
    assert local["transport"] == {"kind": "local"}


def test_admin_defaults_become_command_line_traits():
    args = trait_args({"allowed_sites": ["alpha"], "agent_approval": "ask",
                       "allowed_partitions": {"alpha": ["debug"]}})
    assert args == ["--DiamondApp.allowed_sites=alpha", "--DiamondApp.agent_approval=ask",
                    "--DiamondApp.allowed_partitions={'alpha': ['debug']}"]


def test_the_args_reach_the_extensions_traits_as_given():
    """Parsed as the server parses them (before it knows the extension's traits)."""
    from traitlets.config import Application

    from diamond_jupyter.server.app import DiamondApp

    app = Application()
    app.parse_command_line(trait_args({"allowed_sites": ["alpha", "alpha-pbs"],
                                       "allowed_partitions": {"alpha": ["debug", "batch"]},
                                       "agent_approval": "dry-run"}))
    d = DiamondApp(config=app.config)
    assert d.allowed_sites == ["alpha", "alpha-pbs"]
    assert d.allowed_partitions == {"alpha": ["debug", "batch"]}
    assert d.agent_approval == "dry-run"


# -- the same through a real Jupyter server -------------------------------------------------
@pytest.fixture
def llm():
    """The center's own model endpoint (OpenAI-compatible), a real HTTP server."""
    with FakeLLM().script([text("nothing to run")]) as fake:
        yield fake


@pytest.fixture
def jp_server_config(tmp_path, data_dir, llm):
    admin = tmp_path / "admin.yaml"
    admin.write_text(yaml.safe_dump(ADMIN))
    mine = tmp_path / "mine.yaml"
    mine.write_text(yaml.safe_dump(MINE))
    return {
        "ServerApp": {"jpserver_extensions": {"diamond_jupyter": True}},
        "DiamondApp": {"sites_file": str(admin), "store_path": str(tmp_path / "s.sqlite3"),
                       "allowed_sites": ["home"], "allowed_partitions": {"home": ["debug"]},
                       "user_sites_file": str(mine), "user_site_hosts": ["*.partner.example"],
                       "llm_provider": "openai", "llm_base_url": f"{llm.url}/v1",
                       "agent_approval": "dry-run"},
    }


async def test_a_server_loads_the_admins_policy(jp_fetch, jp_serverapp, llm):
    app = jp_serverapp.web_app.settings["diamond_app"]
    fed = app.federation
    assert fed is not None and app.error is None
    assert sorted(fed.allowed_sites) == ["home", "lab"]  # the admin's choice + the user's own
    assert fed.config.site("home").allowed_partitions == ["debug"]
    assert app.agent_settings()["base_url"] == f"{llm.url}/v1"
    resp = await jp_fetch("diamond", "api", "state", params={"max_age": 3600})
    state = json.loads(resp.body)
    assert [line.split(":")[0] for line in state["refused_sites"]] == ["rogue", "home", "here"]
    # the agent calls the admin's model endpoint, with the admin's approval policy
    resp = await jp_fetch("diamond", "api", "tasks", method="POST",
                          body=json.dumps({"prompt": "what runs where?"}))
    task = json.loads(resp.body)
    assert task["approval"] == "dry-run", task
    for _ in range(600):  # until the endpoint got the task's first model call
        if llm.calls:
            break
        await asyncio.sleep(0.05)
    assert llm.calls >= 1 and not llm.errors, llm.errors
    assert "what runs where?" in json.dumps(llm.requests[0])


def test_load_config_reads_what_hub_sites_writes(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(hub_sites(ADMIN)))
    assert [s.name for s in load_config(p).sites] == ["home", "other"]


@pytest.mark.parametrize("parts,said", [
    ([], "DiamondApp.allowed_partitions['home'] is empty, which would refuse every job on "
         "'home': list the partitions its jobs may use (e.g. {'home': ['debug']}); to keep "
         "users off the site, leave it out of DiamondApp.allowed_sites"),
    (["-x"], "DiamondApp.allowed_partitions['home']: '-x': must be one word, not starting "
             "with - (e.g. debug)"),
    (["debug; id"], "DiamondApp.allowed_partitions['home']: 'debug; id': must be one word"),
    (["debug,gpu"], "DiamondApp.allowed_partitions['home']: 'debug,gpu' names several "
                    "partitions in one item: list each as its own item (['debug', 'gpu'])"),
    (["gpu", "gpu"], "DiamondApp.allowed_partitions['home']: 'gpu' is listed twice; list "
                     "each partition once"),
])
def test_fault_pinned_partitions_are_checked_as_the_sites_files_are(parts, said):
    """They were put in place unchecked: an empty list refused every job only at submit,
    and `-x` or `debug; id` were passed on to the scheduler as partition names."""
    with pytest.raises(BadInput) as e:
        pin_partitions(_cfg(), {"home": parts})
    assert said in str(e.value), str(e.value)
