"""The browser code the course's website ships inside itself (no CDN), fetched hash-pinned.

    python tools/site_assets.py DEST     # put every asset under DEST (a site's _static/vendor)

A page of the site (``make site``, tools/build_site.py) needs three programs from npm: the
Jupyter widgets' HTML manager (it draws the widgets from the state saved in the executed
lesson), RequireJS (which loads it and anywidget's module) and MathJax 3 (the formulas). By
default Sphinx and myst-nb load each from a CDN (cdnjs, jsdelivr); the site must work offline
and request nothing outside itself, so each comes from the npm registry at build time only, as
a pinned tarball whose sha512 is checked (the ``integrity`` npm records), and only the files a
page loads are copied. The tarballs are kept in ``.cache/site-assets/`` (a second build needs no
network). anywidget's module is not fetched: the pinned anywidget wheel ships it.

Why MathJax 3 and not 4 (Sphinx 9's default): MathJax 4 keeps its fonts in a second package
that it fetches from a CDN by default, while MathJax 3's ``es5/`` folder carries its own.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import shutil
import sys
import tarfile
import urllib.request
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "site-assets"
REGISTRY = "https://registry.npmjs.org"


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    integrity: str  # npm's: "sha512-" + base64 of the tarball's SHA-512
    licence: str
    files: tuple[str, ...]  # globs inside the tarball's package/ folder
    into: str  # folder under DEST

    @property
    def tarball_url(self) -> str:
        return f"{REGISTRY}/{self.name}/-/{self.name.rsplit('/', 1)[-1]}-{self.version}.tgz"

    @property
    def cache_file(self) -> Path:
        return CACHE / f"{self.name.replace('/', '+')}-{self.version}.tgz"


PACKAGES = (
    Package(
        "@jupyter-widgets/html-manager",
        "1.0.15",
        "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",
        "BSD-3-Clause",
        # embed-amd.js loads its Font Awesome fonts from its own folder; browsers take woff2.
        # embed.js.LICENSE.txt: the notices of what its bundles include (both bundles alike).
        ("dist/embed-amd.js", "dist/*.woff2", "dist/embed.js.LICENSE.txt"),
        "widgets",
    ),
    Package(
        "requirejs",
        "2.3.8",
        "sha512-7/cTSLOdYkNBNJcDMWf+luFvMriVm7eYxp4BcFCsAX0wF421Vyce5SXP17c+Jd5otXKGNehIonFlyQXSowL6Mw==",
        "MIT",
        ("require.js",),  # its licence notice is in its header
        "widgets",
    ),
    Package(
        "mathjax",
        "3.2.2",
        "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
        "Apache-2.0",
        # The combined component, its fonts, and what its menu loads on demand (the
        # accessibility extensions: speech, the expression explorer; "Show Math As").
        (
            "es5/tex-mml-chtml.js",
            "es5/output/chtml/fonts/woff-v2/*",
            "es5/a11y/*",
            "es5/sre/*",
            "es5/sre/mathmaps/*",
            "es5/ui/*",
            "es5/input/mml/*",
            "LICENSE",
        ),
        "mathjax",
    ),
)


def check_integrity(data: bytes, package: Package) -> None:
    algorithm, _, expected = package.integrity.partition("-")
    got = base64.b64encode(hashlib.new(algorithm, data).digest()).decode("ascii")
    if got != expected:
        raise RuntimeError(
            f"{package.name}@{package.version}: the tarball's {algorithm} is {got}, not the "
            f"pinned {expected}. It was not used. Delete {package.cache_file} and retry; if it "
            "repeats, the registry serves a different file: do not change the pin unchecked."
        )


def tarball(package: Package) -> bytes:
    """The package's tarball, from the cache or the registry, its hash checked either way."""
    if package.cache_file.is_file():
        data = package.cache_file.read_bytes()
    else:
        try:
            with urllib.request.urlopen(package.tarball_url, timeout=120) as response:
                data = response.read()
        except OSError as error:
            raise RuntimeError(
                f"could not fetch {package.tarball_url} ({error}). The website's build needs the "
                f"npm registry once, to fill {CACHE} (a later build needs no network)."
            ) from error
    check_integrity(data, package)
    package.cache_file.parent.mkdir(parents=True, exist_ok=True)
    if not package.cache_file.is_file():
        tmp = package.cache_file.with_suffix(".part")
        tmp.write_bytes(data)
        tmp.replace(package.cache_file)
    return data


def install(dest: Path) -> list[Path]:
    """Copy every package's files under ``dest``; return the files written."""
    written = []
    for package in PACKAGES:
        with tarfile.open(fileobj=io.BytesIO(tarball(package)), mode="r:gz") as archive:
            for member in archive.getmembers():
                inside = member.name.removeprefix("package/")
                if not member.isfile() or not any(fnmatch(inside, g) for g in package.files):
                    continue
                # dist/embed-amd.js -> widgets/embed-amd.js; es5/x -> mathjax/x; the licence
                # beside them under the package's name.
                if inside == "LICENSE":  # beside the files, under the package's name
                    relative = f"LICENSE.{package.name.rsplit('/', 1)[-1]}.txt"
                else:
                    relative = (
                        inside.split("/", 1)[1] if inside.startswith(("dist/", "es5/")) else inside
                    )
                target = dest / package.into / relative
                if ".." in Path(relative).parts:
                    raise RuntimeError(f"{package.name}: refusing the path {member.name}")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.extractfile(member).read())
                written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path)
    args = parser.parse_args(argv)
    if args.dest.exists():
        shutil.rmtree(args.dest)
    try:
        files = install(args.dest)
        (args.dest / "THIRD_PARTY.txt").write_text(notice())
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{len(files)} files from {len(PACKAGES)} npm packages into {args.dest}")
    return 0


def _licence_text(distribution: str) -> str:
    """The licence file an installed Python distribution ships (its wheel's licenses/)."""
    from importlib import metadata

    files = metadata.distribution(distribution).files or []
    found = [f for f in files if "licen" in f.name.lower() and "dist-info" in str(f.parent)]
    if not found:
        raise RuntimeError(f"{distribution}: its wheel ships no licence file")
    return found[0].read_text(encoding="utf-8").strip()


def notice() -> str:
    """What the site ships of others', for its THIRD_PARTY.txt: each piece, its licence, and
    the licence texts that are not beside the files (MathJax's is LICENSE.mathjax.txt in
    mathjax/, RequireJS's in require.js's header, what the HTML manager bundles in
    widgets/embed.js.LICENSE.txt)."""
    lines = ["Browser code this website ships, unchanged, from the npm registry:", ""]
    for p in PACKAGES:
        lines.append(f"- {p.name} {p.version} ({p.licence}): {p.tarball_url} ({p.integrity})")
        if p.into == "widgets" and p.name.endswith("html-manager"):
            lines += [
                "  It bundles Font Awesome Free 5.15.4 (its fonts: widgets/*.woff2), whose",
                "  fonts are under the SIL Open Font License 1.1 and its code under MIT:",
                "  https://fontawesome.com/license/free",
            ]
    lines += [
        "- anywidget's front-end module (widgets/anywidget.js), from the anywidget wheel (MIT)",
        "",
        "The @jupyter-widgets/html-manager tarball has no licence file; its licence is",
        "the Jupyter widgets project's, as the ipywidgets wheel ships it:",
        "",
        _licence_text("ipywidgets"),
        "",
        "anywidget's licence, as its wheel ships it:",
        "",
        _licence_text("anywidget"),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
