  /* etscope report: the numerics section (inlined after common.js, before graph.js; draws
   * DATA.numerics). With a reference: the per-tensor SNR curve in graph order (first divergence and
   * largest drop marked, thresholds drawn) and the table in graph order; without: the statistics.
   * snrColour() is shared with the graph view, which colours nodes by SNR when a comparison is given. */
  var NUM = DATA.numerics;
  // rgb() so graph.js's darkText() picks the label colour that reads on each
  var SNR_COLOURS = [[0, 'rgb(183,28,28)'], [10, 'rgb(229,57,53)'], [20, 'rgb(251,140,0)'], [30, 'rgb(253,216,53)'],
                     [40, 'rgb(156,204,101)'], [60, 'rgb(46,125,50)']];
  // SNR (dB) to a colour: red below 10 dB to green at 60 dB and above; grey when not compared.
  function snrColour(db, diverged) {
    if (db === null || db === undefined) return diverged ? SNR_COLOURS[0][1] : '#eaeef2';
    for (var i = SNR_COLOURS.length - 1; i >= 0; i--) if (db >= SNR_COLOURS[i][0]) return SNR_COLOURS[i][1];
    return SNR_COLOURS[0][1];
  }
  function snrLegend() {
    return legend(SNR_COLOURS.map(function (c, i) {
      return [(i + 1 < SNR_COLOURS.length ? c[0] + '–' + SNR_COLOURS[i + 1][0] : '≥ ' + c[0]) + ' dB', c[1]];
    }).concat([['not compared', '#eaeef2']]));
  }
  function numericsSnrOfNode(name) {
    if (!NUM || NUM.kind !== 'compare' || !NUM.node_snr || !(name in NUM.node_snr)) return undefined;
    return { snr: NUM.node_snr[name], diverged: !!NUM.node_diverged[name] };
  }
  function fmtSnr(t) {
    if (t.nonfinite) return 'NaN/Inf';
    if (t.equal) return 'equal';
    return isNum(t.snr_db) ? t.snr_db.toFixed(1) + ' dB' : (t.compared ? '−∞ dB' : '');
  }
  function fmtSci(x) { return isNum(x) ? (x === 0 ? '0' : Math.abs(x) >= 1e-3 && Math.abs(x) < 1e4 ? fmtNum(x, 4) : x.toExponential(2)) : ''; }

  function fmtCos(x) { return isNum(x) ? (x === 1 ? '1' : x.toFixed(6)) : ''; }
  function thresholdText(th) {
    var parts = [];
    if (isNum(th.cosine_below)) parts.push('cosine < ' + th.cosine_below);
    if (isNum(th.snr_db_below)) parts.push('SNR < ' + th.snr_db_below + ' dB');
    return parts.length ? 'A tensor diverges when ' + parts.join(' or ') + ' (or holds NaN/Inf).' : 'No threshold set.';
  }

  function renderNumerics() {
    var box = document.getElementById('numerics-body');
    if (!box || !NUM) return;
    (NUM.notes || []).forEach(function (n) { box.appendChild(el('p', { 'class': 'hint', text: 'note: ' + n })); });
    if (NUM.kind === 'stats') { renderNumericStats(box); return; }
    var th = NUM.thresholds, fd = NUM.first_divergence;
    box.appendChild(el('p', null, el('b', { text: thresholdText(th) }),
      ' Matched by ' + NUM.match_by + '; runs paired ' + (NUM.runs_paired_by === 'llm phase' ? 'by LLM phase (prefill with prefill, decode with decode)' : 'in order') +
      ' (candidate ' + NUM.candidate_runs + ', reference ' + NUM.reference_runs + ' run(s))' + (NUM.method ? ', method ' + NUM.method : '') + '.'));
    var cv = NUM.coverage;
    if (cv && cv.share !== null) box.appendChild(el('p', { id: 'numerics-coverage', 'class': cv.low ? 'bad-text' : 'hint',
      text: 'Coverage: ' + cv.paired + ' of the reference\'s ' + cv.loggable +
            ' logged node(s) the candidate could log were paired (' + Math.round(100 * cv.share) + '%)' +
            (cv.inside_candidate_partitions ? '; ' + cv.inside_candidate_partitions + ' more inside the candidate\'s delegate partitions' : '') +
            (cv.pairs_refused ? '; ' + cv.pairs_refused + ' pair(s) refused (shapes differ)' : '') + '.' }));
    box.appendChild(el('p', { id: 'numerics-first', 'class': fd ? 'bad-text' : 'ok' },
      fd ? 'First divergence (graph order): ' + fd.name + ' (run ' + fd.runs.join(', ') + ')' : 'No tensor crosses the thresholds in any run.'));
    if (NUM.drift) drawDrift(box, NUM.drift);
    var runs = NUM.runs || [];
    if (!runs.length) { box.appendChild(el('p', { text: 'No tensor matched between candidate and reference.' })); return; }
    var pick = 0;
    runs.forEach(function (r, i) { if (pick === 0 && r.first_divergence !== null && runs[0].first_divergence === null) pick = i; });
    var sel = el('select', { 'aria-label': 'execute run' }, runs.map(function (r, i) {
      return el('option', { value: String(i), text: 'run ' + r.run + (r.phase ? ' (' + r.phase + ', reference run ' + r.reference_run + ')' : '') +
                                                     (r.first_divergence ? ' · diverges at ' + r.first_divergence : '') });
    }));
    sel.value = String(pick);
    var chart = el('div', { id: 'numerics-chart', 'class': 'chart' }), table = el('div', { id: 'numerics-table' });
    box.appendChild(el('div', { 'class': 'toolbar' }, sel));
    box.appendChild(chart);
    box.appendChild(table);
    function draw() {
      var r = runs[+sel.value];
      chart.textContent = ''; table.textContent = '';
      drawCurve(chart, r);
      drawTable(table, r);
    }
    sel.addEventListener('change', draw);
    draw();
    var un = (NUM.unmatched_candidate || []).length + (NUM.unmatched_reference || []).length;
    if (un) box.appendChild(el('p', { 'class': 'hint', text: 'Unmatched: ' + (NUM.unmatched_candidate || []).length + ' candidate and ' +
      (NUM.unmatched_reference || []).length + ' reference tensor(s) have no partner (see etscope numerics --json).' }));
  }

  function drawCurve(box, r) {
    var ts = r.tensors, W = chartWidth(box), H = 260, L = 56, R = 16, T = 14, B = 46;
    var pts = ts.map(function (t, i) { return { i: i, t: t, y: t.equal ? NUM.snr_cap_db : (isNum(t.snr_db) ? Math.min(t.snr_db, NUM.snr_cap_db) : null) }; });
    var ys = pts.filter(function (p) { return p.y !== null; }).map(function (p) { return p.y; });
    var thr = NUM.thresholds.snr_db_below;
    var lo = Math.min.apply(null, [0].concat(ys)), hi = Math.max.apply(null, [isNum(thr) ? thr + 10 : 40].concat(ys));
    var x = function (i) { return L + (ts.length > 1 ? i * (W - L - R) / (ts.length - 1) : (W - L - R) / 2); };
    var y = function (v) { return T + (hi - v) * (H - T - B) / ((hi - lo) || 1); };
    var svg = sv('svg', { width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': 'SNR per tensor in graph order, run ' + r.run });
    var g = sv('g');
    svg.appendChild(g);
    yAxis(g, y, lo, hi, L, 'SNR (dB, equal = ' + NUM.snr_cap_db + ')', H - T - B);
    xAxis(g, x, 0, Math.max(1, ts.length - 1), H - B, 'tensor in graph order (#)', W - L - R, fmtInt);
    if (isNum(thr)) {
      g.appendChild(sv('line', { 'class': 'threshold', x1: L, x2: W - R, y1: y(thr), y2: y(thr), stroke: '#cf222e', 'stroke-dasharray': '5,4' }));
      g.appendChild(sv('text', { x: W - R - 4, y: y(thr) - 4, 'text-anchor': 'end', fill: '#cf222e', text: 'threshold ' + thr + ' dB' }));
    }
    var drop = r.largest_drop, di = drop && drop.to_index < ts.length ? drop.from_index : -1, dj = di >= 0 ? drop.to_index : -1;
    var d = '', prev = null;
    pts.forEach(function (p) { if (p.y === null) return; d += (prev === null ? 'M' : 'L') + x(p.i).toFixed(1) + ',' + y(p.y).toFixed(1); prev = p; });
    if (d) g.appendChild(sv('path', { 'class': 'snr-curve', d: d, fill: 'none', stroke: '#1565c0', 'stroke-width': 1.5 }));
    if (di >= 0 && dj >= 0 && pts[di].y !== null && pts[dj].y !== null) {
      g.appendChild(sv('line', { 'class': 'largest-drop', x1: x(di), y1: y(pts[di].y), x2: x(dj), y2: y(pts[dj].y), stroke: '#ef6c00', 'stroke-width': 4, opacity: 0.8 }));
      var right = x(dj) > W - 220;     // label left of the point near the right edge
      g.appendChild(sv('text', { x: x(dj) + (right ? -8 : 6), y: y(pts[dj].y) + 16, 'text-anchor': right ? 'end' : 'start', fill: '#ef6c00',
                                 text: 'largest drop −' + fmtNum(drop.snr_drop_db, 3) + ' dB' }));
    }
    pts.forEach(function (p) {
      var t = p.t, first = p.i === r.first_divergence_index;
      var yy = p.y === null ? (t.compared ? y(lo) : null) : y(p.y);
      if (yy === null) return;
      var c = sv('circle', { 'class': 'pt' + (t.diverged ? ' diverged' : '') + (first ? ' first' : ''), cx: x(p.i), cy: yy, r: first ? 7 : 3.5,
                             fill: first ? '#cf222e' : snrColour(p.y, t.diverged), stroke: first ? '#000' : '#57606a' });
      withTip(c, function () { return tensorTip(t, p.i); });
      g.appendChild(c);
      if (first) g.appendChild(sv('text', { x: x(p.i) + 9, y: yy - 8, fill: '#cf222e', 'font-weight': 600, text: 'first divergence: ' + trunc(t.name, 40) }));
    });
    box.appendChild(svg);
  }

  // LLM drift: layers (rows, graph order) x steps (columns: prefill, then decode steps by token
  // position), each cell the layer's worst SNR at that step coloured like the graph view; the first
  // (layer, step) crossing a threshold outlined.
  function drawDrift(box, dr) {
    var steps = dr.steps, layers = dr.layers, first = dr.first_divergence;
    var fi = -1, fj = -1;
    if (first) {
      layers.forEach(function (l, i) { if (l.name === first.layer && fi < 0) fi = i; });
      steps.forEach(function (s, j) { if (s.run === first.run && fj < 0) fj = j; });
    }
    var outer = box;
    box = el('div', { id: 'numerics-drift-box' });
    outer.appendChild(box);
    box.appendChild(el('h3', { text: 'Drift over decode steps' }));
    box.appendChild(el('p', { id: 'numerics-drift-first', 'class': first ? 'bad-text' : 'ok',
      text: first ? 'First crossing: layer ' + first.layer + ' at ' + first.step + ' (run ' + first.run + '): ' +
                    (isNum(first.snr_db) ? 'SNR ' + first.snr_db.toFixed(1) + ' dB' : 'NaN/Inf values') +
                    (isNum(first.max_abs_error) ? ', max abs ' + fmtSci(first.max_abs_error) : '') + ' (first crossing tensor ' + first.first_tensor + ', worst ' + first.worst_tensor + ').'
                  : 'No layer crosses the thresholds at any step.' }));
    var labelW = Math.min(260, 14 + 7 * Math.max.apply(null, [6].concat(layers.map(function (l) { return Math.min(36, l.name.length); }))));
    var cw = Math.max(34, Math.min(64, Math.floor((chartWidth(outer) - labelW - 20) / Math.max(1, steps.length))));
    var ch = 24, T = 34, W = labelW + cw * steps.length + 20, H = T + ch * layers.length + 8;
    var svg = sv('svg', { id: 'numerics-drift', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img',
                          'aria-label': 'worst SNR per layer and step' });
    steps.forEach(function (s, j) {
      svg.appendChild(sv('text', { x: labelW + j * cw + cw / 2, y: T - 10, 'text-anchor': 'middle', 'font-size': 11,
                                   text: s.phase === 'decode' ? s.label : trunc(s.label, 7) }));
    });
    layers.forEach(function (l, i) {
      var y = T + i * ch;
      svg.appendChild(sv('text', { x: labelW - 6, y: y + ch / 2 + 4, 'text-anchor': 'end', 'font-size': 12,
                                   text: trunc(l.name, 36) }));
      dr.cells[i].forEach(function (c, j) {
        var x = labelW + j * cw, db = c ? (c.equal ? NUM.snr_cap_db : c.snr_db) : null;
        var r = sv('rect', { 'class': 'drift-cell' + (c && c.diverged ? ' diverged' : '') + (i === fi && j === fj ? ' first' : ''),
                             x: x + 1, y: y + 1, width: cw - 2, height: ch - 2,
                             fill: c ? snrColour(c.nonfinite ? null : db, c.diverged || c.nonfinite) : '#eaeef2',
                             stroke: i === fi && j === fj ? '#000' : 'none', 'stroke-width': 2.5 });
        withTip(r, function () {
          var s = steps[j];
          return [l.name + ' · ' + s.label + ' (run ' + s.run + ', reference run ' + s.reference_run + ')',
                  c ? (c.nonfinite ? 'NaN/Inf values' : c.equal ? 'all ' + c.tensors + ' tensor(s) equal'
                       : 'worst SNR ' + fmtNum(c.snr_db, 4) + ' dB (' + c.worst_tensor + ')') : 'no tensor compared',
                  c ? 'max abs error ' + fmtSci(c.max_abs_error) + ' over ' + c.tensors + ' tensor(s)' : '',
                  c && c.diverged ? 'crosses the threshold' : ''];
        });
        svg.appendChild(r);
        if (c) svg.appendChild(sv('text', { x: x + cw / 2, y: y + ch / 2 + 4, 'text-anchor': 'middle', 'font-size': 10.5,
                                            'pointer-events': 'none', fill: db !== null && db < 20 && !c.equal ? '#fff' : '#1f2328',
                                            text: (c.nonfinite ? 'NaN' : c.equal ? '=' : (isNum(c.snr_db) ? c.snr_db.toFixed(0) : '')) + (c.diverged ? '*' : '') }));
      });
    });
    box.appendChild(el('div', { 'class': 'table-wrap' }, svg));
    box.appendChild(snrLegend());
    box.appendChild(el('p', { 'class': 'hint', text: 'Each cell: the worst SNR (dB) of the layer\'s paired tensors at that step ' +
      '(= all equal, * crosses a threshold); a layer is the transformer block\'s module path (else the module, else the graph node). Steps: prefill, ' +
      'then d<step>@<token position>, each paired with the reference\'s run at the same position.' }));
  }

  function tensorTip(t, i) {
    return ['#' + i + ' ' + t.name, t.role.replace(/_/g, ' ') + (t.node ? ' · node ' + t.node : ''),
            (t.dtype || '') + (t.ref_dtype && t.ref_dtype !== t.dtype ? ' vs ' + t.ref_dtype : '') + ' [' + (t.shape || []).join('×') + ']',
            t.compared ? 'SNR ' + fmtSnr(t) + ' · cosine ' + fmtCos(t.cosine) : 'not compared',
            t.compared ? 'MSE ' + fmtSci(t.mse) + ' · max abs ' + fmtSci(t.max_abs_error) + ' · rel ' + fmtSci(t.relative_error) : '',
            t.diverged ? 'crosses the threshold' : '', t.note || ''];
  }

  function drawTable(box, r) {
    var cols = ['#', 'tensor', 'role', 'dtype', 'SNR', 'cosine', 'MSE', 'max abs err', 'rel err', 'note'];
    var table = el('table', { 'class': 'data', id: 'numerics-data' }), tb = el('tbody');
    table.appendChild(el('thead', null, el('tr', null, cols.map(function (c) { return el('th', { scope: 'col', text: c }); }))));
    r.tensors.forEach(function (t, i) {
      var first = i === r.first_divergence_index;
      var tr = el('tr', { 'class': (t.diverged ? 'diverged' : '') + (first ? ' first-divergence' : '') },
        [el('td', { 'class': 'num', text: String(i) }), el('td', { text: (first ? '▶ ' : '') + t.name, title: t.node || '' }),
         el('td', { text: t.role.replace(/_/g, ' ') }), el('td', { text: t.dtype + (t.ref_dtype && t.ref_dtype !== t.dtype ? ' / ' + t.ref_dtype : '') }),
         el('td', { 'class': 'num', text: fmtSnr(t) }), el('td', { 'class': 'num', text: fmtCos(t.cosine) }),
         el('td', { 'class': 'num', text: fmtSci(t.mse) }), el('td', { 'class': 'num', text: fmtSci(t.max_abs_error) }),
         el('td', { 'class': 'num', text: fmtSci(t.relative_error) }), el('td', { text: t.note || '' })]);
      tb.appendChild(tr);
    });
    table.appendChild(tb);
    if (r.total_tensors > r.tensors.length) box.appendChild(el('p', { 'class': 'hint', text: 'First ' + r.tensors.length + ' of ' + r.total_tensors + ' tensors.' }));
    box.appendChild(el('div', { 'class': 'table-wrap' }, table));
  }

  function renderNumericStats(box) {
    box.appendChild(el('p', null, NUM.total_tensors + ' logged tensors over ' + NUM.runs + ' execute run(s); ' +
      (NUM.flagged ? NUM.flagged + ' flagged (NaN, Inf, or more than ' + fmtPct(NUM.saturation_share_flagged_above) + ' of values at the int limits).'
                   : 'none flagged (NaN, Inf, or more than ' + fmtPct(NUM.saturation_share_flagged_above) + ' of values at the int limits).') +
      ' Give --reference and --reference-buffer to compare with a reference run.'));
    var cols = ['run', 'tensor', 'role', 'dtype', 'shape', 'min', 'max', 'mean', 'std', 'NaN', 'Inf', 'at limits', 'flags'];
    var table = el('table', { 'class': 'data', id: 'numerics-data' }), tb = el('tbody');
    table.appendChild(el('thead', null, el('tr', null, cols.map(function (c) { return el('th', { scope: 'col', text: c }); }))));
    NUM.tensors.forEach(function (t) {
      tb.appendChild(el('tr', { 'class': t.flags.length ? 'diverged' : '' },
        [el('td', { 'class': 'num', text: String(t.run) }), el('td', { text: t.name }), el('td', { text: t.role.replace(/_/g, ' ') }),
         el('td', { text: t.dtype }), el('td', { text: (t.shape || []).join('×') || 'scalar' }),
         el('td', { 'class': 'num', text: fmtSci(t.min) }), el('td', { 'class': 'num', text: fmtSci(t.max) }),
         el('td', { 'class': 'num', text: fmtSci(t.mean) }), el('td', { 'class': 'num', text: fmtSci(t.std) }),
         el('td', { 'class': 'num', text: String(t.nan) }), el('td', { 'class': 'num', text: String(t.inf) }),
         el('td', { 'class': 'num', text: t.at_limits_share === null ? '' : fmtPct(t.at_limits_share) }), el('td', { text: t.flags.join('; ') })]));
    });
    table.appendChild(tb);
    box.appendChild(el('div', { 'class': 'table-wrap' }, table));
  }
