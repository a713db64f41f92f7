"""Diagnosis of a failing vector: which alternative of burn's arithmetic explains each wrong output, what the
differences look like, and which known variants reproduce the whole answer.

Three questions, each answered against the backend's own output:

1. **Which alternative explains each wrong output** (``explanations``). The alternatives are every other value of
   every arithmetic profile field and every registered mutant, each as an override of the *judged* profile
   (``hypotheses.py``), plus element models of steps no profile has. Codes are also judged against the backend's
   own scales (``hypotheses.rederive``), so "scales wrong, codes wrong given them" differs from "codes follow
   from the wrong scales" and two independent defects are both named.
2. **What differs** (``classes``, ``differences.py``): signed zeros, NaN encodings, wrap-around, ties with the
   backend's scale, scale steps on the scale dtype's grid.
3. **Which profile or mutant reproduces the whole answer** (``matches``, the question the mutation gate asks),
   each with its *deciding* field(s) relative to the judged profile ("zero_scale: none").

:func:`summarize` aggregates a run; a match that explains only part of the failures, or that the data
contradicts, never leads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np

import oracle
from oracle import ProfileError
from oracle.scheme import QuantScheme

from . import compare, differences, hypotheses
from .backends.oracle import run_oracle
from .mutants import MUTANTS
from .protocol import Error, Fault, Result

# Fields that describe a profile rather than its behaviour: never a deciding field.
_LABELS = ("name", "description", "status", "backend")


@dataclass(frozen=True)
class Candidate:
    name: str          # "profile burn-0.22.0-pre.3/cubecl", "mutant ties-even" or "alternative tie: even"
    description: str
    run: Callable      # (op, params, inputs) -> Result | Error
    profile: object = None   # the Profile it runs
    deciding: str = ""       # its difference from the judged profile ("tie: even"); "" for another profile
    family: str = ""         # the field(s) it changes: its fuzz class
    kind: str = "profile"    # profile | mutant | alternative

    @property
    def key(self):
        """Candidates that run the same behaviour answer the same: each behaviour is run once per vector."""
        key = self.__dict__.get("_key")
        if key is None:
            p = self.profile
            key = self.name if p is None else tuple((f.name, _hashable(getattr(p, f.name))) for f in fields(p)
                                                     if f.name not in _LABELS)
            object.__setattr__(self, "_key", key)
        return key


def overrides(base, other) -> dict:
    """The behaviour fields where ``other`` differs from ``base``."""
    return {f.name: getattr(other, f.name) for f in fields(base)
            if f.name not in _LABELS and getattr(base, f.name) != getattr(other, f.name)}


def _hashable(value):
    """A profile field's value as a key: a mutant's wrong steps by identity (they are step tables and functions)."""
    try:
        hash(value)
    except TypeError:
        return tuple(id(part) for pair in value for part in pair)
    return value


def _mutant_on(mutant, judged):
    """The mutant as a difference from the judged profile (``Mutant.on``), with the overrides that decide it;
    None where it changes nothing there or makes no valid profile."""
    changes = dict(mutant.overrides)
    if not mutant.applies_to(judged):
        return None, changes
    try:
        return mutant.on(judged), changes
    except (ProfileError, TypeError, ValueError):
        return None, changes


def _deciding(changes: dict) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(changes.items()))


def _runner(profile):
    return lambda op, params, inputs: run_oracle(op, params, inputs, profile)


def oracle_candidates(judged_profile: str) -> list[Candidate]:
    """The alternatives (every other value of every arithmetic field, on the judged profile), the mutants on the
    judged profile, then the oracle's other profiles."""
    others = [Candidate(f"profile {name}", p.description, _runner(name), p)
              for name, p in oracle.PROFILES.items() if name != judged_profile]
    judged = oracle.PROFILES.get(judged_profile)
    if judged is None:  # a suite of profiles the oracle does not know: nothing to override
        return others
    out = []
    for alt in hypotheses.overrides_of(judged):
        p = hypotheses.with_overrides(judged, alt.overrides)
        if p is not None:
            out.append(Candidate(f"alternative {alt.deciding}", alt.text, _runner(p), p, alt.deciding, alt.family,
                                 "alternative"))
    for name, m in sorted(MUTANTS.items()):
        p, changes = _mutant_on(m, judged)
        if p is not None:
            out.append(Candidate(f"mutant {name}", m.description, _runner(p), p, _deciding(changes),
                                 "+".join(sorted(changes)), "mutant"))
    return out + others


