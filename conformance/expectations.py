"""The expectations ledger: known failures (xfail) and deliberate skips, declared in TOML, kept honest.

    [[expect]]
    match  = "*/q4s-packed*/*"     # a vector id, an alias, or a glob over aliases
    kind   = "xfail"               # or "skip" (not run at all)
    reason = "ties are rounded to even"
    link   = "https://github.com/me/my-backend/issues/12"   # optional
    failure   = "mismatch"          # optional pins (xfail only): the failure kind expected,
    error     = "range.empty_flex"  #   the backend's error code,
    diagnosis = "mutant ties-even"  #   a diagnosis candidate that must explain the failure

Entries that match no vector of the suite, and xfails that pass, are stale; ``--qc-strict`` fails on them
(a CI ratchet: fixing a bug forces removing its entry). An xfail entry with pins covers only the failure it
describes: a vector that fails in another way (a crash where a mismatch was expected, another error code,
another diagnosis) stays *failed*, so a new bug is not hidden behind an old entry.
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .compare import FAILURE_KINDS

KINDS = ("xfail", "skip")
PINS = ("failure", "error", "diagnosis")  # optional, xfail entries only
_KEYS = {"match", "kind", "reason", "link", *PINS}


class ExpectationsError(ValueError):
    pass


@dataclass(frozen=True)
class Entry:
    match: str
    kind: str
    reason: str
    link: str = ""
    index: int = 0  # position in the file, for messages
    failure: str = ""    # pinned failure kind (compare.FAILURE_KINDS); "" pins nothing
    error: str = ""      # pinned error code the backend answers with
    diagnosis: str = ""  # pinned diagnosis candidate ("mutant ties-even", or just "ties-even")

    def matches(self, vector) -> bool:
        return self.match in (vector.id, vector.alias) or fnmatch.fnmatchcase(vector.alias, self.match)

    def unlike(self, verdict) -> str | None:
        """How a failed verdict differs from the failure this entry pins, or None if it is the one expected."""
        problems = []
        if self.failure and verdict.kind != self.failure:
            problems.append(f"failure {verdict.kind!r}, not {self.failure!r}")
        if self.error:
            code = (verdict.details.get("actual_error") or {}).get("code")
            if code != self.error:
                problems.append(f"error code {code!r}, not {self.error!r}")
        if self.diagnosis:
            found = (verdict.diagnosis or {}).get("matches", [])
            if not any(self.diagnosis in (name, name.partition(" ")[2]) for name in found):
                problems.append(f"diagnosis {', '.join(found) or 'none'}, not {self.diagnosis!r}")
        return "; ".join(problems) or None

    def describe(self) -> str:
        link = f" ({self.link})" if self.link else ""
        return f"{self.kind} {self.match!r}: {self.reason}{link}"


class Expectations:
    def __init__(self, entries: list[Entry], path: str = ""):
        self.entries, self.path = entries, path

    @classmethod
    def empty(cls) -> Expectations:
        return cls([])

    @classmethod
    def load(cls, path: str | Path) -> Expectations:
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text())
        except OSError as e:
            raise ExpectationsError(f"{path}: cannot read: {e.strerror}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ExpectationsError(f"{path}: not valid TOML: {e}") from None
        unknown = set(data) - {"expect"}
        if unknown:
            raise ExpectationsError(f"{path}: unknown tables {sorted(unknown)}; entries go in [[expect]]")
        entries = []
        for i, raw in enumerate(data.get("expect", [])):
            where = f"{path}: [[expect]] #{i + 1}"
            if not isinstance(raw, dict) or set(raw) - _KEYS:
                raise ExpectationsError(f"{where}: unknown keys {sorted(set(raw) - _KEYS)}")
            if raw.get("kind") not in KINDS:
                raise ExpectationsError(f"{where}: kind must be one of {KINDS}, got {raw.get('kind')!r}")
            for key in ("match", "reason", *(k for k in PINS if k in raw)):
                if not isinstance(raw.get(key), str) or not raw[key].strip():
                    raise ExpectationsError(f"{where}: {key!r} must be a non-empty string")
            pins = {k: raw[k] for k in PINS if k in raw}
            if pins and raw["kind"] != "xfail":
                raise ExpectationsError(f"{where}: {sorted(pins)} pin a failure: only an xfail entry has one")
            if raw.get("failure", FAILURE_KINDS[0]) not in FAILURE_KINDS:
                raise ExpectationsError(f"{where}: failure must be one of {FAILURE_KINDS}, got {raw['failure']!r}")
            entries.append(Entry(raw["match"], raw["kind"], raw["reason"], str(raw.get("link", "")), i + 1, **pins))
        return cls(entries, str(path))

    def lookup(self, vector) -> Entry | None:
        """The first entry (in file order) that matches the vector."""
        return next((e for e in self.entries if e.matches(vector)), None)

    def unmatched(self, vectors) -> list[Entry]:
        """Entries that match no vector of the whole suite (independent of -k/-m selection)."""
        return [e for e in self.entries if not any(e.matches(v) for v in vectors)]
