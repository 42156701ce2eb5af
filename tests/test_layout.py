"""The tests' own house rules: what they share sits in tests/support (on pytest's pythonpath),
no test edits sys.path or imports another test, and no test asserts a wall-clock time it
measured itself (timings are benchmarks: benchmarks/, as ratios in one run)."""

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
TEST_FILES = sorted(p for p in TESTS.rglob("test_*.py"))
TEST_MODULES = {p.stem for p in TEST_FILES}
# The checks' time limit is behaviour, not speed: a check must end within its limit (plus the
# margin the limit's own machinery needs), on any machine; those files assert exactly that.
TIME_LIMIT_TESTS = {"test_checks_time_limits", "test_checks_core", "test_checks_adversarial"}


def _imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_no_test_imports_another_test():
    wrong = {p.name: sorted(_imported(p) & TEST_MODULES) for p in TEST_FILES}
    assert {k: v for k, v in wrong.items() if v} == {}


def _edits_sys_path(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in ("insert", "append"):
            target = node.value
            if isinstance(target, ast.Attribute) and target.attr == "path":
                return isinstance(target.value, ast.Name) and target.value.id == "sys"
    return False


def test_no_test_edits_sys_path():
    assert [p.name for p in TESTS.rglob("*.py") if _edits_sys_path(p)] == []


def _reads_the_clock(node: ast.AST, timed: set[str]) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr in ("perf_counter", "monotonic", "time"):
            if isinstance(n.value, ast.Name) and n.value.id == "time":
                return True
        if isinstance(n, ast.Name) and n.id in timed:
            return True
    return False


def test_no_test_asserts_a_wall_clock_time():
    """Neither ``assert time.perf_counter() - start < 5`` nor ``elapsed = time.perf_counter()
    - start`` then ``assert elapsed < 5`` (a name given the clock's reading, in any function)."""
    wrong = []
    for path in TEST_FILES:
        if path.stem in TIME_LIMIT_TESTS:
            continue
        tree = ast.parse(path.read_text())
        timed: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _reads_the_clock(node.value, set()):
                timed |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        timed -= {"start", "begin", "t0"}  # the starting reading alone says nothing
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) and _reads_the_clock(node.test, timed):
                wrong.append(f"{path.name}:{node.lineno}")
    assert wrong == []
