"""The kernel face: the `%diamond` magics, job handles and cards, and the engine they call
(the user's Jupyter server over REST, or the Federation in-process)."""
