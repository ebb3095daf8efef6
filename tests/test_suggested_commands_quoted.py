"""A command an error message suggests (`ssh-keygen -R`, `chmod 600`, `ssh-keyscan ...`)
names a file whose path may hold spaces or `;`: each word is shell-quoted, so the pasted
command is exactly one command on exactly that file. Where the command is safe to run here
it is run (through bash, as a user pasting it would) and its effect checked, and a
`touch pwned` hidden in the path must not run. The tests marked `fault` failed before this
change (the path went in bare: bash split it, ran `touch pwned`, and changed another file)."""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
from pathlib import Path

import paramiko
import pytest
from agents import silent_site_engine

from diamond_jupyter.cli.main import _interrupted
from diamond_jupyter.config import (
    TransportConfig,
    _not_a_private_key,
    ssh_config_problem,
    ssh_file_problem,
    token_file_problem,
)
from diamond_jupyter.model import BadInput
from diamond_jupyter.transports.ssh_auth import (
    HostKeyError,
    HostKeyVerifier,
    _load_key_or_why,
    load_ssh_config,
    resolve_host,
)

KEY, OTHER = paramiko.ECDSAKey.generate(), paramiko.ECDSAKey.generate()
HOST = "login1.hpc.example.org"
AWKWARD = "my keys; touch pwned"  # a folder name a shell would split and run


@pytest.fixture
def awkward(tmp_path: Path) -> Path:
    """A folder whose name holds a space and `; touch pwned`."""
    folder = tmp_path / AWKWARD
    folder.mkdir()
    return folder


def suggested(message: str, program: str) -> str:
    """The backticked command starting with `program` in `message`."""
    found = re.search(rf"`({re.escape(program)} [^`]*)`", message)
    assert found, message
    return found.group(1)


def paste(command: str, cwd: Path) -> None:
    """Run `command` as a user pasting it into bash would; nothing hidden in it may run."""
    subprocess.run(["bash", "-c", command], cwd=cwd, check=True, capture_output=True,
                   stdin=subprocess.DEVNULL)
    assert not (cwd / "pwned").exists()


def host_spec(tmp_path: Path):
    """The host as ssh_config gives it, reading no known_hosts file but the site's own."""
    config = tmp_path / "ssh_config"
    config.write_text(f"Host hpc\n  HostName {HOST}\n  UserKnownHostsFile none\n"
                      "  GlobalKnownHostsFile none\n")
    return resolve_host(load_ssh_config(str(config)), "hpc")


def test_fault_the_changed_key_advice_removes_the_entry_of_that_file_only(tmp_path, awkward):
    known = awkward / "known_hosts"
    known.write_text(f"{HOST} {OTHER.get_name()} {OTHER.get_base64()}\n"
                     f"other.example.org {OTHER.get_name()} {OTHER.get_base64()}\n")
    with pytest.raises(HostKeyError, match="HAS CHANGED") as e:
        HostKeyVerifier("alpha", str(known), tofu=False).verify(host_spec(tmp_path), KEY)
    command = suggested(str(e.value), "ssh-keygen -R")
    assert shlex.split(command) == ["ssh-keygen", "-R", HOST, "-f", str(known)]
    paste(command, tmp_path)
    assert known.read_text() == f"other.example.org {OTHER.get_name()} {OTHER.get_base64()}\n"


def test_a_bracketed_host_and_port_is_one_word_to_ssh_keygen(tmp_path):
    known = tmp_path / "known_hosts"
    known.write_text(f"[{HOST}]:2222 {OTHER.get_name()} {OTHER.get_base64()}\n")
    config = tmp_path / "ssh_config"
    config.write_text(f"Host hpc\n  HostName {HOST}\n  Port 2222\n  UserKnownHostsFile none\n"
                      "  GlobalKnownHostsFile none\n")
    spec = resolve_host(load_ssh_config(str(config)), "hpc")
    with pytest.raises(HostKeyError, match="HAS CHANGED") as e:
        HostKeyVerifier("alpha", str(known), tofu=False).verify(spec, KEY)
    command = suggested(str(e.value), "ssh-keygen -R")
    assert shlex.split(command)[2] == f"[{HOST}]:2222"
    paste(command, tmp_path)
    assert known.read_text() == ""


