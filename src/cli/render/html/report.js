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
  var store = document.getElementById("findings-data");
  if (!table || !store) { document.documentElement.classList.add("ready"); return; }
  var data = JSON.parse(store.value);
  var S = data.s, P = data.p, F = data.f;
  var STATUS = ["pass", "fail", "warn", "error", "skip"];
  var ACTION = ["Audit", "Enforce", "Warn"];
  var SEV = { critical: 0, high: 1, medium: 2, low: 3, info: 4 };
  function str(i) { return i < 0 ? "" : S[i]; }
  function shown(i) { var v = str(i); return v === "" ? "(none)" : v; }
  function sev(r) { return S[P[r[2]][1]]; }
  function sevRank(r) { var v = sev(r); return v === "" ? 6 : (v in SEV ? SEV[v] : 5); }
  var all = data.r;
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
  var body = table.tBodies[0];

  function columnValue(r, i) {
    if (i === 3) { return S[P[r[2]][0]]; }
    if (i === 4) { return shown(r[4]); }
    if (i === 5) { return shown(r[5]); }
    return "";
  }
  function searchText(r) {
    var f = r[7] < 0 ? "" : S[F[r[7]][0]] + ":" + r[8];
    return [STATUS[r[0]], ACTION[r[1]], sev(r), S[P[r[2]][0]], str(r[3]), str(r[4]), str(r[5]),
      str(r[6]), f, str(r[9])].join("\n").toLowerCase();
  }
  function apply() {
    if (texts === null && q.value) { texts = all.map(searchText); }
    var terms = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    var st = fStatus.value, ac = fAction.value, sv = fSev.value;
    matched = [];
    for (var n = 0; n < all.length; n++) {
      var r = all[n];
      if (st && STATUS[r[0]] !== st) { continue; }
      if (ac && ACTION[r[1]] !== ac) { continue; }
      if (sv && (sev(r) || "(unset)") !== sv) { continue; }
      if (column && columnValue(r, column.i) !== column.v) { continue; }
      if (terms.length) {
        var t = texts[n], ok = true;
        for (var k = 0; k < terms.length && ok; k++) { ok = t.indexOf(terms[k]) >= 0; }
        if (!ok) { continue; }
      }
      matched.push(r);
    }
    show();
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function cell(tr, cls, child) {
    var td = el("td", cls);
    if (typeof child === "string") { td.textContent = child; } else if (child) { td.appendChild(child); }
    tr.appendChild(td);
    return td;
  }
  function orNone(v) { return v === "" ? el("span", "none", "(none)") : v; }
  function rowOf(r) {
    var tr = document.createElement("tr");
    cell(tr, "", el("span", "s s-" + STATUS[r[0]], STATUS[r[0]]));
    cell(tr, "", el("span", "a a-" + ACTION[r[1]], ACTION[r[1]]));
    var s = sev(r);
    cell(tr, s ? "sev-" + s.replace(/[^a-z0-9]/gi, "") : "", s || el("span", "none", "(unset)"));
    var pol = cell(tr, "", null), a = el("a", "", S[P[r[2]][0]]);
    a.setAttribute("href", "#p-" + r[2]);
    pol.appendChild(a);
    if (str(r[3])) { pol.appendChild(document.createElement("br")); pol.appendChild(document.createTextNode(str(r[3]))); }
    cell(tr, "", shown(r[4]));
    cell(tr, "", orNone(str(r[5])));
    cell(tr, "", str(r[6]));
    var loc = cell(tr, "loc", null);
    if (r[7] >= 0) {
      var file = F[r[7]], text = S[file[0]] + (r[8] ? ":" + r[8] : "");
      if (file[1] >= 0) {
        var link = el("a", "", text);
        link.setAttribute("href", S[file[1]]);
        loc.appendChild(link);
      } else { loc.textContent = text; }
    }
    cell(tr, "msg", str(r[9]));
    return tr;
  }
  function show() {
    var n = Number(size.value);
    var pages = Math.max(1, Math.ceil(matched.length / n));
    if (page >= pages) { page = pages - 1; }
    var from = page * n, to = Math.min(matched.length, from + n);
    var frag = document.createDocumentFragment();
    for (var i = from; i < to; i++) { frag.appendChild(rowOf(matched[i])); }
    body.textContent = "";
    body.appendChild(frag);
    info.textContent = matched.length === 0 ? "no finding matches" :
      "findings " + (from + 1) + "\u2013" + to + " of " + matched.length +
      (matched.length !== all.length ? " (filtered from " + all.length + ")" : "");
    document.getElementById("prev").disabled = page === 0;
    document.getElementById("next").disabled = page >= pages - 1;
  }
  var KEYS = [
    function (r) { return STATUS[r[0]]; },
    function (r) { return ACTION[r[1]]; },
    sevRank,
    function (r) { return S[P[r[2]][0]] + "/" + str(r[3]); },
    function (r) { return str(r[4]); },
    function (r) { return str(r[5]); },
    function (r) { return str(r[6]); },
    function (r) { return (r[7] < 0 ? "" : S[F[r[7]][0]]) + ":" + String(r[8]).padStart(9, "0"); },
    function (r) { return str(r[9]); }
  ];
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, i) {
    th.addEventListener("click", function () {
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      var key = KEYS[i];
      var keyed = all.map(function (r, n) { return { k: key(r), r: r, n: n }; });
      keyed.sort(function (a, b) {
        var c = typeof a.k === "number" ? a.k - b.k : collator.compare(a.k, b.k);
        return c * dir || a.n - b.n;
      });
      all = keyed.map(function (x) { return x.r; });
      if (texts !== null) { texts = all.map(searchText); }
      apply();
    });
  });
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
  /* A link to the page can carry a filter: report.html#q=words */
  if (location.hash.indexOf("#q=") === 0) {
    try { q.value = decodeURIComponent(location.hash.slice(3)); } catch (e) { q.value = ""; }
  }
  document.documentElement.classList.add("ready");
  apply();
})();
