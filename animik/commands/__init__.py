"""Plug-in subcommands of the ``animik`` command (see :mod:`animik.cli`)."""
