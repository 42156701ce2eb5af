"""How the grader's similarity pass grows with an answer built to stall it.

    .venv/bin/python benchmarks/bench_hostile_answers.py [--repeats 5]

Two hostile answers to ``scaled_scores`` (tests/support/hostile_answers.py): a chain of n
single-use names (put back, they nested past any recursion limit) and n single-use names summed
at the end (the comparison once grew with their square: 19 s at n = 2,000, hours beyond). For
each, the name-blind pass and the pairing of two copies (what ``make grade`` does for two
students), median of the repeats, at a small n and a large one. Printed as the ratio of the two
times against the ratio of the two sizes: near or below 1 per name means the time grows no
faster than the answer (linear); a ratio that grows with n squared would be the old behaviour.
Run on a quiet machine; the ratio, not the seconds, is the result.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from course_grader.outputs.similarity import alike_pairs, blind  # noqa: E402
from support.hostile_answers import chain, flat  # noqa: E402

from helpers import checks  # noqa: E402

SIZES = {"chain": (chain, 90, 1200), "flat": (flat, 90, 6000)}


def seconds(source: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        blind(source, "scaled_scores")
        alike_pairs(
            {"a": {"scaled_scores": source}, "b": {"scaled_scores": source}},
            [checks.scaled_scores],
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    for name, (make, small, large) in SIZES.items():
        t_small, t_large = seconds(make(small), args.repeats), seconds(make(large), args.repeats)
        growth = t_large / t_small
        print(
            f"{name}: n = {small}: {t_small * 1000:.1f} ms, n = {large}: {t_large * 1000:.1f} ms; "
            f"time x{growth:.1f} for names x{large / small:.1f} "
            f"({growth / (large / small):.2f} per name)"
        )


if __name__ == "__main__":
    main()
