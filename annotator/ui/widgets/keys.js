(function () {
  // Keys -> clicks on the widgets (found by their st-key-* class). An action that makes
  // Streamlit rerun holds the keys typed after it until that run is over and the page shows
  // its effect, then replays them, so fast typing ("n", "x", Enter, "y", Enter ...) reaches
  // the server in order and every save carries the values set just before it.
  const cfg = __ANNOTATOR_KEYS_CONFIG__;
  window[cfg.configName] = cfg;
  if (window[cfg.configName + 'Installed']) return;
  window[cfg.configName + 'Installed'] = true;
  const P = cfg.prefix;
  const doc = document;
  const q = (sel) => doc.querySelector(sel);
  const st = { busy: null, queue: [], log: [], runs: 0, running: false, idleSince: Date.now() };
  window[cfg.stateName] = st;  // for tests and debugging
  const QUIET_MS = 80, GIVE_UP_MS = 10000;

  function scriptState() {
    const app = q('[data-testid="stApp"]');
    return app ? app.getAttribute('data-test-script-state') : null;
  }
  function isIdle(state) { return state !== 'running' && state !== 'rerunRequested' && state !== 'stopRequested'; }
  // Count the runs as they start, so a short one is not missed between two polls: a run that
  // started and ended before this callback ran shows only in the records' old values.
  (function observeRuns() {
    const app = q('[data-testid="stApp"]');
    if (!app) { setTimeout(observeRuns, 100); return; }
    new MutationObserver((records) => {
      const ended = records.some((r) => !isIdle(r.oldValue));
      if (isIdle(scriptState())) {
        if (ended && !st.running) st.runs += 1;
        st.running = false; st.idleSince = Date.now();
      } else {
        if (!st.running) st.runs += 1;
        st.running = true; st.idleSince = null;
      }
    }).observe(app, { attributes: true, attributeFilter: ['data-test-script-state'], attributeOldValue: true });
  })();
  function captionText() {
    const c = q('[data-testid="' + cfg.captionTestId + '"]');
    return c ? c.textContent : null;
  }
  function alertText() {
    return Array.from(doc.querySelectorAll('[data-testid="stAlert"]')).map((a) => a.textContent).join('|');
  }
  function radios() { return doc.querySelectorAll('.st-key-' + P + '_label input[type="radio"]'); }
  // The marker the page draws after its panel (annotator.ui.widgets.keys.panel_state_html): which run drew it and
  // the values that run gave the widgets. Streamlit applies such values a render or two after the widgets
  // appear, overwriting any click made before, so keys typed after a save wait until the widgets show them.
  function marker() { return q('[data-panel-state="' + P + '"]'); }
  function markerRun() { const m = marker(); return m ? m.getAttribute('data-run') : null; }
  // The panel is drawn when its label choice is: Streamlit loads a kind of widget's code the first time one
  // is shown, and on a loaded or slow machine the radio buttons come seconds after the caption and the
  // buttons (a key, or a save, made before then would be lost).
  function panelDrawn() { return radios().length === cfg.labels.length; }
  function panelShows(m) {
    if (!panelDrawn()) return false;
    const index = cfg.labels.indexOf(m.getAttribute('data-label'));
    const rs = radios();
    for (let i = 0; i < rs.length; i++) if (rs[i].checked !== (i === index)) return false;
    const ticked = new Set((m.getAttribute('data-ticked') || '').split(' ').filter(Boolean));
    const keys = Object.values(window[cfg.configName].types);
    for (let k = 0; k < keys.length; k++) {
      const box = q('.st-key-' + keys[k] + ' input');
      if (box && box.checked !== ticked.has(keys[k])) return false;
    }
    return true;
  }
  // Each frame: how long the panel of the newest run has shown that run's values (st.settle), and the
  // newest run whose panel has shown them for two frames in a row (st.seenRun). Until then a click on the
  // panel would be overwritten when Streamlit applies those values, so keys wait for it (SETTLE_MS at most,
  // should a coupling of the page keep the widgets from ever matching the marker).
  const SETTLE_MS = 3000;
  window.annotatorOnFrames(function trackPanel() {  // widgets/frames.js: every frame while the page changes
    const m = marker();
    const run = m ? m.getAttribute('data-run') : null;
    if (!st.settle || st.settle.run !== run) st.settle = { run: run, since: Date.now(), frames: 0 };
    if (m && panelShows(m)) {
      st.settle.frames += 1;
      if (st.settle.frames >= 2) st.seenRun = run;
    } else st.settle.frames = 0;
  });
  function panelSettled() {
    const m = marker();
    if (!m) return true;
    const run = m.getAttribute('data-run'), s = st.settle;
    return st.seenRun === run || (!!s && s.run === run && Date.now() - s.since > SETTLE_MS);
  }
  const changesPanel = (a) => a === 'accurate' || a === 'inaccurate' || a.startsWith('type:');

  // Each returns {result: 'done' | 'noop' | 'missing', kind, expect}: 'done' clicked (a rerun
  // follows), 'noop' nothing to change, 'missing' the widget is not on the page right now.
  function clickButton(key) {
    const b = q('.st-key-' + key + ' button');
    if (!b) return { result: 'missing' };
    if (b.disabled) return { result: 'noop' };
    const caption = captionText(), alerts = alertText(), run = markerRun();
    b.click();
    return { result: 'done', kind: 'button', run: run,
             expect: () => captionText() !== caption || alertText() !== alerts };
  }
  // An input inside a form (the annotate panel), or one marked data-local-input (a view switch), changes
  // in the browser only: no run follows, so the key is done at once ('local'); the form's buttons send
  // everything together.
  function inForm(el) { return !!(el && el.closest && el.closest('[data-testid="stForm"], [data-local-input]')); }
  function clickInput(key) {
    const sel = '.st-key-' + key + ' input';
    const i = q(sel);
    if (!i) return { result: 'missing' };
    if (i.disabled) return { result: 'noop' };
    const was = i.checked;
    i.click();
    if (inForm(i)) return { result: 'local' };
    return { result: 'done', kind: 'widget', expect: () => { const j = q(sel); return !!j && j.checked !== was; } };
  }
  function chooseLabel(index) {
    const r = radios()[index];
    if (!r) return { result: 'missing' };
    if (r.checked) return { result: 'noop' };
    r.click();
    if (inForm(r)) return { result: 'local' };
    return { result: 'done', kind: 'widget', expect: () => { const x = radios()[index]; return !!x && x.checked; } };
  }
  // With typeKeysSet (Adjudication, where the form starts ticked from the annotators' types) a type's key sets
  // its box: the first press on a box ticked before it was pressed keeps it, the next press clears it. What was
  // pressed is remembered for the caption on screen only.
  function typeKey(id) {
    const c = window[cfg.configName];
    const key = c.types[id];
    if (!c.typeKeysSet) return clickInput(key);
    const caption = captionText();
    if (st.pressedFor !== caption) { st.pressedFor = caption; st.pressed = new Set(); }
    const box = q('.st-key-' + key + ' input');
    const first = !st.pressed.has(id);
    st.pressed.add(id);
    if (box && box.checked && first) return { result: 'noop' };
    return clickInput(key);
  }
  function perform(action) {
    const caption = captionText();
    const r = act(action);
    r.caption = caption;
    return r;
  }
  function act(action) {
    // The all-done page has nothing to save: Enter there does nothing (and holds no later key).
    if (action === 'save' && q('[data-judge-done="' + P + '"]')) return { result: 'noop' };
    if (action === 'save') return marker() && !panelDrawn() ? { result: 'missing' } : clickButton(P + '_save');
    if (action === 'prev') return clickButton(P + '_prev');
    if (action === 'next') return clickButton(P + '_next');
    if (action === 'skip') return clickButton(P + '_skip');
    if (action === 'list') return clickButton(P + '_list');
    if (action === 'accurate') return chooseLabel(0);
    if (action === 'inaccurate') return chooseLabel(1);
    if (action === 'boxes') return clickInput(P + '_show_boxes');
    if (action === 'references') return clickInput(P + '_show_refs');
    if (action === 'zoom') return clickInput(P + '_zoom');
    if (action.startsWith('type:')) return typeKey(action.slice(5));
    // Any other button of the page by its key's suffix (Correction's "Leave untouched": click:untouched).
    if (action.startsWith('click:')) return clickButton(P + '_' + action.slice(6));
    return { result: 'noop' };
  }
  function release() {
    st.busy = null;
    const pending = st.queue; st.queue = [];
    pending.forEach((a) => handle(a));
  }
  function watch() {
    const b = st.busy;
    if (!b || !b.expect) return;
    const now = Date.now(), age = now - b.since;
    const quiet = isIdle(scriptState()) && st.idleSince !== null && now - st.idleSince >= QUIET_MS;
    const ran = st.runs > b.runs;
    let done;
    if (b.kind === 'button' && b.run !== null && b.run !== undefined) {
      // A page with a panel marker: done once the run the click started has drawn its marker and the
      // widgets have shown that run's values for two frames (or, should a coupling of the page keep them
      // from matching, 1.5 s after the marker came). A page without the panel (all done) is done when quiet.
      const m = marker(), s2 = st.settle;
      if (!m) done = quiet && (ran || captionText() !== b.caption || age > 400);
      else if (m.getAttribute('data-run') === b.run) done = false;
      else done = quiet && !!s2 && s2.run === m.getAttribute('data-run') && panelSettled();
    } else if (quiet && captionText() !== b.caption) {
      // Another caption is on screen (a mouse click saved or moved on meanwhile): what this
      // key waited for belongs to the previous caption, so hold nothing after it.
      done = true;
    } else if (b.kind === 'note') {
      // Leaving the note field: its run (if the text changed) is over.
      done = quiet && (ran || age > 600);
    } else if (b.kind === 'button') {
      // Finished when its run is over (or the page visibly changed) and the page is quiet.
      done = quiet && (ran || (b.expect() && age > 400));
    } else {
      // A widget: its new state is on the page, and its run is over.
      done = quiet && b.expect() && (ran || age > 1500);
    }
    if (done || age > GIVE_UP_MS) { release(); return; }
    setTimeout(watch, 15);
  }
  function hold(action, tries, ms) {
    // Hold this key (and the ones after it) and try it again shortly.
    st.busy = { since: Date.now(), retry: true };
    setTimeout(() => { st.busy = null; const rest = st.queue; st.queue = []; handle(action, tries);
                       rest.forEach((a) => handle(a)); }, ms);
  }
  function handle(action, tries) {
    if (st.busy) { st.queue.push(action); return; }
    // A save on its way shows the next caption before its panel can be used (annotate/next.js): every key waits
    // until the server has stored the save and drawn that caption, then applies to it.
    if (doc.body.hasAttribute('data-' + P + '-pending')) { hold(action, tries, 20); return; }
    // A key that changes the panel waits until the panel shows what the newest run gave it (a key typed
    // right after a caption came, before Streamlit applied its values, was overwritten by them).
    if (changesPanel(action) && !panelSettled()) { hold(action, tries, 20); return; }
    const runs = st.runs;
    const r = perform(action);
    st.log.push(action + ':' + r.result);
    if (st.log.length > 50) st.log.shift();
    if (r.result === 'done') {
      st.busy = { since: Date.now(), runs: runs, kind: r.kind, expect: r.expect, caption: r.caption, run: r.run };
      setTimeout(watch, 15);
    } else if (r.result === 'missing') {
      // Hold it until the widget is there: as long as the page is still drawing (a run under way, or a panel
      // whose label choice is not drawn yet), then for 2 s of a quiet page (the all-done page has no panel:
      // the key is dropped), and never longer than GIVE_UP_MS.
      const t = tries || { quiet: 0, since: Date.now() };
      const drawing = !isIdle(scriptState()) || (!!marker() && !panelDrawn());
      const next = { quiet: t.quiet + (drawing ? 0 : 1), since: t.since };
      if (next.quiet < 40 && Date.now() - t.since < GIVE_UP_MS) hold(action, next, 50);
    }
  }
  // The guide overlay (rendered by the page, hidden until asked for): opened by its key or its
  // button, closed by Esc or its close button; the focus goes back where it was.
  function helpBox() { return q('#' + P + '-help'); }
  function openHelp() {
    const box = helpBox();
    if (!box || !box.hidden) return;
    st.helpReturn = doc.activeElement;
    box.hidden = false;
    (box.querySelector('.ann-help-panel') || box).focus();
  }
  function closeHelp() {
    const box = helpBox();
    if (!box || box.hidden) return;
    box.hidden = true;
    const back = st.helpReturn;
    st.helpReturn = null;
    if (back && back.isConnected && back !== doc.body) back.focus();
  }
  function focusNote() {
    const n = q('.st-key-' + P + '_note input, .st-key-' + P + '_note textarea');
    if (n) { n.focus(); n.select && n.setSelectionRange(n.value.length, n.value.length); }
  }
  // A choice made in the sidebar (the project box, say) leaves the focus there, and keys typed next would
  // go into its search field: after the choice the focus goes back to the page.
  function inSidebar(el) { return !!(el && el.closest && el.closest('[data-testid="stSidebar"]')); }
  function releaseSidebar() {
    setTimeout(() => {
      const a = doc.activeElement;
      if (inSidebar(a) && a.getAttribute('aria-expanded') !== 'true') a.blur();
    }, 60);
  }
  doc.addEventListener('click', function (e) {
    const el = e.target && e.target.closest ? e.target : null;
    if (el && (el.closest('[role="option"]') || inSidebar(el))) releaseSidebar();
  }, true);
  doc.addEventListener('click', function (e) {
    const el = e.target && e.target.closest ? e.target : null;
    if (!el) return;
    if (el.closest('[data-help-open="' + P + '"]')) { e.preventDefault(); openHelp(); }
    else if (el.closest('#' + P + '-help [data-help-close]')) { e.preventDefault(); closeHelp(); }
  }, true);
  doc.addEventListener('keydown', function (e) {
    if (!q('.st-key-' + P + '_save') && !q('[data-judge-done="' + P + '"]')) return;  // only on its own page
    // A dialog of the page (the caption list) has the keys to itself.
    if (q('[data-testid="stDialog"] [role="dialog"]')) return;
    const box = helpBox();
    if (box && !box.hidden) {
      // The overlay is open: Esc closes it, Tab moves inside it, and no key acts on the caption.
      if (e.key === 'Escape' || e.key === '?') {
        e.preventDefault(); e.stopPropagation(); closeHelp();
      } else if (e.key === 'Tab') {
        // Modal: Tab cycles between the panel (scrolled by the arrows) and the close button.
        const stops = Array.from(box.querySelectorAll('button, [tabindex="0"]'));
        const i = stops.indexOf(doc.activeElement);
        const next = i < 0 ? stops[0] : stops[(i + (e.shiftKey ? stops.length - 1 : 1)) % stops.length];
        e.preventDefault(); e.stopPropagation();
        if (next) next.focus();
      } else if (e.key !== 'Tab' && !e.key.startsWith('Arrow') && e.key !== 'PageUp' && e.key !== 'PageDown'
                 && e.key !== 'Home' && e.key !== 'End' && e.key !== ' ') {
        e.stopPropagation();
        if (e.key === 'Enter' && !(e.target && e.target.closest && e.target.closest('button'))) e.preventDefault();
      }
      return;
    }
    let t = e.target;
    // Enter or Space on the guide's own button opens the guide (the button's click), nothing else.
    if (t && t.closest && t.closest('[data-help-open]') && (e.key === 'Enter' || e.key === ' ')) return;
    // A closed choice box of the sidebar is no field to type in: its choice is made, the keys are the page's.
    if (inSidebar(t) && t.getAttribute('role') === 'combobox') {
      if (t.getAttribute('aria-expanded') === 'true') { if (e.key === 'Enter') releaseSidebar(); return; }
      const pageKey = e.key === 'Enter' || e.key === 'ArrowLeft' || e.key === 'ArrowRight' ||
        (e.key.length === 1 && !!window[cfg.configName].keys[e.key.toLowerCase()]);
      if (!pageKey) return;
      t.blur(); t = doc.body;
    }
    const typing = t && (t.tagName === 'TEXTAREA' || t.isContentEditable ||
      (t.tagName === 'INPUT' && !['checkbox', 'radio', 'button'].includes(t.type)));
    if (typing) {
      if (e.key === 'Escape') { t.blur(); e.preventDefault(); e.stopPropagation(); }
      else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault(); e.stopPropagation(); t.blur();
        // In a form the note goes with the save itself.
        if (inForm(t)) { handle('save'); return; }
        // Otherwise leaving the field commits the note (its own run); the save waits for it.
        if (!st.busy) {
          const runs = st.runs;
          st.busy = { since: Date.now(), runs: runs, kind: 'note', expect: () => false, caption: captionText() };
          setTimeout(watch, 15);
        }
        st.queue.push('save');
      }
      return;
    }
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    let action = null;
    if (e.key === 'Enter') action = e.repeat ? null : 'save';
    else if (e.key === 'ArrowLeft') action = 'prev';
    else if (e.key === 'ArrowRight') action = 'next';
    else if (!e.repeat) action = window[cfg.configName].keys[e.key.length === 1 ? e.key.toLowerCase() : e.key] || null;
    if (e.key === 'Enter' || e.key === 'ArrowLeft' || e.key === 'ArrowRight') { e.preventDefault(); e.stopPropagation(); }
    if (!action) return;
    // Ours: keep it from Streamlit's own shortcuts (r reruns, c clears caches).
    e.preventDefault(); e.stopPropagation();
    // Focusing the note and opening the guide act at once, never queued behind a rerun: the
    // keys typed after them must land in the note (as text) or in the guide, not on the caption.
    if (action === 'note') { focusNote(); return; }
    if (action === 'help') { openHelp(); return; }
    handle(action);
  }, true);
})();
