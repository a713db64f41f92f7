"""``qconform``: run a backend against the golden vectors, serve a backend over HTTP, render reports,
explain and reproduce vectors. ``run`` is the pytest plugin driven for you (same items, same verdicts).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from .arguments import count, port, seconds
from .outputs import WRITE_FAILED, OutputError, check_file, check_folder, write_file, write_folder
from .terminal import one_line, safe

# command -> (module, arguments it starts with): mutants are reported by the coverage module.
DELEGATED = {"generate": ("generate", []), "coverage": ("coverage", ["coverage"]), "mutants": ("coverage", ["mutants"]),
             "fuzz": ("fuzz.cli", [])}


# The exit status of a program killed by SIGPIPE (128 + 13), what `cmd | head` shells expect of a cut-off writer.
BROKEN_PIPE = 141


def main(argv: list[str] | None = None) -> int:
    """``qconform``; output cut off by the reader (``qconform explain X | head``) ends quietly, not in a
    traceback."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # Python flushes stdout again at exit and would fail a second time: point it at /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in DELEGATED:  # their own argument parsers take every remaining argument
        return delegate(argv[0], argv[1:])
    ap = argparse.ArgumentParser(prog="qconform", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="judge a backend against a suite (extra pytest args after --)")
    _backend_args(p)
    p.add_argument("--expectations", metavar="TOML")
    p.add_argument("--report", metavar="JSON", help="write the full results as JSON")
    _junit_args(p)
    p.add_argument("--strict", action="store_true", help="stale expectations and passing xfails fail")
    p.add_argument("--strict-messages", action="store_true", help="right error code, other message: fail")
    p.add_argument("--exact-burn", action="store_true",
                   help="the backend is burn itself: only burn's outcome passes (no acceptable alternative of a "
                        "burn bug) and no validation vector is declined (docs/runner.md)")
    p.add_argument("--timeout", type=seconds, default=30.0, help="per-vector timeout in seconds")
    p.add_argument("--hello-timeout", type=seconds, default=60.0,
                   help="handshake timeout of a subprocess backend (at start and at each restart)")
    p.add_argument("--no-diagnose", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="a green run prints five lines: counts, scope, profile, suite digest, OK (failures and "
                        "declined vectors still shown)")
    p.add_argument("-v", "--verbose", action="store_true", help="keep table rows that are entirely not applicable")
    p.add_argument("pytest_args", nargs="*", help="passed to pytest (after --), e.g. -- -k q8s -x -n 2")

    p = sub.add_parser("serve", help="expose a backend over HTTP (loopback by default)")
    p.add_argument("--backend", required=True, metavar="SPEC")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback; any other needs "
                                                         "--allow-remote)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a --host that is not loopback: the server has no authentication, so anyone who can "
                        "reach the address can run requests on the backend")
    p.add_argument("--port", type=port, default=8765)
    p.add_argument("--timeout", type=seconds, default=30.0)
    p.add_argument("--hello-timeout", type=seconds, default=60.0)
    _server_limits(p)

    p = sub.add_parser("report", help="print a JSON report's summary; --html renders a page")
    p.add_argument("report")
    p.add_argument("--html", metavar="OUT")
    p.add_argument("--statement", action="store_true",
                   help="print only the one-line conformance statement (for a README)")
    p.add_argument("--badge", metavar="SVG", help="write a small SVG badge of the result")
    _junit_args(p)
    p.add_argument("-v", "--verbose", action="store_true", help="keep table rows that are entirely not applicable")

    p = sub.add_parser("explain", help="show one vector: inputs, expected outputs, intermediates")
    p.add_argument("vector", metavar="ID_OR_ALIAS")
    p.add_argument("--vectors", metavar="DIR")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--profile", help="this profile's expectation (default: the suite's default profile, the "
                                         "one a backend claiming none is judged against)")
    which.add_argument("--all-profiles", action="store_true", help="the expectation of every profile")
    which.add_argument("--backend", metavar="SPEC", help="the expectation of the profile this backend claims (the "
                                                         "one `run --backend SPEC` judges it against)")
    p.add_argument("--hello-timeout", type=seconds, default=60.0, help="with --backend: handshake timeout")

    p = sub.add_parser("list", help="the vectors that apply to a backend, and why the others do not")
    _backend_args(p)
    p.add_argument("--hello-timeout", type=seconds, default=60.0, help="handshake timeout of a subprocess backend")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also list each not-applicable vector under its reason (default: the reasons, counted)")

    p = sub.add_parser("repro", help="write a one-vector suite and the command that reproduces a failure")
    p.add_argument("vector", metavar="ID_OR_ALIAS")
    _backend_args(p)
    p.add_argument("--out", metavar="DIR", help="where to write the suite (default ./qconform-repro/ID)")
    p.add_argument("--force", action="store_true", help="replace the suite already at --out")

    p = sub.add_parser("profiles", help="list the oracle's profiles (and the mutants); --diff A B: the vectors "
                                        "whose expected outcome differs, grouped by the profile field causing it")
    p.add_argument("--diff", nargs=2, metavar=("A", "B"))
    p.add_argument("--json", action="store_true", help="with --diff: the groups as JSON")
    p.add_argument("--upgrading", nargs="?", const="docs/upgrading.md", metavar="PATH",
                   help="write the upgrade guide (every upgrade path's --diff) to PATH (default docs/upgrading.md)")
    p.add_argument("--check", action="store_true", help="with --upgrading: exit 1 if PATH is not current")
    p.add_argument("--vectors", metavar="DIR", help="suite folder (default $QCONFORM_VECTORS or vectors/core)")
    for name in DELEGATED:
        sub.add_parser(name, help=f"conformance.{name} (see qconform {name} --help)")

    args = ap.parse_args(argv)
    from .vectors import VectorError
    try:
        return COMMANDS[args.command](args)
    except VectorError as e:  # a missing or hostile suite: named, exit 4, as `run` does
        print(safe(f"qconform {args.command}: {e}"), file=sys.stderr)
        return 4


