(function () {
  "use strict";
  /* Sorting, filtering and paging of the report's tables. Without this script every row is
     shown, unsorted and unfiltered. No request leaves the page. */
  var collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
  function cellValue(tr, i) {
    var c = tr.cells[i];
    if (!c) { return ""; }
    var v = c.getAttribute("data-v");
    return v === null ? c.textContent : v;
  }
  function compare(i, dir) {
    return function (a, b) {
      var x = cellValue(a, i), y = cellValue(b, i);
      var nx = Number(x), ny = Number(y);
      var r = (x !== "" && y !== "" && !isNaN(nx) && !isNaN(ny)) ? nx - ny : collator.compare(x, y);
      return r * dir;
    };
  }
  function makeSortable(table, rowsOf, after) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, i) {
      th.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        var rows = rowsOf();
        rows.sort(compare(i, dir));
        var body = table.tBodies[0], frag = document.createDocumentFragment();
        rows.forEach(function (r) { frag.appendChild(r); });
        body.appendChild(frag);
        if (after) { after(); }
      });
    });
  }
  document.querySelectorAll("table.sortable:not(#findings-table)").forEach(function (t) {
    makeSortable(t, function () { return Array.prototype.slice.call(t.tBodies[0].rows); });
  });

  var table = document.getElementById("findings-table");
  if (!table) { document.documentElement.classList.add("ready"); return; }
  var all = Array.prototype.slice.call(table.tBodies[0].rows);
  var texts = null;
  var matched = all;
  var page = 0;
  var q = document.getElementById("q");
  var fStatus = document.getElementById("f-status");
  var fAction = document.getElementById("f-action");
  var fSev = document.getElementById("f-sev");
  var size = document.getElementById("f-size");
  var info = document.getElementById("pager-info");
  var chip = document.getElementById("chip");
  var column = null;

  function columnText(tr, i) {
    var c = tr.cells[i];
    if (!c) { return ""; }
    return c.firstElementChild ? c.firstElementChild.textContent : c.textContent;
  }
  function apply() {
    if (texts === null && q.value) {
      texts = new Map();
      all.forEach(function (tr) { texts.set(tr, tr.textContent.toLowerCase()); });
    }
    var terms = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    var st = fStatus.value, ac = fAction.value, sv = fSev.value;
    matched = all.filter(function (tr) {
      if (st && tr.cells[0].textContent !== st) { return false; }
      if (ac && tr.cells[1].textContent !== ac) { return false; }
      if (sv && columnText(tr, 2) !== sv) { return false; }
      if (column && columnText(tr, column.i) !== column.v) { return false; }
      if (terms.length) {
        var t = texts.get(tr);
        for (var k = 0; k < terms.length; k++) { if (t.indexOf(terms[k]) < 0) { return false; } }
      }
      return true;
    });
    show();
  }
  function show() {
    var n = size.value === "all" ? matched.length : Number(size.value);
    var pages = Math.max(1, Math.ceil(matched.length / Math.max(n, 1)));
    if (page >= pages) { page = pages - 1; }
    var from = page * n, to = Math.min(matched.length, from + n);
    var visible = new Set(matched.slice(from, to));
    all.forEach(function (tr) { tr.hidden = !visible.has(tr); });
    info.textContent = matched.length === 0 ? "no finding matches" :
      "findings " + (from + 1) + "\u2013" + to + " of " + matched.length +
      (matched.length !== all.length ? " (filtered from " + all.length + ")" : "");
    document.getElementById("prev").disabled = page === 0;
    document.getElementById("next").disabled = page >= pages - 1;
  }
  var timer = 0;
  q.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { page = 0; apply(); }, 150);
  });
  [fStatus, fAction, fSev].forEach(function (s) {
    s.addEventListener("change", function () { page = 0; apply(); });
  });
  size.addEventListener("change", function () { page = 0; show(); });
  document.getElementById("prev").addEventListener("click", function () { page -= 1; show(); });
  document.getElementById("next").addEventListener("click", function () { page += 1; show(); });
  function setColumn(i, v, label) {
    column = i === null ? null : { i: i, v: v };
    chip.hidden = column === null;
    chip.firstChild.textContent = column === null ? "" : label + " = " + v + " ";
    page = 0;
    apply();
  }
  chip.querySelector("button").addEventListener("click", function () { setColumn(null); });
  document.addEventListener("click", function (ev) {
    var a = ev.target.closest ? ev.target.closest("a[data-col]") : null;
    if (!a) { return; }
    setColumn(Number(a.getAttribute("data-col")), a.getAttribute("data-val"), a.getAttribute("data-label"));
  });
  makeSortable(table, function () { return all; }, function () { apply(); });
  document.documentElement.classList.add("ready");
  apply();
})();
