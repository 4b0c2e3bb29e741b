/* The arena's battle page: both answers stream into panes A and B (server-sent events from the web server,
   never from a model server), the vote opens once both are complete, and a / b / t / x pick the vote as in
   pairwise tasks, Enter casts it. Without JavaScript the page still works: reload it to see the answers. */
(function () {
  "use strict";

  function start() {
    var root = document.querySelector("[data-testid=battle]");
    if (!root) return;
    var url = root.getAttribute("data-stream-url");
    var voteForm = document.getElementById("vote-form");

    function pane(side, turn) {
      return root.querySelector('.stream-pane[data-pane="' + side + '"][data-turn="' + turn + '"]');
    }

    function openVote() {
      if (!voteForm) return;
      var fieldset = voteForm.querySelector("fieldset");
      if (fieldset) fieldset.disabled = false;
      var button = voteForm.querySelector("button[type=submit]");
      if (button) button.disabled = false;
      var wait = voteForm.querySelector("[data-testid=vote-wait]");
      if (wait) wait.hidden = true;
      var more = root.querySelector("[data-testid=continue-form]");
      if (more && more.getAttribute("data-can-continue") !== "no") more.hidden = false;
      root.setAttribute("data-status", "ready");
    }

    function notCounted(reason) {
      var box = root.querySelector("[data-testid=not-counted]");
      if (box) {
        box.hidden = false;
        box.querySelectorAll("[data-reason]").forEach(function (p) {
          p.hidden = p.getAttribute("data-reason") !== reason;
        });
      }
      if (voteForm) voteForm.hidden = true;
      var more = root.querySelector("[data-testid=continue-form]");
      if (more) more.hidden = true;
      root.setAttribute("data-status", "not_counted");
    }

    if (url && window.EventSource) {
      var failure = "model_error";
      var source = new EventSource(url);
      source.onmessage = function (message) {
        var event;
        try { event = JSON.parse(message.data); } catch (e) { return; }
        if (event.type === "delta") {
          var target = pane(event.side, event.turn);
          if (!target) return;
          var shown = target.textContent.length;
          // Append only what is not shown yet (a reconnect sends the stored text again).
          if (event.offset <= shown && event.offset + event.text.length > shown) {
            target.textContent += event.text.slice(shown - event.offset);
          }
        } else if (event.type === "done") {
          var done = pane(event.side, event.turn);
          if (done) done.textContent = event.text;
        } else if (event.type === "failed") {
          failure = event.reason;
        } else if (event.type === "end") {
          source.close();
          var note = root.querySelector("[data-testid=streaming-note]");
          if (note) note.hidden = true;
          if (event.status === "ready") openVote();
          else if (event.status === "not_counted") notCounted(failure);
          else window.location.reload();
        }
      };
    }

    document.addEventListener("keydown", function (event) {
      if (!voteForm || voteForm.hidden) return;
      var target = event.target;
      if (target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text"))) return;
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      var fieldset = voteForm.querySelector("fieldset");
      if (fieldset && fieldset.disabled) return;
      var key = event.key;
      if (["a", "b", "t", "x"].indexOf(key) >= 0) {
        var input = voteForm.querySelector('input[name=vote][data-key="' + key + '"]');
        if (input) { input.checked = true; input.focus(); event.preventDefault(); }
      } else if (key === "Enter" && voteForm.querySelector("input[name=vote]:checked")) {
        event.preventDefault();
        voteForm.requestSubmit ? voteForm.requestSubmit() : voteForm.submit();
      }
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
