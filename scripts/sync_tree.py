"""Mirror a source tree into a cache directory by content: ``sync_tree.py SRC DEST``.

Why: cargo decides whether a path package is stale from file mtimes. A fresh clone gives every file a new mtime (and
may live at a new path), so building from the clone rebuilds the burn harness every time even when nothing changed.
Building from a copy where only files whose bytes changed are rewritten keeps a warm cache warm. Files that left
SRC are removed from DEST; build outputs and VCS metadata are not copied.
"""

import os
import shutil
import sys
from pathlib import Path

SKIP = {".git", "target", "__pycache__"}


def wanted(src: Path) -> dict[Path, Path]:
    files = {}
    for root, dirs, names in os.walk(src):
        dirs[:] = [d for d in dirs if d not in SKIP]
        for name in names:
            path = Path(root) / name
            files[path.relative_to(src)] = path
    return files


def sync(src: Path, dest: Path) -> int:
    files = wanted(src)
    changed = 0
    for rel, path in files.items():
        target = dest / rel
        data = path.read_bytes()
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        shutil.copymode(path, target)
        changed += 1
    if dest.is_dir():
        for rel in wanted(dest):
            if rel not in files:
                (dest / rel).unlink()
                changed += 1
    return changed


if __name__ == "__main__":
    src, dest = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    print(f"sync_tree: {sync(src, dest)} file(s) of {src} updated in {dest}")
