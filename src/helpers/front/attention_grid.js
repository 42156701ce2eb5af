// Lesson 09's grid of attention maps (helpers.front.GridPicker): rows = layers,
// columns = heads, each cell one map (a thumbnail). A keyboard grid (role=grid, roving
// tabindex): the arrow keys move the focus (Left/Right the head, Up/Down the layer), Home and
// End go to the first and last head of the row, Enter or Space (or a click) picks the cell:
// `selected` = [layer, head] moves here, the explorer's heatmap shows the picked map at once
// (from the maps its MapPreview holds, `maps_from`, when given), and the kernel, told by one
// custom message (no echo of a state update to wait for) after that is painted, opens that
// map in the explorer (the same map, its bars and words).
// The picked cell has aria-selected=true and an outline.

const MOVE = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
const REF = "IPY_MODEL_";
// afterPaint: after_paint.js; drawMapAhead: pending.js

function render({ model, el }) {
  const grid = document.createElement("div");
  grid.className = "attention-grid";
  grid.setAttribute("role", "grid");
  grid.setAttribute("data-lm-suppress-shortcuts", "true"); // JupyterLab's keys stay out
  el.append(grid);
  let cells = []; // cells[layer][head]
  let focus = [0, 0];
  let mapsModel = null; // the explorer's MapPreview model, resolved from `maps_from`

  async function resolveMaps() {
    const ref = model.get("maps_from");
    const found = ref ? await model.widget_manager.get_model(String(ref).slice(REF.length)) : null;
    if (ref === model.get("maps_from")) mapsModel = found;
  }

  const size = () => `${model.get("cell_px")}px`;

  function header(role, text, width) {
    const h = document.createElement("div");
    h.setAttribute("role", role);
    h.className = `grid-${role}`;
    h.style.width = width;
    h.textContent = text;
    return h;
  }

  function build() {
    const layers = model.get("n_layers");
    const heads = model.get("n_heads");
    grid.setAttribute("aria-label", model.get("label"));
    const top = document.createElement("div");
    top.setAttribute("role", "row");
    top.className = "grid-row";
    top.append(header("columnheader", "layer \\ head", "56px"));
    for (let a = 0; a < heads; a++) top.append(header("columnheader", `head ${a}`, size()));
    const rows = [top];
    cells = [];
    for (let k = 0; k < layers; k++) {
      const row = document.createElement("div");
      row.setAttribute("role", "row");
      row.className = "grid-row";
      row.append(header("rowheader", `layer ${k}`, "56px"));
      const line = [];
      for (let a = 0; a < heads; a++) {
        const cell = document.createElement("div");
        cell.setAttribute("role", "gridcell");
        cell.className = "grid-cell";
        cell.setAttribute("aria-label", `layer ${k}, head ${a}`);
        cell.title = `layer ${k}, head ${a}: open it in the explorer below`;
        cell.dataset.layer = String(k);
        cell.dataset.head = String(a);
        cell.style.width = cell.style.height = size();
        cell.addEventListener("click", () => {
          pick(k, a);
          moveFocus(k, a, true);
        });
        row.append(cell);
        line.push(cell);
      }
      cells.push(line);
      rows.push(row);
    }
    grid.replaceChildren(...rows);
    drawThumbnails();
    const [k, a] = model.get("selected");
    focus = cells[k] && cells[k][a] ? [k, a] : [0, 0];
    drawSelection();
  }

  function drawThumbnails() {
    const uris = model.get("thumbnails");
    cells.flat().forEach((cell, i) => {
      cell.style.backgroundImage = uris[i] ? `url(${uris[i]})` : "";
    });
  }

  function drawSelection() {
    const [k, a] = model.get("selected");
    cells.forEach((line, kk) =>
      line.forEach((cell, aa) => {
        const picked = kk === k && aa === a;
        cell.setAttribute("aria-selected", picked ? "true" : "false");
        cell.classList.toggle("grid-selected", picked);
        cell.tabIndex = kk === focus[0] && aa === focus[1] ? 0 : -1;
      }),
    );
  }

  function moveFocus(k, a, quiet) {
    focus = [k, a];
    cells.flat().forEach((cell) => {
      cell.tabIndex = -1;
    });
    cells[k][a].tabIndex = 0;
    if (!quiet) cells[k][a].focus();
  }

  // The explorer in the same output as the grid (helpers.explorer.grid.AttentionGrid puts
  // both in one box).
  function explorer() {
    const box = el.closest(".real-model-grid");
    return box && box.querySelector(".attention-explorer");
  }

  function pick(k, a) {
    const [sk, sa] = model.get("selected");
    if (sk === k && sa === a) return;
    // The picked map now, from the maps the browser holds; the kernel sends the same one, with
    // the map's bars and words, a moment later.
    // In a page with no kernel, the explorer draws the whole state itself (map_preview.js), at
    // the mask and temperature it shows now.
    const root = explorer();
    const preview = root && root.querySelector(".explorer-map-preview");
    if (preview && preview.__courseOfflinePick && preview.__courseOfflinePick(k, a)) {
      model.set("selected", [k, a]);
      return;
    }
    const svg = mapsModel ? mapsModel.get("maps")[k * model.get("n_heads") + a] : null;
    const drawn = drawMapAhead(root, svg); // pending.js
    model.set("selected", [k, a]); // the outline moves now, in the browser
    // The kernel opens the map in the explorer. With the map drawn here, it is told after the
    // paint: its answers (kernel status, the pictures) keep this page's main thread busy, and
    // before the frame they delayed the map (as in token_row.js). Without it, at once.
    const tell = () => model.send({ pick: [k, a] });
    if (drawn) afterPaint(tell);
    else tell();
  }

  grid.addEventListener("keydown", (event) => {
    const cell = event.target.closest && event.target.closest(".grid-cell");
    if (!cell || event.altKey || event.ctrlKey || event.metaKey) return;
    const k = Number(cell.dataset.layer);
    const a = Number(cell.dataset.head);
    const last = [cells.length - 1, cells[0].length - 1];
    const clamp = (v, hi) => Math.min(Math.max(v, 0), hi);
    if (event.key in MOVE) {
      const [dk, da] = MOVE[event.key];
      moveFocus(clamp(k + dk, last[0]), clamp(a + da, last[1]));
    } else if (event.key === "Home") moveFocus(k, 0);
    else if (event.key === "End") moveFocus(k, last[1]);
    else if (event.key === "Enter" || event.key === " ") pick(k, a);
    else return;
    event.preventDefault();
    event.stopPropagation();
  });

  // In a page with no kernel, the explorer switches maps itself (map_preview.js) and says so
  // with this event: the outline follows its head and layer buttons, as the kernel would move it.
  function onOfflineState(event) {
    const { preview, layer, head } = event.detail || {};
    if (!mapsModel || preview !== mapsModel) return;
    const [k, a] = model.get("selected");
    if (k === layer && a === head) return;
    focus = [layer, head]; // the tab stop goes with the outline
    model.set("selected", [layer, head]);
  }
  document.addEventListener("course-offline-state", onOfflineState);

  const rebuild = () => build();
  model.on("change:n_layers", rebuild);
  model.on("change:n_heads", rebuild);
  model.on("change:cell_px", rebuild);
  model.on("change:label", rebuild);
  model.on("change:thumbnails", drawThumbnails);
  model.on("change:selected", drawSelection);
  model.on("change:maps_from", resolveMaps);
  build();
  resolveMaps();
  return () => {
    for (const name of ["n_layers", "n_heads", "cell_px", "label"]) model.off(`change:${name}`, rebuild);
    model.off("change:thumbnails", drawThumbnails);
    model.off("change:selected", drawSelection);
    model.off("change:maps_from", resolveMaps);
    document.removeEventListener("course-offline-state", onOfflineState);
  };
}

export default { render };