def _safe_run(c: Candidate, vector):
    try:
        return c.run(vector.op, vector.params, vector.inputs)
    except Exception:  # noqa: BLE001 - a candidate the oracle cannot run explains nothing
        return None


def diagnose_vector(vector, profile: str, outcome, verdict, candidates: list[Candidate]) -> dict:
    empty = {"matches": [], "descriptions": {}, "deciding": {}, "explanations": [], "classes": [], "stages": [],
             "wrong": [], "stage": None}
    if isinstance(outcome, Fault):
        return empty
    if isinstance(outcome, Error) and outcome.code is None:
        outcome = Error(verdict.details.get("actual_error", {}).get("code"), outcome.message)
    exp = vector.expected[profile]
    contract = exp.compare
    judged = oracle.PROFILES.get(profile)  # None for a suite of profiles the oracle does not know
    wrong = _wrong_outputs(verdict, outcome, exp)
    answers, matches = {}, []
    found = _Explanations()
    for c in candidates:
        key = c.key
        if key not in answers:
            answers[key] = _safe_run(c, vector)
        answer = answers[key]
        if answer is not None and _same_answer(answer, outcome, contract, vector):
            matches.append(c)
        if c.kind == "profile":
            continue
        if isinstance(answer, Result):
            against = _other_outputs_wrong(answer, exp, wrong, contract, vector)
            for name, (want, got) in wrong.items():
                found.test(name, c, answer.outputs.get(name), want, got, against=against)
        elif not wrong and matches and matches[-1] is c:
            found.whole(c)  # an error where burn answers (or the reverse): the alternative reproduces it
    rederived = hypotheses.rederive(vector, judged, outcome) if "codes" in wrong and judged else None
    stages = _stages(wrong, rederived)
    follows = rederived is not None and hypotheses.same_bits(rederived.codes, rederived.got)
    own = sorted(n for n in wrong if not (n == "codes" and follows and len(wrong) > 1)) or ["outcome"]
    if rederived is not None and not hypotheses.same_bits(rederived.codes, rederived.got) and \
            set(wrong) & {"scales", "global"}:
        _test_on_backend_scales(found, rederived, candidates)
    if rederived is not None and not hypotheses.same_bits(rederived.codes, rederived.got):
        given = bool(set(wrong) & {"scales", "global"})
        for alt in hypotheses.CODE_MODELS:
            found.test("codes", alt, _model(alt, rederived), rederived.codes, rederived.got, given=given)
    if "scales" in wrong and judged is not None:
        for alt, predicted in hypotheses.scale_models(vector, judged, wrong["scales"][1]):
            found.test("scales", alt, predicted, *wrong["scales"])
    scaled = rederived.scaled if rederived is not None else (exp.stages.scaled if exp.stages else None)
    classes = [cl for name, (want, got) in wrong.items() if name in own
               for cl in differences.classify(name, want, got, vector, scaled if name == "codes" else None)]
    deciding = {c.name: c.deciding or _profile_deciding(c, judged, matches) for c in matches}
    return {"matches": [c.name for c in matches if c.kind != "alternative"],
            "descriptions": {c.name: c.description for c in matches}, "deciding": deciding,
            "explanations": [e for e in found.ranked() if e["output"] in own], "classes": classes, "stages": stages,
            "wrong": own,
            "stage": first_wrong_stage(vector, exp, outcome, verdict, scaled)}


def _same_answer(a, b, contract, vector) -> bool:
    """``compare.same_outcome``, without building a report of the differences for exact outputs (the diagnosis
    asks it of every candidate)."""
    if not (isinstance(a, Result) and isinstance(b, Result)) or any(
            (contract.get(n) or {}).get("kind") == "allclose" for n in a.outputs):
        return compare.same_outcome(a, b, contract, vector)
    if set(a.outputs) != set(b.outputs) or a.values != b.values:
        return compare.same_outcome(a, b, contract, vector) if a.values != b.values else False
    for name, want in a.outputs.items():
        got = b.outputs[name]
        if got.shape != want.shape or got.dtype != want.dtype or differences.differing(want, got).any():
            return False
    return True


