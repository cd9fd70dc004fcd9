/* etscope diff view, per op: the sortable op-change table, the QNN partitions, the gate and warnings. Inlined after diff.js in the same function scope
 * (render.html.DIFF_SCRIPTS); data from input files only through textContent or setAttribute. */

  // ---- per-op changes: sortable, filterable table ------------------------------------------------------
  function opPlacement(o) {
    var a = o.placement_base, b = o.placement_new;
    if (a === b) return a || '';
    return (a || '—') + ' → ' + (b || '—');
  }
  function diffOps(box, D, V) {
    var ops = (D.ops || []).map(function (o, i) { return { o: o, i: i }; });
    var cols = [
      { key: 'status', label: 'status' },
      { key: 'name', label: 'op' },
      { key: 'op_type', label: 'op type' },
      { key: 'placement', label: 'placement base → new' },
      { key: 'base_p50', label: 'base p50', num: true },
      { key: 'new_p50', label: 'new p50', num: true },
      { key: 'change_pct', label: 'change', num: true },
      { key: 'p_value', label: 'p value', num: true }
    ];
    var state = { sort: null, dir: 1, q: '', status: '' };
    var counts = {};
    ops.forEach(function (x) { counts[x.o.status] = (counts[x.o.status] || 0) + 1; });
    box.appendChild(el('p', { 'class': 'hint', text: 'Every op matched between the runs (CPU op: op type + source line + k-th such op; delegate call: backend + ' +
      'k-th call; ops inside a delegate: their name), p50 per run over the steady runs (warm-up runs left out). slower / faster: Mann-Whitney rank test p < 0.01 and at least the minimum effect; ' +
      'uncertain: moved by at least the minimum effect but not significant (too few runs or too much spread); same: not significant and within the minimum effect. Values in their true unit. Click a column header to sort.' }));
    var search = el('input', { type: 'search', placeholder: 'filter: op, op type, placement, source…', 'aria-label': 'filter op changes' });
    var sel = el('select', { 'aria-label': 'status', id: 'diff-ops-status' + (V.idSuffix || '') },
      el('option', { value: '', text: 'all statuses (' + ops.length + ')' }),
      el('option', { value: 'changed', text: 'changed (' + (ops.length - (counts.same || 0) - (counts.uncertain || 0) - (counts.not_compared || 0)) + ')' }),
      ['new', 'removed', 'slower', 'faster', 'uncertain', 'same', 'not_compared'].filter(function (s) { return counts[s]; }).map(function (s) {
        return el('option', { value: s, text: s + ' (' + counts[s] + ')' });
      }));
    var count = el('span', { 'class': 'count' });
    box.appendChild(el('div', { 'class': 'toolbar' }, search, sel, count));
    var parts = sortableTable(box, 'diff-ops-data' + (V.idSuffix || ''), cols, state, function () { draw(); });
    var thead = parts.thead, tbody = parts.tbody;
    var total = isNum(V.ops_total) ? V.ops_total : ops.length;
    if (total > ops.length) box.appendChild(el('p', { 'class': 'muted', text: 'Only the first ' + ops.length + ' of ' + total + ' op rows are in this page (changed ones first); `etscope diff --json` has all of them.' }));
    var LIMIT = 2000;
    function sortKey(x, key) {
      var o = x.o;
      if (key === 'status') return STATUS_RANK[o.status] === undefined ? 9 : STATUS_RANK[o.status];
      if (key === 'placement') return opPlacement(o);
      return o[key];
    }
    function draw() {
      var q = state.q.toLowerCase();
      var list = ops.filter(function (x) {
        var o = x.o;
        if (state.status === 'changed' && (o.status === 'same' || o.status === 'uncertain' || o.status === 'not_compared')) return false;
        if (state.status && state.status !== 'changed' && o.status !== state.status) return false;
        if (!q) return true;
        return [o.name, o.op_type, o.placement_base, o.placement_new, o.source, o.status].some(function (v) {
          return v !== null && v !== undefined && String(v).toLowerCase().indexOf(q) >= 0;
        });
      });
      sortRows(list, thead, state, sortKey, function (v) { return v === null || v === undefined || v === ''; });
      tbody.textContent = '';
      var frag = document.createDocumentFragment();
      list.slice(0, LIMIT).forEach(function (x) {
        var o = x.o;
        var moved = o.placement_base && o.placement_new && o.placement_base !== o.placement_new;
        var row = el('tr', { 'class': 'st-' + o.status + (moved ? ' placement-moved' : '') });
        row.appendChild(el('td', { 'class': 'status' }, el('span', { 'class': 'pill', style: 'background:' + (STATUS_COLORS[o.status] || '#888'), text: String(o.status) })));
        row.appendChild(el('td', { 'class': 'name', text: o.name === null || o.name === undefined ? '' : String(o.name),
                                   title: (o.source ? 'source: ' + o.source + '\n' : '') + 'identity: ' + (o.identity || []).join(' / ') }));
        row.appendChild(el('td', { 'class': 'op_type', text: o.op_type || '' }));
        var pl = el('td', { 'class': 'placement', text: opPlacement(o) });
        if (moved && o.placement_new === 'cpu') pl.style.color = COLORS.cpu;
        row.appendChild(pl);
        row.appendChild(el('td', { 'class': 'num base_p50', text: o.base_p50 === null || o.base_p50 === undefined ? '—' : fmtValue(o.base_p50, o.unit) }));
        row.appendChild(el('td', { 'class': 'num new_p50', text: o.new_p50 === null || o.new_p50 === undefined ? '—' : fmtValue(o.new_p50, o.unit) }));
        var ch = el('td', { 'class': 'num change_pct', text: isNum(o.change_pct) ? fmtSigned(o.change_pct) : '' });
        if (o.status === 'slower') ch.style.color = DIFF_COLORS.worse; else if (o.status === 'faster') ch.style.color = DIFF_COLORS.better;
        row.appendChild(ch);
        row.appendChild(el('td', { 'class': 'num p_value', text: fmtP(o.p_value) }));
        frag.appendChild(row);
      });
      tbody.appendChild(frag);
      count.textContent = list.length + ' of ' + ops.length + ' ops' + (list.length > LIMIT ? ' (first ' + LIMIT + ' shown; filter to see others)' : '');
    }
    search.addEventListener('input', function () { state.q = search.value; draw(); });
    sel.addEventListener('change', function () { state.status = sel.value; draw(); });
    draw();
  }

  // ---- QNN partitions --------------------------------------------------------------------------------
  var QNN_FIELDS = [['delegate_call_ms', 'DELEGATE_CALL (ExecuTorch wall time)', fmtMs], ['qnn_execute_us', 'QNN execute (µs, QNN)', fmtUs],
                    ['accel_us', 'accelerator time (µs, QNN)', fmtUs], ['accel_cycles', 'accelerator cycles', function (v) { return fmtInt(v) + ' cycles'; }],
                    ['clock_mhz_est', 'derived HTP clock (estimate)', function (v) { return fmtNum(v) + ' MHz'; }]];
  function diffQnn(box, D) {
    var parts = D.qnn || [];
    box.appendChild(el('p', { 'class': 'hint', text: 'QNN partitions matched by position (k-th QNN DELEGATE_CALL). Per-op values are accelerator cycles (p50 over runs); ' +
      'the clock is derived from each run (cycles ÷ µs) and is an estimate.' }));
    parts.forEach(function (q) {
      box.appendChild(el('h4', { text: 'QNN partition ' + q.partition }));
      var t = el('table', { 'class': 'data', style: 'width:auto' });
      t.appendChild(el('tr', null, ['measure', 'base', 'new', 'change'].map(function (h) { return el('th', { text: h }); })));
      QNN_FIELDS.forEach(function (f) {
        var v = q[f[0]];
        if (!v || (!isNum(v.base) && !isNum(v['new']))) return;
        t.appendChild(el('tr', null, el('td', { text: f[1] }), el('td', { 'class': 'num', text: isNum(v.base) ? f[2](v.base) : '—' }),
          el('td', { 'class': 'num', text: isNum(v['new']) ? f[2](v['new']) : '—' }), el('td', { 'class': 'num', text: isNum(v.change_pct) ? fmtSigned(v.change_pct) : '' })));
      });
      box.appendChild(t);
      var ops = (q.ops || []).filter(function (o) { return isNum(o.change_cycles) && o.change_cycles !== 0; });
      if (!ops.length) { box.appendChild(el('p', { 'class': 'muted', text: 'No per-op cycle changes in this partition.' })); return; }
      var top = ops.slice(0, 20);
      box.appendChild(el('div', { 'class': 'chart-title', text: 'Largest per-op cycle changes (top ' + top.length + ' of ' + ops.length + ' that changed)' }));
      box.appendChild(legend([['more cycles in new', DIFF_COLORS.worse], ['fewer cycles in new', DIFF_COLORS.better]]));
      var chart = chartDiv(box);
      var W = chartWidth(chart), labelW = 330, rowH = 19, H = top.length * rowH + 50, valueW = 170;
      var m = Math.max.apply(null, top.map(function (o) { return Math.abs(o.change_cycles); })) || 1;
      var mid = labelW + (W - labelW - valueW) / 2, half = (W - labelW - valueW) / 2;
      var sc = function (v) { return mid + half * v / m; };
      var svg = sv('svg', { width: W, height: H, role: 'img', 'class': 'qnn-diff', 'aria-label': 'QNN per-op cycle changes' });
      top.forEach(function (o, i) {
        var y = 4 + i * rowH, g = sv('g'), v = o.change_cycles, col = v > 0 ? DIFF_COLORS.worse : DIFF_COLORS.better;
        g.appendChild(sv('text', { x: labelW - 6, y: y + 13, 'text-anchor': 'end', text: trunc(o.op, 50) + (o.status !== 'both' ? ' (' + o.status + ')' : '') }));
        g.appendChild(sv('rect', { 'class': 'box', x: Math.min(sc(0), sc(v)), y: y + 2, width: Math.max(1, Math.abs(sc(v) - sc(0))), height: rowH - 5, fill: col }));
        g.appendChild(sv('text', { x: v > 0 ? sc(v) + 4 : sc(0) + 4, y: y + 13, text: (v > 0 ? '+' : '−') + fmtCompact(Math.abs(v)) }));
        withTip(g, function () { return [o.op, 'base: ' + (isNum(o.base_cycles_p50) ? fmtInt(o.base_cycles_p50) + ' cycles' : 'absent'),
          'new: ' + (isNum(o.new_cycles_p50) ? fmtInt(o.new_cycles_p50) + ' cycles' : 'absent'), 'change: ' + (v > 0 ? '+' : '') + fmtInt(v) + ' cycles (p50)']; });
        svg.appendChild(g);
      });
      svg.appendChild(sv('line', { x1: mid, x2: mid, y1: 2, y2: top.length * rowH + 4, stroke: '#1f2328' }));
      xAxis(svg, sc, -m, m, top.length * rowH + 8, 'change in accelerator cycles per op (p50), new − base', W - labelW - valueW, function (t) { return (t > 0 ? '+' : '') + fmtCompact(t); });
      chart.appendChild(svg);
      var ot = el('table', { 'class': 'data' });
      ot.appendChild(el('tr', null, ['QNN op', 'in', 'base cycles p50', 'new cycles p50', 'change (cycles)'].map(function (h) { return el('th', { text: h }); })));
      (q.ops || []).forEach(function (o) {
        ot.appendChild(el('tr', null, el('td', { text: o.op }), el('td', { text: o.status === 'both' ? 'both' : o.status }),
          el('td', { 'class': 'num', text: isNum(o.base_cycles_p50) ? fmtInt(o.base_cycles_p50) : '—' }),
          el('td', { 'class': 'num', text: isNum(o.new_cycles_p50) ? fmtInt(o.new_cycles_p50) : '—' }),
          el('td', { 'class': 'num', text: isNum(o.change_cycles) ? (o.change_cycles > 0 ? '+' : '') + fmtInt(o.change_cycles) : '' })));
      });
      box.appendChild(el('details', null, el('summary', { text: 'All ' + (q.ops || []).length + ' QNN ops of this partition' }), el('div', { 'class': 'table-wrap' }, ot)));
    });
  }

  // ---- gate and warnings -------------------------------------------------------------------------------
  function diffGate(box, D, V) {
    var G = D.gate || {}, why = G.why || [], o = V.options || {};
    if (!why.length && !G.fail) {
      box.appendChild(el('p', { 'class': 'muted gate-none', text: 'No CI gate was requested (etscope diff --fail-on-regression 5% and/or --fail-on-fallback exit 1 when they fail).' }));
    } else {
      box.appendChild(el('div', { 'class': G.fail ? 'gate gate-fail' : 'gate gate-pass' },
        el('b', { text: G.fail ? 'Gate FAILED (exit code 1)' : 'Gate passed' }), el('ul', null, why.map(function (w) { return el('li', { text: w }); }))));
    }
    var opt = [];
    if (isNum(o.min_effect_pct)) opt.push('minimum effect ' + fmtNum(o.min_effect_pct) + '%');
    if (isNum(o.fail_on_regression_pct)) opt.push('fail on regression above ' + fmtNum(o.fail_on_regression_pct) + '%');
    if (o.fail_on_fallback) opt.push('fail on fallback');
    if (opt.length) box.appendChild(el('p', { 'class': 'hint', text: 'Options: ' + opt.join('; ') + '.' }));
    var ws = D.warnings || [];
    box.appendChild(el('h4', { text: 'Warnings' + (ws.length ? ' (' + ws.length + ')' : '') }));
    box.appendChild(el('ul', { 'class': 'diff-warnings' }, ws.length ? ws.map(function (w) { return el('li', { text: w }); })
                                                                      : el('li', { 'class': 'ok', text: 'None for either run.' })));
  }

