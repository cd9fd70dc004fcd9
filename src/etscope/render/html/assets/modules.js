  /* etscope report: time per source module (inlined after common.js; draws DATA.modules, the
   * analysis.ops.modules tree). A tree table: click a row's triangle to open or close it. */
  // Not the placement colours (the "where" column uses those).
  var HOW_COLORS = { 'measured': '#37474f', 'matched by kind and order': '#00897b', 'partition': '#b0bec5', 'estimated': '#f9a825' };
  var HOW_SHORT = { 'measured': 'measured', 'matched by kind and order': 'matched by kind and order',
                    'partition': 'partition as a whole', 'estimated': 'estimated' };

  function renderModules() {
    var box = document.getElementById('modules-body');
    if (!box || !DATA.modules) return;
    var M = DATA.modules, rows = M.modules || [];
    var execUs = M.method_execute_us || 0;
    var kids = {}, byPath = {};
    rows.forEach(function (r) { byPath[r.path] = r; if (r.parent !== null && r.parent !== undefined) (kids[r.parent] = kids[r.parent] || []).push(r); });
    var open = {};
    // Open the tree level by level while at most 30 rows show.
    (function () {
      var shown = 1;
      for (var depth = 0; depth < 12; depth++) {
        var level = rows.filter(function (r) { return r.depth === depth && (kids[r.path] || []).length; });
        var add = level.reduce(function (s, r) { return s + kids[r.path].length; }, 0);
        if (!level.length || (depth > 0 && shown + add > 30)) break;
        level.forEach(function (r) { open[r.path] = true; });
        shown += add;
      }
    })();
    box.appendChild(el('p', { 'class': 'hint', text: 'Method::execute ' + fmtUs(execUs) + ' per run (mean) = modules ' +
      fmtUs(M.attributed_us) + ' + framework overhead ' + fmtUs(M.framework_overhead_us) + '. Times are inclusive (a module holds its sub-modules).' }));
    var places = [];
    rows.forEach(function (r) { Object.keys(r.placement_us || {}).forEach(function (p) { if (places.indexOf(p) < 0) places.push(p); }); });
    box.appendChild(el('div', { 'class': 'legend-row' }, el('b', { text: 'where: ' }),
      legend(places.map(function (p) { return [placementLabel(p), placementColor(p)]; }))));
    box.appendChild(el('div', { 'class': 'legend-row' }, el('b', { text: 'how: ' }),
      legend(Object.keys(M.how || {}).map(function (h) { return [M.how[h], HOW_COLORS[h] || '#777']; }))));
    (M.estimates || []).forEach(function (e) { box.appendChild(el('p', { 'class': 'hint', text: e.text })); });
    var table = el('table', { 'class': 'data modules', id: 'modules-table' });
    table.appendChild(el('thead', null, el('tr', null, ['module', 'type', 'total per run', 'share', 'self', 'where', 'how'].map(function (h) {
      return el('th', { text: h });
    }))));
    var tbody = el('tbody');
    table.appendChild(tbody);
    box.appendChild(el('div', { 'class': 'table-wrap' }, table));
    var maxUs = rows.length ? rows[0].total_us || 0 : 0;

    function bar(parts, total, width) {
      var svg = sv('svg', { width: width, height: 10, 'class': 'minibar' }), x = 0;
      parts.forEach(function (p) {
        if (!(p[1] > 0) || !(total > 0)) return;
        var w = width * p[1] / total;
        svg.appendChild(sv('rect', { x: x, y: 0, width: w, height: 10, fill: p[2] }));
        x += w;
      });
      return svg;
    }
    function draw() {
      hideTip();
      tbody.textContent = '';
      (function walk(r) {
        var ch = kids[r.path] || [];
        var tr = el('tr', { 'class': 'depth' + Math.min(r.depth, 9) });
        var toggle = ch.length ? el('span', { 'class': 'twisty', text: open[r.path] ? '▾ ' : '▸ ', role: 'button' }) : el('span', { 'class': 'twisty', text: '  ' });
        var name = el('td', { 'class': 'name', style: 'padding-left:' + (6 + 16 * r.depth) + 'px' }, toggle, r.name);
        if (ch.length) {
          name.style.cursor = 'pointer';
          name.addEventListener('click', function () { open[r.path] = !open[r.path]; draw(); });
        }
        var how = r.how_us || {}, est = (how.estimated || 0) / (r.total_us || 1);
        var howParts = Object.keys(HOW_COLORS).map(function (h) { return [h, how[h] || 0, HOW_COLORS[h]]; });
        var where = Object.keys(r.placement_us || {}).map(function (p) { return [p, r.placement_us[p], placementColor(p)]; });
        var totalCell = el('td', { 'class': 'num' }, bar([['t', r.total_us, '#455a64']], maxUs, 70), ' ', fmtUs(r.total_us));
        var howCell = el('td', null, bar(howParts, r.total_us, 80), est > 0.005 ? ' est. ' + fmtPct(est) : '');
        tr.appendChild(name);
        tr.appendChild(el('td', { 'class': 'type', text: r.type ? String(r.type).split('.').pop() : '' }));
        tr.appendChild(totalCell);
        tr.appendChild(el('td', { 'class': 'num', text: execUs ? fmtPct(r.total_us / execUs) : '' }));
        tr.appendChild(el('td', { 'class': 'num', text: r.self_us === 0 ? '0 µs' : fmtUs(r.self_us) }));
        tr.appendChild(el('td', null, bar(where, r.total_us, 60)));
        tr.appendChild(howCell);
        withTip(tr, function () {
          return [(r.path || '(model)') + (r.type ? ' (' + r.type + ')' : ''), fmtUs(r.total_us) + ' per run inclusive, ' + fmtUs(r.self_us) + ' in its own nodes',
                  r.nodes + ' graph operator node(s)',
                  'where: ' + where.map(function (p) { return placementLabel(p[0]) + ' ' + fmtUs(p[1]); }).join(', '),
                  'how: ' + howParts.filter(function (p) { return p[1] > 0; }).map(function (p) { return HOW_SHORT[p[0]] + ' ' + fmtUs(p[1]); }).join(', ')];
        });
        tbody.appendChild(tr);
        if (open[r.path]) ch.forEach(walk);
      })(rows[0]);
    }
    if (rows.length) draw();
  }
