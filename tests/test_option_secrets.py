"""Secrets given as command options in a job script (`curl -u me:PASS`, `sshpass -p PASS`,
`mysql -pPASS`, `wget --http-password PASS`) reached the store as written: only `NAME=value`
assignments, URLs and known key shapes were redacted. The same options' ordinary uses (a
port, a user alone, a variable) are kept, and the redactor stays linear on crafted lines."""

from __future__ import annotations

import time

import pytest

from diamond_jupyter.model import JobSpec
from diamond_jupyter.store import Store, redact

PW = "Qv7mZ2xK9p"


@pytest.mark.parametrize("text,want", [
    (f"curl -u me:{PW} https://x.org", "curl -u me:*** https://x.org"),
    (f"curl -s --user me:{PW} https://x.org", "curl -s --user me:*** https://x.org"),
    (f"curl --user=me:{PW} https://x.org", "curl --user=me:*** https://x.org"),
    (f"curl -ume:{PW} https://x.org", "curl -ume:*** https://x.org"),
    (f"curl -u 'me:{PW}' https://x.org", "curl -u 'me:***' https://x.org"),
    (f"curl --proxy-user me:{PW} -x p https://x", "curl --proxy-user me:*** -x p https://x"),
    (f"/usr/bin/curl -s \\\n  -u me:{PW} \\\n  https://x", "/usr/bin/curl -s \\\n  -u me:*** "
     "\\\n  https://x"),
    (f"sshpass -p {PW} ssh -p 2222 login", "sshpass -p *** ssh -p 2222 login"),
    (f"sshpass -p{PW} scp a b:", "sshpass -p*** scp a b:"),
    (f"mysql -u root -p{PW} db", "mysql -u root -p*** db"),
    (f"mysqldump -p{PW} db > d.sql", "mysqldump -p*** db > d.sql"),
    (f"mysql --password={PW} db", "mysql --password=*** db"),
    (f"psql postgresql://u:{PW}@h/db", "psql postgresql://u:***@h/db"),
    (f"wget --password={PW} https://x", "wget --password=*** https://x"),
    (f"wget --http-password {PW} https://x", "wget --http-password *** https://x"),
    (f"wget --http-password={PW} https://x", "wget --http-password=*** https://x"),
    (f"wget --ftp-password '{PW}' ftp://x", "wget --ftp-password *** ftp://x"),
    (f"sshpass -p {PW} mysql -p{PW} db", "sshpass -p *** mysql -p*** db"),
])
def test_a_password_given_as_an_option_is_redacted(text, want):
    assert redact(text) == want


@pytest.mark.parametrize("text", [
    "ssh -p 8080 login", "mysql -P 3306 -u root -p db", "curl -u $USER:$TOKEN https://x",
    'curl -u "$CREDS" https://x', 'curl -u me:"$PW" https://x', "curl -u me https://x",
    "docker run -u 1000:1000 img", "sort -u f; python -u run.py", "sshpass -f pw.txt ssh -p 22 h",
    "sshpass -e ssh -p 22 h", "mysql -p$DB_PW db", "scp -P 2222 a h:", "git push -u origin main",
    "wget --user me https://x", "curlish -u me:x", "my-curl -u me:x",
    "curl https://x.org/a-u/me:x", "mysql db/x-pfoo",
])
def test_ordinary_options_and_variables_are_kept(text):
    assert redact(text) == text


def test_an_option_password_in_a_script_never_reaches_the_stores_files(tmp_path):
    store = Store(tmp_path / "s.sqlite3")
    script = (f"#!/bin/bash\ncurl -u me:{PW} https://x\nsshpass -p {PW}x ssh h true\n"
              f"mysql -p{PW}y db\necho done\n")
    job = store.record_intent("alpha", "tok-opt", JobSpec(script=script, name="leaky"))
    shown = store.get_job(job.id).spec.script
    assert PW not in shown and "echo done" in shown and shown.count("***") == 3
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite3*") if p.is_file())
    assert PW.encode() not in raw


M = 1 << 20


@pytest.mark.parametrize("text", [
    "curl -u " * (M // 8), "curl " + "-u " * (M // 3), "curl -u " + " " * M,
    "curl -u me:" + "x" * M, ";" * M, "sshpass " + "-f " * (M // 3), "sshpass -p" + " " * M,
    "mysql " + "-p" * (M // 2), "wget " + "--password " * (M // 11), "curl;" * (M // 5),
    'curl -u "' * (M // 9), "sshpass -p x " * (M // 13), "curl " + "-uuuu" * (M // 5),
])
def test_the_option_redactor_stays_linear_on_a_one_megabyte_line(text):
    t0 = time.thread_time()
    redact(text)
    assert time.thread_time() - t0 < 2.5  # a quadratic scan of 1 MB takes minutes
