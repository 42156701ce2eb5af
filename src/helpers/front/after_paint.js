// Shared by the browser modules that use it (helpers.front puts it ahead of each one:
// an anywidget module is one file, with no imports between them).

const LATEST_MS = 100; // a hidden page paints no frame: go on anyway

// Call `callback` once, just after the next frame is painted (or LATEST_MS from now).
function afterPaint(callback) {
  let due = true;
  const run = () => {
    if (due) {
      due = false;
      callback();
    }
  };
  requestAnimationFrame(() => setTimeout(run, 0));
  setTimeout(run, LATEST_MS);
}
