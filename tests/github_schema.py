"""GitHub's published GraphQL schema, as a judge of every GraphQL document ghstate sends.

The schema is the npm package ``@octokit/graphql-schema`` 15.26.1 (``schema.graphql``, MIT, GitHub), kept
gzipped with its licence in ``tests/fixtures/github-graphql/`` so that the tests need no network. To
refresh it: ``npm pack @octokit/graphql-schema@VERSION``, then ``gzip -9 -n`` its ``package/schema.graphql``
over the file here.

graphql-core refuses GitHub's SDL as it is (a few fields are defined twice, and a deprecation rule on
interface implementations is broken), so the schema is built with ``assume_valid_sdl`` and its own
validation errors are cleared once: what is judged is our documents, not GitHub's schema.
"""

from __future__ import annotations

import functools
import gzip
from pathlib import Path

from graphql import GraphQLSchema, build_ast_schema, parse, validate

SCHEMA_FILE = Path(__file__).parent / "fixtures" / "github-graphql" / "schema.graphql.gz"
SCHEMA_VERSION = "15.26.1"


@functools.cache
def github_schema() -> GraphQLSchema:
    sdl = gzip.decompress(SCHEMA_FILE.read_bytes()).decode("utf-8")
    schema = build_ast_schema(parse(sdl), assume_valid_sdl=True)
    schema._validation_errors = []  # GitHub's own schema breaks a rule graphql-core checks first
    return schema


def problems(document: str) -> list[str]:
    """What GitHub's schema says is wrong with ``document`` (empty when it is valid)."""
    return [error.message for error in validate(github_schema(), parse(document))]
