"""Answers built to stall the grader's similarity pass, for its test and its benchmark."""


def chain(n: int) -> str:
    """``scaled_scores`` as a chain of ``n`` single-use names (each the negation of the last)."""
    lines = "".join(f"    x{i} = -x{i - 1}\n" for i in range(1, n))
    return f"def scaled_scores(Q, K):\n    x0 = Q\n{lines}    return x{n - 1} @ K.T\n"


def flat(n: int) -> str:
    """``scaled_scores`` with ``n`` single-use names, all summed at the end."""
    lines = "".join(f"    a{i} = Q\n" for i in range(n))
    names = ", ".join(f"a{i}" for i in range(n))
    return f"def scaled_scores(Q, K):\n{lines}    return np.sum([{names}]) * 0 + Q @ K.T\n"
