"""GitHub: the transport (the only module that imports PyGithub), the GraphQL documents ghstate sends,
the store of checkpoint issues with their write log in the body's edit history (``history``), and the
Projects (v2) board (``projects`` decides, pure; ``project_sync`` asks). It may import ``ghstate.core``,
``ghstate.store``, ``ghstate.config`` and ``ghstate.errors``; never the local store.
"""
