"""The similarity check against ``copydetect`` on the same class (issue 34, section 4).

``tests/support/copy_class.py`` holds independent correct answers to lesson 04's
``softmax`` and ``attention`` and copies of some of them made with a copier's first edits. A
detector is usable on it when some threshold reports every copy and no independent pair: its
lowest copy scores above its highest independent pair. Prints both for
``course_grader.outputs.similarity.similarity`` and for copydetect's name-blind winnowed k-grams at
several k (its similarity of a pair: the smaller of its two overlap shares).

copydetect is not a dependency of the course: install it apart to run this, e.g.
``pip install --target /tmp/cdlib copydetect==0.5.0 --no-deps`` then
``PYTHONPATH=/tmp/cdlib .venv/bin/python benchmarks/compare_copydetect.py``.
"""

from __future__ import annotations

import io
import itertools
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from course_grader.outputs.similarity import similarity  # noqa: E402
from support import copy_class  # noqa: E402


def copydetect_score(k: int, window: int):
    from copydetect.detector import CodeFingerprint, compare_files

    def score(a: str, b: str, exercise: str) -> float:
        prints = [CodeFingerprint(f"{n}.py", k, window, fp=io.StringIO(s))
                  for n, s in (("a", a), ("b", b))]  # fmt: skip
        return float(min(compare_files(*prints)[1]))

    return score


def main() -> None:
    warnings.filterwarnings("ignore")  # copydetect warns about short files
    detectors = [("course_grader", similarity)]
    detectors += [(f"copydetect k={k}", copydetect_score(k, 1)) for k in (5, 8, 12, 25)]
    for name, score in detectors:
        copies, independent = [], []
        for exercise, answers in copy_class.INDEPENDENT.items():
            for edit, (source, copied) in copy_class.COPIES[exercise].items():
                copies.append((score(copied, answers[source], exercise), f"{exercise}/{edit}"))
            for a, b in itertools.combinations(answers, 2):
                independent.append((score(answers[a], answers[b], exercise), f"{exercise}/{a}-{b}"))
        low, high = min(copies), max(independent)
        verdict = "separates" if low[0] > high[0] else "does not separate"
        print(f"{name:>15}: lowest copy {low[0]:.2f} ({low[1]}), highest independent pair "
              f"{high[0]:.2f} ({high[1]}): {verdict}")  # fmt: skip


if __name__ == "__main__":
    main()
