// Shared by map_preview.js and attention_grid.js (helpers.explorer_front puts it ahead of
// each: an anywidget module is one file, with no imports between them).
//
// drawMapAhead(explorer, svg): a head or layer change drawn in the browser, before the kernel
// answers. The map goes into the explorer's heatmap now; its bars and message still show the
// previous map's numbers until the kernel's answer arrives, so until then the explorer is
// marked pending: class explorer-pending (the bars and the message dimmed, map_preview.css)
// and aria-busy (a screen reader holds the live message until it is the new map's). The
// kernel's answer is the map it sends: the first map in the heatmap not drawn here.

const AHEAD = "data-drawn-ahead";

function drawMapAhead(explorer, svg) {
  const target = explorer && explorer.querySelector(".explorer-heatmap-map .widget-html-content");
  if (!svg || !target) return false;
  target.innerHTML = svg;
  if (target.firstElementChild) target.firstElementChild.setAttribute(AHEAD, "");
  explorer.classList.add("explorer-pending");
  explorer.setAttribute("aria-busy", "true");
  if (!target.__answered) {
    target.__answered = new MutationObserver(() => {
      const map = target.firstElementChild;
      if (map && map.hasAttribute(AHEAD)) return; // still one drawn here
      target.__answered.disconnect();
      target.__answered = null;
      explorer.classList.remove("explorer-pending");
      explorer.removeAttribute("aria-busy");
    });
    target.__answered.observe(target, { childList: true });
  }
  return true;
}
