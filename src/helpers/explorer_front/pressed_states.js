// Shows nothing (helpers.explorer_front.PressedStates): gives each ipywidgets toggle button
// in the same output (ToggleButtons' buttons, a ToggleButton) `aria-pressed`, kept equal to
// its pressed state. ipywidgets 8 shows that state only as the CSS class `mod-active`, which a
// screen reader does not hear: without this, "÷ √d_k" is read as a plain button, pressed or not.

function render({ el }) {
  el.classList.add("course-pressed-states");
  let observer = null;

  function mark(scope) {
    for (const button of scope.querySelectorAll(".widget-toggle-button")) {
      const pressed = button.classList.contains("mod-active") ? "true" : "false";
      if (button.getAttribute("aria-pressed") !== pressed) {
        button.setAttribute("aria-pressed", pressed);
      }
    }
  }

  // The outermost widget box around this one: it exists only once the view is attached.
  function outermostBox() {
    let box = el.parentElement && el.parentElement.closest(".widget-box");
    while (box && box.parentElement && box.parentElement.closest(".widget-box")) {
      box = box.parentElement.closest(".widget-box");
    }
    return box;
  }

  function attach() {
    const scope = outermostBox();
    if (!scope) return false;
    mark(scope);
    // Only what can change a button's state: a class change on a toggle button, or new nodes
    // (new buttons). The figure's and the slider's updates in the same box are let through.
    const matters = (record) =>
      record.type === "attributes"
        ? record.target.classList.contains("widget-toggle-button")
        : [...record.addedNodes].some((node) => node.nodeType === 1);
    observer = new MutationObserver((records) => {
      if (records.some(matters)) mark(scope);
    });
    observer.observe(scope, { subtree: true, childList: true, attributes: true,
                              attributeFilter: ["class"] });
    return true;
  }

  let tries = 0;
  const wait = () => {
    if (!attach() && tries++ < 100) requestAnimationFrame(wait);
  };
  wait();
  return () => observer && observer.disconnect();
}

export default { render };
