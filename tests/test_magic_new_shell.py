"""The extension loaded into a new IPython shell binds its magics to that shell and to the
environment it is loaded in, not to a shell that is gone (found when a test left the
extension loaded in a cleared shell and the next test's fetch spoke to the old store)."""

from IPython.core.interactiveshell import InteractiveShell

from diamond_jupyter.kernel import magics


def test_a_new_shell_gets_magics_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("DIAMOND_NO_WIDGETS", "1")
    first = InteractiveShell.instance()
    try:
        first.run_line_magic("load_ext", "diamond_jupyter")
        old = magics._magics
        assert old is not None and old.shell is first
    finally:
        InteractiveShell.clear_instance()  # left loaded, as a careless caller would
    second = InteractiveShell.instance()
    try:
        second.run_line_magic("load_ext", "diamond_jupyter")
        assert magics._magics is not old and magics._magics.shell is second
    finally:
        second.run_line_magic("unload_ext", "diamond_jupyter")
        InteractiveShell.clear_instance()
    assert magics._magics is None
