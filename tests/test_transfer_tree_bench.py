"""The transfer-tree benchmark runs end to end in a tiny configuration against its own
private sshd (no test bed): the engine before and the engine now copy the same files with
the same checksum, and its files are written."""

from __future__ import annotations

import json


def test_transfer_tree_benchmark(tmp_path, capsys):
    from benchmarks import transfer_tree
    from diamond_jupyter.transfer import sftp

    transfer_tree.main(["--json", "--out", str(tmp_path), "--rtt-ms", "2", "--width", "2",
                        "--depth", "2", "--rounds", "2", "--warmup", "1"])
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert (run["directories"], run["files"], run["rounds"]) == (7, 7, 2)
    for key in ("copy_before_s", "copy_pooled_s", "list_before_s", "list_pooled_s"):
        assert len(run[key]) == 2
    assert run["copy_median_ratio"] > 0 and run["list_median_ratio"] > 0
    assert {p.suffix for p in tmp_path.iterdir()} >= {".json", ".md", ".png"}
    # the engine before is put back: the walk by levels and files at once again
    assert sftp.SftpSide.walk_pooled is not None and sftp.files_at_once.__name__ == \
        "files_at_once"
