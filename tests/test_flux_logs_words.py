"""`diamond logs` of a flux job whose output file name holds its id in flux's words form
(`--output=o.{{id.words}}.log`) spells the words itself (mnemonicode's list, as flux does);
the emoji form, from flux's own list only, is asked of the site's flux (`flux job id
--to=emoji ID`). A local site with a fake `flux` on PATH; no test bed."""

from __future__ import annotations

import os
import stat

import pytest
from one_site_engine import local_home_federation

from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.model import BadInput, JobSpec, JobState, SiteError

WORDS = "eagle-cockpit-buffalo--condor-cherry-africa"  # JOB_ID in words
JOB_ID = "ƒBq2XsHaw7Z"
EMOJI = "\U0001f600\U0001f680\U0001f34e"  # what a flux answers for the emoji form


def _fake_flux(tmp_path, body: str) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    flux = bin_dir / "flux"
    flux.write_text("#!/bin/sh\n" + body)
    flux.chmod(flux.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "calls").touch()


def _flux_fed(tmp_path):
    """An engine of one local Flux site, `here`, and the home its commands run in."""
    return local_home_federation(tmp_path, scheduler="flux"), tmp_path / "home"


@pytest.fixture
def flux_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")


async def _logs(fed, home, pattern: str) -> dict[str, str]:
    fed.store.record_intent("here", "abc123abc123", JobSpec(
        name="sim", script="true\n", stdout=str(home / pattern), join_output=True,
        source_dialect="flux"))
    job = fed.store.bind_native_id("abc123abc123", JOB_ID)
    fed.store.apply_state(job.id, JobState.RUNNING)  # it writes its log: it has started
    return await fed.logs(job.id)


async def test_a_words_file_name_is_spelled_here_without_asking_flux(tmp_path, flux_path):
    """The words come from mnemonicode's list (flux_ids.flux_words): no `flux job id`."""
    _fake_flux(tmp_path, f'echo "$@" >> {tmp_path / "calls"}\nexit 1\n')
    fed, home = _flux_fed(tmp_path)
    (home / f"o.{WORDS}.log").write_text("the job's output\n")
    try:
        logs = await _logs(fed, home, "o.{{id.words}}.log")
        assert (logs["stdout"], logs["missing"]) == ("the job's output\n", "")
        assert "job id" not in (tmp_path / "calls").read_text()
    finally:
        await fed.close()


async def test_an_emoji_file_name_is_spelled_by_the_sites_flux(tmp_path, flux_path):
    _fake_flux(tmp_path, f'echo "$@" >> {tmp_path / "calls"}\n'
                         f'[ "$1 $2 $3 $4" = "job id --to=emoji {JOB_ID}" ] && '
                         f'echo {EMOJI} && exit 0\nexit 1\n')
    fed, home = _flux_fed(tmp_path)
    (home / f"o.{EMOJI}.log").write_text("the job's output\n")
    try:
        logs = await _logs(fed, home, "o.{{id.emoji}}.log")
        assert (logs["stdout"], logs["missing"]) == ("the job's output\n", "")
        assert (tmp_path / "calls").read_text() == f"job id --to=emoji {JOB_ID}\n"
    finally:
        await fed.close()


async def test_a_flux_that_cannot_spell_it_leaves_the_log_said_missing(tmp_path, flux_path):
    _fake_flux(tmp_path, 'echo "flux-job: unknown option --to" >&2\nexit 1\n')
    fed, home = _flux_fed(tmp_path)
    try:
        logs = await _logs(fed, home, "o.{{id.emoji}}.log")
        assert logs["stdout"] == ""
        assert logs["missing"] == (
            f"stdout log {home}/o.{{{{id.emoji}}}}.log: its name holds the job id in flux's "
            "emoji form, which the site's flux did not spell (flux job id --to=emoji: "
            "flux-job: unknown option --to); `diamond files` lists the job's files")
    finally:
        await fed.close()


def test_the_id_command_is_checked_and_its_answer_too():
    assert FluxCommands().id_argv(JOB_ID, "emoji") == ["flux", "job", "id", "--to=emoji",
                                                       JOB_ID]
    with pytest.raises(BadInput, match="not a job id"):
        FluxCommands().id_argv("x; rm -rf ~", "emoji")
    with pytest.raises(BadInput, match="accepted: emoji"):
        FluxCommands().id_argv(JOB_ID, "words")
    assert FluxCommands().parse_id(EMOJI + "\n", "emoji") == EMOJI
    with pytest.raises(SiteError, match="cannot parse flux job id --to=emoji"):
        FluxCommands().parse_id("../../etc/passwd\n", "emoji")
