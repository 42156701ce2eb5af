"""Answers that look alike: the same code once names, comments and layout are set aside.

For each exercise, a student's *answer* is the notebook's last top-level definition of the
exercise's function plus the notebook's own top-level functions and classes it uses. Two
answers are compared on their syntax trees (Python's :mod:`ast`), normalised so that what a
copier changes first does not count:

* comments, blank lines and layout: gone with the parse;
* docstrings and other bare string statements: removed;
* names: every identifier the answer chooses (functions, arguments, variables, import aliases)
  is renamed by order of first appearance (``v0``, ``v1``, ...); the exercise's own name,
  Python's builtins and attribute names (``np.sqrt``'s ``sqrt``) are kept;
* the order of definitions: a run of ``def``/``class`` statements is sorted by its
  name-blind shape before the renaming.

That comparison is blind to names but not to *how many* there are: one extra variable
(``arr = np.asarray(z)`` where the other wrote ``z = np.asarray(z)``) shifts every later name.
So a second, **name-blind** comparison (the idea of MOSS's fingerprints, on syntax trees):

* every chosen identifier becomes the same placeholder ``_``;
* a variable assigned once and read once is put back into the expression that reads it (an
  extracted or inlined expression compares the same), and a loop that only appends to a list
  made empty just before it (``out = []``, ``for x in xs: ... out.append(e)``) becomes the
  list comprehension it is (``out = [e for x in xs]``), the loop's temporaries put into ``e``;
* the answer is then the *set* of its subtrees of at least :data:`SUBTREE_NODES` nodes (each an
  expression or a statement): the order of independent statements no longer counts.

``similarity`` is the larger of the two Jaccard indices (the token stream's 5-token shingles;
the name-blind subtree sets): 1.0 for the same tree, lower the more the trees differ. Pairs at
or above :data:`THRESHOLD` are reported. Measured on ``tests/support/copy_class.py``
(``grader/tests/outputs/test_grade_similarity.py``): copies renamed, commented, with an extra
variable, an inlined expression, reordered statements or a loop made a comprehension score 1.0,
one with a helper function extracted 0.88; independent correct answers at most 0.72.

Answers equal (normalised) to the course's own solution are not paired with each other (many
students handing in the course's answer is not a sign of copying from each other): they are
listed apart, per exercise, as answers that are the course's solution. The starter stub is
no answer and is left out.

Why not a library: ``copydetect`` (0.5.0) fingerprints name-blind token k-grams (winnowing).
Measured on the same class (``benchmarks/compare_copydetect.py``): with k = 5 its lowest copy
scores 0.90 and its highest independent pair 0.89 (a margin of 0.01); from k = 8 on no threshold
separates them (0.75 against 0.78 at k = 8); this module's lowest copy scores 0.88 and its
highest independent pair 0.72. Token k-grams do not see an inlined expression or an append loop
as the same code. ``pycode_similar`` compares per-function AST dumps but has had no release
since 2020. The normalisations here are about 250 lines on the standard library.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from ..pipeline.grading import student_order

THRESHOLD = 0.85
SUBTREE_NODES = 4  # the smallest subtree compared name-blind (``np.exp(_)`` has 5 nodes)
# Answers larger than this are not compared name-blind (the comparison grows with the square of
# the size; the course's longest answer has about 400 nodes): a student's code must not make the
# grader's similarity step take hours.
MAX_BLIND_NODES = 3000
MAX_INLINED_STATEMENTS = 100
MAX_DEPTH = 100  # deeper answers are not compared (no honest answer nests a hundred levels)
SHINGLE = 5
_KEEP = frozenset(dir(builtins)) | {"self", "cls"}
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_MAGIC = re.compile(r"^\s*[%!]")


def _parse(source: str) -> ast.Module | None:
    """A notebook cell's code (IPython magics and shell lines blanked), or None."""
    text = "\n".join("" if _MAGIC.match(line) else line for line in source.splitlines())
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # a nesting too deep to parse (a student's, on purpose or not): no answer
    return tree if _depth(tree) <= MAX_DEPTH else None


