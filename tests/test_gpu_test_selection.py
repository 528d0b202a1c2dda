"""The GPU tests' module fixtures run only the configurations a `-k` filter kept (tests.gpu.jobs.selected_values), so
checking a session's new configurations on the device does not compile and run all 88."""

from __future__ import annotations

from types import SimpleNamespace

from tests.gpu.jobs import selected_values

EVERY = ["v9-a", "v9-b", "v9-c"]


def _request(module: object, *items: SimpleNamespace) -> SimpleNamespace:
    return SimpleNamespace(module=module, session=SimpleNamespace(items=list(items)))


def _item(module: object, **params: str) -> SimpleNamespace:
    return SimpleNamespace(module=module, callspec=SimpleNamespace(params=params))


def test_only_the_selected_configurations_in_the_fixtures_order() -> None:
    mine, other = object(), object()
    request = _request(
        mine, _item(mine, config_id="v9-c"), _item(other, config_id="v9-b"), _item(mine, config_id="v9-a")
    )
    assert selected_values(request, "config_id", EVERY) == ["v9-a", "v9-c"]


def test_a_selected_test_without_the_parameter_needs_every_configuration() -> None:
    mine = object()
    unparametrized = SimpleNamespace(module=mine)
    request = _request(mine, _item(mine, config_id="v9-b"), unparametrized)
    assert selected_values(request, "config_id", EVERY) == EVERY
