/* etscope report: the QNN / HTP section (inlined after common.js, before report.js, in the same
 * function scope). Draws what analysis computed (DATA.qnn): per partition the nesting picture
 * (analysis/qnn/nesting.py), the clock and its bounds, labelled QNN values, checks and per-op cycles;
 * QHAS gauges; the HMX/HVX/DMA timeline of the optrace (analysis/qnn/htp_timeline.py). Every value is
 * shown with a label, a unit and what it means: no raw keys. */

  var UNIT_COLORS = { hmx: '#1b5e20', hvx: '#66bb6a', dma: '#1565c0', sync: '#9e9e9e', other: '#8e24aa' };
  var UNKNOWN_UNIT = '#78909c';
  var UNIT_WORDS = { hmx: 'HMX compute (matrix unit)', hvx: 'HVX compute (vector unit)', dma: 'DMA (memory moves)',
                     sync: 'synchronisation', other: 'other / unflagged' };
  var BAND_COLORS = ['#455a64', '#607d8b', '#8d6e63', '#ef6c00', '#5c6bc0', '#43a047', '#1b5e20'];

  function fmtMhz(x) { return isNum(x) ? fmtInt(x) + ' MHz' : '?'; }
  function clockWords(src) {
    return src === 'runtrace' ? 'measured (runtrace)' : src === 'effective' ? 'effective rate (cycles summed over parallel threads, not a core clock)' : 'estimated';
  }

  // Axis position of a value in [lo, hi]: log or linear as analysis chose (nesting.scale).
  function bandScale(bands, scale, x0, x1) {
    var vals = bands.map(function (b) { return b.us_p50; }).filter(function (v) { return v > 0; });
    var hi = Math.max.apply(null, vals), lo = Math.min.apply(null, vals) / 2;
    if (scale !== 'log') return { f: function (v) { return x0 + (x1 - x0) * Math.max(0, v) / hi; }, lo: 0, hi: hi, log: false };
    var L = Math.log10(lo), H = Math.log10(hi);
    return { f: function (v) { return v <= 0 ? x0 : x0 + (x1 - x0) * Math.max(0, (Math.log10(v) - L) / (H - L)); }, lo: lo, hi: hi, log: true };
  }

  // Words into at most `maxLines` lines of about `width` characters (the last one cut with …).
  function wrapWords(text, width, maxLines) {
    var out = [''];
    String(text).split(' ').forEach(function (w) {
      var cur = out[out.length - 1];
      if (cur && (cur + ' ' + w).length > width) out.push(w); else out[out.length - 1] = cur ? cur + ' ' + w : w;
    });
    if (out.length > maxLines) { out = out.slice(0, maxLines); out[maxLines - 1] = trunc(out[maxLines - 1] + ' …', width); }
    return out;
  }

  function nestingPicture(box, n) {
    var bands = n.bands || [];
    if (!bands.length) return;
    var W = chartWidth(box), labelW = 222, addsW = Math.min(400, W * 0.36), rowH = 32, padT = 6;
    var x0 = labelW, x1 = W - addsW - 70, H = padT + bands.length * rowH + 44;
    var sc = bandScale(bands, n.scale, x0, x1);
    var svg = sv('svg', { width: W, height: H, role: 'img', 'class': 'nesting', 'aria-label': 'what contains what' + (n.scale === 'log' ? ', log scale' : ', to scale') });
    bands.forEach(function (b, i) {
      var y = padT + i * rowH, g = sv('g', { 'class': 'band' });
      var indent = Math.min(i, 8) * 10;
      g.appendChild(sv('text', { x: 4 + indent, y: y + 18, text: (i ? '⊇ ' : '') + b.label }));
      var xe = sc.f(b.us_p50), color = BAND_COLORS[Math.min(i, BAND_COLORS.length - 1)];
      g.appendChild(sv('rect', { 'class': 'box', x: x0, y: y + 4, width: Math.max(1, xe - x0), height: rowH - 8, fill: color, opacity: 0.35 }));
      var inner = bands[i + 1];
      if (inner) {   // the part this level adds over the next one inside it, drawn solid
        var xi = sc.f(inner.us_p50);
        g.appendChild(sv('rect', { x: xi, y: y + 4, width: Math.max(1, xe - xi), height: rowH - 8, fill: color }));
      } else {
        g.appendChild(sv('rect', { x: x0, y: y + 4, width: Math.max(1, xe - x0), height: rowH - 8, fill: color }));
      }
      g.appendChild(sv('text', { x: xe + 5, y: y + 18, text: fmtUs(b.us_p50) }));
      var adds = isNum(b.adds_us_p50) ? '+' + fmtUs(b.adds_us_p50) + ' ' + b.adds : '= ' + b.adds;
      var lines = wrapWords(adds, Math.floor(addsW / 6.4), 2), t = sv('text', { x: W - addsW, y: y + (lines.length > 1 ? 12 : 18), 'class': 'adds' });
      lines.forEach(function (ln, k) { t.appendChild(sv('tspan', { x: W - addsW, dy: k ? 13 : 0, text: ln })); });
      g.appendChild(t);
      withTip(g, function () {
        return [b.name, fmtUs(b.us_p50) + ' p50 over the steady runs (' + fmtPct(b.share_of_outer) + ' of the outermost level)',
                isNum(b.adds_us_p50) ? 'adds ' + fmtUs(b.adds_us_p50) + ' over the next level inside (p50 of the per-run difference): ' + b.adds : b.adds];
      });
      svg.appendChild(g);
    });
    var axisY = padT + bands.length * rowH + 4;
    if (sc.log) {
      var ax = sv('g', { 'class': 'axis' });
      ax.appendChild(sv('line', { x1: x0, x2: x1, y1: axisY, y2: axisY }));
      for (var e = Math.ceil(Math.log10(sc.lo)); e <= Math.floor(Math.log10(sc.hi)); e++) {
        var v = Math.pow(10, e), x = sc.f(v);
        ax.appendChild(sv('line', { x1: x, x2: x, y1: axisY, y2: axisY + 4 }));
        ax.appendChild(sv('text', { x: x, y: axisY + 15, 'text-anchor': 'middle', text: fmtUs(v) }));
      }
      ax.appendChild(sv('text', { 'class': 'axis-label', x: (x0 + x1) / 2, y: axisY + 31, 'text-anchor': 'middle', text: 'p50 per run, log scale (each level contains the ones below it)' }));
      svg.appendChild(ax);
    } else {
      xAxis(svg, function (v) { return sc.f(v * 1000); }, 0, sc.hi / 1000, axisY, 'p50 per run, ms (each level contains the ones below it)', x1 - x0, function (t) { return fmtNum(t, 3); });
    }
    box.appendChild(svg);
  }

  function clockLine(p, n) {
    var bits = [];
    if (isNum(n.cycles_p50)) {
      var s = fmtInt(n.cycles_p50) + ' HTP cycles p50 (Accelerator (execute) time, cycles)';
      if (isNum(n.clock_mhz)) s += ' ÷ ' + fmtMhz(n.clock_mhz) + ' ' + clockWords(n.clock_source) + ' = ' + fmtUs(n.cycles_us);
      bits.push(s + '.');
    }
    var b = n.clock_bounds_mhz || p.clock_mhz_bounds;
    if (b && (isNum(b[0]) || isNum(b[1]))) {
      var range = isNum(b[0]) && isNum(b[1]) ? fmtMhz(b[0]) + ' – ' + fmtMhz(b[1]) : isNum(b[0]) ? '≥ ' + fmtMhz(b[0]) : '≤ ' + fmtMhz(b[1]);
      bits.push('This profile alone bounds the clock to ' + range + ' (cycles ÷ accelerator µs with waits is the lower bound' +
        (isNum(b[1]) ? ', ÷ µs excluding waits the upper' : '; it logs no excluding-wait time for an upper bound') + '; ±0.5 µs rounding).');
    }
    if (p.clock_source === 'runtrace' && p.clock_measured_within_bounds === false) bits.push('The measured clock lies outside these bounds.');
    return bits.join(' ');
  }

  function perRunTable(p) {
    var pr = p.per_run || {};
    // level names: the glossary's (WORDS, by key), the same as every other view
    var word = function (key, fallback) { return WORDS[key] || fallback; };
    var cols = [['delegate_call_us', word('delegate_call', 'DELEGATE_CALL'), 'us'], ['qnn_execute_us', word('qnn_execute', 'QNN execute'), 'us'],
                ['accel_us', word('accelerator', 'accelerator'), 'us'],
                ['accel_excl_wait_us', word('accelerator_excl_wait', 'accelerator, waits excluded'), 'us'],
                ['accel_cycles', word('accelerator_cycles', 'accelerator cycles'), 'cycles'],
                ['clock_mhz_est', 'clock estimate', 'mhz'], ['clock_mhz_used', 'clock used for µs', 'mhz'], ['power_on_us', 'HVX+HMX power-on', 'us']]
      .filter(function (c) { return Array.isArray(pr[c[0]]) && pr[c[0]].some(isNum); });
    if (!cols.length) return null;
    var t = el('table', { 'class': 'data', style: 'width:auto' });
    t.appendChild(el('tr', null, [el('th', { text: 'run' })].concat(cols.map(function (c) { return el('th', { text: c[1] }); }))));
    var n = pr[cols[0][0]].length, cold = p.cold_runs || [];
    for (var i = 0; i < n; i++) {
      t.appendChild(el('tr', cold.indexOf(i) >= 0 ? { 'class': 'cold' } : null, [el('td', { text: i + (cold.indexOf(i) >= 0 ? ' (cold)' : '') })].concat(cols.map(function (c) {
        var v = pr[c[0]][i];
        return el('td', { 'class': 'num', text: !isNum(v) ? '—' : c[2] === 'us' ? fmtUs(v) : c[2] === 'mhz' ? fmtMhz(v) : fmtInt(v) });
      }))));
    }
    return el('details', { 'class': 'explain' }, el('summary', { text: 'Per run: each level, the cycles and the clock (' + n + ' run' + (n === 1 ? '' : 's') + ')' }),
              el('div', { 'class': 'table-wrap' }, t));
  }

  // QNN's other top-level values, each with a label, unit and meaning.
  var COUNT_WORDS = { 'Number of HVX threads used': 'HVX threads the graph used', 'Num times yield occured': 'times the HTP yielded to another client' };
  function valueCards(p) {
    var cards = el('div', { 'class': 'cards' });
    Object.keys(p.counts || {}).forEach(function (k) {
      if (isNum(p.counts[k])) cards.appendChild(stat(k, fmtInt(p.counts[k]), 'count, p50 over the steady runs' + (COUNT_WORDS[k] ? ': ' + COUNT_WORDS[k] : '')));
    });
    Object.keys(p.bytes || {}).forEach(function (k) {
      if (isNum(p.bytes[k])) cards.appendChild(stat(k, fmtBytes(p.bytes[k]), 'bytes, p50 over the steady runs'));
    });
    (p.other_events || []).forEach(function (o) {
      cards.appendChild(stat(o.name, isNum(o.p50) ? fmtNum(o.p50) + (o.unit && o.unit !== 'unknown' ? ' ' + o.unit : '') : '—',
        o.unit === 'unknown' ? 'value QNN logged without a unit; kept as logged' : o.unit + ', p50 over the steady runs'));
    });
    return cards.childNodes.length ? cards : null;
  }

  function checksList(p) {
    var checks = p.checks || [];
    if (!checks.length) return null;
    return el('ul', { 'class': 'checks' }, checks.map(function (c) {
      return el('li', { 'class': c.ok ? 'ok-text' : 'bad-text', text: (c.ok ? '✓ ' : '✗ ') + c.check + ' — ' + c.runs_checked + ' run(s) checked' + (c.runs_failing ? ', ' + c.runs_failing + ' failing' : '') });
    }));
  }

  function opsPart(box, p, i) {
    var wrap = el('div', { id: 'qnn-ops-p' + i });
    box.appendChild(wrap);
    var ops = (p.ops || []).slice();
    if (!ops.length) { wrap.appendChild(el('p', { 'class': 'muted', text: 'No per-op rows: QNN logs them at profile level detailed or optrace.' })); return; }
    ops.sort(function (a, b) { return (b.cycles_p50 || 0) - (a.cycles_p50 || 0); });
    var busy = ops.filter(function (o) { return (o.cycles_p50 || 0) > 0; }), zero = ops.length - busy.length;
    var top = busy.slice(0, 25);
    wrap.appendChild(el('div', { 'class': 'chart-title', text: 'HTP cycles per op (p50 over the steady runs; top ' + top.length + ' of ' + busy.length + ' with cycles)' }));
    var named = ops.filter(function (o) { return o.graph_op; }).length, matched = ops.filter(function (o) { return o.node; }).length;
    wrap.appendChild(el('p', { 'class': 'hint', text: matched ? matched + ' of ' + named + ' QNN ops were found in the ETRecord graph (by node name).' :
      'No ETRecord graph joined: ops are named as QNN names them.' }));
    var opColor = function (o) { return o.hmx ? UNIT_COLORS.hmx : o.hvx ? UNIT_COLORS.hvx : o.dma ? UNIT_COLORS.dma : UNKNOWN_UNIT; };
    var kinds = [['used HMX (matrix unit)', UNIT_COLORS.hmx], ['HVX, no HMX (vector unit)', UNIT_COLORS.hvx], ['DMA only', UNIT_COLORS.dma],
                 ['unit not known (QHAS/optrace not given or op not in them)', UNKNOWN_UNIT]];
    wrap.appendChild(legend(kinds.filter(function (k) { return top.some(function (o) { return opColor(o) === k[1]; }); })));
    if (top.length) {
      var W = chartWidth(wrap), labelW = 300, rowH = 19, H = top.length * rowH + 48;
      var max = Math.max.apply(null, top.map(function (o) { return o.cycles_p50; })) || 1;
      var sc = function (v) { return labelW + (W - labelW - 200) * v / max; };
      var svg = sv('svg', { width: W, height: H, role: 'img', 'aria-label': 'QNN ops by cycles' });
      top.forEach(function (o, k) {
        var y = 4 + k * rowH, g = sv('g');
        g.appendChild(sv('text', { x: labelW - 6, y: y + 13, 'text-anchor': 'end', text: trunc(o.node || o.base || o.qnn_name, 46) }));
        var color = opColor(o);
        var w = Math.max(1, sc(o.cycles_p50) - labelW);
        g.appendChild(sv('rect', { 'class': 'box', x: labelW, y: y + 2, width: w, height: rowH - 5, fill: color }));
        g.appendChild(sv('text', { x: labelW + w + 4, y: y + 13, text: fmtInt(o.cycles_p50) + ' cycles' + (isNum(o.est_us_at_clock) ? ' ≈ ' + fmtUs(o.est_us_at_clock) : '') }));
        withTip(g, function () { return [o.qnn_name, o.node ? 'graph node: ' + o.node : '', o.op_type ? 'op type: ' + o.op_type : '', o.source ? 'source: ' + o.source : '',
          'cycles p50: ' + fmtInt(o.cycles_p50), isNum(o.est_us_at_clock) ? '≈ ' + fmtUs(o.est_us_at_clock) + ' (cycles ÷ ' + fmtMhz(p.clock_mhz_used) + ', ' + clockWords(p.clock_source) + ')' : '',
          isNum(o.share) ? fmtPct(o.share) + ' of the partition\'s cycles' : '', 'HMX ' + flag(o.hmx) + '  HVX ' + flag(o.hvx) + '  DMA ' + flag(o.dma)]; });
        svg.appendChild(g);
      });
      xAxis(svg, sc, 0, max, top.length * rowH + 8, 'HTP cycles per op (p50 over the steady runs)', W - labelW - 200, fmtCompact);
      wrap.appendChild(svg);
    }
    var t = el('table', { 'class': 'data' });
    t.appendChild(el('tr', null, ['QNN op', 'graph node', 'op type', 'HTP cycles p50', 'time p50 (est.)', 'share of cycles', 'HMX', 'HVX', 'DMA', 'DRAM read / write', 'VTCM read / write', 'source']
      .map(function (h) { return el('th', { text: h }); })));
    ops.forEach(function (o) {
      var rw = function (r, w) { return isNum(r) || isNum(w) ? fmtBytes(r || 0) + ' / ' + fmtBytes(w || 0) : '—'; };
      t.appendChild(el('tr', (o.cycles_p50 || 0) > 0 ? null : { 'class': 'zero-row', hidden: 'hidden' },
        [el('td', { text: o.qnn_name }), el('td', { text: o.node || '—' }), el('td', { text: o.op_type || '—' }),
         el('td', { 'class': 'num', text: fmtInt(o.cycles_p50) }), el('td', { 'class': 'num', text: isNum(o.est_us_at_clock) ? fmtUs(o.est_us_at_clock) : '—' }),
         el('td', { 'class': 'num', text: fmtPct(o.share) }), el('td', { text: flag(o.hmx) }), el('td', { text: flag(o.hvx) }), el('td', { text: flag(o.dma) }),
         el('td', { 'class': 'num', text: rw(o.dram_read, o.dram_write) }), el('td', { 'class': 'num', text: rw(o.vtcm_read, o.vtcm_write) }), el('td', { text: o.source || '' })]));
    });
    var det = el('details', { 'class': 'explain' }, el('summary', { text: 'All ' + ops.length + ' ops of this partition (table)' }));
    if (zero) det.appendChild(zeroToggle(t, zero + ' op(s) with 0 cycles hidden'));
    det.appendChild(el('div', { 'class': 'table-wrap' }, t));
    wrap.appendChild(det);
  }

  // A checkbox that shows the rows marked zero-row (hidden by default).
  function zeroToggle(table, label) {
    var cb = el('input', { type: 'checkbox', 'class': 'zero-toggle' });
    cb.addEventListener('change', function () {
      Array.prototype.forEach.call(table.querySelectorAll('tr.zero-row'), function (r) { r.hidden = !cb.checked; });
    });
    return el('label', { 'class': 'toolbar' }, cb, ' show them (' + label + ')');
  }

  // QNN files given without an ETDump partition to join them to (analysis.qnn.files_alone.files_view):
  // their findings and one table of per-op cycles with the HTP units each op used.
  function filesPart(box, f) {
    var sec = el('div', { 'class': 'qnn-part' });
    box.appendChild(sec);
    sec.appendChild(el('h3', { text: 'What the QNN files say per op (' + f.from + ', one inference)' }));
    if ((f.findings || []).length) sec.appendChild(el('ul', { 'class': 'checks' }, f.findings.map(function (x) { return el('li', { text: x }); })));
    var ops = (f.ops || []).slice().sort(function (a, b) { return (b.cycles || 0) - (a.cycles || 0); });
    if (!ops.length) return;
    var zero = ops.filter(function (o) { return !((o.cycles || 0) > 0); }).length;
    var t = el('table', { 'class': 'data' });
    t.appendChild(el('tr', null, ['QNN op', 'op type', 'HTP cycles', 'share of cycles', 'HMX', 'HVX', 'DMA', 'DRAM read / write', 'VTCM read / write']
      .map(function (h) { return el('th', { text: h }); })));
    ops.forEach(function (o) {
      var rw = function (r, w) { return isNum(r) || isNum(w) ? fmtBytes(r || 0) + ' / ' + fmtBytes(w || 0) : '—'; };
      t.appendChild(el('tr', (o.cycles || 0) > 0 ? null : { 'class': 'zero-row', hidden: 'hidden' },
        [el('td', { text: o.qnn_name }), el('td', { text: o.op_type || '—' }), el('td', { 'class': 'num', text: fmtInt(o.cycles) }),
         el('td', { 'class': 'num', text: fmtPct(o.share) }), el('td', { text: flag(o.hmx) }), el('td', { text: flag(o.hvx) }), el('td', { text: flag(o.dma) }),
         el('td', { 'class': 'num', text: rw(o.dram_read, o.dram_write) }), el('td', { 'class': 'num', text: rw(o.vtcm_read, o.vtcm_write) })]));
    });
    if (zero) sec.appendChild(zeroToggle(t, zero + ' op(s) with 0 cycles hidden'));
    sec.appendChild(el('div', { 'class': 'table-wrap' }, t));
  }

  // ONNX Runtime's own profile of the session (--ort-profile): ORT's call into each QNN partition
  // around QNN's levels, and the CPU-fallback nodes between them (analysis/qnn/ort_view.py).
  function ortPart(box, o) {
    var sec = el('div', { 'class': 'qnn-part' });
    box.appendChild(sec);
    sec.appendChild(el('h3', { text: 'ONNX Runtime session: what ORT timed around QNN (' + o.path + ')' }));
    var us = function (x) { return isNum(x) ? fmtUs(x) : '—'; };
    sec.appendChild(el('p', { text: o.runs + ' model_run(s)' + (o.warmup_runs.length ? ', ' + o.warmup_runs.length + ' warm-up left out' : '') +
      '; model_run p50 ' + us(o.run_p50_us) + '. Of a run\'s time: QNN partitions ' + fmtPct(o.qnn_share) + ' (ORT\'s EP kernel time), CPU-fallback nodes ' +
      fmtPct(o.cpu_share) + ', the rest ' + fmtPct(o.other_share) + ' (ORT between nodes).' }));
    var t = el('table', { 'class': 'data' });
    t.appendChild(el('tr', null, ['#', 'partition', 'QNN graph', 'EP kernel p50', 'QNN execute p50', 'accelerator p50', 'outside QNN execute', 'share of model_run']
      .map(function (h) { return el('th', { text: h }); })));
    (o.partitions || []).forEach(function (p) {
      var out = isNum(p.qnn_execute_us) ? p.p50_us - p.qnn_execute_us : null;
      t.appendChild(el('tr', null, [el('td', { 'class': 'num', text: String(p.order) }), el('td', { text: p.name }), el('td', { text: p.qnn_graph || '—' }),
        el('td', { 'class': 'num', text: us(p.p50_us) }), el('td', { 'class': 'num', text: us(p.qnn_execute_us) }), el('td', { 'class': 'num', text: us(p.accel_us) }),
        el('td', { 'class': 'num', text: out === null ? '—' : us(out) + ' (' + fmtPct(p.p50_us > 0 ? out / p.p50_us : 0) + ')' }),
        el('td', { 'class': 'num', text: fmtPct(p.share) })]));
    });
    sec.appendChild(el('div', { 'class': 'table-wrap' }, t));
    sec.appendChild(el('p', { 'class': 'hint', text: 'QNN graphs: ' + o.joined + '. p50s are over each file\'s own runs.' }));
    if ((o.cpu_nodes || []).length) {
      var c = el('table', { 'class': 'data' });
      c.appendChild(el('tr', null, ['op', 'CPU-fallback node', 'calls/run', 'p50', 'share of model_run'].map(function (h) { return el('th', { text: h }); })));
      o.cpu_nodes.forEach(function (n) {
        c.appendChild(el('tr', null, [el('td', { text: n.op || '—' }), el('td', { text: n.name }), el('td', { 'class': 'num', text: String(n.calls_per_run) }),
          el('td', { 'class': 'num', text: us(n.p50_us) }), el('td', { 'class': 'num', text: fmtPct(n.share) })]));
      });
      sec.appendChild(el('div', { 'class': 'table-wrap' }, c));
    }
    (o.notes || []).forEach(function (n) { sec.appendChild(el('p', { 'class': 'muted', text: n })); });
  }

  function partitionPart(box, p, i) {
    var sec = el('div', { id: 'qnn-p' + i, 'class': 'qnn-part' });
    box.appendChild(sec);
    var where = p.instruction_id !== null && p.instruction_id !== undefined ? 'DELEGATE_CALL #' + p.instruction_id : p.key;
    sec.appendChild(el('h3', { text: 'Partition ' + where + ' — ' + p.runs + ' run(s) from ' + (p.source === 'etdump' ? 'the ETDump' : p.source) +
      (p.accumulating ? ' (QNN events accumulated across executes; de-duplicated)' : '') }));
    var nest = el('div', { id: 'qnn-nesting-p' + i });
    sec.appendChild(nest);
    if (p.headline) nest.appendChild(el('p', { 'class': 'headline', text: p.headline }));
    var logScale = (p.nesting || {}).scale === 'log';
    // A log axis is said in the title: on it RPC's 86% of the call looks like half the bar.
    nest.appendChild(el('div', { 'class': 'chart-title', text: 'What contains what' + (logScale ?
      ' (log scale: bar lengths are not proportional; read the µs figures)' : ', to scale (linear)') }));
    nest.appendChild(el('p', { 'class': 'hint', text: 'Each level contains the ones below it; the solid part is what it adds over the next level inside (p50 of the per-run difference), in plain words on the right.' +
      (logScale ? ' The levels span more than 30×, so the axis is logarithmic; the share of the call each level adds is in the findings and the table below.' : '') }));
    var pic = el('div', { 'class': 'chart' });
    nest.appendChild(pic);
    nestingPicture(pic, p.nesting || {});
    nest.appendChild(el('p', { id: 'qnn-clock-p' + i, 'class': 'clock', text: clockLine(p, p.nesting || {}) }));
    if (p.clock_warning) sec.appendChild(el('p', { 'class': 'warn', text: p.clock_warning }));
    if ((p.cold_runs || []).length) sec.appendChild(el('p', { 'class': 'warn', text: 'Cold run(s) ' + p.cold_runs.join(', ') + ': HVX + HMX power-on and VTCM acquire inflate them; leave them out of steady-state numbers.' }));
    append(sec, [perRunTable(p), valueCards(p), checksList(p)]);
    (p.notes || []).forEach(function (n) { sec.appendChild(el('p', { 'class': 'muted', text: 'Note: ' + n })); });
    opsPart(sec, p, i);
  }

  // A bar gauge: value against max. `warnFull`: colour it as a warning past 90 % (VTCM; not utilisation).
  function gauge(label, value, max, valueText, maxText, meaning, warnFull) {
    var share = isNum(value) && isNum(max) && max > 0 ? value / max : null;
    var g = el('div', { 'class': 'gauge' });
    g.appendChild(el('div', { 'class': 'k', text: label }));
    var track = el('div', { 'class': 'track' });
    if (share !== null) track.appendChild(el('div', { 'class': 'fill' + (warnFull && share > 0.9 ? ' full' : ''), style: 'width:' + Math.min(100, share * 100).toFixed(1) + '%' }));
    g.appendChild(track);
    g.appendChild(el('div', { 'class': 'v', text: valueText + (maxText ? ' of ' + maxText + (share !== null ? ' (' + fmtPct(share) + ')' : '') : '') }));
    if (meaning) g.appendChild(el('div', { 'class': 's', text: meaning }));
    return g;
  }

  function qhasPart(box, q) {
    var sec = el('div', { id: 'qnn-qhas' });
    box.appendChild(sec);
    sec.appendChild(el('h3', { text: 'QHAS: utilisation, VTCM and memory traffic' }));
    sec.appendChild(el('p', { 'class': 'hint', text: 'From QNN\'s HTP Analysis Summary of one inference (the first of a separate optrace-level run), not from this ETDump.' }));
    var gs = el('div', { 'class': 'gauges' });
    if (isNum(q.percent_utilization)) gs.appendChild(gauge('HTP utilisation', q.percent_utilization, 100, fmtNum(q.percent_utilization, 3) + '%', null,
      'share of the ' + fmtInt(q.timeline_cycles) + '-cycle timeline with a unit busy (idle ' + fmtNum(q.percent_idle, 3) + '%)'));
    (q.resources || []).forEach(function (r) {
      gs.appendChild(gauge(r.type + ' (thread ' + r.tid + ')', r.utilization, 100, fmtNum(r.utilization, 3) + '%', null,
        fmtInt(r.cycles_used) + ' busy cycles of the graph\'s timeline'));
    });
    if (isNum(q.peak_vtcm_alloc)) {
      gs.appendChild(gauge('Peak VTCM allocation', q.peak_vtcm_alloc, q.vtcm_bytes, fmtBytes(q.peak_vtcm_alloc),
        isNum(q.vtcm_bytes) ? fmtBytes(q.vtcm_bytes) + ' on ' + (q.soc || 'this SoC') : null,
        isNum(q.vtcm_bytes) ? 'VTCM (tightly-coupled memory) the graph held at its peak, against the SoC\'s VTCM (from the .pte)' :
          'the SoC\'s VTCM size is unknown: give the .pte (its compile spec names the SoC)', true));
    }
    sec.appendChild(gs);
    var cards = el('div', { 'class': 'cards' });
    if (isNum(q.graph_execute_us)) cards.appendChild(stat('graph execute', fmtUs(q.graph_execute_us), 'QHAS: HTP time of the inference'));
    if (isNum(q.inf_per_s)) cards.appendChild(stat('inferences per second', fmtNum(q.inf_per_s, 1), 'QHAS: 1 ÷ graph execute of that one inference'));
    (q.per_call || []).forEach(function (pc) {      // this ETDump's real calls, beside QHAS's one inference
      cards.appendChild(stat('NPU busy per call (' + pc.partition + ')', fmtPct(pc.npu_busy_p50),
        'this ETDump: accelerator ÷ DELEGATE_CALL ' + fmtMs(pc.delegate_call_ms) + ', p50 of ' + pc.runs + ' warm run(s); at most ' + fmtNum(pc.calls_per_s, 0) + ' calls/s'));
    });
    if (isNum(q.total_dram)) cards.appendChild(stat('DRAM traffic', fmtBytes(q.total_dram_read || 0) + ' read / ' + fmtBytes(q.total_dram_write || 0) + ' written', 'bytes moved to/from main memory'));
    if (isNum(q.total_vtcm_read)) cards.appendChild(stat('VTCM traffic', fmtBytes(q.total_vtcm_read) + ' read / ' + fmtBytes(q.total_vtcm_write || 0) + ' written', 'bytes moved to/from VTCM'));
    sec.appendChild(cards);
    var types = q.op_types || [];
    if (types.length) {
      var t = el('table', { 'class': 'data', style: 'width:auto' });
      t.appendChild(el('tr', null, ['QNN op type', 'HTP ops', 'HTP cycles', 'share of active cycles', 'DRAM read / write', 'VTCM read / write'].map(function (h) { return el('th', { text: h }); })));
      types.forEach(function (r) {
        t.appendChild(el('tr', null, [el('td', { text: r.op }), el('td', { 'class': 'num', text: fmtInt(r.num_htp_ops) }), el('td', { 'class': 'num', text: fmtInt(r.cycles) }),
          el('td', { 'class': 'num', text: isNum(r.percent_active_cycles) ? fmtNum(r.percent_active_cycles, 3) + '%' : '—' }),
          el('td', { 'class': 'num', text: fmtBytes(r.dram_read || 0) + ' / ' + fmtBytes(r.dram_write || 0) }),
          el('td', { 'class': 'num', text: fmtBytes(r.vtcm_read || 0) + ' / ' + fmtBytes(r.vtcm_write || 0) })]));
      });
      sec.appendChild(el('details', { 'class': 'explain' }, el('summary', { text: 'Per QNN op type (' + types.length + ')' }), t));
    }
    (q.warnings || []).forEach(function (w) { sec.appendChild(el('p', { 'class': 'warn', text: 'QHAS: ' + w })); });
  }

  function timelinePart(box, tl, optrace) {
    var sec = el('div', { id: 'qnn-timeline' });
    box.appendChild(sec);
    sec.appendChild(el('h3', { text: 'HMX / HVX / DMA timeline (optrace)' }));
    var mhz = tl.clock_mhz, inUs = isNum(mhz);
    sec.appendChild(el('p', { 'class': 'hint', text: 'One inference of the optrace run, one row per HTP unit thread, each executed HTP op a slice coloured by what it used. ' +
      (inUs ? 'Time = cycles ÷ ' + fmtMhz(mhz) + ', ' + tl.clock_note + '.' : 'In cycles: ' + tl.clock_note + '.') +
      (tl.hidden_tracks ? ' ' + tl.hidden_tracks + ' unit thread(s) without any op are hidden.' : '') }));
    var tracks = tl.tracks || [];
    var rows = [];
    tracks.forEach(function (t) { for (var l = 0; l < Math.max(1, t.lanes); l++) rows.push({ t: t, lane: l }); });
    var W = chartWidth(sec), labelW = 190, rowH = 26, padT = 4, H = padT + rows.length * rowH + 44;
    var span = tl.span_cycles || 1, k = inUs ? 1 / mhz : 1;
    var sc = function (v) { return labelW + (W - labelW - 16) * v / (span * k); };
    var svg = sv('svg', { width: W, height: H, role: 'img', 'class': 'htp-timeline', 'aria-label': 'HTP units over time' });
    rows.forEach(function (row, r) {
      var y = padT + r * rowH, t = row.t;
      svg.appendChild(sv('rect', { x: labelW, y: y + 2, width: W - labelW - 16, height: rowH - 4, fill: '#f3f5f7' }));
      svg.appendChild(sv('text', { x: labelW - 8, y: y + 17, 'text-anchor': 'end', text: t.kind + ' (thread ' + t.tid + ')' + (row.lane ? ' lane ' + (row.lane + 1) : '') +
        (row.lane ? '' : ' · ' + fmtPct(t.busy_share) + ' busy') }));
      var s = t.slices;
      for (var i = 0; i < s.start_cycles.length; i++) {
        if (s.lane[i] !== row.lane) continue;
        (function (i) {
          var x = sc(s.start_cycles[i] * k), w = Math.max(0.8, sc((s.start_cycles[i] + s.dur_cycles[i]) * k) - x);
          var rect = sv('rect', { 'class': 'slice', x: x, y: y + 3, width: w, height: rowH - 6, fill: UNIT_COLORS[s.category[i]] || UNIT_COLORS.other });
          withTip(rect, function () {
            return [s.op[i], s.qnn_op[i] ? 'QNN op: ' + s.qnn_op[i] : '', 'uses: ' + (UNIT_WORDS[s.category[i]] || s.category[i]),
                    fmtInt(s.dur_cycles[i]) + ' cycles' + (inUs ? ' ≈ ' + fmtUs(s.dur_cycles[i] / mhz) + (tl.clock_is_estimate ? ' (estimated clock)' : ' (measured clock)') : ''),
                    'starts at cycle ' + fmtInt(s.start_cycles[i])];
          });
          svg.appendChild(rect);
        })(i);
      }
    });
    var axisY = padT + rows.length * rowH + 4;
    xAxis(svg, sc, 0, span * k, axisY, inUs ? 'time since the first op, µs (cycles ÷ ' + fmtMhz(mhz) + (tl.clock_is_estimate ? ', estimated clock)' : ', measured clock)') : 'HTP cycles since the first op',
          W - labelW, function (v) { return fmtNum(v, 3); });
    var used = {};
    tracks.forEach(function (t) { t.slices.category.forEach(function (c) { used[c] = true; }); });
    sec.appendChild(legend(Object.keys(UNIT_COLORS).filter(function (c) { return used[c]; }).map(function (c) { return [UNIT_WORDS[c], UNIT_COLORS[c]]; })));
    sec.appendChild(el('div', { 'class': 'chart' }, svg));
    tracks.forEach(function (t) {
      if (t.slices_total > t.slices.op.length) sec.appendChild(el('p', { 'class': 'muted', text: t.kind + ' thread ' + t.tid + ': the ' + t.slices.op.length + ' longest of ' + t.slices_total + ' ops are drawn.' }));
    });
    if (optrace && (optrace.tracks || []).length) {
      var t = el('table', { 'class': 'data', style: 'width:auto' });
      t.appendChild(el('tr', null, ['optrace track', 'unit', 'ops', 'busy cycles'].map(function (h) { return el('th', { text: h }); })));
      var zero = 0;
      optrace.tracks.forEach(function (r) {
        var empty = !r.ops;
        if (empty) zero++;
        t.appendChild(el('tr', empty ? { 'class': 'zero-row', hidden: 'hidden' } : null, [el('td', { text: r.name || ('process ' + r.pid + ', thread ' + r.tid) }),
          el('td', { text: r.kind }), el('td', { 'class': 'num', text: fmtInt(r.ops) }), el('td', { 'class': 'num', text: fmtInt(r.busy_cycles) })]));
      });
      var det = el('details', { 'class': 'explain' }, el('summary', { text: 'optrace tracks: ' + (optrace.tracks.length - zero) + ' with ops, ' + fmtInt(optrace.ops) + ' ops' }));
      if (zero) det.appendChild(zeroToggle(t, zero + ' track(s) without ops hidden: per-QNN-op copies and non-executed tensors'));
      det.appendChild(t);
      sec.appendChild(det);
    }
  }

  function renderQnn() {
    var box = document.getElementById('qnn-body');
    if (!box) return;
    var q = DATA.qnn || {};
    var parts = q.partitions || [];
    box.appendChild(el('p', { 'class': 'hint', text: 'Each QNN partition is one DELEGATE_CALL. QNN logs its values inside it in their own units: µs (execute, transport, accelerator), ' +
      'cycles (accelerator total and per op). Times from cycles are estimates unless a runtrace measured the clock.' }));
    if (q.soc && q.soc.soc_model) {
      box.appendChild(el('p', { text: 'Compiled for ' + q.soc.soc_model + (q.soc.htp_arch ? ' (HTP ' + q.soc.htp_arch + ')' : '') +
        (isNum(q.soc.vtcm_bytes) ? ', ' + fmtBytes(q.soc.vtcm_bytes) + ' VTCM' : '') + (q.soc.profile_level ? ', QNN profile level ' + q.soc.profile_level : '') + ' (from the .pte).' }));
    }
    parts.forEach(function (p, i) { partitionPart(box, p, i); });
    if (!parts.length) {
      box.appendChild(el('p', { 'class': 'muted', text: DATA.summary && DATA.summary.qnn_only ?
        'No ETDump given: the nesting per partition (Method::execute ⊇ DELEGATE_CALL ⊇ … ⊇ accelerator) and the per-execute times need the run\'s ETDump (or a QNN profile, --qnn-csv). Below: what the QNN files hold.' :
        'No QNN partitions found in this run.' }));
    }
    if (q.files) filesPart(box, q.files);
    if (q.ort) ortPart(box, q.ort);
    if (q.runtrace && Array.isArray(q.runtrace.clock_mhz_per_execute)) {
      box.appendChild(el('p', { 'class': 'clock', text: 'Runtrace: the HTP clock measured per execute (Graph Execute) was ' +
        q.runtrace.clock_mhz_per_execute.map(fmtMhz).join(', ') + (q.runtrace.graphs && q.runtrace.graphs.length ? ' (graph ' + q.runtrace.graphs.join(', ') + ')' : '') + '.' }));
    }
    if (q.qhas) qhasPart(box, q.qhas);
    (q.htp_ops || []).forEach(function (h, i) { htpPart(box, h, i); });     // htp.js
    if (q.htp_timeline) timelinePart(box, q.htp_timeline, q.optrace);
    if ((q.warnings || []).length) {
      box.appendChild(el('h3', { text: 'QNN warnings' }));
      box.appendChild(el('ul', null, q.warnings.map(function (w) { return el('li', { text: w }); })));
    }
  }
