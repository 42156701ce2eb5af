"""The tests' own house rules, for tests/ and the grader's grader/tests/ alike: what they share
sits in tests/support (on pytest's pythonpath), no test edits sys.path or imports another test,
no test asserts a wall-clock time it measured itself (timings are benchmarks: benchmarks/, as
ratios in one run), and the grader's tests are laid out as its layers are."""

import ast
from pathlib import Path

from support import ROOT

TEST_ROOTS = (ROOT / "tests", ROOT / "grader" / "tests")
TEST_FILES = sorted(p for root in TEST_ROOTS for p in root.rglob("test_*.py"))
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
    files = [p for root in TEST_ROOTS for p in root.rglob("*.py")]
    assert [p.name for p in files if _edits_sys_path(p)] == []


def test_test_file_names_are_unique():
    """pytest imports a test file by its name alone (no __init__.py): two of one name clash."""
    names = [p.name for p in TEST_FILES]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_the_grader_s_tests_mirror_its_layers():
    """grader/tests/<layer>/ for each layer of course_grader (isolation, pipeline, outputs), and
    nothing else: the commands' tests sit at the top, as the commands do."""
    package = ROOT / "grader" / "src" / "course_grader"
    layers = {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    folders = {p.name for p in (ROOT / "grader" / "tests").iterdir() if p.is_dir()}
    assert layers == {"isolation", "pipeline", "outputs"}
    assert folders - {"__pycache__"} == layers


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


def _climbs_from_its_file(path: Path) -> list[int]:
    """Lines where ``Path(__file__)...parents[N]`` looks for the repository around the module."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            if node.value.attr == "parents" and "__file__" in ast.unparse(node.value):
                lines.append(node.lineno)
    return lines


def test_installed_code_does_not_climb_to_the_repository():
    """What pip installs (src/helpers, grader/src) works the same from a wheel: no module finds
    the course's checkout by climbing from its own file (``parents[3]``)."""
    packages = (ROOT / "src" / "helpers", ROOT / "grader" / "src" / "course_grader")
    found = {f"{p.relative_to(ROOT)}:{line}" for root in packages for p in root.rglob("*.py")
             for line in _climbs_from_its_file(p)}  # fmt: skip
    assert found == set()


def _installed_modules():
    """The modules pip installs, but the generated answers (the lessons' own cells)."""
    for root in (ROOT / "src" / "helpers", ROOT / "grader" / "src" / "course_grader"):
        yield from (p for p in sorted(root.rglob("*.py")) if "answers" not in p.parts)


def test_no_installed_module_passes_600_lines_or_function_80():
    """A module that grows past 600 lines continues in another (checks/lessonNN_<topic>.py for
    a lesson's checks); a function past 80 lines is split into named steps."""
    long_modules, long_functions = [], []
    for path in _installed_modules():
        text = path.read_text()
        if text.count("\n") > 600:
            long_modules.append(str(path.relative_to(ROOT)))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.end_lineno - node.lineno + 1 > 80:
                    long_functions.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert (long_modules, long_functions) == ([], [])
