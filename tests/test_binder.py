"""Binder and JupyterLab set-up, checked statically (fast, no network, no Docker).

Binder builds the course with repo2docker: it finds the top-level ``environment.yml`` (conda
build pack), creates the environment, runs ``postBuild``, then opens JupyterLab at the
``urlpath`` of the link. These tests check the pieces it relies on.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
import yaml
from support.requirements import normalise, requirement_pins

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
BINDER_LINK = re.compile(r"https://mybinder\.org/v2/gh/[^\s)\]>]+")


def section(name: str) -> str:
    match = re.search(rf"<!-- {name}:start -->(.*?)<!-- {name}:end -->", README, re.S)
    assert match, f"README.md has no <!-- {name}:start --> ... <!-- {name}:end --> section"
    return match.group(1)


def urlpath_target(link: str) -> str:
    """The file a Binder link opens: ``?urlpath=lab/tree/<file>``."""
    query = parse_qs(urlparse(link).query)
    assert "urlpath" in query, f"Binder link without urlpath: {link}"
    urlpath = query["urlpath"][0]
    assert urlpath.startswith("lab/tree/"), f"Binder link does not open JupyterLab: {link}"
    return urlpath.removeprefix("lab/tree/")


# --------------------------------------------------------------------------- environment.yml


@pytest.fixture(scope="module")
def environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def test_environment_yml_parses_and_uses_conda_forge(environment):
    assert isinstance(environment, dict) and environment.get("dependencies")
    channels = environment.get("channels", [])
    assert channels and channels[0] == "conda-forge", f"channels: {channels}"
    assert "defaults" not in channels


def test_environment_yml_pins_python_311_or_newer(environment):
    pythons = [
        d for d in environment["dependencies"] if isinstance(d, str) and d.startswith("python")
    ]
    assert len(pythons) == 1, f"expected one python pin, found {pythons}"
    # repo2docker reads the version with this pattern (python\s*=+\s*([\d.]*)).
    match = re.fullmatch(r"python\s*=+\s*(\d+)\.(\d+)(\.\d+)?", pythons[0])
    assert match, f"python is not pinned to a version: {pythons[0]!r}"
    assert (int(match.group(1)), int(match.group(2))) >= (3, 11)


def test_environment_yml_lists_exactly_requirements_txt(environment):
    wanted = requirement_pins((ROOT / "requirements.txt").read_text().splitlines())
    listed: dict[str, str] = {}
    for dep in environment["dependencies"]:
        if isinstance(dep, dict):
            assert set(dep) == {"pip"}, f"unexpected dependency block {dep}"
            for name, version in requirement_pins(dep["pip"]).items():
                assert name not in listed, f"{name} listed twice"
                listed[name] = version
        else:
            match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:=+\s*(\S+))?", dep)
            assert match, f"cannot read conda dependency {dep!r}"
            name = normalise(match.group(1))
            if name in ("python", "pip"):
                continue
            assert match.group(2), f"conda dependency {dep!r} is not pinned"
            assert name not in listed, f"{name} listed twice"
            listed[name] = match.group(2)
    missing = sorted(set(wanted) - set(listed))
    extra = sorted(set(listed) - set(wanted))
    differ = {
        n: (wanted[n], listed[n]) for n in set(wanted) & set(listed) if wanted[n] != listed[n]
    }
    assert not missing, f"in requirements.txt, not in environment.yml: {missing}"
    assert not extra, f"in environment.yml, not in requirements.txt: {extra}"
    assert not differ, f"versions differ (requirements.txt, environment.yml): {differ}"


def test_no_binder_folder_hides_the_top_level_files():
    # repo2docker uses binder/ or .binder/ instead of the top level when one exists.
    for name in ("binder", ".binder"):
        assert not (ROOT / name).exists(), f"{name}/ would make repo2docker ignore environment.yml"


# --------------------------------------------------------------------------- postBuild


def test_postbuild_is_an_executable_strict_bash_script():
    post_build = ROOT / "postBuild"
    assert post_build.is_file(), "postBuild is missing"
    assert post_build.stat().st_mode & stat.S_IXUSR and os.access(post_build, os.X_OK)
    lines = post_build.read_text().splitlines()
    assert lines[0] in ("#!/usr/bin/env bash", "#!/bin/bash"), lines[0]
    assert "set -euo pipefail" in (line.strip() for line in lines)


def test_postbuild_installs_helpers_and_the_jupyterlab_settings():
    text = (ROOT / "postBuild").read_text()
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert re.search(r"pip install\b.*--no-deps\b.*-e \.", code), "helpers not installed"
    assert (ROOT / "pyproject.toml").exists(), "pip install -e . needs pyproject.toml"
    # JupyterLab reads overrides.json from <prefix>/share/jupyter/lab/settings of the env it
    # runs in: NB_PYTHON_PREFIX on Binder.
    assert "NB_PYTHON_PREFIX" in code
    assert "share/jupyter/lab/settings" in code and "overrides.json" in code
    # Every repository file it names exists.
    named = re.findall(r"(?<![\w$/{.-])((?:[\w.-]+/)+[\w.-]+\.(?:json|txt|yml|yaml|toml|py))", code)
    repo_files = [n for n in named if not n.startswith(("share/", "lab/"))]
    assert "jupyter/overrides.json" in repo_files
    # The server settings (kernel connection encrypted where supported) go where jupyter_server
    # reads the environment's config: <prefix>/etc/jupyter/jupyter_server_config.json.
    assert "jupyter/jupyter_server_config.json" in repo_files
    assert "etc/jupyter/jupyter_server_config.json" in code
    for name in repo_files:
        assert (ROOT / name).exists(), f"postBuild uses {name}, which does not exist"


# --------------------------------------------------------------------------- JupyterLab


def test_overrides_json_opens_py_files_as_notebooks():
    settings = json.loads((ROOT / "jupyter" / "overrides.json").read_text())
    viewers = settings["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["python"] == "Jupytext Notebook"


def test_server_config_encrypts_kernel_connections_where_the_kernel_supports_it():
    config = json.loads((ROOT / "jupyter" / "jupyter_server_config.json").read_text())
    assert config == {"KernelManager": {"transport_encryption": "auto"}}
    makefile = (ROOT / "Makefile").read_text()
    assert "etc/jupyter/jupyter_server_config.json" in makefile  # make lab uses it too


# --------------------------------------------------------------------------- README links


def test_readme_binder_badge_opens_start_here_in_jupyterlab():
    text = section("binder")
    assert "https://mybinder.org/badge_logo.svg" in text, "no Binder badge"
    links = BINDER_LINK.findall(text)
    assert links, "no Binder link in the binder section"
    for link in links:
        target = urlpath_target(link)
        assert target == "notebooks/00_start_here.ipynb", link
        assert (ROOT / target).exists()


def test_readme_lesson_table_links_local_and_binder_copies_of_existing_notebooks():
    text = section("toc")
    definitions = dict(re.findall(r"^\[([^\]]+)\]:\s*(\S+)\s*$", text, re.M))
    rows = [line for line in text.splitlines() if re.match(r"\|\s*\d\d\s*\|", line)]
    assert rows, "no lesson rows in the README table"
    for row in rows:
        number = re.match(r"\|\s*(\d\d)", row).group(1)
        local = re.findall(r"\]\((notebooks/[^)]+\.ipynb)\)", row)
        assert len(local) == 1, f"lesson {number}: expected one local link, got {local}"
        assert local[0].startswith(f"notebooks/{number}_"), row
        assert (ROOT / local[0]).exists(), f"lesson {number}: {local[0]} does not exist"
        refs = re.findall(r"\[Binder\]\[([^\]]+)\]", row)
        assert len(refs) == 1, f"lesson {number}: expected one Binder link"
        assert refs[0] in definitions, f"lesson {number}: [{refs[0]}] is not defined"
        assert urlpath_target(definitions[refs[0]]) == local[0], row
    for name, url in definitions.items():
        if "mybinder.org" in url:
            assert (ROOT / urlpath_target(url)).exists(), f"[{name}] opens a missing file"


def test_every_binder_link_in_the_readme_uses_one_repository_and_ref():
    prefixes = {
        re.match(r"(https://mybinder\.org/v2/gh/[^/]+/[^/]+/[^?]+)", link).group(1)
        for link in BINDER_LINK.findall(README)
    }
    assert len(prefixes) == 1, f"Binder links point at different repositories/refs: {prefixes}"


def test_postbuild_fetches_lesson_09s_model():
    """Binder has no `make setup`: postBuild fetches and verifies the real model's files."""
    text = (ROOT / "postBuild").read_text()
    code = [line.strip() for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert "python -m helpers.pretrained" in code, "postBuild does not fetch lesson 09's model"
    install = code.index("python -m pip install --no-cache-dir --no-deps -e .")
    assert code.index("python -m helpers.pretrained") > install, "fetch before helpers install"
    pins = requirement_pins((ROOT / "requirements.txt").read_text().splitlines())
    assert {"safetensors", "tokenizers"} <= set(pins), "the model's readers are not pinned"
    assert "torch" not in pins, "PyTorch must never be a dependency of the course"
