// The course's slider (helpers.live.slider, helpers.explorer_front.Slider).
//
// A native <input type="range"> with a <label>: the browser gives it role "slider", its name
// from the label, and the keys (arrows one step, Page Up/Down a tenth of the range, Home and
// End the ends); `aria-valuetext` makes a screen reader say "d_k = 64" rather than "6". The
// visible readout says the same. Two step buttons ("−", "+") move it one step without dragging
// (WCAG 2.2 SC 2.5.7) and name what they do; at an end the button stays focusable and says it is
// unavailable (aria-disabled), so focus is never lost. A visually hidden status line
// (role="status") says the outcome of a move once the slider has rested SAY_MS: the new
// picture's text alternative, or what the lesson's kernel set (`status`: "4 tokens give 16
// query-key pairs"), or after a button press its new value; so a screen reader hears the
// outcome, not only the slider's value, and a held key gives one announcement, not a queue.
//
// With pictures held in the browser (`pictures`, `alts`: LiveFigure.film), a move puts its
// picture into the figure's image (`image`, another widget's model, set here only: the kernel
// sets its own copy when the move reaches it), at once: a drag redraws at the pace of the
// pointer, and even a busy kernel does not stop it.
//
// The value goes to the kernel as `index` (into the options the kernel holds). While the
// kernel draws one value, newer ones are not queued behind it: the latest waits, and goes when
// the kernel says it has drawn (`drawn` changes). So a drag redraws at the kernel's pace, the
// last value always wins, and a busy kernel gets one value when it is free, not a backlog.

