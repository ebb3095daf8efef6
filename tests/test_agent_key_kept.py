"""The agent's API key, in the environment of the process running the engine, never reaches
a local site's scheduler commands: sbatch exports its environment into the job, where the
site's admins (and `sacct --env-vars` where job environments are stored) read it. The
end to end case, a user's server under a real JupyterHub, is in test_hub_unseen3.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import sweep_helpers
import yaml

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec
from diamond_jupyter.store import Store

KEY = "sk-kept-" + "5" * 24


def _engine(tmp_path: Path, **kw) -> Federation:
    """One local site whose sbatch writes the environment it was given, then answers 4242."""
    commands = sweep_helpers.fake_slurm_commands(tmp_path / "slurm")
    sbatch = tmp_path / "sbatch-env"
    sbatch.write_text(f"#!/bin/sh\nenv > {tmp_path / 'sbatch.env'}\necho 4242\n")
    sbatch.chmod(0o755)
    commands["sbatch"] = str(sbatch)
    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [{
        "name": "here", "transport": {"kind": "local"}, "workdir": str(tmp_path / "work"),
        "commands": commands}]}))
    return Federation(sites, store=Store(tmp_path / "store.sqlite3"), poll_interval_s=3600,
                      min_poll_s=3600, **kw)


async def _sbatch_env(tmp_path: Path, fed: Federation) -> dict[str, str]:
    await fed.start(recover=False)
    try:
        await fed.submit(JobSpec(name="k", command="true",
                                 working_directory=str(tmp_path)), "here", force=True)
    finally:
        await fed.close()
    lines = (tmp_path / "sbatch.env").read_text().splitlines()
    return dict(x.split("=", 1) for x in lines if "=" in x)


@pytest.mark.parametrize("var", ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"])
async def test_the_default_agent_key_variables_never_reach_sbatch(tmp_path, monkeypatch, var):
    monkeypatch.setenv(var, KEY)
    monkeypatch.setenv("DIAMOND_KEPT_CHECK", "passed on")  # the rest of it does pass
    env = await _sbatch_env(tmp_path, _engine(tmp_path))
    assert var not in env and KEY not in "".join(env.values()), sorted(env)
    assert env.get("DIAMOND_KEPT_CHECK") == "passed on", sorted(env)


async def test_a_key_variable_the_engine_is_told_of_never_reaches_sbatch(tmp_path, monkeypatch):
    """A center's own name for the key (DiamondApp.llm_api_key_env, `ask --api-key-env`)."""
    monkeypatch.setenv("CENTER_LLM_TOKEN", KEY)
    env = await _sbatch_env(tmp_path, _engine(tmp_path, private_vars={"CENTER_LLM_TOKEN"}))
    assert "CENTER_LLM_TOKEN" not in env, sorted(env)
