"""`python -m diamond_jupyter.hub up [--json] [--batch SITE] | down [--json]` (scripts/hub.sh)."""

from __future__ import annotations

import argparse
import json
import sys

from ..model import DiamondError
from . import deploy


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="hub.sh", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="start the hub with users alice and bob (their servers too)")
    u.add_argument("--json", action="store_true")
    u.add_argument("--batch", metavar="SITE", default=None,
                   help="spawn each single-user server as a Slurm job on this test-bed site")
    u.add_argument("--partition", default=None, help="the batch job's partition")
    d = sub.add_parser("down", help="stop everything `up` started")
    d.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "up":
            info = deploy.up(batch_site=args.batch, partition=args.partition)
            if args.json:
                print(json.dumps(info))
            else:
                print(f"hub: {info['url']} ({info['mode']})")
                for x in info["users"]:
                    print(f"  {x['name']}: password {x['password']}  token {x['token']}")
        else:
            info = deploy.down()
            print(json.dumps(info) if args.json else
                  "hub: stopped " + (", ".join(info["stopped"]) or "nothing (not running)"))
    except DiamondError as e:
        print(f"hub.sh: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
