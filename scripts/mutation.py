"""The project's own mutation check (issue 26, `make mutation`; not in CI: it takes a while).

Each entry of MUTATIONS is one small, realistic bug in the project's own code (a file, the original snippet, the
mutated one, why a developer could write it, and the tests that should catch it). The checkout is copied to a
scratch tree under /tmp; each mutation is applied there alone, its targeted pytest selection runs (and
`qconform generate --check` where the golden vectors are the net), the result is recorded as caught or missed,
and the file is restored. The layout mutations run without the golden-file check on purpose: a developer who
regenerates "stale" vectors together with a layout bug must still be stopped by the Python tests.

    python scripts/mutation.py              # baseline of every selection, then every mutation
    python scripts/mutation.py --only 3,7   # some of them (numbers as --list prints them)
    python scripts/mutation.py --list

Results: a table on stdout and out/mutation.json. Exit status 1 when a mutation is missed or the baseline fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = Path(os.environ.get("QCONFORM_MUTATION_DIR", "/tmp/qconform-mutation"))
TIMEOUT = 600

LAYOUT = ["tests/oracle/test_layout_by_hand.py", "tests/oracle/test_layout_vs_slow.py",
          "tests/oracle/test_oracle_layout.py"]
FUZZ = ["tests/suite/test_fuzz_invariants.py"]
GATES = ["tests/runner/test_gates_and_reports.py"]


@dataclass(frozen=True)
class Mutation:
    file: str
    original: str
    mutated: str
    why: str
    tests: tuple[str, ...]
    vectors: bool = False  # also `qconform generate --check`


def m(file, original, mutated, why, tests, vectors=False) -> Mutation:
    return Mutation(file, original, mutated, why, tuple(tests), vectors)


MUTATIONS = [
    # ---- layout: views (oracle/views.py) -----------------------------------------------------------------
    m("oracle/views.py", 'return np.flip(a, tuple(step["axes"]))', 'return np.flip(a, step["axes"][0])',
      "flip written for one axis, the list's first taken", LAYOUT),
    m("oracle/views.py", 'return np.concatenate([a] * step["copies"], axis=step["dim"])',
      'return np.concatenate([a] * step["copies"], axis=-1)', "cat always along the last dim", LAYOUT),
    m("oracle/views.py", "        return np.tile(a, reps)", '        return np.repeat(a, step["times"], axis=step["dim"])',
      "repeat_dim read as numpy's repeat (each element n times) instead of whole copies", LAYOUT),
    m("oracle/views.py", "axes[-2], axes[-1] = axes[-1], axes[-2]", "axes[0], axes[1] = axes[1], axes[0]",
      "transpose swaps the first two dims (right for rank 2 only)", LAYOUT),
    m("oracle/views.py", '        axes = list(step["axes"])', '        axes = [int(a) for a in np.argsort(step["axes"])]',
      "permute applies the inverse permutation (out dim i -> in dim axes[i] read backwards)", LAYOUT),
    m("oracle/views.py", 'return np.take_along_axis(a, idx, axis=step["dim"])',
      'return np.take(a, idx.ravel(), axis=step["dim"]).reshape(idx.shape)',
      "gather as a select of the flat indices (every row reads the same positions)", LAYOUT),
    m("oracle/views.py", "return np.matmul(lhs, rhs).astype(np.float32)",
      "return np.matmul(lhs.astype(np.float32), rhs.astype(np.float32))",
      "the float GEMM accumulates in f32 (rounds every partial sum)", LAYOUT),
    m("oracle/views.py", "        return slice(lo, hi, by)", "        return slice(lo, hi)",
      "slice ignores its (positive) step", LAYOUT),
    m("oracle/views.py", "0 if i < lead or shape[i - lead] != n else strides[i - lead]",
      "0 if i < lead else strides[i - lead]", "expand keeps the stride of a broadcast unit dim", LAYOUT),
    m("oracle/views.py", 'return step["op"] in ("swap_dims", "permute") and axes_of(step, rank) == list(range(rank))',
      'return step["op"] == "swap_dims" and axes_of(step, rank) == list(range(rank))',
      "only swap_dims(d, d) short-circuits; an identity permute reaches the backend", LAYOUT),
    # ---- layout: routes, chains and checks ---------------------------------------------------------------
    m("oracle/routes.py", "scales = scale_grid(held).transpose(axes).ravel()", "scales = scale_grid(held).ravel()",
      "ndarray's q_permute moves the codes but not the scale grid (#5278)", LAYOUT),
    m("oracle/scheme.py", "return self.per_block(BlockSize([dims[a] for a in axes]), self.block.dtype)",
      "return self.per_block(BlockSize(dims), self.block.dtype)", "block dims not permuted with the axes",
      LAYOUT),
    m("oracle/routes.py", '"flip": (move, move), "slice": (move, move), "select": (move, move),',
      '"flip": (move, requantize), "slice": (move, move), "select": (move, move),',
      "ndarray's per-block flip modelled as the trait default (requantize) instead of its q_flip", LAYOUT),
    m("oracle/routes.py", '_CPU_DEFAULTS = {"gather": requantize, "repeat_dim": requantize, "cat": requantize,',
      '_CPU_DEFAULTS = {"gather": requantize, "repeat_dim": requantize, "cat": float_,',
      "q_cat returns the dequantized concatenation instead of requantizing it", LAYOUT),
    m("oracle/routes.py", "        if blocks != held.scales.size:", "        if blocks < held.scales.size:",
      "ndarray's block-count assertion only for too many scales", LAYOUT),
    m("oracle/routes.py", "    p, q = codes.ndim - 1 - store.dim, len(shape) - 1 - store.dim",
      "    p, q = codes.ndim - 1 - store.dim, codes.ndim - 1 - store.dim",
      "q_reshape's word view counts the packed dim in the old rank twice",
      ["tests/oracle/test_gpu_0_23_0_pre_1.py"], vectors=True),
    m("oracle/layout.py", "        fresh = fresh or empty_short_cut(s, x.shape)", "        fresh = False",
      "an empty result burn-tensor answers alone still meets the fused stream's failure",
      ["tests/oracle/test_gpu_0_23_fused_stream.py"], vectors=True),
    m("oracle/layout.py", "    return failed_on_stream(p, profile) or (profile.errored_handles and s[\"op\"] in QUEUED_LAYOUT_OPS",
      "    return failed_on_stream(p, profile) or (False and s[\"op\"] in QUEUED_LAYOUT_OPS",
      "a queued select's requantize asserts panic at the call", ["tests/oracle/test_gpu_0_23_fused_stream.py"],
      vectors=True),
    m("oracle/layout.py", "scheme = qt.scheme if profile.moves_packing_dim else qt.scheme.with_store(NATIVE)",
      "scheme = qt.scheme", "q_from_data keeps a packed store on every backend", LAYOUT, vectors=True),
    m("oracle/layout_checks.py", "len(size.dims) == 1 and bool(shape) and shape[-1] < size.dims[0]",
      "len(size.dims) == 1 and bool(shape) and shape[-1] <= size.dims[0]",
      "cubecl's split-block check off by one", ["tests/oracle/test_gpu_profiles.py", "-k", "reshape"], vectors=True),
    # ---- oracle core ---------------------------------------------------------------------------------------
    m("oracle/scales.py", "return np.where(e == 0, np.float32(0.1), e).astype(np.float32, copy=False)",
      "return np.where(e <= 0, np.float32(0.1), e).astype(np.float32, copy=False)",
      "ndarray's zero guard also replaces negative scales", ["tests/oracle/test_oracle_vs_slow.py"], vectors=True),
    m("oracle/rounding.py", "    return np.trunc(add_signed_almost_half(x.copy()))",
      "    return np.trunc(x + np.copysign(np.float32(0.5), x))",
      "the popular trunc(x + copysign(0.5, x)): wrong at 0.49999997 and odd integers past 2^23",
      ["tests/oracle/test_rust_round.py"], vectors=True),
    # ---- fuzz engine ---------------------------------------------------------------------------------------
    m("conformance/fuzz/engine.py", "        home.count += div.count", "        home.count = max(home.count, div.count)",
      "merged classes keep the larger count instead of the sum", FUZZ),
    m("conformance/fuzz/engine.py", "zip(wanted, outcomes)", "zip(cases, outcomes)",
      "batched replies paired with the cases drawn, not the cases sent", FUZZ),
    m("conformance/fuzz/engine.py", "            if sig == div.signature and", "            if sig is not None and",
      "the shrinker accepts any divergence, not the class it shrinks", FUZZ),
    m("conformance/fuzz/engine.py", "            bits[np.isnan(wide)] = 0x7FC00000", "            bits = bits",
      "the digest hashes NaN payloads the judge ignores", FUZZ),
    m("conformance/fuzz/engine.py", "            bits = wide.view(np.uint32).copy()",
      "            bits = np.abs(wide).view(np.uint32).copy()", "the digest loses the sign of zero", FUZZ),
    m("conformance/fuzz/engine.py", "div.ops[case.op] = div.ops.get(case.op, 0) + 1", "div.ops[case.op] = 1",
      "per-op counts of a class record presence, not counts", FUZZ),
    # ---- adapters ------------------------------------------------------------------------------------------
    m("conformance/protocol.py", '    return struct.pack("<I", len(blob)) + blob',
      '    return struct.pack(">I", len(blob)) + blob', "frame length written big-endian",
      ["tests/runner/test_protocol.py", *GATES]),
    m("conformance/backends/python.py", "            return Declined(e.reason)",
      '            return Fault("crashed", e.reason)', "Unsupported reported as a crash, not a decline",
      ["tests/runner/test_capabilities.py::test_a_declined_vector_is_counted_and_listed_never_failed",
       "tests/runner/test_q8_0_example.py"]),
    # ---- gates ---------------------------------------------------------------------------------------------
    m("conformance/compare.py", "bad &= ~(np.isnan(want) & np.isnan(got))", "bad &= ~(np.isnan(want) | np.isnan(got))",
      "a NaN on one side only passes", ["tests/runner/test_compare.py", *GATES]),
    m("conformance/compare.py", "bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)",
      "bad = ~np.isclose(w, g, rtol=rtol, atol=atol, equal_nan=True)",
      "the tolerance is relative to the backend's value, not burn's", GATES),
    m("conformance/compare.py", 'rtol, atol = contract["rtol"], contract["atol"]',
      'atol, rtol = contract["rtol"], contract["atol"]', "rtol and atol swapped", GATES),
    m("conformance/expectations.py", "        return self.match in (vector.id, vector.alias) or fnmatch.fnmatchcase(vector.alias, self.match)",
      "        return self.match in (vector.id, vector.alias)", "expectation globs no longer match", GATES),
    m("conformance/expectations.py", "        if self.failure and verdict.kind != self.failure:",
      "        if self.failure and verdict.kind == self.failure:", "a pinned failure kind inverted",
      ["tests/runner/test_expectation_pins.py"]),
    m("conformance/diagnose.py", '    return 0 if candidate.partition(" ")[0] == "mutant" else 1', "    return 0",
      "a whole-backend profile ranks as specific as a one-rule mutant", GATES),
    m("conformance/diagnose.py", '    return (not complete and tier < 3, tier, -e.get("explains", e.get("vectors", 0)))',
      '    return (tier, -e.get("explains", e.get("vectors", 0)))',
      "partial explanations before complete matches", GATES),
    # ---- reports -------------------------------------------------------------------------------------------
    m("conformance/report/__init__.py", "    title = escape(statement(report))", "    title = statement(report)",
      "the badge's title is not escaped", GATES),
    m("conformance/report/__init__.py", '(t[XFAILED], f"{t[XFAILED]} xfailed"), ', "",
      "an xfailed vector does not prevent a conformance claim", ["tests/runner/test_statement.py"]),
    m("conformance/report/__init__.py", "    stale = report[\"expectations\"][\"unmatched\"] or report[\"expectations\"][\"xpassed\"]",
      "    stale = report[\"expectations\"][\"unmatched\"]", "a passing xfail is not stale for --strict", GATES),
]


def copy_tree(dest: Path) -> None:
    """The checkout's tracked and untracked-but-not-ignored files (no .venv, no out/)."""
    if dest.exists():
        shutil.rmtree(dest)
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)


