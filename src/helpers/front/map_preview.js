// The explorer's maps in the browser (helpers.front.MapPreview): it shows nothing
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
//
// A page with no kernel (the course's website: <html data-course-no-kernel>), whose explorer
// holds every state (`offline`, which make site alone fills): there is no kernel to answer, so
// a head or layer click, a grid pick, a move of the temperature slider and a click on the
// causal toggle draw the whole state here, from `offline.states` (keyed as the maps' data-
// attributes: layer|head|causal|temperature): the map, every query's bars, the messages, the
// table, and the controls' own look. Nothing is pending then.

const REF = "IPY_MODEL_";
const noKernel = () => "courseNoKernel" in document.documentElement.dataset;

function render({ model, el }) {
  el.classList.add("explorer-map-preview");

  let parts = null; // name -> the explorer's widget models (offline_parts), once resolved
  async function resolveParts() {
    const refs = model.get("offline_parts") || {};
    const pairs = await Promise.all(
      Object.entries(refs).map(async ([name, ref]) => [
        name,
        await model.widget_manager.get_model(String(ref).slice(REF.length)),
      ]),
    );
    if (refs === model.get("offline_parts")) parts = pairs.length ? Object.fromEntries(pairs) : null;
  }
  const states = () => (model.get("offline") || {}).states || {};
  const offline = () => noKernel() && parts !== null && Object.keys(states()).length > 0;
  // The key of the state shown, with some of its fields (0 layer, 1 head, 2 causal,
  // 3 temperature) changed.
  function keyWith(changes) {
    const fields = keyOfSvg(parts.heatmap_map.get("value")).split("|");
    for (const [at, value] of Object.entries(changes)) fields[at] = String(value);
    return fields.join("|");
  }

  function applyState(key) {
    const state = states()[key];
    if (!offline() || !state) return false;
    const [layer, head, causal] = key.split("|");
    parts.heatmap_map.set("value", state.map);
    parts.bar_values.get("children").forEach((child, i) => child.set("value", state.bars[i] || ""));
    parts.tokens.set("messages", state.messages);
    if (parts.table.get("pressed")) parts.table.set("table", state.table);
    parts.head.set("index", Number(head));
    if (parts.layer && layer !== "") parts.layer.set("index", Number(layer));
    const look = (model.get("offline").looks || {})[causal];
    if (parts.causal.get("value") !== (causal === "1") && look) {
      parts.causal.set({ value: causal === "1", ...look });
    }
    // Lesson 09's grid moves its outline to this map (attention_grid.js).
    const detail = { preview: model, layer: layer === "" ? 0 : Number(layer), head: Number(head) };
    document.dispatchEvent(new CustomEvent("course-offline-state", { detail }));
    return true;
  }
  // A grid pick (attention_grid.js): map (layer, head) at the mask and temperature shown.
  el.__courseOfflinePick = (layer, head) =>
    offline() && applyState(keyWith({ 0: parts.layer ? layer : "", 1: head }));

  function onTable() {
    if (!offline() || !parts.table.get("pressed")) return;
    const state = states()[keyWith({})];
    if (state) parts.table.set("table", state.table);
  }
  resolveParts().then(() => parts && parts.table.on("change:pressed", onTable));

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
    if (offline()) applyState(keyWith({ 0: layers ? layer : "", 1: head }));
    else drawMapAhead(root, model.get("maps")[layer * nHeads + head]);
  }

  // The causal toggle, in a page with no kernel: the state with the other mask, the toggle's
  // value and look set here (its own click handler, which would flip it back, is not reached).
  function onCausalClick(event) {
    const root = el.closest(".attention-explorer");
    const button = event.target instanceof Element && event.target.closest(".explorer-causal");
    if (!root || !button || !root.contains(button) || button.disabled || !offline()) return;
    // Only when that state is saved: otherwise the button's own handler runs, as without it.
    if (applyState(keyWith({ 2: parts.causal.get("value") ? 0 : 1 }))) event.stopPropagation();
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
    if (offline()) {
      const temperature = (model.get("offline").temperatures || [])[event.detail.index];
      if (temperature !== undefined) applyState(keyWith({ 3: temperature }));
      return;
    }
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

  model.on("change:offline_parts", resolveParts);
  document.addEventListener("click", onClick, true);
  document.addEventListener("click", onCausalClick, true);
  document.addEventListener("course-slider-move", onSliderMove, true);
  return () => {
    model.off("change:offline_parts", resolveParts);
    if (parts) parts.table.off("change:pressed", onTable);
    document.removeEventListener("click", onClick, true);
    document.removeEventListener("click", onCausalClick, true);
    document.removeEventListener("course-slider-move", onSliderMove, true);
    if (answers) answers.disconnect();
  };
}

export default { render };
