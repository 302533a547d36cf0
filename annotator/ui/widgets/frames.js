// window.annotatorOnFrames(step): call step() on every animation frame while the page changes (any DOM change,
// key, pointer, input, focus or scroll) and for two seconds after, then not until it changes again. The page
// scripts watch Streamlit's renders frame by frame; a loop on every frame for as long as the tab is open kept an
// idle Annotate page at about a tenth of a CPU core. Shared by the scripts of a page: the first one defines it.
window.annotatorOnFrames = window.annotatorOnFrames || (function () {
  const steps = [];
  const QUIET_FRAMES = 120;
  let left = 0, scheduled = false;
  function frame() {
    scheduled = false;
    for (const step of steps) step();
    left -= 1;
    if (left > 0) schedule();
  }
  function schedule() {
    if (!scheduled) { scheduled = true; requestAnimationFrame(frame); }
  }
  function wake() { left = QUIET_FRAMES; schedule(); }
  new MutationObserver(wake).observe(document.documentElement,
    { subtree: true, childList: true, attributes: true, characterData: true });
  for (const type of ['keydown', 'keyup', 'input', 'change', 'pointerdown', 'pointerup', 'click', 'focusin', 'scroll',
                      'resize']) {
    window.addEventListener(type, wake, true);
  }
  return function (step) { steps.push(step); wake(); };
})();
