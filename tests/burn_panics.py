"""One assertion shared by the GPU profile tests: the oracle raises burn's panic with this code and exact message."""

import pytest

import oracle as o


def raises(code: str, message: str, fn, *args, **kwargs) -> None:
    with pytest.raises(o.BurnPanic) as err:
        fn(*args, **kwargs)
    assert (err.value.code, err.value.message) == (code, message)
