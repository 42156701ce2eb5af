"""Install the course by pip alone into a fresh venv, and run every lesson there under nbval.

    python tools/check_pip_install.py                      # the newest versions pip finds
    python tools/check_pip_install.py --resolution lowest  # the lowest pyproject.toml allows

What a learner on Colab or an instructor's JupyterHub does: `pip install` of the course's
repository, no requirements.txt, no `make`. A copy of the files git tracks (what a clone or
`pip install git+https://...` gets) is installed into a new venv under a temporary folder, with
pip (newest) or with uv's `--resolution lowest-direct` (each of pyproject.toml's dependencies at
its lower bound; the packages they need at whatever those allow). Then, in that venv:

* `helpers` imports from site-packages (not the checkout), `helpers.live` too (anywidget), and
  the lessons' data (the explorer's scripts, lessons 10-11's weights) came with it;
* the grader did not come with it: `course_grader` does not import, and no module of it is in
  the installed `helpers`;
* with the lowest resolution, each dependency is at the lower bound pyproject.toml gives;
* every executed lesson (solutions/*.ipynb, copied out of the checkout) reruns under nbval
  with its stored outputs (nbval and pytest are the only packages added, after the course);
  its figures are compared by their text alternatives, not their PNG bytes, which carry
  matplotlib's version.

Lesson 09's model files come from the checkout's verified .cache/ (HELPERS_MODEL_DIR; `make
setup` fetched them), not downloaded again. Needs the package index (PyPI); prints what it
installed. tests/test_pip_install.py runs both passes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from learner_copy import tracked

ROOT = Path(__file__).resolve().parent.parent
MODEL_DIR = ROOT / ".cache" / "all-MiniLM-L6-v2"
TEST_TOOLS = ("nbval", "pytest")  # pinned as requirements.txt pins them


def grader_module_digests() -> set[str]:
    """The SHA-256 of each module of the grader (grader/src/course_grader/, every layer): no
    learner's copy of the course may hold one of them, whatever the file is called there (the
    grader's module names, "wire" or "results", are ordinary words the helpers use too)."""
    folder = ROOT / "grader" / "src" / "course_grader"
    return {hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*.py")}


def pins() -> dict[str, str]:
    """requirements.txt's ``name==version`` pins, by lower-case name."""
    found = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^\s#;]+)", line)
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def lower_bounds() -> dict[str, str]:
    """pyproject.toml's dependencies: name -> the version after ``>=``."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    bounds = {}
    for requirement in project["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9][0-9A-Za-z.]*)", requirement.strip())
        if not match:
            raise SystemExit(f"pyproject.toml: {requirement!r} has no lower bound (name>=version)")
        bounds[match.group(1).lower()] = match.group(2)
    return bounds


def run(cmd: list, **kwargs) -> subprocess.CompletedProcess:
    print("+", " ".join(map(str, cmd)), flush=True)
    return subprocess.run(list(map(str, cmd)), check=True, **kwargs)


def copy_of_checkout(into: Path) -> Path:
    for name in tracked():
        if (ROOT / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, into / name)
    return into


def install(folder: Path, course: Path, resolution: str) -> Path:
    """A fresh venv in ``folder`` with the course installed by pip (newest) or uv (lowest)."""
    venv = folder / "venv"
    python = venv / "bin" / "python"
    tools = [f"{name}=={pins()[name]}" for name in TEST_TOOLS]
    quiet = ["--quiet", "--disable-pip-version-check", "--no-cache-dir"]
    if resolution == "newest":
        run([sys.executable, "-m", "venv", venv])
        run([python, "-m", "pip", "install", *quiet, course])
        run([python, "-m", "pip", "install", *quiet, *tools])
    else:
        uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
        if uv is None:
            raise SystemExit("uv is not installed (requirements.txt pins it): run make setup")
        run([uv, "venv", "--quiet", "--python", sys.executable, venv])
        run([uv, "pip", "install", "--quiet", "--python", python, "--resolution", "lowest-direct",
             course])  # fmt: skip
        run([uv, "pip", "install", "--quiet", "--python", python, *tools])
    return python


CHECK_INSTALL = r"""
import hashlib, importlib.util, json, sys
from pathlib import Path
import helpers, helpers.live, helpers.checks, helpers.induction
from importlib import metadata
package = Path(helpers.__file__).parent
assert "site-packages" in package.parts, f"helpers came from {package}, not the install"
assert importlib.util.find_spec("course_grader") is None, "the grader came with the course"
grader_digests = set(json.loads(sys.argv[1]))
leaked = sorted(p.relative_to(package).as_posix() for p in package.rglob("*.py")
                if hashlib.sha256(p.read_bytes()).hexdigest() in grader_digests)
assert not leaked, f"grader modules in the learner's package: {leaked}"
data = sorted(p.name for p in package.rglob("*") if p.suffix in (".js", ".css", ".npz"))
assert "weights.npz" in data and "attention_grid.js" in data, data
names = [r.split(">=")[0].split("[")[0] for r in metadata.requires("self-attention-course")
         if "extra ==" not in r]
print(json.dumps({n.lower(): metadata.version(n) for n in names}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolution", choices=("newest", "lowest"), default="newest")
    parser.add_argument("--lessons", nargs="*", help="two-digit numbers (default: all)")
    args = parser.parse_args()
    if not (MODEL_DIR / "model.safetensors").is_file():
        raise SystemExit(f"no model files in {MODEL_DIR}: run `make real-model` first")
    with tempfile.TemporaryDirectory(prefix="pip-install-") as temporary:
        folder = Path(temporary)
        course = copy_of_checkout(folder / "course")
        python = install(folder, course, args.resolution)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        env.update(HELPERS_MODEL_DIR=str(MODEL_DIR), MPLBACKEND="Agg")
        grader_modules = json.dumps(sorted(grader_module_digests()))
        versions = json.loads(run([python, "-c", CHECK_INSTALL, grader_modules], cwd=folder,
                                  env=env, capture_output=True, text=True).stdout)  # fmt: skip
        print("installed:", ", ".join(f"{n} {v}" for n, v in sorted(versions.items())))
        if args.resolution == "lowest":
            from packaging.version import Version  # "2.0.0" is the bound "2.0"

            wrong = {n: (versions.get(n), v) for n, v in lower_bounds().items()
                     if versions.get(n) is None or Version(versions[n]) != Version(v)}  # fmt: skip
            if wrong:
                raise SystemExit(f"not at the lower bounds (installed, bound): {wrong}")
        lessons = folder / "lessons"
        lessons.mkdir()
        for notebook in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
            if not args.lessons or notebook.name[:2] in args.lessons:
                shutil.copy2(notebook, lessons / notebook.name)
        # The lessons run where neither the checkout nor its conftest.py can be found.
        # Figures are compared by their text alternative and their presence, not their bytes:
        # matplotlib writes its version into every PNG (and renders a little differently).
        sanitize = folder / "sanitize.cfg"
        sanitize.write_text(
            "[png]\nregex: data:image/png;base64,[A-Za-z0-9+/=]+\n"
            "replace: data:image/png;base64,PNG\n"
        )
        nbval = ["--nbval", "--nbval-current-env", "--nbval-cell-timeout=900",
                 f"--nbval-sanitize-with={sanitize}"]  # fmt: skip
        run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *nbval,
             *sorted(lessons.glob("*.ipynb"))], cwd=lessons, env=env)  # fmt: skip
    print(f"pip install ({args.resolution}): every lesson reran with its stored outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
