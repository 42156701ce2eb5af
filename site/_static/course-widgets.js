// RequireJS settings for the course's website, loaded before the widgets' HTML manager.
//
// - anywidget: its front-end module is a file of the site (tools/build_site.py copies it from
//   the pinned anywidget wheel); without this the HTML manager fetches it from a CDN.
// - @jupyter-widgets/...: the HTML manager finds its Font Awesome fonts beside the module that
//   asks for them, by the module's URL; these names put that URL in the site's vendor folder.
// - data-course-no-kernel: marks the page as one with no kernel, so the explorer draws each
//   state it saved itself (helpers/explorer_front/map_preview.js); its text is what an
//   explorer without a saved state would say instead (pending.js), where JupyterLab waits.
// Paths are relative to the page, whose depth Sphinx records in data-content_root.
document.documentElement.dataset.courseNoKernel =
  "This page runs no Python, and this explorer did not save this state: the heatmap shows " +
  "the map you picked, but the bars and the message above still describe the previous one. " +
  "Run the lesson (Binder, or make lab) to see them change too.";
(function () {
  var root = (document.documentElement.dataset.content_root || "") + "_static/vendor/widgets";
  require.config({
    paths: {
      anywidget: root + "/anywidget",
      "@jupyter-widgets/html-manager/dist": root,
      "@jupyter-widgets/html-manager": root + "/html-manager",
      "@jupyter-widgets/base": root + "/base",
      "@jupyter-widgets/base7": root + "/base7",
      "@jupyter-widgets/controls": root + "/controls",
      "@jupyter-widgets/controls7": root + "/controls7",
    },
  });
})();
