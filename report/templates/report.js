/* linkrot report script. It reads the JSON in #report-data and draws the
   tables. Everything from the data is hostile: nodes are built with
   textContent, and an href is set only on URLs whose scheme is http, https
   or mailto (anything else is shown as text).

   DATA (arrays of rows; a row field holding an index refers to another
   array, -1 meaning none; times are Unix seconds, 0 meaning none):
   verdicts    [name, colour class, broken, fix advice (only for a verdict
                with advice of its own)]
   pages       [url, title, status, depth, links, broken links, fetch error, content type]
   targets     [url, host, verdict, status, reason, redirect chain, links, pages,
                replacement, memento, Robust Link snippet, total ms, checked at,
                history, evidence, drift, error class]
   links       [page, target, element, text, href when not the target URL,
                verdict, flags (1 Robust Links, 2 mset, 4 resource, 8 diagnostics),
                suggestion]
   mementos    [archive, url, datetime, wanted, wanted from, distance s,
                representative, timemap count, error, status (found,
                no-memento, lookup-failed, not-asked)]
   drifts      [target, link, kind, band, simhash distance, jaccard, dice,
                cosine, words reference, words live, word change, reference url,
                reference time, live url, excerpt reference, excerpt live, rank,
                reference note (raw bytes, or why not)]
   suggestions [link, reason, html, versionurl, versiondate]
   history     [first seen, run, first broken, run, last ok, run (0 when
                known only from pruned runs), [[run, checked at, verdict,
                status], ...], tracked (the fields after it come from the
                history of every run), confirmed, confirmed at, run,
                failing since, run, consecutive failed runs]
   snapshots   [link, source, declared url, declared datetime, verdict,
                memento datetime, status, declared original, actual original,
                flags (1 datetime mismatch, 2 original mismatch), delta s,
                reason, final url]
   diagnostics [page, link, field, code, message]
   identifiers [access url, identifier, rel, own page, resolves, leads back,
                status, how, reason, checked, linking pages, target of the
                access url]
   fragments   [link, missing fragment, message]
   runs        [id, started, status, checked, broken, drifted]
*/
(function () {
  'use strict';
  var D;
  try {
    D = JSON.parse(document.getElementById('report-data').textContent);
  } catch (e) {
    return;
  }
  document.documentElement.className += ' js';
  var V = D.verdicts, P = D.pages, T = D.targets, L = D.links;

  // ---- small DOM helpers ----
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return parent;
  }
  function safeHref(u) {
    if (typeof u !== 'string' || u === '') return null;
    var p;
    try { p = new URL(u); } catch (e) { return null; }
    if (p.protocol === 'http:' || p.protocol === 'https:' || p.protocol === 'mailto:') return p.href;
    return null;
  }
  // urlNode shows u as an external link when it is safe, else as text.
  function urlNode(u, label) {
    var h = safeHref(u);
    var text = label !== undefined ? label : u;
    if (!h) {
      var s = el('span', 'url nolink', text === '' ? '(empty)' : text);
      s.title = 'Not a web link: shown as text';
      return s;
    }
    var a = el('a', 'url', text);
    a.href = h;
    a.rel = 'noreferrer noopener';
    a.target = '_blank';
    return a;
  }
  function internal(hash, text, cls) {
    var a = el('a', cls || '', text);
    a.href = hash;
    return a;
  }
  function badge(text, cls) { return el('span', 'badge ' + (cls || 'muted'), text); }
  function vname(v) { return V[v] ? V[v][0] : 'unchecked'; }
  function vbadge(v) { return badge(vname(v), V[v] ? V[v][1] : 'muted'); }
  function vbroken(v) { return !!(V[v] && V[v][2]); }
  function fmt(n) { return typeof n === 'number' ? n.toLocaleString('en-US') : ''; }
  function fdate(n) { return n ? new Date(n * 1000).toISOString().replace('T', ' ').replace(/(:\d\d)\.\d+Z$/, '$1 UTC') : ''; }
  function fnum(x, d) { return typeof x === 'number' ? x.toFixed(d === undefined ? 3 : d) : '—'; }
  function numKey(x) { return typeof x === 'number' ? x : -1; }
  function fdur(sec) {
    sec = Math.abs(sec);
    if (sec < 60) return sec + ' s';
    if (sec < 3600) return Math.round(sec / 60) + ' min';
    if (sec < 86400) return Math.round(sec / 3600) + ' h';
    var d = Math.round(sec / 86400);
    return d >= 730 ? (d / 365.25).toFixed(1) + ' years' : d + ' days';
  }
  function targetURL(t) { return t >= 0 ? T[t][0] : ''; }
  // shortURL is u without its scheme, cut to n characters.
  function shortURL(u, n) {
    var s = String(u).replace(/^https?:\/\//i, '');
    n = n || 48;
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }
  function pageURL(p) { return P[p] ? P[p][0] : ''; }
  function anchor(text) { return el('span', 'quote', text ? '“' + text + '”' : '(no anchor text)'); }
  function linkHref(l) { var r = L[l]; return r[4] !== '' ? r[4] : targetURL(r[1]); }
  function targetCell(t, href) {
    var box = el('div');
    add(box, urlNode(href !== undefined && href !== '' ? href : targetURL(t)));
    if (t >= 0) add(box, ' ', internal('#target/' + t, 'details', 'sub'));
    return box;
  }
  function kv(pairs) {
    var dl = el('dl', 'kv');
    pairs.forEach(function (p) {
      if (p[1] === '' || p[1] === null || p[1] === undefined) return;
      add(dl, el('dt', '', p[0]));
      var dd = el('dd');
      if (p[1] instanceof Node) add(dd, p[1]); else dd.textContent = String(p[1]);
      add(dl, dd);
    });
    return dl;
  }
  function pre(text) { return el('pre', '', text); }
  function copyButton(getText) {
    var b = el('button', 'btn', 'Copy');
    b.type = 'button';
    b.addEventListener('click', function () {
      var text = getText();
      function done(ok) {
        b.textContent = ok ? 'Copied' : 'Select and copy';
        setTimeout(function () { b.textContent = 'Copy'; }, 1500);
      }
      function fallback() {
        var ta = el('textarea', 'offscreen');
        ta.value = text;
        ta.setAttribute('readonly', '');
        document.body.appendChild(ta);
        ta.select();
        var ok = false;
        try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
        document.body.removeChild(ta);
        done(ok);
      }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
      } else {
        fallback();
      }
    });
    return b;
  }
  function snippet(html) {
    var box = el('div', 'snippet');
    add(box, el('pre', '', html), copyButton(function () { return html; }));
    return box;
  }

  // ---- derived indexes, built once ----
  var linksOfTarget = new Array(T.length), linksOfPage = new Array(P.length);
  for (var i = 0; i < L.length; i++) {
    var l = L[i];
    if (l[1] >= 0) (linksOfTarget[l[1]] || (linksOfTarget[l[1]] = [])).push(i);
    if (l[0] >= 0 && l[0] < P.length) (linksOfPage[l[0]] || (linksOfPage[l[0]] = [])).push(i);
  }
  var vcode = {};
  V.forEach(function (v, i) { vcode[v[0]] = i; });
  var FRAG = vcode['fragment-missing'], MOVED = vcode.moved;
  var fragsOfLink = {};
  (D.fragments || []).forEach(function (f) { (fragsOfLink[f[0]] || (fragsOfLink[f[0]] = [])).push(f); });
  function histOf(t) { return T[t] && T[t][13] >= 0 ? D.history[T[t][13]] : null; }
  function confirmed(t) { var h = histOf(t); return !!(h && h[7] && h[8]); }
  // missingFragments lists the #fragments of a target's links that its
  // page lacks: [[fragment, links, message], ...] in first-seen order.
  function missingFragments(t) {
    var ls = linksOfTarget[t] || [], byName = {}, out = [];
    for (var i = 0; i < ls.length; i++) {
      (fragsOfLink[ls[i]] || []).forEach(function (f) {
        var e = byName['#' + f[1]];
        if (!e) { e = byName['#' + f[1]] = [f[1], 0, f[2]]; out.push(e); }
        e[1]++;
      });
    }
    return out;
  }
  function fragNames(t) { return missingFragments(t).map(function (f) { return '#' + f[0]; }).join(', '); }

  // ---- the table component ----
  // opts: rows (array of row numbers), cols [{t: title, v: sort value of a
  // row, r: fills the cell of a row, c: cell class}], filters [{k: key,
  // label, get: row -> value, order: optional list of values}], text: row
  // -> searchable text, expand: (row, box), sort, desc, empty.
  function Table(root, o) {
    var self = this;
    this.o = o;
    this.all = o.rows;
    this.view = o.rows;
    this.page = 0;
    this.size = 50;
    this.sortCol = o.sort === undefined ? -1 : o.sort;
    this.desc = !!o.desc;
    this.q = '';
    this.f = {};
    this.open = {};
    this.keys = [];
    this.hay = null;
    root.textContent = '';
    if (!o.rows.length) {
      add(root, el('p', 'empty toolbar', o.empty || 'Nothing to show.'));
      this.tbody = null;
      return;
    }
    var bar = el('div', 'toolbar');
    var search = el('input');
    search.type = 'search';
    search.placeholder = 'Search ' + fmt(o.rows.length) + ' rows…';
    search.setAttribute('aria-label', 'Search');
    var timer = 0;
    search.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(function () { self.q = search.value.trim().toLowerCase(); self.page = 0; self.apply(); }, 150);
    });
    add(bar, search);
    this.selects = {};
    (o.filters || []).forEach(function (f) {
      var sel = el('select');
      sel.setAttribute('aria-label', f.label);
      sel.dataset.filter = f.k;
      var counts = {};
      for (var i = 0; i < o.rows.length; i++) {
        var v = f.get(o.rows[i]);
        counts[v] = (counts[v] || 0) + 1;
      }
      var values = Object.keys(counts);
      if (f.order) {
        values = f.order.filter(function (v) { return counts[v]; });
      } else {
        values.sort(function (a, b) { return counts[b] - counts[a] || (a < b ? -1 : a > b ? 1 : 0); });
      }
      if (values.length > 300) values = values.slice(0, 300);
      var first = el('option', '', f.label + ': all');
      first.value = '';
      add(sel, first);
      (f.extra || []).forEach(function (x) {
        var op = el('option', '', f.label + ': ' + x[1]);
        op.value = x[0];
        add(sel, op);
      });
      values.forEach(function (v) {
        var op = el('option', '', f.label + ': ' + (v === '' ? '(none)' : v) + ' (' + fmt(counts[v]) + ')');
        op.value = v;
        add(sel, op);
      });
      sel.addEventListener('change', function () { self.setFilter(f.k, sel.value); });
      self.selects[f.k] = sel;
      add(bar, sel);
    });
    this.summary = el('span', 'summary');
    add(bar, this.summary);
    add(root, bar);
    var scroll = el('div', 'scroll');
    var table = el('table');
    var thead = el('thead'), tr = el('tr');
    this.ths = [];
    if (o.expand) add(tr, el('th', 'tg'));
    o.cols.forEach(function (c, ci) {
      var th = el('th', c.c || '');
      if (c.v) {
        var b = el('button', '', c.t);
        b.type = 'button';
        b.addEventListener('click', function () { self.sortBy(ci); });
        add(th, b);
      } else {
        th.textContent = c.t;
      }
      self.ths.push(th);
      add(tr, th);
    });
    add(thead, tr);
    this.tbody = el('tbody');
    add(table, thead, this.tbody);
    add(scroll, table);
    add(root, scroll);
    var pager = el('div', 'pager');
    this.prev = el('button', '', '‹ Previous');
    this.next = el('button', '', 'Next ›');
    this.prev.type = this.next.type = 'button';
    this.prev.addEventListener('click', function () { self.go(self.page - 1); });
    this.next.addEventListener('click', function () { self.go(self.page + 1); });
    this.pageInfo = el('span', 'summary');
    var size = el('select');
    size.setAttribute('aria-label', 'Rows per page');
    [25, 50, 100, 250, 1000].forEach(function (n) {
      var op = el('option', '', n + ' per page');
      op.value = n;
      if (n === self.size) op.selected = true;
      add(size, op);
    });
    size.addEventListener('change', function () { self.size = +size.value; self.page = 0; self.render(); });
    add(pager, this.prev, this.next, size, this.pageInfo);
    add(root, pager);
    this.apply();
  }
  Table.prototype.setFilter = function (k, v) {
    this.f[k] = v;
    if (this.selects[k] && this.selects[k].value !== v) {
      var sel = this.selects[k], found = false;
      for (var i = 0; i < sel.options.length; i++) if (sel.options[i].value === v) found = true;
      if (!found) {
        var op = el('option', '', v);
        op.value = v;
        add(sel, op);
      }
      sel.value = v;
    }
    this.page = 0;
    this.apply();
  };
  Table.prototype.sortBy = function (ci) {
    if (this.sortCol === ci) this.desc = !this.desc; else { this.sortCol = ci; this.desc = !!this.o.cols[ci].d; }
    this.page = 0;
    this.apply();
  };
  Table.prototype.apply = function () {
    if (!this.tbody) return;
    var o = this.o, all = this.all, q = this.q, f = this.f, out = [];
    var active = (o.filters || []).filter(function (x) { return f[x.k]; });
    if (q && !this.hay) {
      this.hay = {};
      for (var i = 0; i < all.length; i++) this.hay[all[i]] = o.text(all[i]).toLowerCase();
    }
    for (var j = 0; j < all.length; j++) {
      var r = all[j], ok = true;
      for (var k = 0; k < active.length && ok; k++) {
        var fl = active[k], want = f[fl.k];
        ok = fl.match ? fl.match(r, want) : fl.get(r) === want;
      }
      if (ok && q) ok = this.hay[r].indexOf(q) >= 0;
      if (ok) out.push(r);
    }
    if (this.sortCol >= 0) {
      var ci = this.sortCol, key = this.keys[ci];
      if (!key) {
        key = this.keys[ci] = {};
        for (var m = 0; m < all.length; m++) key[all[m]] = o.cols[ci].v(all[m]);
      }
      var dir = this.desc ? -1 : 1;
      out.sort(function (a, b) {
        var x = key[a], y = key[b];
        return (x < y ? -dir : x > y ? dir : 0) || a - b;
      });
    }
    this.view = out;
    var self = this;
    this.ths.forEach(function (th, i) {
      if (i === self.sortCol) th.setAttribute('aria-sort', self.desc ? 'descending' : 'ascending');
      else th.removeAttribute('aria-sort');
    });
    this.render();
  };
  Table.prototype.go = function (p) { this.page = p; this.render(); };
  Table.prototype.render = function () {
    if (!this.tbody) return;
    var o = this.o, n = this.view.length, pages = Math.max(1, Math.ceil(n / this.size));
    if (this.page >= pages) this.page = pages - 1;
    if (this.page < 0) this.page = 0;
    var start = this.page * this.size, end = Math.min(n, start + this.size);
    var body = el('tbody'), self = this, span = o.cols.length + (o.expand ? 1 : 0);
    for (var i = start; i < end; i++) {
      (function (r) {
        var tr = el('tr');
        tr.dataset.row = r;
        var detail = null;
        if (o.expand) {
          var td0 = el('td', 'tg'), tg = el('button', 'toggle', self.open[r] ? '▾' : '▸');
          tg.type = 'button';
          tg.setAttribute('aria-expanded', self.open[r] ? 'true' : 'false');
          tg.setAttribute('aria-label', 'Details');
          tg.addEventListener('click', function () {
            self.open[r] = !self.open[r];
            if (self.open[r]) {
              detail = makeDetail();
              tr.parentNode.insertBefore(detail, tr.nextSibling);
            } else if (detail) {
              detail.parentNode.removeChild(detail);
              detail = null;
            }
            tg.textContent = self.open[r] ? '▾' : '▸';
            tg.setAttribute('aria-expanded', self.open[r] ? 'true' : 'false');
          });
          add(td0, tg);
          add(tr, td0);
        }
        o.cols.forEach(function (c) {
          var td = el('td', c.c || '');
          c.r(r, td);
          add(tr, td);
        });
        add(body, tr);
        function makeDetail() {
          var d = el('tr', 'detail'), td = el('td');
          td.colSpan = span;
          o.expand(r, td);
          add(d, td);
          return d;
        }
        if (o.expand && self.open[r]) { detail = makeDetail(); add(body, detail); }
      })(this.view[i]);
    }
    this.tbody.parentNode.replaceChild(body, this.tbody);
    this.tbody = body;
    var filtered = n !== this.all.length ? ' (filtered from ' + fmt(this.all.length) + ')' : '';
    this.summary.textContent = n ? fmt(start + 1) + '–' + fmt(end) + ' of ' + fmt(n) + filtered : 'No rows match' + filtered;
    this.pageInfo.textContent = 'Page ' + fmt(this.page + 1) + ' of ' + fmt(pages);
    this.prev.disabled = this.page === 0;
    this.next.disabled = this.page >= pages - 1;
  };

  function range(n) { var a = new Array(n); for (var i = 0; i < n; i++) a[i] = i; return a; }
  function verdictOrder() { return V.map(function (v) { return v[0]; }); }
  function text(td, s, cls) { td.textContent = s; if (cls) td.className += ' ' + cls; }
  function pageCell(p, td) {
    if (p < 0 || p >= P.length) return;
    add(td, urlNode(P[p][0]));
    if (P[p][1]) add(td, el('span', 'sub', P[p][1]));
  }

  // ---- evidence and fixes of a target (broken table and detail view) ----
  function evidenceBlock(t) {
    var r = T[t], box = el('div');
    var chain = r[5] ? pre(r[5].split(' -> ').join('\n→ ')) : '';
    add(box, kv([
      ['Verdict', vbadge(r[2])],
      ['Status', r[3] ? String(r[3]) : 'no response'],
      ['Reason', r[4]],
      ['Redirects', chain],
      ['Evidence', r[14] ? pre(r[14]) : ''],
      ['Time', r[11] ? fmt(r[11]) + ' ms' : ''],
      ['Checked', fdate(r[12])]
    ]));
    return box;
  }
  // fragmentEvidence shows what is wrong with the links to a target whose
  // page answers but lacks the #fragments they point to.
  function fragmentEvidence(t) {
    var r = T[t], box = el('div'), fs = missingFragments(t);
    var names = el('div');
    fs.forEach(function (f) {
      add(names, el('code', '', '#' + f[0]), ' ', el('span', 'sub', fmt(f[1]) + (f[1] === 1 ? ' link' : ' links') + (f[2] ? ': ' + f[2] : '')));
    });
    add(box, kv([
      ['Verdict', vbadge(FRAG)],
      ['Missing', names],
      ['The page', (r[3] ? 'answers HTTP ' + r[3] : 'was not fetched') + ' (' + vname(r[2]) + '): the page is there, the anchor is not']
    ]));
    return box;
  }
  function fragmentFix(t) {
    var box = el('div');
    add(box, el('h3', '', 'Fix: correct the #fragment'));
    missingFragments(t).forEach(function (f) {
      var p = el('p');
      add(p, el('code', '', '#' + f[0]), ' is not an id on the page; link to the page or an existing anchor.');
      add(box, p);
    });
    return box;
  }
  function fixBlock(t) {
    var r = T[t], box = el('div');
    if (V[r[2]] && V[r[2]][3]) {
      add(box, el('h3', '', 'Fix: ' + vname(r[2])));
      add(box, el('p', 'advice', V[r[2]][3]));
    }
    if (r[8]) {
      add(box, el('h3', '', 'Fix: update the link'));
      add(box, kv([['Replacement', urlNode(r[8])], ['Why', 'The target answers with a permanent redirect: link to the new URL directly.']]));
    }
    var m = r[9] >= 0 ? D.mementos[r[9]] : null;
    if (m) {
      add(box, el('h3', '', vbroken(r[2]) ? 'Fix: link to the archived copy' : 'Nearest archived copy'));
      add(box, kv([
        ['Memento', urlNode(m[1])],
        ['Archived', fdate(m[2])],
        ['Wanted', fdate(m[3]) + (m[4] ? ' (from ' + m[4] + ')' : '')],
        ['Distance', fdur(m[5]) + (m[6] ? '' : ' — further than the limit: not representative')],
        ['Archive', m[0]],
        ['TimeMap', m[7] ? fmt(m[7]) + ' mementos' : ''],
        ['Lookup', m[9] || '']
      ]));
    }
    if (r[10]) {
      add(box, el('h3', '', 'Robust Link to paste'));
      add(box, snippet(r[10]));
    }
    if (!r[8] && !m && !r[10] && vbroken(r[2])) {
      add(box, el('p', 'empty', D.archives ? 'No archive has a copy of this target: remove the link or find where the content went.' : 'No archive was consulted in this run.'));
    }
    return box;
  }
  function linkingList(links, limit) {
    var ul = el('ul', 'plain');
    links.slice(0, limit).forEach(function (li) {
      var l = L[li], item = el('li');
      add(item, urlNode(P[l[0]] ? P[l[0]][0] : ''));
      add(item, ' ', el('span', 'quote', l[3] ? '“' + l[3] + '”' : '(no anchor text)'), ' ', badge(l[2]));
      if (l[4]) add(item, ' ', el('span', 'sub', 'href: ' + l[4]));
      add(ul, item);
    });
    if (links.length > limit) add(ul, el('li', 'empty', (links.length - limit).toLocaleString('en-US') + ' more'));
    return ul;
  }

  // ---- Broken links, grouped by target ----
  var brokenRows = [], brokenVerdict = {};
  for (var t = 0; t < T.length; t++) {
    var v = T[t][2];
    if (vbroken(v) || v === MOVED) { brokenRows.push(t); brokenVerdict[t] = v; continue; }
    var ls = linksOfTarget[t] || [];
    for (var k = 0; k < ls.length; k++) {
      if (L[ls[k]][5] === FRAG) { brokenRows.push(t); brokenVerdict[t] = FRAG; break; }
    }
  }
  brokenRows.sort(function (a, b) { return brokenCounts(b)[1] - brokenCounts(a)[1] || (T[a][0] < T[b][0] ? -1 : 1); });
  function brokenCounts(t) {
    var ls = brokenLinks(t), pages = {}, n = 0;
    for (var i = 0; i < ls.length; i++) if (!pages[L[ls[i]][0]]) { pages[L[ls[i]][0]] = 1; n++; }
    return [ls.length, n];
  }
  function statusLine(t) {
    var r = T[t];
    if (!r[3]) return r[16] || 'no response';
    if (!r[5]) return 'HTTP ' + r[3];
    return 'HTTP ' + r[5].split(' -> ').map(function (h) { return h.split(' ')[0]; }).join(' → ');
  }
  function brokenLinks(t) {
    var ls = linksOfTarget[t] || [];
    if (brokenVerdict[t] === FRAG) return ls.filter(function (li) { return L[li][5] === FRAG; });
    return ls;
  }
  var tables = {};
  // linkedFrom shows the first two links of ls: page and anchor text.
  function linkedFrom(ls, td) {
    ls.slice(0, 2).forEach(function (li) {
      var l = L[li], line = el('div', 'from');
      add(line, urlNode(pageURL(l[0]), shortURL(pageURL(l[0]), 40)), ' ', anchor(l[3]));
      add(td, line);
    });
    if (ls.length > 2) add(td, el('span', 'sub', '+' + fmt(ls.length - 2) + ' more'));
  }
  function buildBroken() {
    tables.broken = new Table(document.getElementById('t-broken'), {
      rows: brokenRows,
      empty: 'No broken or moved targets. Well kept!',
      cols: [
        { t: 'Target', c: 'wide', v: function (t) { return T[t][0]; }, r: function (t, td) { add(td, targetCell(t)); } },
        { t: 'Verdict', v: function (t) { return vname(brokenVerdict[t]); }, r: function (t, td) {
          add(td, vbadge(brokenVerdict[t]));
          if (brokenVerdict[t] !== FRAG && confirmed(t)) add(td, ' ', badge('confirmed', 'bad'));
        } },
        { t: 'Evidence', v: function (t) { return brokenVerdict[t] === FRAG ? fragNames(t) : T[t][3]; }, r: function (t, td) {
          var r = T[t];
          if (brokenVerdict[t] === FRAG) {
            add(td, el('span', '', 'missing ' + fragNames(t)), el('span', 'sub', 'the page answers ' + statusLine(t) + '; the anchor is gone'));
            return;
          }
          add(td, statusLine(t));
          if (r[4]) add(td, el('span', 'sub', r[4]));
        } },
        { t: 'Linked from', c: 'wide', v: function (t) { var ls = brokenLinks(t); return ls.length ? pageURL(L[ls[0]][0]) : ''; }, r: function (t, td) { linkedFrom(brokenLinks(t), td); } },
        { t: 'Pages', c: 'num', d: true, v: function (t) { return brokenCounts(t)[1]; }, r: function (t, td) { text(td, fmt(brokenCounts(t)[1])); } },
        { t: 'Links', c: 'num', d: true, v: function (t) { return brokenCounts(t)[0]; }, r: function (t, td) { text(td, fmt(brokenCounts(t)[0])); } },
        { t: 'Fix', v: function (t) { return brokenVerdict[t] === FRAG ? 3 : T[t][8] ? 0 : T[t][9] >= 0 ? 1 : 2; }, r: function (t, td) {
          var r = T[t];
          if (brokenVerdict[t] === FRAG) add(td, el('span', 'sub', 'link to the page or an existing anchor'));
          else if (r[8]) add(td, el('span', 'sub', 'moved to'), urlNode(r[8]));
          else if (r[9] >= 0) add(td, el('span', 'sub', 'archived copy'), urlNode(D.mementos[r[9]][1], fdate(D.mementos[r[9]][2])));
          else td.textContent = '—';
        } }
      ],
      filters: [
        { k: 'verdict', label: 'Verdict', get: function (t) { return vname(brokenVerdict[t]); }, order: verdictOrder() },
        { k: 'host', label: 'Host', get: function (t) { return T[t][1]; } },
        { k: 'confirmed', label: 'Confirmed', get: function (t) { return brokenVerdict[t] === FRAG ? 'not applicable' : confirmed(t) ? 'confirmed' : 'not confirmed'; } }
      ],
      // Search covers the target, its evidence and where it is linked:
      // linking pages, anchor texts and hrefs.
      text: function (t) {
        var parts = [T[t][0], T[t][4], fragNames(t)];
        brokenLinks(t).forEach(function (li) { parts.push(pageURL(L[li][0]), L[li][3], L[li][4]); });
        return parts.join(' ');
      },
      expand: function (t, box) {
        var side = el('div', 'side');
        var a = el('div'), b = el('div'), frag = brokenVerdict[t] === FRAG;
        add(a, el('h4', '', 'Evidence'), frag ? fragmentEvidence(t) : evidenceBlock(t));
        add(b, el('h4', '', 'Fix'), frag ? fragmentFix(t) : fixBlock(t));
        add(side, a, b);
        var ls = brokenLinks(t);
        add(box, side, el('h3', '', 'Where it is linked (' + fmt(ls.length) + ' links)'), linkingList(ls, 100),
          internal('#target/' + t, 'Status history and all details →'));
      }
    });
  }

  // ---- Links ----
  function buildLinks() {
    tables.links = new Table(document.getElementById('t-links'), {
      rows: range(L.length),
      empty: 'No links were recorded in this run.',
      cols: [
        { t: 'Page', c: 'wide', v: function (l) { return P[L[l][0]] ? P[L[l][0]][0] : ''; }, r: function (l, td) { pageCell(L[l][0], td); } },
        { t: 'Anchor text', v: function (l) { return L[l][3]; }, r: function (l, td) {
          td.textContent = L[l][3] || '';
          if (!L[l][3]) add(td, el('span', 'empty', '(none)'));
        } },
        { t: 'Target', c: 'wide', v: function (l) { return linkHref(l); }, r: function (l, td) { add(td, targetCell(L[l][1], linkHref(l))); } },
        { t: 'Element', v: function (l) { return L[l][2]; }, r: function (l, td) {
          add(td, badge(L[l][2]));
          if (L[l][6] & 1) add(td, ' ', badge('robust', 'info'));
          if (L[l][6] & 2) add(td, ' ', badge('mset', 'info'));
        } },
        { t: 'Verdict', v: function (l) { return vname(L[l][5]); }, r: function (l, td) { add(td, vbadge(L[l][5])); } }
      ],
      filters: [
        { k: 'verdict', label: 'Verdict', get: function (l) { return vname(L[l][5]); }, order: verdictOrder(),
          extra: [['broken', 'every broken verdict']],
          match: function (l, want) { return want === 'broken' ? vbroken(L[l][5]) : vname(L[l][5]) === want; } },
        { k: 'host', label: 'Host', get: function (l) { return L[l][1] >= 0 ? T[L[l][1]][1] : ''; } },
        { k: 'element', label: 'Element', get: function (l) { return L[l][2]; } },
        { k: 'robust', label: 'Robustness', get: function (l) { var f = L[l][6] & 3; return f === 3 ? 'Robust Links and mset' : f === 1 ? 'Robust Links' : f === 2 ? 'mset' : 'none'; } }
      ],
      text: function (l) { return (P[L[l][0]] ? P[L[l][0]][0] : '') + ' ' + L[l][3] + ' ' + linkHref(l); }
    });
  }

  // ---- Pages ----
  function statusClass(p) {
    var s = P[p][2];
    if (P[p][6] || !s) return 'failed';
    return Math.floor(s / 100) + 'xx';
  }
  function buildPages() {
    tables.pages = new Table(document.getElementById('t-pages'), {
      rows: range(P.length),
      empty: 'No pages were crawled in this run.',
      cols: [
        { t: 'Page', c: 'wide', v: function (p) { return P[p][0]; }, r: function (p, td) { pageCell(p, td); } },
        { t: 'Status', v: function (p) { return P[p][2]; }, r: function (p, td) {
          var s = P[p][2];
          add(td, badge(P[p][6] ? 'failed' : String(s), P[p][6] || s >= 400 ? 'bad' : s >= 300 ? 'info' : 'good'));
          if (P[p][6]) add(td, el('span', 'sub', P[p][6]));
        } },
        { t: 'Depth', c: 'num', v: function (p) { return P[p][3]; }, r: function (p, td) { text(td, String(P[p][3])); } },
        { t: 'Links', c: 'num', d: true, v: function (p) { return P[p][4]; }, r: function (p, td) { text(td, fmt(P[p][4])); } },
        { t: 'Broken', c: 'num', d: true, v: function (p) { return P[p][5]; }, r: function (p, td) {
          text(td, fmt(P[p][5]));
          if (P[p][5]) td.className += ' mismatch';
        } }
      ],
      filters: [
        { k: 'status', label: 'Status', get: statusClass },
        { k: 'broken', label: 'Broken links', get: function (p) { return P[p][5] ? 'with broken links' : 'none broken'; } }
      ],
      text: function (p) { return P[p][0] + ' ' + P[p][1]; },
      expand: function (p, box) {
        var ls = linksOfPage[p] || [];
        if (!ls.length) { add(box, el('p', 'empty', 'No outgoing links.')); return; }
        var tbl = el('table'), tb = el('tbody');
        ls.slice(0, 500).forEach(function (li) {
          var l = L[li], tr = el('tr'), a = el('td'), b = el('td'), c = el('td'), d = el('td');
          a.textContent = l[3];
          add(b, targetCell(l[1], linkHref(li)));
          add(c, badge(l[2]));
          add(d, vbadge(l[5]));
          add(tr, d, a, b, c);
          add(tb, tr);
        });
        add(tbl, tb);
        add(box, tbl);
        if (ls.length > 500) add(box, el('p', 'empty', fmt(ls.length - 500) + ' more links: search the Links table for this page.'));
      }
    });
  }

  // ---- Robust Links audit ----
  var S = D.snapshots;
  function snapVerdictClass(v) {
    return v === 'snapshot-ok' ? 'good' : v === 'snapshot-error' ? 'warn' : v === 'unchecked' ? 'muted' : 'bad';
  }
  function buildRobust() {
    tables.robust = new Table(document.getElementById('t-robust'), {
      rows: range(S.length),
      empty: 'No link of this run declares a snapshot (data-versionurl, mset copy or pwid).',
      cols: [
        { t: 'Link', c: 'wide', v: function (s) { var l = L[S[s][0]]; return l ? l[3] : ''; }, r: function (s, td) {
          var l = L[S[s][0]];
          if (!l) return;
          add(td, el('span', '', l[3] ? '“' + l[3] + '”' : '(no anchor text)'), el('span', 'sub', 'on ' + (P[l[0]] ? P[l[0]][0] : '')));
        } },
        { t: 'Verdict', v: function (s) { return S[s][4]; }, r: function (s, td) {
          add(td, badge(S[s][4] === 'unchecked' ? 'not audited' : S[s][4], snapVerdictClass(S[s][4])));
          if (S[s][9] & 1) add(td, ' ', badge('datetime mismatch', 'bad'));
          if (S[s][9] & 2) add(td, ' ', badge('original mismatch', 'bad'));
          if (S[s][11]) add(td, el('span', 'sub', S[s][11]));
        } },
        { t: 'Source', v: function (s) { return S[s][1]; }, r: function (s, td) { add(td, badge(S[s][1])); } },
        { t: 'Declared snapshot', c: 'wide', v: function (s) { return S[s][2]; }, r: function (s, td) {
          add(td, urlNode(S[s][2]));
          if (S[s][12] && S[s][12] !== S[s][2]) add(td, el('span', 'sub', 'ended at ' + S[s][12]));
        } },
        { t: 'Datetime: declared / archive', v: function (s) { return S[s][3]; }, r: function (s, td) {
          var mis = S[s][9] & 1;
          add(td, el('span', '', 'declared ' + (fdate(S[s][3]) || '(none)')),
            el('span', 'sub' + (mis ? ' mismatch' : ''), 'archive ' + (S[s][5] ? fdate(S[s][5]) + (mis ? ' (' + fdur(S[s][10]) + ' apart)' : '') : '—')));
        } },
        { t: 'Original: declared / archive', c: 'wide', v: function (s) { return S[s][7]; }, r: function (s, td) {
          var mis = S[s][9] & 2;
          add(td, el('span', 'url', 'declared ' + (S[s][7] || '(none)')), el('span', 'sub url' + (mis ? ' mismatch' : ''), 'archive ' + (S[s][8] || '—')));
        } }
      ],
      filters: [
        { k: 'verdict', label: 'Verdict', get: function (s) { return S[s][4]; } },
        { k: 'source', label: 'Source', get: function (s) { return S[s][1]; } },
        { k: 'problem', label: 'Mismatch', get: function (s) { var f = S[s][9]; return f === 3 ? 'datetime and original' : f === 1 ? 'datetime' : f === 2 ? 'original' : 'none'; } }
      ],
      text: function (s) { var l = L[S[s][0]]; return S[s][2] + ' ' + S[s][7] + ' ' + S[s][8] + ' ' + (l ? l[3] + ' ' + (P[l[0]] ? P[l[0]][0] : '') : ''); }
    });
    var G = D.diagnostics;
    tables.diag = new Table(document.getElementById('t-diag'), {
      rows: range(G.length),
      empty: 'No diagnostics: the robustness markup parsed cleanly.',
      cols: [
        { t: 'Page', c: 'wide', v: function (g) { return P[G[g][0]] ? P[G[g][0]][0] : ''; }, r: function (g, td) { pageCell(G[g][0], td); } },
        { t: 'Link', v: function (g) { return G[g][1] >= 0 ? L[G[g][1]][3] : ''; }, r: function (g, td) {
          if (G[g][1] < 0) { add(td, el('span', 'empty', 'page')); return; }
          add(td, el('span', '', L[G[g][1]][3] || '(no anchor text)'), el('span', 'sub url', linkHref(G[g][1])));
        } },
        { t: 'Field', v: function (g) { return G[g][2]; }, r: function (g, td) { add(td, el('code', '', G[g][2])); } },
        { t: 'Code', v: function (g) { return G[g][3]; }, r: function (g, td) { add(td, badge(G[g][3], G[g][3].indexOf('invalid') === 0 ? 'bad' : 'warn')); } },
        { t: 'Message', c: 'wide', v: function (g) { return G[g][4]; }, r: function (g, td) { td.textContent = G[g][4]; } }
      ],
      filters: [
        { k: 'code', label: 'Code', get: function (g) { return G[g][3]; } },
        { k: 'field', label: 'Field', get: function (g) { return G[g][2]; } }
      ],
      text: function (g) { return G[g][2] + ' ' + G[g][3] + ' ' + G[g][4] + ' ' + (P[G[g][0]] ? P[G[g][0]][0] : ''); }
    });
  }

  // ---- Drift ----
  var R = D.drifts;
  function bandClass(b) { return b === 'unchanged' ? 'good' : b === 'minor' ? 'info' : b === 'major' ? 'warn' : b === 'off-topic' ? 'bad' : 'muted'; }
  function driftBlock(d) {
    var r = R[d], box = el('div');
    add(box, kv([
      ['Reference', urlNode(r[11])],
      ['Reference bytes', r[17] === 'raw' ? 'raw (no banner, no rewritten links)' : (r[17] || '')],
      ['Reference time', fdate(r[12]) + ' (' + r[2] + ')'],
      ['Live', urlNode(r[13])],
      ['Measures', 'SimHash distance ' + r[4] + ' of 64 · Jaccard ' + fnum(r[5]) + ' · Sørensen–Dice ' + fnum(r[6]) + ' · cosine ' + fnum(r[7]) +
        ' · words ' + fmt(r[8]) + ' → ' + fmt(r[9]) + ' (' + (r[10] >= 0 ? '+' : '') + fnum(r[10] * 100, 0) + '%)']
    ]));
    var side = el('div', 'side'), a = el('div'), b = el('div');
    add(a, el('h4', '', 'Then: ' + (fdate(r[12]) || 'reference')), el('p', '', r[14] || '(no excerpt)'));
    add(b, el('h4', '', 'Now: live page'), el('p', '', r[15] || '(no excerpt)'));
    add(side, a, b);
    add(box, side);
    return box;
  }
  function buildDrift() {
    tables.drift = new Table(document.getElementById('t-drift'), {
      rows: range(R.length),
      sort: 3, desc: true, // the Band column: by drift rank
      empty: D.archives ? 'No drift measured in this run.' : 'No drift measured: the archive stage did not run for this run.',
      cols: [
        { t: 'Target', c: 'wide', v: function (d) { return targetURL(R[d][0]); }, r: function (d, td) { add(td, targetCell(R[d][0])); } },
        // A drift against a memento is the link's own (its date chose the
        // memento); a drift since first seen is the target's.
        { t: 'Link', c: 'wide', v: function (d) { return R[d][1] >= 0 ? pageURL(L[R[d][1]][0]) : ''; }, r: function (d, td) {
          var li = R[d][1];
          if (li < 0) { add(td, el('span', 'empty', 'the target (every link)')); return; }
          var on = el('span', 'sub', 'on ');
          add(on, urlNode(pageURL(L[li][0]), shortURL(pageURL(L[li][0]), 40)));
          add(td, anchor(L[li][3]), on);
        } },
        { t: 'Compared', c: 'wide', v: function (d) { return R[d][11]; }, r: function (d, td) {
          var then = el('div', 'from'), now = el('div', 'from');
          add(then, el('span', 'sub', 'then '), urlNode(R[d][11], shortURL(R[d][11], 44)));
          add(now, el('span', 'sub', 'now '), urlNode(R[d][13], shortURL(R[d][13], 44)));
          add(td, then, now);
        } },
        { t: 'Band', v: function (d) { return R[d][16]; }, d: true, r: function (d, td) { add(td, badge(R[d][3], bandClass(R[d][3]))); add(td, el('span', 'sub', R[d][2])); } },
        { t: 'SimHash', c: 'num', d: true, v: function (d) { return R[d][4]; }, r: function (d, td) { text(td, R[d][4] + '/64'); } },
        { t: 'Jaccard', c: 'num', v: function (d) { return numKey(R[d][5]); }, r: function (d, td) { text(td, fnum(R[d][5])); } },
        { t: 'Dice', c: 'num', v: function (d) { return numKey(R[d][6]); }, r: function (d, td) { text(td, fnum(R[d][6])); } },
        { t: 'Cosine', c: 'num', v: function (d) { return numKey(R[d][7]); }, r: function (d, td) { text(td, fnum(R[d][7])); } },
        { t: 'Words', c: 'num', v: function (d) { return R[d][10]; }, r: function (d, td) {
          text(td, fmt(R[d][8]) + ' → ' + fmt(R[d][9]));
          add(td, el('span', 'sub', (R[d][10] >= 0 ? '+' : '') + fnum(R[d][10] * 100, 0) + '%'));
        } },
        { t: 'Reference', v: function (d) { return R[d][12]; }, r: function (d, td) { text(td, fdate(R[d][12])); } }
      ],
      filters: [
        { k: 'band', label: 'Band', get: function (d) { return R[d][3]; }, order: ['off-topic', 'major', 'minor', 'unchanged'] },
        { k: 'kind', label: 'Reference', get: function (d) { return R[d][2]; } }
      ],
      text: function (d) {
        var li = R[d][1];
        return targetURL(R[d][0]) + ' ' + R[d][11] + ' ' + R[d][13] + ' ' + R[d][14] + ' ' + R[d][15] + (li >= 0 ? ' ' + L[li][3] + ' ' + pageURL(L[li][0]) : '');
      },
      expand: function (d, box) { add(box, driftBlock(d)); }
    });
  }

  // ---- Identifiers ----
  var I = D.identifiers;
  function yesno(checked, b) { return !checked ? badge('not checked') : b ? badge('yes', 'good') : badge('no', 'bad'); }
  // idProblem names what is wrong with a declared identifier. A broken
  // identifier comes first: links should cite it only once it resolves
  // and leads back to the page.
  function idProblem(i) {
    var r = I[i];
    if (!r[9]) return 'not checked';
    if (!r[4]) return 'does not resolve';
    if (!r[5]) return 'does not lead back';
    if (!r[3]) return 'links should cite the identifier';
    return 'fine';
  }
  function buildIds() {
    tables.ids = new Table(document.getElementById('t-ids'), {
      rows: range(I.length),
      empty: 'No page or target of this run declares rel="identifier" or rel="cite-as".',
      cols: [
        { t: 'Access URL', c: 'wide', v: function (i) { return I[i][0]; }, r: function (i, td) {
          add(td, urlNode(I[i][0]), el('span', 'sub', (I[i][3] ? 'a page of this site' : 'a link target') + ', linked from ' + fmt(I[i][10]) + (I[i][10] === 1 ? ' page' : ' pages')));
          if (I[i][11] >= 0) add(td, ' ', internal('#target/' + I[i][11], 'details', 'sub'));
        } },
        { t: 'Identifier', c: 'wide', v: function (i) { return I[i][1]; }, r: function (i, td) { add(td, urlNode(I[i][1]), el('span', 'sub', 'rel=' + I[i][2])); } },
        { t: 'Resolves', v: function (i) { return I[i][4]; }, r: function (i, td) { add(td, yesno(I[i][9], I[i][4])); if (I[i][6]) add(td, el('span', 'sub', 'HTTP ' + I[i][6])); } },
        { t: 'Leads back', v: function (i) { return I[i][5]; }, r: function (i, td) { add(td, yesno(I[i][9], I[i][5])); if (I[i][7]) add(td, el('span', 'sub', 'via ' + I[i][7])); } },
        { t: 'Finding', v: function (i) { return idProblem(i); }, r: function (i, td) {
          var p = idProblem(i);
          add(td, badge(p, p === 'fine' ? 'good' : p === 'not checked' ? 'muted' : p.indexOf('cite') >= 0 ? 'warn' : 'bad'));
          if (I[i][8]) add(td, el('span', 'sub', I[i][8]));
        } }
      ],
      filters: [
        { k: 'finding', label: 'Finding', get: idProblem },
        { k: 'scope', label: 'Declared by', get: function (i) { return I[i][3] ? 'own page' : 'link target'; } }
      ],
      text: function (i) {
        var parts = [I[i][0], I[i][1], I[i][8]];
        (linksOfTarget[I[i][11]] || []).forEach(function (li) { parts.push(pageURL(L[li][0]), L[li][3]); });
        return parts.join(' ');
      },
      expand: function (i, box) {
        var t = I[i][11], ls = t >= 0 ? linksOfTarget[t] || [] : [];
        if (!ls.length) {
          add(box, el('p', 'empty', I[i][3] ? 'No page of this run links to this page.' : 'No link of this run points to the access URL.'));
        } else {
          add(box, el('h3', '', 'Linking pages (' + fmt(ls.length) + ' links)'));
          if (!I[i][3] && I[i][4] && I[i][5]) {
            var hint = el('p', 'lede');
            add(hint, 'These links use the access URL; the target asks to be cited as ', urlNode(I[i][1]), '.');
            add(box, hint);
          }
          add(box, linkingList(ls, 100));
        }
        if (t >= 0) add(box, internal('#target/' + t, 'Status history and all details →'));
      }
    });
  }

  // ---- target detail ----
  function renderTarget(t) {
    var sec = document.getElementById('view-target');
    sec.textContent = '';
    var r = T[t];
    if (!r) { add(sec, el('p', 'empty', 'No such target.')); return; }
    add(sec, internal('#broken', '← Back to the broken links', 'back'));
    var h = el('h1', 'url');
    add(h, urlNode(r[0]));
    var lede = el('p', 'lede', fmt(r[6]) + ' links on ' + fmt(r[7]) + ' pages point here. ');
    add(lede, vbadge(r[2]));
    if (confirmed(t)) add(lede, ' ', badge('confirmed broken', 'bad'));
    add(sec, h, lede);
    var grid = el('div', 'grid'), a = el('div', 'panel pad'), b = el('div', 'panel pad');
    var frags = missingFragments(t);
    add(a, el('h3', '', 'Evidence of this run'), evidenceBlock(t));
    if (frags.length) add(a, el('h3', '', 'Links with a missing #fragment'), fragmentEvidence(t));
    add(b, el('h3', '', 'Status across runs'));
    var hist = histOf(t);
    if (hist) {
      var when = function (at, run) { return at ? fdate(at) + (run ? ' (run #' + run + ')' : ' (an earlier run)') : ''; };
      var streak = '';
      if (hist[7]) {
        streak = hist[13] ? 'failing in ' + fmt(hist[13]) + (hist[13] === 1 ? ' run' : ' consecutive runs') + ' since ' + when(hist[11], hist[12]) : 'not failing';
      }
      add(b, kv([
        ['First seen', when(hist[0], hist[1])],
        ['First broken', hist[2] ? when(hist[2], hist[3]) : 'never'],
        ['Last OK', hist[4] ? when(hist[4], hist[5]) : 'never'],
        ['Failure streak', streak],
        ['Confirmed', hist[7] ? (hist[8] ? badge('confirmed broken since ' + when(hist[9], hist[10]), 'bad') : 'no') : '']
      ]));
      if (!hist[7]) add(b, el('p', 'sub', 'Confirmation and the failure streak come from the history of every run, which does not describe this run (a later run was applied, or this one was not).'));
      var tl = el('div', 'timeline');
      hist[6].forEach(function (e) {
        var s = el('span', V[e[2]] ? V[e[2]][1] : 'muted');
        s.title = 'run #' + e[0] + ' · ' + fdate(e[1]) + ' · ' + vname(e[2]) + (e[3] ? ' (' + e[3] + ')' : '');
        add(tl, s);
      });
      add(b, tl);
      var tbl = el('table'), tb = el('tbody');
      hist[6].slice().reverse().forEach(function (e) {
        var tr = el('tr');
        add(tr, el('td', '', 'run #' + e[0]), el('td', '', fdate(e[1])));
        var v = el('td');
        add(v, vbadge(e[2]));
        add(tr, v, el('td', 'num', e[3] ? String(e[3]) : '—'));
        add(tb, tr);
      });
      add(tbl, tb);
      add(b, tbl);
    } else {
      add(b, el('p', 'empty', 'No history recorded.'));
    }
    add(grid, a, b);
    var fx = el('div', 'panel pad');
    var fix = fixBlock(t);
    if (frags.length) add(fix, fragmentFix(t));
    if (!fix.childNodes.length) add(fix, el('p', 'empty', vbroken(r[2]) ? 'No fix recorded.' : 'Nothing to fix: the target answers.'));
    add(fx, fix);
    add(grid, fx);
    if (r[15] >= 0) {
      var dr = el('div', 'panel pad');
      add(dr, el('h3', '', 'Drift'));
      var band = R[r[15]][3];
      add(dr, badge(band, bandClass(band)), driftBlock(r[15]));
      add(grid, dr);
    }
    add(sec, grid);
    var ls = linksOfTarget[t] || [];
    var snaps = [];
    for (var s = 0; s < S.length; s++) if (L[S[s][0]] && L[S[s][0]][1] === t) snaps.push(s);
    if (snaps.length) {
      add(sec, el('h2', '', 'Declared snapshots'));
      var ul = el('ul', 'plain');
      snaps.forEach(function (s) {
        var li = el('li');
        add(li, badge(S[s][4] === 'unchecked' ? 'not audited' : S[s][4], snapVerdictClass(S[s][4])), ' ', urlNode(S[s][2]), ' ',
          el('span', 'sub', 'declared ' + (fdate(S[s][3]) || '(no datetime)') + (S[s][5] ? ' · archive says ' + fdate(S[s][5]) : '')));
        add(ul, li);
      });
      add(sec, ul);
    }
    add(sec, el('h2', '', 'Linking pages (' + fmt(ls.length) + ' links)'), linkingList(ls, 1000));
    window.scrollTo(0, 0);
  }

  // ---- routing: #section or #section/key=value&key=value or #target/N ----
  var built = {};
  var builders = { broken: buildBroken, links: buildLinks, pages: buildPages, robust: buildRobust, drift: buildDrift, identifiers: buildIds };
  var tableOf = { broken: ['broken'], links: ['links'], pages: ['pages'], robust: ['robust', 'diag'], drift: ['drift'], identifiers: ['ids'] };
  function ensure(name) {
    if (builders[name] && !built[name]) { built[name] = true; builders[name](); }
  }
  function route() {
    var h = location.hash.replace(/^#/, '');
    var slash = h.indexOf('/');
    var name = slash >= 0 ? h.slice(0, slash) : h;
    var rest = slash >= 0 ? h.slice(slash + 1) : '';
    // Sections are "view-NAME", so the browser never scrolls to them itself.
    if (!document.getElementById('view-' + name)) { name = 'overview'; rest = ''; }
    var views = document.querySelectorAll('.view');
    for (var i = 0; i < views.length; i++) views[i].classList.toggle('shown', views[i].id === 'view-' + name);
    var links = document.querySelectorAll('#nav a');
    for (var j = 0; j < links.length; j++) links[j].classList.toggle('active', links[j].getAttribute('href') === '#' + name);
    window.scrollTo(0, 0);
    if (name === 'target') { renderTarget(parseInt(rest, 10)); return; }
    ensure(name);
    if (rest && tableOf[name]) {
      var tb = tables[tableOf[name][0]];
      rest.split('&').forEach(function (kvp) {
        var eq = kvp.indexOf('=');
        if (eq < 0 || !tb || !tb.selects) return;
        var k, v;
        try { k = decodeURIComponent(kvp.slice(0, eq)); v = decodeURIComponent(kvp.slice(eq + 1)); } catch (e) { return; }
        if (Object.prototype.hasOwnProperty.call(tb.selects, k)) tb.setFilter(k, v);
      });
    }
  }
  window.addEventListener('hashchange', route);
  route();
  // Printing shows every section with up to 1,000 rows per table, and the
  // broken links opened: where each is linked, its evidence and its fix
  // (snippets included) are on paper too.
  window.addEventListener('beforeprint', function () {
    Object.keys(builders).forEach(ensure);
    Object.keys(tables).forEach(function (k) {
      var tb = tables[k];
      if (!tb.tbody) return;
      tb.savedSize = tb.size;
      tb.savedPage = tb.page;
      tb.size = 1000;
      tb.page = 0;
      if (k === 'broken') {
        tb.savedOpen = tb.open;
        tb.open = {};
        tb.view.slice(0, tb.size).forEach(function (r) { tb.open[r] = true; });
      }
      tb.render();
    });
  });
  window.addEventListener('afterprint', function () {
    Object.keys(tables).forEach(function (k) {
      var tb = tables[k];
      if (!tb.savedSize) return;
      tb.size = tb.savedSize;
      tb.page = tb.savedPage || 0;
      tb.savedSize = 0;
      if (tb.savedOpen) { tb.open = tb.savedOpen; tb.savedOpen = null; }
      tb.render();
    });
  });
})();
