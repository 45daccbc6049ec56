"""What the commands do, apart from how they are asked: the ``App`` a command works with (``app``),
reading a checkpoint through a store (``reader``), writing a revision (``writer``), and one module per
job on top (``checkpoint``, ``resume``, ``inputs``). Each takes an ``App`` and a request value and gives
text or a typed outcome. The CLI (``ghstate.commands``), the MCP server and the hooks call these. It may
import every domain package (``core``, ``git``, ``local``, ``github``, ``ci``) and the top-level
modules below it; nothing here imports click, a command module or ``ghstate.agents``.
"""
