"""The qconform pytest plugin (pytest11 entry point): one test item per golden vector.

Inert unless ``--qc-backend`` is given, so it costs nothing in other test runs (heavy imports happen only
then). With it, pytest collects the suite's vectors instead of test files: item id = the vector alias,
markers = ``op_<op>`` and one per tag (``value_Q8S``, ``level_block``, ...), so ``-k``, ``-m``, ``-x``, ``--lf``,
``--junitxml`` and ``-n`` (pytest-xdist) work as usual. Each verdict travels in the report's
``user_properties``, which is how an xdist controller gathers results from its workers for the JSON report.
"""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time

import pytest

from .terminal import safe

_PROP = "qconform"


def pytest_addoption(parser):
    g = parser.getgroup("qconform", "qconform conformance run (active with --qc-backend)")
    g.addoption("--qc-backend", metavar="SPEC", help="backend under test: oracle[:PROFILE], python:mod:attr, "
                "subprocess:COMMAND, http://HOST:PORT, mutant:NAME")
    g.addoption("--qc-profile", metavar="PROFILE", help="judge against this profile (default: the backend's claim)")
    g.addoption("--qc-vectors", metavar="DIR", help="suite folder (default: $QCONFORM_VECTORS or vectors/core)")
    g.addoption("--qc-expectations", metavar="TOML", help="expectations ledger (xfail/skip entries)")
    g.addoption("--qc-report", metavar="JSON", help="write the full results as JSON")
    g.addoption("--qc-strict", action="store_true", help="stale expectations and passing xfails fail the run")
    g.addoption("--qc-strict-messages", action="store_true",
                help="an expected error with the right code but another message fails (default: noted only)")
    g.addoption("--qc-timeout", type=float, default=30.0, metavar="S", help="per-vector timeout (out of process)")
    g.addoption("--qc-hello-timeout", type=float, default=60.0, metavar="S",
                help="handshake timeout of a subprocess backend, at start and at each restart")
    g.addoption("--qc-exact-burn", action="store_true",
                help="the backend is burn itself: burn's outcome only (no acceptable alternative of a burn bug, no "
                     "validation vector declined)")
    g.addoption("--qc-no-diagnose", action="store_true", help="do not try profiles/mutants on failures")
    g.addoption("--qc-junit-all", action="store_true",
                help="--junitxml keeps the not-applicable vectors (as skipped); default: left out, like qconform's "
                     "--junit")


def pytest_configure(config):
    if config.getoption("qc_backend"):
        config.pluginmanager.register(QcSession(config), "qconform-session")


def marker_name(tag: str) -> str:
    """A pytest marker for a vector tag: 'value:Q8S' -> 'value_Q8S', 'class:tie-odd' -> 'class_tie_odd'."""
    return re.sub(r"\W", "_", tag)


