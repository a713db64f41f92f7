"""What every backend is: the ``Backend`` interface and the error of a backend that could not start."""

from __future__ import annotations

from typing import Protocol as _Protocol

import numpy as np

from ..protocol import Hello, Outcome


class Backend(_Protocol):
    hello: Hello

    def run(self, op: str, params: dict, inputs: dict[str, np.ndarray]) -> Outcome: ...

    def close(self) -> None: ...


class BackendStartError(Exception):
    """The backend could not be started or failed its handshake; nothing was run."""
