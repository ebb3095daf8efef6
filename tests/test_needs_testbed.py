"""Needs against the real test bed (Lmod module trees named three ways, features, GPUs):
an explicit site that lacks a need is refused unless forced, `--site auto` with no
feasible site says why for every site, and the chosen site's module names are used."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.fixture
def run(tb, data_dir):
    env = {**os.environ, "DIAMOND_CONFIG": str(tb.config_path), "DIAMOND_DATA_DIR": str(data_dir)}

    def go(*args: str, check: int | None = 0) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", *args],
                           capture_output=True, text=True, env=env, timeout=180)
        if check is not None:
            assert r.returncode == check, (r.returncode, r.stdout, r.stderr)
        return r
    return go


def test_explicit_site_lacking_a_need_is_refused_unless_forced(run, tmp_path):
    script = tmp_path / "md.sh"
    # the load's failure is not tolerated (`|| echo` would make it unchecked): a need
    script.write_text("#!/bin/bash\n#SBATCH -t 2\nmodule load gromacs/2023\n"
                      "command -v gmx >/dev/null || echo no-gromacs\n")
    r = run("submit", "--site", "alpha", "--arch", "aarch64", str(script), check=2)
    assert r.stdout == "" and r.stderr.count("\n") == 1
    assert r.stderr.startswith("diamond: site alpha cannot run this job: ")
    assert "software 'gromacs/2023' not installed" in r.stderr
    assert "architecture mismatch: job needs aarch64, site has x86_64" in r.stderr
    assert "--force" in r.stderr
    job = json.loads(run("submit", "--site", "alpha", "--arch", "aarch64", "--force",
                         str(script), "--json").stdout)
    assert job["site"] == "alpha"
    done = json.loads(run("wait", job["id"], "--json", "--timeout", "120").stdout)
    assert done["state"] == "COMPLETED"
    assert run("logs", job["id"]).stdout.strip() == "no-gromacs"  # it really was not there


def test_auto_with_no_feasible_site_lists_every_site(run, tb, tmp_path):
    script = tmp_path / "power.sh"
    script.write_text("#!/bin/bash\n#SBATCH -C arch=ppc64le\nmodule load cuda/12\nhostname\n")
    ranked = {s.name for s in tb.config.sites if s.auto}  # a second door is not ranked
    sites = [s["name"] for s in json.loads(run("sites", "--offline", "--json").stdout)
             if s["name"] in ranked]
    r = run("submit", str(script), check=2)
    assert r.stderr.startswith("diamond: no site can run this job: ")
    for site in sites:
        assert f"{site}: " in r.stderr
    assert r.stderr.count("architecture mismatch: job needs ppc64le") == len(sites) >= 3
    assert "software 'cuda/12' not installed" in r.stderr  # alpha and beta lack it


def test_auto_places_by_script_needs_and_renames_modules(run, tmp_path):
    script = tmp_path / "gmx.sh"
    script.write_text("#!/bin/bash\n#SBATCH -t 2\nmodule load gromacs/2023\ngromacs-version\n")
    r = run("submit", str(script), "--json")
    job = json.loads(r.stdout)
    assert job["site"] == "beta"
    assert "diamond: rewrote: body line 1: module gromacs/2023 -> GROMACS/2023.3-foss-2023a " \
           "(as beta names it)" in r.stderr
    done = json.loads(run("wait", job["id"], "--json", "--timeout", "120").stdout)
    assert done["state"] == "COMPLETED", run("logs", job["id"], check=None)
    assert run("logs", job["id"]).stdout.strip() == "gromacs 2023.3 beta"
