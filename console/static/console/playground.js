// The playground (console/views/playground.py): a citation opens the passage
// it names. The passages are <details>; without this script a citation
// still scrolls to its passage, which the reader opens by hand.
(function () {
  "use strict";
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    if (!id) return;
    var target = document.getElementById(id);
    if (!target || target.tagName !== "DETAILS") return;
    target.open = true;
    document.querySelectorAll("details.passage.flash").forEach(function (el) { el.classList.remove("flash"); });
    target.classList.add("flash");
    target.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", openTarget);
  // A second click on the same citation changes no hash: open it anyway.
  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("a.citation")) setTimeout(openTarget, 0);
  });
  document.addEventListener("DOMContentLoaded", openTarget);
})();
