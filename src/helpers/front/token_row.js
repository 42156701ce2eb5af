// The explorer's token row and message line (helpers.front.TokenRow).
//
// A radio group: one button per token, only the selected one in the tab order (roving
// tabindex). Click, Space or Enter picks a token; the arrow keys move to the next or previous
// one and pick it (no wrap), Home and End the first and last. Picking sets the model's
// `index` and, in the browser only, the `followers`' (the Stacks that hold every query's
// pictures, the table view), so the heatmap and bars change without waiting for the kernel.
// The message line (role=status, aria-live=polite) shows `note` and messages[index]: it
// changes in the browser too, and a screen reader announces it.
//
// The kernel hears of a pick once, after the new pictures are painted. Every message to the
// kernel comes back as kernel status changes ("busy", "idle") and an echo, which JupyterLab
// handles on this page's main thread (its toolbars lay the page out again): arriving before
// the next frame, they delayed the new pictures from ~6 ms to ~20 ms (measured with the kernel
// stopped and running). One index, not one per follower (as jslinks sent), and after the paint.

const STEP = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
const REF = "IPY_MODEL_";
// afterPaint: after_paint.js

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
  let followers = []; // [model, attribute] pairs, resolved from `followers`' references
  let saveDue = false;

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

  async function resolveFollowers() {
    const pairs = model.get("followers") || [];
    const resolved = await Promise.all(
      pairs.map(async ([ref, name]) => [
        await model.widget_manager.get_model(String(ref).slice(REF.length)),
        name,
      ]),
    );
    if (pairs === model.get("followers")) followers = resolved;
  }

  function saveAfterPaint() {
    if (saveDue) return;
    saveDue = true;
    afterPaint(() => {
      saveDue = false;
      model.save_changes(); // the index as it is then (several quick picks: one message)
    });
  }

  function select(i, focus) {
    if (i < 0 || i >= buttons.length) return;
    if (i !== shown()) {
      model.set("index", i);
      // The followers switch now, in the browser; the kernel sets its copies itself when it
      // hears of the pick, so they send nothing.
      for (const [follower, name] of followers) follower.set(name, i);
      saveAfterPaint();
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
  model.on("change:followers", resolveFollowers);
  drawTokens();
  resolveFollowers();
  return () => {
    model.off("change:tokens", drawTokens);
    model.off("change:label", drawTokens);
    model.off("change:index", drawSelection);
    model.off("change:messages", drawMessage);
    model.off("change:note", drawMessage);
    model.off("change:followers", resolveFollowers);
  };
}

export default { render };
