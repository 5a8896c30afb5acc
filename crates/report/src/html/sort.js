"use strict";
// Any script error is recorded on the page, where a test (or a reader) can see it.
window.addEventListener("error", function (e) {
  document.documentElement.setAttribute("data-script-error", String(e.message));
});
// Click a column header to sort by it; click again to reverse. Cells with a data-v
// attribute sort by that number, others by their text; empty cells go last.
function xbSort(table, col, th) {
  var body = table.tBodies[0];
  var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
  var rows = Array.prototype.slice.call(body.rows);
  function key(row) {
    var cell = row.cells[col];
    if (!cell) return null;
    var v = cell.getAttribute("data-v");
    if (v !== null) return parseFloat(v);
    var t = cell.textContent.trim();
    return t === "" || t === "-" ? null : t;
  }
  rows.sort(function (a, b) {
    var x = key(a), y = key(b);
    if (x === null || y === null) return x === y ? 0 : (x === null ? 1 : -1);
    if (typeof x === "number" && typeof y === "number") return dir * (x - y);
    return dir * String(x).localeCompare(String(y), undefined, { numeric: true });
  });
  rows.forEach(function (r) { body.appendChild(r); });
  Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
  th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
}
document.querySelectorAll("table.sortable").forEach(function (table) {
  var head = table.tHead && table.tHead.rows[0];
  if (!head) return;
  Array.prototype.forEach.call(head.cells, function (th, col) {
    var b = th.querySelector("button");
    if (b) b.addEventListener("click", function () { xbSort(table, col, th); });
  });
  table.setAttribute("data-sortable", "ready");
});
// Printing shows every point's detail.
window.addEventListener("beforeprint", function () {
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
});
document.documentElement.setAttribute("data-report", "ready");
