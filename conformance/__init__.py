"""qconform's conformance runner: golden vectors, backend protocol and adapters, judging, reports.

Kept import-free on purpose: pytest loads ``conformance.plugin`` in every session through its entry point, and
a session without ``--qc-backend`` should not pay for numpy or safetensors. The names a backend author needs
are resolved lazily.
"""

__all__ = ["BackendError", "Unsupported", "load_suite", "open_backend"]


def __getattr__(name):
    if name in ("BackendError", "Unsupported"):
        from . import protocol
        return getattr(protocol, name)
    if name == "load_suite":
        from .vectors import load_suite
        return load_suite
    if name == "open_backend":
        from .backends import open_backend
        return open_backend
    raise AttributeError(f"module 'conformance' has no attribute {name!r}")
