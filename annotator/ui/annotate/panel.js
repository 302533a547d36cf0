(function () {
  // The annotate panel is a form: its choice, ticks and note change in the browser only, and reach
  // the server together when a button of the form is pressed. What one input implies for the others
  // is shown here at once: ticking a type chooses Inaccurate, choosing Accurate clears the ticks (the
  // save applies the same rules on the server, and the core validates what it receives). This script
  // also shows the "Generally unrelated" reminder while many types are ticked, shows or hides the
  // boxes and the references, and zooms the picture (no server run either).
  if (window.__annotatorPanel) return;
  window.__annotatorPanel = true;
  const doc = document;
  const TYPE = '[class*="st-key-ann_type_"]';
  function typeInputs() { return Array.from(doc.querySelectorAll(TYPE + ' input[type="checkbox"]')); }
  function radios() { return doc.querySelectorAll('.st-key-ann_label input[type="radio"]'); }
  function typeOf(input) {
    const w = input.closest(TYPE);
    const m = w && /st-key-ann_type_([A-Za-z0-9_]+)/.exec(w.className);
    return m ? m[1] : null;
  }
  function inPanel(el) { return !!(el && el.closest && el.closest('[data-testid="stForm"]')); }
  // The ticked types as chips beside Task 1 (annotate/html.py type_chips_html): one per type, shown while ticked.
  function updateChips() {
    const chips = doc.querySelector('[data-testid="ann-chips"]');
    if (!chips) return;
    const ticked = new Set(typeInputs().filter((i) => i.checked).map(typeOf));
    chips.querySelectorAll('[data-chip]').forEach((c) => { c.hidden = !ticked.has(c.getAttribute('data-chip')); });
    const none = chips.querySelector('[data-chip-none]');
    if (none) none.hidden = ticked.size > 0;
  }
  function update() {
    updateChips();
    const box = doc.querySelector('[data-testid="ann-unrelated-hint"]');
    if (!box) return;
    const above = parseInt(box.getAttribute('data-above'), 10) || 0;
    let others = 0, unrelated = false;
    typeInputs().forEach((i) => {
      if (!i.checked) return;
      if (typeOf(i) === 'unrelated') unrelated = true; else others += 1;
    });
    const count = box.querySelector('[data-count]');
    if (count) count.textContent = String(others);
    box.hidden = !(above > 0 && !unrelated && others > above);
  }
  window.__annotatorPanelUpdate = update;
  // The boxes take the values of a run a render or two after it ends (no event says so): the chips and the
  // reminder follow them frame by frame while the page changes, so a newly loaded caption never keeps the
  // chips of the one before (issue 38, item 1).
  let shownTicks = null;
  if (window.annotatorOnFrames) window.annotatorOnFrames(function followTicks() {
    const now = typeInputs().map((i) => (i.checked ? '1' : '0')).join('');
    const chips = doc.querySelector('[data-testid="ann-chips"]');
    const sig = now + (chips ? chips.getAttribute('data-load') : '');
    if (sig !== shownTicks) { shownTicks = sig; update(); }
  });
  // Streamlit's inputs change their state from a click without a change event the page could hear, so
  // the panel is compared with how it was after each click: a new tick chooses Inaccurate; Accurate
  // newly chosen clears the ticks.
  function snapshot() {
    const r = radios();
    return { label: r[0] && r[0].checked ? 0 : r[1] && r[1].checked ? 1 : -1,
             types: new Set(typeInputs().filter((i) => i.checked).map(typeOf)) };
  }
  let last = snapshot();
  function reconcile() {
    const now = snapshot();
    const newTick = Array.from(now.types).some((t) => !last.types.has(t));
    const nowAccurate = now.label === 0 && last.label !== 0;
    last = now;
    if (nowAccurate) typeInputs().forEach((i) => { if (i.checked) i.click(); });
    else if (newTick && now.label !== 1) { const r = radios()[1]; if (r) r.click(); }
    update();
  }
  doc.addEventListener('click', function (e) {
    if (inPanel(e.target)) setTimeout(reconcile, 0);
  }, true);
  doc.addEventListener('click', function (e) {
    const b = e.target && e.target.closest ? e.target.closest('[data-use-unrelated]') : null;
    if (!b) return;
    e.preventDefault();
    typeInputs().forEach((i) => { if (i.checked !== (typeOf(i) === 'unrelated')) i.click(); });
    setTimeout(update, 0);
  }, true);
  // A long caption scrolls in its own pane, as tall as the window leaves it: Task 1, every type and the action bar
  // (docked at the window's bottom) stay in view whatever is above the panel (a banner, a narrow main area with
  // the sidebar open, a caption wrapped into more lines). Each frame while the page changes, the pane's height is
  // set so that the panel's last row ends above the bar; never under MIN_CAPTION_PX (issue 38, items 3 and 4).
  const MIN_CAPTION_PX = 96, GAP_PX = 6;
  function scroller() {
    const main = doc.querySelector('[data-testid="stMain"]');
    return main && main.scrollHeight > main.clientHeight + 1 ? main : doc.scrollingElement;
  }
  function fitCaption() {
    const cap = doc.querySelector('[data-testid="ann-caption"]');
    const bar = doc.querySelector('.st-key-ann_actionbar');
    const form = bar && bar.closest('[data-testid="stForm"]');
    if (!cap || !form) return;
    let bottom = -Infinity;
    form.querySelectorAll('[class*="st-key-ann_type_"], .st-key-ann_label, .ann-unrelated:not([hidden]), ' +
                          '[data-testid="stCaptionContainer"]').forEach((el) => {
      if (bar.contains(el)) return;
      const r = el.getBoundingClientRect();
      if (r.height) bottom = Math.max(bottom, r.bottom);
    });
    if (bottom === -Infinity) return;
    const sc = scroller();
    const need = bottom + (sc ? sc.scrollTop : 0) + bar.getBoundingClientRect().height + GAP_PX - window.innerHeight;
    const now = cap.clientHeight, full = cap.scrollHeight;
    const target = Math.max(Math.min(MIN_CAPTION_PX, full), Math.min(full, now - need));
    if (Math.abs(target - now) > 1 && (need > 0 || now < full)) cap.style.maxHeight = Math.round(target) + 'px';
  }
  if (window.annotatorOnFrames) window.annotatorOnFrames(fitCaption);
  // The view switches (boxes, references) act on the page's classes, which outlive every run of the page.
  const VIEW = { ann_show_boxes: 'ann-no-boxes', ann_show_refs: 'ann-no-refs' };
  const ZOOM = 'ann-zoom';  // on while its switch is on (the others hide while theirs is off)
  function syncView() {
    Object.keys(VIEW).forEach((key) => {
      const i = doc.querySelector('.st-key-' + key + ' input');
      if (i) i.checked = !doc.body.classList.contains(VIEW[key]);
    });
    const z = doc.querySelector('.st-key-ann_zoom input');
    if (z) z.checked = doc.body.classList.contains(ZOOM);
  }
  // While zoomed, the picture is magnified about the pointer: moving over it pans.
  doc.addEventListener('mousemove', function (e) {
    if (!doc.body.classList.contains(ZOOM)) return;
    const fig = e.target && e.target.closest ? e.target.closest('.st-key-ann_figure') : null;
    if (!fig) return;
    const r = fig.getBoundingClientRect();
    fig.style.setProperty('--ann-zx', (100 * (e.clientX - r.left) / r.width).toFixed(2) + '%');
    fig.style.setProperty('--ann-zy', (100 * (e.clientY - r.top) / r.height).toFixed(2) + '%');
  }, true);
  doc.addEventListener('change', function (e) {
    const t = e.target;
    const w = t && t.closest ? t.closest('[data-local-input]') : null;
    if (!w) return;
    Object.keys(VIEW).forEach((key) => {
      if (w.classList.contains('st-key-' + key)) doc.body.classList.toggle(VIEW[key], !t.checked);
    });
    if (w.classList.contains('st-key-ann_zoom')) doc.body.classList.toggle(ZOOM, t.checked);
  }, true);
  // A run of the page (another caption, or values set by the server) redraws the panel: start from it.
  (function observe() {
    const app = doc.querySelector('[data-testid="stApp"]');
    if (!app) { setTimeout(observe, 100); return; }
    new MutationObserver(() => setTimeout(() => { last = snapshot(); update(); syncView(); }, 0))
      .observe(app, { attributes: true, attributeFilter: ['data-test-script-state'] });
  })();
})();
