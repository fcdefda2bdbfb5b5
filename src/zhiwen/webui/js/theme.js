// Applies the saved theme before the first paint (a classic script: the page's CSP allows no inline script).
(function () {
  try {
    var theme = JSON.parse(localStorage.getItem("zhiwen.theme") || '""');
    if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  } catch (e) {
    /* no storage: follow the system */
  }
})();
