"""This machine: the local store (``.ghstate/``: checkpoints, their write log, writes kept for GitHub),
what agent sessions were given (``seen``), the parse cache in the user's cache folder, and probes of the
servers a checkpoint names on loopback. The only writer of ``.ghstate/``. It may import
``ghstate.core``, ``ghstate.store``, ``ghstate.config`` and ``ghstate.errors``; never GitHub's package.
"""