def _depth(tree: ast.AST) -> int:
    """How deep the tree nests, walked without recursion (the normalisation below recurses)."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def answer_sources(cells: Iterable[str], names: Iterable[str]) -> dict[str, str]:
    """For each of ``names`` the notebook defines at top level: the answer's source (its last
    definition, then the notebook's own definitions it uses, transitively, in notebook order)."""
    defs: dict[str, tuple[int, str]] = {}
    order = 0
    for source in cells:
        tree = _parse(source)
        if tree is None:
            continue
        text = "\n".join("" if _MAGIC.match(line) else line for line in source.splitlines())
        for node in tree.body:
            if isinstance(node, _DEFS):
                segment = ast.get_source_segment(text, node) or ""
                defs[node.name] = (order, segment)
                order += 1
    answers = {}
    for name in names:
        if name not in defs:
            continue
        wanted, todo = {name}, [name]
        while todo:
            tree = _parse(defs[todo.pop()][1])
            for node in ast.walk(tree) if tree else ():
                used = node.id if isinstance(node, ast.Name) else None
                if used and used in defs and used not in wanted:
                    wanted.add(used)
                    todo.append(used)
        parts = sorted((defs[n][0], n) for n in wanted)
        # The exercise's own function first, then what it uses.
        parts.sort(key=lambda p: p[1] != name)
        answers[name] = "\n\n".join(defs[n][1] for _, n in parts)
    return answers


class _StripStrings(ast.NodeTransformer):
    """Remove docstrings and bare string statements; sort runs of definitions."""

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list) or not body or not isinstance(body[0], ast.AST):
                continue
            kept = [
                s
                for s in body
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            ]
            if not kept and field == "body":
                kept = [ast.Pass()]
            setattr(node, field, _sorted_definitions(kept))
        return node


_NAME_FIELDS = re.compile(r"\b(name|id|arg|asname)='[^']*'")


def _shape(node: ast.AST) -> str:
    """``node``'s dump with every identifier blanked: the order key for definitions."""
    return _NAME_FIELDS.sub(r"\1='_'", ast.dump(node))


def _sorted_definitions(body: list[ast.stmt]) -> list[ast.stmt]:
    if not any(isinstance(statement, _DEFS) for statement in body):
        return body
    out, run = [], []
    for statement in body + [None]:
        if isinstance(statement, _DEFS):
            run.append(statement)
            continue
        out += sorted(run, key=_shape)
        run = []
        if statement is not None:
            out.append(statement)
    return out


def _rename(tree: ast.AST, new_name) -> ast.AST:
    """Replace, in place, every chosen identifier by ``new_name(identifier)``, visited in
    source order (fields in order, depth first)."""

    def visit(node):
        if isinstance(node, _DEFS):
            node.name = new_name(node.name)
        elif isinstance(node, ast.arg):
            node.arg = new_name(node.arg)
        elif isinstance(node, ast.Name):
            node.id = new_name(node.id)
        elif isinstance(node, ast.alias) and node.asname:
            node.asname = new_name(node.asname)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            node.names = [new_name(n) for n in node.names]
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return tree


@functools.lru_cache(maxsize=4096)
def normalised(source: str, keep: str) -> tuple[str, ...] | None:
    """The answer's normalised token stream (None when it does not parse); ``keep`` is the
    exercise's name, which every answer shares."""
    tree = _parse(source)
    if tree is None or not tree.body:
        return None
    tree = _StripStrings().visit(tree)
    names: dict[str, str] = {}

    def canonical(name: str) -> str:
        if name in _KEEP or name == keep:
            return name
        if name == "_":
            return "_"
        return names.setdefault(name, f"v{len(names)}")

    # The definitions were sorted by their name-blind shape first, so the names given here
    # follow an order that renaming cannot change.
    text = ast.dump(_rename(tree, canonical), annotate_fields=False, include_attributes=False)
    return tuple(re.findall(r"\w+|[^\w\s]", text))


