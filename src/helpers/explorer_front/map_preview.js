// The explorer's maps in the browser (helpers.explorer_front.MapPreview): it shows nothing
// itself. It holds the heatmap's bottom layer (cells and numbers) of every (layer, head) map,
// `maps`, row by row, `n_heads` a row, for the sentence, mask and temperature shown; when the
// explorer's head or layer buttons (ipywidgets ToggleButtons, CSS classes explorer-head and
// explorer-layer) are clicked, or pressed with Space or Enter, it puts the asked-for map into
// the explorer's heatmap at once. The buttons then tell the kernel as before, which sends the
// same map with the map's bars and words a moment later. Lesson 09's grid reads `maps` too.
//
// It listens on the document, in the capture phase: that runs before the buttons' own
// handler (which moves the picked button), so the buttons still show the map shown until now.
// Until the kernel's answer, the bars and the message are marked as the previous map's
// (drawMapAhead: pending.js). The temperature slider draws ahead the same way (onSliderMove).

function render({ model, el }) {
  el.classList.add("explorer-map-preview");

  const buttonsOf = (row) => [...row.querySelectorAll(".widget-toggle-button")];
  const picked = (row) => buttonsOf(row).findIndex((b) => b.classList.contains("mod-active"));

  function onClick(event) {
    const root = el.closest(".attention-explorer");
    const button = event.target instanceof Element && event.target.closest(".widget-toggle-button");
    if (!root || !button || !root.contains(button) || button.disabled) return;
    if (button.classList.contains("mod-active")) return; // the map shown already
    wanted = null; // a temperature the slider asked for gives way to the new head or layer
    const row = button.closest(".explorer-head, .explorer-layer");
    if (!row || !root.contains(row)) return;
    const heads = root.querySelector(".explorer-head");
    const layers = root.querySelector(".explorer-layer"); // none with one layer
    let layer = layers ? picked(layers) : 0;
    let head = heads ? picked(heads) : -1;
    if (row === heads) head = buttonsOf(heads).indexOf(button);
    else layer = buttonsOf(layers).indexOf(button);
    const nHeads = model.get("n_heads");
    if (layer < 0 || head < 0 || head >= nHeads) return;
    drawMapAhead(root, model.get("maps")[layer * nHeads + head]);
  }

  // The temperature slider (class explorer-temperature; slider.js sends an event on each
  // move): the map shown, at the new temperature, from `temperature_maps`. During a drag the
  // kernel answers one value at a time, older than the slider's: when its map is not the one
  // asked for (its data- attributes: layer, head, mask, temperature), the one asked for is
  // drawn again, until the kernel catches up. A head or layer click forgets it.
  let wanted = null;
  const KEYS = ["data-layer", "data-head", "data-causal", "data-temperature"];
  const keyOf = (map) => KEYS.map((name) => map && map.getAttribute(name)).join("|");
  function keyOfSvg(svg) {
    const holder = document.createElement("template");
    holder.innerHTML = svg;
    return keyOf(holder.content.firstElementChild);
  }

  function onSliderMove(event) {
    const root = el.closest(".attention-explorer");
    const slider = event.target instanceof Element && event.target.closest(".explorer-temperature");
    if (!root || !slider || !root.contains(slider)) return;
    const svg = (model.get("temperature_maps") || [])[event.detail.index];
    if (!svg) return;
    wanted = { svg, key: keyOfSvg(svg) };
    drawMapAhead(root, svg);
    watchAnswers(root);
  }

  let answers = null;
  let watched = null;
  function watchAnswers(root) {
    const target = root.querySelector(".explorer-heatmap-map .widget-html-content");
    if (!target || target === watched) return;
    if (answers) answers.disconnect(); // the heatmap was drawn anew: watch the new one
    watched = target;
    answers = new MutationObserver(() => {
      const map = target.firstElementChild;
      if (!wanted || !map || map.hasAttribute(AHEAD)) return;
      if (keyOf(map) === wanted.key) {
        wanted = null; // the kernel drew the map asked for
      } else {
        drawMapAhead(root, wanted.svg);
      }
    });
    answers.observe(target, { childList: true });
  }

  document.addEventListener("click", onClick, true);
  document.addEventListener("course-slider-move", onSliderMove, true);
  return () => {
    document.removeEventListener("click", onClick, true);
    document.removeEventListener("course-slider-move", onSliderMove, true);
    if (answers) answers.disconnect();
  };
}

export default { render };
