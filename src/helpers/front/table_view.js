// The explorer's table view (helpers.front.TableView): a toggle button named
// "table view" (aria-pressed) that shows or hides the weights as an HTML table, drawn by the
// kernel into `table`. The selected query's row is marked (aria-current) here, in the browser,
// from `index`, which the explorer links to the token row's.

function render({ model, el }) {
  el.classList.add("explorer-table-view");
  const toggle = document.createElement("button");
  toggle.type = "button";
  toggle.className = "explorer-table-toggle jupyter-button";
  const box = document.createElement("div");
  box.className = "explorer-table-box";
  el.append(toggle, box);
  let drawn = null; // the table's HTML now in the box

  function markRow() {
    const i = model.get("index");
    for (const row of box.querySelectorAll("tr[data-query]")) {
      if (row.dataset.query === String(i)) row.setAttribute("aria-current", "true");
      else row.removeAttribute("aria-current");
    }
  }

  function draw() {
    const pressed = model.get("pressed");
    toggle.textContent = model.get("label");
    toggle.setAttribute("aria-pressed", pressed ? "true" : "false");
    box.hidden = !pressed;
    const table = pressed ? model.get("table") : "";
    if (drawn !== table) {
      box.innerHTML = table; // the kernel's HTML: every text in it is escaped there
      drawn = table;
    }
    markRow();
  }

  toggle.addEventListener("click", () => {
    model.set("pressed", !model.get("pressed"));
    model.save_changes();
  });
  model.on("change:pressed", draw);
  model.on("change:table", draw);
  model.on("change:label", draw);
  model.on("change:index", markRow);
  draw();
  return () => {
    model.off("change:pressed", draw);
    model.off("change:table", draw);
    model.off("change:label", draw);
    model.off("change:index", markRow);
  };
}

export default { render };
