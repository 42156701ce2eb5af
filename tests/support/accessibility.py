"""The accessibility rules every page and lesson is audited against (axe-core's tags)."""

# WCAG 2.1 A and AA, and axe's best practices.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
