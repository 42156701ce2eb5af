"""Sphinx configuration of the course's website (``make site``; tools/build_site.py).

tools/build_site.py copies this file into the site's source folder beside the lesson pages it
writes (the executed lessons, their answers replaced by the learner's stubs) and the browser
code it fetched (tools/site_assets.py), then runs Sphinx. Nothing here is fetched when a page
loads: every script, style and font is a file of the site.
"""

import os

project = "Self-attention, from Z to causal masking"
author = "the course's authors"
copyright = "the course's authors. Text and figures CC BY 4.0, code MIT"
# githubpages: writes .nojekyll, so that GitHub Pages serves the _static/ folder as it is.
extensions = ["myst_nb", "sphinx.ext.githubpages"]
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# tools/build_site.py executed the lessons (their outputs and widget state saved): Sphinx shows
# those outputs and runs nothing.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
# What a page shows when an output has several forms. A live widget first (its saved state,
# drawn by the HTML manager); then the HTML form, which for a figure is an <img> with its text
# alternative (helpers.plots.image_bundle); the bare PNG only where nothing else is given.
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", 10),
    ("html", "text/html", 20),
    ("html", "image/png", 30),
    ("html", "text/plain", 40),
]

# The widgets: RequireJS, then the course's settings for it (where anywidget's module is), then
# the HTML manager, all from _static/vendor/ (myst-nb's default is three CDNs).
nb_ipywidgets_js = {
    "vendor/widgets/require.js": {},
    "course-widgets.js": {},
    # Where it would look for a module it does not have: the site itself, never a CDN (anywidget's
    # module is found through course-widgets.js first).
    "vendor/widgets/embed-amd.js": {"data-jupyter-widgets-cdn": "_static/vendor/widgets/"},
}
# MathJax 3 from the site (Sphinx's default is MathJax 4 from a CDN); its settings, and the
# MathJax 2 call the widgets' HTML manager makes, in mathjax-config.js.
mathjax_path = "vendor/mathjax/tex-mml-chtml.js"
mathjax_config_path = "mathjax-config.js"

html_theme = "sphinx_book_theme"
templates_path = ["_templates"]
# The theme's sidebar, with the course's name in a landmark (_templates/course-title.html).
html_sidebars = {"**": ["course-title.html", "search-button-field.html", "sbt-sidebar-nav.html"]}
html_title = project
html_static_path = ["_static"]
html_css_files = ["course-site.css"]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
_repository = os.environ.get("COURSE_REPOSITORY", "OWNER/REPO")  # build_site.py sets it
html_theme_options = {
    "repository_url": f"https://github.com/{_repository}",
    "use_repository_button": True,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "navigation_with_keys": False,
    # The sidebar has the search button: none in the header above the page too.
    "navbar_persistent": [],
    # The header's buttons without the light/dark switcher (_templates/course-header-buttons.html).
    "article_header_end": ["course-header-buttons.html"],
}
html_context = {"default_mode": "light"}
