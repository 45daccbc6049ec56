"""parse(render(s)) == s for every valid state; render(parse(body)) keeps every word of body."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from strategies import checkpoints

from ghstate.parse import parse
from ghstate.render import render_body
from ghstate.state_json import from_json, to_json

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.filter_too_much])


@SETTINGS
@given(checkpoints())
def test_parse_of_render_is_identity(cp):
    body = render_body(cp)
    assert parse(body).checkpoint == cp


@SETTINGS
@given(checkpoints())
def test_json_round_trip(cp):
    assert from_json(to_json(cp)) == cp
