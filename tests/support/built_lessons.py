"""What the built lessons hold: the tests that compare a lesson's prose with its numbers read
them here, from the executed solution in ``solutions/``."""

from __future__ import annotations

import json
from pathlib import Path

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


def printed(lesson: str) -> str:
    """Everything the executed solution ``lesson`` (e.g. "07_cost_of_attention") printed, in
    order."""
    notebook = json.loads((SOLUTIONS / f"{lesson}.ipynb").read_text("utf-8"))
    return "".join(
        "".join(output.get("text", ""))
        for cell in notebook["cells"]
        if cell["cell_type"] == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream"
    )
