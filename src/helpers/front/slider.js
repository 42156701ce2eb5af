// The course's slider (helpers.live.slider, helpers.front.Slider).
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
// With pictures held in the browser (`pictures`, `alts`: LiveFigure.film), a move shows its
// picture at once, drawn on a canvas laid in place of the figure's <img> (the image is another
// widget's model, `image`: its copy is set here silently, and the kernel sets its own when the
// move reaches it): a drag redraws at the pace of the pointer, and even a busy kernel does not
// stop it. The canvas is a role="img" named by the picture's text alternative.
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

  // A picture the kernel sends the image itself (not a move of this slider: those it sets
  // quietly) goes into the <img>, shown again; the canvas comes back at the next move.
  function kernelPicture() {
    if (typeof (model.get("pictures") || [])[0] === "string") return; // a text: shown as set
    restoreImages();
    if (held() && current !== model.get("index")) showPicture(current);
  }
  async function resolveImage() {
    const ref = model.get("image");
    const found = ref ? await model.widget_manager.get_model(String(ref).slice(REF.length)) : null;
    if (ref === model.get("image") && found !== image) {
      if (image) {
        image.off("change:value", kernelPicture);
        restoreImages();
      }
      image = found;
      if (image) image.on("change:value", kernelPicture);
    }
    el.dataset.pictures = held() ? "held" : "kernel"; // for the tests: who draws a move
  }

  const held = () => image !== null && (model.get("pictures") || []).length === count();

  // Each held picture as a decoded bitmap, made on first use (createImageBitmap decodes off
  // the page), and drawn on a canvas laid in place of the figure's <img>: a move draws
  // its bitmap at once and the next frame shows it, with no image to load or decode on the
  // way. Measured in the browser tests (value change to new pixels, median of 20 steps,
  // lessons 01, 03, 07, 08, three runs each): as the <img>'s source (a data: URL, decoded
  // ahead) 14-22 ms, 0.6-1.5 times the do-nothing widget's round trip (the source's image
  // decode waits for a frame of the page's own); on the canvas 4.4-6.0 ms, 0.23-0.33 times.
  let bitmaps = new Map(); // index -> Promise of its ImageBitmap
  const bitmapOf = (i) => {
    if (!bitmaps.has(i)) {
      const view = model.get("pictures")[i]; // a DataView, maybe into a larger buffer
      const blob = new Blob([view], { type: "image/png" });
      bitmaps.set(i, createImageBitmap(blob).catch(() => null));
    }
    return bitmaps.get(i);
  };
  function forgetBitmaps() {
    for (const made of bitmaps.values()) made.then((b) => b && b.close());
    bitmaps = new Map();
  }
  // The pictures next to the one shown, decoded ahead once the browser has painted; only
  // these few are kept (each holds width x height x 4 bytes).
  function warmAround(i) {
    for (const [k, made] of bitmaps) {
      if (Math.abs(k - i) > 1) {
        made.then((b) => b && b.close());
        bitmaps.delete(k);
      }
    }
    for (const k of [i - 1, i + 1]) if (k >= 0 && k < count()) bitmapOf(k);
  }
  let warmTimer = null;
  function warmSoon() {
    clearTimeout(warmTimer);
    requestAnimationFrame(() => {
      warmTimer = setTimeout(() => held() && warmAround(current), 0);
    });
  }

  // The canvas that stands in for an image view's <img> while the slider shows its pictures
  // (the <img> hidden, kept: the kernel's own pictures go back into it, see `restoreImages`).
  // Kept per <img>, so that a canvas is never left behind when its <img> moves or goes.
  const canvases = new Map(); // <img> -> its canvas
  function canvasFor(img) {
    let canvas = canvases.get(img);
    if (!canvas) {
      canvas = document.createElement("canvas");
      canvas.className = "course-film jupyter-widgets"; // the <img>'s margin
      canvas.setAttribute("role", "img");
      canvases.set(img, canvas);
    }
    if (canvas.previousElementSibling !== img) img.after(canvas); // nothing if img is detached
    return canvas;
  }
  function restoreImages() {
    for (const [img, canvas] of canvases) {
      canvas.remove();
      img.classList.remove("course-film-hidden");
    }
    canvases.clear();
  }

  let drawing = 0; // the latest draw asked for: an older one that finishes later gives way
  async function drawPicture(i, alt) {
    const ticket = ++drawing;
    const views = await Promise.all(Object.values(image.views || {}));
    const bitmap = await bitmapOf(i); // decoded ahead, usually: no wait
    if (ticket !== drawing) return;
    for (const [img, canvas] of canvases) {
      if (!img.isConnected) {
        canvas.remove(); // its view was removed from the page
        canvases.delete(img);
      }
    }
    for (const v of views) {
      if (!v || !v.el) continue;
      v.el.title = alt; // what the view does with a new tooltip; seen when the <img> is back
      if (!bitmap) {
        // Not decodable here: the picture goes into the <img> itself, as the view would.
        const url = URL.createObjectURL(new Blob([model.get("pictures")[i]], { type: "image/png" }));
        v.el.src = url; // the view revokes it when it next draws
        restoreImages();
        continue;
      }
      const canvas = canvasFor(v.el);
      if (canvas.width !== bitmap.width || canvas.height !== bitmap.height) {
        canvas.width = bitmap.width;
        canvas.height = bitmap.height;
      }
      canvas.getContext("2d").drawImage(bitmap, 0, 0);
      canvas.setAttribute("aria-label", alt);
      canvas.title = alt; // the <img>'s tooltip, for the mouse
      canvas.dataset.option = String(i);
      // Hidden only once its canvas is on the page: never no figure at all.
      if (canvas.isConnected) v.el.classList.add("course-film-hidden");
    }
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
    drawPicture(i, alt);
    // The model's copies too, silently: a change its views heard would redraw the old
    // picture in the hidden <img>. A view drawn later (the output shown again) shows this one.
    image.set({ tooltip: alt, value: picture }, { silent: true });
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
      forgetBitmaps();
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
    image?.off("change:value", kernelPicture);
    restoreImages(); // the slider gone: its figure back in the <img>, for the kernel's pictures
    forgetBitmaps();
    for (const [event, handler] of Object.entries(handlers)) model.off(event, handler);
  };
}

export default { render };
