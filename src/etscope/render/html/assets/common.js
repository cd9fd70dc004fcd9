/* etscope HTML pages (report and diff): shared helpers. The templates inline this file inside one
 * function scope, after `DATA` is parsed from the JSON blob and before the page's own script
 * (diff.js, report.js). No libraries, no network.
 * Data from input files is only ever written with textContent or setAttribute (never innerHTML),
 * so a name that looks like an HTML tag shows as text. */
  var SVGNS = 'http://www.w3.org/2000/svg';
  var COLORS = { npu: '#2e7d32', cpu: '#c62828', other: ['#1565c0', '#6a1b9a', '#00838f', '#ef6c00', '#4e342e'],
                 overhead: '#9e9e9e', method: '#455a64', none: '#bdbdbd' };
  var PHASE_COLORS = ['#1565c0', '#ef6c00', '#2e7d32', '#6a1b9a', '#c62828', '#00838f', '#795548'];
  var otherBackends = [];

  // ---- small helpers ---------------------------------------------------------------------------
  function el(tag, attrs) {
    var e = document.createElement(tag);
    setAttrs(e, attrs);
    for (var i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }
  function sv(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    for (var i = 2; i < arguments.length; i++) append(e, arguments[i]);
    return e;
  }
  function setAttrs(e, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === 'text') e.textContent = String(v);
      else if (k === 'onclick') e.addEventListener('click', v);
      else e.setAttribute(k, String(v));
    });
  }
  function append(e, c) {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { append(e, x); }); return; }
    if (typeof c === 'string' || typeof c === 'number') e.appendChild(document.createTextNode(String(c)));
    else e.appendChild(c);
  }
  // A table whose column headers sort it: clicking a header sorts by that column (numbers first
  // descending), clicking again reverses. Returns its thead and tbody; `redraw` fills the body.
  function sortableTable(box, id, cols, state, redraw) {
    var table = el('table', { 'class': 'data', id: id });
    var thead = el('thead'), tr = el('tr');
    cols.forEach(function (c) {
      var th = el('th', { scope: 'col', 'data-key': c.key, text: c.label, title: 'sort by ' + c.label });
      th.addEventListener('click', function () {
        if (state.sort === c.key) state.dir = -state.dir; else { state.sort = c.key; state.dir = c.num ? -1 : 1; }
        redraw();
      });
      tr.appendChild(th);
    });
    thead.appendChild(tr);
    table.appendChild(thead);
    var tbody = el('tbody');
    table.appendChild(tbody);
    box.appendChild(el('div', { 'class': 'table-wrap' }, table));
    return { thead: thead, tbody: tbody };
  }
  // Sorts a sortableTable's items ({i: original index, ...}) in place by state.sort / state.dir
  // (values from sortKey(item, key)): missing values last, numbers as numbers, ties in original
  // order; then marks the sorted header (aria-sort). `isMissing` says which values count as missing.
  function sortRows(list, thead, state, sortKey, isMissing) {
    if (state.sort) {
      var k = state.sort, d = state.dir;
      list.sort(function (a, b) {
        var va = sortKey(a, k), vb = sortKey(b, k);
        var na = isMissing(va), nb = isMissing(vb);
        if (na || nb) return na === nb ? a.i - b.i : (na ? 1 : -1);
        if (typeof va === 'number' && typeof vb === 'number') return (va - vb) * d || a.i - b.i;
        return String(va).localeCompare(String(vb)) * d || a.i - b.i;
      });
    }
    Array.prototype.forEach.call(thead.querySelectorAll('th'), function (th) {
      if (th.getAttribute('data-key') === state.sort) th.setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending');
      else th.removeAttribute('aria-sort');
    });
  }
  function isNum(x) { return typeof x === 'number' && isFinite(x); }
  function fmtMs(ms) {
    if (!isNum(ms)) return 'n/a';
    var a = Math.abs(ms);
    if (a >= 1000) return (ms / 1000).toFixed(2) + ' s';
    if (a >= 1) return ms.toFixed(2) + ' ms';
    if (a >= 0.001) return (ms * 1000).toFixed(1) + ' µs';
    if (a === 0) return '0';
    return (ms * 1e6).toFixed(0) + ' ns';
  }
  function fmtUs(us) { return isNum(us) ? fmtMs(us / 1000) : 'n/a'; }
  function fmtInt(x) { return isNum(x) ? Math.round(x).toLocaleString('en-US') : 'n/a'; }
  function fmtNum(x, d) {
    if (!isNum(x)) return 'n/a';
    if (Math.abs(x) >= 1000 || Number.isInteger(x)) return x.toLocaleString('en-US', { maximumFractionDigits: d === undefined ? 1 : d });
    return x.toPrecision(4).replace(/\.?0+$/, '');
  }
  function fmtCompact(x) {
    if (!isNum(x)) return 'n/a';
    var a = Math.abs(x);
    if (a >= 1e9) return +(x / 1e9).toPrecision(3) + 'G';
    if (a >= 1e6) return +(x / 1e6).toPrecision(3) + 'M';
    if (a >= 1e3) return +(x / 1e3).toPrecision(3) + 'k';
    return String(+x.toPrecision(3));
  }
  function fmtPct(x) { return isNum(x) ? (x * 100).toFixed(x < 0.001 && x > 0 ? 2 : 1) + '%' : ''; }
  function fmtBytes(n) {
    if (!isNum(n)) return 'n/a';
    var u = ['B', 'KiB', 'MiB', 'GiB'], i = 0;
    while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i === 0 ? Math.round(n) : n.toFixed(1)) + ' ' + u[i];
  }
  function fmtValue(v, unit) {
    if (!isNum(v)) return 'n/a';
    if (unit === 'ns') return fmtMs(v / 1e6);
    if (unit === 'us') return fmtMs(v / 1e3);
    if (unit === 'cycles') return fmtInt(v) + ' cycles';
    if (unit === 'bytes') return fmtBytes(v);
    if (unit === 'count') return fmtInt(v);
    return fmtNum(v) + ' (unit unknown)';
  }
  function trunc(s, n) { s = String(s === null || s === undefined ? '' : s); return s.length > n ? s.slice(0, n - 1) + '…' : s; }
  // the delegate backends the registry calls NPUs (formats/backends.py, carried in the page's WORDS)
  var NPU_BACKENDS = WORDS.npu_backends || [];
  function isNpu(p) { return NPU_BACKENDS.indexOf(p) >= 0; }
  function placementColor(p) {
    if (p === null || p === undefined) return COLORS.none;
    if (isNpu(p)) return COLORS.npu;
    if (p === 'cpu') return COLORS.cpu;
    var i = otherBackends.indexOf(p);
    if (i < 0) { otherBackends.push(p); i = otherBackends.length - 1; }
    return COLORS.other[i % COLORS.other.length];
  }
  function categoryColor(cat, placement) {
    if (String(cat).indexOf('NPU (') === 0) return COLORS.npu;
    if (cat === 'CPU') return COLORS.cpu;
    if (cat === 'framework overhead') return COLORS.overhead;
    return placementColor(placement);
  }
  function placementLabel(p) {
    if (isNpu(p)) return 'NPU (' + p + ')';
    if (p === 'cpu') return 'CPU (fallback kernel)';
    if (p === null || p === undefined) return 'not an op (input, output, view bookkeeping)';
    return 'delegate: ' + p;
  }
  function legend(items) {
    return el('div', { 'class': 'legend' }, items.map(function (it) {
      return el('span', null, el('span', { 'class': 'sw', style: 'background:' + it[1] }), it[0]);
    }));
  }
  function stat(k, v, s) {
    return el('div', { 'class': 'stat' }, el('div', { 'class': 'k', text: k }), el('div', { 'class': 'v', text: v }),
              s ? el('div', { 'class': 's', text: s }) : null);
  }

  // Tooltip: one div, text only.
  var tip = document.getElementById('tooltip');
  function showTip(ev, lines) {
    tip.textContent = lines.filter(function (x) { return x; }).join('\n');
    tip.hidden = false;
    moveTip(ev);
  }
  function moveTip(ev) {
    var x = ev.clientX + 14, y = ev.clientY + 14;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 8) x = Math.max(8, ev.clientX - w - 14);
    if (y + h > window.innerHeight - 8) y = Math.max(8, ev.clientY - h - 14);
    tip.style.left = x + 'px'; tip.style.top = y + 'px';
  }
  function hideTip() { tip.hidden = true; }
  function withTip(node, linesFn) {
    node.addEventListener('mouseenter', function (ev) { showTip(ev, linesFn()); });
    node.addEventListener('mousemove', moveTip);
    node.addEventListener('mouseleave', hideTip);
    return node;
  }

  // Axis ticks.
  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) { hi = lo + 1; }
    var span = hi - lo, step = Math.pow(10, Math.floor(Math.log10(span / n)));
    var err = span / n / step;
    if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }
  function xAxis(g, scale, lo, hi, y, label, width, fmt) {
    var ax = sv('g', { 'class': 'axis' });
    ax.appendChild(sv('line', { x1: scale(lo), x2: scale(hi), y1: y, y2: y }));
    var ticks = niceTicks(lo, hi, Math.max(2, Math.floor(width / 100)));
    if (fmt === fmtInt) ticks = ticks.filter(function (t) { return Number.isInteger(t); });
    ticks.forEach(function (t) {
      var x = scale(t);
      ax.appendChild(sv('line', { x1: x, x2: x, y1: y, y2: y + 4 }));
      ax.appendChild(sv('text', { x: x, y: y + 15, 'text-anchor': 'middle', text: fmt ? fmt(t) : fmtNum(t) }));
    });
    ax.appendChild(sv('text', { 'class': 'axis-label', x: scale(lo) + (scale(hi) - scale(lo)) / 2, y: y + 31, 'text-anchor': 'middle', text: label }));
    g.appendChild(ax);
  }
  // Time axes pick ms or µs so tick labels stay readable; values are always ms.
  function timeUnit(maxMs) { return maxMs < 1 ? { k: 1000, name: 'µs' } : { k: 1, name: 'ms' }; }
  function xAxisTime(g, scale, lo, hi, y, label, width) {
    var u = timeUnit(hi);
    xAxis(g, function (v) { return scale(v / u.k); }, lo * u.k, hi * u.k, y, label + ', ' + u.name, width, function (t) { return fmtNum(t, 3); });
  }
  function yAxisTime(g, scale, lo, hi, x, label, height) {
    var u = timeUnit(hi);
    yAxis(g, function (v) { return scale(v / u.k); }, lo * u.k, hi * u.k, x, label + ' (' + u.name + ')', height, function (t) { return fmtNum(t, 3); });
  }
  function yAxis(g, scale, lo, hi, x, label, height, fmt) {
    var ax = sv('g', { 'class': 'axis' });
    ax.appendChild(sv('line', { x1: x, x2: x, y1: scale(lo), y2: scale(hi) }));
    var ticks = niceTicks(lo, hi, Math.max(2, Math.floor(height / 40)));
    if (fmt === fmtInt) ticks = ticks.filter(function (t) { return Number.isInteger(t); });
    ticks.forEach(function (t) {
      var y = scale(t);
      ax.appendChild(sv('line', { x1: x - 4, x2: x, y1: y, y2: y }));
      ax.appendChild(sv('text', { x: x - 6, y: y + 4, 'text-anchor': 'end', text: fmt ? fmt(t) : fmtNum(t) }));
    });
    var mid = (scale(lo) + scale(hi)) / 2;
    ax.appendChild(sv('text', { 'class': 'axis-label', x: 14, y: mid, 'text-anchor': 'middle',
                                transform: 'rotate(-90 14 ' + mid + ')', text: label }));
    g.appendChild(ax);
  }
  function chartWidth(container) { return Math.max(640, Math.min(1240, (container.clientWidth || 1100) - 4)); }
