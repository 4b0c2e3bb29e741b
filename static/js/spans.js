/* Error spans (MQM, ESA) on the task page. The source and the translation are cut into word tokens that
   know their character offsets; a selection (mouse drag, a tap on a first and a last word, or the arrow
   keys with Shift to extend) becomes a span once a severity is chosen (m minor, j major) with a category
   (1-9, 0, or c for the list). Spans are listed with edit and delete; suggested spans are accepted,
   edited or removed. The list is written to the hidden "spans" field as JSON on every change, so the
   task form's own submit (Enter) sends it. The page is set up again after each htmx swap. */
(function () {
  "use strict";

  var st = null;

  function $(id) { return document.getElementById(id); }

  function tokens(text) {
    var out = [];
    var re = /\s+|[^\s\w]|[\w\u00C0-\u024F'’-]+/g;
    var m;
    while ((m = re.exec(text)) !== null) out.push({ s: m.index, e: m.index + m[0].length, space: /^\s+$/.test(m[0]) });
    return out;
  }

  function render(box) {
    var side = box.dataset.side;
    var text = st.texts[side];
    box.textContent = "";
    tokens(text).forEach(function (t) {
      var el = document.createElement("span");
      el.textContent = text.slice(t.s, t.e);
      el.dataset.s = t.s;
      el.dataset.e = t.e;
      el.className = t.space ? "tok sp" : "tok";
      box.appendChild(el);
    });
  }

  function paint() {
    document.querySelectorAll("#span-task .span-text").forEach(function (box) {
      var side = box.dataset.side;
      box.querySelectorAll(".tok").forEach(function (el) {
        var s = +el.dataset.s, e = +el.dataset.e;
        var sev = "";
        st.spans.forEach(function (span) {
          if (span.side === side && span.start < e && s < span.end) sev = sev === "major" ? sev : span.severity;
        });
        var pending = st.suggestions.some(function (g) {
          return g.state === "pending" && g.side === side && g.start < e && s < g.end;
        });
        var sel = st.sel && st.sel.side === side && st.sel.start < e && s < st.sel.end;
        el.classList.toggle("err-minor", sev === "minor");
        el.classList.toggle("err-major", sev === "major");
        el.classList.toggle("suggested", pending);
        el.classList.toggle("selected", !!sel);
      });
    });
    var shown = $("span-selected");
    if (shown) shown.textContent = st.sel ? st.texts[st.sel.side].slice(st.sel.start, st.sel.end) : "—";
    var editing = $("span-editing");
    if (editing) editing.hidden = st.editing === null;
  }

  function label(code) {
    var found = st.categories.filter(function (c) { return c.code === code; })[0];
    return found ? found.label : code || "—";
  }

  function button(text, action, index, testid) {
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = text;
    b.dataset.spanAction = action;
    b.dataset.index = index;
    b.dataset.testid = testid;
    return b;
  }

  function list() {
    var ol = $("span-list");
    if (!ol) return;
    ol.textContent = "";
    st.spans.forEach(function (span, i) {
      var li = document.createElement("li");
      li.className = "span-row " + span.severity;
      li.dataset.testid = "span-row";
      var what = document.createElement("span");
      var where = span.side === "source" ? " (" + st.t.omission + ")" : "";
      what.textContent = "«" + st.texts[span.side].slice(span.start, span.end) + "»" + where + " — " +
        (span.category ? label(span.category) + " · " : "") + st.t[span.severity];
      li.appendChild(what);
      if (span.suggestion) {
        var badge = document.createElement("span");
        badge.className = "badge";
        badge.textContent = st.t.suggested;
        li.appendChild(badge);
      }
      li.appendChild(button(st.t.edit, "edit", i, "span-edit"));
      li.appendChild(button(st.t.remove, "delete", i, "span-delete"));
      ol.appendChild(li);
    });
    st.suggestions.forEach(function (g, i) {
      if (g.state !== "pending") return;
      var li = document.createElement("li");
      li.className = "span-row suggestion";
      li.dataset.testid = "suggestion-row";
      var what = document.createElement("span");
      what.textContent = st.t.suggested + ": «" + st.texts[g.side].slice(g.start, g.end) + "» — " +
        (g.category ? label(g.category) + " · " : "") + st.t[g.severity] + (g.note ? " (" + g.note + ")" : "");
      li.appendChild(what);
      li.appendChild(button(st.t.accept, "accept", i, "suggestion-accept"));
      li.appendChild(button(st.t.edit, "edit-suggestion", i, "suggestion-edit"));
      li.appendChild(button(st.t.remove, "dismiss", i, "suggestion-remove"));
      ol.appendChild(li);
    });
    var field = $("spans-field");
    if (field) {
      field.value = JSON.stringify(st.spans.map(function (s) {
        return { side: s.side, start: s.start, end: s.end, category: s.category, severity: s.severity,
                 suggestion: s.suggestion || null, comment: s.comment || "" };
      }));
    }
    var none = $("no-error");
    if (none && st.spans.length) none.checked = false;
    paint();
  }

  function setSel(side, start, end) {
    if (start >= end) { st.sel = null; } else { st.sel = { side: side, start: start, end: end }; }
    paint();
  }

  function tokenOf(node) {
    var el = node && (node.nodeType === 3 ? node.parentNode : node);
    return el && el.closest ? el.closest("#span-task .tok") : null;
  }

  function wordTokens(side) {
    var box = document.querySelector('#span-task .span-text[data-side="' + side + '"]');
    return box ? Array.prototype.slice.call(box.querySelectorAll(".tok:not(.sp)")) : [];
  }

  function fromSelection() {
    var sel = window.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount) return false;
    var a = tokenOf(sel.anchorNode), b = tokenOf(sel.focusNode);
    if (!a || !b) return false;
    var side = a.closest(".span-text").dataset.side;
    if (b.closest(".span-text").dataset.side !== side) return false;
    var start = Math.min(+a.dataset.s, +b.dataset.s), end = Math.max(+a.dataset.e, +b.dataset.e);
    sel.removeAllRanges();
    st.anchor = null;
    setSel(side, start, end);
    return true;
  }

  function clickToken(el) {
    if (el.classList.contains("sp")) return;
    var side = el.closest(".span-text").dataset.side;
    var s = +el.dataset.s, e = +el.dataset.e;
    if (st.anchor && st.anchor.side === side && st.sel && st.sel.side === side) {
      setSel(side, Math.min(st.anchor.s, s), Math.max(st.anchor.e, e));
      st.anchor = null;
    } else {
      st.anchor = { side: side, s: s, e: e };
      setSel(side, s, e);
    }
  }

  function moveKey(side, dir, extend) {
    var words = wordTokens(side);
    if (!words.length) return;
    if (!st.sel || st.sel.side !== side) {
      var first = dir > 0 ? words[0] : words[words.length - 1];
      st.cursor = { side: side, index: words.indexOf(first), anchor: words.indexOf(first) };
    } else {
      st.cursor.index = Math.max(0, Math.min(words.length - 1, st.cursor.index + dir));
      if (!extend) st.cursor.anchor = st.cursor.index;
    }
    var a = words[Math.min(st.cursor.anchor, st.cursor.index)], b = words[Math.max(st.cursor.anchor, st.cursor.index)];
    setSel(side, +a.dataset.s, +b.dataset.e);
  }

  function mark(severity) {
    if (!st.sel) { warn(st.t.select_first); return; }
    var category = $("span-category").value;
    if (st.protocol === "mqm" && !category && st.sel.side !== "source") { warn(st.t.category_first); $("span-category").focus(); return; }
    if (st.sel.side === "source" && st.protocol === "mqm" && !category) category = st.omission;
    var span = { side: st.sel.side, start: st.sel.start, end: st.sel.end, category: category, severity: severity, suggestion: null };
    if (st.editing !== null) {
      span.suggestion = st.spans[st.editing].suggestion;
      span.comment = st.spans[st.editing].comment;
      st.spans[st.editing] = span;
    } else {
      st.spans.push(span);
    }
    st.editing = null;
    st.sel = null;
    st.anchor = null;
    $("span-category").value = "";
    warn("");
    list();
  }

  function warn(text) {
    var help = $("span-category-help");
    if (help) help.textContent = text;
  }

  function act(action, index) {
    if (action === "cancel") { st.sel = null; st.editing = null; st.anchor = null; paint(); return; }
    if (action === "delete") { st.spans.splice(index, 1); if (st.editing === index) st.editing = null; list(); return; }
    if (action === "edit") {
      var span = st.spans[index];
      st.editing = index;
      $("span-category").value = span.category || "";
      setSel(span.side, span.start, span.end);
      return;
    }
    var g = st.suggestions[index];
    if (action === "accept" || action === "edit-suggestion") {
      g.state = "taken";
      st.spans.push({ side: g.side, start: g.start, end: g.end, category: g.category, severity: g.severity, suggestion: g.id });
      list();
      if (action === "edit-suggestion") act("edit", st.spans.length - 1);
    } else if (action === "dismiss") {
      g.state = "removed";
      list();
    }
  }

  function init() {
    var task = $("span-task");
    var data = $("span-data");
    if (!task || !data || task.dataset.ready === "1") return;
    task.dataset.ready = "1";
    var d = JSON.parse(data.textContent);
    st = {
      protocol: task.dataset.protocol, texts: { source: d.source, target: d.target }, categories: d.categories,
      t: d.labels, omission: d.omission_category, spans: (d.spans || []).slice(), sel: null, anchor: null,
      editing: null, cursor: null,
      suggestions: (d.suggestions || []).map(function (g) {
        var taken = (d.spans || []).some(function (s) { return s.suggestion === g.id; });
        return Object.assign({}, g, { state: taken ? "taken" : (d.answered ? "removed" : "pending") });
      })
    };
    document.querySelectorAll("#span-task .span-text").forEach(render);
    list();
    var score = $("esa-score");
    if (score) score.addEventListener("input", function () { $("esa-score-shown").textContent = score.value; });
    $("span-category").addEventListener("change", function () {
      var c = st.categories.filter(function (x) { return x.code === $("span-category").value; })[0];
      warn(c ? c.help : "");
    });
  }

  document.addEventListener("mouseup", function (event) {
    if (!st || !$("span-task") || !event.target.closest || !event.target.closest("#span-task .span-text")) return;
    if (!fromSelection()) {
      var el = tokenOf(event.target);
      if (el) clickToken(el);
    }
  });

  document.addEventListener("touchend", function (event) {
    if (!st || !event.target.closest || !event.target.closest("#span-task .span-text")) return;
    var el = tokenOf(event.target);
    if (el) { event.preventDefault(); clickToken(el); }
  });

  document.addEventListener("click", function (event) {
    var b = event.target.closest && event.target.closest("#span-task [data-span-action], #span-task [data-severity]");
    if (!b || !st) return;
    if (b.dataset.severity) mark(b.dataset.severity); else act(b.dataset.spanAction, +b.dataset.index);
  });

  document.addEventListener("keydown", function (event) {
    var task = $("span-task");
    if (!task) return;
    init();
    var target = event.target;
    if (target && target.type === "range") return;
    if (target && (target.tagName === "TEXTAREA" || target.tagName === "SELECT" || (target.tagName === "INPUT" && target.type === "text"))) {
      if (target.id === "span-category" && (event.key === "Enter" || event.key === "Escape")) { event.preventDefault(); target.blur(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var key = event.key;
    var focused = target && target.closest ? target.closest("#span-task .span-text") : null;
    var side = focused ? focused.dataset.side : (st.sel ? st.sel.side : "target");
    var handled = true;
    if (key === "ArrowRight" || key === "ArrowLeft") {
      moveKey(side, key === "ArrowRight" ? 1 : -1, event.shiftKey);
    } else if (key === "t" || key === "o") {
      var box = document.querySelector('#span-task .span-text[data-side="' + (key === "t" ? "target" : "source") + '"]');
      box.focus();
      moveKey(box.dataset.side, 1, false);
      st.cursor.index = 0; st.cursor.anchor = 0;
      var w = wordTokens(box.dataset.side)[0];
      if (w) setSel(box.dataset.side, +w.dataset.s, +w.dataset.e);
    } else if (key === "m" || key === "j") {
      mark(key === "m" ? "minor" : "major");
    } else if (/^[0-9]$/.test(key)) {
      var index = key === "0" ? 9 : +key - 1;
      var c = st.categories[index];
      if (c) { $("span-category").value = c.code; warn(c.help); }
    } else if (key === "c") {
      $("span-category").focus();
    } else if (key === "Escape") {
      act("cancel");
    } else if (key === "Delete" || key === "Backspace") {
      if (st.editing !== null) act("delete", st.editing); else handled = false;
    } else {
      handled = false;
    }
    if (handled) { event.preventDefault(); event.stopImmediatePropagation(); }
  }, true);

  document.addEventListener("DOMContentLoaded", init);
  document.addEventListener("htmx:afterSettle", init);
  document.addEventListener("htmx:load", init);
  if (document.readyState !== "loading") init();
})();
