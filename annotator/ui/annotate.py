"""The annotate screen: state, callbacks and rendering (pages/annotate.py calls :func:`render`).

Every action is a widget callback, so it runs *before* the script renders:
"Save & next" stores the revision (one committed transaction), finds the next
caption and loads it into the widgets, and the same run then shows it. The
widgets have fixed keys (``ann_*``) so the keyboard script can find them by
their ``st-key-ann_*`` CSS class.

Generated captions and references are untrusted text: they are HTML-escaped
before they are put into markup, never rendered as Markdown.
"""

from __future__ import annotations

import html
import json
import time

import streamlit as st

from ..annotation import (
    MAX_NOTE_LENGTH, STAGE_COARSE, STAGE_FINE, Queue, Task, keyboard_map, load_guidelines, prefetch,
    task_image, unrelated_hint,
)
from ..errors import AnnotatorError, InputError, StoreUnavailable
from ..model import Label, Role
from ..taxonomy import taxonomy
from . import PROGRESS_KEY, PageContext, md_escape, outage_notice, progress, remember_progress, signed_in

K_QKEY = "ann_qkey"
K_QUEUE = "ann_queue"
K_POS = "ann_pos"
K_TASK = "ann_task"
K_SHOWN = "ann_shown_at"
K_LABEL = "ann_label"
K_NOTE = "ann_note"
K_MSG = "ann_msg"
K_ERR = "ann_err"
K_DONE = "ann_all_done"
K_BOXES = "ann_show_boxes"
K_REFS = "ann_show_refs"
K_SIZE = "ann_queue_size"
K_PREFETCHED = "ann_prefetched_for"
SIZE_MAX_AGE = 60.0  # seconds; a queue only changes size when a lead reassigns
PREFETCH_DELAY = 0.4  # seconds: let this run reach the browser before preparing the next images

LABEL_TEXT = {Label.ACCURATE.value: "Accurate", Label.INACCURATE.value: "Inaccurate"}


def type_key(type_id: str) -> str:
    """Session/widget key of an error-type checkbox."""
    return f"ann_type_{type_id}"


# --------------------------------------------------------------------------- state

def _queue(ctx: PageContext) -> Queue:
    key = (ctx.user.name, ctx.project)
    now = time.monotonic()
    if st.session_state.get(K_QKEY) != key:
        for k in (K_POS, K_TASK, K_DONE, K_MSG, K_ERR):
            st.session_state.pop(k, None)
    elif now - st.session_state.get("ann_queue_opened", 0.0) < SIZE_MAX_AGE:
        return st.session_state[K_QUEUE]
    # (Re)open now and then: a lead may have changed the second-pass mode or the assignment.
    try:
        q = Queue.open(ctx.store, ctx.user.name, ctx.user.role, ctx.project, create_user=ctx.user.local_mode)
    except StoreUnavailable:
        if st.session_state.get(K_QKEY) == key:  # keep working with the queue already open until it is back
            return st.session_state[K_QUEUE]
        raise
    st.session_state[K_QUEUE] = q
    st.session_state[K_QKEY] = key
    st.session_state["ann_queue_opened"] = now
    return q


def _queue_size(q: Queue) -> int:
    """The queue's length, re-counted at most once a minute (counting a long queue is not free)."""
    cached = st.session_state.get(K_SIZE)
    now = time.monotonic()
    if cached is None or cached[0] != (q.user, q.project) or now - cached[2] > SIZE_MAX_AGE:
        try:
            cached = ((q.user, q.project), q.size(), now)
        except StoreUnavailable:
            if cached is None or cached[0] != (q.user, q.project):
                raise
            return cached[1]  # the last count until the database is back
        st.session_state[K_SIZE] = cached
    return cached[1]


def _load(q: Queue, position: int | None) -> None:
    """Show ``position``: load the user's own judgement into the widgets and start the clock."""
    if position is None:
        st.session_state[K_POS] = None
        st.session_state[K_TASK] = None
        st.session_state[K_DONE] = True
        return
    task = q.task(position)
    cur = task.current
    st.session_state[K_POS] = position
    st.session_state[K_TASK] = task
    st.session_state[K_DONE] = False
    st.session_state[K_LABEL] = cur.label.value if cur is not None and cur.label is not None else None
    ticked = set(cur.error_types) if cur is not None else set()
    for t in taxonomy().types:
        st.session_state[type_key(t.id)] = t.id in ticked
    st.session_state[K_NOTE] = cur.note if cur is not None else ""
    st.session_state[K_SHOWN] = time.monotonic()
    st.session_state[K_ERR] = None


