"""A text is searched for secret assignments, options and key shapes only where it holds a
secret-looking name or a key shape's start (issue 17: a fan-out's thousand job scripts each
name their `secret` file, and each was scanned whole by every pattern). Each shortcut gives
what the whole scan gives, on the corpus of real batch scripts and on texts made of the
pieces every pattern looks for, and stays linear on crafted runs."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from test_corpus import CORPUS

from diamond_jupyter.store import codec

# the pieces each pattern looks for, and what stops it
PIECES = ["token", "TOKEN", "secret", "Pass", "pwd", "api-key", "API_KEY", "private_key",
          "AccessKey", "credential", "Authorization", "cookie", "jwt", "MAX_TOKENS", "x",
          "db", "-", "--", "_", "=", ":", " ", "\t", "\n", "\\\n", "'", '"', "setenv ",
          "setenv", "curl", "wget", "sshpass", "mysql", "mariadb-dump", "-u", "-p", "me:pw",
          "--password", "--token-file", "$TOKEN", "42", ";", "|", "&", "/", ".", "sk-",
          "ghp_", "github_pat_", "glpat-", "xoxb-", "AKIA", "hf_", "AIza", "eyJ", "é", "K",
          "0123456789abcdefghij0123456789ABCDEFGHIJ", "Bearer ", "://u:", "@h"]
WHOLE = {"assignments": (codec._redact_assignments, codec._redact_assignments_scanned),
         "spaced options": (codec._redact_spaced, codec._redact_spaced_scanned)}


def _made(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))


def _scanned_text(text: str) -> str:
    """`_redacted_text` with every pattern run over the whole text."""
    value = codec._redact_pem(text)
    value = codec._redact_spaced_scanned(codec._redact_assignments_scanned(value))
    value = _options_scanned(value)
    value = codec._URL_PASSWORD.sub(lambda m: m.group(1) + codec.REDACTED, value)
    return codec._SECRET_VALUE.sub(codec.REDACTED, value)


def _options_scanned(text: str) -> str:
    """`_redact_options` as it was before its shortcut: a command word looked for."""
    out, last, pos = [], 0, 0
    while (start := codec._OPTION_COMMAND.search(text, pos)) is not None:
        end = codec._SEGMENT_END.search(text, start.end())
        stop = end.start() if end is not None else len(text)
        piece = codec._redact_options(text[start.start():stop])
        out += [text[last:start.start()], piece]
        last = pos = stop
    return "".join(out) + text[last:] if out else text


@pytest.mark.parametrize("what", WHOLE)
def test_a_shortcut_gives_what_the_whole_scan_gives_on_made_texts(what: str) -> None:
    quick, whole = WHOLE[what]
    rng = random.Random(17)
    changed = 0
    for _ in range(20000):
        text = _made(rng)
        assert quick(text) == whole(text), text
        changed += whole(text) != text
    assert changed > 200  # the texts made hold secrets to redact, not only harmless ones


def test_the_whole_redaction_is_unchanged_on_made_texts() -> None:
    rng = random.Random(71)
    redacted = 0
    for _ in range(20000):
        text = _made(rng)
        got = codec._redacted_text.__wrapped__(text, None)
        assert got == _scanned_text(text), text
        redacted += got != text
    assert redacted > 2000


def test_the_corpus_scripts_redact_as_the_whole_scan_does() -> None:
    scripts = [p for p in Path(CORPUS).rglob("*") if p.is_file() and p.name != "MANIFEST.tsv"]
    assert len(scripts) > 50
    for path in scripts:
        text = path.read_text(errors="replace")
        assert codec._redacted_text.__wrapped__(text, None) == _scanned_text(text), path


def test_a_job_script_naming_its_secret_file_is_not_scanned_for_assignments() -> None:
    script = ("__dmd_sec=$(cat /w/jobs/ab12/secret 2>/dev/null)\n./run --steps 4 x=1\n")
    assert not codec._may_assign_secret(script) and not codec._may_give_secret_option(script)
    assert codec._may_assign_secret(script + "export API_TOKEN=abc\n")
    assert codec._may_give_secret_option(script + "./tool --password pw\n")
    assert codec._may_give_secret_option("setenv \t GITHUB_TOKEN abc")


@pytest.mark.parametrize("crafted", ["token" * 200_000, "a" * 500_000 + "secret" * 50_000,
                                     ("x-token " * 100_000), "-" * 300_000 + "pass"])
def test_the_shortcuts_stay_linear_on_crafted_runs(crafted: str) -> None:
    began = time.process_time()
    codec._redact_assignments(crafted)
    codec._redact_spaced(crafted)
    assert time.process_time() - began < 10  # quadratic here would take hours
