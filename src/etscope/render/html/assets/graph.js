  /* etscope report: the ETRecord graph view (inlined after common.js; draws DATA.graph).
   * Layout: nodes are ranked by longest path and laid out left to right; the ranks wrap into bands
   * as wide as the page (a chain of ops reads like lines of text). Modules are collapsed into one box
   * (dashed frame) per module call; small graphs open level by level up to MAX_BOXES boxes. */
  var GRAPH_MAX_BOXES = 40;

  function renderGraph() {
    var box = document.getElementById('graph-body');
    if (!box || !DATA.graph) return;
    var G = DATA.graph, C = {};
    G.columns.forEach(function (c, i) { C[c] = i; });
    var types = G.module_types || {};
    var nodes = G.nodes.map(function (r, i) {
      return { i: i, name: r[C.name], op: r[C.op], target: r[C.target], module: r[C.module] || '',
               inst: r[C.module_instance] || '', inputs: r[C.inputs] || [], placement: r[C.placement],
               time: r[C.time_us], est: r[C.estimated], how: r[C.time_how], why: r[C.untimed_why],
               source: r[C.source], kind: r[C.input_kind], instr: r[C.instruction_id], hmx: r[C.hmx], hvx: r[C.hvx] };
    });
    var bySnr = !!(NUM && NUM.kind === 'compare');    // numerics.js: a comparison was given
    var state = { expanded: {}, weights: false, colour: bySnr ? 'snr' : 'placement' };
    function hidden(n) { return n.op === 'placeholder' && !state.weights && n.kind && n.kind !== 'user_input'; }
    function prefixes(m) {
      if (!m) return [];
      var parts = m.split('.'), out = [];
      for (var k = 1; k <= parts.length; k++) out.push(parts.slice(0, k).join('.'));
      return out;
    }
    // Last part of a module instance path (with its parent when it is an index: layers.0), and
    // "(call 2)" for a module's second call.
    function modLabel(m) {
      var parts = m.split('.'), last = parts.pop(), at = last.indexOf('@');
      var name = at < 0 ? last : last.slice(0, at);
      if (/^\d+$/.test(name) && parts.length) name = parts[parts.length - 1].replace(/@\d+$/, '') + '.' + name;
      return at < 0 ? name : name + ' (call ' + (Number(last.slice(at + 1)) + 1) + ')';
    }
    // aten.convolution.default -> convolution; the full target is in the tooltip.
    function shortOp(t) { return String(t).replace(/^aten\./, '').replace(/\.default$/, ''); }
    function shortType(m) { var t = types[m]; return t ? String(t).split('.').pop() : ''; }
    // Operator nodes per module instance (and its sub-modules): a module of one node is drawn as that node.
    var modCount = {};
    nodes.forEach(function (n) { if (!hidden(n)) prefixes(n.inst).forEach(function (p) { modCount[p] = (modCount[p] || 0) + 1; }); });
    function unitOf(n) {
      var ps = prefixes(n.inst);
      for (var k = 0; k < ps.length; k++) if (!state.expanded[ps[k]] && modCount[ps[k]] > 1) return 'm:' + ps[k];
      return 'n:' + n.i;
    }
    function units() {
      var map = {}, list = [];
      nodes.forEach(function (n) {
        if (hidden(n)) return;
        var u = unitOf(n), U = map[u];
        if (!U) {
          U = map[u] = { id: u, first: n.i, nodes: [], module: u.charAt(0) === 'm' ? u.slice(2) : null };
          list.push(U);
        }
        U.nodes.push(n);
      });
      var seen = {}, edges = [];
      nodes.forEach(function (n) {
        if (hidden(n)) return;
        var v = unitOf(n);
        n.inputs.forEach(function (i) {
          var src = nodes[i];
          if (!src || hidden(src)) return;
          var u = unitOf(src);
          if (u === v || seen[u + '>' + v]) return;
          seen[u + '>' + v] = true;
          edges.push([map[u], map[v]]);
        });
      });
      return { list: list, edges: edges };
    }
    // Default: open modules level by level while the view stays small.
    (function autoExpand() {
      for (var level = 1; level < 16; level++) {
        var trial = Object.assign({}, state.expanded), any = false;
        Object.keys(modCount).forEach(function (m) { if (m.split('.').length === level && modCount[m] > 1) { trial[m] = true; any = true; } });
        if (!any) break;
        var saved = state.expanded;
        state.expanded = trial;
        if (units().list.length > GRAPH_MAX_BOXES) { state.expanded = saved; break; }
      }
    })();

    var controls = el('div', { 'class': 'toolbar' });
    var chips = el('div', { 'class': 'chips' });
    var wrap = el('div', { 'class': 'graph-wrap' });
    var info = el('span', { 'class': 'count' });
    var wToggle = el('input', { type: 'checkbox' });
    var colourSel = el('select', { 'aria-label': 'colour nodes by' },
      [el('option', { value: 'placement', text: 'colour: placement (bar: time)' }), el('option', { value: 'time', text: 'colour: time per run' }),
       bySnr ? el('option', { value: 'snr', text: 'colour: SNR vs reference (lowest over runs)' }) : null]);
    colourSel.value = state.colour;
    controls.appendChild(el('button', { type: 'button', text: 'collapse all', onclick: function () { state.expanded = {}; draw(); } }));
    controls.appendChild(el('button', { type: 'button', text: 'expand all', onclick: function () {
      Object.keys(modCount).forEach(function (m) { state.expanded[m] = true; }); draw(); } }));
    controls.appendChild(colourSel);
    controls.appendChild(el('label', null, wToggle, ' show weights / buffers'));
    controls.appendChild(info);
    wToggle.addEventListener('change', function () { state.weights = wToggle.checked; draw(); });
    colourSel.addEventListener('change', function () { state.colour = colourSel.value; draw(); });
    var legendBox = el('div');
    box.appendChild(legendBox);
    box.appendChild(controls);
    box.appendChild(chips);
    box.appendChild(wrap);

    var maxNodeUs = Math.max.apply(null, [0].concat(nodes.map(function (n) { return isNum(n.time) ? n.time : 0; })));
    function unitTime(U) {
      var t = 0, any = false, est = false, hows = {}, untimed = 0;
      U.nodes.forEach(function (n) {
        if (isNum(n.time)) { t += n.time; any = true; est = est || n.est; hows[n.how || '?'] = true; }
        else if (n.op === 'call_function' && n.placement) untimed++;
      });
      return { us: any ? t : null, est: est, hows: Object.keys(hows), untimed: untimed };
    }
    function unitPlacements(U) {
      var c = {};
      U.nodes.forEach(function (n) { if (n.op === 'call_function') { var k = n.placement || ''; c[k] = (c[k] || 0) + 1; } });
      return c;
    }
    // Time colour: light to dark red on a square-root scale of the largest unit's time; grey when untimed.
    function heat(us, maxUs) {
      if (!isNum(us) || !(maxUs > 0)) return '#eaeef2';
      var f = Math.sqrt(Math.max(0, us) / maxUs), a = [255, 241, 236], b = [139, 0, 21];
      return 'rgb(' + a.map(function (x, k) { return Math.round(x + (b[k] - x) * f); }).join(',') + ')';
    }
    function darkText(fill) {
      var m = /rgb\((\d+),(\d+),(\d+)\)/.exec(fill);
      return fill === '#eaeef2' || (m && (0.299 * m[1] + 0.587 * m[2] + 0.114 * m[3]) > 150);
    }
    function timeLabel(tm, sum) {
      if (!isNum(tm.us)) return '';
      return (sum ? 'Σ ' : '') + (tm.us === 0 ? '0 µs' : fmtUs(tm.us)) + (tm.est ? ' (est.)' : (tm.hows.indexOf('matched by kind and order') >= 0 ? ' (matched)' : ''));
    }

    function draw() {
      hideTip();
      var V = units(), list = V.list, index = {};
      list.forEach(function (U, k) { index[U.id] = k; });
      var rank = list.map(function () { return 0; }), preds = list.map(function () { return []; });
      V.edges.forEach(function (e) { var a = index[e[0].id], b = index[e[1].id]; if (e[0].first < e[1].first) preds[b].push(a); });
      var order = list.map(function (_, k) { return k; }).sort(function (a, b) { return list[a].first - list[b].first; });
      order.forEach(function (k) { preds[k].forEach(function (p) { rank[k] = Math.max(rank[k], rank[p] + 1); }); });
      var ranks = [];
      order.forEach(function (k) { (ranks[rank[k]] = ranks[rank[k]] || []).push(k); });
      var BW = 180, BH = 46, GX = 34, GY = 12, BAND_GAP = 40, pad = 12;
      var width = Math.max(BW + 2 * pad, (wrap.clientWidth || 1200) - 4);
      var perBand = Math.max(1, Math.floor((width - 2 * pad + GX) / (BW + GX)));
      // Boxes widen to fill the band (up to 280 px) when the ranks do not fill the page.
      BW = Math.max(BW, Math.min(280, Math.floor((width - 2 * pad + GX) / Math.min(perBand, Math.max(1, ranks.length))) - GX));
      var chars = Math.floor((BW - 12) / 6.6);
      var maxUnitUs = Math.max.apply(null, [0].concat(list.map(function (U) { return unitTime(U).us || 0; })));
      var pos = [], y0 = pad, H = pad;
      for (var b0 = 0; b0 < ranks.length; b0 += perBand) {
        var bandH = 0;
        for (var r = b0; r < Math.min(ranks.length, b0 + perBand); r++) {
          var row = ranks[r] || [];
          // Barycentre of the predecessors' heights, one pass.
          row.sort(function (a, c) {
            function bc(k) { var ps = preds[k].filter(function (p) { return pos[p]; }); return ps.length ? ps.reduce(function (s, p) { return s + pos[p].y; }, 0) / ps.length : list[k].first; }
            return bc(a) - bc(c);
          });
          row.forEach(function (k, j) { pos[k] = { x: pad + (r - b0) * (BW + GX), y: y0 + j * (BH + GY), band: b0 / perBand }; });
          bandH = Math.max(bandH, row.length * (BH + GY) - GY);
        }
        y0 += bandH + BAND_GAP;
        H = y0 - BAND_GAP + pad;
      }
      var W = Math.min(width, pad * 2 + Math.min(perBand, ranks.length) * (BW + GX) - GX);
      var svg = sv('svg', { width: W, height: H, role: 'img', 'aria-label': 'model graph' });
      svg.appendChild(sv('defs', null, sv('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto' },
        sv('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#8c959f' }))));
      var eg = sv('g');
      V.edges.forEach(function (e) {
        var a = pos[index[e[0].id]], b = pos[index[e[1].id]];
        if (!a || !b) return;
        var d, back = e[0].first > e[1].first;
        if (a.band === b.band && b.x > a.x) {
          var x1 = a.x + BW, y1 = a.y + BH / 2, x2 = b.x, y2 = b.y + BH / 2, mx = (x1 + x2) / 2;
          d = 'M' + x1 + ',' + y1 + ' C' + mx + ',' + y1 + ' ' + mx + ',' + y2 + ' ' + (x2 - 1) + ',' + y2;
        } else {
          var sx = a.x + BW / 2, sy = a.y + BH, tx = b.x + BW / 2, ty = b.y, my = (sy + ty) / 2;
          if (ty <= sy) { sy = a.y; ty = b.y + BH; my = Math.min(sy, ty) - 20; }
          d = 'M' + sx + ',' + sy + ' C' + sx + ',' + my + ' ' + tx + ',' + my + ' ' + tx + ',' + (ty + (ty > sy ? -1 : 1));
        }
        eg.appendChild(sv('path', { 'class': 'edge' + (back ? ' back' : ''), d: d, 'marker-end': 'url(#arrow)' }));
      });
      svg.appendChild(eg);
      list.forEach(function (U, k) {
        var p = pos[k];
        var g = sv('g', { 'class': 'unit' + (U.module ? ' module' : ''), transform: 'translate(' + p.x + ',' + p.y + ')' });
        var tm = unitTime(U), label1, label2, fill = null;
        var n = U.nodes[0];
        if (state.colour === 'snr') {
          var sn = unitSnr(U);
          fill = snrColour(sn.snr, sn.diverged);
          g.appendChild(sv('rect', { 'class': 'snr' + (sn.diverged ? ' diverged' : ''), x: 0, y: 0, width: BW, height: BH, rx: U.module ? 0 : 4, fill: fill }));
        } else if (state.colour === 'time') {
          fill = heat(tm.us, maxUnitUs);
          g.appendChild(sv('rect', { x: 0, y: 0, width: BW, height: BH, rx: U.module ? 0 : 4, fill: fill }));
        } else if (U.module) {
          var counts = unitPlacements(U), keys = Object.keys(counts), tot = keys.reduce(function (s, x) { return s + counts[x]; }, 0) || 1, x = 0;
          keys.sort().forEach(function (pk) {
            var w = BW * counts[pk] / tot;
            g.appendChild(sv('rect', { x: x, y: 0, width: w, height: BH, fill: placementColor(pk || null), stroke: 'none' }));
            x += w;
          });
          if (!keys.length) g.appendChild(sv('rect', { x: 0, y: 0, width: BW, height: BH, fill: COLORS.none, stroke: 'none' }));
        } else {
          g.appendChild(sv('rect', { x: 0, y: 0, width: BW, height: BH, rx: 4, fill: placementColor(n.op === 'call_function' ? n.placement : null) }));
        }
        if (state.colour === 'placement' && isNum(tm.us) && maxUnitUs > 0) {
          // Time bar along the bottom: the unit's time against the slowest box shown.
          g.appendChild(sv('rect', { 'class': 'timebar', x: 0, y: BH - 5, width: Math.max(1.5, BW * tm.us / maxUnitUs), height: 5 }));
        }
        if (U.module) {
          g.appendChild(sv('rect', { 'class': 'frame', x: 0, y: 0, width: BW, height: BH, fill: 'none' }));
          label1 = '▸ ' + modLabel(U.module) + (shortType(U.module) ? ' · ' + shortType(U.module) : '');
          label2 = U.nodes.length + ' nodes' + (isNum(tm.us) ? ' · ' + timeLabel(tm, true) : '');
          g.addEventListener('click', function () { state.expanded[U.module] = true; draw(); });
        } else {
          label1 = n.op === 'call_function' ? shortOp(n.target || n.name) : (n.op === 'placeholder' ? 'input: ' + n.name : n.op);
          var where = n.inst ? modLabel(n.inst) + ' · ' : '';
          label2 = where + (isNum(tm.us) ? timeLabel(tm, false) : (n.op === 'call_function' ? (n.placement && n.placement !== 'cpu' ? 'no own time' : n.name) : ''));
        }
        var tcls = fill && darkText(fill) ? 'dark' : null;
        g.appendChild(sv('text', { x: 7, y: 18, text: trunc(label1, chars - 2), 'font-weight': 600, 'class': tcls }));
        g.appendChild(sv('text', { x: 7, y: 35, text: trunc(label2, chars), 'class': tcls }));
        withTip(g, function () { return U.module ? moduleTip(U, tm) : nodeTip(n); });
        svg.appendChild(g);
      });
      wrap.textContent = '';
      wrap.appendChild(svg);
      chips.textContent = '';
      Object.keys(state.expanded).filter(function (m) { return state.expanded[m] && modCount[m] > 1; }).sort().forEach(function (m) {
        chips.appendChild(el('span', { 'class': 'chip', title: 'collapse ' + m, text: '▾ ' + m + ' ✕', onclick: function () {
          Object.keys(state.expanded).forEach(function (k) { if (k === m || k.indexOf(m + '.') === 0) delete state.expanded[k]; });
          draw();
        } }));
      });
      var collapsed = list.filter(function (U) { return U.module; }).length;
      info.textContent = list.length + ' boxes for ' + nodes.length + ' graph nodes (' + G.graph + '); ' +
        collapsed + ' collapsed module' + (collapsed === 1 ? '' : 's');
      drawLegend(maxUnitUs);
    }
    // Lowest SNR over a unit's nodes (numerics.js), and whether any of them diverged.
    function unitSnr(U) {
      var snr = null, diverged = false, nonfinite = false;
      U.nodes.forEach(function (n) {
        var s = numericsSnrOfNode(n.name);
        if (s === undefined) return;
        diverged = diverged || s.diverged;
        if (s.snr === null) nonfinite = true;     // NaN/Inf values: drawn as diverged
        else if (snr === null || s.snr < snr) snr = s.snr;
      });
      return { snr: nonfinite ? null : snr, diverged: diverged };
    }
    function drawLegend(maxUnitUs) {
      legendBox.textContent = '';
      if (state.colour === 'snr') {
        legendBox.appendChild(snrLegend());
        legendBox.appendChild(el('p', { 'class': 'hint', text: 'SNR of each node\'s logged output against the reference (lowest over runs; ' +
          'a collapsed module: lowest over its nodes); see the Numerics section. ' + thresholdText(NUM.thresholds) }));
        return;
      }
      if (state.colour === 'time') {
        legendBox.appendChild(legend([['fastest', heat(0, 1)], ['slowest shown: ' + fmtUs(maxUnitUs), heat(1, 1)], ['no own time', '#eaeef2'],
                                      ['dashed frame: collapsed module (click to open)', '#ffffff']]));
        return;
      }
      var pls = [];
      nodes.forEach(function (n) { if (n.placement && pls.indexOf(n.placement) < 0) pls.push(n.placement); });
      legendBox.appendChild(legend(pls.map(function (p) { return [placementLabel(p), placementColor(p)]; })
        .concat([[placementLabel(null), COLORS.none], ['bar: time per run (of the slowest box)', '#ffd54f'],
                 ['dashed frame: collapsed module (click to open)', '#ffffff']])));
    }
    // Inclusive module times of the module tree (per module path; a reused module's calls together).
    var treeUs = {};
    ((DATA.modules || {}).modules || []).forEach(function (m) { treeUs[m.path] = m.total_us; });
    function moduleTip(U, tm) {
      var c = unitPlacements(U), path = U.module.indexOf('@') < 0 ? U.module : null;
      return ['module ' + U.module + (types[U.module] ? ' (' + types[U.module] + ')' : ''), U.nodes.length + ' graph nodes',
              path !== null && isNum(treeUs[path]) ? 'module total ' + fmtUs(treeUs[path]) + ' per run (all its time, see Time per module)' : '',
              isNum(tm.us) ? 'Σ ' + fmtUs(tm.us) + ' per run over its nodes with their own time (' + tm.hows.join(', ') + ')' : 'no node with its own time',
              tm.untimed ? tm.untimed + ' delegated node(s) without their own time: their time stays with the partition (see the module tree)' : '',
              'ops by placement: ' + Object.keys(c).map(function (k) { return placementLabel(k || null) + ' ' + c[k]; }).join(', '), 'click to open'];
    }
    function nodeTip(n) {
      return [n.name, n.target ? 'op: ' + n.target : n.op, 'placement: ' + placementLabel(n.op === 'call_function' ? n.placement : null),
              n.instr !== null && n.instr !== undefined ? 'instruction #' + n.instr : '',
              isNum(n.time) ? 'time: ' + fmtUs(n.time) + ' per run (' + (n.how || 'measured') + ')' : (n.why ? 'no own time: ' + n.why : ''),
              (n.hmx !== null && n.hmx !== undefined) || (n.hvx !== null && n.hvx !== undefined) ? 'HMX ' + flagMark(n.hmx) + '  HVX ' + flagMark(n.hvx) : '',
              n.module ? 'module: ' + n.module : '', n.source ? 'source: ' + n.source : '', snrTip(n.name)];
    }
    function snrTip(name) {
      var s = numericsSnrOfNode(name);
      if (s === undefined) return '';
      return 'SNR vs reference: ' + (s.snr === null ? 'NaN/Inf' : (s.snr >= NUM.snr_cap_db ? 'equal' : s.snr.toFixed(1) + ' dB')) + (s.diverged ? ' (diverged)' : '');
    }
    function flagMark(v) { return v === true ? '✓' : (v === false ? '–' : '?'); }
    draw();
    var lastWidth = wrap.clientWidth;
    // Drawn again for another phase (phases.js), this graph leaves the page: its listener goes with it.
    window.addEventListener('resize', function onResize() {
      if (!wrap.isConnected) { window.removeEventListener('resize', onResize); return; }
      if (Math.abs(wrap.clientWidth - lastWidth) > 40) { lastWidth = wrap.clientWidth; draw(); }
    });
  }