def _sigterm_as_interrupt(handler):
    """Install ``handler`` for SIGTERM; the previous handler (None when not on the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)


class VectorFailed(Exception):
    """A failed verdict; its message is the whole report for the vector (no Python traceback)."""


class KnownFailure(Exception):
    """An xfailed verdict: the failure an xfail entry expects (the only exception its xfail marker covers, so
    a vector that fails otherwise is reported failed)."""


class VectorItem(pytest.Item):
    def __init__(self, *, vector, qc, **kw):
        super().__init__(**kw)
        self.vector, self.qc = vector, qc

    def runtest(self):
        from .compare import DECLINED, FAILED, NOT_APPLICABLE, SKIPPED, XFAILED
        verdict = self.qc.run(self.vector)
        self.user_properties.append((_PROP, json.dumps(verdict.to_json(), default=str)))
        if verdict.status == NOT_APPLICABLE:
            from .report.junit import NOT_APPLICABLE_REASON
            pytest.skip(f"{NOT_APPLICABLE_REASON}{verdict.note}")
        if verdict.status == DECLINED:
            pytest.skip(f"declined by the backend: {verdict.note}")
        if verdict.status == SKIPPED:
            pytest.skip(f"expectations: {verdict.note}")
        if verdict.status == FAILED:
            raise VectorFailed(safe(verdict.message))
        if verdict.status == XFAILED:
            raise KnownFailure(safe(verdict.message))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (VectorFailed, KnownFailure)):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.qc.suite.path / "manifest.json", None, f"{self.vector.alias} [{self.vector.id}]"


class SuiteCollector(pytest.Collector):
    def __init__(self, *, qc, **kw):
        super().__init__(**kw)
        self.qc = qc

    def collect(self):
        return [self.qc.make_item(self, v) for v in self.qc.suite.vectors]


class QcSession:
    def __init__(self, config):
        from .expectations import Expectations, ExpectationsError
        from .outputs import OutputError, check_file
        from .runner import Runner, RunnerError
        from .vectors import VectorError, default_suite_path, load_suite

        self.config, self.started = config, time.time()
        opt = config.getoption
        try:
            self.suite = load_suite(opt("qc_vectors") or default_suite_path())
            exp = opt("qc_expectations")
            self.expectations = Expectations.load(exp) if exp else Expectations.empty()
            self.runner = Runner(self.suite, opt("qc_backend"), profile=opt("qc_profile"),
                                 expectations=self.expectations, strict_messages=opt("qc_strict_messages"),
                                 diagnose=not opt("qc_no_diagnose"), timeout=opt("qc_timeout"),
                                 hello_timeout=opt("qc_hello_timeout"), exact_burn=opt("qc_exact_burn"))
            if opt("qc_report"):  # before any vector: an unwritable path must not cost the run its report
                check_file(opt("qc_report"))
        except (VectorError, ExpectationsError, RunnerError, OutputError) as e:
            raise pytest.UsageError(safe(f"qconform: {e}")) from None
        self.strict = opt("qc_strict")
        self.verdicts, self.backend_info, self.markers = {}, {}, set()
        self.is_worker = hasattr(config, "workerinput")
        self.start_error = self.write_error = None
        self.selected: list[str] | None = None  # node ids of the vectors this session was asked to run
        self._old_sigterm = _sigterm_as_interrupt(self._on_sigterm)

    def _on_sigterm(self, signum, frame):
        """SIGTERM (a CI job cancelled, `kill`) ends the run like Ctrl-C: the backend is stopped, the partial
        report written and marked interrupted. An xdist controller passes it on to its workers (Ctrl-C on a
        terminal reaches the whole process group, a SIGTERM only us), so each stops its own backend."""
        if self.config.pluginmanager.hasplugin("dsession"):
            from .backends.reap import children
            for pid in children(os.getpid()):
                try:
                    os.kill(pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    def run(self, vector):
        from .runner import RunnerError
        try:
            return self.runner.run_vector(vector)
        except RunnerError as e:
            self.start_error = safe(f"qconform: {e}")
            if not self.is_worker:
                pytest.exit(self.start_error, returncode=3)
            # an xdist worker cannot exit cleanly: fail this item with the reason and stop the session
            self.session.shouldstop = self.start_error
            raise VectorFailed(self.start_error) from None

    def pytest_sessionstart(self, session):
        """An xdist controller runs no vector itself: check that the backend starts (and its profile) here,
        once, so a broken backend is one clear message rather than an error in every worker."""
        from .runner import RunnerError
        self.session = session
        if self.config.pluginmanager.hasplugin("dsession"):
            try:
                self.runner.start()
            except RunnerError as e:
                self.start_error = safe(f"qconform: {e}")
                pytest.exit(self.start_error, returncode=3)
            finally:
                self.runner.close()

    # -- collection: the vectors replace test files --

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session):
        """Collect the suite instead of test files (an xdist controller leaves collection to its workers)."""
        if self.config.pluginmanager.hasplugin("dsession"):
            return None
        hook, suite = self.config.hook, SuiteCollector.from_parent(session, name=self.suite.name, qc=self)
        items = suite.collect()
        hook.pytest_collectreport(report=pytest.CollectReport(suite.nodeid, "passed", None, items))
        session.items = items
        hook.pytest_collection_modifyitems(session=session, config=self.config, items=session.items)
        hook.pytest_collection_finish(session=session)
        session.testscollected = len(session.items)
        return session.items

    def make_item(self, parent, v):
        item = VectorItem.from_parent(parent, name=v.alias, nodeid=v.alias, vector=v, qc=self)
        for tag in [f"op:{v.op}", *v.tags]:
            name = marker_name(tag)
            if name not in self.markers:
                self.markers.add(name)
                self.config.addinivalue_line("markers", f"{name}: qconform cell {tag}")
            item.add_marker(name)
        entry = self.expectations.lookup(v)
        if entry is not None and entry.kind == "xfail":
            item.add_marker(pytest.mark.xfail(reason=entry.describe(), strict=self.strict, raises=KnownFailure))
        return item

    # -- results --

    def pytest_collection_finish(self, session):
        self.selected = [i.nodeid for i in session.items if isinstance(i, VectorItem)]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        """On an xdist controller: what the workers collected (after -k/-m/--lf), for the 'not run' count."""
        self.selected = list(ids)

    def pytest_runtest_logreport(self, report):
        for key, value in report.user_properties:
            if key == _PROP and report.when == "call":
                from .compare import Verdict
                verdict = Verdict.from_json(json.loads(value))
                self.verdicts[verdict.id] = verdict
                return
        if report.failed and report.when != "teardown":
            self._lost(report)

    def _lost(self, report):
        """An item that failed without a verdict (an exception outside the runner's own guard): record it as a
        runner error with pytest's traceback, so no selected vector ever goes without a verdict."""
        from .runner import runner_error
        try:
            vector = self.suite.get(report.nodeid)
        except KeyError:
            return
        if vector.id not in self.verdicts:
            profile = self.runner.profile or self.runner.requested_profile or ""
            self.verdicts[vector.id] = runner_error(vector, profile, report.longreprtext[-4000:])

    def pytest_runtest_teardown(self, item):
        if self.runner.backend is not None and not self.backend_info:
            self.backend_info = self.runner.backend.hello.to_json()
        if self.backend_info:
            item.user_properties.append(("qconform-backend", json.dumps(self.backend_info)))

    def pytest_report_teststatus(self, report, config):
        for key, value in getattr(report, "user_properties", []):
            if key == "qconform-backend" and not self.backend_info:
                self.backend_info = json.loads(value)

    def report(self) -> dict:
        from . import report as rep
        verdicts = list(self.verdicts.values())
        stale = [e.describe() for e in self.expectations.unmatched(self.suite.vectors)]
        profile = self.runner.profile or next((v.profile for v in verdicts), self.runner.requested_profile)
        suite = {"name": self.suite.name, "path": str(self.suite.path), "vectors": len(self.suite.vectors),
                 "digest": self.suite.digest,
                 "suite_version": self.suite.manifest.get("suite_version"),
                 "oracle_version": self.suite.manifest.get("oracle_version")}
        return rep.build(verdicts, backend=self.backend_info or {"spec": self.runner.spec}, profile=profile,
                         suite=suite, stale=stale, strict=self.strict, started=self.started,
                         selected=self.selected_count(), interrupted=self.interrupted,
                         exact_burn=self.runner.exact_burn)

    def selected_count(self) -> int:
        if self.config.option.collectonly:
            return len(self.verdicts)
        return len(self.selected) if self.selected is not None else len(self.suite.vectors)

    def pytest_sessionfinish(self, session, exitstatus):
        self.runner.close()
        if self.is_worker:
            return
        from . import report as rep
        self.interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        self.final = self.report()
        path = self.config.getoption("qc_report")
        if rep.failed(self.final) and session.exitstatus == 0:  # e.g. strict and stale, or a vector not run
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if path:
            from .outputs import WRITE_FAILED, OutputError
            try:
                rep.write(self.final, path)
            except OutputError as e:  # the verdict is still printed (the summary), then this error
                self.write_error = safe(f"qconform: {e}")
                session.exitstatus = WRITE_FAILED

    def pytest_unconfigure(self, config):
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
        self._prune_junit()

    def _prune_junit(self):
        """pytest's ``--junitxml`` file (written at session finish, before this) without the not-applicable
        vectors, its counts and properties matching the summary (``report/junit.py``)."""
        path = getattr(self.config.option, "xmlpath", None)
        if self.is_worker or not path or not hasattr(self, "final"):
            return
        path = os.path.abspath(os.path.expanduser(os.path.expandvars(path)))  # as pytest's LogXML resolves it
        if not os.path.exists(path):
            return
        from .report.junit import prune_pytest_junit
        with open(path, encoding="utf-8") as f:
            xml = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(prune_pytest_junit(xml, self.final, keep_not_applicable=self.config.getoption("qc_junit_all")))

    def pytest_terminal_summary(self, terminalreporter):
        if self.is_worker or not hasattr(self, "final") or self.config.option.collectonly:
            return
        from . import report as rep
        terminalreporter.section("qconform summary")
        terminalreporter.write_line(rep.format_text(self.final, failures=0).lstrip("\n"))
        if self.write_error:
            terminalreporter.write_line(self.write_error, red=True)
