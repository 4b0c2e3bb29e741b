/* Behaviour shared by every page, bound by delegation so it also holds for content htmx swaps in.
   Pages carry no inline scripts or event handler attributes (the Content-Security-Policy refuses them):
   a control says what it wants with a data- attribute and this file does it. */
(function () {
  "use strict";

  // <select data-autosubmit> sends its form as soon as another option is picked.
  document.addEventListener("change", function (event) {
    var control = event.target;
    if (!control || !control.form || !control.hasAttribute("data-autosubmit")) return;
    if (control.form.requestSubmit) control.form.requestSubmit(); else control.form.submit();
  });

  // <input type="search" data-filter-options="ID"> hides the options of the <select id="ID"> whose text
  // does not contain what is typed (chosen options stay visible).
  document.addEventListener("input", function (event) {
    var box = event.target;
    if (!box || !box.hasAttribute || !box.hasAttribute("data-filter-options")) return;
    var select = document.getElementById(box.getAttribute("data-filter-options"));
    if (!select) return;
    var wanted = box.value.trim().toLowerCase();
    Array.prototype.forEach.call(select.options, function (option) {
      option.hidden = !option.selected && wanted !== "" && option.text.toLowerCase().indexOf(wanted) === -1;
    });
  });
})();
