"""The table of harness builds (adapters/burn/releases.toml), read for build.sh, the docs and the tests.

Standard library only (tomllib, Python >= 3.11), so build.sh needs no virtualenv.

    python3 scripts/releases.py plan [NAME...] [--extras FEATURES]   # one line per cargo build, for build.sh
    python3 scripts/releases.py names [--ci] [--feature F] [--without-feature F]  # build names (burn-gpu.sh, make burn-all)
    python3 scripts/releases.py doc                                  # the binaries table of docs/burn-harness.md
    python3 scripts/releases.py ci-fuzz BINARY                       # fuzz cases CI draws through BINARY
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "adapters" / "burn" / "releases.toml"
FIELDS = ("build", "aliases", "release", "manifest", "target", "features", "binaries", "profiles", "ci", "lean",
          "ci_fuzz")


@dataclass(frozen=True)
class Row:
    """One ``cargo build`` of the harness (the field meanings are in releases.toml's header)."""

    build: str
    aliases: tuple[str, ...]
    release: str
    manifest: str
    target: str
    features: tuple[str, ...]
    binaries: tuple[str, ...]
    profiles: tuple[str, ...]
    ci: bool
    lean: bool
    ci_fuzz: int

    def names(self) -> tuple[str, ...]:
        return (self.build, *self.aliases)


def _row(i: int, raw: dict) -> Row:
    where = f"{TABLE.name} row {i + 1} ({raw.get('build', '?')})"
    missing = [f for f in FIELDS if f not in raw]
    unknown = sorted(set(raw) - set(FIELDS))
    if missing or unknown:
        raise ValueError(f"{where}: missing fields {missing}, unknown fields {unknown}")
    if len(raw["binaries"]) != len(raw["profiles"]):
        raise ValueError(f"{where}: {len(raw['binaries'])} binaries but {len(raw['profiles'])} profiles "
                         "(one claimed profile per binary)")
    return Row(**{f: tuple(raw[f]) if isinstance(raw[f], list) else raw[f] for f in FIELDS})


def rows(path: Path = TABLE) -> list[Row]:
    """Every row of the table, in its order (build.sh builds them in this order)."""
    with open(path, "rb") as f:
        return [_row(i, raw) for i, raw in enumerate(tomllib.load(f)["row"])]


def select(names: list[str], table: list[Row]) -> list[Row]:
    """The rows build.sh builds for ``names`` (the ``ci`` rows when none is given), in the order given."""
    if not names:
        return [r for r in table if r.ci]
    known = [n for r in table for n in r.names()]
    unknown = [n for n in names if n not in known]
    if unknown:
        builds = " | ".join(dict.fromkeys(r.build for r in table))
        raise ValueError(f"unknown build {', '.join(map(repr, unknown))} (known: {builds})")
    return [r for n in names for r in table if n in r.names()]


def names(table: list[Row], *, ci: bool = False, feature: str | None = None, without: str | None = None) -> list[str]:
    """The build names of the rows built in CI (``ci``) and/or with ``feature`` and/or not with ``without``, each once,
    in table order."""
    chosen = [r for r in table if (r.ci or not ci) and (feature is None or feature in r.features)
              and (without is None or without not in r.features)]
    return list(dict.fromkeys(r.build for r in chosen))


def ci_fuzz(binary: str, table: list[Row]) -> int:
    """The fuzz cases burn-conformance.sh draws through ``binary`` (its file name) after the suite."""
    for row in table:
        if binary in row.binaries:
            return row.ci_fuzz
    raise ValueError(f"no row builds {binary!r}")


def plan_line(row: Row, extras: str = "") -> str:
    """``TARGET|MANIFEST|FEATURES|BIN BIN...`` for one cargo build (``|``, not a tab: bash's ``read`` merges
    adjacent tabs, which would lose an empty FEATURES). ``extras`` (BURN_FEATURES) reaches
    only lean rows, which then build into their own ``-defaults`` target dir so the lean one stays warm."""
    features = list(row.features)
    target = row.target
    if extras and row.lean:
        features += [f for f in extras.split(",") if f]
        target += "-defaults"
    return "|".join([target, row.manifest, ",".join(features), " ".join(row.binaries)])


def doc_table(table: list[Row]) -> str:
    """The binaries table of docs/burn-harness.md."""
    lines = ["| binary | burn crates (exact `=` pins) | manifest, features | `profile` it claims | built |",
             "|---|---|---|---|---|"]
    for row in table:
        features = f" `--features {','.join(row.features)}`" if row.features else ""
        built = "CI" if row.ci else ("not in CI (`scripts/gpu-check.sh`)" if "cuda" in row.features
                                     else "not in CI (`make burn-all`)")
        for binary, profile in zip(row.binaries, row.profiles):
            lines.append(f"| `{binary}` | {row.release} | `{row.manifest}`{features} | `{profile}` | {built} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser("plan", help="one line per cargo build, for build.sh")
    plan.add_argument("names", nargs="*")
    plan.add_argument("--extras", default="", help="BURN_FEATURES: extra features for the lean (CPU) rows")
    listing = sub.add_parser("names", help="build names, one per line")
    listing.add_argument("--ci", action="store_true", help="only builds CI runs")
    listing.add_argument("--feature", help="only builds with this cargo feature (wgpu, vulkan, cuda)")
    listing.add_argument("--without-feature", help="only builds without this cargo feature (cuda: what runs here)")
    sub.add_parser("doc", help="the binaries table of docs/burn-harness.md")
    fuzz = sub.add_parser("ci-fuzz", help="fuzz cases CI draws through a binary")
    fuzz.add_argument("binary", help="the binary's file name")
    args = parser.parse_args(argv)
    table = rows()
    if args.command == "doc":
        print(doc_table(table))
        return 0
    if args.command == "names":
        print("\n".join(names(table, ci=args.ci, feature=args.feature, without=args.without_feature)))
        return 0
    if args.command == "ci-fuzz":
        try:
            print(ci_fuzz(args.binary, table))
        except ValueError as e:
            print(f"releases.py: {e}", file=sys.stderr)
            return 2
        return 0
    try:
        chosen = select(args.names, table)
    except ValueError as e:
        print(f"build.sh: {e}", file=sys.stderr)
        return 2
    for row in chosen:
        print(plan_line(row, args.extras))
    return 0


if __name__ == "__main__":
    sys.exit(main())