def _wrong_outputs(verdict, outcome, exp) -> dict:
    """Output name -> (expected, backend's) for every output that differs element by element."""
    if not isinstance(outcome, Result) or verdict.kind != "mismatch":
        return {}
    out = {}
    for d in verdict.details.get("outputs", []):
        name = d["output"]
        if d.get("problem") == "elements" and name in exp.outputs and name in outcome.outputs:
            out[name] = (exp.outputs[name], outcome.outputs[name])
    return out


def _other_outputs_wrong(answer, exp, wrong, contract, vector) -> int:
    """How many elements of the outputs the backend got right an alternative gets wrong: an alternative that
    explains the codes with scales the backend did not return is contradicted by them."""
    n = 0
    for name, want in exp.outputs.items():
        mine = answer.outputs.get(name)
        if name in wrong or (contract.get(name) or {}).get("kind") == "allclose":
            continue
        if mine is None or mine.shape != want.shape or mine.dtype != want.dtype:
            n += 1
        else:
            n += int(differences.differing(want, mine).sum())
    return n


def _model(alt, rederived):
    try:
        with np.errstate(all="ignore"):
            return alt.model(rederived)
    except Exception:  # noqa: BLE001 - a model that does not apply to this vector explains nothing
        return None


def _test_on_backend_scales(found, r, candidates) -> None:
    """The alternatives on the re-derivation: codes wrong given the backend's own scales."""
    seen = set()
    for c in candidates:
        if c.kind == "profile" or c.key in seen:
            continue
        seen.add(c.key)
        found.test("codes", c, hypotheses.codes_of(r.request, c.profile), r.codes, r.got, given=True)


class _Explanations:
    """The alternatives that reproduce a wrong output on every failing element, one per (output, deciding)."""

    def __init__(self):
        self.found: dict = {}
        self.order = 0

    def test(self, output, alt, predicted, want, got, given: bool = False, against: int = 0) -> None:
        """``against``: elements of other outputs the alternative gets wrong where the backend is right."""
        self.order += 1
        if predicted is None or predicted.shape != got.shape:
            return
        bad = differences.differing(want, got)
        if not bad.any() or differences.differing(predicted[bad], got[bad]).any():
            return
        contradicts = int(differences.differing(predicted[~bad], want[~bad]).sum()) + against
        key = (output, alt.deciding)
        mutant = alt.name.partition(" ")[2] if getattr(alt, "kind", "") == "mutant" else None
        if key in self.found:
            e = self.found[key]
            if mutant and mutant not in e["mutants"]:
                e["mutants"].append(mutant)
            e["contradicts"] = min(e["contradicts"], contradicts)
            return
        own = getattr(alt, "text", None) or getattr(alt, "description", "")
        text = hypotheses.phrase(*alt.deciding.split(": ", 1)) if ", " not in alt.deciding else own
        if text == alt.deciding:
            text = own
        self.found[key] = {"output": output, "deciding": alt.deciding, "family": alt.family, "text": text,
                           "elements": int(bad.sum()), "contradicts": contradicts,
                           "mutants": [mutant] if mutant else [], "given": "the backend's scales" if given else "",
                           "order": self.order}

    def whole(self, c) -> None:
        """``c`` reproduces the whole outcome of a failure that has no differing elements (an error)."""
        self.order += 1
        self.found.setdefault(("outcome", c.deciding), {
            "output": "outcome", "deciding": c.deciding, "family": c.family,
            "text": hypotheses.phrase(*c.deciding.split(": ", 1)) if ", " not in c.deciding else c.description,
            "elements": 1, "contradicts": 0, "mutants": [c.name.partition(" ")[2]] if c.kind == "mutant" else [],
            "given": "", "order": self.order})
        e = self.found[("outcome", c.deciding)]
        if c.kind == "mutant" and c.name.partition(" ")[2] not in e["mutants"]:
            e["mutants"].append(c.name.partition(" ")[2])

    def ranked(self) -> list[dict]:
        return sorted(self.found.values(), key=lambda e: (e["contradicts"] > 0, e["order"]))