# ---- argument types: a bad value is argparse's usage error (exit 2), never blamed on the backend ---------

def _server_limits(p):
    """One option per field of server.Limits (docs/reliability.md lists them with their defaults)."""
    from dataclasses import fields

    from .backends.server import Limits
    for f in fields(Limits):
        p.add_argument(f"--{f.name.replace('_', '-')}", type=seconds if isinstance(f.default, float) else count,
                       default=f.default, metavar="N", help=f"server limit (default {f.default})")


def _junit_args(p):
    p.add_argument("--junit", metavar="XML", help="write JUnit XML (not-applicable vectors left out)")
    p.add_argument("--junit-all", action="store_true", help="with --junit: keep the not-applicable vectors")


def _write_junit(args, report) -> None:
    if args.junit:
        from .report.junit import junit_xml
        _write(args.junit, junit_xml(report, keep_not_applicable=args.junit_all))


def _write(path, text: str) -> None:
    """One output, atomically (conformance/outputs.py); an OutputError goes to the caller, after its verdict."""
    write_file(path, text)
    print(f"wrote {path}", file=sys.stderr)


def _checked(*paths) -> str:
    """'' when every given output path can be written, else the error (checked before any work is done)."""
    try:
        for path in paths:
            if path:
                check_file(path)
    except OutputError as e:
        return f"qconform: {e}"
    return ""


def _write_failed(e: OutputError) -> int:
    print(safe(f"qconform: {e} (the verdict above stands; this output is missing)"), file=sys.stderr)
    return WRITE_FAILED


def _backend_args(p):
    p.add_argument("--backend", required=True, metavar="SPEC",
                   help="oracle[:PROFILE] | python:mod:attr | subprocess:CMD | http://HOST:PORT | mutant:NAME")
    p.add_argument("--profile", help="judge against this profile instead of the one the backend claims")
    p.add_argument("--vectors", metavar="DIR", help="suite folder (default $QCONFORM_VECTORS or vectors/core)")


# ---- run ------------------------------------------------------------------------------------------------

