"""A secret the user holds in the environment (a Globus or slurmrestd token, an LLM key) never
shows where a site's error quotes it: not in the store (`redact`), and not on any face. The
CLI and the magics printed such an error as the site wrote it, token and all, while REST and
the store already showed ***; every face now shows errors through `Federation.error_said`.
The values' pattern is built once for each set of them: one changed, added or removed is seen
by the next string redacted."""

from __future__ import annotations

import json

import pytest
import sweep_helpers
from sweep_helpers import mcp_refusal, sbatch_calls

from diamond_jupyter.federation import Federation
from diamond_jupyter.model import BadInput, SiteError
from diamond_jupyter.store import codec, redact, redact_environment

user, shell = sweep_helpers.FACES_FIXTURES[:2]

TOKEN = "AgV8xq2Pz0Jm7bWkLr4nYt9sHc3dEf6gUi1oKa5vNw8yZe2Ql"
OTHER = "Rk4pW9zT2mQx7LbN3vYc8HsJd"


# ---- the values held, as they change -------------------------------------------------------

def test_a_secret_changed_in_the_environment_is_redacted_at_its_new_value(monkeypatch):
    monkeypatch.setenv("GLOBUS_ACCESS_TOKEN", TOKEN)
    assert redact(f"refused {TOKEN}") == "refused ***"
    monkeypatch.setenv("GLOBUS_ACCESS_TOKEN", OTHER)
    # the old value is no secret of this process any more: shown; the new one is not
    assert redact_environment(f"refused {OTHER}, was {TOKEN}") == f"refused ***, was {TOKEN}"


def test_a_renewed_site_token_leaves_the_previous_one_redacted_too(monkeypatch):
    """slurmrestd's token renewed while a request that carried the old one is in flight: an
    error quoting the old token is still stored and shown as *** (before: only the newest
    was held). A site keeps its last two; a third renewal lets the first go."""
    monkeypatch.setattr(codec, "_SITE_TOKENS", {})
    third = "Zx8cV7bN6mL5kJ4hG3fD2sA1qW9eR8tY"
    codec.hold_site_token("rest-a", TOKEN)
    codec.hold_site_token("rest-a", OTHER)
    codec.hold_site_token("rest-b", third)
    assert redact(f"refused {TOKEN} and {OTHER} on a, {third} on b") == \
        "refused *** and *** on a, *** on b"
    codec.hold_site_token("rest-a", third)
    assert redact(f"{OTHER} {third}") == "*** ***"
    assert redact(f"refused {TOKEN}") == f"refused {TOKEN}"


def test_a_secret_named_variable_that_takes_another_ones_place_is_redacted(monkeypatch):
    """One variable gone and a secret-named one come between two strings redacted: the
    environment holds as many names as before, and the new one's value still goes."""
    monkeypatch.setenv("H2_PLAIN_SETTING", "nothing secret here")
    assert redact_environment(f"x {OTHER}") == f"x {OTHER}"
    monkeypatch.delenv("H2_PLAIN_SETTING")
    monkeypatch.setenv("H2_SITE_API_KEY", OTHER)
    assert redact_environment(f"x {OTHER}") == "x ***"
    monkeypatch.delenv("H2_SITE_API_KEY")
    assert redact_environment(f"x {OTHER}") == f"x {OTHER}"


def test_a_string_redacted_before_a_secret_was_set_is_redacted_again_after(monkeypatch):
    """Each string's redaction is kept (issue 17: a workflow's steps store the same strings a
    thousand times), with the environment's secrets as they were: a secret set, changed or
    given by a sites file after a string was kept is still redacted in it."""
    from diamond_jupyter.store import codec

    monkeypatch.delenv("H2_FANOUT_TOKEN", raising=False)
    said = {"reason": f"queue says {OTHER}", "tags": [f"from {TOKEN}"]}
    assert redact(said) == said
    assert redact(said) == said  # kept: the same answer
    monkeypatch.setenv("H2_FANOUT_TOKEN", OTHER)
    assert redact(said) == {"reason": "queue says ***", "tags": [f"from {TOKEN}"]}
    monkeypatch.setattr(codec, "_GIVEN_SECRETS", ())
    codec.hold_secret_values({"SLURM_JWT": TOKEN})  # a site's `env:`, given later
    assert redact(said) == {"reason": "queue says ***", "tags": ["from ***"]}
    monkeypatch.delenv("H2_FANOUT_TOKEN")
    assert redact(said)["reason"] == f"queue says {OTHER}"