def _ticked() -> list[str]:
    return [t.id for t in taxonomy().types if st.session_state.get(type_key(t.id))]


def _seconds() -> float:
    return round(time.monotonic() - st.session_state.get(K_SHOWN, time.monotonic()), 2)


# --------------------------------------------------------------------------- callbacks

def _reporting(callback):
    """Run ``callback``; a core error (the database down, above all) becomes the page's error message,
    so the page still draws the caption with the widgets as they were."""
    def run(*args):
        try:
            callback(*args)
        except AnnotatorError as exc:
            st.session_state[K_ERR] = str(exc)
    run.__name__ = run.__qualname__ = callback.__name__
    return run


@signed_in
def _on_save(ctx: PageContext) -> None:
    q: Queue = st.session_state[K_QUEUE]
    task: Task | None = st.session_state.get(K_TASK)
    if task is None:
        return
    label = st.session_state.get(K_LABEL)
    ticked = _ticked() if task.stage != STAGE_COARSE else []
    if label is None and ticked:
        # A type ticked just before the click: the tick's own run (which marks the caption inaccurate)
        # may not have reached the page before Save was pressed. Ticking a type means inaccurate.
        label = Label.INACCURATE.value
    types = ticked if label == Label.INACCURATE.value else []
    try:
        result = q.save(task, label, types, st.session_state.get(K_NOTE, ""), _seconds())
    except InputError as exc:
        st.session_state[K_ERR] = exc.detail[:1].upper() + exc.detail[1:] + "."
        return
    except AnnotatorError as exc:
        st.session_state[K_ERR] = str(exc)
        return
    names = ", ".join(taxonomy().get(t).name for t in result.error_types)
    st.session_state[K_MSG] = (f"Saved item {task.item.key}: {LABEL_TEXT[result.label]}"
                               + (f" ({names})" if names else "") + f" — revision {result.revision}.")
    _move_on_after_storing(q, task, lambda: _update_progress(ctx, q, counted_before=result.was_done))


def _move_on_after_storing(q: Queue, task: Task, before=None) -> None:
    """Show the next caption to do after ``task`` was stored (K_MSG says how). If the database stops
    answering right then, the stored caption stays on screen and the message says both things."""
    try:
        if before is not None:
            before()
        _load(q, q.next_todo(after=task.position))
    except StoreUnavailable:
        st.session_state[K_ERR] = (f"{st.session_state[K_MSG]} The database stopped answering right after, so the "
                                   "next caption cannot be loaded yet: press Next → once it is back.")


def _update_progress(ctx: PageContext, q: Queue, *, counted_before: bool) -> None:
    cached = st.session_state.get(PROGRESS_KEY, {}).get((ctx.user.name, ctx.project))
    if cached is None or cached[0] is None or q.staged:
        remember_progress(ctx.user, ctx.project, q.progress())
        return
    prog = cached[0]
    if not counted_before:
        prog = type(prog)(min(prog.assigned, prog.done + 1), prog.assigned, prog.fine_waiting)
    remember_progress(ctx.user, ctx.project, prog)


@_reporting
@signed_in
def _on_skip(ctx: PageContext) -> None:
    q: Queue = st.session_state[K_QUEUE]
    task: Task | None = st.session_state.get(K_TASK)
    if task is None:
        return
    try:
        stored = q.skip(task, st.session_state.get(K_NOTE, ""), _seconds())
    except AnnotatorError as exc:
        st.session_state[K_ERR] = str(exc)
        return
    st.session_state[K_MSG] = (f"Skipped item {task.item.key}; it comes back at the end." if stored
                               else f"Item {task.item.key} is judged already; moved on without changing it.")
    _move_on_after_storing(q, task)


@_reporting
@signed_in
def _on_move(step: int) -> None:
    q: Queue = st.session_state[K_QUEUE]
    pos = st.session_state.get(K_POS)
    if pos is None:  # after the end: step back onto the last caption
        target = q.neighbour(10**12, -1) if step < 0 else None
    else:
        target = q.neighbour(pos, step)
    if target is not None:
        st.session_state[K_MSG] = None
        _load(q, target)


@_reporting
@signed_in
def _on_goto_todo() -> None:
    q: Queue = st.session_state[K_QUEUE]
    target = q.first_todo()
    if target is not None:
        st.session_state[K_MSG] = None
        _load(q, target)