class _Progress:
    """A pytest plugin that keeps the final report and, on a terminal, shows a one-line progress display once a
    run has lasted ``DELAY`` seconds (short runs stay silent). The line is erased at the end."""

    DELAY = 2.0

    def __init__(self, stream=None, clock=time.monotonic):
        self.stream, self.clock = stream or sys.stderr, clock
        self.final = self.start_error = self.write_error = None
        self.total = self.done = 0
        self.started = self.clock()
        self.width = 0

    def pytest_collection_finish(self, session):
        self.total, self.started = len(session.items), self.clock()

    def pytest_runtest_logreport(self, report):
        if report.when != "teardown":
            return
        self.done += 1
        elapsed = self.clock() - self.started
        if elapsed < self.DELAY or not self.stream.isatty():
            return
        rate = self.done / elapsed
        left = f", about {(self.total - self.done) / rate:.0f} s left" if self.total > self.done else ""
        line = f"qconform: {self.done}/{self.total} vectors ({rate:.0f}/s{left})"
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = len(line)

    def pytest_sessionfinish(self, session):
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()

    def pytest_unconfigure(self, config):
        qc = config.pluginmanager.get_plugin("qconform-session")
        self.final = getattr(qc, "final", None)
        self.start_error = getattr(qc, "start_error", None)
        self.write_error = getattr(qc, "write_error", None)


def cmd_run(args) -> int:
    import pytest

    if error := _checked(args.report, args.junit):
        print(safe(error), file=sys.stderr)
        return 2
    common = ["--qc-backend", args.backend, "--qc-timeout", str(args.timeout),
              "--qc-hello-timeout", str(args.hello_timeout)]
    argv = common + (["-q"] if args.pytest_args else ["-p", "no:terminal", "-p", "no:cacheprovider"])
    for flag, value in (("--qc-profile", args.profile), ("--qc-vectors", args.vectors),
                        ("--qc-expectations", args.expectations), ("--qc-report", args.report)):
        if value:
            argv += [flag, value]
    argv += [f for f, on in (("--qc-strict", args.strict), ("--qc-strict-messages", args.strict_messages),
                             ("--qc-no-diagnose", args.no_diagnose), ("--qc-exact-burn", args.exact_burn)) if on]
    progress = _Progress()
    code = pytest.main(argv + list(args.pytest_args), plugins=[progress])
    if progress.start_error:
        print(progress.start_error, file=sys.stderr)
        return 3
    if progress.final is None:
        return int(code) or 3
    if not args.pytest_args:  # the terminal plugin is off: print the summary (with failures) ourselves
        from . import report as rep
        rest = f"see {args.report}" if args.report else "--report FILE.json writes them all"
        print(rep.format_text(progress.final, quiet=args.quiet, verbose=args.verbose, rest=rest), flush=True)
        if progress.write_error:
            print(progress.write_error, file=sys.stderr)
    try:
        _write_junit(args, progress.final)
    except OutputError as e:
        return _write_failed(e)
    return int(code)


# ---- serve / report / profiles ----------------------------------------------------------------------------

def cmd_serve(args) -> int:
    from dataclasses import fields

    from .backends import open_backend
    from .backends.base import BackendStartError
    from .backends.server import Limits, ServeError, loopback, require_http, serve
    limits = Limits(**{f.name: getattr(args, f.name) for f in fields(Limits)})
    if not args.allow_remote and not loopback(args.host):
        print(safe(f"qconform serve: --host {args.host} is not a loopback address; the server has no "
                   "authentication, so anyone who can reach it can run requests on the backend. Pass "
                   "--allow-remote to bind it anyway."), file=sys.stderr)
        return 2
    try:
        require_http()
        backend = open_backend(args.backend, timeout=args.timeout, hello_timeout=args.hello_timeout)
    except (ServeError, BackendStartError) as e:
        print(safe(f"qconform serve: {e}"), file=sys.stderr)
        return 3
    h = backend.hello

    def ready():  # only once the port is bound: a "serving" line is a promise
        print(safe(f"serving {h.name} {h.version} (profile {h.profile}) on http://{args.host}:{args.port}/v1/"),
              file=sys.stderr)
    try:
        serve(backend, args.host, args.port, limits, ready=ready)
    except ServeError as e:
        print(safe(f"qconform serve: {e}"), file=sys.stderr)
        return 3
    finally:
        backend.close()
    return 0


