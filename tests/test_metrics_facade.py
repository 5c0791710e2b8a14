"""`robustlab.metrics` facades resolve to the pure functions of their home modules."""

import pytest

import robustlab.metrics as metrics
from robustlab.metrics import consistency, learnability


def test_every_facade_resolves():
    for name in metrics.__all__:
        assert getattr(metrics, name) is not None


def test_facades_are_the_real_functions():
    assert metrics.log_auc is learnability.log_auc
    assert metrics.cov is consistency.cov
    assert metrics.log_auc(metrics.DEFAULT_P_GRID, [1.0] * 8) == pytest.approx(3.0)


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError):
        metrics.no_such_metric  # noqa: B018
