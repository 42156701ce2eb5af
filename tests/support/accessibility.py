"""The accessibility rules every page and lesson is audited against (axe-core's tags)."""

# WCAG 2.1 A and AA, and axe's best practices.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
# axe-core's rules that are experimental (off under runOnly by tags) but that a page must pass:
# a control whose name is not the words it shows (the theme's search button once).
AXE_EXPERIMENTAL_RULES = {"label-content-name-mismatch": {"enabled": True}}
