"""verify_grad over the table of differentiable ops (tests/gradient/cases.py), in float64."""
from __future__ import annotations

import pytest

from arignote.gradient import verify_grad
from tests.gradient.cases import CASES


def _id(case) -> str:
    shapes = "_".join("x".join(map(str, s)) or "0d" for _, s in case.inputs)
    return f"{case.name}-{shapes}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_verify_grad(case):
    verify_grad(case.fn, case.point(), n_tests=1)
