"""The tests are grouped by purpose: oracle/ (the reference against burn's arithmetic and panics), suite/ (the golden
vectors, their generator, coverage, mutation gate and fuzzer), runner/ (running backends against the suite) and
harness/ (the Rust harness and its builds); what spans the house (import graph, vocabulary, docs, the contributing
checklist) stays here. The shared helpers next to this file (burn_panics.py, slow_reference.py) stay importable as
top-level modules from every group."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
