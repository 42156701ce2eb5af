"""The math modules never import the drawing, widget or checking layers."""

import subprocess
import sys


def test_math_modules_import_only_numpy():
    code = (
        "import sys\n"
        "import helpers, helpers.scaling, helpers.training\n"
        "bad = [m for m in ('matplotlib', 'ipywidgets', 'IPython', 'helpers.checks') "
        "if m in sys.modules]\n"
        "print(bad)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
