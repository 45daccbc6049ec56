"""The checkpoint as data: what a body means, how it is written back, and every pure rule about it.

Model and marker, parse and render, markup and literal text, lint, the JSON state, merging a --file
over a checkpoint, splicing an update into a person's body, incremental edits, the write's intent and
its log entries, provenance, findings, fitting a prompt, the secret scan, the checks a body passes
before it is written, and CI's record as the marker keeps it. No I/O: no files, no environment, no
processes, no network, no template loader. It imports only ``ghstate.errors`` and itself; every other
package may import it.
"""