def _on_label() -> None:
    # An accurate caption has no error types: untick them so what is shown is what is saved.
    if st.session_state.get(K_LABEL) == Label.ACCURATE.value:
        for t in taxonomy().types:
            st.session_state[type_key(t.id)] = False
    st.session_state[K_ERR] = None


def _on_type(type_id: str) -> None:
    # Ticking an error type means the caption is inaccurate.
    if st.session_state.get(type_key(type_id)):
        st.session_state[K_LABEL] = Label.INACCURATE.value
    st.session_state[K_ERR] = None


def _on_use_unrelated() -> None:
    for t in taxonomy().types:
        st.session_state[type_key(t.id)] = t.id == "unrelated"
    st.session_state[K_LABEL] = Label.INACCURATE.value


@signed_in
def _on_assign_to_me(ctx: PageContext) -> None:
    from ..assignment import assign_to_self
    try:
        assign_to_self(ctx.store, ctx.project, ctx.user.name, ctx.user.role)
    except AnnotatorError as exc:
        st.session_state[K_ERR] = str(exc)
    st.session_state.pop(K_QKEY, None)
    st.session_state.pop(K_SIZE, None)
    remember_progress(ctx.user, ctx.project, None)
    st.session_state.pop(PROGRESS_KEY, None)


# --------------------------------------------------------------------------- rendering helpers

def caption_html(text: str) -> str:
    """The generated caption as escaped markup (shown verbatim, never interpreted)."""
    return f'<div class="ann-caption" data-testid="ann-caption">{html.escape(text)}</div>'


def reference_html(text: str, mentions, box_order: list[str]) -> str:
    """A reference with its box mentions highlighted (tokens escaped first, then marked up)."""
    from ..images import box_colour
    tokens = [html.escape(t) for t in text.split()]
    opening: dict[int, str] = {}
    closing: dict[int, str] = {}
    for m in mentions:
        if not (0 <= m.start < m.end <= len(tokens)):
            continue  # a stale span must not break the display
        idx = box_order.index(m.box_ids[0]) if m.box_ids and m.box_ids[0] in box_order else -1
        r, g, b = box_colour(idx) if idx >= 0 else (160, 160, 160)
        ids = html.escape(",".join(m.box_ids))
        opening[m.start] = opening.get(m.start, "") + (
            f'<mark style="background: rgba({r},{g},{b},0.35); border-bottom: 3px solid rgb({r},{g},{b}); '
            f'padding: 0 2px; border-radius: 3px">')
        closing[m.end - 1] = f'<sub style="font-size: 0.7em; opacity: 0.8"> {ids}</sub></mark>' + closing.get(m.end - 1, "")
    out = []
    for i, tok in enumerate(tokens):
        out.append(opening.get(i, "") + tok + closing.get(i, ""))
    return '<div class="ann-ref">' + " ".join(out) + "</div>"


_STYLE = """<style>
.ann-caption { font-size: 1.45rem; line-height: 1.45; padding: 0.6rem 0.9rem; border-left: 5px solid #1f77b4;
  background: #f4f7fb; border-radius: 4px; white-space: pre-wrap; word-break: break-word; }
.ann-ref { font-size: 1rem; line-height: 1.7; margin: 0.15rem 0 0.35rem 0; }
div[class*="st-key-ann_type_"] label p { font-size: 0.92rem; white-space: normal; overflow: visible;
  text-overflow: clip; }
div[class*="st-key-ann_type_"] label div { overflow: visible; }
div[class*="st-key-ann_show_"] label p { white-space: nowrap; }
[data-testid="stMainBlockContainer"] { padding-top: 2.2rem; padding-left: 2.2rem; padding-right: 2.2rem; }
</style>"""


def short_name(type_name: str, group: str) -> str:
    """The type's name without its group word ("Wrong subject" under Subject → "Wrong"), for the narrow columns."""
    words = type_name.split()
    kept = [w for w in words if w.lower() != group.lower()]
    text = " ".join(kept) if kept else type_name
    return text[:1].upper() + text[1:]


