"""``prod``, ``prod_dim``, ``cumsum`` and ``cumprod`` on dequantized values (oracle/float_ops.py): hand-worked
answers, and the inputs whose answer depends on the order burn leaves to the backend (declared undefined)."""

from __future__ import annotations

import numpy as np
import pytest

from oracle.errors import UndefinedBehaviour
from oracle.float_ops import check_product_exact, compute
from oracle.profiles import get_profile

PROFILE = get_profile("burn-0.22.1/ndarray")  # the same on every backend, but for neg's NaN sign


def bits(a) -> list[int]:
    return np.asarray(a, np.float32).view(np.uint32).ravel().tolist()


def test_hand_worked_products_and_scans():
    x = np.float32([[2, -3, 0.5], [1.5, 4, -0.25]])
    assert compute(x, {"op": "prod"}, PROFILE).tolist() == [2 * -3 * 0.5 * 1.5 * 4 * -0.25]  # 4.5
    assert compute(x, {"op": "prod_dim", "dim": 1}, PROFILE).tolist() == [[-3.0], [-1.5]]
    assert compute(x, {"op": "prod_dim", "dim": 0}, PROFILE).tolist() == [[3.0, -12.0, -0.125]]
    assert compute(x, {"op": "cumprod", "dim": 1}, PROFILE).tolist() == [[2, -6, -3], [1.5, 6, -1.5]]
    assert compute(x, {"op": "cumsum", "dim": 1}, PROFILE).tolist() == [[2, -1, -0.5], [1.5, 5.5, 5.25]]
    assert compute(x, {"op": "cumsum", "dim": 0}, PROFILE).tolist() == [[2, -3, 0.5], [3.5, 1, 0.25]]


def test_a_zero_factor_gives_the_zero_of_the_signs_parity():
    assert bits(compute(np.float32([-1.0, 0.0, 3.0]), {"op": "prod"}, PROFILE)) == [0x80000000]
    assert bits(compute(np.float32([-1.0, 0.0, -3.0]), {"op": "prod"}, PROFILE)) == [0x00000000]


@pytest.mark.parametrize("factors, why", [
    ([1.1, 3.3, 7.7], "the exact product needs more than 24 significand bits: it rounds"),
    ([2.0**100, 2.0**100, 2.0**-100], "the product 2^100 fits, but 2^100 * 2^100 first overflows"),
    ([2.0**-100, 2.0**-30], "the product is below f32's normal range"),
    ([1e30, 1e30, 0.0], "inf times 0 in one order, 0 in another"),
    ([np.inf, 2.0], "an inf factor"),
])
def test_a_product_some_order_rounds_is_undefined(factors, why):
    with pytest.raises(UndefinedBehaviour):
        check_product_exact(np.float32(factors), 0)


def test_an_exact_product_is_defined_in_every_order():
    check_product_exact(np.float32([3, 5, 7, 2.0**-20, 2.0**40, 0.5]), 0)  # odd parts 105 < 2^24
    check_product_exact(np.float32([4095, 4095]), 0)  # 4095^2 < 2^24: exact
    with pytest.raises(UndefinedBehaviour):
        check_product_exact(np.float32([4097, 4097]), 0)  # 16,785,409 > 2^24


def test_a_scan_whose_first_term_is_negative_zero_is_undefined():
    with pytest.raises(UndefinedBehaviour):
        compute(np.float32([[-0.0, 1.0]]), {"op": "cumsum", "dim": 1}, PROFILE)
    assert bits(compute(np.float32([[1.0, -0.0]]), {"op": "cumsum", "dim": 1}, PROFILE)) == bits([1.0, 1.0])


def test_argsort_is_the_total_order_and_equal_elements_leave_it_undefined():
    x = np.float32([[0.5, -0.0, 0.0, -2.0]])
    assert compute(x, {"op": "argsort", "dim": 1}, PROFILE).tolist() == [[3, 1, 2, 0]]  # -0.0 before +0.0 (total_cmp)
    assert compute(x, {"op": "argsort", "dim": 1, "descending": True}, PROFILE).tolist() == [[0, 2, 1, 3]]
    assert compute(x, {"op": "argsort", "dim": 0}, PROFILE).tolist() == [[0, 0, 0, 0]]
    with pytest.raises(UndefinedBehaviour):
        compute(np.float32([[1.0, 2.0, 1.0]]), {"op": "argsort", "dim": 1}, PROFILE)


def test_neg_keeps_a_nans_sign_where_burn_multiplies_by_minus_one_and_flips_it_on_flex():
    nan = np.uint32([0xFFC00000]).view(np.float32)  # x86's NaN of 0 * inf
    assert bits(compute(nan, {"op": "neg"}, PROFILE)) == [0xFFC00000]
    assert bits(compute(nan, {"op": "neg"}, get_profile("burn-0.22.1/flex"))) == [0x7FC00000]
    assert bits(compute(np.float32([0.0, -2.5]), {"op": "neg"}, PROFILE)) == bits([-0.0, 2.5])