def _names_in(node: ast.AST) -> tuple[dict[str, int], dict[str, int]]:
    """How many times each name is stored and read under ``node`` (arguments count as stored;
    an augmented assignment as both)."""
    stores: dict[str, int] = {}
    loads: dict[str, int] = {}
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            counts = stores if isinstance(child.ctx, ast.Store | ast.Del) else loads
            counts[child.id] = counts.get(child.id, 0) + 1
        elif isinstance(child, ast.arg):
            stores[child.arg] = stores.get(child.arg, 0) + 2  # never inlined
        elif isinstance(child, ast.AugAssign) and isinstance(child.target, ast.Name):
            loads[child.target.id] = loads.get(child.target.id, 0) + 1
        elif isinstance(child, ast.Global | ast.Nonlocal):
            for name in child.names:
                stores[name] = stores.get(name, 0) + 2
    return stores, loads


def _assigned_name(statement: ast.stmt) -> str | None:
    """``x`` for ``x = ...`` (one plain name), else None."""
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return statement.targets[0].id
    return None


class _Substitute(ast.NodeTransformer):
    """Every read of ``name`` replaced by (a copy of) ``value``."""

    def __init__(self, name: str, value: ast.expr):
        self.name, self.value, self.count = name, value, 0

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, ast.Load):
            self.count += 1
            return copy.deepcopy(self.value)
        return node


def _as_comprehension(before: ast.stmt, loop: ast.stmt) -> ast.Assign | None:
    """``out = []`` then ``for t in it: [x = e1 ...] out.append(e)`` as ``out = [e' for t in it]``
    (e' with the loop's temporaries put in), else None."""
    out = _assigned_name(before)
    if (
        out is None
        or not isinstance(before.value, ast.List)
        or before.value.elts
        or not isinstance(loop, ast.For)
        or loop.orelse
    ):
        return None
    *temporaries, last = loop.body
    call = last.value if isinstance(last, ast.Expr) else None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == out
        and len(call.args) == 1
        and not call.keywords
    ):
        return None
    element = call.args[0]
    for statement in reversed(temporaries):
        name = _assigned_name(statement)
        if name is None or name == out:
            return None
        element = _Substitute(name, statement.value).visit(element)
    comprehension = ast.comprehension(target=loop.target, iter=loop.iter, ifs=[], is_async=0)
    return ast.Assign(targets=[ast.Name(out, ast.Store())],
                      value=ast.ListComp(element, [comprehension]))  # fmt: skip


def _canonical_body(body: list[ast.stmt], scope: ast.AST) -> list[ast.stmt]:
    """``body`` with append loops made comprehensions, then each variable that ``scope``
    stores once and reads once put into the statement that reads it (in bodies of at most
    :data:`MAX_INLINED_STATEMENTS` statements: the course's answers have a few dozen)."""
    index = 0
    while index < len(body) - 1:
        merged = _as_comprehension(body[index], body[index + 1])
        if merged is not None:
            body[index : index + 2] = [merged]
        index += 1
    if len(body) > MAX_INLINED_STATEMENTS:
        return body
    # Counted once: putting x's expression where x is read leaves every other name's counts
    # as they were.
    stores, loads = _names_in(scope)
    index = 0
    while index < len(body):
        statement = body[index]
        name = _assigned_name(statement)
        if name is not None and stores.get(name) == 1 and loads.get(name) == 1:
            for later in body[index + 1 :]:
                substitute = _Substitute(name, statement.value)
                substitute.visit(later)
                if substitute.count:
                    del body[index]
                    break
            else:
                index += 1
        else:
            index += 1
    return body


@functools.lru_cache(maxsize=4096)
def blind(source: str, keep: str) -> frozenset[str] | None:
    """The answer's name-blind subtrees (see the module's docstring), or None when it does not
    parse; ``keep`` is the exercise's name."""
    tree = _parse(source)
    if tree is None or not tree.body or sum(1 for _ in ast.walk(tree)) > MAX_BLIND_NODES:
        return None
    try:
        tree = _StripStrings().visit(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                node.body = _canonical_body(node.body, node)
        # Putting variables back into their expressions nests them: a chain of a thousand
        # single-use names becomes a thousand levels deep.
        if _depth(tree) > MAX_DEPTH:
            return None
        _rename(tree, lambda name: name if name in _KEEP or name == keep else "_")
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.expr | ast.stmt) and not isinstance(node, _DEFS):
                if sum(1 for _ in ast.walk(node)) >= SUBTREE_NODES:
                    found.add(ast.dump(node, annotate_fields=False, include_attributes=False))
    except (RecursionError, MemoryError):
        return None
    return frozenset(found)


