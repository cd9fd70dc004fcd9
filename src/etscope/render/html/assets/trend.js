/* etscope trend page: one card per series (model x SoC x phase): the chart (p50 per build, its
 * 95% interval as a whisker, the runs' IQR as a box, change points marked and numbered), the
 * change points explained in words, and the per-build table. Everything is decided in Python
 * (render/trend_html.py: units, round ticks, which builds carry a label, the words); this script
 * only draws, writing data through textContent and attributes. Inlined after common.js. */

  function trendChart(s, G) {
    var n = s.builds.length;
    var w = G.width, h = G.pad_t + G.height + s.pad_b, x0 = s.pad_l, x1 = w - G.pad_r, y0 = G.pad_t, y1 = y0 + G.height;
    var lo = s.ticks[0], hi = s.ticks[s.ticks.length - 1];
    function X(i) { return n > 1 ? x0 + (x1 - x0) * (i + 0.5) / n : (x0 + x1) / 2; }
    function Y(v) {
      if (s.log) return y1 - (y1 - y0) * (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo));
      return y1 - (y1 - y0) * (v - lo) / (hi - lo);
    }
    var svg = sv('svg', { width: w, height: h, viewBox: '0 0 ' + w + ' ' + h, role: 'img',
                          'aria-label': 'p50 latency per build, ' + s.unit + ': ' + s.title });
    var grid = sv('g', { 'class': 'grid' }), axis = sv('g', { 'class': 'axis y-axis' });
    s.ticks.forEach(function (t, j) {
      grid.appendChild(sv('line', { x1: x0, x2: x1, y1: Y(t), y2: Y(t) }));
      axis.appendChild(sv('text', { 'class': 'y-tick', x: x0 - 6, y: Y(t) + 4, 'text-anchor': 'end', text: s.tick_labels[j] }));
    });
    axis.appendChild(sv('line', { x1: x0, x2: x0, y1: y0, y2: y1 }));
    axis.appendChild(sv('line', { x1: x0, x2: x1, y1: y1, y2: y1 }));
    axis.appendChild(sv('text', { 'class': 'axis-label', x: 14, y: (y0 + y1) / 2, 'text-anchor': 'middle',
                                  transform: 'rotate(-90 14 ' + ((y0 + y1) / 2) + ')', text: s.axis_title }));
    svg.appendChild(grid);
    svg.appendChild(axis);
    var changed = {};
    s.markers.forEach(function (m) { changed[m.index] = m; });
    var xl = sv('g', { 'class': 'axis x-axis' });
    s.labelled.forEach(function (i) {
      var b = s.builds[i], yy = y1 + 12;
      var t = sv('text', { 'class': 'x-label' + (changed[i] ? ' changed' : ''), 'data-index': i, x: X(i), y: yy,
                           'text-anchor': 'end', transform: 'rotate(-45 ' + X(i) + ' ' + yy + ')', text: b.short });
      t.appendChild(sv('title', { text: b.build }));
      xl.appendChild(t);
      xl.appendChild(sv('line', { x1: X(i), x2: X(i), y1: y1, y2: y1 + 4 }));
    });
    svg.appendChild(xl);
    // change points under the data: a dashed line and a numbered flag above the plot
    var marks = sv('g', { 'class': 'markers' });
    s.markers.forEach(function (m) {
      var g = sv('g', { 'class': 'marker ' + m.kind, 'data-index': m.index });
      g.appendChild(sv('line', { x1: X(m.index), x2: X(m.index), y1: y0 - 14, y2: y1 }));
      var label = m.n + ' ' + m.headline;
      var wBox = 8 + 6.5 * label.length;
      var bx = Math.min(Math.max(X(m.index) - wBox / 2, 2), w - wBox - 2);
      g.appendChild(sv('rect', { x: bx, y: y0 - 32, width: wBox, height: 18, rx: 3 }));
      g.appendChild(sv('text', { 'class': 'marker-label', x: bx + wBox / 2, y: y0 - 19, 'text-anchor': 'middle', text: label }));
      withTip(g, function () { return [m.build].concat(m.explain); });
      marks.appendChild(g);
    });
    svg.appendChild(marks);
    var data = sv('g', { 'class': 'points' });
    var bw = Math.max(2, Math.min(14, (x1 - x0) / Math.max(n, 1) * 0.5));
    s.builds.forEach(function (b, i) {
      if (!isNum(b.p50)) return;
      var g = sv('g', { 'class': 'build', 'data-index': i });
      if (isNum(b.q1) && isNum(b.q3))
        g.appendChild(sv('rect', { 'class': 'iqr', x: X(i) - bw / 2, width: bw, y: Y(b.q3), height: Math.max(1, Y(b.q1) - Y(b.q3)) }));
      if (isNum(b.lo) && isNum(b.hi)) {
        g.appendChild(sv('line', { 'class': 'whisker', x1: X(i), x2: X(i), y1: Y(b.lo), y2: Y(b.hi) }));
        g.appendChild(sv('line', { 'class': 'whisker', x1: X(i) - 3, x2: X(i) + 3, y1: Y(b.lo), y2: Y(b.lo) }));
        g.appendChild(sv('line', { 'class': 'whisker', x1: X(i) - 3, x2: X(i) + 3, y1: Y(b.hi), y2: Y(b.hi) }));
      }
      g.appendChild(sv('circle', { 'class': 'p50', cx: X(i), cy: Y(b.p50), r: 3.5 }));
      withTip(g, function () {
        return [b.build, 'p50 ' + b.p50_text + ' (' + b.sessions + ' session(s), ' + b.runs + ' runs)',
                'runs IQR ' + b.iqr_text, '95% interval of the p50 ' + b.ci_text, 'vs previous build ' + b.vs_prev_text,
                b.test_text].concat(b.anchor ? ['click: the summary stored for this build'] : []);
      });
      if (b.anchor) {      // the point opens the build's stored summary (below the table)
        var a = sv('a', { 'class': 'build-link', href: '#' + b.anchor, 'data-anchor': b.anchor,
                          'aria-label': 'stored summary of build ' + b.build });
        a.appendChild(g);
        data.appendChild(a);
      } else {
        data.appendChild(g);
      }
    });
    var pts = s.builds.map(function (b, i) { return isNum(b.p50) ? X(i) + ',' + Y(b.p50) : null; }).filter(function (p) { return p; });
    svg.appendChild(sv('polyline', { 'class': 'line', points: pts.join(' ') }));
    svg.appendChild(data);
    return svg;
  }

  function trendLegend(s) {
    return el('div', { 'class': 'legend' },
      el('span', null, el('span', { 'class': 'sw', style: 'background:#1565c0;border-radius:6px' }), 'p50 of the build'),
      el('span', null, el('span', { 'class': 'whisker-sw' }), 'whisker: 95% interval of that p50 (from the between-session spread of the series, ' + s.spread + ')'),
      el('span', null, el('span', { 'class': 'iqr-sw' }), 'box: the runs\u2019 interquartile range (p25 to p75)'),
      el('span', null, el('span', { 'class': 'sw', style: 'background:#c62828' }), 'regression'),
      el('span', null, el('span', { 'class': 'sw', style: 'background:#2e7d32' }), 'improvement'),
      el('span', null, el('span', { 'class': 'sw', style: 'background:#6a1b9a' }), 'placement or op change only'));
  }

  function trendTable(s) {
    // Columns of facts shown only when some build of the series has one (no empty columns).
    var cols = [
      { label: 'build', cell: function (b) {
          return b.anchor ? el('td', { 'class': 'name' }, el('a', { 'class': 'build-link', href: '#' + b.anchor, text: b.build,
                                                                     title: 'the summary stored for this build' }))
                          : el('td', { 'class': 'name', text: b.build });
        } },
      { label: 'order', cell: function (b) { return el('td', { text: b.order_key }); } },
      { label: 'sessions', cell: function (b) { return el('td', { 'class': 'num', text: String(b.sessions) }); } },
      { label: 'runs', cell: function (b) { return el('td', { 'class': 'num', text: String(b.runs) }); } },
      { label: 'p50', cell: function (b) { return el('td', { 'class': 'num', text: b.p50_text }); } },
      { label: 'runs IQR', cell: function (b) { return el('td', { 'class': 'num', text: b.iqr_text }); } },
      { label: '95% interval of p50', cell: function (b) { return el('td', { 'class': 'num', text: b.ci_text }); } },
      { label: 'vs previous build', cell: function (b) { return el('td', { 'class': 'num', text: b.vs_prev_text }); } },
      { label: 'test vs baseline', cell: function (b) { return el('td', { 'class': 'verdict', text: b.test_text }); } },
      { label: 'ops per backend', key: 'placement', cell: function (b) { return el('td', { text: b.placement }); } },
      { label: 'recorded facts changed', key: 'facts', cell: function (b) { return el('td', { text: b.facts }); } },
      { label: 'change point', key: 'marker', cell: function (b) {
          return el('td', null, b.marker ? el('a', { href: '#' + s.id + '-change-' + b.marker, text: '#' + b.marker }) : '');
        } }
    ].filter(function (c) { return !c.key || s.builds.some(function (b) { return b[c.key]; }); });
    var table = el('table', { 'class': 'data builds', id: s.id + '-builds' });
    table.appendChild(el('thead', null, el('tr', null, cols.map(function (c) { return el('th', { scope: 'col', text: c.label }); }))));
    var tbody = el('tbody');
    s.builds.forEach(function (b) {
      tbody.appendChild(el('tr', { 'class': 'v-' + b.verdict.replace(/[^a-z]/g, '-'), 'data-anchor': b.anchor },
                           cols.map(function (c) { return c.cell(b); })));
    });
    table.appendChild(tbody);
    return el('div', { 'class': 'table-wrap' }, table);
  }

  function summaryTable(cols, rows, cls) {
    var t = el('table', { 'class': 'data ' + cls });
    t.appendChild(el('thead', null, el('tr', null, cols.map(function (c) {
      return el('th', { scope: 'col', 'class': c.num ? 'num' : null, text: c.label });
    }))));
    t.appendChild(el('tbody', null, rows.map(function (r) {
      return el('tr', null, cols.map(function (c) { return el('td', { 'class': c.num ? 'num' : null, text: r[c.key] }); }));
    })));
    return el('div', { 'class': 'table-wrap' }, t);
  }

  // A build's stored summary: shown when its anchor is the page's target (CSS :target), so a link
  // to trend.html#build-... opens it too. Figures worded in Python (render/trend_summary_card.py).
  function summaryCard(s, b) {
    var c = b.summary;
    var card = el('article', { 'class': 'build-summary', id: c.anchor, 'aria-label': 'stored summary of build ' + c.build });
    card.appendChild(el('h4', null, 'Stored summary of build ', el('b', { text: c.build }),
                        el('span', { 'class': 'hint', text: ' \u00b7 file ' + c.file + ', ' + c.sessions })));
    if (!c.headline) {
      card.appendChild(el('p', { 'class': 'warn summary-note', text: c.note }));
    } else {
      if (c.phase) card.appendChild(el('p', { 'class': 'hint', text: 'The ' + c.phase + ' of this file, as etscope summary gives it.' }));
      card.appendChild(el('p', { 'class': 'summary-headline', text: c.headline }));
      card.appendChild(el('p', { 'class': 'hint', text: 'These are the file\u2019s own figures over every run, as etscope summary ' +
        'printed them when it was collected; the chart\u2019s p50 drops warm-up runs and pools the build\u2019s sessions.' }));
      c.facts.forEach(function (f) { card.appendChild(el('p', { 'class': 'summary-fact', text: f })); });
      card.appendChild(el('h5', { text: 'Where Method::execute\u2019s time goes (' + WORDS.mean_per_run + ')' }));
      card.appendChild(summaryTable([{ label: 'part', key: 'part' }, { label: 'calls/run', key: 'calls', num: true },
        { label: 'mean', key: 'mean', num: true }, { label: 'p50', key: 'p50', num: true },
        { label: WORDS.share_of_mean, key: 'share', num: true }], c.parts, 'summary-parts'));
      if (c.ops.length) {
        card.appendChild(el('h5', { text: 'Largest instructions (share of the mean latency)' }));
        card.appendChild(summaryTable([{ label: 'instr', key: 'instr', num: true }, { label: 'kind', key: 'kind' },
          { label: 'name', key: 'name' }, { label: 'ran on', key: 'where' }, { label: 'mean', key: 'mean', num: true },
          { label: 'share', key: 'share', num: true }], c.ops, 'summary-ops'));
      }
      if (c.ops_more) card.appendChild(el('p', { 'class': 'hint', text: c.ops_more }));
      c.warnings.forEach(function (w) { card.appendChild(el('p', { 'class': 'warn', text: 'warning: ' + w })); });
      if (c.warnings_more) card.appendChild(el('p', { 'class': 'hint', text: c.warnings_more }));
    }
    card.appendChild(el('p', { 'class': 'hint' }, 'Whole summary: ', el('code', { text: c.command }), ' · ',
                        el('a', { href: '#' + s.id + '-builds', text: 'back to the builds' })));
    return card;
  }

  function trendSeries(s, G) {
    var card = el('section', { 'class': 'card trend-series', id: s.id });
    card.appendChild(el('h2', { text: s.title }));
    card.appendChild(el('p', { 'class': 'hint', text: s.summary }));
    card.appendChild(trendLegend(s));
    if (!s.builds.some(function (b) { return isNum(b.p50); })) {
      card.appendChild(el('p', { 'class': 'warn', text: 'No timed run in this series: nothing to draw (see the notes below).' }));
    } else {
      card.appendChild(el('div', { 'class': 'chart' }, trendChart(s, G)));
    }
    card.appendChild(el('p', { 'class': 'hint label-rule', text: 'x axis: ' + s.label_rule + '.' }));
    card.appendChild(el('h3', { text: s.markers.length ? 'Change points' : 'No change point' }));
    if (s.markers.length) {
      card.appendChild(el('ol', { 'class': 'changes' }, s.markers.map(function (m) {
        return el('li', { id: s.id + '-change-' + m.n, 'class': 'change ' + m.kind, value: m.n },
          el('b', { text: m.build }), el('ul', null, m.explain.map(function (x) { return el('li', { text: x }); })));
      })));
    } else {
      card.appendChild(el('p', { 'class': 'hint', text: 'No significant change in p50 latency, no op change and no placement change.' }));
    }
    card.appendChild(el('h3', { text: 'Builds' }));
    card.appendChild(el('p', { 'class': 'hint summaries-hint', text: s.summaries_hint }));
    card.appendChild(trendTable(s));
    var cards = s.builds.filter(function (b) { return b.summary; });
    if (cards.length) card.appendChild(el('div', { 'class': 'build-summaries' }, cards.map(function (b) { return summaryCard(s, b); })));
    s.notes.forEach(function (x) { card.appendChild(el('p', { 'class': 'hint note', text: 'note: ' + x })); });
    return card;
  }

  try {
    var main = document.getElementById('trend-main');
    if (!DATA.series.length) main.appendChild(el('section', { 'class': 'card' }, el('p', { text: 'No runs in the dataset for this selection.' })));
    DATA.series.forEach(function (s) { main.appendChild(trendSeries(s, DATA.geometry)); });
  } catch (e) {
    console.error('etscope trend: the page failed to render:', e);
  }
  // The build whose stored summary is open: its table row and chart point marked too.
  function markTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    Array.prototype.forEach.call(document.querySelectorAll('.trend-series .is-target'), function (n) { n.classList.remove('is-target'); });
    if (!id || id.indexOf('build-') !== 0) return;
    Array.prototype.forEach.call(document.querySelectorAll('.trend-series [data-anchor]'), function (n) {
      if (n.getAttribute('data-anchor') === id) n.classList.add('is-target');
    });
  }
  window.addEventListener('hashchange', markTarget);
  markTarget();
  document.body.setAttribute('data-rendered', 'true');
