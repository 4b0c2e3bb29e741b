/* Keyboard-first annotation. Every choice on screen has a key; the page is re-initialised after each
   htmx swap, so the next task is ready for the keyboard without a reload. Translation and question jobs
   mark their inputs with data-key (press the key to pick or toggle) and data-focus-key (press the key to
   write in that box); Ctrl+Enter submits from a text box. */
(function () {
  "use strict";

  var state = { cell: 0, bestMode: false, visibleMs: 0, shownAt: null };
  // The task roots already set up. htmx swaps the next task in, then settles it a moment later; a key
  // pressed in between sets up the new task first, so it lands on the new task's first open scale.
  var ready = new WeakSet();

  function root() { return document.getElementById("task"); }
  function scales() {
    var r = root();
    return r ? Array.prototype.slice.call(r.querySelectorAll("fieldset.scale")) : [];
  }

  function startTimer() {
    state.visibleMs = 0;
    state.shownAt = document.visibilityState === "visible" ? performance.now() : null;
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") {
      state.shownAt = performance.now();
    } else if (state.shownAt !== null) {
      state.visibleMs += performance.now() - state.shownAt;
      state.shownAt = null;
    }
  });
  function secondsInView() {
    var ms = state.visibleMs + (state.shownAt !== null ? performance.now() - state.shownAt : 0);
    return (ms / 1000).toFixed(1);
  }

  function focusCell(index) {
    var all = scales();
    if (!all.length) return;
    state.cell = Math.max(0, Math.min(index, all.length - 1));
    all.forEach(function (fs, i) { fs.classList.toggle("current", i === state.cell); });
    var current = all[state.cell];
    var card = current.closest(".response-card");
    document.querySelectorAll(".response-card.current").forEach(function (c) { c.classList.remove("current"); });
    if (card) card.classList.add("current");
    current.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  function firstUnanswered() {
    var all = scales();
    for (var i = 0; i < all.length; i++) {
      if (!all[i].querySelector("input:checked")) return i;
    }
    return 0;
  }

  function check(selector) {
    var input = root() && root().querySelector(selector);
    if (input) {
      input.checked = true;
      input.dispatchEvent(new Event("change", { bubbles: true }));
    }
    return !!input;
  }

  function jobKey(key) {
    var r = root();
    if (!r || r.dataset.job !== "1") return false;
    var input = r.querySelector('input[data-key="' + key + '"]');
    if (input) {
      input.checked = input.type === "checkbox" ? !input.checked : true;
      input.dispatchEvent(new Event("change", { bubbles: true }));
      var then = input.dataset.thenFocus && input.checked ? document.getElementById(input.dataset.thenFocus) : null;
      if (then) then.focus();
      return true;
    }
    var box = r.querySelector('[data-focus-key="' + key + '"]');
    if (box) {
      box.focus();
      return true;
    }
    return false;
  }

  function toggle(id) {
    var el = document.getElementById(id);
    if (el) el.hidden = !el.hidden;
  }

  function toggleRubricLang() {
    var r = root();
    if (r) r.dataset.rubricLang = r.dataset.rubricLang === "id" ? "en" : "id";
  }

  function submitForm(id) {
    var form = document.getElementById(id);
    if (!form) return;
    if (id === "task-form") form.querySelector("input[name=seconds]").value = secondsInView();
    if (form.requestSubmit) form.requestSubmit(); else form.submit();
  }

  function init() {
    var r = root();
    if (!r) return;
    ready.add(r);
    state.bestMode = false;
    startTimer();
    if (r.dataset.kind === "likert") focusCell(firstUnanswered());
    var form = document.getElementById("task-form");
    if (form) {
      form.addEventListener("submit", function () {
        form.querySelector("input[name=seconds]").value = secondsInView();
      });
    }
    var error = r.querySelector(".form-errors");
    if (error) error.scrollIntoView({ block: "nearest" });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-action]");
    if (!button) return;
    var action = button.dataset.action;
    if (action === "instructions") toggle("instructions");
    if (action === "help") toggle("shortcuts");
    if (action === "rubric-lang") toggleRubricLang();
  });

  document.addEventListener("change", function (event) {
    var fs = event.target.closest && event.target.closest("fieldset.scale");
    if (fs) {
      var index = scales().indexOf(fs);
      if (index >= 0) state.cell = index;
    }
  });

  document.addEventListener("keydown", function (event) {
    var r = root();
    if (!r) return;
    if (!ready.has(r)) init();
    var target = event.target;
    var typing = target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text") || target.tagName === "SELECT");
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && target && target.closest && target.closest("#task-form")) {
      event.preventDefault();
      submitForm("task-form");
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing) {
      if (event.key === "Escape") target.blur();
      if (event.key === "Enter" && target.closest("#skip-form")) { event.preventDefault(); submitForm("skip-form"); }
      return;
    }
    var kind = r.dataset.kind;
    var key = event.key;
    var handled = true;
    if (key === "Enter") {
      submitForm("task-form");
    } else if (key === "s") {
      var skip = document.getElementById("skip-form");
      if (skip && !skip.hidden) document.getElementById("skip-reason").focus();
    } else if (key === "i") {
      toggle("instructions");
    } else if (key === "?") {
      toggle("shortcuts");
    } else if (r.dataset.job === "1") {
      handled = jobKey(key);
    } else if (key === "l" && r.querySelector("[data-action=rubric-lang]")) {
      toggleRubricLang();
    } else if (kind === "pairwise" && ["a", "b", "t", "x"].indexOf(key) >= 0) {
      check('input[name=vote][data-key="' + key + '"]');
    } else if (kind === "likert" && key === "b" && r.querySelector("input[name=best]")) {
      state.bestMode = true;
      r.querySelector("fieldset.best").classList.add("current");
    } else if (/^[0-9]$/.test(key) && (state.bestMode || kind === "best_of_n")) {
      check(key === "0" ? 'input[name=best][value="all_bad"]' : 'input[name=best][value="' + key + '"]');
      state.bestMode = false;
      var best = r.querySelector("fieldset.best");
      if (best) best.classList.remove("current");
    } else if (kind === "likert" && /^[0-9]$/.test(key)) {
      // Each value of the highlighted scale carries its key: 1-9, 0 for the tenth point or category.
      var cell = scales()[state.cell];
      if (cell && check('fieldset.scale.current input[data-key="' + key + '"]')) focusCell(state.cell + 1);
    } else if (kind === "likert" && (key === "j" || key === "ArrowDown")) {
      focusCell(state.cell + 1);
    } else if (kind === "likert" && (key === "k" || key === "ArrowUp")) {
      focusCell(state.cell - 1);
    } else {
      handled = false;
    }
    if (handled) event.preventDefault();
  });

  // htmx leaves the page as it is when the server answers with an error. When the database is unavailable
  // (503) say so above the form: the answer stays on screen and the same submit can be sent again.
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var form = document.getElementById("task-form");
    if (!form || !xhr || xhr.status !== 503) return;
    var page = new DOMParser().parseFromString(xhr.responseText, "text/html");
    var message = page.querySelector("[data-role=database-unavailable] p");
    var box = form.querySelector("[data-role=unavailable]");
    if (!box) {
      box = document.createElement("div");
      box.className = "form-errors";
      box.setAttribute("role", "alert");
      box.dataset.role = "unavailable";
      form.insertBefore(box, form.firstChild);
    }
    box.textContent = "";
    var text = document.createElement("p");
    text.className = "error";
    text.textContent = message ? message.textContent : xhr.status + " " + xhr.statusText;
    box.appendChild(text);
    box.scrollIntoView({ block: "nearest" });
  });

  document.addEventListener("DOMContentLoaded", init);
  document.addEventListener("htmx:afterSettle", function () {
    var r = root();
    if (!r) return;
    if (!ready.has(r)) init();
    window.scrollTo({ top: 0 });
  });
})();
