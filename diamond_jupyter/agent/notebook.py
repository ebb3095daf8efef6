"""Placeholder; replaced below."""
def ask(*a, **k): raise NotImplementedError
approve = reject = ask_in_notebook = ask
