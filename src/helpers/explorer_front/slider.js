// The course's slider (helpers.live.slider, helpers.explorer_front.Slider).
//
// A native <input type="range"> with a <label>: the browser gives it role "slider", its name
// from the label, and the keys (arrows one step, Page Up/Down a tenth of the range, Home and
// End the ends); `aria-valuetext` makes a screen reader say "d_k = 64" rather than "6". The
// visible readout says the same. Two step buttons ("−", "+") move it one step without dragging
// (WCAG 2.2 SC 2.5.7) and name what they do; at an end the button stays focusable and says it is
// unavailable (aria-disabled), so focus is never lost. A visually hidden status line
// (role="status") says what a button press chose, at once, and then what the kernel drew
// (`status`, set by the lesson: "n = 4 tokens give 16 query-key pairs"), so that a screen reader
// hears the outcome of a move, not only the slider's value.
//
// The value goes to the kernel as `index` (into the options the kernel holds). While the
// kernel draws one value, newer ones are not queued behind it: the latest waits, and goes when
// the kernel says it has drawn (`drawn` changes). So a drag redraws at the kernel's pace, the
// last value always wins, and a busy kernel gets one value when it is free, not a backlog.

let counter = 0;
const SLIDER_KEYS = new Set([
  "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End",
]);

function render({ model, el }) {
  counter += 1;
  const id = `course-slider-${counter}-${Math.random().toString(36).slice(2, 8)}`;
  el.classList.add("course-slider");
  el.id = `${id}-row`;
  const label = document.createElement("label");
  label.className = "course-slider-label";
  label.htmlFor = id;
  const minus = document.createElement("button");
  const plus = document.createElement("button");
  for (const [button, text] of [[minus, "−"], [plus, "+"]]) {
    button.type = "button";
    button.className = "course-slider-step";
    button.textContent = text;
  }
  const input = document.createElement("input");
  input.type = "range";
  input.id = id;
  input.step = "1";
  const readout = document.createElement("output");
  readout.className = "course-slider-readout";
  readout.htmlFor = id;
  readout.setAttribute("aria-hidden", "true"); // the slider's value text says it
  // JupyterLab's own shortcuts (arrow keys move between cells) stay out of the slider, and
  // only out of it: on the buttons, Escape or Shift+Enter still reach the notebook.
  input.setAttribute("data-lm-suppress-shortcuts", "true");
  const status = document.createElement("span");
  status.className = "course-slider-status";
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  el.append(label, minus, input, plus, readout, status);

  let pending = null; // the index the kernel has not been sent yet (last value wins)
  let inFlight = false; // one index sent, its drawing not yet confirmed

  const count = () => (model.get("labels") || []).length;

  function show(i) {
    const labels = model.get("labels") || [];
    const text = labels[i] ?? String(i);
    input.value = String(i);
    input.setAttribute("aria-valuetext", text);
    readout.textContent = text;
    const off = model.get("disabled");
    minus.setAttribute("aria-disabled", String(i <= 0 || off));
    plus.setAttribute("aria-disabled", String(i >= labels.length - 1 || off));
  }

  function drawFrame() {
    const description = model.get("description");
    label.textContent = description;
    input.min = "0";
    input.max = String(Math.max(count() - 1, 0));
    input.disabled = model.get("disabled");
    minus.setAttribute("aria-label", `decrease ${description}`);
    plus.setAttribute("aria-label", `increase ${description}`);
    show(model.get("index"));
  }

  function send() {
    if (pending === null || inFlight) return;
    const i = pending;
    pending = null;
    if (i === model.get("index")) return;
    inFlight = true;
    model.set("index", i);
    model.save_changes();
  }

  function pick(i) {
    if (model.get("disabled")) return;
    const last = count() - 1;
    const clamped = Math.min(Math.max(i, 0), last);
    show(clamped); // at once, in the browser: the readout and value text need no kernel
    pending = clamped;
    send();
  }

  input.addEventListener("input", () => pick(Number(input.value)));
  // The slider's own keys stay with it: JupyterLab's notebook would otherwise take the arrow
  // keys (it moved the focus away, and the value did not change). The browser still does what
  // the key means for a range input.
  input.addEventListener("keydown", (event) => {
    if (SLIDER_KEYS.has(event.key)) event.stopPropagation();
  });
  function press(delta) {
    pick(Number(input.value) + delta);
    const labels = model.get("labels") || [];
    status.textContent = labels[Number(input.value)] ?? ""; // focus is on the button: say it
  }
  minus.addEventListener("click", () => press(-1));
  plus.addEventListener("click", () => press(1));
  model.on("change:status", () => {
    status.textContent = model.get("status");
  });
  model.on("change:drawn", () => {
    inFlight = false;
    send();
  });
  model.on("change:index", () => {
    if (pending === null && !inFlight) show(model.get("index"));
  });
  model.on("change:labels", drawFrame);
  model.on("change:description", drawFrame);
  model.on("change:disabled", drawFrame);
  drawFrame();
}

export default { render };
