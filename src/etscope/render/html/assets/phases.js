  /* etscope report: the phases of an LLM's runs (inlined after common.js, before report.js). When the
   * runs form several phases (DATA.phases: prefill and decode, each with its own view), every section
   * but the LLM one draws the selected phase's view, never the runs pooled: `DATA` becomes the whole
   * file's data with that phase's view over it, and the phase's sections are drawn again when the
   * selection changes. The LLM section (every phase side by side) is drawn once, from the whole file.
   * Without phases the sections are drawn as they always were. */
  var FILE_DATA = DATA;                 // the blob as read: the whole file's data
  var PHASES = FILE_DATA.phases || null;

  // One section: draw() fills its boxes (ids) from DATA; a failing one must not hide the others.
  function drawSection(draw) {
    try { draw(); } catch (e) {
      console.error('etscope report: a section failed to render:', e);
    }
  }

  // The page's data with phase `name`'s view in place of the whole file's.
  function phaseData(name) {
    var k = PHASES.rows.map(function (r) { return r.name; }).indexOf(name), out = {};
    Object.keys(FILE_DATA).forEach(function (key) { out[key] = FILE_DATA[key]; });
    var view = PHASES.views[k] || {};
    Object.keys(view).forEach(function (key) { out[key] = view[key]; });
    return out;
  }

  // The whole file's data for the sections that show every phase side by side: without the pooled
  // Method::execute percentiles (the runs chart's table would show them; the phases table has each phase's).
  function wholeFileData() {
    var out = {}, summary = {};
    Object.keys(FILE_DATA).forEach(function (key) { out[key] = FILE_DATA[key]; });
    Object.keys(FILE_DATA.summary || {}).forEach(function (key) { if (key !== 'runs') summary[key] = FILE_DATA.summary[key]; });
    out.summary = summary;
    return out;
  }

  // Sections drawn from the selected phase whose data that phase does not have are hidden, with their link.
  var PHASE_OPTIONAL = { qnn: 'qnn', modules: 'modules', graph: 'graph' };

  function showPhase(name, sections) {
    DATA = phaseData(name);
    hideTip();
    Object.keys(PHASE_OPTIONAL).forEach(function (key) {
      var id = PHASE_OPTIONAL[key], sec = document.getElementById(id), absent = !DATA[key];
      if (sec) sec.hidden = absent;
      Array.prototype.forEach.call(document.querySelectorAll('#nav a[href="#' + id + '"]'), function (a) { a.hidden = absent; });
    });
    sections.forEach(function (s) {
      if (!s.boxes) return;
      s.boxes.forEach(function (id) { var b = document.getElementById(id); if (b) b.textContent = ''; });
      drawSection(s.draw);
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-phase]'), function (e) { e.hidden = e.getAttribute('data-phase') !== name; });
    Array.prototype.forEach.call(document.querySelectorAll('[data-phase-tag]'), function (e) { e.textContent = name; });
    Array.prototype.forEach.call(document.querySelectorAll('[data-phase-choice]'), function (b) {
      b.setAttribute('aria-pressed', b.getAttribute('data-phase-choice') === name ? 'true' : 'false');
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-phase-row]'), function (r) {
      r.className = r.getAttribute('data-phase-row') === name ? 'selected' : '';
    });
    document.body.setAttribute('data-phase-shown', name);
  }

  // Draw the page: `sections` in order, each { draw, boxes }: a section with boxes draws from the
  // selected phase (and again, into emptied boxes, when the phase changes); one without, once.
  function drawPage(sections) {
    if (!PHASES || !PHASES.rows || !PHASES.rows.length) {
      sections.forEach(function (s) { drawSection(s.draw); });
      return;
    }
    DATA = wholeFileData();
    sections.forEach(function (s) { if (!s.boxes) drawSection(s.draw); });
    showPhase(PHASES['default'], sections);
    Array.prototype.forEach.call(document.querySelectorAll('[data-phase-choice]'), function (b) {
      b.addEventListener('click', function () { showPhase(b.getAttribute('data-phase-choice'), sections); });
    });
  }
