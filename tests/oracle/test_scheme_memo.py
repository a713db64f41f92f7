"""``QuantScheme.from_json``'s memo (``oracle/scheme.py``, ``memo_key``): two scheme JSONs that differ in any one
field, or only in a value's type, never share an entry, and a JSON object changed after it was parsed is parsed
again. Each answer is checked against the parser itself (``_parse``), which the memo does not touch."""

from __future__ import annotations

import copy

import pytest

from oracle.scheme import QuantScheme, memo_key

BASE = {"value": "Q8S", "store": "Native", "mode": "Symmetric", "tensor": None,
        "block": {"size": [32], "dtype": "F16"}}

# One field changed at a time, in every part the key reads: each is another scheme.
ONE_FIELD = [
    ("value", lambda j: j.update(value="Q4S")),
    ("store word", lambda j: j.update(store={"PackedU32": 0})),
    ("store kind", lambda j: j.update(store={"PackedNative": 0})),
    ("store dim", lambda j: j.update(store={"PackedU32": 1})),
    ("mode", lambda j: j.update(mode="Lookup")),
    ("tensor", lambda j: j.update(tensor="F32")),
    ("block size", lambda j: j["block"].update(size=[16])),
    ("block rank", lambda j: j["block"].update(size=[2, 32])),
    ("block dtype", lambda j: j["block"].update(dtype="F32")),
    ("no block", lambda j: j.update(block=None)),
]


def _changed(change):
    other = copy.deepcopy(BASE)
    change(other)
    return other


@pytest.mark.parametrize("name, change", ONE_FIELD, ids=[n for n, _ in ONE_FIELD])
def test_schemes_differing_in_one_field_never_share_an_entry(name, change):
    other = _changed(change)
    if name == "store dim":  # {"PackedU32": 1}: a PackedU32 scheme parses; compare it with PackedU32(0)
        base = _changed(lambda j: j.update(store={"PackedU32": 0}))
    else:
        base = copy.deepcopy(BASE)
    first, second = QuantScheme.from_json(base), QuantScheme.from_json(other)
    assert memo_key(base) != memo_key(other)
    assert first == QuantScheme._parse(base) and second == QuantScheme._parse(other)
    assert first != second
    # either order: a first parse of one must not answer for the other
    assert QuantScheme.from_json(copy.deepcopy(other)) == second
    assert QuantScheme.from_json(copy.deepcopy(base)) == first


def test_values_of_another_type_are_other_keys():
    """``1 == True`` and ``32 == 32.0`` in Python, yet they are other JSON: never the same entry."""
    packed = _changed(lambda j: j.update(store={"PackedU32": 1}))
    as_bool = _changed(lambda j: j.update(store={"PackedU32": True}))
    assert memo_key(packed) != memo_key(as_bool)
    as_float = _changed(lambda j: j["block"].update(size=[32.0]))
    assert memo_key(BASE) != memo_key(as_float)


def test_a_json_changed_after_its_parse_is_parsed_again():
    data = copy.deepcopy(BASE)
    assert QuantScheme.from_json(data).block.dtype.name == "F16"
    data["block"]["dtype"] = "BF16"  # the same object, another scheme
    assert QuantScheme.from_json(data).block.dtype.name == "BF16"
    data["block"] = None
    assert QuantScheme.from_json(data) == QuantScheme._parse(data)


def test_invalid_json_is_never_answered_from_the_memo():
    QuantScheme.from_json(copy.deepcopy(BASE))
    for bad in (_changed(lambda j: j.update(value="Q9S")), _changed(lambda j: j.pop("mode")),
                _changed(lambda j: j["block"].update(size=[0])), _changed(lambda j: j.update(extra=1))):
        with pytest.raises(ValueError):
            QuantScheme.from_json(bad)
