(function () {
  // Save & next without waiting for the server, and without losing the save.
  //
  // The contract: a click on Save & next (or Enter) shows the next caption's words at once, from what the page
  // already holds (the state marker the page draws, data-next), as a preview: marked data-preview, the body marked
  // data-ann-pending, the picture and the panel dimmed and inert. Nothing of the next caption can be edited until
  // the server's run has stored the judgement and drawn that caption with its own panel; keys typed meanwhile wait
  // (widgets/keys.js, widgets/spans.js) and then apply to it. The state marker names the last save the server
  // confirmed stored (data-stored-caption, data-stored-revision): that is the signal a save is in the store.
  // When the run leaves the same caption (a refused or failed save), its own words come back, with its panel as
  // it was and the message why.
  //
  // The words come first: the click reaches Streamlit (whose form submit, re-render and message take the page's
  // main thread for several milliseconds) only once the frame that draws them is done, and the panel turns inert
  // (a style change of its whole subtree) then too. Until then the panel's own clicks are held back here, so the
  // save carries what the panel held at the key. Nothing on this path asks the layout for a size: a forced style
  // and layout of the page in the click cost as much as the frame itself (issue 38, item 6).
  //
  // Until the server confirms it, the save is also kept in the browser (localStorage, PENDING) and leaving the
  // page asks first (beforeunload). A page that opens with a save kept there that no page is still waiting for
  // (its heartbeat stopped: the page was closed or reloaded) sends it again, through the hidden field ann_resend;
  // the server stores it unless it is stored already (the revision after the one it was based on holds exactly
  // it) or another save came since (then it is kept as the caption's draft and the page says so), and names the
  // save it handled (data-resent), which removes it from the browser.
  if (window.__annotatorNext) return;
  window.__annotatorNext = true;
  const doc = document;
  const PENDING = 'annotator.pendingSave';
  const HEARTBEAT_MS = 500, ORPHAN_MS = 2000;
  const q = (sel) => doc.querySelector(sel);
  const pageId = Math.random().toString(36).slice(2) + Date.now().toString(36);
  const pv = { on: false };
  const resent = new Set();  // tokens this page sent again (each once)
  const firstSeen = {};  // showing (data-load) -> when this page first drew it, for the seconds a save measured
  function marker() { return q('[data-testid="ann-state"]'); }
  function captionEl() { return q('[data-testid="ann-caption"]'); }
  function panelRun() { const m = q('[data-panel-state="ann"]'); return m ? m.getAttribute('data-run') : null; }
  function scriptIdle() {
    const app = q('[data-testid="stApp"]');
    const s = app ? app.getAttribute('data-test-script-state') : null;
    return s !== 'running' && s !== 'rerunRequested' && s !== 'stopRequested';
  }
  function readPending() {
    try { const r = JSON.parse(window.localStorage.getItem(PENDING) || 'null'); return r && r.token ? r : null; }
    catch (e) { return null; }
  }
  function writePending(r) {
    try { if (r) window.localStorage.setItem(PENDING, JSON.stringify(r)); else window.localStorage.removeItem(PENDING); }
    catch (e) { /* storage refused (private mode, quota): the beforeunload guard still asks */ }
  }
  function dropPending(token) { const r = readPending(); if (r && r.token === token) writePending(null); }
  function typeOf(input) {
    const w = input.closest('[class*="st-key-ann_type_"]');
    const m = w && /st-key-ann_type_([A-Za-z0-9_]+)/.exec(w.className);
    return m ? m[1] : null;
  }
  // What the panel holds now, as the form's buttons send it.
  function panelValues() {
    const r = doc.querySelectorAll('.st-key-ann_label input[type="radio"]');
    const label = r[0] && r[0].checked ? 'accurate' : r[1] && r[1].checked ? 'inaccurate' : null;
    const types = Array.from(doc.querySelectorAll('[class*="st-key-ann_type_"] input[type="checkbox"]'))
      .filter((i) => i.checked).map(typeOf).filter(Boolean);
    const note = q('.st-key-ann_note input');
    const spans = q('.st-key-ann_spans input');
    return { label: label, types: types, note: note ? note.value : '', spans: spans ? spans.value : '[]' };
  }
  function setInert(on) {
    doc.querySelectorAll('[data-testid="stForm"], .st-key-ann_figure, .ann-spans, [data-testid="ann-caption"]').forEach((el) => {
      if (on) el.setAttribute('inert', ''); else el.removeAttribute('inert');
    });
  }
  let replaying = false;
  doc.addEventListener('click', function (e) {
    if (replaying) return;
    // The save's click is on its way to Streamlit after the words' frame: the panel takes no click meanwhile.
    if (pv.held && e.target && e.target.closest && e.target.closest('[data-testid="stForm"]')) {
      e.stopPropagation(); e.preventDefault(); return;
    }
    const b = e.target && e.target.closest ? e.target.closest('.st-key-ann_save button') : null;
    const m = marker(), cap = captionEl();
    if (!b || b.disabled || pv.on || !m || !cap || m.getAttribute('data-load') !== cap.getAttribute('data-load')) return;
    const scrolled = cap.scrollTop > 0;  // read before anything changes, while the layout is still clean
    const load = m.getAttribute('data-load');
    const rec = Object.assign(panelValues(), {
      token: pageId + '-' + load + '-' + Date.now(), page: pageId, alive: Date.now(),
      user: m.getAttribute('data-user'), project: m.getAttribute('data-project'),
      caption: Number(m.getAttribute('data-caption')), position: Number(m.getAttribute('data-position')),
      base: Number(m.getAttribute('data-base')), item: m.getAttribute('data-item'),
      seconds: firstSeen[load] ? (Date.now() - firstSeen[load]) / 1000 : 0 });
    writePending(rec);
    Object.assign(pv, { on: true, rec: rec, run: panelRun(), load: load, el: cap, html: null, since: Date.now() });
    doc.body.setAttribute('data-ann-pending', rec.item || '');
    const next = m.getAttribute('data-next');
    if (!pv.timer) pv.timer = setInterval(heartbeat, HEARTBEAT_MS);
    if (next === null || !scriptIdle()) {
      setTimeout(() => { if (pv.on) setInert(true); }, 0);  // after the click has reached the form
      return;
    }
    pv.html = cap.innerHTML;
    cap.setAttribute('data-preview', '');
    cap.textContent = next;
    if (scrolled) cap.scrollTop = 0;
    window.__annPreviews = (window.__annPreviews || 0) + 1;
    // This click stops here; the same click goes to Streamlit once the frame with the words is drawn (a timer
    // as well, for a tab in the background, which draws no frames).
    e.stopPropagation();
    pv.held = true;
    let sent = false;
    const send = () => {
      if (sent) return;
      sent = true;
      pv.held = false;
      const button = q('.st-key-ann_save button') || b;
      replaying = true;
      try { button.click(); } finally { replaying = false; }
      if (pv.on) setInert(true);
    };
    requestAnimationFrame(() => setTimeout(send, 0));
    setTimeout(send, 250);
  }, true);
  function endPreview() {
    const el = pv.el;
    if (el && el.isConnected && el.hasAttribute('data-preview')) { el.innerHTML = pv.html; el.removeAttribute('data-preview'); }
    const m = marker(), cap = captionEl();
    const sameCaption = !!cap && cap.getAttribute('data-load') === pv.load;
    pv.on = false; pv.el = null; pv.html = null;
    doc.body.removeAttribute('data-ann-pending');
    setInert(false);
    // Stored (the marker says so), or refused with the caption and its panel back on screen: the browser's copy
    // is no longer needed. Anything else (the server went away, say) keeps it, to be sent again.
    if (storedHere(m, pv.rec) || sameCaption) dropPending(pv.rec.token);
  }
  function storedHere(m, rec) {
    return !!m && !!rec && Number(m.getAttribute('data-stored-caption')) === rec.caption
      && Number(m.getAttribute('data-stored-revision')) > rec.base;
  }
  function put(f, value) {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(f, value);
    f.dispatchEvent(new Event('input', { bubbles: true }));
    f.dispatchEvent(new FocusEvent('focusout', { bubbles: true }));  // outside a form: sent on leaving the field
  }
  function resendOrphan(m) {
    const rec = readPending();
    if (!rec || rec.page === pageId || resent.has(rec.token) || Date.now() - (rec.alive || 0) < ORPHAN_MS) return;
    if (rec.user !== m.getAttribute('data-user') || rec.project !== m.getAttribute('data-project')) return;
    const f = q('.st-key-ann_resend input');
    if (!f || !scriptIdle()) return;
    resent.add(rec.token);
    put(f, JSON.stringify(rec));
  }
  if (window.annotatorOnFrames) window.annotatorOnFrames(function watchSave() {
    const m = marker(), cap = captionEl();
    if (cap && !firstSeen[cap.getAttribute('data-load')]) firstSeen[cap.getAttribute('data-load')] = Date.now();
    if (pv.on && scriptIdle() && panelRun() !== pv.run) endPreview();
    if (!m) return;
    const done = m.getAttribute('data-resent');
    if (done) dropPending(done);
    const rec = readPending();
    if (rec && rec.page === pageId && !pv.on && storedHere(m, rec)) writePending(null);
    if (!pv.on) resendOrphan(m);
  });
  // While this page waits for its save, it says so to other pages every HEARTBEAT_MS (a page sends a kept save
  // again only when no page waits for it any more). A page looks for a kept save to send again on every frame while
  // it changes, and a few times after it opens (an idle page runs no timer).
  function heartbeat() {
    if (!pv.on) { clearInterval(pv.timer); pv.timer = null; return; }
    const rec = readPending();
    if (rec && rec.token === pv.rec.token) { rec.alive = Date.now(); writePending(rec); }
  }
  function lookForKept() { const m = marker(); if (m && !pv.on) resendOrphan(m); }
  [ORPHAN_MS / 2, ORPHAN_MS + 200, 2 * ORPHAN_MS, 5 * ORPHAN_MS].forEach((ms) => setTimeout(lookForKept, ms));
  window.addEventListener('beforeunload', function (e) {
    if (!pv.on) return;
    e.preventDefault();
    e.returnValue = '';
  });
  window.__annotatorNextState = pv;  // for tests
})();
