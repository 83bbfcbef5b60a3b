// Keeps an open page up to date: the element marked data-live is replaced
// with what the server sends on its stream (HTML the server rendered and
// escaped). Without JavaScript the pages work the same, without updates.
(function () {
  "use strict";
  var el = document.querySelector("[data-live]");
  var status = document.getElementById("live-status");
  if (!el || !el.getAttribute("data-live") || !window.EventSource) {
    return;
  }
  function say(state, text) {
    if (!status) { return; }
    status.setAttribute("data-state", state);
    status.textContent = "Live updates: " + text;
  }
  var source = new EventSource(el.getAttribute("data-live"));
  source.addEventListener("open", function () { say("open", "on"); });
  source.addEventListener("update", function (e) {
    el.innerHTML = e.data;
    el.setAttribute("data-updated", String(Date.now()));
    say("open", "on, updated " + new Date().toLocaleTimeString());
  });
  source.addEventListener("error", function () { say("retrying", "reconnecting…"); });
})();
