"""Subcommands of the ``minimodel`` CLI, one module each (see :mod:`minimodel.cli`)."""
