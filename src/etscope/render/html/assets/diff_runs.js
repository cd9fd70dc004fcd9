/* etscope diff view, the runs of both sides: per-run latency overlaid, the distributions and the steady-run statistics,
 * every figure from the analysis (analysis.diff.view.RunSeries); the script only draws. Inlined after diff.js in the same function scope
 * (render.html.DIFF_SCRIPTS); data from input files only through textContent or setAttribute. */

  // ---- runs: series overlaid, distributions --------------------------------------------------------
  // V.series (analysis.diff.view.RunSeries): base / new ms per run (every step.base-th / step.new-th run
  // when a side has more than the page holds: runs.base / runs.new say how many there are), sessions, warm-up indices,
  // stats (p10 p50 p90 mean min max of the steady runs, every one of them; p50 is the verdict's) and
  // histogram (edges, runs per bin per side).
  function diffRuns(box, D, V) {
    var S = V.series || {}, WU = S.warmup || {}, SE = S.sessions || {}, ST = S.stats || {}, RN = S.runs || {}, SP = S.step || {};
    var sides = ['base', 'new'].map(function (name) {
      var vals = S[name] || [], warm = {};
      (WU[name] || []).forEach(function (i) { warm[i] = true; });
      return { name: name, vals: vals, warm: warm, stats: ST[name] || {}, total: isNum(RN[name]) ? RN[name] : vals.length,
               step: SP[name] || 1, sessions: SE[name] || [vals.length] };
    });
    var all = sides[0].vals.concat(sides[1].vals).filter(isNum);
    if (!all.length) { box.appendChild(el('p', { 'class': 'muted', text: 'The per-run latency of the two runs is not in this page.' })); return; }
    var anyWarm = sides.some(function (s) { return s.stats.warmup_runs > 0; });
    var multi = sides.some(function (s) { return s.sessions.length > 1; });
    var cut = sides.filter(function (s) { return s.step > 1; });
    box.appendChild(el('div', { 'class': 'chart-title', text: 'Method::execute latency per run, base and new overlaid' }));
    box.appendChild(legend(sides.map(function (s) {
      return [s.name + ' (' + s.total + ' runs' + (s.sessions.length > 1 ? ' in ' + s.sessions.length + ' sessions' : '') + ')', DIFF_COLORS[s.name]];
    }).concat([['dashed line: p50 of that side (steady runs, the verdict\'s)', '#57606a']])
      .concat(anyWarm ? [['orange ring: warm-up run, left out of the statistics', '#ef6c00']] : [])
      .concat(multi ? [['dotted line: a new session starts', '#afb8c1']] : [])));
    if (cut.length) box.appendChild(el('p', { 'class': 'hint runs-cut', text: cut.map(function (s) { return s.name + ': ' + s.vals.length + ' of its ' + s.total + ' runs drawn (one in ' + s.step + ', every session)'; }).join('; ') + '; the p50 lines, the distribution and the statistics below are over every steady run.' }));
    var chart = chartDiv(box);
    var N = Math.max(sides[0].total, sides[1].total);
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
    sides.forEach(function (s) {
      var color = DIFF_COLORS[s.name], g = sv('g', { 'class': 'runs-' + s.name });
      s.vals.forEach(function (v, k) {
        var i = k * s.step;          // the run's index among all the side's runs
        if (!isNum(v)) return;
        if (s.warm[i]) g.appendChild(sv('circle', { 'class': 'warmup', cx: sx(i), cy: sy(v), r: r + 2, fill: 'none', stroke: '#ef6c00', 'stroke-width': 1.6 }));
        g.appendChild(s.name === 'base' ? sv('circle', { cx: sx(i), cy: sy(v), r: r + 0.6, fill: 'none', stroke: color, 'stroke-width': 1.4 })
                                        : sv('circle', { cx: sx(i), cy: sy(v), r: r, fill: color, opacity: 0.85 }));
      });
      svg.appendChild(g);
    });
    sides.forEach(function (s, k) {
      var m = s.stats.p50;
      if (!isNum(m)) return;
      svg.appendChild(sv('line', { 'class': 'p50-' + s.name, x1: padL, x2: W - padR, y1: sy(m), y2: sy(m), stroke: DIFF_COLORS[s.name], 'stroke-dasharray': '6 4', 'stroke-width': 1.4 }));
      var other = sides[1 - k].stats.p50, dy = 4;
      if (isNum(other) && Math.abs(sy(m) - sy(other)) < 14) dy = (sy(m) < sy(other) || (sy(m) === sy(other) && k)) ? -4 : 12;
      svg.appendChild(sv('text', { 'class': 'p50-label', x: W - padR + 4, y: sy(m) + dy, style: 'fill:' + DIFF_COLORS[s.name], text: s.name + ' p50 ' + fmtMs(m) }));
    });
    var hit = sv('rect', { x: padL, y: padT, width: W - padL - padR, height: H - padT - padB, fill: 'transparent' });
    hit.addEventListener('mousemove', function (ev) {
      var rect = svg.getBoundingClientRect();
      var i = Math.round((ev.clientX - rect.left - padL) / ((W - padL - padR) || 1) * (N - 1));
      i = Math.max(0, Math.min(N - 1, i));
      showTip(ev, ['run ' + i].concat(sides.map(function (s) {
        var k = Math.round(i / s.step), j = k * s.step;       // the nearest run drawn
        return s.name + ': ' + (k < s.vals.length ? (j !== i ? 'run ' + j + ': ' : '') + fmtMs(s.vals[k]) + (s.warm[j] ? ' (warm-up, left out)' : '') : 'no such run');
      })));
    });
    hit.addEventListener('mouseleave', hideTip);
    svg.appendChild(hit);
    xAxis(svg, sx, 0, Math.max(N - 1, 1), H - padB + 4, (V.idSuffix ? 'run of this phase (its runs in Execute order' : 'run (Execute index, in order') + (multi ? '; sessions one after the other' : '') + ')', W - padL - padR, fmtInt);
    yAxisTime(svg, sy, lo, hi, padL, 'latency', H - padT - padB);
    chart.appendChild(svg);
    runsHistogram(box, sides, S.histogram, anyWarm, W, padL, padR, padT, padB);
    runsTable(box, sides);
  }

  // Distributions of the steady runs: the analysis' shared bins, base and new side by side in each bin.
  function runsHistogram(box, sides, HG, anyWarm, W, padL, padR, padT, padB) {
    if (!HG || !(HG.edges || []).length) return;
    box.appendChild(el('div', { 'class': 'chart-title', text: 'Distribution of Method::execute latency, base and new' + (anyWarm ? ' (steady runs; warm-up left out)' : '') }));
    var chart2 = chartDiv(box);
    var edges = HG.edges, bins = edges.length - 1, vmin = edges[0], vmax = edges[bins];
    var counts = [HG.base || [], HG['new'] || []];
    var cmax = Math.max.apply(null, counts[0].concat(counts[1])) || 1;
    var H2 = 210;
    var svg2 = sv('svg', { width: W, height: H2, role: 'img', 'class': 'diff-hist', 'aria-label': 'latency distributions, base and new' });
    var hx = function (v) { return padL + (W - padL - padR) * (v - vmin) / (vmax - vmin); };
    var hy = function (c) { return padT + (H2 - padT - padB) * (1 - c / cmax); };
    for (var b = 0; b < bins; b++) {
      var x0 = hx(edges[b]), x1 = hx(edges[b + 1]), half = Math.max(0.5, (x1 - x0 - 1) / 2);
      sides.forEach(function (s, k) {
        var c = counts[k][b];
        if (!c) return;
        var rect = sv('rect', { 'class': 'hist-' + s.name, x: x0 + 0.5 + k * half, y: hy(c), width: half, height: hy(0) - hy(c), fill: DIFF_COLORS[s.name] });
        (function (b, name, c) {
          withTip(rect, function () { return [name + ': ' + c + ' run(s)', fmtMs(edges[b]) + ' – ' + fmtMs(edges[b + 1])]; });
        })(b, s.name, c);
        svg2.appendChild(rect);
      });
    }
    sides.forEach(function (s) {
      var m = s.stats.p50;
      if (isNum(m)) svg2.appendChild(sv('line', { x1: hx(m), x2: hx(m), y1: padT, y2: H2 - padB, stroke: DIFF_COLORS[s.name], 'stroke-dasharray': '6 4', 'stroke-width': 1.4 }));
    });
    xAxisTime(svg2, hx, vmin, vmax, H2 - padB + 4, 'Method::execute latency', W - padL - padR);
    yAxis(svg2, hy, 0, cmax, padL, 'runs', H2 - padT - padB, fmtInt);
    chart2.appendChild(svg2);
  }

  // The steady runs' statistics of each side, as the analysis computed them.
  function runsTable(box, sides) {
    var t = el('table', { 'class': 'data diff-run-stats', style: 'width:auto' });
    var ks = ['p10', 'p50', 'p90', 'mean', 'min', 'max'];
    t.appendChild(el('tr', null, [el('th', { text: '' }), el('th', { text: 'steady runs' }), el('th', { text: 'warm-up left out' })]
      .concat(ks.map(function (k) { return el('th', { text: k }); }))));
    sides.forEach(function (s) {
      var st = s.stats;
      t.appendChild(el('tr', { 'data-side': s.name }, [el('th', { text: s.name }), el('td', { 'class': 'num steady', text: String(st.steady_runs) }),
                                    el('td', { 'class': 'num warmup', text: String(st.warmup_runs) })]
        .concat(ks.map(function (k) { return el('td', { 'class': 'num ' + k, text: fmtMs(st[k]) }); }))));
    });
    box.appendChild(t);
  }
