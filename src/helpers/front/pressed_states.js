// Shows nothing (helpers.front.PressedStates): gives each ipywidgets toggle button
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

  // Watch the toggle buttons themselves (their class) and their groups (new buttons), not the
  // whole box: a subtree observer on the box also woke for every update of the figure and
  // the slider beside them, and cost a lesson-03 slider move about 5 ms (21 against 27 ms,
  // two runs each, value change to new pixels).
  function watch(scope) {
    observer.disconnect();
    for (const button of scope.querySelectorAll(".widget-toggle-button")) {
      observer.observe(button, { attributes: true, attributeFilter: ["class"] });
    }
    for (const group of scope.querySelectorAll(".widget-toggle-buttons")) {
      observer.observe(group, { childList: true, subtree: true });
    }
  }

  function attach() {
    const scope = outermostBox();
    if (!scope) return false;
    observer = new MutationObserver((records) => {
      if (records.some((record) => record.type === "childList")) watch(scope); // new buttons
      mark(scope);
    });
    watch(scope);
    mark(scope);
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
