/* etscope diff view: draws one comparison of two runs (the dict of analysis.diff.compare.compare plus the
 * per-run latency of both runs). Used by the diff page (diff_page.js, whole page) and by the report's
 * "Compared with base" section (report.js). Inlined after common.js inside one function scope.
 * Data from input files is only ever written with textContent or setAttribute (never innerHTML). */

  var DIFF_COLORS = { base: '#8c959f', 'new': '#0969da', worse: '#c62828', better: '#2e7d32', none: '#59636e' };
  var STATUS_RANK = { 'new': 0, removed: 1, slower: 2, faster: 3, uncertain: 4, same: 5, not_compared: 6 };
  var STATUS_COLORS = { 'new': '#1565c0', removed: '#6e7781', slower: '#c62828', faster: '#2e7d32', uncertain: '#9a6700', same: '#afb8c1', not_compared: '#8250df' };
  var AXIS_COLORS = { changed: '#c62828', regression: '#c62828', improvement: '#2e7d32', inconclusive: '#9a6700', no_change: '#59636e', unknown: '#8c959f', not_comparable: '#8250df' };
  var AXIS_ORDER = ['latency', 'placement', 'program', 'environment'];
  // Non-latency axes that changed: a page never shows "no change" alone while one did.
  function changedAxes(D) {
    var A = D.axes || {};
    return AXIS_ORDER.slice(1).filter(function (a) { return A[a] && A[a].verdict === 'changed'; });
  }
  function axisPills(D) {
    return changedAxes(D).map(function (a) {
      return el('span', { 'class': 'axis-pill', 'data-axis': a, style: 'background:' + AXIS_COLORS.changed, text: a + ' changed' });
    });
  }
  var VERDICT_COLORS = { not_comparable: '#8250df', regression: '#c62828', improvement: '#2e7d32', no_change: '#59636e', inconclusive: '#9a6700' };

  function fmtSigned(x, d) {
    if (!isNum(x)) return 'n/a';
    var s = Math.abs(x) >= 1000 ? Math.round(x).toLocaleString('en-US') : x.toFixed(d === undefined ? 1 : d);
    return (x > 0 ? '+' : (x < 0 ? '' : '±')) + s + '%';
  }
  function fmtSignedMs(ms) { return isNum(ms) ? (ms > 0 ? '+' : (ms < 0 ? '-' : '±')) + fmtMs(Math.abs(ms)) : 'n/a'; }
  function fmtP(p) {
    if (!isNum(p)) return '';
    if (p < 1e-4) return p.toExponential(1);
    return p.toPrecision(2);
  }
  function quantile(sorted, q) {
    if (!sorted.length) return NaN;
    var pos = (sorted.length - 1) * q, i = Math.floor(pos), f = pos - i;
    return i + 1 < sorted.length ? sorted[i] + f * (sorted[i + 1] - sorted[i]) : sorted[i];
  }
  function partLabel(b) {
    if (b.kind === 'delegate') return placementLabel(b.backend);
    if (b.kind === 'cpu_ops') return 'CPU kernels (fallback)';
    if (b.kind === 'framework_overhead') return 'framework overhead';
    return String(b.kind);
  }
  function partColor(b) {
    if (b.kind === 'delegate') return placementColor(b.backend);
    if (b.kind === 'cpu_ops') return COLORS.cpu;
    if (b.kind === 'method') return COLORS.method;
    return COLORS.overhead;
  }
  // A .chart div appended to box: charts size themselves to it (box may be a padded section).
  function chartDiv(box) { var c = el('div', { 'class': 'chart' }); box.appendChild(c); return c; }
  function verdictText(v) { return v ? String(v).replace(/_/g, ' ') : 'unknown'; }

  // ---- verdict: latency change and its 95% interval on a % axis ------------------------------------
  function diffVerdict(box, D, V) {
    var L = D.latency || {}, ci = L.ci_pct || [];
    var moved = changedAxes(D).length > 0;
    var head = el('div', { 'class': 'verdict-line' },
      el('span', { 'class': 'verdict-pill', style: 'background:' + (VERDICT_COLORS[D.verdict] || '#59636e'),
                   text: D.verdict === 'no_change' && moved ? 'no latency change' : verdictText(D.verdict) }),
      axisPills(D),
      el('span', { 'class': 'verdict-text', text: 'Method::execute p50 ' + fmtMs(L.base_p50_ms) + ' (base, ' + L.base_runs + ' runs) → ' +
        fmtMs(L.new_p50_ms) + ' (new, ' + L.new_runs + ' runs): ' + fmtSigned(L.change_pct) + ' (95% CI ' + fmtSigned(ci[0]) + ' … ' + fmtSigned(ci[1]) + ')' }));
    box.appendChild(head);
    if (D.headline && (moved || D.verdict === 'not_comparable')) box.appendChild(el('p', { 'class': 'verdict-text headline', text: D.headline }));
    if ((D.reasons || []).length) box.appendChild(el('ul', { 'class': 'reasons' }, D.reasons.map(function (r) { return el('li', { text: r }); })));
    var cards = el('div', { 'class': 'cards' });
    var wd = L.warmup_runs_dropped || {};
    function runsNote(side) {
      var n = L[side + '_runs'], ses = L[side + '_sessions'], w = (wd[side] || []).reduce(function (a, b) { return a + (b || 0); }, 0);
      return n + ' run(s)' + (ses > 1 ? ' in ' + ses + ' sessions' : '') + (w ? '; ' + w + ' warm-up left out' : '');
    }
    cards.appendChild(stat('base p50', fmtMs(L.base_p50_ms), runsNote('base')));
    cards.appendChild(stat('new p50', fmtMs(L.new_p50_ms), runsNote('new')));
    cards.appendChild(stat('change of p50', fmtSigned(L.change_pct), isNum(L.base_p50_ms) && isNum(L.new_p50_ms) ? fmtSignedMs(L.new_p50_ms - L.base_p50_ms) + ' per run' : ''));
    cards.appendChild(stat('95% confidence interval', fmtSigned(ci[0]) + ' … ' + fmtSigned(ci[1]),
      D.verdict === 'inconclusive' ? (L.significant ? 'excludes 0 within each session, but within what two sessions of one program differ by'
        : (isNum(ci[0]) ? 'includes 0, but also changes larger than two sessions of one program differ by: too uncertain to call' : 'no interval: too few runs'))
        : (L.significant ? 'excludes 0: a real change' : 'a change this small is not distinguishable from noise')));
    if (isNum(L.session_allowance_pct)) cards.appendChild(stat('between-session allowance', '×' + (1 / (1 + L.session_allowance_pct / 100)).toFixed(2) + ' … ×' + (1 + L.session_allowance_pct / 100).toFixed(2), (L.base_sessions > 1 || L.new_sessions > 1 ? 'prior on the spread of the sessions' : 'one session per side: a change must exceed this or be localised')));
    var G = D.gate || {};
    if ((G.why || []).length) cards.appendChild(stat('CI gate', G.fail ? 'FAILED' : 'passed', 'see Gate and warnings'));
    box.appendChild(cards);
    diffCiChart(box, D, V.options || {});
    if (L.method) box.appendChild(el('p', { 'class': 'hint', text: 'Method: ' + L.method + '.' }));
  }

  function diffCiChart(box, D, opts) {
    var L = D.latency || {}, ci = L.ci_pct || [], lo = ci[0], hi = ci[1], pt = L.change_pct;
    if (!isNum(pt)) { box.appendChild(el('p', { 'class': 'muted', text: 'No latency change could be computed (a side has no timed run).' })); return; }
    var minEff = opts.min_effect_pct, thr = opts.fail_on_regression_pct, base = L.base_p50_ms;
    var col = VERDICT_COLORS[D.verdict] || DIFF_COLORS.none;
    box.appendChild(el('div', { 'class': 'chart-title', text: 'Latency change and its 95% confidence interval' }));
    box.appendChild(legend([[L.base_sessions > 1 || L.new_sessions > 1 ? '95% CI of the change (spread of the sessions)' : '95% CI of the change (bootstrap over runs)', col], ['within ±min effect: reported as no change', '#eaeef2']]
      .concat(isNum(thr) ? [['gate threshold (--fail-on-regression)', DIFF_COLORS.worse]] : [])));
    var chart = chartDiv(box);
    var vals = [0, pt];
    if (isNum(lo) && isNum(hi)) vals.push(lo, hi);
    if (isNum(minEff)) vals.push(-minEff, minEff);
    if (isNum(thr)) vals.push(thr);
    var a = Math.min.apply(null, vals), b = Math.max.apply(null, vals), pad = (b - a) * 0.12 || 1;
    a -= pad; b += pad;
    var W = chartWidth(chart), H = 176, padL = 40, padR = 40;
    var sx = function (v) { return padL + (W - padL - padR) * (v - a) / (b - a); };
    var svg = sv('svg', { width: W, height: H, role: 'img', 'class': 'ci-chart', 'aria-label': 'p50 latency change with its 95% confidence interval' });
    var yTop = 34, yBand0 = 40, yBand1 = 112, yMid = 78, yAxisB = 122;
    // Top axis: the same positions read as the new p50 latency they stand for (base p50 × (1 + change)).
    var ticks = niceTicks(a, b, Math.max(2, Math.floor(W / 100)));
    if (isNum(base) && base > 0) {
      var u = timeUnit(base * (1 + b / 100));
      var top = sv('g', { 'class': 'axis' });
      top.appendChild(sv('line', { x1: sx(a), x2: sx(b), y1: yTop, y2: yTop }));
      ticks.forEach(function (t) {
        if (t <= -100) return;
        top.appendChild(sv('line', { x1: sx(t), x2: sx(t), y1: yTop - 4, y2: yTop }));
        top.appendChild(sv('text', { x: sx(t), y: yTop - 7, 'text-anchor': 'middle', text: fmtNum(base * (1 + t / 100) * u.k, 3) }));
      });
      top.appendChild(sv('text', { 'class': 'axis-label', x: (sx(a) + sx(b)) / 2, y: 11, 'text-anchor': 'middle',
                                   text: 'new p50 latency at that change (' + u.name + '; base p50 = ' + fmtMs(base) + ')' }));
      svg.appendChild(top);
    }
    // Band of changes too small to call (--min-effect).
    if (isNum(minEff) && minEff > 0) {
      var band = sv('rect', { 'class': 'min-effect', x: sx(-minEff), y: yBand0, width: Math.max(1, sx(minEff) - sx(-minEff)), height: yBand1 - yBand0, fill: '#eaeef2' });
      withTip(band, function () { return ['changes within ±' + fmtNum(minEff) + '% are reported as no change (--min-effect)']; });
      svg.appendChild(band);
    }
    // Zero line.
    svg.appendChild(sv('line', { 'class': 'zero-line', x1: sx(0), x2: sx(0), y1: yBand0 - 2, y2: yBand1 + 2, stroke: '#1f2328', 'stroke-width': 1.5 }));
    svg.appendChild(sv('text', { x: sx(0) + 4, y: yBand0 + 11, 'class': 'muted-text', text: '0: no change' }));
    // Gate threshold.
    if (isNum(thr)) {
      svg.appendChild(sv('line', { 'class': 'gate-line', x1: sx(thr), x2: sx(thr), y1: yBand0 - 2, y2: yBand1 + 2, stroke: DIFF_COLORS.worse, 'stroke-width': 1.5, 'stroke-dasharray': '5 3' }));
      var left = sx(thr) > W - padR - 230;      // keep the label inside the chart
      svg.appendChild(sv('text', { x: sx(thr) + (left ? -4 : 4), y: yBand1 - 4, 'text-anchor': left ? 'end' : 'start', style: 'fill:' + DIFF_COLORS.worse,
                                   text: 'gate: fail when the low end > ' + fmtSigned(thr, isNum(thr) && thr % 1 ? 1 : 0) }));
    }
    var g = sv('g', { 'class': 'ci' });
    if (isNum(lo) && isNum(hi)) {
      g.appendChild(sv('rect', { 'class': 'ci-bar', x: sx(lo), y: yMid - 6, width: Math.max(2, sx(hi) - sx(lo)), height: 12, fill: col, opacity: 0.35 }));
      [lo, hi].forEach(function (v, k) {
        g.appendChild(sv('line', { x1: sx(v), x2: sx(v), y1: yMid - 11, y2: yMid + 11, stroke: col, 'stroke-width': 2 }));
        g.appendChild(sv('text', { x: sx(v), y: yMid + 25, 'text-anchor': k ? 'start' : 'end', text: fmtSigned(v) }));
      });
    }
    g.appendChild(sv('circle', { 'class': 'ci-point', cx: sx(pt), cy: yMid, r: 6, fill: col, stroke: '#fff', 'stroke-width': 1.5 }));
    g.appendChild(sv('text', { x: sx(pt), y: yMid - 14, 'text-anchor': 'middle', 'font-weight': 600, text: fmtSigned(pt) + ' (p50)' }));
    withTip(g, function () {
      return ['p50 latency change, new vs base: ' + fmtSigned(pt), isNum(lo) ? '95% CI ' + fmtSigned(lo) + ' … ' + fmtSigned(hi) + ' (bootstrap over runs)' : 'no interval (too few runs)',
              L.significant ? 'the interval excludes 0 and the change is at least the minimum effect: significant' : 'not significant'];
    });
    svg.appendChild(g);
    xAxis(svg, sx, a, b, yAxisB, 'change of Method::execute p50 latency, new vs base (%)', W, function (t) { return fmtSigned(t, Math.abs(b - a) < 10 ? 1 : 0); });
    chart.appendChild(svg);
  }

  // ---- runs: series overlaid, distributions --------------------------------------------------------
  function diffRuns(box, D, V) {
    var S = V.series || {}, WU = S.warmup || {}, SE = S.sessions || {};
    var sides = ['base', 'new'].map(function (name) {
      var vals = S[name] || [], warm = {};
      (WU[name] || []).forEach(function (i) { warm[i] = true; });
      var steady = vals.filter(function (v, i) { return isNum(v) && !warm[i]; }).sort(function (x, y) { return x - y; });
      return { name: name, vals: vals, warm: warm, nWarm: (WU[name] || []).length, steady: steady, sessions: SE[name] || [vals.length] };
    });
    var all = sides[0].vals.concat(sides[1].vals).filter(isNum);
    if (!all.length) { box.appendChild(el('p', { 'class': 'muted', text: 'The per-run latency of the two runs is not in this page.' })); return; }
    var anyWarm = sides.some(function (s) { return s.nWarm > 0; });
    var multi = sides.some(function (s) { return s.sessions.length > 1; });
    box.appendChild(el('div', { 'class': 'chart-title', text: 'Method::execute latency per run, base and new overlaid' }));
    box.appendChild(legend(sides.map(function (s) {
      return [s.name + ' (' + s.vals.length + ' runs' + (s.sessions.length > 1 ? ' in ' + s.sessions.length + ' sessions' : '') + ')', DIFF_COLORS[s.name]];
    }).concat([['dashed line: p50 of that side (steady runs)', '#57606a']])
      .concat(anyWarm ? [['orange ring: warm-up run, left out of the statistics', '#ef6c00']] : [])
      .concat(multi ? [['dotted line: a new session starts', '#afb8c1']] : [])));
    var chart = chartDiv(box);
    var N = Math.max(sides[0].vals.length, sides[1].vals.length);
    var lo = 0, hi = Math.max.apply(null, all) * 1.08;
    var W = chartWidth(chart), H = 260, padL = 64, padR = 130, padT = 10, padB = 46;
    var sx = function (i) { return padL + (W - padL - padR) * (N > 1 ? i / (N - 1) : 0.5); };
    var sy = function (v) { return padT + (H - padT - padB) * (1 - (v - lo) / (hi - lo || 1)); };
    var svg = sv('svg', { width: W, height: H, role: 'img', 'class': 'diff-series', 'aria-label': 'latency per run, base and new' });
    var grid = sv('g', { 'class': 'grid' });
    niceTicks(lo, hi, 5).forEach(function (t) { grid.appendChild(sv('line', { x1: padL, x2: W - padR, y1: sy(t), y2: sy(t) })); });
    svg.appendChild(grid);
    sides.forEach(function (s) {
      var at = 0;
      s.sessions.slice(0, -1).forEach(function (n) {
        at += n;
        svg.appendChild(sv('line', { 'class': 'session-start', x1: sx(at - 0.5), x2: sx(at - 0.5), y1: padT, y2: H - padB, stroke: DIFF_COLORS[s.name], opacity: 0.35, 'stroke-dasharray': '1 3' }));
      });
    });
    var r = N > 400 ? 1.6 : 2.8;
    var p50s = {};
    sides.forEach(function (s) {
      var color = DIFF_COLORS[s.name], g = sv('g', { 'class': 'runs-' + s.name });
      s.vals.forEach(function (v, i) {
        if (!isNum(v)) return;
        if (s.warm[i]) g.appendChild(sv('circle', { 'class': 'warmup', cx: sx(i), cy: sy(v), r: r + 2, fill: 'none', stroke: '#ef6c00', 'stroke-width': 1.6 }));
        g.appendChild(s.name === 'base' ? sv('circle', { cx: sx(i), cy: sy(v), r: r + 0.6, fill: 'none', stroke: color, 'stroke-width': 1.4 })
                                        : sv('circle', { cx: sx(i), cy: sy(v), r: r, fill: color, opacity: 0.85 }));
      });
      svg.appendChild(g);
      p50s[s.name] = quantile(s.steady, 0.5);
    });
    sides.forEach(function (s, k) {
      var m = p50s[s.name];
      if (!isNum(m)) return;
      svg.appendChild(sv('line', { 'class': 'p50-' + s.name, x1: padL, x2: W - padR, y1: sy(m), y2: sy(m), stroke: DIFF_COLORS[s.name], 'stroke-dasharray': '6 4', 'stroke-width': 1.4 }));
      var other = p50s[k ? 'base' : 'new'], dy = 4;
      if (isNum(other) && Math.abs(sy(m) - sy(other)) < 14) dy = (sy(m) < sy(other) || (sy(m) === sy(other) && k)) ? -4 : 12;
      svg.appendChild(sv('text', { x: W - padR + 4, y: sy(m) + dy, style: 'fill:' + DIFF_COLORS[s.name], text: s.name + ' p50 ' + fmtMs(m) }));
    });
    var hit = sv('rect', { x: padL, y: padT, width: W - padL - padR, height: H - padT - padB, fill: 'transparent' });
    hit.addEventListener('mousemove', function (ev) {
      var rect = svg.getBoundingClientRect();
      var i = Math.round((ev.clientX - rect.left - padL) / ((W - padL - padR) || 1) * (N - 1));
      i = Math.max(0, Math.min(N - 1, i));
      showTip(ev, ['run ' + i].concat(sides.map(function (s) {
        return s.name + ': ' + (i < s.vals.length ? fmtMs(s.vals[i]) + (s.warm[i] ? ' (warm-up, left out)' : '') : 'no such run');
      })));
    });
    hit.addEventListener('mouseleave', hideTip);
    svg.appendChild(hit);
    xAxis(svg, sx, 0, Math.max(N - 1, 1), H - padB + 4, (V.idSuffix ? 'run of this phase (its runs in Execute order' : 'run (Execute index, in order') + (multi ? '; sessions one after the other' : '') + ')', W - padL - padR, fmtInt);
    yAxisTime(svg, sy, lo, hi, padL, 'latency', H - padT - padB);
    chart.appendChild(svg);

    // Distributions of the steady runs: shared bins, base and new side by side in each bin.
    var steadyAll = sides[0].steady.concat(sides[1].steady);
    if (!steadyAll.length) return;
    box.appendChild(el('div', { 'class': 'chart-title', text: 'Distribution of Method::execute latency, base and new' + (anyWarm ? ' (steady runs; warm-up left out)' : '') }));
    var chart2 = chartDiv(box);
    var bins = Math.min(40, Math.max(8, Math.round(Math.sqrt(Math.max(sides[0].steady.length, sides[1].steady.length)) * 2)));
    var vmin = Math.min.apply(null, steadyAll), vmax = Math.max.apply(null, steadyAll);
    if (vmax === vmin) vmax = vmin + (vmin || 1) * 0.01;
    var bw = (vmax - vmin) / bins;
    var counts = sides.map(function (s) {
      var c = []; for (var k = 0; k < bins; k++) c.push(0);
      s.steady.forEach(function (v) { c[Math.min(bins - 1, Math.floor((v - vmin) / bw))]++; });
      return c;
    });
    var cmax = Math.max.apply(null, counts[0].concat(counts[1])) || 1;
    var H2 = 210;
    var svg2 = sv('svg', { width: W, height: H2, role: 'img', 'class': 'diff-hist', 'aria-label': 'latency distributions, base and new' });
    var hx = function (v) { return padL + (W - padL - padR) * (v - vmin) / (vmax - vmin); };
    var hy = function (c) { return padT + (H2 - padT - padB) * (1 - c / cmax); };
    for (var b = 0; b < bins; b++) {
      var x0 = hx(vmin + b * bw), x1 = hx(vmin + (b + 1) * bw), half = Math.max(0.5, (x1 - x0 - 1) / 2);
      sides.forEach(function (s, k) {
        var c = counts[k][b];
        if (!c) return;
        var rect = sv('rect', { 'class': 'hist-' + s.name, x: x0 + 0.5 + k * half, y: hy(c), width: half, height: hy(0) - hy(c), fill: DIFF_COLORS[s.name] });
        (function (b, name, c) {
          withTip(rect, function () { return [name + ': ' + c + ' run(s)', fmtMs(vmin + b * bw) + ' – ' + fmtMs(vmin + (b + 1) * bw)]; });
        })(b, s.name, c);
        svg2.appendChild(rect);
      });
    }
    sides.forEach(function (s) {
      var m = p50s[s.name];
      if (isNum(m)) svg2.appendChild(sv('line', { x1: hx(m), x2: hx(m), y1: padT, y2: H2 - padB, stroke: DIFF_COLORS[s.name], 'stroke-dasharray': '6 4', 'stroke-width': 1.4 }));
    });
    xAxisTime(svg2, hx, vmin, vmax, H2 - padB + 4, 'Method::execute latency', W - padL - padR);
    yAxis(svg2, hy, 0, cmax, padL, 'runs', H2 - padT - padB, fmtInt);
    chart2.appendChild(svg2);
    var t = el('table', { 'class': 'data diff-run-stats', style: 'width:auto' });
    var ks = ['p10', 'p50', 'p90', 'mean', 'min', 'max'];
    t.appendChild(el('tr', null, [el('th', { text: '' }), el('th', { text: 'steady runs' }), el('th', { text: 'warm-up left out' })]
      .concat(ks.map(function (k) { return el('th', { text: k }); }))));
    sides.forEach(function (s) {
      var v = s.steady;
      var st = { p10: quantile(v, 0.1), p50: quantile(v, 0.5), p90: quantile(v, 0.9), min: v[0], max: v[v.length - 1],
                 mean: v.length ? v.reduce(function (x, y) { return x + y; }, 0) / v.length : NaN };
      t.appendChild(el('tr', null, [el('th', { text: s.name }), el('td', { 'class': 'num', text: String(v.length) }),
                                    el('td', { 'class': 'num', text: String(s.nWarm) })]
        .concat(ks.map(function (k) { return el('td', { 'class': 'num ' + k, text: fmtMs(st[k]) }); }))));
    });
    box.appendChild(t);
  }

  // ---- placement changes ----------------------------------------------------------------------------
  var PLACEMENT_KIND = { moved_to_cpu: 'moved to the CPU (fallback)', moved_to_delegate: 'moved to a delegate',
                         new_cpu_op: 'new CPU op', removed_cpu_op: 'CPU op removed', partitions_changed: 'partitions changed' };
  function diffPlacement(box, D, V) {
    var list = (D.placement_changes || []).slice();
    var rank = { moved_to_cpu: 0, partitions_changed: 1, moved_to_delegate: 2, new_cpu_op: 3, removed_cpu_op: 4 };
    list.sort(function (x, y) { return (rank[x.kind] === undefined ? 9 : rank[x.kind]) - (rank[y.kind] === undefined ? 9 : rank[y.kind]); });
    if (!list.length) {
      box.appendChild(el('p', { 'class': 'ok-text', text: 'No placement changes: the same ops ran on the CPU and every backend has the same number of partitions.' }));
      return;
    }
    var moved = list.filter(function (c) { return c.kind === 'moved_to_cpu'; });
    if (moved.length) {
      var n = moved.reduce(function (s, c) { return s + (isNum(c.count) ? c.count : 1); }, 0);
      box.appendChild(el('p', { 'class': 'warn moved-callout', text: n + ' op(s) moved from a delegate to the CPU (fallback): ' +
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
  function diffBreakdown(box, D) {
    var parts = (D.breakdown || []).slice();
    if (!parts.length) { box.appendChild(el('p', { 'class': 'muted', text: 'No breakdown (no timed runs).' })); return; }
    // One statistic for the whole diff view: p50 per run over the steady runs (the verdict's runs).
    var L = D.latency || {};
    var groups = [{ kind: 'method', label: 'Method::execute (p50)', base_p50_ms: L.base_p50_ms, new_p50_ms: L.new_p50_ms,
                    change_ms: isNum(L.base_p50_ms) && isNum(L.new_p50_ms) ? L.new_p50_ms - L.base_p50_ms : NaN }]
      .concat(parts.map(function (b) { return Object.assign({ label: partLabel(b) }, b); }));
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
        if (k === 1 && isNum(gr.change_ms)) txt += '  (' + fmtSignedMs(gr.change_ms) + (isNum(gr.base_p50_ms) && gr.base_p50_ms > 0 && isNum(v) ? ', ' + fmtSigned((v / gr.base_p50_ms - 1) * 100) : '') + ')';
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
  function diffAttribution(box, D) {
    var at = D.attribution;
    box.appendChild(el('p', { 'class': 'hint', text: 'The change of the Method::execute p50 split into named parts, largest first: each part is the change of its own p50 per steady run (ops that moved between a delegate and the CPU, each DELEGATE_CALL, the other CPU ops together, framework overhead). p50s do not add, so what the parts leave is shown as unexplained. Red: slower, green: faster.' +
      (at.significant === false ? ' The whole change is not significant: the parts show where time moved between runs, not a cause, and no shares are given.' : '') }));
    var rows = [{ label: 'base p50', from: 0, to: at.base_ms, total: true }];
    var cum = at.base_ms;
    var parts = at.parts.slice(0, 12);
    var small = at.parts.slice(12).reduce(function (s, p) { return s + p.change_ms; }, 0);
    parts.forEach(function (p) { rows.push({ label: p.name, from: cum, to: cum + p.change_ms, share: p.share_pct, p: p }); cum += p.change_ms; });
    if (at.parts.length > 12) { rows.push({ label: (at.parts.length - 12) + ' smaller parts', from: cum, to: cum + small }); cum += small; }
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
      if (state.sort) {
        var k = state.sort, d = state.dir;
        list.sort(function (a, b) {
          var va = sortKey(a, k), vb = sortKey(b, k);
          var na = va === null || va === undefined || va === '', nb = vb === null || vb === undefined || vb === '';
          if (na || nb) return na === nb ? a.i - b.i : (na ? 1 : -1);
          if (typeof va === 'number' && typeof vb === 'number') return (va - vb) * d || a.i - b.i;
          return String(va).localeCompare(String(vb)) * d || a.i - b.i;
        });
      }
      Array.prototype.forEach.call(thead.querySelectorAll('th'), function (th) {
        if (th.getAttribute('data-key') === state.sort) th.setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending');
        else th.removeAttribute('aria-sort');
      });
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

  // ---- the whole comparison ------------------------------------------------------------------------------
  // V: {diff, series: {base: [ms], new: [ms]}, options: {min_effect_pct, fail_on_regression_pct, fail_on_fallback}, ops_total}.
  // asSections: one <section class="card"> per part (the diff page); else <div> parts under h3 (the report).
  function renderDiff(box, V, asSections) {
    var D = V.diff || {};
    if ((D.phases || []).length) { renderPhases(box, V, asSections); return; }
    var parts = diffParts(D);
    parts.push(['diff-gate', 'Gate and warnings', diffGate]);
    renderParts(box, D, V, asSections, parts, '', '');
  }
  function diffParts(D) {
    var parts = [['diff-verdict', 'Verdict', diffVerdict]];
    if (D.axes) parts.push(['diff-axes', 'Axes of change', diffAxes]);
    if (D.attribution && (D.attribution.parts || []).length) parts.push(['diff-attribution', 'Where the change came from', diffAttribution]);
    parts = parts.concat([['diff-runs', 'Runs: base and new', diffRuns],
                 ['diff-placement', 'Placement changes', diffPlacement], ['diff-breakdown', 'Where the time went: base vs new', diffBreakdown],
                 ['diff-ops', 'Per-op changes', diffOps]]);
    if (D.qnn && D.qnn.length) parts.push(['diff-qnn', 'QNN partitions: base vs new', diffQnn]);
    return parts;
  }
  // parts: [id, title, draw]; idSuffix / titlePrefix tell one phase's parts from another's.
  function renderParts(box, D, V, asSections, parts, idSuffix, titlePrefix) {
    parts.forEach(function (p) {
      var wrap = asSections ? el('section', { 'class': 'card', id: p[0] + idSuffix }, el('h2', { text: titlePrefix + p[1] }))
                            : el('div', { 'class': 'diff-part', id: p[0] + idSuffix }, el('h3', { text: titlePrefix + p[1] }));
      box.appendChild(wrap);
      try { p[2](wrap, D, V); } catch (e) {
        console.error('etscope diff: a part failed to render:', e);
        wrap.appendChild(el('p', { 'class': 'warn', text: 'This part failed to render (' + e + ').' }));
      }
    });
  }

  // ---- an LLM's phases: each compared with the same phase of the other side, never pooled ------------
  // The suffix of a phase's section ids (render.html gives it as anchor; the same rule otherwise).
  function phaseAnchor(e) { return e.anchor || '-' + String(e.name).replace(/[^A-Za-z0-9_-]/g, '_'); }
  function phaseMethods(e) {
    var m = e.methods || {}, b = m.base, n = m['new'];
    return (b === n || !(b && n)) ? (b || n || '') : b + ' → ' + n;
  }
  function fmtRate(x) { return isNum(x) ? (x < 100 ? fmtNum(x, 1) : Math.round(x).toLocaleString('en-US')) : '?'; }
  // What etscope llm says of the phase on each side: [label, 'base → new'], or null.
  function phaseLlmFigure(e) {
    var L = e.llm || {};
    function pair(k, f) { var v = L[k] || {}; return f(v.base) + ' → ' + f(v['new']); }
    if (L.ttft_ms) return ['time to first token', pair('ttft_ms', function (x) { return isNum(x) ? fmtMs(x) : '?'; })];
    if (L.tokens_per_s && isNum(L.tokens_per_s.base) && isNum(L.tokens_per_s['new'])) return ['decode tokens/s', pair('tokens_per_s', fmtRate)];
    if (L.runs_per_s && e.name === 'decode') return ['decode runs/s (tokens per run not known on both sides)', pair('runs_per_s', fmtRate)];
    return null;
  }
  function phaseLlm(e) { var f = phaseLlmFigure(e); return f ? f[0] + ' ' + f[1] : ''; }
  function phaseTable(box, D) {
    var t = el('table', { 'class': 'data diff-phases', style: 'width:auto' });
    t.appendChild(el('thead', null, el('tr', null, ['phase', 'method', 'runs base → new', 'p50 base → new', 'change', '95% CI', 'verdict', 'etscope llm']
      .map(function (h) { return el('th', { text: h }); }))));
    var tb = el('tbody');
    D.phases.forEach(function (e) {
      var L = e.latency || {}, ci = L.ci_pct || [], compared = !!e.latency;
      var name = el('td', null, compared ? el('a', { href: '#diff-verdict' + phaseAnchor(e), text: String(e.name) }) : String(e.name));
      tb.appendChild(el('tr', { 'class': 'phase-row verdict-' + e.verdict, 'data-phase': String(e.name) }, name,
        el('td', { text: phaseMethods(e) }),
        el('td', { 'class': 'num', text: compared ? L.base_runs + ' → ' + L.new_runs : 'only in ' + e.on }),
        el('td', { 'class': 'num', text: compared ? fmtMs(L.base_p50_ms) + ' → ' + fmtMs(L.new_p50_ms) : '' }),
        el('td', { 'class': 'num change', text: compared ? fmtSigned(L.change_pct) : '' }),
        el('td', { 'class': 'num', text: compared ? (isNum(ci[0]) ? fmtSigned(ci[0]) + ' … ' + fmtSigned(ci[1]) : 'no interval') : '' }),
        el('td', null, el('span', { 'class': 'verdict-pill phase-verdict', style: 'background:' + (VERDICT_COLORS[e.verdict] || '#8c959f'),
                                    text: e.verdict === 'not_compared' ? 'not compared' : verdictText(e.verdict) })),
        el('td', { text: phaseLlm(e) })));
    });
    t.appendChild(tb);
    box.appendChild(el('div', { 'class': 'table-wrap' }, t));
  }
  // The non-latency axes of a phase-split diff: changed when changed in any compared phase.
  function phaseAxes(D) {
    var out = {};
    (D.phases || []).forEach(function (e) {
      var A = e.axes || {};
      Object.keys(A).forEach(function (k) { if (!out[k] || A[k].verdict === 'changed') out[k] = A[k]; });
    });
    return out;
  }
  function renderPhases(box, V, asSections) {
    var D = V.diff || {}, S = (V.series || {}).phases || {};
    var head = function (wrap) {
      wrap.appendChild(el('div', { 'class': 'verdict-line' },
        el('span', { 'class': 'verdict-pill', style: 'background:' + (VERDICT_COLORS[D.verdict] || '#59636e'), text: verdictText(D.verdict) }),
        axisPills({ axes: phaseAxes(D) }),
        el('span', { 'class': 'verdict-text headline', text: D.headline || '' })));
      wrap.appendChild(el('p', { 'class': 'hint', text: 'These runs are an LLM\'s phases: each side\'s phases are found on its own runs (as etscope llm finds them) and each phase is compared with the same phase of the other side, never pooled: a prefill is not a slow decode. The verdict above is ' + (D.verdict_basis || '') + '.' }));
      phaseTable(wrap, D);
      (D.phases || []).filter(function (e) { return !e.latency; }).forEach(function (e) {
        (e.reasons || []).forEach(function (r) { wrap.appendChild(el('p', { 'class': 'warn', text: r })); });
      });
    };
    renderParts(box, D, V, asSections, [['diff-verdict', 'Verdict, phase by phase', head]], '', '');
    D.phases.forEach(function (e) {
      if (!e.latency) return;
      var PV = { diff: e, series: S[e.name] || null, options: V.options, ops_total: e.ops_total, idSuffix: phaseAnchor(e) };
      var m = phaseMethods(e), llm = phaseLlmFigure(e);
      renderParts(box, e, PV, asSections, diffParts(e), phaseAnchor(e), e.name + (m ? ' (' + m + ')' : '') + ' · ');
      var cards = llm && box.querySelector('#diff-verdict' + phaseAnchor(e) + ' .cards');
      if (cards) cards.appendChild(stat(llm[0], llm[1], 'base → new (etscope llm of each side)'));
    });
    renderParts(box, D, V, asSections, [['diff-gate', 'Gate and warnings (every phase)', diffGate]], '', '');
  }
