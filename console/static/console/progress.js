// The ingestion progress page (console/views/progress.py): refreshes its
// status section from the JSON view without reloading the page, sends each
// chosen file in its own request, and retries failures in place. Without
// this script the forms still work (they post and come back).
(function () {
  "use strict";
  var root = document.getElementById("progress");
  if (!root) return;
  var statusUrl = root.dataset.statusUrl;
  var section = document.getElementById("progress-status");
  var timer = null;
  var busy = false;

  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(refresh, ms);
  }

  function refresh() {
    if (busy) return schedule(500);
    // A hidden tab waits; it refreshes as soon as it is shown again.
    if (document.hidden) return schedule(5000);
    busy = true;
    fetch(statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("status " + response.status);
        return response.json();
      })
      .then(function (data) {
        section.innerHTML = data.html;
        root.dataset.state = data.done ? "done" : "running";
        // Quick while something moves, slow once everything has finished.
        schedule(data.done ? 15000 : 1000);
      })
      .catch(function () { schedule(5000); })
      .finally(function () { busy = false; });
  }

  function csrfToken(form) {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function post(form, body) {
    body.append("csrfmiddlewaretoken", csrfToken(form));
    return fetch(form.action, {
      method: "POST",
      body: body,
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    }).then(function (response) {
      return response.json().catch(function () {
        return { status: "error", error: { message: "HTTP " + response.status } };
      });
    });
  }

  function report(list, name, outcome, message) {
    var item = document.createElement("li");
    item.className = "upload-" + outcome;
    item.dataset.outcome = outcome;
    item.textContent = name + ": " + outcome + (message ? " (" + message + ")" : "");
    list.appendChild(item);
  }

  var uploadForm = document.getElementById("upload-form");
  if (uploadForm) {
    uploadForm.addEventListener("submit", function (event) {
      event.preventDefault();
      var input = document.getElementById("upload-files");
      var list = document.getElementById("upload-results");
      var button = document.getElementById("upload-submit");
      var files = Array.prototype.slice.call(input.files);
      if (!files.length) return;
      button.disabled = true;
      list.innerHTML = "";
      // One request a file, one after the other: each is held to the upload
      // limit on its own, and the status refreshes as they arrive.
      files
        .reduce(function (previous, file) {
          return previous.then(function () {
            var body = new FormData();
            body.append("files", file, file.name);
            return post(uploadForm, body).then(function (data) {
              if (data.status === "ok") {
                data.data.results.forEach(function (r) { report(list, r.name, r.outcome, r.message); });
              } else {
                report(list, file.name, "refused", data.error && data.error.message);
              }
              refresh();
            });
          });
        }, Promise.resolve())
        .finally(function () {
          button.disabled = false;
          input.value = "";
          uploadForm.dataset.state = "sent";
        });
    });
  }

  // Retry buttons live in the refreshed section: listen on the section.
  section.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList || !form.classList.contains("retry-form")) return;
    event.preventDefault();
    var button = form.querySelector("button");
    if (button) button.disabled = true;
    post(form, new FormData()).then(refresh);
  });

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden) refresh();
  });
  schedule(root.dataset.state === "done" ? 15000 : 1000);
})();
