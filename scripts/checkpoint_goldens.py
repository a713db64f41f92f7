#!/usr/bin/env python3
"""Record vectors/checkpoints/ from the real burn harness binaries (conformance/checkpoints.py): every save case
saved by each release, every file loaded by every binary. Needs the CPU builds (adapters/burn/build.sh pre3 0.22.1
0.23); `qconform generate --check` then checks the result against the oracle without them.

    python3 scripts/checkpoint_goldens.py BINARY...      # each binary's hello names its profile
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance import checkpoints
from conformance.backends.subprocess import SubprocessBackend


def main(binaries: list[str]) -> int:
    backends = {}
    try:
        for path in binaries:
            backend = SubprocessBackend(path)
            backends[backend.hello.profile] = backend
        missing = set(checkpoints.WRITERS.values()) - set(backends)
        if missing:
            print(f"checkpoint_goldens: no binary claims {sorted(missing)}", file=sys.stderr)
            return 2
        manifest = checkpoints.record(backends)
    finally:
        for backend in backends.values():
            backend.close()
    print(f"wrote {checkpoints.FOLDER}: {len(manifest['files'])} files, {len(manifest['refused'])} refused saves, "
          f"{len(manifest['matrix'])} loads")
    problems = checkpoints.check()
    for line in problems:
        print(f"  oracle disagrees: {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
