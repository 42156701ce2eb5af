// Shared by map_preview.js and attention_grid.js (helpers.front puts it ahead of
// each: an anywidget module is one file, with no imports between them).
//
// drawMapAhead(explorer, svg): a head or layer change drawn in the browser, before the kernel
// answers. The map goes into the explorer's heatmap now; its bars and message still show the
// previous map's numbers until the kernel's answer arrives, so until then the explorer is
// marked pending: class explorer-pending (the bars and the message dimmed, map_preview.css)
// and aria-busy on both (a screen reader that honours aria-busy holds the live message until it
// is the new map's; not all do).
// Should the answer take longer than WAITING_MS (a cell still running holds the kernel), a
// line under the message says so, in a live region of its own: otherwise a screen reader
// would hear nothing at all until the kernel is free. The kernel's answer is the map it sends:
// the first map in the heatmap not drawn here.

const AHEAD = "data-drawn-ahead";
const WAITING_MS = 1000;
const WAITING =
  "Waiting for the kernel (is a cell running?): until it answers, the bars and the " +
  "message above still describe the previous map.";

// A page with no kernel at all (the course's website: site/_static/course-widgets.js sets
// data-course-no-kernel on the page to its own words) says that instead.
const waitingText = () => document.documentElement.dataset.courseNoKernel || WAITING;
function drawMapAhead(explorer, svg) {
  const target = explorer && explorer.querySelector(".explorer-heatmap-map .widget-html-content");
  if (!svg || !target) return false;
  target.innerHTML = svg;
  if (target.firstElementChild) target.firstElementChild.setAttribute(AHEAD, "");
  explorer.classList.add("explorer-pending");
  const stale = [...explorer.querySelectorAll(".explorer-message, .explorer-bars")];
  stale.forEach((element) => element.setAttribute("aria-busy", "true"));
  if (!target.__answered) {
    // The live region is on the page, empty, before its words: a screen reader announces a
    // region's new text, not a region that appears with text in it.
    const note = document.createElement("div");
    note.className = "explorer-waiting";
    note.setAttribute("role", "status");
    note.setAttribute("aria-live", "polite");
    const message = explorer.querySelector(".explorer-message");
    if (message) message.insertAdjacentElement("afterend", note);
    else explorer.append(note);
    const timer = setTimeout(() => { note.textContent = waitingText(); }, WAITING_MS);
    target.__answered = new MutationObserver(() => {
      const map = target.firstElementChild;
      if (map && map.hasAttribute(AHEAD)) return; // still one drawn here
      target.__answered.disconnect();
      target.__answered = null;
      clearTimeout(timer);
      note.remove();
      explorer.classList.remove("explorer-pending");
      stale.forEach((element) => element.removeAttribute("aria-busy"));
    });
    target.__answered.observe(target, { childList: true });
  }
  return true;
}