def commands(mut: Mutation) -> list[list[str]]:
    py = str(ROOT / ".venv" / "bin" / "python") if (ROOT / ".venv").exists() else sys.executable
    cmds = [[py, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *mut.tests]]
    if mut.vectors:
        cmds.append([py, "-m", "conformance.cli", "generate", "--check"])
    return cmds


def run(cmd: list[str], tree: Path) -> tuple[int | None, str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}  # the scratch tree's packages, never the checkout's
    try:
        p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    return p.returncode, (p.stdout + p.stderr)[-2000:]


def check(mut: Mutation, tree: Path) -> dict:
    path = tree / mut.file
    text = path.read_text()
    if text.count(mut.original) != 1:
        return {"result": "stale", "detail": f"the original snippet occurs {text.count(mut.original)} times"}
    path.write_text(text.replace(mut.original, mut.mutated))
    try:
        for cmd in commands(mut):
            rc, tail = run(cmd, tree)
            if rc is None:
                return {"result": "timeout", "detail": " ".join(cmd[2:4])}
            if rc != 0:
                return {"result": "caught", "by": " ".join(cmd[2:]) if rc == 1 else f"{' '.join(cmd[2:])} (rc {rc})",
                        "detail": tail.strip().splitlines()[-1] if tail.strip() else ""}
        return {"result": "missed"}
    finally:
        path.write_text(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated mutation numbers")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args(argv)
    chosen = list(enumerate(MUTATIONS, 1))
    if args.only:
        keep = {int(n) for n in args.only.split(",")}
        chosen = [(i, mu) for i, mu in chosen if i in keep]
    if args.list:
        for i, mu in chosen:
            print(f"{i:3d} {mu.file}: {mu.why}")
        return 0
    tree = SCRATCH / "tree"
    copy_tree(tree)
    if not args.no_baseline:
        selections = sorted({t for _, mu in chosen for t in mu.tests if t.startswith("tests/") and "::" not in t})
        rc, tail = run(commands(Mutation("", "", "", "baseline", tuple(selections), True))[0], tree)
        print(f"baseline ({len(selections)} test files): rc {rc}", flush=True)
        if rc != 0:
            print(tail)
            return 1
    results, start = [], time.monotonic()
    for i, mu in chosen:
        t0 = time.monotonic()
        r = {"n": i, "file": mu.file, "why": mu.why, **check(mu, tree), "seconds": round(time.monotonic() - t0, 1)}
        results.append(r)
        print(f"{i:3d} {r['result']:7s} {r['seconds']:6.1f}s {mu.file}: {mu.why}", flush=True)
    caught = sum(r["result"] == "caught" for r in results)
    print(f"\ncaught {caught} of {len(results)} mutations in {time.monotonic() - start:.0f} s")
    for r in results:
        if r["result"] != "caught":
            print(f"  NOT CAUGHT ({r['result']}): #{r['n']} {r['file']}: {r['why']}")
    out = ROOT / "out"
    out.mkdir(exist_ok=True)
    (out / "mutation.json").write_text(json.dumps(results, indent=1))
    return 0 if caught == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
