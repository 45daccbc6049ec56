"""This machine: the local store (the clone's, ``<git common dir>/ghstate``: checkpoints, their write log,
writes kept for GitHub, the replica of what this machine last saw on GitHub), what agent sessions were given
(``seen``, in the worktree's ``.ghstate/``), the parse cache in the user's cache folder, and probes of the
servers a checkpoint names on loopback. The only writer of those folders. It may import
``ghstate.core``, ``ghstate.store``, ``ghstate.config`` and ``ghstate.errors``; never GitHub's package.
"""
