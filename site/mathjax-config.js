// MathJax 3's settings for the course's website (Sphinx puts this before MathJax loads).
//
// The widgets' HTML manager (@jupyter-widgets/html-manager 1.0.15) typesets a widget's label
// with MathJax 2's call, MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]), whenever
// window.MathJax exists; with MathJax 3 that throws ("reading 'Queue'") and stops the widget.
// This Hub does the same with MathJax 3's call, before MathJax loads and after.
(function () {
  var Hub = {
    Queue: function (job) {
      var element = Array.isArray(job) ? job[2] : undefined;
      var mathjax = window.MathJax;
      if (element && mathjax && mathjax.typesetPromise) {
        mathjax.typesetPromise([element]).catch(function () {});
      }
    },
  };
  // Added to the settings myst-nb wrote just before (which HTML classes MathJax reads: the
  // math of a page, not the dollars in an output), not in their place.
  var config = window.MathJax || {};
  config.Hub = Hub;
  config.startup = Object.assign({}, config.startup, {
    ready: function () {
      window.MathJax.startup.defaultReady();
      window.MathJax.Hub = Hub;
    },
  });
  window.MathJax = config;
})();
