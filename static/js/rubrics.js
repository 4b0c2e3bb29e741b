/* Show the rows the scale uses, and the category columns only for named categories. */
(function () {
  var form = document.getElementById("rubric-form");
  if (!form) return;
  function update() {
    var kind = form.querySelector("input[name=scale_kind]:checked");
    var categories = kind && kind.value === "categories";
    var points = parseInt(form.querySelector("input[name=points]").value, 10) || 0;
    form.querySelectorAll(".cat-col").forEach(function (cell) { cell.hidden = !categories; });
    form.querySelectorAll("tr[data-row]").forEach(function (row) {
      var n = parseInt(row.dataset.row, 10);
      row.hidden = categories ? false : n > points;
    });
    form.querySelector("input[name=points]").closest(".field").hidden = categories;
  }
  form.addEventListener("input", update);
  form.addEventListener("change", update);
  update();
})();