def _keyboard_script() -> str:
    """A small script (run in the page itself) that maps keys to the widgets by their st-key-* class."""
    tax = taxonomy()
    actions = {}
    for key, action in keyboard_map(tax).items():
        actions[key] = action
    config = json.dumps({"keys": actions, "labels": [Label.ACCURATE.value, Label.INACCURATE.value],
                         "types": {t.id: type_key(t.id) for t in tax.types}})
    return """<script>
(function () {
  // Keys -> clicks on the widgets (found by their st-key-* class). An action that makes
  // Streamlit rerun holds the keys typed after it until that run is over and the page shows
  // its effect, then replays them, so fast typing ("n", "x", Enter, "y", Enter ...) reaches
  // the server in order and every save carries the values set just before it.
  const cfg = %s;
  window.__annotatorKeys = cfg;
  if (window.__annotatorKeysInstalled) return;
  window.__annotatorKeysInstalled = true;
  const doc = document;
  const q = (sel) => doc.querySelector(sel);
  const st = { busy: null, queue: [], log: [], runs: 0, running: false, idleSince: Date.now() };
  window.__annotatorKeyState = st;  // for tests and debugging
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
    const c = q('[data-testid="ann-caption"]');
    return c ? c.textContent : null;
  }
  function alertText() {
    return Array.from(doc.querySelectorAll('[data-testid="stAlert"]')).map((a) => a.textContent).join('|');
  }
  function radios() { return doc.querySelectorAll('.st-key-ann_label input[type="radio"]'); }

  // Each returns {result: 'done' | 'noop' | 'missing', kind, expect}: 'done' clicked (a rerun
  // follows), 'noop' nothing to change, 'missing' the widget is not on the page right now.
  function clickButton(key) {
    const b = q('.st-key-' + key + ' button');
    if (!b) return { result: 'missing' };
    if (b.disabled) return { result: 'noop' };
    const caption = captionText(), alerts = alertText();
    b.click();
    return { result: 'done', kind: 'button', expect: () => captionText() !== caption || alertText() !== alerts };
  }
  function clickInput(key) {
    const sel = '.st-key-' + key + ' input';
    const i = q(sel);
    if (!i) return { result: 'missing' };
    if (i.disabled) return { result: 'noop' };
    const was = i.checked;
    i.click();
    return { result: 'done', kind: 'widget', expect: () => { const j = q(sel); return !!j && j.checked !== was; } };
  }
  function chooseLabel(index) {
    const r = radios()[index];
    if (!r) return { result: 'missing' };
    if (r.checked) return { result: 'noop' };
    r.click();
    return { result: 'done', kind: 'widget', expect: () => { const x = radios()[index]; return !!x && x.checked; } };
  }
  function perform(action) {
    const caption = captionText();
    const r = act(action);
    r.caption = caption;
    return r;
  }
  function act(action) {
    if (action === 'save') return clickButton('ann_save');
    if (action === 'prev') return clickButton('ann_prev');
    if (action === 'next') return clickButton('ann_next');
    if (action === 'skip') return clickButton('ann_skip');
    if (action === 'accurate') return chooseLabel(0);
    if (action === 'inaccurate') return chooseLabel(1);
    if (action === 'boxes') return clickInput('ann_show_boxes');
    if (action === 'references') return clickInput('ann_show_refs');
    if (action.startsWith('type:')) return clickInput(cfg.types[action.slice(5)]);
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
    if (quiet && captionText() !== b.caption) {
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
  function handle(action, tries) {
    if (st.busy) { st.queue.push(action); return; }
    const runs = st.runs;
    const r = perform(action);
    st.log.push(action + ':' + r.result);
    if (st.log.length > 50) st.log.shift();
    if (r.result === 'done') {
      st.busy = { since: Date.now(), runs: runs, kind: r.kind, expect: r.expect, caption: r.caption };
      setTimeout(watch, 15);
    } else if (r.result === 'missing' && (tries || 0) < 40) {
      // Hold this key (and the ones after it) until the widget is back.
      st.busy = { since: Date.now(), retry: true };
      setTimeout(() => { st.busy = null; const rest = st.queue; st.queue = []; handle(action, (tries || 0) + 1);
                         rest.forEach((a) => handle(a)); }, 50);
    }
  }
  doc.addEventListener('keydown', function (e) {
    if (!q('.st-key-ann_save')) return;            // only on the annotate page
    const t = e.target;
    const typing = t && (t.tagName === 'TEXTAREA' || t.isContentEditable ||
      (t.tagName === 'INPUT' && !['checkbox', 'radio', 'button'].includes(t.type)));
    if (typing) {
      if (e.key === 'Escape') { t.blur(); e.preventDefault(); e.stopPropagation(); }
      else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        // Leaving the field commits the note (its own run); the save waits for it.
        e.preventDefault(); e.stopPropagation(); t.blur();
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
    else if (!e.repeat) action = cfg.keys[e.key.length === 1 ? e.key.toLowerCase() : e.key] || null;
    if (e.key === 'Enter' || e.key === 'ArrowLeft' || e.key === 'ArrowRight') { e.preventDefault(); e.stopPropagation(); }
    if (!action) return;
    // Ours: keep it from Streamlit's own shortcuts (r reruns, c clears caches).
    e.preventDefault(); e.stopPropagation();
    handle(action);
  }, true);
})();
</script>""" % config


