"""The lessons' own answers checked on the graded build's helpers, over many draws.

    python benchmarks/graded_sweep.py [DRAWS]      # default 100 per exercise

Writes the graded learner copy into a temporary folder (tools/learner_copy.py), then, in a
Python whose ``helpers`` is that copy's, checks each exercise's answer from the full course
(``src/helpers/checks/answers/``) DRAWS times, each time on fresh cases: a check may say ✓ or
*Graded later*, never ✗ (a false ✗ in the graded build), and each exercise should say the
same every time. Prints the exercises that ever said ✗, and the count of each verdict.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import learner_copy  # noqa: E402

IN_THE_COPY = r"""
import json
from helpers import checks
from helpers.checks.exercise import Exercise
wrong, counts = [], {}
for item in checks.catalogue():
    if isinstance(item, Exercise):
        seen = {"right": 0, "graded later": 0}
        for _ in range(int(sys.argv[2])):
            result = item.check(full[item.name])
            if result.passed is False:
                wrong.append([item.name, result.mistake, result.message[:200]])
            seen["right" if result.passed else "graded later"] += 1
        counts[item.name] = seen
print(json.dumps({"wrong": wrong, "counts": counts}))
"""


def main(draws: int) -> int:
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder)
        learner_copy.write_copy(copy, learner_copy.learner_files(graded=True))
        out = learner_copy.run_with_answers(copy, IN_THE_COPY, str(draws))
    found = json.loads(out.splitlines()[-1])
    for name, seen in found["counts"].items():
        print(f"{name:28s} right {seen['right']:4d}  graded later {seen['graded later']:4d}")
    print(f"false ✗ in the graded build: {len(found['wrong'])}")
    for name, mistake, message in found["wrong"]:
        print(f"  {name} ({mistake}): {message}")
    return 1 if found["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100))
