/* etscope diff page: the whole page is one comparison (diff.js), drawn into <main>. Inlined by
 * diff.html.j2 after common.js and diff.js inside one function scope. */

  try {
    renderDiff(document.getElementById('diff-main'), DATA, true);
  } catch (e) {
    console.error('etscope diff: the page failed to render:', e);
  }
  document.body.setAttribute('data-rendered', 'true');