def cmd_report(args) -> int:
    from . import report as rep
    try:
        report = rep.load(args.report)
    except rep.ReportError as e:
        print(safe(f"qconform report: {e}"), file=sys.stderr)
        return 2
    if error := _checked(args.badge, args.junit, args.html):
        print(safe(error), file=sys.stderr)
        return 2
    print(rep.statement(report) if args.statement else rep.format_text(report, verbose=args.verbose), flush=True)
    try:
        if args.badge:
            _write(args.badge, rep.badge(report))
        _write_junit(args, report)
        if args.html:
            from .report.html import render
            _write(args.html, render(report))
    except OutputError as e:
        return _write_failed(e)
    return 1 if rep.failed(report) else 0


def cmd_profiles(args) -> int:
    import oracle
    if args.diff:
        return _profiles_diff(*args.diff, as_json=args.json, vectors=args.vectors)
    if args.upgrading:
        return _upgrading(Path(args.upgrading), check=args.check, vectors=args.vectors)
    for name, desc in oracle.profiles().items():
        mark = " (default)" if name == oracle.DEFAULT_PROFILE else ""
        print(f"{name}{mark}\n    {desc}\n    [{oracle.status_line(name)}]\n    [{oracle.campaign_line(name)}]\n"
              f"    [{oracle.build_line(name)}]")
    from .mutants import MUTANTS

    print("\nmutants (deliberately wrong variants, --backend mutant:NAME):")
    for name, m in sorted(MUTANTS.items()):
        print(f"  {name:<28} {m.description}  [base {m.base}]")
    return 0


def _profiles_diff(a: str, b: str, *, as_json: bool, vectors: str | None) -> int:
    from . import profile_diff
    from .vectors import default_suite_path, load_suite
    suite = load_suite(vectors or default_suite_path())
    try:
        groups, total = profile_diff.diff(suite, a, b)
    except (KeyError, ValueError) as e:
        print(e.args[0] if e.args else e, file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(profile_diff.to_json(a, b, groups, total), indent=1))
    else:
        print(profile_diff.format_text(a, b, groups, total))
    return 0


def _upgrading(path: Path, *, check: bool, vectors: str | None) -> int:
    from . import profile_diff
    from .vectors import default_suite_path, load_suite
    text = profile_diff.upgrading_markdown(load_suite(vectors or default_suite_path()))
    if check:
        if path.exists() and path.read_text() == text:
            print(f"{path}: up to date")
            return 0
        print(f"{path} is not current; regenerate with: qconform profiles --upgrading {path}", file=sys.stderr)
        return 1
    path.write_text(text)
    print(f"wrote {path}")
    return 0


def delegate(command: str, rest: list[str]) -> int:
    """generate / coverage / mutants live in their own modules; imported lazily to keep start-up cheap."""
    name, prefix = DELEGATED[command]
    module = importlib.import_module(f"conformance.{name}")
    return int(module.main(prefix + rest) or 0)


# ---- explain / repro ------------------------------------------------------------------------------------

def _suite(path):
    from .vectors import default_suite_path, load_suite
    return load_suite(path or default_suite_path())


def _tensor_lines(name: str, a: np.ndarray, indent: str = "    ") -> list[str]:
    from . import tensorio
    from .compare import FLOAT_FIELDS, fields
    kind = tensorio.dtype_name(a)
    lines = [f"{indent}{name}: {kind}{list(a.shape)}"]
    body = np.array2string(a.astype(np.float32) if kind == "BF16" else a, threshold=64, max_line_width=100,
                           floatmode="unique")
    lines += [indent + "  " + line for line in body.splitlines()]
    if kind in FLOAT_FIELDS and a.size:
        flat, raw = a.reshape(-1), tensorio.bits(np.ascontiguousarray(a)).reshape(-1)
        shown = ", ".join(f"{float(flat[i])!r}={fields(int(raw[i]), FLOAT_FIELDS[kind])}"
                          for i in range(min(4, a.size)))
        lines.append(f"{indent}  bits (s|exp|man): {shown}{' ...' if a.size > 4 else ''}")
    return lines


