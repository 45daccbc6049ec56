"""CI results: JUnit reports read into test results (``junit``), the per-test ledger and the next
verification decided from a run (``ledger``, ``verdict``, pure), and the Actions runner's files and
annotations (``runner``). It may import ``ghstate.core``, ``ghstate.config`` and ``ghstate.errors``.
"""
