"""`make test`'s runner (tools/run_tests.py): its passes under other BLAS kernels."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from helpers import blas

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("run_tests", ROOT / "tools" / "run_tests.py")
run_tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_tests)


def test_every_file_left_out_of_the_kernel_passes_exists():
    """A renamed file would otherwise slip into, or stay out of, the passes unseen."""
    missing = [name for name in run_tests.NOT_NUMERICAL if not (ROOT / "tests" / name).is_file()]
    assert not missing


def test_the_kernel_passes_run_the_numerical_tests_and_every_solution():
    command = run_tests.NUMERICAL
    assert command[-2:] == ["tests", "solutions"] and "--nbval" in command
    left_out = {arg.removeprefix("--ignore=tests/") for arg in command if arg.startswith("--ign")}
    assert left_out == set(run_tests.NOT_NUMERICAL)
    for name in ("test_attention.py", "test_induction_reproduce.py", "test_checks_sweep.py"):
        assert name not in left_out


@pytest.mark.parametrize("forced", [None, "Haswell", "Sandybridge", "SkylakeX"])
def test_the_other_kernels_are_every_runnable_one_but_the_first_passs(monkeypatch, forced):
    if forced is not None and forced not in blas.runnable_kernels():
        pytest.skip(f"this CPU cannot run {forced}")
    if forced is None:
        monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_CORETYPE", forced)
    first = blas.kernel_in_child(forced)
    if first["library"] != "openblas":
        pytest.skip(f"NumPy here uses {first['library']}")
    todo, line = run_tests.other_kernels()
    native = blas.kernel_in_child(None)["kernel"]
    assert first["kernel"] not in todo and len(todo) == len(set(todo))
    expected = {native, *blas.runnable_kernels()} - {first["kernel"]}
    assert set(todo) == expected, line


def test_a_forced_kernel_takes_in_a_new_process():
    """What the passes rely on: OpenBLAS reads OPENBLAS_CORETYPE when NumPy loads."""
    for kernel in blas.runnable_kernels():
        child = blas.kernel_in_child(kernel)
        if child["library"] != "openblas":
            pytest.skip(f"NumPy here uses {child['library']}")
        assert child["kernel"] == kernel