# --------------------------------------------------------------------------- page

def render(ctx: PageContext) -> None:
    """Draw the annotate page for ``ctx.user`` in ``ctx.project``."""
    st.html(_STYLE)
    if not ctx.project:
        st.info("There is no project yet. An admin imports one on the Data page or with `annotator import`.")
        return
    try:
        q = _queue(ctx)
        if _queue_size(q) == 0:
            st.session_state.pop(K_SIZE, None)  # look again on the next run: work may be assigned any time
            _render_nothing_assigned(ctx)
            return
        if K_POS not in st.session_state:
            _load(q, q.first_todo())
    except StoreUnavailable as exc:
        outage_notice(exc)
        return
    except AnnotatorError as exc:
        st.error(md_escape(str(exc)))
        return
    task: Task | None = st.session_state.get(K_TASK)
    prog = progress(ctx.store, ctx.user, ctx.project)

    head, bar = st.columns([3, 2], vertical_alignment="bottom")
    with head:
        st.subheader(f"Annotate · {md_escape(ctx.project)}", anchor=False)
    with bar:
        if prog is not None:
            st.progress(prog.fraction, text=f"{prog.done} of {prog.assigned} judged"
                        + (f" · {prog.fine_waiting} waiting for the fine pass" if prog.fine_waiting else ""))

    if task is None:
        _render_all_done(q)
        return
    _render_task(ctx, q, task)
    st.html(_keyboard_script(), unsafe_allow_javascript=True)
    if st.session_state.get(K_PREFETCHED) != (q.user, q.project, task.position):
        # While the annotator reads this caption, prepare the images of the next ones.
        st.session_state[K_PREFETCHED] = (q.user, q.project, task.position)
        prefetch(q, task.position, delay=PREFETCH_DELAY)


def _render_nothing_assigned(ctx: PageContext) -> None:
    from ..store.assignments import count_project_assignments
    from ..store.projects import project_id
    with ctx.store.read() as conn:
        assigned_at_all = count_project_assignments(conn, project_id(conn, ctx.project)) > 0
    st.subheader(f"Annotate · {md_escape(ctx.project)}", anchor=False)
    if st.session_state.get(K_ERR):
        st.error(md_escape(st.session_state[K_ERR]))
    if ctx.user.role in (Role.LEAD, Role.ADMIN) and not assigned_at_all:
        st.info("Nothing in this project is assigned yet. Split it across annotators on the Assignment page, "
                "or judge every caption yourself.")
        st.button("Assign every caption to me", key="ann_assign_me", on_click=_on_assign_to_me, args=(ctx,),
                  type="primary")
    else:
        st.info("Nothing is assigned to you in this project. Ask your lead to assign you some captions, "
                "or pick another project in the sidebar.")


def _render_all_done(q: Queue) -> None:
    st.success("Every caption in your queue is judged. Thank you! You can still go back and revise.")
    c1, c2, _ = st.columns([1, 1, 4])
    c1.button("← Previous", key="ann_prev", on_click=_on_move, args=(-1,))
    c2.button("Check for new work", key="ann_todo", on_click=_on_goto_todo)


