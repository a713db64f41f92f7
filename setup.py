"""Everything about the package is in pyproject.toml; this file only adds the golden suite to the wheel.

The suite's one home is ``vectors/`` (``qconform generate`` writes it there, CI checks it there). A wheel carries a
copy under ``conformance/data/`` so that ``qconform run`` works wherever the package is installed; the runner
checks the copy's sha256s like any suite (conformance/vectors.py).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# source in the checkout -> destination inside the installed package
SHIPPED = {"vectors/core": "conformance/data/vectors/core",
           "vectors/schema": "conformance/data/schema",
           "docs/schema": "conformance/data/schema"}


class BuildPyWithSuite(build_py):
    def run(self):
        super().run()
        data = Path(self.build_lib) / "conformance" / "data"
        shutil.rmtree(data, ignore_errors=True)  # no stale shard of an earlier build in this wheel
        for source, dest in SHIPPED.items():
            target = Path(self.build_lib) / dest
            target.mkdir(parents=True, exist_ok=True)
            for path in sorted((HERE / source).glob("*")):
                if path.is_file():
                    shutil.copyfile(path, target / path.name)


setup(cmdclass={"build_py": BuildPyWithSuite})