def _same(a, b) -> bool:
    """Two profiles' expectations of a vector are the same (error, or outputs bit for bit and values)."""
    if (a.error is None) != (b.error is None) or a.undefined != b.undefined:
        return False
    if a.undefined is not None:
        return True
    if a.error is not None:
        return a.error == b.error
    from . import tensorio
    return a.values == b.values and a.outputs.keys() == b.outputs.keys() and all(
        tensorio.dtype_name(x) == tensorio.dtype_name(b.outputs[k]) and x.shape == b.outputs[k].shape
        and tensorio.bits(x).tobytes() == tensorio.bits(b.outputs[k]).tobytes() for k, x in a.outputs.items())


def explain_text(vector, profiles: list[str] | None = None) -> str:
    """``vector`` with the expectations of ``profiles`` (default: every profile)."""
    from .compare import scheme_text
    out = [f"{vector.alias}  [{vector.id}]", f"  op      {vector.op}  ({scheme_text(vector.params)})",
           f"  params  {json.dumps(vector.params)}"]
    if vector.tags:
        out.append(f"  tags    {', '.join(vector.tags)}")
    if vector.spec:
        out.append(f"  spec    {', '.join(vector.spec)}")
    if vector.reason:
        out.append(f"  reason  {vector.reason}")
    out.append("  inputs")
    for name, a in vector.inputs.items():
        out += _tensor_lines(name, a)
    for p, e in vector.expected.items():
        if profiles is not None and p not in profiles:
            continue
        out.append(f"  expected under {p}")
        if e.error is not None:
            out.append(f"    error {e.error['code']}: {e.error['message']!r}")
            continue
        if e.undefined is not None:
            out.append(f"    undefined (does not apply): {e.undefined}")
            continue
        for name, a in e.outputs.items():
            out += _tensor_lines(name, a)
        out += [f"    {k} = {json.dumps(v)}" for k, v in e.values.items()]
        out += [f"    compare {k}: {json.dumps(c)}" for k, c in e.compare.items()]
        if intermediates := e.stages.intermediates():
            out.append("    intermediates (diagnosis only)")
            for name, a in intermediates.items():
                out += _tensor_lines(name, a, "      ")
    others = [p for p in vector.expected if profiles is not None and p not in profiles]
    if others and profiles:
        shown = vector.expected[profiles[0]]
        same = [p for p in others if _same(vector.expected[p], shown)]
        differ = [p for p in others if p not in same]
        out.append(f"  other profiles (--all-profiles): same expectation under {', '.join(same) or 'none'}; "
                   f"different under {', '.join(differ) or 'none'}")
    return "\n".join(out)


def _find(suite, key: str):
    """The vector with id or alias ``key``, or None after saying which are known."""
    try:
        return suite.get(key)
    except KeyError as e:
        print(e.args[0], file=sys.stderr)
        return None


def cmd_explain(args) -> int:
    suite = _suite(args.vectors)
    vector = _find(suite, args.vector)
    if vector is None:
        return 2
    if args.profile and args.profile not in suite.profiles:
        print(f"unknown profile {args.profile!r}: suite {suite.name} has {', '.join(suite.profiles)}", file=sys.stderr)
        return 2
    profile = args.profile
    if args.backend:
        from .runner import Runner, RunnerError
        try:
            runner = Runner(suite, args.backend, hello_timeout=args.hello_timeout).start()
        except RunnerError as e:
            print(safe(e), file=sys.stderr)
            return 3
        profile = runner.profile
        runner.close()
    profiles = None if args.all_profiles else [profile or suite.default_profile]  # the runner's default too
    print(explain_text(vector, profiles))
    return 0


