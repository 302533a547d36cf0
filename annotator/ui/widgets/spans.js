(function () {
  // Error spans on a judging page (Annotate, and Adjudication for the lead's spans), all in the browser: the
  // caption's words (wrapped here as .ann-w,
  // data-i = the whitespace token index spans count) are selected by mouse (drag, click, shift-click) or by the word cursor (, . move; < > extend);
  // a type key with a selection marks those words with the type and ticks it; the same key on the same
  // words unmarks them; Backspace removes the spans on the selection; a click on a span's key badge removes
  // it; / with a span selected edits its suggested fix. The spans live in the page's hidden field
  // (st-key-PREFIX_spans) as JSON. On Annotate it is in the panel form, so Save sends them with the rest of
  // the judgement and nothing reaches the server before; on Adjudication (cfg.commit) the field is outside a
  // form and each change is sent at once, as a tick there is. The page's names (caption, field, type boxes,
  // key handler) come in the config. This handler listens on the window in the capture phase, ahead of the
  // page's key handler (widgets/keys.js), and lets through every key it does not use. No text in this file may
  // look like the start of a tag (a less-than sign right before a letter, a slash or "!"): the page's HTML
  // sanitiser drops a script that holds one.
  const cfg = __ANNOTATOR_SPANS_CONFIG__;
  window.__annSpansConfig = cfg;
  if (window.__annSpansInstalled) return;
  window.__annSpansInstalled = true;
  const doc = document;
  const S = { sel: null, cur: null, drag: false, el: null, text: null, value: null, log: [] };
  window.__annSpans = S;  // for tests and the benchmark
  const C = () => window.__annSpansConfig;
  const captionEl = () => doc.querySelector('[data-testid="' + C().caption + '"]');
  const field = () => doc.querySelector('.st-key-' + C().field + ' input');
  // The page sends the caption as plain text. A caption of up to WHOLE_MAX tokens has its whitespace tokens
  // made word elements (.ann-w, data-i = the token index) at once. A longer one (a model's paragraph, up to the
  // caption limit) is cut into runs of CHUNK tokens kept as plain text, and a run becomes word elements only
  // when a span, the selection or the pointer reaches it: a browser drew one element per word for a long caption
  // too slowly (issue 36, item 1).
  const WHOLE_MAX = 600, CHUNK = 120;
  function tokenCount() { return S.tokens ? S.tokens.length : 0; }
  function expand(chunk) {
    if (!chunk || chunk.hasAttribute('data-words')) return;
    const from = parseInt(chunk.getAttribute('data-from'), 10);
    const list = S.tokens.slice(from, from + CHUNK);
    chunk.textContent = '';
    list.forEach((w, k) => {
      if (k) chunk.appendChild(doc.createTextNode(' '));
      const s = doc.createElement('span');
      s.className = 'ann-w'; s.setAttribute('data-i', String(from + k)); s.textContent = w;
      chunk.appendChild(s);
    });
    chunk.setAttribute('data-words', '');
  }
  function chunkOf(i) {
    const c = captionEl();
    return c ? c.querySelector(':scope > .ann-chunk[data-from="' + (i - (i % CHUNK)) + '"]') : null;
  }
  // The word element of token i, made when its run is still plain text.
  function wordEl(i) {
    const c = captionEl();
    if (!c || i < 0 || i >= tokenCount()) return null;
    const chunk = chunkOf(i);
    if (chunk) expand(chunk);
    return c.querySelector('.ann-w[data-i="' + i + '"]');
  }
  function words() { const c = captionEl(); return c ? c.querySelectorAll('.ann-w') : []; }
  function wrap(el) {
    if (el.querySelector('.ann-w, .ann-chunk')) return;
    const tokens = el.textContent.split(/\s+/).filter(Boolean);
    S.tokens = tokens;
    el.textContent = '';
    if (tokens.length <= WHOLE_MAX) {
      tokens.forEach((w, i) => {
        if (i) el.appendChild(doc.createTextNode(' '));
        const s = doc.createElement('span');
        s.className = 'ann-w'; s.setAttribute('data-i', String(i)); s.textContent = w;
        el.appendChild(s);
      });
      return;
    }
    for (let from = 0; from < tokens.length; from += CHUNK) {
      if (from) el.appendChild(doc.createTextNode(' '));
      const c = doc.createElement('span');
      c.className = 'ann-chunk'; c.setAttribute('data-from', String(from));
      c.textContent = tokens.slice(from, from + CHUNK).join(' ');
      el.appendChild(c);
    }
  }
  function read() {
    const f = field();
    try { const v = JSON.parse((f && f.value) || '[]'); return Array.isArray(v) ? v : []; } catch (e) { return []; }
  }
  function put(f, value) {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(f, value);
    f.dispatchEvent(new Event('input', { bubbles: true }));
    // Outside a form a text field sends its value when it loses the focus: say it did.
    if (C().commit) f.dispatchEvent(new FocusEvent('focusout', { bubbles: true }));
    S.value = value;
  }
  function write(spans) {
    const f = field();
    if (!f) return;
    S.reset = null;  // the annotator's spans from now on
    spans.sort((x, y) => x.start - y.start || x.end - y.end || (x.type < y.type ? -1 : x.type > y.type ? 1 : 0));
    put(f, JSON.stringify(spans));
  }
  function range() {
    return S.sel ? [Math.min(S.sel.a, S.sel.b), Math.max(S.sel.a, S.sel.b) + 1] : null;
  }
  const box = (id) => doc.querySelector('.st-key-' + C().prefix + '_type_' + id + ' input');
  function draw() {
    const spans = read(), r = range(), types = C().types, n = tokenCount();
    const cover = new Map(), badge = new Map();
    spans.forEach((s) => {
      const t = types[s.type];
      if (!t) return;
      for (let i = s.start; i < s.end && i < n; i++) { if (!cover.has(i)) cover.set(i, []); cover.get(i).push(t.colour); }
      const at = Math.min(s.end, n) - 1;
      if (at >= 0) { if (!badge.has(at)) badge.set(at, []); badge.get(at).push(t.key + (s.fix !== undefined && s.fix !== null ? ' → ' + s.fix : '')); }
    });
    // The word elements a span, the selection or the cursor needs (their runs made words), then every word
    // element there is (what was marked before is cleared).
    cover.forEach((_, i) => wordEl(i));
    if (r) for (let i = r[0]; i < r[1] && i < n; i++) wordEl(i);
    if (S.sel) wordEl(S.sel.b);
    const ws = words();
    for (let k = 0; k < ws.length; k++) {
      const w = ws[k], i = parseInt(w.getAttribute('data-i'), 10), c = cover.get(i);
      w.classList.toggle('ann-sel', !!r && i >= r[0] && i < r[1]);
      w.classList.toggle('ann-cur', !!S.sel && i === S.sel.b);
      w.classList.toggle('ann-marked', !!c);
      const bg = !c ? '' : c.length === 1 ? c[0]
        : 'linear-gradient(to bottom, ' + c.map((x, j) => x + ' ' + (100 * j / c.length) + '% ' + (100 * (j + 1) / c.length) + '%').join(', ') + ')';
      if (w.style.background !== bg) w.style.background = bg;
      const b = badge.get(i);
      if (b) w.setAttribute('data-badge', b.join(' ')); else w.removeAttribute('data-badge');
    }
    if (S.sel && S.moved) { const cur = wordEl(S.sel.b); if (cur && cur.scrollIntoView) cur.scrollIntoView({ block: 'nearest' }); S.moved = false; }
    listSpans();
    S.drawn = (S.drawn || 0) + 1;
  }
  // Each frame: a new caption element (a run of the page) or a new field value (the server's) is drawn again.
  // A caption newly loaded into the panel (its element's data-load, a number the page counts up) starts from its
  // own spans (data-spans): they are put in the field, whatever it held, since the field keeps what this script
  // wrote for the caption before when the page gives it the same value again (issue 38, item 1).
  window.annotatorOnFrames(function watch() {  // widgets/frames.js: every frame while the page changes
    const el = captionEl();
    const load = el ? el.getAttribute('data-load') : null;
    if (load !== null && load !== S.load) { S.load = load; S.reset = el.getAttribute('data-spans') || '[]'; S.sel = null; S.cur = null; S.vsel = false; }
    // Until the annotator changes the spans of this caption, the field keeps its starting value: Streamlit may
    // apply a value of the run before a render or two later.
    let f = field(), reset = false;
    if (f && S.reset !== null && S.reset !== undefined && f.value !== S.reset) { put(f, S.reset); f = field(); reset = true; }
    const value = f ? f.value : null;
    if (reset || el !== S.el || value !== S.value) {
      if (el) wrap(el);
      if (el && el.textContent !== S.text) { S.sel = null; S.cur = null; S.vsel = false; S.text = el.textContent; }
      S.el = el; S.value = value;
      if (el) draw();
    }
  });
  // Streamlit applies the values a run gave the widgets a render or two after drawing them, overwriting what
  // was clicked or written before; and a save on its way shows another caption soon. So what changes the spans
  // or the ticks waits, in order, until the page's key handler (widgets/keys.js) has nothing in flight and the
  // panel shows the newest run's values (its own test, on its state), as the type keys do.
  // The hidden spans field can reach the screen a render or more after the caption and the panel marker (seen
  // with the machine busy, the page just opened): span keys typed meanwhile wait for it, as for the panel, for
  // FIELD_WAIT_MS at most (then they act on the words and what they would write is lost, as before).
  const FIELD_WAIT_MS = 5000;
  let fieldMissingSince = null;
  function fieldShown() {
    if (field()) { fieldMissingSince = null; return true; }
    if (fieldMissingSince === null) fieldMissingSince = Date.now();
    return Date.now() - fieldMissingSince > FIELD_WAIT_MS;
  }
  function ready() {
    if (!fieldShown()) return false;
    if (doc.body.hasAttribute('data-' + C().prefix + '-pending')) return false;  // a save on its way (annotate/next.js)
    const ks = window[C().keyState], m = doc.querySelector('[data-panel-state="' + C().prefix + '"]');
    if (!ks || !m) return true;
    if (ks.busy || ks.queue.length) return false;
    const run = m.getAttribute('data-run');
    return ks.seenRun === run || (!!ks.settle && ks.settle.run === run && Date.now() - ks.settle.since > 3000);
  }
  const pending = [];
  function later(fn) {
    pending.push(fn);
    if (pending.length === 1) setTimeout(flush, 20);
  }
  function flush() {
    if (!ready()) { setTimeout(flush, 20); return; }
    while (pending.length) pending.shift()();
  }
  function timed(e, fn) {
    const t0 = e.timeStamp || performance.now();
    const act = () => {
      fn();
      draw();
      const done = performance.now();
      requestAnimationFrame(() => { S.log.push({ key: e.key, js: done - t0, frame: performance.now() - t0 });
                                     if (S.log.length > 500) S.log.shift(); });
    };
    // A key that waited for the page to settle is timed from its press as well: the wait is part of its cost.
    if (pending.length || !ready()) { later(act); return; }
    act();
  }
  function move(d, extend) {
    const n = tokenCount();
    if (!n) return;
    S.moved = true;
    const clamp = (i) => Math.max(0, Math.min(n - 1, i));
    if (S.sel && extend) S.sel.b = clamp(S.sel.b + d);
    else {
      const from = S.sel ? S.sel.b : S.cur !== null ? S.cur : d > 0 ? -1 : n;
      const i = clamp(from + d);
      S.sel = { a: i, b: i };
    }
    S.cur = S.sel.b;
  }
  function mark(type) {
    const r = range(), spans = read();
    if (!r) return;  // the caption changed meanwhile
    const same = spans.findIndex((s) => s.type === type && s.start === r[0] && s.end === r[1]);
    if (same >= 0) { spans.splice(same, 1); write(spans); S.sel = null; return; }
    // Spans of one type never overlap: a new one swallows those of its type that it touches.
    let start = r[0], end = r[1], fix;
    const kept = spans.filter((s) => {
      if (s.type !== type || s.end <= start || s.start >= end) return true;
      start = Math.min(start, s.start); end = Math.max(end, s.end);
      return false;
    });
    const span = { start: start, end: end, type: type };
    if (fix !== undefined) span.fix = fix;
    kept.push(span);
    write(kept);
    const b = box(type);
    if (b && !b.checked) b.click();  // ticks it (and the panel chooses Inaccurate)
    S.sel = null;
  }
  function removeOn(r) {
    if (!r) return;
    const spans = read();
    const kept = spans.filter((s) => s.end <= r[0] || s.start >= r[1]);
    if (kept.length !== spans.length) write(kept);
  }
  function selectedSpan() {
    const r = range(), spans = read();
    if (!r) return null;
    return spans.find((s) => s.start <= S.sel.b && S.sel.b < s.end) || spans.find((s) => s.start < r[1] && r[0] < s.end) || null;
  }
  // The caption's spans listed under it (.ann-spans: type, words counted from 1, the suggested fix), as a
  // region list: a click on a row selects its words, Delete or Backspace on a focused row removes the span, and
  // each fix is edited in its row's field (Enter or leaving the field keeps it, empty: none). "/" with a marked
  // span selected puts the focus in its fix field. No dialog blocks the page (issue 38, item 5).
  function listEl() {
    const c = captionEl();
    if (!c || !C().list) return null;
    const holder = c.parentElement;
    let l = holder.querySelector(':scope > .ann-spans');
    if (!l) {
      l = doc.createElement('div');
      l.className = 'ann-spans'; l.setAttribute('data-testid', C().prefix + '-span-list');
      l.setAttribute('aria-label', 'Marked spans');
      c.insertAdjacentElement('afterend', l);
    }
    return l;
  }
  function spanKey(s) { return s.start + ':' + s.end + ':' + s.type; }
  function listSpans() {
    const l = listEl();
    if (!l) return;
    const value = S.value === null || S.value === undefined ? '[]' : S.value;
    if (l.getAttribute('data-value') === value && l.hasAttribute('data-for') && l.getAttribute('data-for') === String(S.load)) return;
    if (l.contains(doc.activeElement) && doc.activeElement.tagName === 'INPUT') return;  // redrawn once left
    l.setAttribute('data-value', value); l.setAttribute('data-for', String(S.load));
    l.textContent = '';
    const types = C().types, tokens = S.tokens || [];
    read().forEach((s) => {
      const t = types[s.type];
      if (!t) return;
      const row = doc.createElement('div');
      row.className = 'ann-span-row'; row.tabIndex = 0; row.setAttribute('data-span', spanKey(s));
      const dot = doc.createElement('span');
      dot.className = 'ann-span-dot'; dot.style.background = t.colour;
      const name = doc.createElement('b');
      name.textContent = t.name + ' ';
      const where = doc.createElement('span');
      const shown = tokens.slice(s.start, s.end).join(' ');
      where.className = 'ann-span-words';
      where.textContent = (s.end - s.start === 1 ? 'word ' + (s.start + 1) : 'words ' + (s.start + 1) + '–' + s.end) +
        ' “' + (shown.length > 40 ? shown.slice(0, 39) + '…' : shown) + '”';
      const fix = doc.createElement('input');
      fix.type = 'text'; fix.className = 'ann-span-fix'; fix.placeholder = 'suggested fix (optional)';
      fix.setAttribute('aria-label', 'Suggested fix for ' + where.textContent);
      fix.value = s.fix || '';
      const del = doc.createElement('button');
      del.type = 'button'; del.className = 'ann-span-del'; del.textContent = '✕';
      del.setAttribute('aria-label', 'Remove this span');
      row.append(dot, name, where, fix, del);
      l.appendChild(row);
    });
  }
  function findSpan(key) {
    const spans = read();
    return { spans: spans, i: spans.findIndex((x) => spanKey(x) === key) };
  }
  function setFix(key, text) {
    const f = findSpan(key);
    if (f.i < 0) return;
    const fix = (text || '').replace(/\s+/g, ' ').trim();
    if ((f.spans[f.i].fix || '') === fix) return;
    if (fix) f.spans[f.i].fix = fix; else delete f.spans[f.i].fix;
    write(f.spans);
    draw();
  }
  function removeSpan(key) {
    const f = findSpan(key);
    if (f.i < 0) return;
    f.spans.splice(f.i, 1);
    write(f.spans);
    S.sel = null;
    draw();
  }
  // Where the page has no list of spans (cfg.list off: Adjudication), the fix is asked for in a dialog.
  function promptFix(span) {
    const text = (S.tokens || []).slice(span.start, span.end).join(' ');
    const answer = window.prompt('Suggested fix for "' + text + '" (' + C().types[span.type].name + '); empty: none',
                                 span.fix || '');
    if (answer !== null) setFix(spanKey(span), answer);
  }
  function editFix(span) {
    if (!C().list) { promptFix(span); return; }
    listSpans();
    const l = listEl();
    const row = l && l.querySelector('[data-span="' + spanKey(span) + '"]');
    const input = row && row.querySelector('input');
    if (input) { input.focus(); input.select(); }
  }
  doc.addEventListener('click', function (e) {
    const row = e.target && e.target.closest ? e.target.closest('.ann-span-row') : null;
    if (!row) return;
    const key = row.getAttribute('data-span');
    if (e.target.closest('.ann-span-del')) { e.preventDefault(); removeSpan(key); return; }
    if (e.target.closest('input')) return;
    const f = findSpan(key);
    if (f.i < 0) return;
    S.sel = { a: f.spans[f.i].start, b: f.spans[f.i].end - 1 }; S.cur = S.sel.b; S.vsel = true; S.moved = true;
    draw();
  }, true);
  doc.addEventListener('keydown', function (e) {
    const t = e.target;
    if (!t || !t.closest) return;
    const row = t.closest('.ann-span-row');
    if (!row) return;
    const key = row.getAttribute('data-span');
    if (t.tagName === 'INPUT') {
      if (e.key === 'Enter') { e.preventDefault(); e.stopImmediatePropagation(); setFix(key, t.value); t.blur(); }
      return;
    }
    if (e.key === 'Delete' || e.key === 'Backspace') { e.preventDefault(); e.stopImmediatePropagation(); removeSpan(key); }
  }, true);
  doc.addEventListener('focusout', function (e) {
    const t = e.target;
    if (!t || !t.classList || !t.classList.contains('ann-span-fix')) return;
    const row = t.closest('.ann-span-row');
    if (row) setFix(row.getAttribute('data-span'), t.value);
    setTimeout(listSpans, 0);
  }, true);
  // Unticking a type drops its spans, and choosing Accurate drops them all (the save would refuse them).
  // Where the field is sent at once (cfg.commit) the page's own callbacks do this on the server.
  function prune() {
    if (C().commit) return;
    const spans = read();
    const kept = spans.filter((s) => { const b = box(s.type); return !b || b.checked; });
    if (kept.length !== spans.length) { write(kept); draw(); }
  }
  function typing(t) {
    return t && (t.tagName === 'TEXTAREA' || t.isContentEditable ||
                 (t.tagName === 'INPUT' && !['checkbox', 'radio', 'button'].includes(t.type)));
  }
  const SPAN_KEYS = new Set([',', '.', '<', '>', 'Escape', 'Backspace', 'Delete', '/']);
  function stop(e) { e.preventDefault(); e.stopImmediatePropagation(); }
  window.addEventListener('keydown', function (e) {
    if (S.replaying || !captionEl() || typing(e.target)) return;
    if (e.target && e.target.closest && e.target.closest('.ann-span-row')) return;  // the span list's own keys
    // Where the types are not asked (the label-only step of a second pass) no key marks words.
    if (captionEl().hasAttribute('data-no-spans') && !pending.length) return;
    if (doc.querySelector('[data-testid="stDialog"] [role="dialog"]')) return;
    const help = doc.getElementById(C().prefix + '-help');
    if (help && !help.hidden) return;
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const k = e.key;
    // Whether words are selected once the keys still waiting have acted (S.vsel), or now.
    const sel = pending.length ? S.vsel : !!S.sel;
    const type = k.length === 1 ? C().keyToType[k.toLowerCase()] : undefined;
    if (pending.length && !SPAN_KEYS.has(k) && !(type && sel)) {
      // Span keys are still waiting: a key of the page's (Enter above all) waits behind them, then goes to
      // the page's handler as typed, so a save carries the spans typed before it.
      stop(e);
      const init = { key: k, code: e.code, shiftKey: e.shiftKey, repeat: e.repeat, bubbles: true, cancelable: true };
      later(() => { S.replaying = true; try { doc.dispatchEvent(new KeyboardEvent('keydown', init)); }
                    finally { S.replaying = false; }
                    if (type || k.toLowerCase() === C().accurateKey) setTimeout(() => later(prune), 40); });
      return;
    }
    if (k === ',' || k === '.' || k === '<' || k === '>') {
      stop(e); S.vsel = true;
      timed(e, () => move(k === ',' || k === '<' ? -1 : 1, k === '<' || k === '>'));
      return;
    }
    if (k === 'Escape' && sel) { stop(e); S.vsel = false; timed(e, () => { S.sel = null; }); return; }
    if ((k === 'Backspace' || k === 'Delete') && sel) { stop(e); timed(e, () => removeOn(range())); return; }
    if (k === '/' && sel && (pending.length || selectedSpan())) {
      stop(e);
      timed(e, () => { const span = selectedSpan(); if (span) editFix(span); });
      return;
    }
    if (type && sel) { stop(e); S.vsel = false; if (!e.repeat) timed(e, () => mark(type)); return; }
    // A type key without a selection ticks or unticks as before (widgets/keys.js); an untick, or Accurate, then
    // drops the spans of the types no longer ticked.
    if (type || (k.length === 1 && k.toLowerCase() === C().accurateKey)) setTimeout(() => later(prune), 40);
  }, true);
  // The mouse: press on a word and drag, or click, then shift-click; a click on a span's badge removes it.
  function wordAt(target, point) {
    if (!target || !target.closest) return null;
    const w = target.closest('[data-testid="' + C().caption + '"] .ann-w');
    if (w) return w;
    // A run still plain text under the pointer: made words, then the word at the pointer.
    const chunk = target.closest('[data-testid="' + C().caption + '"] .ann-chunk');
    if (!chunk || chunk.hasAttribute('data-words') || !point) return null;
    expand(chunk);
    const at = doc.elementFromPoint(point.x, point.y);
    return at && at.closest ? at.closest('.ann-w') : null;
  }
  function onBadge(w, e) {
    if (!w.hasAttribute('data-badge')) return false;
    const r = doc.createRange();
    r.selectNodeContents(w);
    const rects = Array.from(r.getClientRects());
    if (!rects.length) return false;
    const last = rects[rects.length - 1];
    return e.clientX > last.right + 1 && e.clientY >= last.top - 4;
  }
  doc.addEventListener('mousedown', function (e) {
    const c = captionEl();
    if (e.button !== 0 || !c || c.hasAttribute('data-no-spans')) return;
    const w = wordAt(e.target, { x: e.clientX, y: e.clientY });
    if (!w) return;
    e.preventDefault();
    const i = parseInt(w.getAttribute('data-i'), 10);
    // What the press does is decided now, where it was made, even when it acts later (the page still
    // settling): a type key pressed before it acts must already count the words it selects (S.vsel).
    const badge = onBadge(w, e);
    if (!badge) { S.vsel = true; S.drag = true; }
    timed(e, () => {
      if (badge) {
        const spans = read();
        const kept = spans.filter((s) => s.end - 1 !== i);
        if (kept.length !== spans.length) write(kept);
        return;
      }
      if (e.shiftKey && S.sel) S.sel.b = i; else S.sel = { a: i, b: i };
      S.cur = S.sel.b;
    });
  }, true);
  doc.addEventListener('mouseover', function (e) {
    if (!S.drag) return;
    const w = wordAt(e.target, { x: e.clientX, y: e.clientY });
    if (!w) return;
    const i = parseInt(w.getAttribute('data-i'), 10);
    // A drag over words whose press still waits extends the selection once that press has acted.
    const extend = () => { if (S.sel && i !== S.sel.b) { S.sel.b = i; S.cur = i; draw(); } };
    if (pending.length) later(extend); else extend();
  }, true);
  doc.addEventListener('mouseup', function () { S.drag = false; }, true);
  doc.addEventListener('click', function (e) {
    // A click in the panel (a tick, Accurate) may drop spans; the panel's own script acts first.
    if (e.target && e.target.closest && e.target.closest('[data-testid="stForm"]')) setTimeout(prune, 40);
  }, true);
})();
