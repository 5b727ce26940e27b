// The sample browser: filters, sorts and pages the views embedded as JSON; its state is the URL hash.
// It offers only what the views support: right/wrong where some view has a verdict, each flag
// the views set (sherlock-comparison's "disagrees with humans"), sorts by the numbers they carry.
(function () {
  "use strict";
  var PAGE = 50;
  var DEFAULTS = {only: "all", cat: "", q: "", sort: "id", page: 1};
  var all = JSON.parse(document.getElementById("samples-data").textContent);
  var categories = {}, flags = [], scoreNames = {};
  var verdicts = false, scores = false, margins = false;
  all.forEach(function (v) {
    if (v.category != null) categories[v.category] = true;
    if (v.correct === true || v.correct === false) verdicts = true;
    if (v.score != null) { scores = true; scoreNames[v.score_name || "score"] = true; }
    if (v.margin != null) margins = true;
    Object.keys(v.flags || {}).forEach(function (f) { if (flags.indexOf(f) < 0) flags.push(f); });
  });
  var scoreName = Object.keys(scoreNames).length === 1 ? Object.keys(scoreNames)[0] : "score";
  var shows = [["all", "all"]];
  if (verdicts) shows.push(["wrong", "wrong"], ["right", "right"]);
  flags.forEach(function (f) { shows.push(["is:" + f, f]); });
  var sorts = [["id", "file order"]];
  if (scores) sorts.push(["-score", scoreName + " ↓"], ["score", scoreName + " ↑"]);
  if (margins) sorts.push(["-margin", "margin ↓"], ["margin", "margin ↑"]);
  var offered = function (options, value) { return options.some(function (o) { return o[0] === value; }); };
  var el = function (tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k]; else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  };
  function number(x) {  // four significant digits, whole numbers as they are
    if (typeof x !== "number") return String(x);
    return Number.isInteger(x) ? String(x) : String(+x.toPrecision(4));
  }
  function shown(value) {  // a field's value as text: numbers rounded, lists joined, never an object's JSON
    if (typeof value === "number") return number(value);
    if (typeof value === "string") return value;
    if (Array.isArray(value) && value.every(function (x) { return x === null || typeof x !== "object"; })) {
      return value.map(function (x) { return typeof x === "number" ? number(x) : String(x); }).join(", ");
    }
    if (Array.isArray(value)) return value.map(shown).join("; ");
    if (value !== null && typeof value === "object") {
      return Object.keys(value).map(function (k) { return k + ": " + shown(value[k]); }).join("; ");
    }
    return String(value);
  }
  function readState() {
    var s = {only: "all", cat: "", q: "", sort: "id", page: 1};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var i = part.indexOf("=");
      if (i > 0) s[decodeURIComponent(part.slice(0, i))] = decodeURIComponent(part.slice(i + 1).replace(/\+/g, " "));
    });
    s.page = Math.max(1, parseInt(s.page, 10) || 1);
    s.refused = "";
    if (!offered(shows, s.only)) {  // a link made for another task's samples (#only=wrong): say so, show all
      s.refused = s.only;
      s.only = "all";
    }
    if (!offered(sorts, s.sort)) s.sort = "id";
    return s;
  }
  function writeState(s) {
    var parts = [];
    ["only", "cat", "q", "sort", "page"].forEach(function (k) {
      if (String(s[k]) !== String(DEFAULTS[k])) parts.push(k + "=" + encodeURIComponent(s[k]));
    });
    var hash = parts.length ? "#" + parts.join("&") : "#";
    if (location.hash !== hash) location.hash = hash; else render();
  }
  function haystack(v) {
    if (v._hay === undefined) {
      var bits = [v.id, v.category || ""];
      (v.texts || []).forEach(function (t) { bits.push(t.text); });
      Object.keys(v.fields || {}).forEach(function (k) { bits.push(shown(v.fields[k])); });
      (v.images || []).forEach(function (im) { bits.push(im.caption || "", im.path || ""); });
      v._hay = bits.join("\n").toLowerCase();
    }
    return v._hay;
  }
  function matching(s) {
    var q = s.q.toLowerCase();
    var flag = s.only.indexOf("is:") === 0 ? s.only.slice(3) : null;
    var out = all.filter(function (v) {
      if (s.only === "wrong" && v.correct !== false) return false;
      if (s.only === "right" && v.correct !== true) return false;
      if (flag !== null && !(v.flags && v.flags[flag] === true)) return false;
      if (s.cat && v.category !== s.cat) return false;
      if (q && v.id.toLowerCase() !== q && haystack(v).indexOf(q) < 0) return false;
      return true;
    });
    var key = s.sort.replace(/^-/, ""), sign = s.sort.charAt(0) === "-" ? -1 : 1;
    if (key === "id") {
      if (sign < 0) out.reverse();
    } else {
      out.sort(function (a, b) {  // samples without the number go last in either direction
        var x = a[key], y = b[key];
        if (x == null) return y == null ? 0 : 1;
        if (y == null) return -1;
        return sign * (x - y);
      });
    }
    return out;
  }
  function select(name, options, value) {
    var node = el("select", {id: "f-" + name});
    options.forEach(function (o) {
      var opt = el("option", {value: o[0], text: o[1]});
      if (o[0] === value) opt.selected = true;
      node.appendChild(opt);
    });
    node.addEventListener("change", function () { var s = readState(); s[name] = node.value; s.page = 1; writeState(s); });
    return node;
  }
  function controls(s) {
    var box = document.getElementById("controls");
    box.textContent = "";
    var q = el("input", {id: "f-q", type: "search", placeholder: "id or text", value: s.q});
    q.addEventListener("change", function () { var t = readState(); t.q = q.value; t.page = 1; writeState(t); });
    if (shows.length > 1) box.appendChild(el("label", {text: "show "}, [select("only", shows, s.only)]));
    var cats = Object.keys(categories).sort();
    if (cats.length) box.appendChild(el("label", {text: "category "}, [select("cat", [["", "any"]].concat(cats.map(function (c) { return [c, c]; })), s.cat)]));
    if (sorts.length > 1) box.appendChild(el("label", {text: "sort "}, [select("sort", sorts, s.sort)]));
    box.appendChild(el("label", {text: "find "}, [q]));
    if (s.refused) {
      var what = s.refused.indexOf("is:") === 0 ? s.refused.slice(3) : s.refused;
      box.appendChild(el("div", {"class": "note", id: "refused", text: "“" + what + "” is not a filter of these samples" +
        (verdicts ? "" : " (they are not right or wrong)") + ": showing all."}));
    }
  }
  function image(im) {
    var frame = el("div", {"class": "img"});
    if (im.thumb) {
      frame.appendChild(el("img", {src: im.thumb, alt: im.caption || im.path || ""}));
      var named = {};  // a region of several boxes is named once, inside its first box: never over the text around
      (im.boxes || []).forEach(function (b) {
        if (!im.size) return;
        var w = im.size[0], h = im.size[1];
        var box = el("div", {"class": "box", style: "left:" + (100 * b[0] / w) + "%;top:" + (100 * b[1] / h) +
          "%;width:" + (100 * b[2] / w) + "%;height:" + (100 * b[3] / h) + "%"});
        if (b[4] && !named[b[4]]) box.appendChild(el("span", {text: String(b[4])}));
        if (b[4]) named[b[4]] = true;
        frame.appendChild(box);
      });
    } else {
      frame.appendChild(el("div", {"class": "note", text: "(no thumbnail)"}));
    }
    var attrs = {text: im.caption || im.path || ""};
    if (im.caption && im.path) attrs.title = im.path;
    return el("figure", {}, [frame, el("figcaption", attrs)]);
  }
  function sample(v) {
    var verdict = v.correct === true ? "right" : v.correct === false ? "wrong" : "";
    var node = el("div", {"class": "sample " + verdict, "data-sample-id": v.id});
    var head = [v.id];
    if (v.category != null) head.push(v.category);
    if (v.score != null) head.push((v.score_name || "score") + " " + number(v.score));
    if (v.margin != null) head.push("margin " + number(v.margin));
    var marks = Object.keys(v.flags || {}).filter(function (f) { return v.flags[f] === true; });
    node.appendChild(el("h3", {}, [el("span", {text: head.join(" · ") + " "}),
      verdict ? el("span", {"class": "verdict " + verdict, text: verdict}) : null].concat(
      marks.map(function (f) { return el("span", {"class": "flag", text: f}); }))));
    var body = el("div", {"class": "body"}), side = el("div", {"class": "side"});
    if (v.images && v.images.length) body.appendChild(el("div", {"class": "images"}, v.images.map(image)));
    if (v.texts && v.texts.length) {
      var dl = el("dl", {"class": "texts"});
      v.texts.forEach(function (t) { dl.appendChild(el("dt", {text: t.label})); dl.appendChild(el("dd", {text: t.text})); });
      side.appendChild(dl);
    }
    if (typeof v.reasoning === "string") {  // folded: read only when asked for
      var unfinished = v.fields && v.fields.reasoning_finished === false;
      side.appendChild(el("details", {"class": "reasoning"}, [
        el("summary", {text: "reasoning" + (unfinished ? " (not finished)" : "")}), el("pre", {text: v.reasoning})]));
    }
    var keys = Object.keys(v.fields || {});
    if (keys.length) {
      side.appendChild(el("table", {"class": "fields"}, keys.map(function (k) {
        return el("tr", {}, [el("td", {text: k}), el("td", {text: shown(v.fields[k])})]);
      })));
    }
    body.appendChild(side);
    node.appendChild(body);
    return node;
  }
  function pager(id, s, pages) {
    var box = document.getElementById(id);
    box.textContent = "";
    var go = function (p) { return function () { var t = readState(); t.page = p; writeState(t); }; };
    var prev = el("button", {text: "‹ previous"}), next = el("button", {text: "next ›"});
    prev.disabled = s.page <= 1; next.disabled = s.page >= pages;
    prev.addEventListener("click", go(s.page - 1)); next.addEventListener("click", go(s.page + 1));
    box.appendChild(prev);
    box.appendChild(el("span", {"class": "note", text: " page " + s.page + " of " + pages + " "}));
    box.appendChild(next);
  }
  function render() {
    var s = readState();
    var found = matching(s);
    var pages = Math.max(1, Math.ceil(found.length / PAGE));
    if (s.page > pages) s.page = pages;
    controls(s);
    document.getElementById("sample-count").textContent = String(found.length);
    var list = document.getElementById("samples");
    list.textContent = "";
    found.slice((s.page - 1) * PAGE, s.page * PAGE).forEach(function (v) { list.appendChild(sample(v)); });
    pager("pager", s, pages);
    pager("pager-bottom", s, pages);
  }
  window.addEventListener("hashchange", render);
  render();
})();
