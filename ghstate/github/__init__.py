"""GitHub: the transport (the only module that imports PyGithub), the GraphQL documents ghstate sends,
the store of checkpoint issues with their write logs as chains of commits on refs (``store``), child tasks
and claims (``tasks``), the Projects (v2) board (``projects`` decides, pure; ``project_sync`` asks), the
doctor's probes (``probes``) and the repository itself (``repository``: whether it is public, ghstate's
labels and refs removed). It may import ``ghstate.core``, ``ghstate.store``, ``ghstate.config`` and
``ghstate.errors``; never the local store.
"""