def test_a_long_string_is_redacted_as_a_short_one(monkeypatch):
    """Strings past the kept length (a script) are redacted afresh, alike."""
    from diamond_jupyter.store import codec

    monkeypatch.setenv("H2_FANOUT_TOKEN", OTHER)
    long = "echo x\n" * (codec.REDACTED_KEPT_CHARS // 7) + f"export PASSWORD=hunter2 {OTHER}"
    assert len(long) > codec.REDACTED_KEPT_CHARS
    assert redact(long).endswith("export PASSWORD=*** ***")


def test_a_short_or_file_naming_value_is_not_taken_for_a_secret(monkeypatch):
    monkeypatch.setenv("DB_PASS", "x")
    monkeypatch.setenv("GLOBUS_TOKEN_FILE", "/home/me/.globus/token.json")
    said = "x: /home/me/.globus/token.json"
    assert redact_environment(said) == said


def test_bad_input_keeps_the_users_own_words_but_not_a_held_secret(monkeypatch):
    """What the user sent is theirs to see (REST's rule, now every face's); a site's words
    are shown as the store keeps them."""
    monkeypatch.setenv("GLOBUS_ACCESS_TOKEN", TOKEN)
    refused = BadInput(f"script line 2: API_TOKEN=abc123 refused by {TOKEN}")
    assert Federation.error_said(refused) == "script line 2: API_TOKEN=abc123 refused by ***"
    failed = SiteError(f"sbatch: API_TOKEN=abc123 refused by {TOKEN}")
    assert Federation.error_said(failed) == "sbatch: API_TOKEN=*** refused by ***"


# ---- every face -----------------------------------------------------------------------------

def _site_echoing_the_token(user, prog: str) -> None:
    """The user's fake Slurm site's `prog` fails, quoting $GLOBUS_ACCESS_TOKEN."""
    (user.fake / prog).unlink()
    (user.fake / prog).write_text(f'#!/bin/sh\necho "{prog} $*" >> {user.fake}/calls\n'
                                  f'echo "{prog}: error: transfer refused for '
                                  '$GLOBUS_ACCESS_TOKEN" >&2\nexit 1\n')
    (user.fake / prog).chmod(0o755)


@pytest.fixture
def token_held(user, monkeypatch):
    monkeypatch.setenv("GLOBUS_ACCESS_TOKEN", TOKEN)
    return user


def test_cli_a_refused_submit_quoting_a_held_token_shows_it_as_stars(token_held):
    _site_echoing_the_token(token_held, "sbatch")
    res = token_held.run("submit", "--site", "alpha", "--json", "job.sh")
    assert res.returncode in (1, 2), (res.returncode, res.stderr)
    assert "transfer refused for ***" in res.stderr, res.stderr
    assert "transfer refused for ***" in json.loads(res.stdout)["message"], res.stdout
    assert TOKEN not in res.stderr + res.stdout
    assert len(sbatch_calls(token_held)) == 1  # the site was asked, and said it


def test_cli_a_site_error_quoting_a_held_token_shows_it_as_stars(token_held):
    _site_echoing_the_token(token_held, "squeue")
    res = token_held.run("queue", "alpha", code=1)
    assert "refused for ***" in res.stderr, res.stderr
    assert TOKEN not in res.stderr + res.stdout


def test_magic_a_refused_submit_quoting_a_held_token_shows_it_as_stars(token_held, shell,
                                                                      capsys):
    _site_echoing_the_token(token_held, "sbatch")
    assert shell.run_cell_magic("diamond", "submit --site alpha",
                                "#!/bin/bash\necho hi\n") is None
    out, err = capsys.readouterr()
    assert "transfer refused for ***" in err and "Traceback" not in err, err
    assert TOKEN not in out + err
    assert len(sbatch_calls(token_held)) == 1


async def test_mcp_a_refused_submit_quoting_a_held_token_shows_it_as_stars(token_held):
    _site_echoing_the_token(token_held, "sbatch")
    said = await mcp_refusal(token_held, "submit", {"script": "#!/bin/bash\necho hi\n",
                                                    "site": "alpha"})
    assert "transfer refused for ***" in said and TOKEN not in said, said