def _profile_deciding(c, judged, matches) -> str:
    """The field(s) of a matching profile that explain the answer: those whose single change on the judged
    profile (an alternative, already run) reproduces it too; else every behaviour field in which it differs (at
    most four)."""
    if judged is None or c.profile is None:
        return ""
    diff = overrides(judged, c.profile)
    alone = {m.deciding for m in matches if m.kind == "alternative"}
    deciding = [f"{field}: {value}, {hypotheses.phrase(field, value)}" for field, value in sorted(diff.items())
                if f"{field}: {value}" in alone]
    if deciding:
        return "; ".join(deciding)
    # the arithmetic fields first (they are what a wrong answer shows), then the rest by name
    arithmetic = {name: i for i, name in enumerate(hypotheses.ARITHMETIC)}
    ordered = sorted(diff.items(), key=lambda kv: (arithmetic.get(kv[0], len(arithmetic)), kv[0]))
    return ", ".join(f"{k}: {v}" for k, v in ordered[:4]) + (" ..." if len(diff) > 4 else "")


def _stages(wrong: dict, rederived) -> list[str]:
    """Every wrong stage judged (no counts in the text: equal judgements aggregate across vectors)."""
    out = [f"{name}: wrong" for name in sorted(wrong, key=_stage_index) if name != "codes"]
    if "codes" in wrong:
        if rederived is None:
            out.append("codes: wrong")
        elif hypotheses.same_bits(rederived.codes, rederived.got):
            out.append("codes: follow from the backend's own scales" if len(out) else "codes: wrong")
        else:
            out.append("codes: wrong given the backend's own scales" if out else "codes: wrong (scales are right)")
    return out


# Pipeline order of outputs: the earliest wrong one names the stage (scales are computed before codes).
STAGE_ORDER = ("global", "min", "max", "scales", "rounded", "codes", "bytes", "words", "x", "out")


def _stage_index(name: str) -> int:
    return STAGE_ORDER.index(name) if name in STAGE_ORDER else len(STAGE_ORDER)


def first_wrong_stage(vector, exp, outcome, verdict, scaled=None) -> str | None:
    """``scaled``: ``x/s`` with the backend's own scales where it returned them (else burn's)."""
    if not isinstance(outcome, Result) or verdict.kind != "mismatch":
        return None
    wrong = {d["output"]: d for d in verdict.details.get("outputs", [])}
    first = min(wrong, key=_stage_index)
    got, st = outcome.outputs.get(first), exp.stages
    if first in ("scales", "global") and got is not None:
        for stage, value in (("raw_scales", st.raw_scales), ("normalized_scales", st.normalized_scales),
                             ("rounded_scales", st.rounded_scales), ("effective_scales", st.effective_scales),
                             ("global", st.global_scale)):
            if value is not None and _equal(value, got):
                return f"{first}: equal the '{stage}' intermediate, not the stored scales"
        return f"{first} (scale computation or rounding to the scale dtype)"
    scaled = st.scaled if scaled is None else scaled
    if first == "codes" and got is not None and scaled is not None:
        value = QuantScheme.from_json(vector.params["scheme"]).value if "scheme" in vector.params else None
        return "codes (scales are right): " + _rounding_signature(scaled, exp.outputs["codes"], got, value)
    return first


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    a32, b32 = a.astype(np.float32).reshape(-1), b.astype(np.float32).reshape(-1)
    return a32.shape == b32.shape and compare.diff_tensor("", a32, b32, None, None) is None


def _rounding_signature(scaled: np.ndarray, want: np.ndarray, got: np.ndarray, value=None) -> str:
    """Which class of x/s the wrong codes fall on: NaNs, exact ties (.5 for integer codes, the midpoint of two
    codes where burn encodes a minifloat value as a minifloat), out-of-range values, or other."""
    if scaled.shape != want.shape or got.shape != want.shape:
        return "x/s rounding"
    bad = want != got
    s = scaled.astype(np.float64)[bad]
    # no counts in the text: equal signatures must aggregate across vectors
    if bad.any() and np.isnan(s).all():
        return "every differing element is a NaN of x/s (the NaN rule)"
    if value is not None and hypotheses.is_minifloat_encoding(scaled, want, value):
        ties = hypotheses.minifloat_midpoints(scaled[bad], value)[0]
        grid = f"{value.name} grid"
        if ties.all():
            return f"every differing element of x/s is exactly halfway between two codes of the {grid} (tie-breaking rule)"
        if ties.any():
            return f"some differing elements of x/s are exactly halfway between two codes of the {grid}, others not"
        return f"no differing element of x/s is halfway between two codes of the {grid} (rounding or clamping)"
    with np.errstate(invalid="ignore"):
        ties = np.abs(s - np.trunc(s)) == 0.5
    if ties.all():
        return "every differing element is an exact .5 tie of x/s (tie-breaking rule)"
    if ties.any():
        return "some differing elements are exact .5 ties of x/s, others not"
    return "no differing element is an exact tie of x/s (rounding or clamping)"