def _shingles(tokens: tuple[str, ...]) -> frozenset[int]:
    """The answer's runs of :data:`SHINGLE` tokens, as hashes (compared within one process)."""
    if len(tokens) <= SHINGLE:
        return frozenset([hash(tokens)])
    return frozenset(hash(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1))


def _jaccard(a: frozenset, b: frozenset) -> float:
    # |A & B| <= min(|A|, |B|): a pair whose sizes differ too much cannot reach the threshold.
    if not a or not b or min(len(a), len(b)) < THRESHOLD * max(len(a), len(b)):
        return 0.0
    common = len(a & b)
    return common / (len(a) + len(b) - common)


def similarity(a: str, b: str, keep: str) -> float:
    """Two answers' similarity (sources; ``keep`` the exercise's name): 1.0 for the same
    normalised tree; else the larger Jaccard index, of their token shingles and of their
    name-blind subtrees (0.0 when their sizes alone rule out :data:`THRESHOLD`)."""
    tokens_a, tokens_b = normalised(a, keep), normalised(b, keep)
    if tokens_a is None or tokens_b is None:
        return 0.0
    if tokens_a == tokens_b:
        return 1.0
    return max(_jaccard(_shingles(tokens_a), _shingles(tokens_b)),
               _jaccard(blind(a, keep) or frozenset(), blind(b, keep) or frozenset()))  # fmt: skip


