"""The expectations ledger: known failures (xfail) and deliberate skips, declared in TOML, kept honest.

    [[expect]]
    match  = "*/q4s-packed*/*"     # a vector id, an alias, or a glob over aliases
    kind   = "xfail"               # or "skip" (not run at all)
    reason = "ties are rounded to even"
    link   = "https://github.com/me/my-backend/issues/12"   # optional

Entries that match no vector of the suite, and xfails that pass, are stale; ``--qc-strict`` fails on them
(a CI ratchet: fixing a bug forces removing its entry).
"""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path

KINDS = ("xfail", "skip")
_KEYS = {"match", "kind", "reason", "link"}


class ExpectationsError(ValueError):
    pass


@dataclass(frozen=True)
class Entry:
    match: str
    kind: str
    reason: str
    link: str = ""
    index: int = 0  # position in the file, for messages

    def matches(self, vector) -> bool:
        return self.match in (vector.id, vector.alias) or fnmatch.fnmatchcase(vector.alias, self.match)

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
            for key in ("match", "reason"):
                if not isinstance(raw.get(key), str) or not raw[key].strip():
                    raise ExpectationsError(f"{where}: {key!r} must be a non-empty string")
            entries.append(Entry(raw["match"], raw["kind"], raw["reason"], str(raw.get("link", "")), i + 1))
        return cls(entries, str(path))

    def lookup(self, vector) -> Entry | None:
        """The first entry (in file order) that matches the vector."""
        return next((e for e in self.entries if e.matches(vector)), None)

    def unmatched(self, vectors) -> list[Entry]:
        """Entries that match no vector of the whole suite (independent of -k/-m selection)."""
        return [e for e in self.entries if not any(e.matches(v) for v in vectors)]
