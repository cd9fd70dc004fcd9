/* etscope report: draws the sections from the JSON blob (`DATA`). Inlined by report.html.j2 inside
 * one function scope after common.js (helpers) and diff.js (the "Compared with base" section).
 * No libraries. Data from input files is only ever written with textContent or setAttribute
 * (never innerHTML), so a name that looks like an HTML tag shows as text. */

  // ---- sections ---------------------------------------------------------------------------------
  function renderGuideCards() {
    var box = document.getElementById('guide-cards');
    var s = DATA.summary || {}, runs = s.runs || {}, lat = runs.latency_ms;
    if (lat) {
      // runs.warmup: the warm-up runs left out of every statistic (the guide says which)
      var over = runs.warmup ? (runs.count - runs.warmup.count) + ' steady run(s) of ' + runs.count : runs.count + ' run(s)';
      box.appendChild(stat('Method::execute p50', fmtMs(lat.p50), 'over ' + over + '; p90 ' + fmtMs(lat.p90)));
      box.appendChild(stat('mean', fmtMs(lat.mean), 'min ' + fmtMs(lat.min) + ', max ' + fmtMs(lat.max)));
    }
    (s.breakdown || []).forEach(function (b) {
      var name = b.kind === 'delegate' ? 'delegate ' + b.backend : (b.kind === 'cpu_ops' ? 'CPU kernels (fallback)' : 'framework overhead');
      box.appendChild(stat(name, fmtMs(b.mean_ms), fmtPct(b.share) + ' of Method::execute' +
        (isNum(b.calls_per_run) ? ', ' + fmtNum(b.calls_per_run) + ' call(s)/run' : '')));
    });
    var mem = s.memory || {};
    if (isNum(mem.planned_bytes)) box.appendChild(stat('planned memory (.pte)', fmtBytes(mem.planned_bytes), (mem.planned_buffers || []).length + ' buffer(s)'));
    var heap = s.qnn_heap;   // --qnn-heap: DSP heap before the first QNN context / after the last was freed
    if (heap) {
      box.appendChild(stat('DSP heap (QNN) before → after', fmtBytes(heap.before_bytes) + ' → ' +
        (isNum(heap.after_bytes) ? fmtBytes(heap.after_bytes) : 'not freed'),
        (isNum(heap.difference_bytes) ? 'difference ' + (heap.difference_bytes >= 0 ? '+' : '') + heap.difference_bytes + ' B' : 'contexts not freed') +
        (isNum(heap.vtcm_bytes) ? '; VTCM ' + fmtBytes(heap.vtcm_bytes) : '')));
    }
    if (DATA.llm && isNum(DATA.llm.decode_tokens_per_s)) box.appendChild(stat('decode', fmtNum(DATA.llm.decode_tokens_per_s) + ' tokens/s', 'from the LLM analysis'));
    else if (DATA.llm && isNum(DATA.llm.decode_runs_per_s)) box.appendChild(stat('decode', fmtNum(DATA.llm.decode_runs_per_s) + ' runs/s', 'tokens per run unknown'));
    (s.load || []).forEach(function (e) { box.appendChild(stat('before the runs: ' + e.name, fmtMs(e.ms))); });
  }

  function kindColor(node) {
    if (node.kind === 'method') return COLORS.method;
    if (node.kind === 'overhead') return COLORS.overhead;
    if (node.kind === 'cpu' || node.kind === 'operator_call' || node.kind === 'kernel') return COLORS.cpu;
    if (node.backend) return placementColor(node.backend);
    return node.parentColor || COLORS.other[0];
  }

  function renderIcicle() {
    var box = document.getElementById('time-chart');
    var root = DATA.hierarchy;
    if (!root) { box.appendChild(el('p', { 'class': 'muted', text: 'No Execute runs with timing in this ETDump.' })); return; }
    // Parent links and colours.
    (function walk(n, parent) {
      n.parent = parent;
      n.color = kindColor(n);
      (n.children || []).forEach(function (c) { c.parentColor = n.color; walk(c, n); });
    })(root, null);
    var depth = (function d(n) { return 1 + Math.max.apply(null, [0].concat((n.children || []).map(d))); })(root);
    var W = chartWidth(box), rowH = 30, padL = 10, padR = 10, top = 6;
    var H = top + depth * rowH + 44;
    var legendItems = [['Method::execute', COLORS.method]];
    (DATA.summary.breakdown || []).forEach(function (b) {
      if (b.kind === 'delegate') legendItems.push([placementLabel(b.backend), placementColor(b.backend)]);
    });
    legendItems.push(['CPU kernels (fallback)', COLORS.cpu], ['framework overhead', COLORS.overhead]);
    box.appendChild(legend(legendItems));
    var holder = el('div');
    box.appendChild(holder);
    var defs = sv('defs', null, sv('pattern', { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
      sv('rect', { width: 6, height: 6, fill: 'rgba(255,255,255,0)' }), sv('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: 'rgba(255,255,255,0.55)', 'stroke-width': 3 })));

    function draw(focus) {
      holder.textContent = '';
      var svg = sv('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'icicle of Method::execute time' });
      svg.appendChild(defs.cloneNode(true));
      var total = focus.ms || 0;
      var scale = function (v) { return padL + (total > 0 ? v / total : 0) * (W - padL - padR); };
      // Ancestors of the focus are drawn full width above it.
      var chain = [];
      for (var a = focus.parent; a; a = a.parent) chain.unshift(a);
      var row = 0;
      chain.forEach(function (a) { box1(svg, a, padL, W - padR, row++, true); });
      (function lay(n, x0, x1, r) {
        box1(svg, n, x0, x1, r, false);
        var kids = n.children || [];
        var sum = kids.reduce(function (s, k) { return s + (k.ms || 0); }, 0);
        var f = (sum > (n.ms || 0) && sum > 0) ? (n.ms || 0) / sum : 1;
        var x = x0;
        kids.forEach(function (k) {
          var w = (x1 - x0) * ((k.ms || 0) * f) / ((n.ms || 0) || 1);
          if (w > 0.3) lay(k, x, x + w, r + 1);
          x += w;
        });
      })(focus, padL, W - padR, row);
      xAxisTime(svg, scale, 0, total, top + depth * rowH + 4, 'time per run (mean) — ' + focus.name, W);
      holder.appendChild(svg);
      function box1(svg, n, x0, x1, r, isAncestor) {
        var y = top + r * rowH, w = Math.max(0, x1 - x0);
        var g = sv('g');
        var rect = sv('rect', { 'class': 'box', x: x0, y: y, width: w, height: rowH - 2, fill: n.color, opacity: isAncestor ? 0.55 : 1 });
        g.appendChild(rect);
        var est = n.estimated || !!n.estimate;
        if (est) g.appendChild(sv('rect', { x: x0, y: y, width: w, height: rowH - 2, fill: 'url(#hatch)', 'pointer-events': 'none' }));
        if (w > 46) {
          var chars = Math.floor((w - 8) / 6.4);
          g.appendChild(sv('text', { x: x0 + 4, y: y + rowH / 2 + 3, fill: '#fff', style: 'fill:#fff', 'pointer-events': 'none',
                                     text: trunc(n.name + ' ' + fmtMs(n.ms) + (est ? ' (est.)' : ''), chars) }));
        }
        var rootMs = DATA.hierarchy.ms;
        withTip(g, function () {
          return [n.name, fmtMs(n.ms) + ' per run' + (est ? ' (' + (n.estimate || 'estimate') + ')' : ''),
                  isNum(rootMs) && rootMs > 0 ? fmtPct(n.ms / rootMs) + ' of Method::execute' : '',
                  n.op_type ? 'op type: ' + n.op_type : '', n.node ? 'graph node: ' + n.node : '',
                  n.event ? 'event: ' + n.event + ' (' + n.how + ')' : '',
                  n.source ? 'source: ' + n.source : '',
                  (n.children && n.children.length) ? 'click to zoom' : ''];
        });
        g.addEventListener('click', function () {
          hideTip();
          if (isAncestor || n === focus) draw(n.parent && n === focus ? n.parent : n);
          else if (n.children && n.children.length) draw(n);
        });
        svg.appendChild(g);
      }
    }
    draw(root);
  }

  function renderPlacement() {
    var barBox = document.getElementById('placement-bar');
    var s = DATA.summary || {};
    var parts = (s.breakdown || []).filter(function (b) { return isNum(b.mean_ms); });
    if (!parts.length || !(s.runs || {}).latency_ms) {
      barBox.appendChild(el('p', { 'class': 'muted', text: 'No timed runs.' }));
      return;
    }
    var total = parts.reduce(function (a, b) { return a + Math.max(0, b.mean_ms); }, 0) || 1;
    var W = chartWidth(barBox), H = 80, padL = 10, padR = 10;
    var svg = sv('svg', { width: W, height: H, role: 'img', 'aria-label': 'placement split' });
    var x = padL, items = [];
    parts.forEach(function (b) {
      var label = b.kind === 'delegate' ? placementLabel(b.backend) : (b.kind === 'cpu_ops' ? 'CPU kernels (fallback)' : 'framework overhead');
      var color = b.kind === 'delegate' ? placementColor(b.backend) : (b.kind === 'cpu_ops' ? COLORS.cpu : COLORS.overhead);
      items.push([label, color]);
      var w = (W - padL - padR) * Math.max(0, b.mean_ms) / total;
      var g = sv('g');
      g.appendChild(sv('rect', { 'class': 'box', x: x, y: 4, width: Math.max(w, 0.5), height: 34, fill: color }));
      if (w > 70) g.appendChild(sv('text', { x: x + 5, y: 25, style: 'fill:#fff', 'pointer-events': 'none', text: trunc(fmtMs(b.mean_ms) + ' · ' + fmtPct(b.share), Math.floor(w / 6.5)) }));
      withTip(g, function () { return [label, fmtMs(b.mean_ms) + ' per run (mean), p50 ' + fmtMs(b.p50_ms), fmtPct(b.share) + ' of Method::execute',
                                        isNum(b.calls_per_run) ? fmtNum(b.calls_per_run) + ' call(s) per run' : '']; });
      svg.appendChild(g);
      x += w;
    });
    xAxisTime(svg, function (v) { return padL + (W - padL - padR) * v / total; }, 0, total, 42, 'Method::execute per run (mean)', W);
    barBox.appendChild(el('div', { 'class': 'chart-title', text: 'Method::execute split (mean per run)' }));
    barBox.appendChild(legend(items));
    barBox.appendChild(svg);

    // Per op type.
    var rows = (DATA.placement || []).filter(function (r) { return isNum(r.ms) && r.ms > 0; });
    var box = document.getElementById('placement-ops');
    var top = rows.slice(0, 30);
    box.appendChild(el('div', { 'class': 'chart-title', text: 'Per op type (mean ms per run' + (rows.length > 30 ? '; top 30 of ' + rows.length : '') + ')' }));
    var cats = [];
    rows.forEach(function (r) { if (!cats.some(function (c) { return c[0] === r.category; })) cats.push([r.category, categoryColor(r.category, r.placement)]); });
    box.appendChild(legend(cats.concat(rows.some(function (r) { return r.estimated; }) ? [['hatched: estimated (QNN ops: their share of the measured accelerator time, by cycles)', '#777']] : [])));
    if (!top.length) return;
    var labelW = 300, W2 = chartWidth(box), rowH = 20, H2 = top.length * rowH + 48;
    var max = Math.max.apply(null, top.map(function (r) { return r.ms; }));
    var sc = function (v) { return labelW + (W2 - labelW - 90) * v / (max || 1); };
    var svg2 = sv('svg', { width: W2, height: H2, role: 'img', 'aria-label': 'time per op type' });
    svg2.appendChild(sv('defs', null, sv('pattern', { id: 'hatch2', width: 6, height: 6, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
      sv('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: 'rgba(255,255,255,0.6)', 'stroke-width': 3 }))));
    top.forEach(function (r, i) {
      var y = 4 + i * rowH, g = sv('g');
      g.appendChild(sv('text', { x: labelW - 6, y: y + 13, 'text-anchor': 'end', text: trunc(r.op_type, 46) }));
      var w = Math.max(1, sc(r.ms) - labelW), color = categoryColor(r.category, r.placement);
      g.appendChild(sv('rect', { 'class': 'box', x: labelW, y: y + 2, width: w, height: rowH - 5, fill: color }));
      if (r.estimated) g.appendChild(sv('rect', { x: labelW, y: y + 2, width: w, height: rowH - 5, fill: 'url(#hatch2)', 'pointer-events': 'none' }));
      g.appendChild(sv('text', { x: labelW + w + 4, y: y + 13, text: fmtMs(r.ms) + (r.estimated ? ' (est.)' : '') }));
      withTip(g, function () { return [r.op_type, r.category, fmtMs(r.ms) + ' per run (mean)' + (r.estimated ? ', ' + (r.estimate || 'estimated') : ''), r.count + ' row(s)']; });
      svg2.appendChild(g);
    });
    xAxisTime(svg2, sc, 0, max, top.length * rowH + 8, 'time per run (mean)', W2 - labelW);
    box.appendChild(svg2);
  }

  function renderOpsTable() {
    var box = document.getElementById('ops-table');
    var ops = DATA.ops || { columns: [], rows: [] };
    var C = {};
    ops.columns.forEach(function (c, i) { C[c] = i; });
    var rows = ops.rows.map(function (r, i) { return { r: r, i: i }; });
    var cols = [
      { key: 'instruction_id', label: 'instr', num: true },
      { key: 'name', label: 'name' },
      { key: 'op_type', label: 'op type' },
      { key: 'placement', label: 'placement' },
      { key: 'calls_per_run', label: 'calls/run', num: true },
      { key: 'p50', label: 'p50', num: true, value: true },
      { key: 'mean', label: 'mean', num: true, value: true },
      { key: 'total', label: 'total', num: true, value: true },
      { key: 'unit', label: 'unit' },
      { key: 'share', label: 'share', num: true },
      { key: 'source', label: 'source' }
    ];
    var state = { sort: null, dir: 1, q: '', placement: '', inner: true };
    var placements = [];
    rows.forEach(function (x) { var p = x.r[C.placement]; if (p !== null && placements.indexOf(p) < 0) placements.push(p); });
    var search = el('input', { type: 'search', placeholder: 'filter: name, op type, placement, source…', 'aria-label': 'filter rows' });
    var sel = el('select', { 'aria-label': 'placement' }, el('option', { value: '', text: 'all placements' }),
                 placements.map(function (p) { return el('option', { value: p, text: placementLabel(p) }); }));
    var inner = el('input', { type: 'checkbox', id: 'ops-inner', checked: 'checked' });
    var count = el('span', { 'class': 'count' });
    box.appendChild(el('div', { 'class': 'toolbar' }, search, sel, el('label', null, inner, ' events inside instructions'), count));
    var parts = sortableTable(box, 'ops-data', cols, state, function () { draw(); });
    var thead = parts.thead, tbody = parts.tbody;
    if (ops.total_rows > ops.rows.length) box.appendChild(el('p', { 'class': 'muted', text: 'Only the first ' + ops.rows.length + ' of ' + ops.total_rows + ' rows are in this report; `etscope export` writes all of them.' }));
    var LIMIT = 2000;

    function sortKey(x, key) {
      var r = x.r;
      if (key === 'p50' || key === 'mean' || key === 'total') {
        // Time rows sort by ms; other units by their value (they are not comparable with time).
        return r[C.unit] === 'ns' ? r[C[key + '_ms']] : r[C[key]];
      }
      return r[C[key]];
    }
    function draw() {
      var q = state.q.toLowerCase();
      var list = rows.filter(function (x) {
        var r = x.r;
        if (!state.inner && r[C.level] > 0) return false;
        if (state.placement && r[C.placement] !== state.placement) return false;
        if (!q) return true;
        return [r[C.name], r[C.op_type], r[C.placement], r[C.source], r[C.role], String(r[C.instruction_id])].some(function (v) {
          return v !== null && v !== undefined && String(v).toLowerCase().indexOf(q) >= 0;
        });
      });
      sortRows(list, thead, state, sortKey, function (v) { return v === null || v === undefined; });
      tbody.textContent = '';
      var frag = document.createDocumentFragment();
      list.slice(0, LIMIT).forEach(function (x) {
        var r = x.r, unit = r[C.unit];
        var row = el('tr', { 'class': 'level' + r[C.level] });
        cols.forEach(function (c) {
          var v = r[C[c.key]], text;
          if (c.value) text = unit === 'ns' ? fmtMs(r[C[c.key + '_ms']]) : fmtValue(v, unit);
          else if (c.key === 'share') text = fmtPct(v);
          else if (c.key === 'calls_per_run') text = isNum(v) ? fmtNum(v, 2) : '';
          else if (c.key === 'unit') text = unit === 'ns' ? 'time' : String(v);
          else text = v === null || v === undefined ? '' : String(v);
          var td = el('td', { 'class': (c.num ? 'num ' : '') + c.key, text: text });
          if (c.key === 'placement' && v) td.style.color = placementColor(v);
          row.appendChild(td);
        });
        frag.appendChild(row);
      });
      tbody.appendChild(frag);
      count.textContent = list.length + ' of ' + rows.length + ' rows' + (list.length > LIMIT ? ' (first ' + LIMIT + ' shown; filter to see others)' : '');
    }
    search.addEventListener('input', function () { state.q = search.value; draw(); });
    sel.addEventListener('change', function () { state.placement = sel.value; draw(); });
    inner.addEventListener('change', function () { state.inner = inner.checked; draw(); });
    draw();
  }

  function phaseInfo() {
    var phase = (DATA.runs || {}).phase;
    if (!phase) return null;
    var names = [];
    phase.forEach(function (p) { if (p !== null && names.indexOf(p) < 0) names.push(p); });
    return { phase: phase, names: names, color: function (p) { var i = names.indexOf(p); return i < 0 ? COLORS.none : PHASE_COLORS[i % PHASE_COLORS.length]; } };
  }

  function renderRuns(boxId, withTitle) {
    var box = document.getElementById(boxId);
    var cols = (DATA.runs || {}).columns || {};
    var lat = cols.latency_ms || [];
    if (!lat.length) { box.appendChild(el('p', { 'class': 'muted', text: 'No Execute runs.' })); return; }
    var ph = phaseInfo();
    var vals = lat.filter(isNum);
    if (!vals.length) { box.appendChild(el('p', { 'class': 'muted', text: 'No run has a Method::execute time.' })); return; }
    var lo = 0, hi = Math.max.apply(null, vals) * 1.05;
    var W = chartWidth(box), H = 260, padL = 64, padR = 16, padT = 10, padB = 46;
    var total = (DATA.runs || {}).total_runs;
    var shown = total ? ' (the first ' + lat.length.toLocaleString('en-US') + ' of ' + total.toLocaleString('en-US') + ' runs)' : '';
    if (withTitle) box.appendChild(el('div', { 'class': 'chart-title', text: 'Method::execute latency per run' + (ph ? ', coloured by phase' : '') + shown }));
    if (ph) box.appendChild(legend(ph.names.map(function (n) { return [n, ph.color(n)]; })
      .concat((((DATA.llm || {}).series || {}).warmup || []).some(function (w) { return w; }) ? [['hollow: warm-up run', '#ffffff']] : [])));
    var svg = sv('svg', { width: W, height: H, role: 'img', 'aria-label': 'latency per run', 'class': 'runs-series' });
    var n = lat.length;
    var sx = function (i) { return padL + (W - padL - padR) * (n > 1 ? i / (n - 1) : 0.5); };
    var sy = function (v) { return padT + (H - padT - padB) * (1 - (v - lo) / (hi - lo || 1)); };
    var grid = sv('g', { 'class': 'grid' });
    niceTicks(lo, hi, 5).forEach(function (t) { grid.appendChild(sv('line', { x1: padL, x2: W - padR, y1: sy(t), y2: sy(t) })); });
    svg.appendChild(grid);
    var r = n > 400 ? 1.6 : 2.8;
    var dots = sv('g');
    var warm = ((DATA.llm || {}).series || {}).warmup || [];
    lat.forEach(function (v, i) {
      if (!isNum(v)) return;
      var col = ph ? ph.color(ph.phase[i]) : COLORS.method;
      var c = warm[i] ? sv('circle', { cx: sx(i), cy: sy(v), r: r + 1.5, fill: 'none', stroke: col, 'stroke-width': 1.5 })
                      : sv('circle', { cx: sx(i), cy: sy(v), r: r, fill: col });
      dots.appendChild(c);
    });
    svg.appendChild(dots);
    // One hover target for the whole plot: nearest run.
    var hit = sv('rect', { x: padL, y: padT, width: W - padL - padR, height: H - padT - padB, fill: 'transparent' });
    hit.addEventListener('mousemove', function (ev) {
      var rect = svg.getBoundingClientRect();
      var i = Math.round((ev.clientX - rect.left - padL) / ((W - padL - padR) || 1) * (n - 1));
      i = Math.max(0, Math.min(n - 1, i));
      var lines = ['run ' + i + (ph && ph.phase[i] ? ' (' + ph.phase[i] + ')' : ''), 'Method::execute ' + fmtMs(lat[i])];
      Object.keys(cols).forEach(function (k) {
        if (/_ms$/.test(k) && k !== 'latency_ms' && isNum(cols[k][i])) lines.push(k.replace(/_ms$/, '') + ': ' + fmtMs(cols[k][i]));
      });
      showTip(ev, lines);
    });
    hit.addEventListener('mouseleave', hideTip);
    svg.appendChild(hit);
    xAxis(svg, sx, 0, Math.max(n - 1, 1), H - padB + 4, 'run (Execute index, in order)', W - padL, fmtInt);
    yAxisTime(svg, sy, lo, hi, padL, 'latency', H - padT - padB);
    box.appendChild(svg);

    // Distribution.
    box.appendChild(el('div', { 'class': 'chart-title', text: 'Distribution of Method::execute latency' + (ph ? ' per phase (stacked)' : '') + shown }));
    var bins = Math.min(40, Math.max(8, Math.round(Math.sqrt(vals.length) * 2)));
    var vmin = Math.min.apply(null, vals), vmax = Math.max.apply(null, vals);
    if (vmax === vmin) { vmax = vmin + (vmin || 1) * 0.01; }
    var bw = (vmax - vmin) / bins;
    var groups = ph ? ph.names : ['all'];
    var counts = groups.map(function () { var a = []; for (var k = 0; k < bins; k++) a.push(0); return a; });
    lat.forEach(function (v, i) {
      if (!isNum(v)) return;
      var b = Math.min(bins - 1, Math.floor((v - vmin) / bw));
      var gi = ph ? ph.names.indexOf(ph.phase[i]) : 0;
      if (gi >= 0) counts[gi][b]++;
    });
    var totals = []; for (var k = 0; k < bins; k++) totals.push(counts.reduce(function (s, c) { return s + c[k]; }, 0));
    var cmax = Math.max.apply(null, totals) || 1;
    var H2 = 200;
    var svg2 = sv('svg', { width: W, height: H2, role: 'img', 'aria-label': 'latency histogram' });
    var hx = function (v) { return padL + (W - padL - padR) * (v - vmin) / (vmax - vmin); };
    var hy = function (c) { return padT + (H2 - padT - padB) * (1 - c / cmax); };
    for (var b = 0; b < bins; b++) {
      var acc = 0;
      counts.forEach(function (c, gi) {
        if (!c[b]) return;
        var y0 = hy(acc), y1 = hy(acc + c[b]);
        var rect = sv('rect', { x: hx(vmin + b * bw) + 0.5, y: y1, width: Math.max(1, hx(vmin + (b + 1) * bw) - hx(vmin + b * bw) - 1), height: y0 - y1,
                                fill: ph ? ph.color(groups[gi]) : COLORS.method });
        (function (b, gi, cnt) {
          withTip(rect, function () { return [fmtMs(vmin + b * bw) + ' – ' + fmtMs(vmin + (b + 1) * bw), cnt + ' run(s)' + (ph ? ' (' + groups[gi] + ')' : '')]; });
        })(b, gi, c[b]);
        svg2.appendChild(rect);
        acc += c[b];
      });
    }
    xAxisTime(svg2, hx, vmin, vmax, H2 - padB + 4, 'Method::execute latency', W - padL);
    yAxis(svg2, hy, 0, cmax, padL, 'runs', H2 - padT - padB, fmtInt);
    box.appendChild(svg2);
    var l = (DATA.summary.runs || {}).latency_ms;
    if (l) {
      var t = el('table', { 'class': 'data', style: 'width:auto' });
      t.appendChild(el('tr', null, ['p10', 'p50', 'p90', 'p99', 'mean', 'min', 'max'].map(function (k) { return el('th', { text: k }); })));
      t.appendChild(el('tr', null, ['p10', 'p50', 'p90', 'p99', 'mean', 'min', 'max'].map(function (k) { return el('td', { 'class': 'num', text: fmtMs(l[k]) }); })));
      box.appendChild(t);
    }
  }

  // Generic renderers for dicts whose exact shape may grow.
  function scalar(v) { return v === null || v === undefined || typeof v !== 'object'; }
  function fmtField(k, v) {
    if (v === null || v === undefined) return 'n/a';
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (typeof v === 'number') {
      if (/_ms$/.test(k)) return fmtMs(v);
      if (/_us$/.test(k) || /(^|_)us$/.test(k)) return fmtUs(v);
      if (/bytes|dram|vtcm|_mem/.test(k) && !/percent|util/.test(k)) return fmtBytes(v);
      if (/cycles/.test(k)) return fmtInt(v) + ' cycles';
      if (/mhz/.test(k)) return fmtNum(v) + ' MHz';
      if (/ghz/.test(k)) return fmtNum(v) + ' GHz';
      if (/share|fraction/.test(k)) return fmtPct(v);
      if (/percent|utili[sz]ation/.test(k)) return fmtNum(v) + (v <= 1 && !/percent/.test(k) ? '' : '%');
      return fmtNum(v, 3);
    }
    if (Array.isArray(v)) return v.length <= 12 && v.every(scalar) ? v.map(function (x) { return fmtField(k, x); }).join(', ') : v.length + ' entries';
    if (typeof v === 'object') {
      var keys = Object.keys(v);
      if (keys.every(function (kk) { return scalar(v[kk]); }) && keys.length <= 10) return keys.map(function (kk) { return kk + ' ' + fmtField(k + '_' + kk, v[kk]); }).join(', ');
      return keys.length + ' fields';
    }
    return String(v);
  }
  function kvTable(obj, skip) {
    var t = el('table', { 'class': 'data', style: 'width:auto' });
    Object.keys(obj || {}).forEach(function (k) {
      if (skip && skip.indexOf(k) >= 0) return;
      var v = obj[k];
      if (v === null || v === undefined || (Array.isArray(v) && !v.length)) return;  // nothing to say
      if (Array.isArray(v) && v.length && typeof v[0] === 'object' && !Array.isArray(v[0])) return;  // tables separately
      if (v && typeof v === 'object' && !Array.isArray(v) && !Object.keys(v).every(function (kk) { return scalar(v[kk]); })) return;
      t.appendChild(el('tr', null, el('th', { text: k }), el('td', { text: fmtField(k, v) })));
    });
    return t;
  }
  function listTable(list, maxRows) {
    var keys = [];
    list.slice(0, 200).forEach(function (r) { Object.keys(r || {}).forEach(function (k) { if (keys.indexOf(k) < 0 && scalar(r[k])) keys.push(k); }); });
    var t = el('table', { 'class': 'data' });
    t.appendChild(el('tr', null, keys.map(function (k) { return el('th', { text: k }); })));
    list.slice(0, maxRows || 500).forEach(function (r) {
      t.appendChild(el('tr', null, keys.map(function (k) { return el('td', { 'class': typeof r[k] === 'number' ? 'num' : '', text: fmtField(k, r[k]) }); })));
    });
    var wrap = el('div', { 'class': 'table-wrap' }, t);
    if (list.length > (maxRows || 500)) wrap.appendChild(el('p', { 'class': 'muted', text: (list.length - (maxRows || 500)) + ' more rows not shown' }));
    return wrap;
  }
  function subTables(obj, skip) {
    var out = [];
    Object.keys(obj || {}).forEach(function (k) {
      if (skip && skip.indexOf(k) >= 0) return;
      var v = obj[k];
      if (Array.isArray(v) && v.length && typeof v[0] === 'object' && v[0] !== null && !Array.isArray(v[0])) {
        out.push(el('h3', { text: k.replace(/_/g, ' ') + ' (' + v.length + ')' }), listTable(v));
      } else if (v && Array.isArray(v.columns) && Array.isArray(v.rows)) {
        out.push(el('h3', { text: k.replace(/_/g, ' ') }), listTable(v.rows.map(function (r) {
          var o = {}; v.columns.forEach(function (c, i) { o[c] = r[i]; }); return o; })));
      } else if (v && typeof v === 'object' && !Array.isArray(v) && !Object.keys(v).every(function (kk) { return scalar(v[kk]); })) {
        out.push(el('h3', { text: k.replace(/_/g, ' ') }), kvTable(v), subTables(v));
      }
    });
    return out;
  }
  function flag(v) { return v === true ? '✓' : (v === false ? '–' : '?'); }

  function renderLlm() {
    var box = document.getElementById('llm-body');
    if (!box) return;
    var L = DATA.llm || {};
    var cards = el('div', { 'class': 'cards' });
    var nRuns = Array.isArray(L.runs) ? L.runs.length : L.runs;
    var warm = Array.isArray(L.warmup_runs) ? L.warmup_runs.length : L.warmup_runs;
    if (isNum(nRuns)) cards.appendChild(stat('runs', fmtInt(nRuns), isNum(warm) ? warm + ' warm-up run(s) left out of the statistics' : ''));
    if (isNum(L.ttft_ms)) cards.appendChild(stat('time to first token', fmtMs(L.ttft_ms), 'prefill latency, ' + WORDS.p50 + (isNum(L.ttft_first_ms) ? '; first prefill ' + fmtMs(L.ttft_first_ms) : '')));
    if (isNum(L.decode_tokens_per_s)) cards.appendChild(stat('decode throughput', fmtNum(L.decode_tokens_per_s) + ' tokens/s', '1000 ÷ ms per token (' + WORDS.p50 + ')'));
    else if (isNum(L.decode_runs_per_s)) cards.appendChild(stat('decode rate', fmtNum(L.decode_runs_per_s) + ' runs/s', '1000 ÷ ms per run (' + WORDS.p50 + '); tokens per run unknown' + (L.tokens_unknown && L.tokens_unknown.how ? ' (' + L.tokens_unknown.how + ')' : '')));
    box.appendChild(cards);
    var wall = L.memory_wall;     // analysis/qnn/limits.py: weights per token × tokens/s vs DRAM bandwidth
    if (wall) {
      box.appendChild(el('p', { 'class': 'headline', text: 'Memory wall: ' + wall.text + '.' }));
      box.appendChild(el('ul', { 'class': 'checks' }, [
        'bytes per token: ' + (isNum(wall.weight_bytes_per_token) ? fmtInt(wall.weight_bytes_per_token) + ' B — ' : '') + wall.weight_bytes_from,
        'decode tokens/s: ' + (isNum(wall.decode_tokens_per_s) ? fmtNum(wall.decode_tokens_per_s) + ' — ' : '') + wall.tokens_from,
        'DRAM bandwidth: ' + wall.bandwidth.text,
        'prefill HMX busy share: ' + (isNum(wall.prefill_hmx_busy_share) ? fmtPct(wall.prefill_hmx_busy_share) + ' — ' : '') + wall.prefill_hmx_from
      ].map(function (x) { return el('li', { text: x }); })));
    }
    var findings = (L.findings || []).concat(L.warmup && L.warmup.length && typeof L.warmup[0] === 'string' ? L.warmup : []);
    if (findings.length) box.appendChild(el('ul', null, findings.map(function (f) { return el('li', { text: typeof f === 'string' ? f : JSON.stringify(f) }); })));
    var phases = L.phases || [];
    if (phases.length) {
      box.appendChild(el('h3', { text: 'Phases (steady-state runs)' }));
      var t = el('table', { 'class': 'data' });
      t.appendChild(el('tr', null, ['phase', 'runs', 'tokens/run', 'latency ' + WORDS.p50, 'p90', 'ms per token',
        'split of Method::execute (' + WORDS.mean_per_run + ', ' + WORDS.share_of_mean + ')'].map(function (h) { return el('th', { text: h }); })));
      phases.forEach(function (p) {
        var runs = Array.isArray(p.runs) ? p.runs.length : p.runs;
        var lat = p.latency_ms || {};
        var bd = p.breakdown;
        var bdText = Array.isArray(bd) ? bd.map(function (b) {
          var name = b.kind === 'delegate' ? b.backend : (b.kind === 'cpu_ops' ? 'CPU kernels' : (b.kind === 'framework_overhead' ? 'overhead' : (b.name || b.kind)));
          return name + ' ' + fmtMs(b.mean_ms) + (isNum(b.share) ? ' (' + fmtPct(b.share) + ')' : '');
        }).join('; ') : fmtField('breakdown', bd);
        var row = el('tr', null, el('td', null, el('span', { 'class': 'pill', style: 'background:' + phaseColor(p.name), text: p.name })),
          el('td', { 'class': 'num', text: fmtField('runs', runs) + (isNum(p.steady_runs) && p.steady_runs !== runs ? ' (' + p.steady_runs + ' steady)' : '') }),
          el('td', { 'class': 'num', text: p.tokens_per_run === null || p.tokens_per_run === undefined ? '?' : fmtNum(p.tokens_per_run) }),
          el('td', { 'class': 'num', text: fmtMs(lat.p50) }), el('td', { 'class': 'num', text: fmtMs(lat.p90) }),
          el('td', { 'class': 'num', text: isNum(p.ms_per_token) ? fmtMs(p.ms_per_token) : '' }), el('td', { text: bdText }));
        t.appendChild(row);
      });
      box.appendChild(t);
      phases.forEach(function (p) {
        if (Array.isArray(p.top_ops) && p.top_ops.length) {
          box.appendChild(el('details', null, el('summary', { text: 'Slowest instructions in ' + p.name + ' (' + WORDS.mean_per_run + ')' }), listTable(p.top_ops, 50)));
        }
      });
    }
    var rest = {};
    Object.keys(L).forEach(function (k) {
      if (['runs', 'warmup_runs', 'warmup', 'ttft_ms', 'ttft_first_ms', 'decode_tokens_per_s', 'decode_runs_per_s', 'tokens_unknown', 'phases', 'series', 'findings', 'memory_wall'].indexOf(k) < 0) rest[k] = L[k];
    });
    if (Object.keys(rest).length) { box.appendChild(kvTable(rest)); box.appendChild(el('div', null, subTables(rest))); }
    var chart = el('div', { id: 'llm-runs', 'class': 'chart' });
    box.appendChild(chart);
    renderRuns('llm-runs', true);
  }
  function phaseColor(name) { var ph = phaseInfo(); return ph ? ph.color(name) : COLORS.method; }

  // ---- run every section; one failing must not hide the others ------------------------------------
  // "Compared with base" (etscope report --compare): the diff view of diff.js, base vs this run.
  function renderCompare() {
    var box = document.getElementById('compare-body');
    if (!box || !DATA.compare) return;
    renderDiff(box, DATA.compare, false);
  }

  // QNN files without an ETDump: the sections drawn from ETDump events have nothing to show.
  function hideEtdumpSections() {
    if (!(DATA.summary && DATA.summary.qnn_only)) return;
    ['time', 'placement', 'ops', 'runs', 'modules', 'graph', 'numerics'].forEach(function (id) {
      var sec = document.getElementById(id);
      if (sec) sec.hidden = true;
      Array.prototype.forEach.call(document.querySelectorAll('#nav a[href="#' + id + '"]'), function (a) { a.hidden = true; });
    });
  }

  // Every section in page order; `boxes`: it draws from the selected phase of an LLM's runs into
  // these (phases.js draws it again when the phase changes); without: from the whole file, once.
  drawPage([{ draw: hideEtdumpSections }, { draw: renderGuideCards, boxes: ['guide-cards'] }, { draw: renderCompare, boxes: ['compare-body'] },
            { draw: renderIcicle, boxes: ['time-chart'] }, { draw: renderPlacement, boxes: ['placement-bar', 'placement-ops'] },
            { draw: renderOpsTable, boxes: ['ops-table'] }, { draw: function () { renderRuns('runs-chart', true); }, boxes: ['runs-chart'] },
            { draw: renderQnn, boxes: ['qnn-body'] }, { draw: renderLlm }, { draw: renderNumerics },
            { draw: renderModules, boxes: ['modules-body'] }, { draw: renderGraph, boxes: ['graph-body'] }]);
  document.body.setAttribute('data-rendered', 'true');
