"""The metric registry: every metric the tool offers, and every list derived from them.

Each metric class declares its key, label, aliases, settings, score keys and
requirements (see :class:`~annotator.metrics.base.Metric`);
:class:`MetricRegistry` turns those declarations into what the rest of the
tool shows and accepts: CLI choices, page options, table columns and their
labels, the default and live metric sets, and which metrics cannot run here.

Adding a metric is one module with its class and one entry in
:data:`REGISTRY` below (its position is its place in every table).
"""

from __future__ import annotations

from typing import Iterable, Iterator, NamedTuple

from .base import SAMPLE_FIELDS, Metric
from .bleu import Bleu
from .cider import CiderD
from ..errors import MetricInputError
from .meteor import Meteor
from .rouge import RougeL
from .spice import Spice
from ..tokenize.ptb import check_tokenizer


class MetricCard(NamedTuple):
    """What a metric says about itself (as Hugging Face ``evaluate`` metrics do): one line on what it
    measures, the paper that defines it and a link to that paper."""

    key: str
    label: str
    description: str
    citation: str
    link: str


class MetricRegistry:
    """Metric classes by key, in table order.

    Names are looked up case-insensitively by key, alias or label. Methods that
    take ``names`` accept keys or aliases (None: every metric) and return
    results in registry order, whatever the order asked.
    """

    def __init__(self, classes: Iterable[type[Metric]]):
        self._classes: dict[str, type[Metric]] = {}
        self._names: dict[str, str] = {}
        self._protos: dict[str, Metric] = {}
        self._metric_of_score: dict[str, str] = {}
        for cls in classes:
            key = cls.key
            if not key or key != key.lower() or not cls.label:
                raise ValueError(f"{cls.__name__} must declare a lower-case key and a label")
            if not (cls.description and cls.citation and cls.link.startswith("https://")) or "\n" in cls.description:
                raise ValueError(f"{cls.__name__} must declare its card: a one-line description, a citation and a "
                                 "https link to the paper")
            unknown = set(cls.requires) - set(SAMPLE_FIELDS)
            if unknown:
                raise ValueError(f"{cls.__name__} requires unknown sample fields {sorted(unknown)}")
            for name in dict.fromkeys(n.lower() for n in (key, *cls.aliases, cls.label)):
                taken = self._names.get(name)
                if taken is not None:
                    raise ValueError(f"metric name {name!r} of {cls.__name__} is already used by {taken!r}")
                self._names[name] = key
            proto = cls()
            for score_key in proto.score_keys:
                if score_key in self._metric_of_score:
                    raise ValueError(f"score key {score_key!r} of {cls.__name__} is already reported by "
                                     f"{self._metric_of_score[score_key]!r}")
                self._metric_of_score[score_key] = key
            self._classes[key] = cls
            self._protos[key] = proto

    # -- lookup ----------------------------------------------------------------
    def __iter__(self) -> Iterator[type[Metric]]:
        return iter(self._classes.values())

    def __len__(self) -> int:
        return len(self._classes)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.strip().lower() in self._names

    def keys(self) -> tuple[str, ...]:
        """The metric keys in table order (``bleu``, ``meteor``, ``rouge``, ``cider``)."""
        return tuple(self._classes)

    def names(self) -> tuple[str, ...]:
        """Every accepted name in lower case: keys, then aliases and labels (the choices a command line accepts)."""
        return self.keys() + tuple(n for n, k in self._names.items() if n != k)

    def choices_text(self) -> str:
        """The keys as a comma-separated list, for help texts and error messages."""
        return ", ".join(self._classes)

    def resolve(self, name: str) -> str:
        """The key of a metric given by key, alias or label (any case); MetricInputError for an unknown name."""
        key = self._names.get(str(name).strip().lower())
        if key is None:
            raise MetricInputError(f"unknown metric {name!r}; choose from {self.choices_text()}")
        return key

    def get(self, name: str) -> type[Metric]:
        """The class of a metric given by key or alias."""
        return self._classes[self.resolve(name)]

    def select(self, names: Iterable[str] | str | None = None) -> tuple[str, ...]:
        """Keys of ``names`` (a list, or one comma-separated string) in registry order; None: every key."""
        if names is None:
            return self.keys()
        if isinstance(names, str):
            names = [n for n in names.split(",") if n.strip()]
        wanted = {self.resolve(n) for n in names}
        return tuple(k for k in self._classes if k in wanted)

    def create(self, names: Iterable[str] | str | None = None, tokenize: str | None = None) -> list[Metric]:
        """Metric objects (default settings, tokenisation ``tokenize``) for ``names``."""
        tok = check_tokenizer(tokenize)
        return [self._classes[k](tokenize=tok) for k in self.select(names)]

    # -- derived lists ----------------------------------------------------------
    def defaults(self, *, in_process_only: bool = False) -> tuple[str, ...]:
        """Keys of the default metric set; ``in_process_only`` leaves out metrics run by another process."""
        return tuple(k for k, c in self._classes.items() if c.default and (c.in_process or not in_process_only))

    def requires(self, names: Iterable[str] | str | None = None) -> frozenset[str]:
        """What the metrics of ``names`` read of a sample, together (``{"references"}`` for the text metrics)."""
        return frozenset().union(*(self._classes[k].requires for k in self.select(names)))

    def score_keys(self, names: Iterable[str] | str | None = None) -> tuple[str, ...]:
        """Score keys of ``names`` in table order (every metric's by default): ``Bleu_1`` … ``CIDEr``."""
        return tuple(s for k in self.select(names) for s in self._protos[k].score_keys)

    def headline_keys(self, names: Iterable[str] | str | None = None) -> tuple[str, ...]:
        """The headline score key of each metric in ``names`` (BLEU-4 for BLEU): the compact and live views."""
        return tuple(self._protos[k].headline_key for k in self.select(names))

    def score_labels(self) -> dict[str, str]:
        """Display label of every score key (``Bleu_4`` → ``BLEU-4``, ``CIDEr`` → ``CIDEr-D``)."""
        return {s: lab for p in self._protos.values() for s, lab in p.score_labels.items()}

    def cards(self, names: Iterable[str] | str | None = None) -> tuple[MetricCard, ...]:
        """The card of each metric of ``names`` (every metric's by default), in registry order: what ``annotator
        rescore --help`` and the Rescoring page show about the metrics."""
        return tuple(MetricCard(k, c.label, c.description, c.citation, c.link)
                     for k, c in ((k, self._classes[k]) for k in self.select(names)))

    def cards_text(self) -> str:
        """Every metric's card as plain text, two lines per metric (for ``--help``)."""
        return "\n".join(f"  {c.key} ({c.label}): {c.description}\n      {c.citation} {c.link}" for c in self.cards())

    def label(self, name: str) -> str:
        """Display label of a metric (by key or alias)."""
        return self.get(name).label

    def metric_of_score(self, score_key: str) -> str:
        """The key of the metric that reports ``score_key``; MetricInputError for an unknown score key."""
        key = self._metric_of_score.get(score_key)
        if key is None:
            raise MetricInputError(f"unknown metric {score_key!r}; choose from {', '.join(self._metric_of_score)}")
        return key

    def metrics_of_scores(self, score_keys: Iterable[str]) -> tuple[str, ...]:
        """Keys of the metrics that report ``score_keys``, in registry order."""
        return self.select([self.metric_of_score(s) for s in score_keys])

    # -- this machine -------------------------------------------------------------
    def unavailable(self, names: Iterable[str] | str | None = None) -> dict[str, str]:
        """``{key: reason}`` for the metrics of ``names`` that cannot run here (e.g. METEOR without Java)."""
        out = {}
        for k in self.select(names):
            reason = self._classes[k].unavailable_reason()
            if reason:
                out[k] = reason
        return out

    def available(self, names: Iterable[str] | str | None = None) -> tuple[str, ...]:
        """Keys of the metrics of ``names`` that can run here."""
        missing = self.unavailable(names)
        return tuple(k for k in self.select(names) if k not in missing)

    def warm_up(self, names: Iterable[str] | str | None = None, *, wait: bool = False) -> dict[str, str]:
        """Start what the metrics need before first use (METEOR's processes), once per process.

        Returns ``{key: "ready" | "warming" | "unavailable"}``. Without
        ``wait`` the work runs in the background; safe to call on every page
        run.
        """
        return {k: self._classes[k].warm_up(wait=wait) for k in self.select(names)}

    def describe(self) -> list[dict]:
        """One JSON-ready record per metric: key, label, aliases, score keys and labels, settings, signature."""
        out = []
        for k, cls in self._classes.items():
            proto = self._protos[k]
            out.append({"key": k, "label": cls.label, "aliases": list(cls.aliases),
                        "score_keys": list(proto.score_keys), "score_labels": proto.score_labels,
                        "settings": {s.name: s.value(proto) for s in cls.settings}, "requires": sorted(cls.requires),
                        "default": cls.default, "signature": proto.signature, "reference": cls.reference,
                        "unavailable": cls.unavailable_reason()})
        return out


#: Every metric of the tool, in table order.
REGISTRY = MetricRegistry([Bleu, Meteor, RougeL, CiderD, Spice])
