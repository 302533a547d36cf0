(function () {
  // Adjudication: under each word of the caption, one thin bar per annotator who marked words there (their
  // spans, in the colour of the type's group, the type and fix as the bar's title), added to the word elements
  // the spans script makes (widgets/spans.js) as they appear. The marks come in the caption's data-marks
  // attribute (JSON): {"rows": [name, ...], "marks": [[row, start, end, colour, title], ...]}, start and end
  // whitespace token indices as spans count them (end exclusive). The bars hold no text, so the caption's text
  // (what the spans script reads) is unchanged. No text in this file may look like the start of a tag (a
  // less-than sign right before a letter, a slash or "!"): the page's HTML sanitiser drops a script that holds one.
  if (window.__adjMarksInstalled) return;
  window.__adjMarksInstalled = true;
  const doc = document;
  let seen = null, index = null;
  function marksOf(el) {
    const raw = el.getAttribute('data-marks');
    if (raw !== seen) {
      seen = raw; index = null;
      try {
        const spec = JSON.parse(raw || '{}'), byWord = {};
        (spec.marks || []).forEach((m) => {
          for (let i = m[1]; i < m[2]; i++) (byWord[i] = byWord[i] || {})[m[0]] = m;
        });
        index = { rows: spec.rows || [], byWord: byWord };
      } catch (e) { index = null; }
    }
    return index;
  }
  function apply() {
    const el = doc.querySelector('[data-testid="adj-caption"]');
    if (!el || !el.hasAttribute('data-marks')) return;
    const spec = marksOf(el);
    if (!spec || !spec.rows.length) return;
    el.querySelectorAll('.ann-w').forEach((w) => {
      if (w.querySelector(':scope > .adj-marks')) return;
      const i = parseInt(w.getAttribute('data-i'), 10), here = spec.byWord[i] || {};
      const box = doc.createElement('span');
      box.className = 'adj-marks';
      spec.rows.forEach((who, r) => {
        const bar = doc.createElement('i'), m = here[r];
        if (m) { bar.className = 'adj-mark'; bar.style.background = m[3]; bar.title = m[4]; bar.dataset.who = who; }
        box.appendChild(bar);
      });
      w.appendChild(box);
    });
  }
  window.annotatorOnFrames(apply);
})();