# ---- a run's summary ----------------------------------------------------------------------------------------


def summarize(verdicts) -> list[dict]:
    """Across failing verdicts, best first: the explanations (an alternative per wrong output), the data classes,
    the whole-answer matches (profiles and mutants, with their deciding fields), the stages. Complete ones
    (every failure where their output is wrong, no contradiction) before partial ones."""
    diagnosed = [v for v in verdicts if v.diagnosis is not None]
    if not diagnosed:
        return []
    total = len(diagnosed)
    wrong_in = Counter(o for v in diagnosed for o in v.diagnosis.get("wrong", []))
    out = _explanations(diagnosed, wrong_in) + _classes(diagnosed, wrong_in)
    counts = Counter(m for v in diagnosed for m in v.diagnosis["matches"])
    desc = {k: d for v in diagnosed for k, d in v.diagnosis.get("descriptions", {}).items()}
    decide = {k: d for v in diagnosed for k, d in v.diagnosis.get("deciding", {}).items()}
    judged = diagnosed[0].profile
    for c, n in sorted(counts.items(), key=lambda item: (-item[1], rank(item[0], judged), item[0])):
        out.append({"kind": "match", "candidate": c, "description": desc.get(c, ""), "deciding": decide.get(c, ""),
                    "explains": n, "of": total})
    stages = Counter("; ".join(v.diagnosis["stages"]) for v in diagnosed if v.diagnosis.get("stages"))
    out += [{"kind": "stages", "stages": s, "vectors": n, "of": total} for s, n in stages.most_common(3)]
    firsts = Counter(v.diagnosis["stage"] for v in diagnosed if v.diagnosis.get("stage"))
    out += [{"kind": "stage", "stage": s, "vectors": n, "of": total} for s, n in firsts.most_common(5)]
    return sorted(out, key=_lead)


def _lead(e: dict) -> tuple:
    """Complete explanations first, then complete whole-answer matches and data classes, then the partial ones."""
    complete = e.get("explains", e.get("vectors", 0)) == e.get("of") and not e.get("contradicted")
    tier = {"explanation": 0, "match": 1, "class": 2, "stages": 3, "stage": 4}[e["kind"]]
    return (not complete and tier < 3, tier, -e.get("explains", e.get("vectors", 0)))


def _explanations(diagnosed, wrong_in) -> list[dict]:
    agg: dict = {}
    for v in diagnosed:
        for e in v.diagnosis.get("explanations", []):
            a = agg.setdefault((e["output"], e["deciding"]), {"kind": "explanation", "deciding": e["deciding"], "text": e["text"],
                                               "family": e["family"], "outputs": set(), "vectors": set(),
                                               "elements": 0, "contradicted": 0, "mutants": [], "given": set()})
            a["outputs"].add(e["output"])
            a["vectors"].add(v.id)
            a["elements"] += e["elements"]
            a["contradicted"] += e["contradicts"] > 0
            a["mutants"] += [m for m in e["mutants"] if m not in a["mutants"]]
            if e.get("given"):
                a["given"].add(e["output"])
    merged: dict = {}
    for (output, deciding), a in agg.items():
        of = sum(1 for v in diagnosed if output in v.diagnosis.get("wrong", []))
        e = {**a, "vectors": len(a["vectors"]), "explains": len(a["vectors"]), "of": of, "given": sorted(a["given"])}
        twin = merged.get((deciding, e["explains"], of, e["contradicted"]))
        if twin is None:  # one line per alternative where it explains its outputs equally ("scales, codes: ...")
            merged[deciding, e["explains"], of, e["contradicted"]] = {**e, "outputs": [output]}
        else:
            twin["outputs"].append(output)
            twin["elements"] += e["elements"]
            twin["given"] = sorted(set(twin["given"]) | set(e["given"]))
    out = [{**e, "outputs": sorted(e["outputs"], key=_stage_index)} for e in merged.values()]
    return sorted(out, key=lambda a: (a["contradicted"] > 0, -a["explains"] / max(a["of"], 1), -a["explains"]))


