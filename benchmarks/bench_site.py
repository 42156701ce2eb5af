"""The website's size, and each page's load time as a ratio against the site's bare page.

    python benchmarks/bench_site.py [--repeats 7]     # after `make site`

Size: every file of build/site/, in total and by part (the lesson pages, the browser code
shipped in _static/vendor/, the theme and the rest), and each lesson page's HTML (its figures
and widget state are inside it).

Load time: in headless Chromium over a local server, with a cold cache each time, from
navigation to a settled page: every widget drawn from its saved state and MathJax done. A
machine's speed varies 2x from day to day here, so each lesson page is timed in turn with the
baseline, genindex.html (the same theme, its scripts and fonts, but no lesson: no widgets'
HTML manager, RequireJS or MathJax either, so the ratio counts what a lesson page adds, those
included), and the median of the pairwise ratios is reported beside the medians in ms. Written
to build/bench-site.json.
"""

from __future__ import annotations

import argparse
import http.server
import json
import socketserver
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "build" / "site"
sys.path.insert(0, str(ROOT / "tools"))
from run_tests import find_chromium  # noqa: E402

BASELINE = "genindex.html"
SETTLED = """async () => {
  const scripts = [...document.querySelectorAll(
      'script[type="application/vnd.jupyter.widget-view+json"]')];
  const start = performance.now();
  while (!scripts.every((s) => s.previousElementSibling
                              && s.previousElementSibling.childElementCount > 0)) {
    if (performance.now() - start > 60000) throw new Error("widgets not drawn after 60 s");
    await new Promise((r) => setTimeout(r, 20));
  }
  if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
}"""


def size_of(paths) -> int:
    return sum(p.stat().st_size for p in paths if p.is_file())


def sizes() -> dict:
    files = [p for p in SITE.rglob("*") if p.is_file()]
    pages = sorted(SITE.glob("[0-9][0-9]_*.html"))
    vendor = [p for p in files if "_static/vendor/" in p.as_posix()]
    return {
        "total_mb": round(size_of(files) / 1e6, 1),
        "files": len(files),
        "lesson_pages_mb": round(size_of(pages) / 1e6, 1),
        "vendor_mb": round(size_of(vendor) / 1e6, 1),
        "rest_mb": round((size_of(files) - size_of(pages) - size_of(vendor)) / 1e6, 1),
        "page_mb": {p.stem: round(p.stat().st_size / 1e6, 2) for p in pages},
    }


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=str(SITE), **kwargs)

    def log_message(self, *args):
        pass


def load_ms(browser, url: str) -> float:
    context = browser.new_context()  # a cold cache each time
    page = context.new_page()
    start = time.perf_counter()
    page.goto(url)
    page.evaluate(SETTLED)
    elapsed = (time.perf_counter() - start) * 1000
    context.close()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if not (SITE / "index.html").is_file():
        sys.exit("no build/site/: run `make site` first")
    chromium = find_chromium()
    if chromium is None:
        sys.exit("no Chromium found (see tools/run_tests.py)")
    from playwright.sync_api import sync_playwright

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    pages = sorted(p.name for p in SITE.glob("[0-9][0-9]_*.html"))
    report = {"sizes": sizes(), "repeats": args.repeats, "baseline": BASELINE, "pages": {}}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        load_ms(browser, f"{base}/{BASELINE}")  # warm the server and the browser once
        for name in pages:
            ours, theirs = [], []
            for _ in range(args.repeats):
                theirs.append(load_ms(browser, f"{base}/{BASELINE}"))
                ours.append(load_ms(browser, f"{base}/{name}"))
            ratios = [a / b for a, b in zip(ours, theirs)]
            report["pages"][name] = {
                "median_ms": round(statistics.median(ours)),
                "baseline_median_ms": round(statistics.median(theirs)),
                "median_ratio": round(statistics.median(ratios), 2),
            }
            print(f"{name:40s} {report['pages'][name]}", flush=True)
        browser.close()
    server.shutdown()
    out = ROOT / "build" / "bench-site.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["sizes"], indent=2))
    print(f"written to {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
