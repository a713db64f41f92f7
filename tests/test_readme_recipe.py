"""The README's CI recipe as scripts/readme_recipe.py reads it (the full install-and-run is `make recipe-check`)."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

from conformance.expectations import Expectations
from conformance.vectors import load_suite

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("readme_recipe", ROOT / "scripts" / "readme_recipe.py")
recipe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(recipe)


def test_the_recipe_is_found_in_the_readme():
    toml, commands = recipe.extract((ROOT / "README.md").read_text(encoding="utf-8"))
    assert tomllib.loads(toml)["expect"]
    assert any(c.startswith("pip install") for c in commands)
    run = next(c for c in commands if c.startswith("qconform run"))
    assert "--expectations known.toml" in run and "--strict" in run and recipe.USER_BACKEND in run
    assert any(c.startswith("qconform report") for c in commands)


def test_every_expectations_example_in_the_docs_matches_vectors(tmp_path):
    """A pasted example must not be stale: with --strict an entry that matches nothing fails the run."""
    suite = load_suite(ROOT / "vectors" / "core")
    toml, _ = recipe.extract((ROOT / "README.md").read_text(encoding="utf-8"))
    runner_doc = (ROOT / "docs" / "runner.md").read_text(encoding="utf-8")
    examples = [toml, runner_doc.split("```toml\n", 1)[1].split("```", 1)[0]]
    for i, text in enumerate(examples):
        path = tmp_path / f"known{i}.toml"
        path.write_text(text, encoding="utf-8")
        for entry in Expectations.load(path).entries:
            assert any(entry.matches(v) for v in suite.vectors), entry.match


def test_adapt_swaps_only_the_install_source_and_the_users_backend(tmp_path):
    wheel = tmp_path / "qconform-0.1.0-py3-none-any.whl"
    cmd = 'pip install "qconform[report] @ git+https://github.com/<org>/qconform"'
    assert recipe.adapt(cmd, wheel, "python b.py") == f'pip install "qconform[report] @ {wheel.as_uri()}"'
    assert recipe.adapt("cargo build --release", wheel, "x") is None
    run = 'qconform run --backend "subprocess:./target/release/my-backend" --strict'
    assert recipe.adapt(run, wheel, "python b.py") == 'qconform run --backend "subprocess:python b.py" --strict'
