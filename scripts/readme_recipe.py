#!/usr/bin/env python3
"""README's "Gate a CI on conformance" recipe, run as written, from a wheel installed outside the checkout.

    python scripts/readme_recipe.py [--keep]

1. builds the wheel of a copy of this checkout's files (what a clone has; pip wheel, build dependencies as
   pinned in pyproject.toml);
2. creates a fresh virtualenv in a temporary directory and runs the README's own commands there, in order:
   its `pip install` (of the built wheel instead of the git URL), `qconform run` with the README's known.toml
   and --strict, `qconform report --html`; then `qconform run --backend oracle`. The user's backend build
   (`cargo build`) is skipped and its binary replaced by examples/subprocess_backend.py; nothing else of a
   command is changed.

The commands and known.toml are read from README.md (``extract``), so the README and this check cannot drift.
Exit status 0 when every command succeeds and the run skipped what known.toml says.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GIT_SPEC = re.compile(r"qconform(\[[\w,]+\])? @ git\+\S+?(?=\")")
USER_BACKEND = "./target/release/my-backend"


def extract(readme: str) -> tuple[str, list[str]]:
    """(known.toml, shell commands) of the README's CI section: the toml block and the workflow's `run:` steps."""
    section = readme.split("## Gate a CI on conformance", 1)[1].split("\n## ", 1)[0]
    toml = re.search(r"```toml\n(.*?)```", section, re.DOTALL).group(1)
    yaml = re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1).splitlines()
    commands, i = [], 0
    while i < len(yaml):
        m = re.match(r"^(\s*)(?:- )?run: ?(.*)$", yaml[i])
        i += 1
        if not m:
            continue
        if m.group(2).strip() in (">", "|"):  # a folded block: the following, more indented lines
            indent, parts = len(m.group(1)), []
            while i < len(yaml) and (len(yaml[i]) - len(yaml[i].lstrip()) > indent):
                parts.append(yaml[i].strip())
                i += 1
            commands.append(" ".join(parts))
        else:
            commands.append(m.group(2).strip())
    return toml, commands


def adapt(command: str, wheel: Path, backend: str) -> str | None:
    """The README command as this check runs it: the built wheel for the git URL, the example backend for the
    user's binary; None for the user's own build step."""
    if command.startswith("cargo "):
        return None
    command = GIT_SPEC.sub(lambda m: f"qconform{m.group(1) or ''} @ {wheel.as_uri()}", command)
    return command.replace(USER_BACKEND, backend)


def copy_checkout(dest: Path) -> Path:
    """The files a clone would have (tracked, plus new files git does not ignore), without build leftovers."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def run(command: str, cwd: Path, env: dict) -> None:
    start = time.monotonic()
    proc = subprocess.run(["bash", "-c", command], check=False, cwd=cwd, env=env, capture_output=True, text=True)
    print(f"$ {command}\n  exit {proc.returncode} in {time.monotonic() - start:.1f} s", flush=True)
    if proc.returncode:
        sys.stdout.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"README recipe failed: {command}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args(argv)
    toml, commands = extract(README.read_text(encoding="utf-8"))
    if not any("pip install" in c for c in commands) or not any("qconform run" in c for c in commands):
        raise SystemExit("README's CI recipe has no pip install / qconform run step")
    work = Path(tempfile.mkdtemp(prefix="qconform-recipe-"))
    try:
        start = time.monotonic()
        source = copy_checkout(work / "src")
        subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q",
                        "--disable-pip-version-check", "-w", str(work / "dist")], check=True)
        wheel = next((work / "dist").glob("qconform-*.whl"))
        print(f"built {wheel.name} in {time.monotonic() - start:.1f} s", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
        project = work / "project"  # the user's repository: known.toml, and the example backend as their binary
        project.mkdir()
        (project / "known.toml").write_text(toml, encoding="utf-8")
        shutil.copy(ROOT / "examples" / "subprocess_backend.py", project / "backend.py")
        bindir = work / "venv" / "bin"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "QCONFORM_VECTORS", "VIRTUAL_ENV")}
        env.update(PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}", PIP_DISABLE_PIP_VERSION_CHECK="1")
        backend = f"{shlex.quote(str(bindir / 'python'))} backend.py"
        for command in commands:
            adapted = adapt(command, wheel, backend)
            if adapted is not None:
                run(adapted, project, env)
        report = json.loads((project / "qconform.json").read_text(encoding="utf-8"))
        suite, total = report["suite"], report["summary"]["total"]
        if Path(suite["path"]).resolve().is_relative_to(ROOT) or "site-packages" not in suite["path"]:
            raise SystemExit(f"the run did not use the installed suite: {suite['path']}")
        if not total.get("skipped") or total.get("failed"):
            raise SystemExit(f"known.toml's skips did not apply, or vectors failed: {total}")
        for out in ("qconform.xml", "qconform.html"):
            if not (project / out).is_file():
                raise SystemExit(f"the recipe did not write {out}")
        run("qconform run --backend oracle", project, env)  # the first report: no suite outside a checkout
        print(f"README recipe OK in {time.monotonic() - start:.1f} s: {total} on {suite['vectors']} vectors "
              f"from {suite['path']}")
        return 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
