"""MTLD (measure of textual lexical diversity) and its published variants.

MTLD is the text length divided by the number of *factors*, a factor being a
stretch of text whose running TTR falls to the threshold (0.72); the remainder
counts as a partial factor (1 − TTR) / (1 − threshold). It is computed forwards
and backwards and averaged.

Which variant of the published definitions?
-------------------------------------------
Implementations differ in four details, all parameters of :class:`MTLDOptions`:

* the factor test: ``TTR <= threshold`` (lexicalrichness) or
  ``TTR < threshold`` (McCarthy & Jarvis; taaled, lexical-diversity);
* a minimum factor length: none (lexicalrichness) or 10 tokens (taaled,
  lexical-diversity);
* whether the very last token may complete a full factor (lexicalrichness) or
  the text always ends in a partial factor (taaled, lexical-diversity);
* what a direction scores when no factor at all was completed and the
  remainder has TTR 1: the text length (lexicalrichness counts one factor) or 0
  (taaled and lexical-diversity divide by zero factors and return 0).

Presets: :data:`MTLD_LEXICALRICHNESS` (the default) and
:data:`MTLD_MCCARTHY_JARVIS` (= ``taaled`` ``lexdiv(...).mtldo`` and
``lexical_diversity.lex_div.mtld``). ``taaled``'s headline ``mtld`` averages
factor lengths instead of dividing the length by the factor count:
:data:`MTLD_TAALED_MEAN_LENGTH`.

Speed
-----
MTLD looks sequential — where a factor ends decides where the next one starts
— but where a factor ends depends only on where it starts, so two factor chains
that share one boundary share all later ones. Long texts are therefore cut into
chunks and one speculative chain started at every chunk; all chains advance
together, one token per numpy round, through a small automaton (state = tokens
and repeats of the open factor, input = the distance back to the previous
occurrence of the token's type, clipped), and each chain runs on into the next
chunk until it meets that chunk's chain. Stitching follows the true chain from
chain to chain; where two chains never met, a plain sequential walk bridges the
gap. Short texts, and texts whose factors are too long for the automaton, are
walked sequentially (a tight loop over the clipped distances, stored as bytes,
with over-long factors finished in numpy). The distances come from one pass of
pandas' group-shift kernel instead of a sort.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from .profile import Profile

__all__ = ["MTLDOptions", "MTLD_LEXICALRICHNESS", "MTLD_MCCARTHY_JARVIS", "MTLD_TAALED_MEAN_LENGTH", "MTLD_PRESETS",
           "mtld", "mtld_factors"]


@dataclass(frozen=True)
class MTLDOptions:
    """One MTLD variant.

    ``threshold``          factor TTR threshold (0 < threshold < 1), 0.72 by default
    ``strict``             factor test ``TTR < threshold`` instead of ``TTR <= threshold``
    ``min_factor_length``  a factor needs at least this many tokens (1 = no minimum)
    ``last_token_closes``  the final token may complete a full factor (else the text
                           always ends with a partial factor)
    ``no_factor``          a direction without any factor scores ``"length"`` (the
                           number of tokens) or ``"zero"``
    ``aggregate``          ``"ratio"``: tokens / factors per direction, then the mean of
                           both directions; ``"mean_length"``: mean length of all
                           factors of both directions (a partial factor of length ℓ and
                           weight w counts as ℓ / w)
    """

    threshold: float = 0.72
    strict: bool = False
    min_factor_length: int = 1
    last_token_closes: bool = True
    no_factor: str = "length"
    aggregate: str = "ratio"

    def __post_init__(self):
        if not 0.0 < float(self.threshold) < 1.0:
            raise ValueError(f"the MTLD threshold must lie strictly between 0 and 1, not {self.threshold!r}")
        if int(self.min_factor_length) < 1:
            raise ValueError("the minimum MTLD factor length must be at least 1")
        if self.no_factor not in ("length", "zero"):
            raise ValueError(f"no_factor must be 'length' or 'zero', not {self.no_factor!r}")
        if self.aggregate not in ("ratio", "mean_length"):
            raise ValueError(f"aggregate must be 'ratio' or 'mean_length', not {self.aggregate!r}")

    def describe(self) -> str:
        """Short text such as ``MTLD(TTR <= 0.72)`` or ``MTLD(TTR < 0.72, factors >= 10 tokens)``."""
        parts = [f"TTR {'<' if self.strict else '<='} {self.threshold:g}"]
        if self.min_factor_length > 1:
            parts.append(f"factors >= {self.min_factor_length} tokens")
        if self.aggregate == "mean_length":
            parts.append("mean factor length")
        return "MTLD(" + ", ".join(parts) + ")"


#: lexicalrichness ``LexicalRichness.mtld(threshold=0.72)``.
MTLD_LEXICALRICHNESS = MTLDOptions()
#: McCarthy & Jarvis: ``taaled`` ``lexdiv(tokens).mtldo`` and ``lexical_diversity.lex_div.mtld(tokens)``.
MTLD_MCCARTHY_JARVIS = MTLDOptions(strict=True, min_factor_length=10, last_token_closes=False, no_factor="zero")
#: ``taaled`` ``lexdiv(tokens).mtld`` (mean factor length over both directions).
MTLD_TAALED_MEAN_LENGTH = replace(MTLD_MCCARTHY_JARVIS, aggregate="mean_length")

MTLD_PRESETS = {"lexicalrichness": MTLD_LEXICALRICHNESS, "mccarthy-jarvis": MTLD_MCCARTHY_JARVIS,
                "taaled-mean-length": MTLD_TAALED_MEAN_LENGTH}


@dataclass(frozen=True)
class _Direction:
    """MTLD factors of one reading direction."""

    full: int            # completed factors
    partial_tokens: int  # tokens of the final, partial factor (0 if none)
    partial_types: int   # its types
    tokens: int


#: Gaps (distance back to the previous occurrence of the same type) are clipped to at most this and stored
#: as bytes: iterating bytes yields cached small ints, faster than a list. The sequential walker finishes
#: factors longer than the clip in numpy.
_GAP_CAP = 255
#: Texts shorter than this are walked sequentially: the lockstep's fixed cost (a few numpy calls per row
#: of the chunk) only pays on long texts. So are texts whose factors are too long for an automaton of
#: ``_LOCKSTEP_MAX_CAP`` tokens (its table grows with the cube of that).
_LOCKSTEP_MIN_TOKENS = 50_000
_LOCKSTEP_MAX_CAP = 160
#: Overlap of consecutive chains in mean factor lengths; cost of one lockstep round in token-steps.
_OVERLAP_FACTORS = 16
_ROUND_COST = 600
#: Tokens read sequentially at the start to size the lockstep to the text's factor lengths.
_PILOT_TOKENS = 2048


def _repeat_need(threshold: float, min_len: int, size: int) -> list[int]:
    """``need[n]``: repeats a factor of ``n`` tokens must contain to close (``types/n <= threshold``).

    Computed with the same float division the reference implementations use,
    so boundary cases (e.g. 18/25 against 0.72) agree exactly. Lengths below
    ``min_len`` get an unreachable need.
    """
    n = np.arange(size, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # floor(threshold·n) + 1 is never too small; step down wherever t/n still exceeds the threshold.
        t = np.floor(threshold * n).astype(np.int64) + 1
        while True:
            over = (t / n > threshold) & (n > 0)
            if not over.any():
                break
            t -= over
    need = n - t
    need[n < min_len] = size + 1
    need[0] = size + 1
    return need.tolist()


def _exact_factor_end(prev: np.ndarray, start: int, threshold: float, min_len: int) -> int:
    """First position where a factor starting at ``start`` closes, or −1 if none does (numpy, any length)."""
    n_total = prev.shape[0]
    block = 512
    while True:
        stop = min(n_total, start + block)
        types = np.cumsum(prev[start:stop] < start)
        length = np.arange(1, stop - start + 1)
        hit = (types / length <= threshold) & (length >= min_len)
        if hit.any():
            return start + int(np.argmax(hit))
        if stop == n_total:
            return -1
        block *= 4


@dataclass
class _Walk:
    """Result of :func:`_walk`: factors closed, the open factor at the stop, the last closed factor."""

    full: int
    start: int          # where the open factor starts (the stop position when ``stopped``)
    types: int          # types of the open factor (0 when stopped)
    closed_start: int   # start and types of the last closed factor (−1 if none closed)
    closed_types: int
    stopped: bool       # stopped on a marked boundary before the end


def _walk(gaps, start: int, need: list[int], threshold: float, min_len: int, exact_prev, marks=None) -> _Walk:
    """Walk factors sequentially from ``start`` (a factor boundary) to the end of the text.

    ``gaps[x]`` is x minus the position of the previous occurrence of token
    x's type, clipped to ``cap = len(need) − 1`` (anything ≥ the factor length
    means "new here"): token x is a repeat inside a factor that already holds
    n − 1 tokens exactly when its gap is < n. A factor can only close on a
    repeat (a new token never lowers the TTR), except at its minimum length.
    A factor that outgrows the clip is finished in numpy on the exact
    previous-occurrence array ``exact_prev()`` (called only then). With
    ``marks`` (indexable by position), the walk stops at the first boundary
    after ``start`` where ``marks`` is true.
    """
    n_total = len(gaps)
    mv = memoryview(gaps)
    it = iter(mv[start:])
    prev = None
    seg = start
    n = reps = full = 0
    closed_start = closed_types = -1
    while True:
        try:
            if min_len <= 1:
                for g in it:
                    n += 1
                    if g < n:
                        reps += 1
                        if reps >= need[n]:
                            full += 1
                            closed_start, closed_types = seg, n - reps
                            seg += n
                            n = reps = 0
                            if marks is not None and marks[seg]:
                                return _Walk(full, seg, 0, closed_start, closed_types, True)
            else:
                for g in it:
                    n += 1
                    if g < n:
                        reps += 1
                        if reps < need[n]:
                            continue
                    elif n != min_len or reps < need[n]:
                        continue
                    full += 1
                    closed_start, closed_types = seg, n - reps
                    seg += n
                    n = reps = 0
                    if marks is not None and marks[seg]:
                        return _Walk(full, seg, 0, closed_start, closed_types, True)
            return _Walk(full, seg, n - reps, closed_start, closed_types, False)
        except IndexError:
            # The factor outgrew the clip: clipped gaps are no longer exact. Finish it in numpy.
            if prev is None:
                prev = exact_prev()
            end = _exact_factor_end(prev, seg, threshold, min_len)
            if end < 0:
                return _Walk(full, seg, int(np.count_nonzero(prev[seg:] < seg)), closed_start, closed_types, False)
            full += 1
            closed_start, closed_types = seg, int(np.count_nonzero(prev[seg:end + 1] < seg))
            seg = end + 1
            n = reps = 0
            it = iter(mv[seg:])
            if seg < n_total and marks is not None and marks[seg]:
                return _Walk(full, seg, 0, closed_start, closed_types, True)


def _previous_occurrences(p: Profile) -> np.ndarray:
    """``p.prev`` (previous occurrence of each token's type, −1 if none), computed in one pass if need be.

    Unless the Profile already holds it, pandas' group-shift kernel (one C pass
    with a last-seen table per type) computes it several times faster than the
    sort behind ``Profile.prev``. The kernel is internal to pandas, so any
    failure falls back to the Profile.
    """
    ids = p.ids
    # The kernel does not check bounds: only ids in [0, n_types) may go in.
    if p._prev is None and p.n and ids.min() >= 0 and ids.max() < p.n_types:
        try:
            from pandas._libs.groupby import group_shift_indexer
            prev = np.empty(p.n, np.int64)
            group_shift_indexer(prev, ids.astype(np.intp), p.n_types, 1)
            return prev
        except Exception:  # noqa: BLE001 - a changed private API: use the public path
            pass
    return p.prev


def _clipped_gaps(prev: np.ndarray, cap: int, forward: np.ndarray, backward: np.ndarray) -> None:
    """Write both readings' gaps, clipped to ``cap``, into the uint8 arrays ``forward`` and ``backward``.

    The forward gap of token i is i − prev[i] (i + 1 for a first occurrence).
    ``backward`` is in backward reading order: its element r belongs to token
    N−1−r, whose previous occurrence in that reading is its next one in the
    text; the gap to the next occurrence of j = prev[i] is the forward gap of i.
    """
    n = prev.shape[0]
    np.minimum(np.arange(n) - prev, cap, out=forward, casting="unsafe")
    by_position = backward[::-1]
    by_position.fill(cap)
    # First occurrences (prev = −1) all land on the last token, which has no next occurrence anyway.
    by_position[prev] = forward
    by_position[n - 1] = cap


def _exact_prevs(prev: np.ndarray):
    """Lazy exact previous-occurrence arrays of the forward and the backward reading."""
    def backward():
        n = prev.shape[0]
        nxt = np.full(n, n, np.int64)
        nxt[prev] = np.arange(n)          # first occurrences (prev = −1) land on the last token: reset below
        nxt[n - 1] = n
        return np.ascontiguousarray(np.where(nxt < n, n - 1 - nxt, -1)[::-1])

    return (lambda: prev), backward


def _pilot(ids: np.ndarray, threshold: float, min_len: int, tokens: int) -> tuple[int, float]:
    """Longest factor (the open one included) and mean factor length among the first ``tokens`` tokens.

    (0, 0.0) when no factor closes there.
    """
    head = ids[:tokens].tolist()
    need = _repeat_need(threshold, min_len, len(head) + 2)
    last: dict = {}
    seg = n = reps = longest = closed = 0
    for i, t in enumerate(head):
        n += 1
        if last.get(t, -1) >= seg:
            reps += 1
        last[t] = i
        if reps >= need[n]:
            longest = max(longest, n)
            closed += 1
            seg = i + 1
            n = reps = 0
    return (max(longest, n), seg / closed) if closed else (0, 0.0)


def _lockstep_geometry(n: int, threshold: float, min_len: int, ids: np.ndarray) -> tuple[int, int, int] | None:
    """(chunk, overlap, cap) of the lockstep for a text of ``n`` tokens, or None to walk it sequentially.

    A pilot walk over the first tokens sizes the automaton (room for factors
    well beyond the longest seen) and the overlap (two chains typically meet
    within a dozen factors). The chunk balances the per-round cost of numpy
    calls (fewer, longer chains) against the overlap every chain repeats.
    """
    if n < _LOCKSTEP_MIN_TOKENS:
        return None
    longest, mean = _pilot(ids, threshold, min_len, _PILOT_TOKENS)
    cap = max(64, longest * 3 // 2 + 16)
    if not longest or cap > _LOCKSTEP_MAX_CAP or min_len >= cap:
        return None
    overlap = max(64, int(_OVERLAP_FACTORS * mean))
    chunk = max(overlap, int(math.sqrt(n * overlap / _ROUND_COST)))
    return chunk, overlap, cap


@functools.lru_cache(maxsize=4)
def _factor_automaton(threshold: float, min_len: int, cap: int) -> np.ndarray:
    """Transition table of one factor in progress, for the lockstep.

    A state is (tokens n < cap, repeats r) of an open factor; state 0 is the
    empty factor, which a closing token also leads to; a factor reaching
    ``cap`` tokens goes to an absorbing dead state (its chain is abandoned).
    States are stored multiplied by the row width W = cap + 1, so that
    ``table[state + gap]`` (gap clipped to cap) is the next state, again
    times W: one addition and one gather per token.
    """
    need = np.asarray(_repeat_need(threshold, min_len, cap + 1), dtype=np.int64)
    width = cap + 1
    n = np.arange(cap)
    per_n = np.minimum(np.maximum(n, 1), need[:cap])  # repeats possible: 0 .. min(n − 1, need − 1)
    offsets = np.concatenate(([0], np.cumsum(per_n)))
    n_states = int(offsets[-1])
    ns = np.repeat(n, per_n)
    rs = np.arange(n_states) - offsets[ns]
    n1 = ns + 1
    r1 = rs[:, None] + (np.arange(width)[None, :] <= ns[:, None])  # a repeat: gap < n + 1
    nxt = offsets[np.minimum(n1, cap - 1)][:, None] + r1
    nxt = np.where(r1 >= need[n1][:, None], 0, np.where((n1 >= cap)[:, None], n_states, nxt))
    table = np.empty((n_states + 1, width), np.intp)
    table[:n_states] = nxt * width
    table[n_states] = n_states * width
    table = table.ravel()
    table.flags.writeable = False
    return table


def _lockstep(buf: np.ndarray, table: np.ndarray, chunk: int, rows: int, cols: int) -> np.ndarray:
    """Run ``cols`` factor chains at once, chain j from position j·chunk of ``buf`` for ``rows`` tokens.

    Returns the (rows, cols) boolean array "chain j closes a factor on its
    token r". Every chain starts at a (speculative) factor boundary; whether it
    is the true chain is decided by :func:`_stitch`.
    """
    step = buf.strides[0]
    gaps = np.lib.stride_tricks.as_strided(buf, shape=(rows, cols), strides=(step, chunk * step), writeable=False)
    closes = np.empty((rows, cols), bool)
    state = np.zeros(cols, np.intp)
    idx = np.empty(cols, np.intp)
    take = table.take
    for r in range(rows):
        np.add(state, gaps[r], out=idx)
        take(idx, out=state, mode="clip")
        np.equal(state, 0, out=closes[r])
    return closes


def _stitch(closes: np.ndarray, found: tuple[np.ndarray, np.ndarray], col0: int, ncols: int, chunk: int,
            overlap: int, n: int, walk) -> _Walk:
    """Follow the true factor chain of one reading through the lockstep chains ``col0 .. col0+ncols−1``.

    Chain j starts at j·chunk (chain 0 at the true start 0). Two chains that
    share a boundary coincide from there on, since where a factor ends depends
    only on where it starts. So the true chain is chain j from the point where
    it met chain j−1 up to where it meets chain j+1 (found in their overlap);
    where two chains never meet, or a chain died on an over-long factor, the
    true chain is walked sequentially (``walk(start, marks)``) until it reaches
    a boundary of some chain. The end of the text is always walked, which
    yields the open factor. ``found`` holds the (row, column) of every true
    entry of ``closes``, column by column, each column's in row order.
    """
    sub = closes[:, col0:col0 + ncols]
    rows = sub.shape[0]
    r_idx, c_idx = found
    lo, hi = np.searchsorted(c_idx, [col0, col0 + ncols])
    c_idx = c_idx[lo:hi] - col0
    pos = c_idx * chunk + r_idx[lo:hi] + 1               # the boundary after each closing token
    usable = pos < n
    c_idx, pos = c_idx[usable], pos[usable]
    by_chain = np.searchsorted(c_idx, np.arange(ncols + 1)).tolist()
    # First boundary shared by chains j and j+1: rows [0, overlap) of j+1, rows [chunk, chunk+overlap) of j.
    if ncols > 1:
        meet = sub[:overlap, 1:] & sub[chunk:chunk + overlap, :-1]
        first = meet.argmax(axis=0)
        met = meet[first, np.arange(ncols - 1)]
        handoff = np.where(met, np.arange(1, ncols) * chunk + first + 1, n)
        handoff[handoff >= n] = -1
    else:
        handoff = np.zeros(0, np.int64)
    handoff = np.concatenate((handoff, [-1]))            # handoff[j]: where chain j hands over to j+1
    entry = np.concatenate(([0], handoff[:-1]))          # where chain j takes over from j−1 (−1: it does not)
    # Boundaries each chain contributes between its entry and its handoff (used where both exist), summed
    # over runs of chains that hand over one to the next.
    counts = np.bincount(c_idx[(pos > entry[c_idx]) & (pos <= handoff[c_idx])], minlength=ncols)
    before = np.concatenate(([0], np.cumsum(counts))).tolist()
    stuck = np.flatnonzero(handoff < 0)
    next_stuck = stuck[np.searchsorted(stuck, np.arange(ncols))].tolist()
    handoff_l, entry_l = handoff.tolist(), entry.tolist()

    def chain_after(j, frm):
        """Usable boundaries of chain j after ``frm``, in order."""
        b = pos[by_chain[j]:by_chain[j + 1]]
        return b[b.searchsorted(frm, side="right"):]

    marks = None
    full = 0
    j, frm = 0, 0
    while True:
        if entry_l[j] == frm:
            # Entered by a handoff: follow the run of handoffs to the next chain that has none.
            k = next_stuck[j]
            full += before[k] - before[j]
            j, frm = k, entry_l[k] if k > j else frm
        elif handoff_l[j] > frm:
            full += int(chain_after(j, frm).searchsorted(handoff_l[j], side="right"))
            frm = handoff_l[j]
            j += 1
            continue
        # No usable handoff: follow chain j to its last boundary, then walk.
        after = chain_after(j, frm)
        if after.shape[0]:
            full += int(after.shape[0])
            frm = int(after[-1])
        if marks is None:
            marks = np.zeros(n + 1, np.uint8)
            marks[pos] = 1
            marks = marks.tobytes()
        w = walk(frm, marks)
        full += w.full
        if not w.stopped:
            return _Walk(full, w.start, w.types, w.closed_start, w.closed_types, False)
        frm = w.start
        # Continue with the latest chain that has a boundary there.
        j = min((frm - 1) // chunk, ncols - 1)
        while not (0 <= frm - 1 - j * chunk < rows and sub[frm - 1 - j * chunk, j]):
            j -= 1


def _factor_passes(p: Profile, opts: MTLDOptions, *, chunk: int | None = None, overlap: int | None = None,
                   cap: int | None = None) -> tuple[_Direction, _Direction]:
    """The forward and the backward factor pass of MTLD.

    Long texts run as many chains in numpy lockstep (see :func:`_lockstep`),
    stitched into the true chain; short ones, or texts whose factors are
    too long for the lockstep automaton, are walked sequentially. ``chunk``,
    ``overlap`` and ``cap`` force the lockstep with that geometry (tests).
    """
    n = p.n
    # "TTR < t" on floats is "TTR <= the largest float below t".
    thr = math.nextafter(opts.threshold, -math.inf) if opts.strict else float(opts.threshold)
    min_len = int(opts.min_factor_length)
    prev = _previous_occurrences(p)
    exact_fw, exact_bw = _exact_prevs(prev)
    if chunk is not None:
        overlap = min(int(overlap if overlap is not None else chunk), int(chunk))
        cap = min(max(int(cap), 1), _GAP_CAP) if cap is not None else _GAP_CAP
    else:
        geometry = _lockstep_geometry(n, thr, min_len, p.ids)
        if geometry is not None:
            chunk, overlap, cap = geometry
    if chunk is None:
        buf = np.empty(2 * n, np.uint8)
        _clipped_gaps(prev, _GAP_CAP, buf[:n], buf[n:])
        need = _repeat_need(thr, min_len, _GAP_CAP + 1)
        walks = [_walk(buf[:n], 0, need, thr, min_len, exact_fw), _walk(buf[n:], 0, need, thr, min_len, exact_bw)]
    else:
        chunk = max(int(chunk), 1)
        overlap = max(int(overlap), 1)
        cols = -(-n // chunk)
        padded = cols * chunk
        rows = chunk + overlap
        buf = np.empty(2 * padded + rows, np.uint8)
        buf[n:padded] = cap
        buf[padded + n:] = cap
        _clipped_gaps(prev, cap, buf[:n], buf[padded:padded + n])
        table = _factor_automaton(thr, min_len, cap)
        closes = _lockstep(buf, table, chunk, rows, 2 * cols)
        need = _repeat_need(thr, min_len, cap + 1)
        r_idx, c_idx = np.divmod(np.flatnonzero(closes), 2 * cols)
        # Column by column (a stable radix sort on 16-bit keys keeps each column's rows in order).
        by_col = np.argsort(c_idx.astype(np.uint16) if 2 * cols <= 1 << 16 else c_idx, kind="stable")
        found = (r_idx[by_col], c_idx[by_col])
        walks = []
        for col0, gaps, exact in ((0, buf[:n], exact_fw), (cols, buf[padded:padded + n], exact_bw)):
            def walk(start, marks, gaps=gaps, exact=exact):
                return _walk(gaps, start, need, thr, min_len, exact, marks)
            walks.append(_stitch(closes, found, col0, cols, chunk, overlap, n, walk))
    out = []
    for w in walks:
        if w.start == n and w.full and not opts.last_token_closes:
            # The factor that closed on the very last token is scored as the partial one instead.
            out.append(_Direction(w.full - 1, n - w.closed_start, w.closed_types, n))
        else:
            out.append(_Direction(w.full, n - w.start, w.types if w.start < n else 0, n))
    return out[0], out[1]


def _partial_weight(d: _Direction, opts: MTLDOptions) -> float:
    if d.partial_tokens == 0:
        return 0.0
    return (1.0 - d.partial_types / d.partial_tokens) / (1.0 - opts.threshold)


def _direction_value(d: _Direction, opts: MTLDOptions, n_types: int) -> float:
    factors = d.full + _partial_weight(d, opts) if d.partial_tokens else d.full
    if factors == 0:
        if opts.no_factor == "zero":
            return 0.0
        whole = n_types / d.tokens
        factors = 1.0 if whole == 1 else (1.0 - whole) / (1.0 - opts.threshold)
    return d.tokens / factors


def mtld_factors(data, options: MTLDOptions = MTLD_LEXICALRICHNESS) -> dict:
    """MTLD with its parts: per direction the full factors, the partial factor's weight and the score."""
    p = Profile.of(data)
    opts = options
    if p.n == 0:
        return {"mtld": math.nan, "forward": None, "backward": None}
    out = {}
    dirs = dict(zip(("forward", "backward"), _factor_passes(p, opts)))
    for name, d in dirs.items():
        out[name] = {"full_factors": d.full, "partial_tokens": d.partial_tokens, "partial_types": d.partial_types,
                     "partial_weight": _partial_weight(d, opts), "value": _direction_value(d, opts, p.n_types)}
    out["mtld"] = _combine(dirs["forward"], dirs["backward"], opts, p.n_types)
    return out


def _combine(fw: _Direction, bw: _Direction, opts: MTLDOptions, n_types: int) -> float:
    if opts.aggregate == "ratio":
        return (_direction_value(fw, opts, n_types) + _direction_value(bw, opts, n_types)) / 2
    total = 0.0
    count = 0
    for d in (fw, bw):
        w = _partial_weight(d, opts)
        # Full factors tile the text before the partial one, so their lengths sum to that prefix.
        total += d.tokens - d.partial_tokens
        count += d.full
        if w > 0:
            total += d.partial_tokens / w
            count += 1
    if count == 0:
        return 0.0 if opts.no_factor == "zero" else float(fw.tokens)
    return total / count


def mtld(data, options: MTLDOptions = MTLD_LEXICALRICHNESS) -> float:
    """MTLD of a corpus under ``options`` (NaN for an empty corpus)."""
    p = Profile.of(data)
    if p.n == 0:
        return math.nan
    fw, bw = _factor_passes(p, options)
    return _combine(fw, bw, options, p.n_types)
