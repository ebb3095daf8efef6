"""The package's own source, parsed in a child process.

CPython 3.11 counts the depth of AST construction once per interpreter, not per thread:
another thread parsing at the same moment (formatting a traceback parses the line it
shows) makes `ast.parse` fail with "AST constructor recursion depth mismatch"
(python/cpython#106905). Servers and pollers other tests leave running may log a traceback
at any time, so the guards that read the package's source parse it where no other thread
runs, once per session.
"""
from __future__ import annotations

import ast
import pickle
import subprocess
import sys
from functools import cache
from pathlib import Path

_PARSE_EACH = (
    "import ast, pickle, sys\n"
    "paths = [p for p in sys.stdin.read().split('\\0') if p]\n"
    "trees = {p: ast.parse(open(p, encoding='utf-8').read(), p) for p in paths}\n"
    "sys.stdout.buffer.write(pickle.dumps(trees))\n")


@cache
def _parsed(paths: tuple[str, ...]) -> dict[str, ast.Module]:
    done = subprocess.run([sys.executable, "-c", _PARSE_EACH], input="\0".join(paths).encode(),
                          capture_output=True, check=False, timeout=300)
    if done.returncode:
        raise AssertionError("parsing the package's source failed:\n"
                             + done.stderr.decode(errors="replace"))
    return pickle.loads(done.stdout)  # noqa: S301 - written just now by our own child


def package_trees(root: Path) -> dict[Path, ast.Module]:
    """Every `.py` file under `root` (node_modules left out) and its parsed tree."""
    paths = tuple(sorted(str(p) for p in root.rglob("*.py") if "node_modules" not in p.parts))
    return {Path(p): tree for p, tree in _parsed(paths).items()}