def test_fault_the_unknown_host_advice_appends_to_that_file(tmp_path, awkward):
    known = awkward / "known_hosts"
    known.write_text("")
    with pytest.raises(HostKeyError) as e:
        HostKeyVerifier("alpha", str(known), tofu=False).verify(host_spec(tmp_path), KEY)
    words = shlex.split(suggested(str(e.value), "ssh-keyscan"))
    assert words == ["ssh-keyscan", "-p", "22", HOST, ">>", str(known)]  # not run: no host


def private_file(folder: Path, name: str, mode: int, text: str = "k\n") -> Path:
    path = folder / name
    path.write_text(text)
    path.chmod(mode)
    return path


def test_fault_the_sites_files_key_file_advice_makes_that_key_private(tmp_path, awkward):
    key = private_file(awkward, "id_hpc", 0o644)
    problem = ssh_file_problem(TransportConfig(host=HOST, key_file=str(key), use_agent=False,
                                               trust_on_first_use=True))
    assert problem and "can be read by other users" in problem
    paste(suggested(problem, "chmod 600"), tmp_path)
    assert key.stat().st_mode & 0o777 == 0o600


def test_fault_an_identity_files_advice_makes_that_key_private(tmp_path, awkward):
    key = private_file(awkward, "id_hpc", 0o640)
    loaded, why = _load_key_or_why(str(key))
    assert loaded is None and why and "can be read by other users" in why
    paste(suggested(why, "chmod 600"), tmp_path)
    assert key.stat().st_mode & 0o777 == 0o600


def test_fault_the_ssh_config_advice_takes_others_write_from_that_file(tmp_path, awkward):
    config = private_file(awkward, "config", 0o666)
    problem = ssh_config_problem(config)
    assert problem and "can be written by other users" in problem
    paste(suggested(problem, "chmod go-w"), tmp_path)
    assert config.stat().st_mode & 0o777 == 0o644


def test_fault_the_token_file_advice_makes_that_token_private(tmp_path, awkward):
    token = private_file(awkward, "jwt", 0o644)
    problem = token_file_problem(TransportConfig(kind="slurmrestd", token_file=str(token),
                                                 url="https://slurm.campus.edu:6820"))
    assert problem and "can be read by other users" in problem
    paste(suggested(problem, "chmod 600"), tmp_path)
    assert token.stat().st_mode & 0o777 == 0o600


def test_fault_the_putty_advice_names_that_key_as_one_word(awkward):
    key = private_file(awkward, "hpc.ppk", 0o600, "PuTTY-User-Key-File-3: ssh-ed25519\n")
    problem = _not_a_private_key(key)
    assert problem is not None
    assert shlex.split(suggested(problem, "puttygen"))[:3] == [
        "puttygen", str(key), "-O"]  # not run: puttygen is not installed here


@pytest.mark.parametrize("command,follow", [("wait", False), ("logs", True)])
def test_fault_the_interrupted_advice_names_the_job_typed_as_one_word(command, follow):
    typed = "alpha:42; touch pwned"
    said = _interrupted(argparse.Namespace(job=typed, command=command, follow=follow))
    for program in ("diamond cancel", f"diamond {command}"):
        assert shlex.split(suggested(said, program)) == program.split() + [typed], said


async def test_fault_the_workflow_plan_advice_names_the_workflow_as_one_word(tmp_path):
    async with silent_site_engine(tmp_path, "alpha", "slurm") as fed:
        with pytest.raises(BadInput) as e:
            await fed.approve_workflow_shown("wf 1; touch pwned", "not a hash")
    assert shlex.split(suggested(str(e.value), "diamond workflow plan")) == [
        "diamond", "workflow", "plan", "wf 1; touch pwned"]
