"""The fuzzer speaks oracle/vocabulary.py: its word lists are the vocabulary's (in the fuzzer's own draw order,
which every recorded seed depends on), its layout steps are vocabulary layout steps, and a draw order that misses
or invents a word is refused at import."""

from __future__ import annotations

import pytest

from conformance.fuzz import strategies
from oracle import ScaleDtype, vocabulary


def test_the_fuzzer_draws_the_vocabulary_words():
    assert sorted(strategies.VALUES) == sorted(vocabulary.VALUES)
    assert sorted(strategies.SCALE_DTYPES) == sorted(vocabulary.SCALE_DTYPES)
    assert tuple(strategies.FLOATS) == vocabulary.FLOAT_DTYPES
    # burn's scale_size: 4 bytes for F32, 2 for the halves, 1 for the 8-bit scale formats.
    assert strategies.SCALE_BYTES == {"F32": 4, "F16": 2, "BF16": 2, "UE4M3": 1, "UE8M0": 1}
    assert set(strategies.VIEW_STEPS) | set(strategies._QLAYOUT_STEPS) <= set(vocabulary.LAYOUT_STEPS)


def test_the_draw_order_keeps_the_shrinkers_plain_choice_first():
    assert strategies.VALUES[0] == "Q8S" and strategies.SCALE_DTYPES[0] == "F32"
    assert strategies.SCALE_BYTES == {n: ScaleDtype[n].size for n in strategies.SCALE_DTYPES}


def test_a_draw_order_off_the_vocabulary_is_refused():
    with pytest.raises(ValueError, match="not a permutation of the vocabulary"):
        strategies._draw_order(vocabulary.VALUES, "Q8S Q8F")
    with pytest.raises(ValueError, match="not a permutation of the vocabulary"):
        strategies._draw_order(("F32",), "F32 F64")
