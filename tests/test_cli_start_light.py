"""Starting the `diamond` command line imports only what parsing its arguments needs: the
engine (Federation, the store, the transports, the agent) and the heavy libraries under it
are imported by the command that uses them, so `diamond --help` or a mistyped option answers
without paying for them (benchmarks/cli_start.py measures the time)."""

from __future__ import annotations

import json
import subprocess
import sys

# imported by a command that reaches a site, the store or the agent, never by the start
HEAVY = ("diamond_jupyter.federation", "diamond_jupyter.store", "diamond_jupyter.agent",
         "diamond_jupyter.transports", "diamond_jupyter.transfer", "diamond_jupyter.dialects",
         "diamond_jupyter.config", "diamond_jupyter.discovery", "diamond_jupyter.federation_plan",
         "diamond_jupyter.job_dependencies", "paramiko", "tornado", "jupyter_server",
         "anthropic", "globus_sdk", "yaml", "numpy", "matplotlib", "hypothesis")


def _imported_after(code: str) -> list[str]:
    """The names in sys.modules of a fresh interpreter after running `code`."""
    done = subprocess.run([sys.executable, "-c", code + "\nimport json, sys\n"
                           "print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def _heavy(names: list[str]) -> list[str]:
    return [n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY)]


def test_importing_the_cli_leaves_the_engine_and_heavy_libraries_unimported() -> None:
    assert _heavy(_imported_after("import diamond_jupyter.cli")) == []


def test_building_the_parser_for_help_leaves_them_unimported() -> None:
    # `diamond place --help` builds every subcommand's parser, then exits
    code = ("import contextlib, io, sys\nfrom diamond_jupyter.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), "
            "contextlib.suppress(SystemExit):\n    main(['place', '--help'])")
    assert _heavy(_imported_after(code)) == []


def test_a_command_reaching_the_engine_still_imports_it() -> None:
    # the check above could pass by never looking: here the same probe sees the engine
    names = _imported_after("import diamond_jupyter.federation")
    assert "diamond_jupyter.federation" in names and "diamond_jupyter.store" in names
