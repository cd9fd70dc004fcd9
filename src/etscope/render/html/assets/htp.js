/* etscope report: "Inside the HTP" (inlined after common.js, before qnn.js, in the same function
 * scope; qnn.js calls htpPart). Draws what analysis/qnn/htp_ops.py and limits.py computed
 * (DATA.qnn.htp_ops): the whole graph's HTP cycles by category as one bar, then one stacked bar per
 * QNN op by category on a shared cycles axis, with what bounds it; a table behind a toggle. Every
 * number is the analysis'; this file only formats and draws. */

  var HTP_COLORS = { hmx: '#1b5e20', hvx: '#66bb6a', layout: '#f9a825', dma: '#1565c0', sync: '#9e9e9e',
                     unknown: '#8e24aa', idle: '#e6e6e6' };

  function htpCat(o, c) {
    var x = (o.by_category || []).filter(function (y) { return y.category === c; })[0];
    return x ? x.cycles : 0;
  }

  function htpPart(box, h, i) {
    var b = h.breakdown, lim = h.limits, labels = b.category_labels || {};
    var sec = el('div', { id: i ? 'qnn-htp-' + i : 'qnn-htp' });
    box.appendChild(sec);
    sec.appendChild(el('h3', { text: 'Inside the HTP' + (b.partition ? ' — ' + b.partition : '') + ': what each QNN op ran' }));
    sec.appendChild(el('p', { 'class': 'headline', text: b.headline }));
    sec.appendChild(el('p', { 'class': 'hint', text: 'HTP cycles of one inference (the first of a separate optrace-level run), from ' +
      (b.source === 'qhas' ? 'QHAS htp_op_instances' : 'the optrace\'s op events') + ' of ' + String(b.path).replace(/\\/g, '/').split('/').pop() + '. Each HTP op\'s category comes from its own flags ' +
      '(fmt_change: layout conversion; hmx / hvx: compute; dma, dma_wait, dma_set: data movement; sync), never from its name.' }));
    var cats = (b.by_category || []).map(function (c) { return c.category; });
    sec.appendChild(legend(cats.map(function (c) { return [labels[c] || c, HTP_COLORS[c] || HTP_COLORS.unknown]; })));
    var W = chartWidth(sec);
    graphBar(sec, b, W, labels);
    opsBars(sec, b, lim, W, labels);
    var clock = isNum(lim.clock_mhz) ? 'Rates at ' + fmtMhz(lim.clock_mhz) + ' (' + lim.clock_note + ').' : 'No clock: times and bytes/s are unknown.';
    sec.appendChild(el('p', { 'class': 'clock', text: clock + ' DRAM: ' + lim.bandwidth.text + '. ' + lim.macs_note + '; ' + lim.compute_ceiling_note + '.' }));
    sec.appendChild(opsTable(b, lim));
    (b.notes || []).forEach(function (n) { sec.appendChild(el('p', { 'class': 'muted', text: 'Note: ' + n })); });
  }

  // The whole graph: one 100% bar of the active cycles by category (idle: its own share of the timeline).
  function graphBar(sec, b, W, labels) {
    sec.appendChild(el('div', { 'class': 'chart-title', text: 'Whole graph: ' + fmtInt(b.active_cycles) + ' active HTP cycles by category' }));
    var H = 46, x0 = 0, w = W - 8, svg = sv('svg', { width: W, height: H, role: 'img', 'aria-label': 'HTP cycles of the whole graph by category' });
    var x = x0;
    (b.by_category || []).filter(function (c) { return c.category !== 'idle'; }).forEach(function (c) {
      var cw = w * (c.share || 0), g = sv('g');
      g.appendChild(sv('rect', { 'class': 'box', x: x, y: 2, width: Math.max(1, cw), height: 24, fill: HTP_COLORS[c.category] || HTP_COLORS.unknown }));
      var words = (labels[c.category] || c.category) + ' ' + fmtPct(c.share);
      if (cw > words.length * 7.4 + 8) g.appendChild(sv('text', { x: x + 5, y: 18, fill: c.category === 'layout' || c.category === 'idle' ? '#222' : '#fff', text: words }));
      else if (cw > 34) g.appendChild(sv('text', { x: x + 3, y: 18, fill: c.category === 'layout' ? '#222' : '#fff', text: fmtPct(c.share) }));
      withTip(g, function () { return [labels[c.category] || c.category, fmtInt(c.cycles) + ' cycles', fmtPct(c.share) + ' of the active cycles']; });
      svg.appendChild(g);
      x += cw;
    });
    var idle = (b.by_category || []).filter(function (c) { return c.category === 'idle'; })[0];
    svg.appendChild(sv('text', { x: 0, y: 42, 'class': 'axis-label', text: '100% = ' + fmtInt(b.active_cycles) + ' cycles summed over the HTP ops (units run in parallel)' +
      (idle ? '; idle on the dominant path: ' + fmtInt(idle.cycles) + ' of ' + fmtInt(b.timeline_cycles) + ' timeline cycles (' + fmtPct(idle.share) + ')' : '') }));
    sec.appendChild(svg);
  }

  // One stacked bar per QNN op, by category, on one cycles axis; the bound on the right.
  function opsBars(sec, b, lim, W, labels) {
    var ops = (b.ops || []).filter(function (o) { return o.cycles > 0 || (o.idle_cycles || 0) > 0; });
    var top = ops.slice(0, 30), limits = {};
    (lim.ops || []).forEach(function (x) { limits[x.qnn_op] = x; });
    sec.appendChild(el('div', { 'class': 'chart-title', text: 'Per QNN op: HTP cycles by category (top ' + top.length + ' of ' + ops.length + ', largest first), and what bounds it' }));
    if (!top.length) return;
    var labelW = 275, rightW = 230, rowH = 22, H = top.length * rowH + 44;
    var max = Math.max.apply(null, top.map(function (o) { return o.cycles + (o.idle_cycles || 0); })) || 1;
    var sc = function (v) { return labelW + (W - labelW - rightW) * v / max; };
    var svg = sv('svg', { width: W, height: H, role: 'img', 'aria-label': 'HTP cycles per QNN op by category' });
    top.forEach(function (o, k) {
      var y = 4 + k * rowH, g = sv('g'), x = labelW, l = limits[o.qnn_op] || {};
      g.appendChild(sv('text', { x: labelW - 6, y: y + 14, 'text-anchor': 'end', text: trunc(o.node ? o.node + ' (' + o.qnn_op + ')' : o.qnn_op, 34) }));
      (o.by_category || []).forEach(function (c) {
        var cw = sc(c.cycles) - labelW;
        var r = { 'class': 'box', x: x, y: y + 3, width: Math.max(0.5, cw), height: rowH - 7, fill: HTP_COLORS[c.category] || HTP_COLORS.unknown };
        if (c.category === 'idle') { r.stroke = '#9e9e9e'; r['stroke-dasharray'] = '2 2'; }   // light fill: outlined
        g.appendChild(sv('rect', r));
        x += cw;
      });
      g.appendChild(sv('text', { x: x + 5, y: y + 14, text: fmtInt(o.cycles) + ' · ' + trunc(l.bound || '', 28) }));
      withTip(g, function () {
        return [o.qnn_op + (o.qnn_op_type ? ' (' + o.qnn_op_type + ')' : ''), o.node ? 'graph node: ' + o.node : '', o.source ? 'source: ' + o.source : '',
          fmtInt(o.cycles) + ' active cycles' + (isNum(o.dominant_path_cycles) ? ', ' + fmtInt(o.dominant_path_cycles) + ' on the dominant path' : '')]
          .concat((o.by_category || []).map(function (c) { return '  ' + (labels[c.category] || c.category) + ': ' + fmtInt(c.cycles); }))
          .concat(['HTP ops:'], (o.htp_ops || []).slice(0, 8).map(function (hop) { return '  ' + hop.htp_op + ' — ' + hop.unit + ', ' + hop.label + ', ' + fmtInt(hop.cycles) + ' cycles'; }))
          .concat([(o.htp_ops_total > 8 ? '  … ' + (o.htp_ops_total - 8) + ' more' : ''),
            isNum(l.dram_gbps) ? 'DRAM ' + fmtNum(l.dram_gbps, 3) + ' GB/s, VTCM ' + fmtNum(l.vtcm_gbps, 3) + ' GB/s (bytes ÷ its cycles at the clock)' : '',
            l.bound ? 'bound: ' + l.bound + (l.basis ? ' (' + l.basis + ')' : '') : '']);
      });
      svg.appendChild(g);
    });
    xAxis(svg, sc, 0, max, top.length * rowH + 8, 'HTP cycles per QNN op (one inference)', W - labelW - rightW, fmtCompact);
    sec.appendChild(svg);
  }

  function opsTable(b, lim) {
    var limits = {};
    (lim.ops || []).forEach(function (x) { limits[x.qnn_op] = x; });
    var cats = (b.by_category || []).map(function (c) { return c.category; });
    var labels = b.category_labels || {};
    var t = el('table', { 'class': 'data' });
    t.appendChild(el('tr', null, ['QNN op', 'graph node', 'cycles'].concat(cats.map(function (c) { return labels[c] || c; }),
      ['DRAM GB/s', 'VTCM GB/s', 'bound', 'basis', 'source']).map(function (h) { return el('th', { text: h }); })));
    (b.ops || []).forEach(function (o) {
      var l = limits[o.qnn_op] || {};
      t.appendChild(el('tr', null, [el('td', { text: o.qnn_op }), el('td', { text: o.node || '—' }), el('td', { 'class': 'num', text: fmtInt(o.cycles) })]
        .concat(cats.map(function (c) { var v = htpCat(o, c); return el('td', { 'class': 'num', text: v ? fmtInt(v) : '·' }); }),
          [el('td', { 'class': 'num', text: isNum(l.dram_gbps) ? fmtNum(l.dram_gbps, 3) : '—' }), el('td', { 'class': 'num', text: isNum(l.vtcm_gbps) ? fmtNum(l.vtcm_gbps, 3) : '—' }),
           el('td', { text: l.bound || '—' }), el('td', { text: l.basis || '' }), el('td', { text: o.source || '' })])));
    });
    var det = el('details', { 'class': 'explain' }, el('summary', { text: 'All ' + (b.ops || []).length + ' QNN ops: cycles by category, achieved bytes/s, bound (table)' }));
    det.appendChild(el('div', { 'class': 'table-wrap' }, t));
    return det;
  }
