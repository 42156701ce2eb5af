"""The seccomp filter's own failures: where libseccomp is missing or older than a call, the
kernels still start (without the filter, or without that call's rule) and the report says so.
That the filter refuses what it must is tested by running it (test_grade_resources.py)."""

from __future__ import annotations

import pytest
from course_grader.isolation import seccomp


@pytest.fixture
def fresh(monkeypatch):
    """seccomp.program() built again for the test, and again after it."""
    built = seccomp.program  # functools.cache'd
    built.cache_clear()
    yield monkeypatch
    built.cache_clear()


def test_without_libseccomp_there_is_no_filter_and_the_reason_is_given(fresh):
    fresh.setattr(seccomp, "_library", lambda: (None, "libseccomp is not available here (x)"))
    assert seccomp.program() is None
    assert seccomp.unavailable() == "libseccomp is not available here (x)"


def test_a_call_libseccomp_does_not_know_is_left_out_and_named(fresh):
    pytest.importorskip("pyseccomp")
    if seccomp.unavailable():
        pytest.skip(seccomp.unavailable())
    full = seccomp.program()
    seccomp.program.cache_clear()
    fresh.setattr(seccomp, "REFUSED", (*seccomp.REFUSED, "no_such_call"))
    assert seccomp.program() == full  # the known calls' rules, the same program
    assert seccomp.unknown() == ["no_such_call"]
    assert seccomp.unavailable() == ""


def test_a_rule_libseccomp_refuses_leaves_the_kernels_without_the_filter(fresh):
    pytest.importorskip("pyseccomp")

    def refuse():
        raise OSError(22, "Invalid argument")

    fresh.setattr(seccomp, "program", refuse)
    assert seccomp.unavailable().startswith("libseccomp could not build the filter")
