"""One assertion shared by the GPU profile tests: the oracle raises burn's panic with this code and exact message."""

import pytest

import oracle as o


def raises(code: str, message: str, fn, *args, **kwargs) -> None:
    with pytest.raises(o.BurnPanic) as err:
        fn(*args, **kwargs)
    assert (err.value.code, err.value.message) == (code, message)


def burn_raises(code: str, burn_text: str, fn, *args, **kwargs) -> None:
    """The oracle's panic has ``code``, and its message matches what burn printed (opaque parts aside)."""
    with pytest.raises(o.BurnPanic) as err:
        fn(*args, **kwargs)
    assert err.value.code == code and o.message_matches(err.value.message, burn_text), err.value.message