def cmd_list(args) -> int:
    from collections import defaultdict

    from .runner import Runner, RunnerError
    suite = _suite(args.vectors)
    try:
        runner = Runner(suite, args.backend, profile=args.profile, hello_timeout=args.hello_timeout).start()
    except RunnerError as e:
        print(safe(e), file=sys.stderr)
        return 3
    hello = runner.backend.hello
    applicable, excluded = [], defaultdict(list)
    for v in suite.vectors:
        why = runner.not_applicable(v)
        (excluded[why] if why else applicable).append(v.alias)
    runner.close()
    print(one_line(f"{hello.name} {hello.version}, judged against {runner.profile}: {len(applicable)} of "
                   f"{len(suite.vectors)} vectors of suite {suite.name} apply"))
    print(safe("\n".join(_format_counts(hello.capabilities, suite.vectors))))  # format labels are the backend's
    print("\n".join(f"  {alias}" for alias in applicable))
    if excluded:
        print(f"\nnot applicable: {sum(map(len, excluded.values()))} vectors, outside the declared capabilities "
              "(or validation only, for a backend that does not validate)")
        for why, aliases in sorted(excluded.items(), key=lambda item: -len(item[1])):
            if args.verbose:
                print(f"  {one_line(why)} ({len(aliases)}):")
                print("\n".join(f"    {alias}" for alias in aliases))
            else:
                print(f"  {len(aliases):>5}  {one_line(why)}")
        if not args.verbose:
            print("(-v lists them)")
    return 0


def _format_counts(caps, vectors) -> list[str]:
    """``qconform list``'s table: applicable vectors per declared format and op (a 0 is shown as 'no vector')."""
    from .protocol import applicable_by_format
    table = applicable_by_format(caps, vectors)
    if not table:
        return []
    width = max(len(label) for label in table)
    lines = ["applicable vectors per declared format and op:"]
    for label, per_op in table.items():
        cells = ", ".join(f"{op} {n}" if n else f"{op}: no vector" for op, n in per_op.items())
        lines.append(f"  {label:<{width}}  {cells}")
    return lines + [""]


def cmd_repro(args) -> int:
    from .runner import Runner, RunnerError
    from .vectors import write_suite
    suite = _suite(args.vectors)
    vector = _find(suite, args.vector)
    if vector is None:
        return 2
    out = Path(args.out or Path("qconform-repro") / vector.id)
    try:
        check_folder(out, force=args.force)  # before the backend runs: an existing suite is not replaced silently
    except OutputError as e:
        print(safe(f"qconform repro: {e}"), file=sys.stderr)
        return 2
    verdict = None
    try:
        runner = Runner(suite, args.backend, profile=args.profile).start()
        verdict = runner.run_vector(vector)
        runner.close()
    except RunnerError as e:  # the suite is still written: it reproduces the vector with a working backend
        print(safe(e), file=sys.stderr)
    else:
        print(safe(verdict.message or f"{vector.alias}: {verdict.status}"), flush=True)
    try:
        write_folder(out, lambda folder: write_suite(
            folder, [vector.to_spec()], suite=f"repro-{vector.id}", profiles=suite.profiles,
            suite_version=str(suite.manifest.get("suite_version", "")),
            oracle_version=str(suite.manifest.get("oracle_version", ""))), force=args.force)
    except OutputError as e:
        return _write_failed(e)
    if verdict is None:
        return 3
    cmd = ["qconform", "run", "--backend", args.backend, "--vectors", str(out)]
    if args.profile:
        cmd += ["--profile", args.profile]
    print(f"\nwrote {out}/ (one vector); reproduce with:\n  {shlex.join(cmd)}")
    return 1 if verdict.status == "failed" else 0


COMMANDS = {"run": cmd_run, "serve": cmd_serve, "report": cmd_report, "explain": cmd_explain,
            "repro": cmd_repro, "profiles": cmd_profiles, "list": cmd_list}

if __name__ == "__main__":
    sys.exit(main())
