(function () {
  // Mentions in the references and the boxes' labels over the picture point at each other: hovering
  // (or focusing) either lights up both, with the box's outline, by their shared data-box ids.
  if (window.__annotatorBoxLinks) return;
  window.__annotatorBoxLinks = true;
  const doc = document;
  const SCOPE = '.ann-ref [data-box], .ann-overlay [data-box]';
  function ids(el) { return (el.getAttribute('data-box') || '').split(' ').filter(Boolean); }
  function light(el, on) {
    ids(el).forEach((id) => {
      const sel = '[data-box~="' + CSS.escape(id) + '"]';
      doc.querySelectorAll('.ann-ref ' + sel + ', .ann-overlay ' + sel).forEach((x) => x.classList.toggle('ann-on', on));
    });
  }
  function handler(on) {
    return function (e) {
      const el = e.target && e.target.closest ? e.target.closest(SCOPE) : null;
      if (el) light(el, on);
    };
  }
  doc.addEventListener('mouseover', handler(true), true);
  doc.addEventListener('mouseout', handler(false), true);
  doc.addEventListener('focusin', handler(true), true);
  doc.addEventListener('focusout', handler(false), true);
})();
