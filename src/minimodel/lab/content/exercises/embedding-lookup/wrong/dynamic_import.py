"""Forbidden even when the import is built at run time (caught by the runtime tripwire)."""


def embed(ids, E):
    lib = __import__("mini" + "model")
    return lib and E[ids]
