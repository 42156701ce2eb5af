// The explorer's token row and message line (helpers.explorer_front.TokenRow).
//
// A radio group: one button per token, only the selected one in the tab order (roving
// tabindex). Click, Space or Enter picks a token; the arrow keys move to the next or previous
// one and pick it (no wrap), Home and End the first and last. Picking sets the model's
// `index`, which the explorer links in the browser (jslink) to the Stacks that hold every
// query's pictures, so the heatmap and bars change without waiting for the kernel. The
// message line (role=status, aria-live=polite) shows `note` and messages[index]: it changes
// in the browser too, and a screen reader announces it.

const STEP = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

function render({ model, el }) {
  el.classList.add("explorer-token-row");
  const message = document.createElement("div");
  message.className = "explorer-message";
  message.setAttribute("role", "status");
  message.setAttribute("aria-live", "polite");
  const line = document.createElement("div");
  line.className = "explorer-token-line";
  const label = document.createElement("span");
  label.className = "explorer-token-label";
  label.setAttribute("aria-hidden", "true"); // the group's aria-label says it
  label.textContent = "query:";
  const row = document.createElement("div");
  row.className = "explorer-tokens";
  row.setAttribute("role", "radiogroup");
  // JupyterLab's own shortcuts (arrow keys move between cells) stay out of the row.
  row.setAttribute("data-lm-suppress-shortcuts", "true");
  line.append(label, row);
  el.append(message, line);
  let buttons = [];

  const shown = () => {
    const i = model.get("index");
    return i === null || i === undefined ? -1 : i;
  };

  function drawMessage() {
    const i = shown();
    const messages = model.get("messages");
    const text = [model.get("note"), i >= 0 && i < messages.length ? messages[i] : ""]
      .filter(Boolean)
      .join(" ");
    if (message.textContent !== text) message.textContent = text;
  }

  function drawSelection() {
    const i = shown();
    buttons.forEach((button, k) => {
      button.setAttribute("aria-checked", k === i ? "true" : "false");
      button.tabIndex = k === i || (i < 0 && k === 0) ? 0 : -1;
      button.classList.toggle("mod-active", k === i);
    });
    drawMessage();
  }

  function select(i, focus) {
    if (i < 0 || i >= buttons.length) return;
    if (i !== shown()) {
      model.set("index", i); // linked Stacks switch now, in the browser
      model.save_changes(); // and the kernel hears of it
    }
    if (focus) buttons[i].focus();
  }

  function drawTokens() {
    const tokens = model.get("tokens");
    row.setAttribute("aria-label", model.get("label"));
    buttons = tokens.map((token, i) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "explorer-token jupyter-button";
      button.setAttribute("role", "radio");
      button.setAttribute("aria-label", `${token}, token ${i + 1} of ${tokens.length}`);
      button.dataset.index = String(i);
      button.textContent = token;
      button.addEventListener("click", () => select(i, false));
      return button;
    });
    row.replaceChildren(...buttons);
    drawSelection();
  }

  row.addEventListener("keydown", (event) => {
    const i = buttons.indexOf(event.target);
    if (i < 0 || event.altKey || event.ctrlKey || event.metaKey) return;
    let next;
    if (event.key in STEP) next = Math.min(Math.max(i + STEP[event.key], 0), buttons.length - 1);
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = buttons.length - 1;
    else return;
    event.preventDefault();
    event.stopPropagation();
    select(next, true);
  });

  model.on("change:tokens", drawTokens);
  model.on("change:label", drawTokens);
  model.on("change:index", drawSelection);
  model.on("change:messages", drawMessage);
  model.on("change:note", drawMessage);
  drawTokens();
  return () => {
    model.off("change:tokens", drawTokens);
    model.off("change:label", drawTokens);
    model.off("change:index", drawSelection);
    model.off("change:messages", drawMessage);
    model.off("change:note", drawMessage);
  };
}

export default { render };
