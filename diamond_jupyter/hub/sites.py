"""The hub's sites file, made from the test bed's: every user logs in to each site as
themselves with their own key, and keeps each site's files in their own home."""

from __future__ import annotations

import copy
from typing import Any

USER_KEY = "~/.ssh/id_ed25519"  # expanded per user by the server that reads the file


def hub_sites(testbed_sites: dict[str, Any], *, local_site: str | None = None) -> dict[str, Any]:
    """The test bed's sites file as every hub user's: SSH sites without the test user's
    login and key (the login name and `~/.ssh/id_ed25519` of whoever runs the server), each
    site's workdir under the user's own home. Sites reached through a token of the test
    user's (slurmrestd) are left out. `local_site`: the cluster the single-user server runs
    on (batchspawner), reached with the local transport instead of SSH."""
    out = []
    for entry in testbed_sites.get("sites", []):
        t = entry.get("transport", {})
        if t.get("kind", "ssh") != "ssh":
            continue
        e = copy.deepcopy(entry)
        e["workdir"] = f"~/.diamond/{e['name']}"
        if local_site is not None and e["name"] == local_site:
            e["transport"] = {"kind": "local"}
        else:
            e["transport"] = {k: v for k, v in t.items() if k not in ("user", "key_file")}
            e["transport"]["key_file"] = USER_KEY
        out.append(e)
    return {"sites": out}
