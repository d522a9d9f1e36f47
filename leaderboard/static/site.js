// Sortable tables without a library: click (or press Enter on) a column header to sort by it; again to reverse.
// Cells sort by their data-sort attribute (numbers) when present, else by their text. Works from file://.
(function () {
  "use strict";
  function cellKey(row, index, numeric) {
    var cell = row.cells[index];
    if (!cell) { return numeric ? -Infinity : ""; }
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    if (numeric) {
      var x = parseFloat(raw);
      return isNaN(x) ? -Infinity : x;
    }
    return raw.toLowerCase();
  }
  function sortTable(table, index, th) {
    var numeric = th.getAttribute("data-type") === "num";
    var current = th.getAttribute("aria-sort");
    // numbers start high-to-low (best first), text A-Z
    var ascending = current ? current === "descending" : !numeric;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, i) { r._pos = i; });
    rows.sort(function (a, b) {
      var ka = cellKey(a, index, numeric), kb = cellKey(b, index, numeric);
      if (ka < kb) { return ascending ? -1 : 1; }
      if (ka > kb) { return ascending ? 1 : -1; }
      return a._pos - b._pos;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  function setUp(table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      if (th.classList.contains("nosort")) { return; }
      var button = document.createElement("button");
      button.type = "button";
      while (th.firstChild) { button.appendChild(th.firstChild); }
      th.appendChild(button);
      button.addEventListener("click", function () { sortTable(table, index, th); });
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), setUp);

  // A table wider than its box scrolls inside it: say so above it, and let the keyboard scroll it (a focusable
  // region). Checked again when the window or the per-task choice changes.
  function markOverflow() {
    Array.prototype.forEach.call(document.querySelectorAll(".scroll"), function (box) {
      var over = box.offsetParent !== null && getComputedStyle(box).overflowX !== "visible" &&
        box.scrollWidth > box.clientWidth + 1;
      box.classList.toggle("overflows", over);
      if (over) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", "table: scroll sideways for more columns");
      } else {
        box.removeAttribute("tabindex");
      }
    });
  }
  markOverflow();
  window.addEventListener("resize", markOverflow);
  Array.prototype.forEach.call(document.querySelectorAll(".pertask input"), function (input) {
    input.addEventListener("change", markOverflow);
  });
}());