def _render_task(ctx: PageContext, q: Queue, task: Task) -> None:
    tax = taxonomy()
    item = task.item
    left, right = st.columns([5, 7], gap="medium")

    with left:
        t1, t2, t3 = st.columns([1, 1.3, 1.4])
        st.session_state.setdefault(K_BOXES, True)
        st.session_state.setdefault(K_REFS, True)
        show_boxes = t1.toggle("Boxes `h`", key=K_BOXES)
        show_refs = t2.toggle("References `t`", key=K_REFS)
        t3.caption(f"Item **{md_escape(item.key)}** · {len(item.boxes)} boxes")
        jpeg, note = task_image(task, show_boxes)
        st.image(jpeg, width="stretch", output_format="JPEG")
        if note:
            st.caption(f":orange[{md_escape(note)}]")
        if show_refs:
            if item.references:
                order = [b.box_id for b in item.boxes]
                st.html("".join(reference_html(r.text, r.mentions, order) for r in item.references))
            else:
                st.caption("This item has no references.")

    with right:
        queue_len = _queue_size(q)
        meta = [f"Caption {task.position + 1} of {queue_len}"]
        if item.is_practice:
            meta.append(":orange-badge[Practice item]")
        if task.stage == STAGE_COARSE:
            meta.append(":violet-badge[Second annotation: accurate / inaccurate only]")
        elif task.stage == STAGE_FINE:
            meta.append(":violet-badge[Fine pass: which errors?]")
        st.markdown(" · ".join(meta))
        st.html(caption_html(task.caption.text))
        if task.current is not None:
            cur = task.current
            what = LABEL_TEXT.get(cur.label.value, "?") if cur.label is not None else "skipped"
            st.caption(f"You judged this caption before ({what}, revision {cur.revision}). "
                       "Saving again keeps the earlier version in the history.")

        st.radio("Task 1 · Is the caption an accurate description of the image?",
                 [Label.ACCURATE.value, Label.INACCURATE.value], index=None, key=K_LABEL, horizontal=True,
                 format_func=lambda v: f"{LABEL_TEXT[v]} `{tax.accurate_key if v == 'accurate' else tax.inaccurate_key}`",
                 on_change=_on_label)

        if task.stage == STAGE_COARSE:
            st.caption("This caption is double-annotated. Give only the accurate / inaccurate judgement now; "
                       "if both annotators find it inaccurate it comes back to you for the error types.")
        else:
            st.markdown("**Task 2 · Which errors does it make?** Tick every type that applies "
                        "(ticking one marks the caption inaccurate).")
            cols = st.columns(len(tax.groups))
            for col, group in zip(cols, tax.groups):
                with col:
                    st.markdown(f"**{group}**")
                    for t in tax.by_group(group):
                        st.checkbox(f"{short_name(t.name, group)} `{t.key}`", key=type_key(t.id),
                                    help=f"**{t.name}**: {t.definition}",
                                    on_change=_on_type, args=(t.id,))
            hint = unrelated_hint(_ticked(), tax)
            if hint:
                s1, s2 = st.columns([3, 1], vertical_alignment="center")
                s1.info(md_escape(hint), icon=":material/lightbulb:")
                s2.button("Use Generally unrelated", key="ann_use_unrelated", on_click=_on_use_unrelated)

        st.text_input("Note (optional; required for Other) — Esc leaves the field", key=K_NOTE,
                      max_chars=MAX_NOTE_LENGTH, placeholder="anything the team should know about this caption")

        if st.session_state.get(K_ERR):
            st.error(md_escape(st.session_state[K_ERR]), icon=":material/error:")
        elif st.session_state.get(K_MSG):
            st.caption(f":green[:material/check_circle:] {md_escape(st.session_state[K_MSG])}")

        b1, b2, b3, b4 = st.columns([1, 1, 1, 2])
        b1.button("← Previous", key="ann_prev", on_click=_on_move, args=(-1,), width="stretch")
        b2.button("Skip `k`", key="ann_skip", on_click=_on_skip, args=(ctx,), width="stretch")
        b3.button("Next →", key="ann_next", on_click=_on_move, args=(1,), width="stretch")
        b4.button("Save & next ⏎", key="ann_save", on_click=_on_save, args=(ctx,), type="primary", width="stretch")

        if task.current is not None:
            with st.expander("History of your judgement of this caption"):
                try:
                    rows = [{"revision": j.revision, "label": j.label.value if j.label else "skipped",
                             "error types": ", ".join(j.error_types), "note": j.note, "seconds": round(j.seconds, 1),
                             "saved at": j.created_at} for j in q.history(task.caption_id)]
                except StoreUnavailable:
                    st.caption("The history cannot be read while the database is not answering.")
                else:
                    st.dataframe(rows, hide_index=True, width="stretch")

        with st.expander("Keys and contrasts"):
            st.markdown("`y` accurate · `n` inaccurate · the key on a label ticks that type · `Enter` save & next · "
                        "`←` / `→` previous / next · `k` skip · `h` boxes · `t` references · `Esc` leave the note · "
                        "`Ctrl+Enter` save from the note")
            for c in load_guidelines().contrasts:
                st.markdown(f"**{c.title}** {c.rule}")