def _classes(diagnosed, wrong_in) -> list[dict]:
    agg: dict = {}
    for v in diagnosed:
        for c in v.diagnosis.get("classes", []):
            a = agg.setdefault(c["text"], {"kind": "class", "class": c["class"], "text": c["text"], "vectors": 0,
                                           "elements": 0, "output": c["text"].split(":", 1)[0]})
            a["vectors"] += 1
            a["elements"] += c["elements"]
    return [{**a, "explains": a["vectors"], "of": wrong_in.get(a["output"], 0)} for a in
            sorted(agg.values(), key=lambda a: -a["vectors"])]


def leading(diagnosis: dict) -> str:
    """The cause of one failure as a class (no counts, no values): per wrong output, the family of its leading
    explanation ("codes: tie-breaking rule"), else its first data class; "" when neither names it."""
    parts = {}
    for e in diagnosis.get("explanations", []):
        parts.setdefault(e["output"], hypotheses.FAMILIES.get(e["family"], e["family"]))
    for c in diagnosis.get("classes", []):
        output, _, text = c["text"].partition(": ")
        if c["class"] not in ("not-ties", "some-ties") and output in diagnosis.get("wrong", []):
            parts.setdefault(output, text)
    by_cause: dict = {}
    for output in sorted(parts, key=_stage_index):
        by_cause.setdefault(parts[output], []).append(output)
    return "; ".join(f"{', '.join(outputs)}: {cause}" for cause, outputs in by_cause.items())


def rank(candidate: str, judged: str) -> int:
    """How specific a whole-answer match is (lower first): a mutant, a difference from the judged profile, names
    the rule (0); another profile names a whole backend (1)."""
    return 0 if candidate.partition(" ")[0] == "mutant" else 1


def describe(summary: list[dict], partial: int = 3) -> list[str]:
    """Human lines, best first: "codes: ties rounded to even (tie: even) on 49/49 failing vectors, 392 elements",
    "matches mutant ties-even: ties rounded to even instead of away from zero on 49/49 failing vectors" (every
    complete line, then the best ``partial`` partial ones of each kind)."""
    lines, left = [], Counter()
    for s in summary:
        kind = _kind(s)
        if kind is None:
            continue
        complete = s.get("explains", s.get("vectors")) == s.get("of") and not s.get("contradicted")
        if not complete and kind in ("explanation", "class", "match"):
            if left[kind] >= partial:
                continue
            left[kind] += 1
        lines.append(_line(kind, s, complete))
    return lines


_KINDS = (("match", "candidate"), ("explanation", "deciding"), ("class", "class"), ("stages", "stages"),
          ("stage", "stage"))


def _kind(s: dict) -> str | None:
    """An entry's kind; from its keys for a report that predates kinds (or whose fields are not to be trusted)."""
    if s.get("kind") in {k for k, _ in _KINDS}:
        return s["kind"]
    return next((kind for kind, key in _KINDS if key in s), None)


def _line(kind: str, s: dict, complete: bool) -> str:
    if kind == "explanation":
        named = ""  # a mutant with the same overrides has its own "matches mutant" line
        given = ", given the backend's own scales," if s.get("given") else ""
        against = f", contradicted by burn's output on {s['contradicted']}" if s["contradicted"] else ""
        return (f"{', '.join(s['outputs'])}: {s['text']} ({s['deciding']}{named}){given} on {s['explains']}/{s['of']} "
                f"failing vectors, {s['elements']} elements{against}")
    if kind == "class":
        return f"{s['text']} on {s['vectors']}/{s['of']} failing vectors, {s['elements']} elements"
    if kind == "match":
        verb = "matches" if complete else "partly matches"
        # a mutant is its description; another profile is named by its deciding field(s), not its description
        profile = s["candidate"].startswith("profile ") and s.get("deciding")
        why = f" ({s['deciding']})" if profile else f": {s['description']}" if s.get("description") else ""
        return f"{verb} {s['candidate']}{why} on {s['explains']}/{s['of']} failing vectors"
    if kind == "stages":
        return f"stages on {s['vectors']}/{s['of']}: {s['stages']}"
    return f"first wrong stage on {s['vectors']}/{s['of']}: {s['stage']}"
