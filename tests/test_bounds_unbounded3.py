"""Three values that had no bound: the stage entries of a job, a site's
`transport.max_sessions`, and what a slurmrestd `token_command` prints. Each is refused past
its bound with an error naming the field and the bound; below it, nothing changes.

No test bed: models, the sites file loader and the token command run here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from diamond_jupyter.config import MAX_SSH_SESSIONS, TransportConfig, load_config
from diamond_jupyter.model import MAX_STAGE_ENTRIES, BadInput, JobSpec, SiteError
from diamond_jupyter.transports.slurmrestd import MAX_TOKEN_FILE_BYTES, SlurmRestTransport

# -- stage entries ------------------------------------------------------------------------------


def _entries(n: int) -> list[dict[str, str]]:
    return [{"source": f"alpha:in/{i}.dat", "destination": f"{i}.dat"} for i in range(n)]


@pytest.mark.parametrize("field", ["stage_in", "stage_out"])
def test_a_job_staging_more_entries_than_the_bound_is_refused_naming_the_field(field):
    """A spec (a REST body, a tool call, a workflow step) with 200,000 stage entries was
    taken: as many transfer records, each a copy. Refused past the bound, saying what to do
    instead; at the bound it is taken as before."""
    ok = JobSpec.model_validate({"script": "echo hi", field: _entries(MAX_STAGE_ENTRIES)})
    assert len(getattr(ok, field)) == MAX_STAGE_ENTRIES
    with pytest.raises(BadInput) as e:
        JobSpec.model_validate({"script": "echo hi", field: _entries(MAX_STAGE_ENTRIES + 1)})
    assert str(e.value).startswith(f"{field}: {MAX_STAGE_ENTRIES + 1} entries, more than "
                                   f"the {MAX_STAGE_ENTRIES} a job may stage; stage a "
                                   "directory (recursive: true) or an archive")


async def test_the_agents_submit_gets_the_same_refusal(tmp_path):
    from test_lease_fencing import _fed, _fed_sites

    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _fed(_fed_sites(tmp_path))
    await fed.start(recover=False)
    try:
        with pytest.raises(BadInput, match=r"stage_in: 1001 entries, more than the 1000"):
            await run_skill(SkillContext(fed), "submit", {
                "spec": {"script": "echo hi", "stage_in": _entries(1001)}, "site": "alpha"})
        assert fed.jobs() == []
    finally:
        await fed.close()


# -- transport.max_sessions ---------------------------------------------------------------------

def _sites(tmp_path: Path, sessions: int) -> Path:
    p = tmp_path / "sites.yaml"
    p.write_text("sites:\n  - name: alpha\n    scheduler: slurm\n    transport: {kind: ssh, "
                 f"host: login.example.org, max_sessions: {sessions}}}\n")
    p.chmod(0o600)
    return p


def test_max_sessions_past_its_bound_is_refused_naming_the_field_and_bound(tmp_path):
    """`max_sessions: 100000` was taken: the SSH transport let that many commands (each a
    channel and a thread) run at once on one connection. sshd's own default is 10."""
    cfg = load_config(_sites(tmp_path, MAX_SSH_SESSIONS))
    assert cfg.sites[0].transport.max_sessions == MAX_SSH_SESSIONS
    with pytest.raises(BadInput) as e:
        load_config(_sites(tmp_path, 100000))
    said = str(e.value)
    assert "site 'alpha'" in said and "transport.max_sessions" in said
    assert f"less than or equal to {MAX_SSH_SESSIONS}" in said


# -- a slurmrestd token command's output --------------------------------------------------------

def _transport(tmp_path: Path, code: str) -> SlurmRestTransport:
    cfg = TransportConfig(kind="slurmrestd", url="http://127.0.0.1:9", user="u",
                          token_command=[sys.executable, "-c", code])
    return SlurmRestTransport(cfg, "r")


@pytest.mark.parametrize("stream,code", [
    ("stdout", "import sys; [sys.stdout.write('y ' * 4096) for _ in iter(int, 1)]"),  # no end
    ("stdout", "print('SLURM_JWT=' + 'a' * 200000)"),
    ("stderr", "import sys; [sys.stderr.write('warning ' * 4096) for _ in iter(int, 1)]"),
])
async def test_a_token_command_printing_more_than_a_token_is_ended(tmp_path, stream, code):
    """A token command that printed without end (a wrapper gone wrong) was read whole: the
    engine's memory grew until the machine ran out, and nothing answered meanwhile. Its
    output is read up to the token file's bound, then the command is ended: a site error
    naming the command, the field, the stream and the bound (not the 30 s timeout's
    "could not run")."""
    t = _transport(tmp_path, code)
    with pytest.raises(SiteError) as e:
        await t.token()
    assert str(e.value) == (f"r: the token command {sys.executable} (transport.token_command) "
                            f"printed more than {MAX_TOKEN_FILE_BYTES} bytes on {stream}, "
                            "more than a token: ended, nothing read from it")


async def test_a_token_command_within_the_bound_still_gives_its_token(tmp_path):
    token = "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDB9.c2ln"
    t = _transport(tmp_path, f"import sys; sys.stderr.write('note ' * 1000); "
                             f"print('SLURM_JWT={token}')")
    assert await t.token() == token