@functools.lru_cache(maxsize=4096)
def is_stub(source: str) -> bool:
    """The starter stub: a body that only raises NotImplementedError (and says so)."""
    tree = _parse(source)
    if tree is None or not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return False
    body = [
        s
        for s in tree.body[0].body
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    return (
        len(body) == 1
        and isinstance(body[0], ast.Raise)
        and "NotImplementedError" in ast.dump(body[0])
    )


def course_answers(exercise) -> list[tuple[str, ...]]:
    """The course's own answer to ``exercise``, normalised: the lesson's solution, which is the
    check's reference (``helpers.checks.answers``, generated from the lesson's source)."""
    import inspect
    import textwrap

    try:
        source = textwrap.dedent(inspect.getsource(exercise.reference))
    except (OSError, TypeError):
        return []
    answer = normalised(source, exercise.name)
    return [] if answer is None else [answer]


def _tree_key(tokens: tuple[str, ...]) -> str:
    return hashlib.sha256("\0".join(tokens).encode("utf-8")).hexdigest()


def _close_pairs(distinct: list, trees_blind: dict, before: dict):
    """Each distinct tree's key, and the scores of the pairs of distinct trees at or above
    :data:`THRESHOLD` (by index): those of an earlier run (``before``) as stored, the pairs
    with a tree not seen before computed now."""
    keys = [_tree_key(tokens) for tokens, _ in distinct]
    known = set(before.get("trees", ()))
    scores: dict[tuple[int, int], float] = {}
    index = {k: i for i, k in enumerate(keys)}
    for a, b, score in before.get("pairs", ()):
        if a in index and b in index:
            i, j = sorted((index[a], index[b]))
            scores[(i, j)] = score
    new = [i for i, k in enumerate(keys) if k not in known]
    if new:
        shingles = [_shingles(tokens) for tokens, _ in distinct]
        subtrees = [trees_blind[tokens] for tokens, _ in distinct]
        is_new = set(new)
        for i in range(len(distinct)):
            for j in range(i + 1, len(distinct)):
                if i not in is_new and j not in is_new:
                    continue  # both compared before: their pair, if close, is stored
                score = max(_jaccard(shingles[i], shingles[j]),
                            _jaccard(subtrees[i], subtrees[j]))  # fmt: skip
                if score >= THRESHOLD:
                    scores[(i, j)] = score
    return keys, scores


def alike_pairs(
    answers: dict[str, dict[str, str]], exercises: list, store: dict | None = None
) -> tuple[list[tuple[str, str, str, float]], dict[str, int]]:
    """``answers[student][exercise]`` → (pairs at or above :data:`THRESHOLD` as (exercise,
    student_a, student_b, similarity), and per exercise the students whose answer is the
    course's solution, normalised: the same tree).

    ``store`` (from :func:`load_store`, updated in place for :func:`save_store`) is what an
    earlier run worked out: each answer's normalised tokens, by the sha256 of its source, and,
    per exercise, the distinct trees it compared and every pair of them at or above the
    threshold. Then only the trees not seen before are normalised and compared (with every
    tree of this run); the pairs among the others are the stored ones. The result is the same
    as without a store: a pair's score depends on its two trees alone."""
    pairs: list[tuple[str, str, str, float]] = []
    as_course: dict[str, list[str]] = {}
    exercises_store = store.setdefault("exercises", {}) if store is not None else {}
    for exercise in exercises:
        name = exercise.name
        ours = set(course_answers(exercise))
        before = exercises_store.get(name, {})
        known_answers = before.get("answers", {})
        kept_answers: dict[str, list] = {}
        groups: dict[tuple[str, ...], list[str]] = {}
        trees_blind: dict[tuple[str, ...], frozenset[str]] = {}
        as_course[name] = []
        for student in sorted(answers, key=student_order):
            source = answers[student].get(name)
            if not source:
                continue
            digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
            if digest in known_answers and len(known_answers[digest]) == 3:
                stored, stub, subtrees = known_answers[digest]
                tokens = tuple(stored) if stored is not None else None
                subtrees = frozenset(subtrees or ())
            else:
                tokens = normalised(source, name)
                stub = tokens is not None and is_stub(source)
                subtrees = blind(source, name) or frozenset()
            kept_answers[digest] = [tokens, stub, subtrees]
            if tokens is None:
                continue
            if tokens in ours:
                as_course[name].append(student)
                continue
            if stub:
                continue
            groups.setdefault(tokens, []).append(student)
            trees_blind[tokens] = subtrees  # the same tree: the same subtrees
        # The same tree: every pair of the group. Then distinct trees compared pairwise.
        found: list[tuple[str, str, str, float]] = []
        for students in groups.values():
            found += [(name, a, b, 1.0) for i, a in enumerate(students) for b in students[i + 1 :]]
        distinct = list(groups.items())
        keys, scores = _close_pairs(distinct, trees_blind, before)
        for (i, j), score in sorted(scores.items()):
            for a in distinct[i][1]:
                for b in distinct[j][1]:
                    found.append((name, *sorted((a, b), key=student_order), round(score, 3)))
        found.sort(key=lambda p: (-p[3], student_order(p[1]), student_order(p[2])))
        pairs += found
        if store is not None:
            exercises_store[name] = {
                "answers": {
                    d: [list(t) if t is not None else None, stub, sorted(b)]
                    for d, (t, stub, b) in kept_answers.items()
                },
                "trees": keys,
                "pairs": [[keys[i], keys[j], score] for (i, j), score in sorted(scores.items())],
            }
    return pairs, as_course


# ----------------------------------------------------------------------------------------------
# Kept between runs: OUT/.grade/similarity.json


def store_path(out: Path) -> Path:
    return out / ".grade" / "similarity.json"


def load_store(out: Path, digest: str) -> dict:
    """What an earlier run in ``out`` worked out, if the course's helpers (``digest``: the
    normalisation, the threshold) are the same; else an empty store."""
    import json

    try:
        data = json.loads(store_path(out).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"digest": digest}
    if not isinstance(data, dict) or data.get("digest") != digest:
        return {"digest": digest}
    return data


def save_store(store: dict, out: Path) -> None:
    import json

    from .files import write_if_changed

    write_if_changed(store_path(out), json.dumps(store, ensure_ascii=False))