let counter = 0;
const REF = "IPY_MODEL_";
const SAY_MS = 400;
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
  // The range input first after its label: Tab reaches the slider itself, then its buttons.
  el.append(label, input, minus, plus, readout, status);

  let pending = null; // the index the kernel has not been sent yet (last value wins)
  let current = model.get("index"); // the index shown
  // What the status line says, once the slider has rested SAY_MS: a key held down or a drag
  // gives one announcement at the end, not one per step queued behind each other.
  let sayTimer = null;
  function say(text) {
    clearTimeout(sayTimer);
    status.textContent = "";
    sayTimer = setTimeout(() => {
      status.textContent = text;
    }, SAY_MS);
  }
  let inFlight = false; // one index sent, its drawing not yet confirmed
  let image = null; // the model of the image the held pictures go into

  async function resolveImage() {
    const ref = model.get("image");
    const found = ref ? await model.widget_manager.get_model(String(ref).slice(REF.length)) : null;
    if (ref === model.get("image")) image = found;
    el.dataset.pictures = held() ? "held" : "kernel"; // for the tests: who draws a move
  }

  const held = () => image !== null && (model.get("pictures") || []).length === count();

  // Each held picture as a data: URL, made once, on first use. The image's views get it as
  // their <img> src directly. Measured in the browser tests (value change to new pixels):
  // through the Image model's own update (a new blob: URL every move) 25-28 ms, 1.3 to 2.4
  // times the do-nothing widget's round trip; this way 17-22 ms, about 1.0 times it.
  let urls = [];
  const urlOf = (i) => {
    if (!urls[i]) {
      const view = model.get("pictures")[i]; // a DataView, maybe into a larger buffer
      const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
      let text = "";
      for (let k = 0; k < bytes.length; k += 0x8000) {
        text += String.fromCharCode.apply(null, bytes.subarray(k, k + 0x8000));
      }
      urls[i] = `data:image/png;base64,${btoa(text)}`;
    }
    return urls[i];
  };

  // The pictures next to the one shown, decoded ahead, once the browser has painted, so that
  // a move may find its picture's URL decoded already. Measured (browser tests, median of 20
  // steps): lesson 01 19.7 ms without, 14.0 ms with; a held sentence (lesson 00), which needs
  // no decoding, takes 3-7 ms. Only these few are kept (each holds width x height x 4 bytes).
  let warm = new Map(); // index -> decoded <img>, not on the page
  function warmAround(i) {
    const next = new Map();
    for (const k of [i - 1, i, i + 1]) {
      if (k < 0 || k >= count() || typeof model.get("pictures")[k] === "string") continue;
      let picture = warm.get(k);
      if (!picture) {
        picture = new Image();
        picture.src = urlOf(k);
        picture.decode().catch(() => null);
      }
      next.set(k, picture);
    }
    warm = next;
  }
  let warmTimer = null;
  function warmSoon() {
    clearTimeout(warmTimer);
    requestAnimationFrame(() => {
      warmTimer = setTimeout(() => held() && warmAround(current), 0);
    });
  }

  // The held picture of option i, and its words: in the image and the status line, now.
  function showPicture(i) {
    if (!held()) return false;
    const alt = (model.get("alts") || [])[i] ?? "";
    const picture = model.get("pictures")[i];
    if (typeof picture === "string") {
      image.set("value", picture); // a text (a Label's): its view writes it at once
      say(alt);
      return true;
    }
    const url = urlOf(i);
    for (const view of Object.values(image.views || {})) {
      Promise.resolve(view).then((v) => {
        if (v && v.el) v.el.src = url; // the view revokes it later as a blob: URL: a no-op
      });
    }
    image.set("tooltip", alt);
    // The model's copy too, silently (its views have the picture already): a view drawn
    // later, e.g. the output shown again, shows this picture.
    image.set("value", model.get("pictures")[i], { silent: true });
    say(alt);
    warmSoon();
    return true;
  }

  const count = () => (model.get("labels") || []).length;

  function show(i) {
    current = i;
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
    if (clamped === current) return; // at an end already: nothing moves, nothing to redraw
    show(clamped); // at once, in the browser: the readout and value text need no kernel
    showPicture(clamped);
    // For whoever draws ahead of the kernel (the explorer's preview, for its temperature).
    el.dispatchEvent(
      new CustomEvent("course-slider-move", { bubbles: true, detail: { index: clamped } }),
    );
    pending = clamped;
    send();
  }

  input.addEventListener("input", () => pick(Number(input.value)));
  // The slider's own keys stay with it: JupyterLab's notebook would otherwise take the arrow
  // keys (it moved the focus away, and the value did not change). The browser still does what
  // the key means for a range input.
  const keepKeys = (event) => {
    if (SLIDER_KEYS.has(event.key)) event.stopPropagation();
  };
  input.addEventListener("keydown", keepKeys);
  // On the buttons too: the notebook's arrow keys would move to another cell, and the focus
  // out of the slider.
  minus.addEventListener("keydown", keepKeys);
  plus.addEventListener("keydown", keepKeys);
  function press(delta) {
    const before = current;
    pick(current + delta);
    if (held() || current === before) return; // the picture's words are on their way
    const labels = model.get("labels") || [];
    say(labels[current] ?? ""); // focus is on the button: say the new value
  }
  minus.addEventListener("click", () => press(-1));
  plus.addEventListener("click", () => press(1));

  const handlers = {
    "change:status": () => say(model.get("status")),
    "change:drawn": () => {
      inFlight = false;
      send();
      // Idle again: show the kernel's value (it may have set one itself meanwhile).
      if (!inFlight && pending === null) show(model.get("index"));
    },
    "change:index": () => {
      if (pending === null && !inFlight) show(model.get("index"));
    },
    "change:labels": drawFrame,
    "change:description": drawFrame,
    "change:disabled": drawFrame,
    "change:image": resolveImage,
    // New pictures (another control changed them while the slider may have moved): show the
    // one of the value the slider shows now.
    "change:pictures": async () => {
      urls = [];
      warm = new Map();
      await resolveImage();
      showPicture(current);
    },
  };
  for (const [event, handler] of Object.entries(handlers)) model.on(event, handler);
  drawFrame();
  resolveImage().then(() => held() && warmSoon());
  return () => {
    clearTimeout(sayTimer);
    clearTimeout(warmTimer);
    for (const [event, handler] of Object.entries(handlers)) model.off(event, handler);
  };
}

export default { render };
