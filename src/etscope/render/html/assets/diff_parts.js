/* etscope diff view, where the change is: placement changes, the breakdown per part, the axes of change and
 * the attribution waterfall. Inlined after diff.js in the same function scope
 * (render.html.DIFF_SCRIPTS); data from input files only through textContent or setAttribute. */

  // ---- placement changes ----------------------------------------------------------------------------
  var PLACEMENT_KIND = { moved_to_cpu: 'moved to the CPU (fallback)', moved_to_delegate: 'moved to a delegate',
                         new_cpu_op: 'new CPU op', removed_cpu_op: 'CPU op removed', partitions_changed: 'partitions changed' };
  function diffPlacement(box, D, V) {
    var list = D.placement_changes || [];       // moved to the CPU first (analysis.diff.placement orders them)
    if (!list.length) {
      box.appendChild(el('p', { 'class': 'ok-text', text: 'No placement changes: the same ops ran on the CPU and every backend has the same number of partitions.' }));
      return;
    }
    var moved = list.filter(function (c) { return c.kind === 'moved_to_cpu'; });
    if (moved.length) {
      box.appendChild(el('p', { 'class': 'warn moved-callout', text: (V.figures || {}).moved_to_cpu + ' op(s) moved from a delegate to the CPU (fallback): ' +
        moved.map(function (c) { return c.op_type + (c.from ? ' (was on ' + c.from + ')' : ''); }).join(', ') + '. They now run as portable CPU kernels.' }));
    }
    box.appendChild(el('p', { 'class': 'hint', text: 'Ops are matched by op type and source line (from the ETRecords) or, without them, by per-op delegate events of the same op kind that disappeared (or appeared); partitions by backend. Ops that moved off a delegate to the CPU come first.' }));
    var t = el('table', { 'class': 'data', id: 'diff-placement-data' + (V && V.idSuffix || '') });
    t.appendChild(el('thead', null, el('tr', null, ['change', 'op type / backend', 'source', 'count', 'base → new', 'how it was told'].map(function (h) { return el('th', { text: h }); }))));
    var tb = el('tbody');
    list.forEach(function (c) {
      var row;
      if (c.kind === 'partitions_changed') {
        row = el('tr', { 'class': 'pc-' + c.kind },
          el('td', { text: PLACEMENT_KIND[c.kind] + (c.detail ? ' (' + c.detail + ')' : '') }), el('td', { text: c.backend || '' }), el('td', { text: '' }),
          el('td', { text: '' }), el('td', { text: fmtInt(c.base_partitions) + ' → ' + fmtInt(c.new_partitions) + ' partition(s)' }), el('td', { text: 'delegate calls' }));
      } else {
        row = el('tr', { 'class': 'pc-' + c.kind },
          el('td', null, c.kind === 'moved_to_cpu' ? el('span', { 'class': 'pill', style: 'background:' + COLORS.cpu, text: '⚠ ' + PLACEMENT_KIND[c.kind] })
                                                   : (PLACEMENT_KIND[c.kind] || String(c.kind))),
          el('td', { text: c.op_type || '' }), el('td', { text: c.source || '' }), el('td', { 'class': 'num', text: isNum(c.count) ? '×' + c.count : '' }),
          el('td', { text: (c.from ? placementLabel(c.from) : '—') + ' → ' + (c.to ? placementLabel(c.to) : '—') }),
          el('td', { text: c.evidence ? c.matched_by + ': ' + c.evidence.join(', ') : (c.undecided ? 'undecided: ' + c.undecided : (c.matched_by || '')) }));
      }
      tb.appendChild(row);
    });
    t.appendChild(tb);
    box.appendChild(el('div', { 'class': 'table-wrap' }, t));
  }

  // ---- breakdown per part: base vs new bars ---------------------------------------------------------
  function diffBreakdown(box, D, V) {
    var parts = (D.breakdown || []).slice();
    if (!parts.length) { box.appendChild(el('p', { 'class': 'muted', text: 'No breakdown (no timed runs).' })); return; }
    // One statistic for the whole diff view: p50 per run over the steady runs (the verdict's runs).
    var L = D.latency || {}, F = V.figures || {}, pct = F.breakdown_change_pct || [];
    var groups = [{ kind: 'method', label: 'Method::execute (p50)', base_p50_ms: L.base_p50_ms, new_p50_ms: L.new_p50_ms,
                    change_ms: F.p50_change_ms, change_pct: L.change_pct }]
      .concat(parts.map(function (b, k) { return Object.assign({ label: partLabel(b), change_pct: pct[k] }, b); }));
    var max = Math.max.apply(null, groups.map(function (g) { return Math.max(isNum(g.base_p50_ms) ? g.base_p50_ms : 0, isNum(g.new_p50_ms) ? g.new_p50_ms : 0); })) || 1;
    box.appendChild(el('p', { 'class': 'hint', text: 'Method::execute split into delegate calls per backend, CPU kernels (fallback) and framework overhead: p50 per run over the steady runs (warm-up runs left out, as for the verdict), so the parts need not add up to the p50 latency; pale bar = base, solid bar = new.' }));
    var chart = chartDiv(box);
    var W = chartWidth(chart), labelW = 240, barH = 14, gap = 14, valueW = 270;
    var H = groups.length * (2 * barH + gap) + 50;
    var sc = function (v) { return labelW + (W - labelW - valueW) * Math.max(0, v) / max; };
    var svg = sv('svg', { width: W, height: H, role: 'img', 'class': 'diff-breakdown', 'aria-label': 'time per part, base vs new' });
    groups.forEach(function (gr, i) {
      var y = 4 + i * (2 * barH + gap), color = partColor(gr);
      var g = sv('g');
      g.appendChild(sv('text', { x: labelW - 8, y: y + barH + 4, 'text-anchor': 'end', 'font-weight': gr.kind === 'method' ? 600 : 400, text: trunc(gr.label, 40) }));
      [['base', gr.base_p50_ms, 0.4], ['new', gr.new_p50_ms, 1]].forEach(function (s, k) {
        var yy = y + k * barH, v = s[1];
        if (isNum(v)) g.appendChild(sv('rect', { 'class': 'box bar-' + s[0], x: labelW, y: yy + 1, width: Math.max(1, sc(v) - labelW), height: barH - 2, fill: color, opacity: s[2] }));
        var txt = s[0] + ' ' + (isNum(v) ? fmtMs(v) : 'absent');
        if (k === 1 && isNum(gr.change_ms)) txt += '  (' + fmtSignedMs(gr.change_ms) + (isNum(gr.change_pct) ? ', ' + fmtSigned(gr.change_pct) : '') + ')';
        g.appendChild(sv('text', { x: (isNum(v) ? sc(v) : labelW) + 4, y: yy + barH - 3, style: k === 1 && isNum(gr.change_ms) && gr.change_ms > 0 && gr.kind !== 'framework_overhead' ? 'fill:' + DIFF_COLORS.worse : '', text: txt }));
      });
      withTip(g, function () {
        return [gr.label, 'base: ' + fmtMs(gr.base_p50_ms) + ' per run (p50)' + (isNum(gr.base_calls_per_run) ? ', ' + fmtNum(gr.base_calls_per_run) + ' call(s)/run' : ''),
                'new: ' + fmtMs(gr.new_p50_ms) + ' per run (p50)' + (isNum(gr.new_calls_per_run) ? ', ' + fmtNum(gr.new_calls_per_run) + ' call(s)/run' : ''),
                'change: ' + fmtSignedMs(gr.change_ms)];
      });
      svg.appendChild(g);
    });
    xAxisTime(svg, sc, 0, max, groups.length * (2 * barH + gap) + 4, 'time per run (p50)', W - labelW - valueW);
    chart.appendChild(svg);
    var t = el('table', { 'class': 'data', style: 'width:auto' });
    t.appendChild(el('tr', null, ['part', 'base (p50/run)', 'new (p50/run)', 'change', 'calls/run base → new'].map(function (h) { return el('th', { text: h }); })));
    groups.forEach(function (gr) {
      t.appendChild(el('tr', null, el('td', { text: gr.label }), el('td', { 'class': 'num', text: isNum(gr.base_p50_ms) ? fmtMs(gr.base_p50_ms) : '—' }),
        el('td', { 'class': 'num', text: isNum(gr.new_p50_ms) ? fmtMs(gr.new_p50_ms) : '—' }), el('td', { 'class': 'num', text: fmtSignedMs(gr.change_ms) }),
        el('td', { 'class': 'num', text: isNum(gr.base_calls_per_run) || isNum(gr.new_calls_per_run) ? fmtNum(gr.base_calls_per_run, 2) + ' → ' + fmtNum(gr.new_calls_per_run, 2) : '' })));
    });
    box.appendChild(t);
  }

  // ---- axes of change: each with its own verdict (analysis.diff.axes) --------------------------------
  function factValue(v) {
    if (v === null || v === undefined) return '—';
    if (Array.isArray(v)) return '[' + v.join(', ') + ']';
    if (typeof v === 'object') { var k = Object.keys(v); return k.length ? k.map(function (x) { return x + ': ' + v[x]; }).join(', ') : 'none'; }
    return String(v);
  }
  function diffAxes(box, D) {
    var A = D.axes || {};
    box.appendChild(el('p', { 'class': 'hint', text: 'Each axis has its own verdict. latency: the noise-aware verdict above; placement: ops that moved between a delegate and the CPU, partitions split or merged; program: what differs in the programs (.pte: methods, instructions, delegates, blobs, QNN compile spec; else the ETDumps\' instructions); environment: the HTP clock estimate per side, warm-up runs, run and session counts. unknown: the inputs cannot tell.' }));
    var t = el('table', { 'class': 'data diff-axes', style: 'width:auto' });
    t.appendChild(el('thead', null, el('tr', null, ['axis', 'verdict', 'what', 'base', 'new'].map(function (h) { return el('th', { text: h }); }))));
    var tb = el('tbody');
    AXIS_ORDER.forEach(function (name) {
      var a = A[name];
      if (!a) return;
      var facts = a.facts || [];
      tb.appendChild(el('tr', { 'class': 'axis-row', 'data-axis': name, 'data-verdict': a.verdict },
        el('td', { text: name, style: 'font-weight:600' }),
        el('td', { style: 'white-space:nowrap' }, el('span', { 'class': 'verdict-pill', style: 'background:' + (AXIS_COLORS[a.verdict] || '#8c959f'), text: verdictText(a.verdict) })),
        el('td', { text: a.summary || '', colspan: 3 })));
      facts.forEach(function (f) {
        tb.appendChild(el('tr', { 'class': 'axis-fact', 'data-axis': name }, el('td'), el('td'),
          el('td', { text: (f.what || '') + (f.detail ? ': ' + f.detail : '') }),
          el('td', { 'class': 'num', text: factValue(f.base) }), el('td', { 'class': 'num', text: factValue(f['new']) })));
      });
    });
    t.appendChild(tb);
    box.appendChild(el('div', { 'class': 'table-wrap' }, t));
  }

  // ---- attribution: a waterfall from the base p50 through the named parts to the new p50 ------------
  // Long part names keep their start (what moved) and their end (the source line).
  function midTrunc(s, n) { s = String(s); if (s.length <= n) return s; var h = Math.floor((n - 1) / 2); return s.slice(0, h) + '…' + s.slice(s.length - (n - 1 - h)); }
  function diffAttribution(box, D, V) {
    var at = D.attribution, F = V.figures || {};
    box.appendChild(el('p', { 'class': 'hint', text: 'The change of the Method::execute p50 split into named parts, largest first: each part is the change of its own p50 per steady run (ops that moved between a delegate and the CPU, each DELEGATE_CALL, the other CPU ops together, framework overhead). p50s do not add, so what the parts leave is shown as unexplained. Red: slower, green: faster.' +
      (at.significant === false ? ' The whole change is not significant: the parts show where time moved between runs, not a cause, and no shares are given.' : '') }));
    var rows = [{ label: 'base p50', from: 0, to: at.base_ms, total: true }];
    var cum = at.base_ms;
    var parts = at.parts.slice(0, at.parts.length - (F.smaller_parts || 0));
    parts.forEach(function (p) { rows.push({ label: p.name, from: cum, to: cum + p.change_ms, share: p.share_pct, p: p }); cum += p.change_ms; });
    if (F.smaller_parts) { rows.push({ label: F.smaller_parts + ' smaller parts', from: cum, to: cum + F.smaller_parts_ms }); cum += F.smaller_parts_ms; }
    rows.push({ label: 'unexplained (p50s do not add)', from: cum, to: cum + at.unexplained_ms, share: at.unexplained_pct, rest: true });
    rows.push({ label: 'new p50', from: 0, to: at.new_ms, total: true });
    var hi = Math.max.apply(null, rows.map(function (r) { return Math.max(r.from, r.to); })) || 1;
    var chart = chartDiv(box);
    var W = chartWidth(chart), labelW = Math.min(380, Math.max(200, W * 0.38)), valueW = 150, barH = 18, gap = 6;
    var H = rows.length * (barH + gap) + 46;
    var sc = function (v) { return labelW + (W - labelW - valueW) * Math.max(0, v) / hi; };
    var svg = sv('svg', { width: W, height: H, role: 'img', 'class': 'diff-waterfall', 'aria-label': 'waterfall: base p50, the parts of the change, new p50' });
    rows.forEach(function (r, i) {
      var y = 4 + i * (barH + gap), a = Math.min(r.from, r.to), b = Math.max(r.from, r.to);
      var color = r.total ? (i === 0 ? DIFF_COLORS.base : DIFF_COLORS['new']) : (r.rest ? '#afb8c1' : (r.to >= r.from ? DIFF_COLORS.worse : DIFF_COLORS.better));
      var g = sv('g', { 'class': 'wf-row' + (r.total ? ' wf-total' : '') });
      g.appendChild(sv('text', { x: labelW - 8, y: y + barH - 5, 'text-anchor': 'end', 'font-weight': r.total ? 600 : 400, text: midTrunc(r.label, Math.floor(labelW / 6.5)) }));
      g.appendChild(sv('rect', { 'class': 'box', x: sc(a), y: y, width: Math.max(1, sc(b) - sc(a)), height: barH, fill: color }));
      if (i < rows.length - 1) g.appendChild(sv('line', { x1: sc(r.to), x2: sc(r.to), y1: y + barH, y2: y + barH + gap, stroke: '#8c959f', 'stroke-dasharray': '2,2' }));
      var val = r.total ? fmtMs(r.to) : fmtSignedMs(r.to - r.from) + (isNum(r.share) ? ' (' + Math.round(r.share) + '%)' : '');
      g.appendChild(sv('text', { x: sc(b) + 4, y: y + barH - 5, text: val }));
      withTip(g, function () {
        return [r.label, r.total ? fmtMs(r.to) + ' per run (p50)' : 'change ' + fmtSignedMs(r.to - r.from) + (isNum(r.share) ? ', ' + fmtNum(r.share, 1) + '% of the change' : ''),
                r.p && isNum(r.p.base_ms) ? 'base ' + fmtMs(r.p.base_ms) + ' → new ' + fmtMs(r.p.new_ms) : ''];
      });
      svg.appendChild(g);
    });
    xAxisTime(svg, sc, 0, hi, rows.length * (barH + gap) + 4, 'time per run (p50)', W - labelW - valueW);
    chart.appendChild(svg);
    var cards = el('div', { 'class': 'cards' });
    cards.appendChild(stat('change of p50', fmtSignedMs(at.change_ms), fmtMs(at.base_ms) + ' → ' + fmtMs(at.new_ms)));
    if (isNum(at.moved_ops_pct)) cards.appendChild(stat('explained by moved ops', Math.round(at.moved_ops_pct) + '%', fmtSignedMs(at.moved_ops_ms)));
    cards.appendChild(stat('unexplained', fmtSignedMs(at.unexplained_ms), isNum(at.unexplained_pct) ? at.unexplained_pct.toFixed(1) + '% of the change' : ''));
    box.appendChild(cards);
    var nest = at.parts.filter(function (p) { return (p.of_which || []).length; });
    nest.forEach(function (p) {
      box.appendChild(el('p', { 'class': 'hint', text: p.name + ': ' + p.of_which.map(function (q) { return q.name + ' ' + fmtSignedMs(q.change_ms); }).join('; ') }));
    });
  }

