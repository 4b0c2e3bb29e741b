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
})();
