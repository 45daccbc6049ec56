"""git: the only caller of the ``git`` program (``gitinfo``), and how the working tree moved since a
checkpoint was written (``drift``, pure). It may import ``ghstate.core`` and ``ghstate.errors``.
"""
