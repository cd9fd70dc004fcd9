/* etscope diff view: draws one comparison of two runs (render.html.diff_view_data: the diff as `diff --json`
 * writes it, the per-run latency of both sides with its statistics, the axes). Used by the diff page
 * (diff_page.js, whole page) and by the report's "Compared with base" section (report.js). Inlined after
 * common.js inside one function scope, followed by its parts: diff_runs.js, diff_parts.js, diff_ops.js.
 * Every statistic comes from the analysis; this script draws and formats, it computes none.
 * Data from input files is only ever written with textContent or setAttribute (never innerHTML). */

  var DIFF_COLORS = { base: '#8c959f', 'new': '#0969da', worse: '#c62828', better: '#2e7d32', none: '#59636e' };
  var STATUS_RANK = { 'new': 0, removed: 1, slower: 2, faster: 3, uncertain: 4, same: 5, not_compared: 6 };
  var STATUS_COLORS = { 'new': '#1565c0', removed: '#6e7781', slower: '#c62828', faster: '#2e7d32', uncertain: '#9a6700', same: '#afb8c1', not_compared: '#8250df' };
  var AXIS_COLORS = { changed: '#c62828', regression: '#c62828', improvement: '#2e7d32', inconclusive: '#9a6700', no_change: '#59636e', unknown: '#8c959f', not_comparable: '#8250df' };
  var AXIS_ORDER = ['latency', 'placement', 'program', 'environment'];
  // Non-latency axes that changed (the analysis' changed_axes; of a phase-split diff, its merged axes):
  // a page never shows "no change" alone while one did.
  function changedAxes(D) {
    return (D.changed_axes || []).filter(function (a) { return a !== 'latency'; });
  }
  function axisPills(names) {
    return names.map(function (a) {
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
  // A card that also carries its value as the analysis gave it (data-value), for tests and tools.
  function valueCard(card, name, v) { card.setAttribute('data-stat', name); card.setAttribute('data-value', String(v)); return card; }
  function chartDiv(box) { var c = el('div', { 'class': 'chart' }); box.appendChild(c); return c; }
  function verdictText(v) { return v ? String(v).replace(/_/g, ' ') : 'unknown'; }

  // ---- verdict: latency change and its 95% interval on a % axis ------------------------------------
  function diffVerdict(box, D, V) {
    var L = D.latency || {}, ci = L.ci_pct || [];
    var moved = changedAxes(D).length > 0;
    var head = el('div', { 'class': 'verdict-line' },
      el('span', { 'class': 'verdict-pill', style: 'background:' + (VERDICT_COLORS[D.verdict] || '#59636e'),
                   text: D.verdict === 'no_change' && moved ? 'no latency change' : verdictText(D.verdict) }),
      axisPills(changedAxes(D)),
      el('span', { 'class': 'verdict-text', text: 'Method::execute p50 ' + fmtMs(L.base_p50_ms) + ' (base, ' + L.base_runs + ' runs) → ' +
        fmtMs(L.new_p50_ms) + ' (new, ' + L.new_runs + ' runs): ' + fmtSigned(L.change_pct) + ' (95% CI ' + fmtSigned(ci[0]) + ' … ' + fmtSigned(ci[1]) + ')' }));
    box.appendChild(head);
    if (D.headline && (moved || D.verdict === 'not_comparable')) box.appendChild(el('p', { 'class': 'verdict-text headline', text: D.headline }));
    if ((D.reasons || []).length) box.appendChild(el('ul', { 'class': 'reasons' }, D.reasons.map(function (r) { return el('li', { text: r }); })));
    var cards = el('div', { 'class': 'cards' });
    var ST = (V.series || {}).stats || {}, F = V.figures || {};
    function runsNote(side) {
      var n = L[side + '_runs'], ses = L[side + '_sessions'], w = (ST[side] || {}).warmup_runs;
      return n + ' run(s)' + (ses > 1 ? ' in ' + ses + ' sessions' : '') + (w ? '; ' + w + ' warm-up left out' : '');
    }
    cards.appendChild(valueCard(stat('base p50', fmtMs(L.base_p50_ms), runsNote('base')), 'base-p50', L.base_p50_ms));
    cards.appendChild(valueCard(stat('new p50', fmtMs(L.new_p50_ms), runsNote('new')), 'new-p50', L.new_p50_ms));
    cards.appendChild(stat('change of p50', fmtSigned(L.change_pct), isNum(F.p50_change_ms) ? fmtSignedMs(F.p50_change_ms) + ' per run' : ''));
    cards.appendChild(stat('95% confidence interval', fmtSigned(ci[0]) + ' … ' + fmtSigned(ci[1]),
      D.verdict === 'inconclusive' ? (L.significant ? 'excludes 0 within each session, but within what two sessions of one program differ by'
        : (isNum(ci[0]) ? 'includes 0, but also changes larger than two sessions of one program differ by: too uncertain to call' : 'no interval: too few runs'))
        : (L.significant ? 'excludes 0: a real change' : 'a change this small is not distinguishable from noise')));
    if (F.allowance_ratio) cards.appendChild(stat('between-session allowance', '×' + F.allowance_ratio[0].toFixed(2) + ' … ×' + F.allowance_ratio[1].toFixed(2), (L.base_sessions > 1 || L.new_sessions > 1 ? 'prior on the spread of the sessions' : 'one session per side: a change must exceed this or be localised')));
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


  // ---- the whole comparison ------------------------------------------------------------------------------
  // V: render.html.diff_view_data: {diff, ops_total, series, phases: [{anchor, ops_total}], phase_series: {name: series}, axes,
  //     figures, phase_figures: {name: figures}, options: {min_effect_pct, fail_on_regression_pct, fail_on_fallback}, inputs}.
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
  function phaseAnchor(P, k) { return P[k].anchor; }
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
  function phaseTable(box, D, P) {
    var t = el('table', { 'class': 'data diff-phases', style: 'width:auto' });
    t.appendChild(el('thead', null, el('tr', null, ['phase', 'method', 'runs base → new', 'p50 base → new', 'change', '95% CI', 'verdict', 'etscope llm']
      .map(function (h) { return el('th', { text: h }); }))));
    var tb = el('tbody');
    D.phases.forEach(function (e, k) {
      var L = e.latency || {}, ci = L.ci_pct || [], compared = !!e.latency;
      var name = el('td', null, compared ? el('a', { href: '#diff-verdict' + phaseAnchor(P, k), text: String(e.name) }) : String(e.name));
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
  // The non-latency axes of a phase-split diff that changed in any compared phase (V.axes: merged by the analysis).
  function phaseChangedAxes(V) {
    var A = V.axes || {};
    return AXIS_ORDER.slice(1).filter(function (a) { return A[a] && A[a].verdict === 'changed'; });
  }
  function renderPhases(box, V, asSections) {
    var D = V.diff || {}, S = V.phase_series || {}, P = V.phases || [];
    var head = function (wrap) {
      wrap.appendChild(el('div', { 'class': 'verdict-line' },
        el('span', { 'class': 'verdict-pill', style: 'background:' + (VERDICT_COLORS[D.verdict] || '#59636e'), text: verdictText(D.verdict) }),
        axisPills(phaseChangedAxes(V)),
        el('span', { 'class': 'verdict-text headline', text: D.headline || '' })));
      wrap.appendChild(el('p', { 'class': 'hint', text: 'These runs are an LLM\'s phases: each side\'s phases are found on its own runs (as etscope llm finds them) and each phase is compared with the same phase of the other side, never pooled: a prefill is not a slow decode. The verdict above is ' + (D.verdict_basis || '') + '.' }));
      phaseTable(wrap, D, P);
      (D.phases || []).filter(function (e) { return !e.latency; }).forEach(function (e) {
        (e.reasons || []).forEach(function (r) { wrap.appendChild(el('p', { 'class': 'warn', text: r })); });
      });
    };
    renderParts(box, D, V, asSections, [['diff-verdict', 'Verdict, phase by phase', head]], '', '');
    D.phases.forEach(function (e, k) {
      if (!e.latency) return;
      var PV = { diff: e, series: S[e.name] || null, figures: (V.phase_figures || {})[e.name] || null, options: V.options,
                 ops_total: P[k].ops_total, idSuffix: phaseAnchor(P, k) };
      var m = phaseMethods(e), llm = phaseLlmFigure(e);
      renderParts(box, e, PV, asSections, diffParts(e), phaseAnchor(P, k), e.name + (m ? ' (' + m + ')' : '') + ' · ');
      var cards = llm && box.querySelector('#diff-verdict' + phaseAnchor(P, k) + ' .cards');
      if (cards) cards.appendChild(stat(llm[0], llm[1], 'base → new (etscope llm of each side)'));
    });
    renderParts(box, D, V, asSections, [['diff-gate', 'Gate and warnings (every phase)', diffGate]], '', '');
  }
