"""The click commands, one module each (``ghstate.cli`` wires them): options and output over the
services, nothing more. A command may import ``ghstate.services``, ``ghstate.agents`` and everything
below them; the services, the agents and the domain packages never import a command.
"""
