"""Exchanges: files that carry a project to another tool and back, composing the layers above the format codecs.

:mod:`annotator.io` holds the codecs (a file format read into domain objects and stored, or written out); it
imports nothing above the store. An exchange needs more than a codec: Label Studio's export composes the
judgements export (:mod:`annotator.judgement_export`), the automatic detectors (:mod:`annotator.estimate`) and
the accounts' e-mail addresses, and its import maps Label Studio's users to accounts. Those live here:

* :mod:`annotator.exchange.label_studio` — Label Studio tasks out, Label Studio exports back in;
* :mod:`annotator.exchange.judge_files` — an AI judge's outputs in and out (annotator.judges);
* :mod:`annotator.exchange.catalog` — the importer catalog (it names io/'s formats and the exchanges).

The house's layers are kept by tests/core/test_house_layers.py: no package imports one that imports it back,
not even inside a function.
"""
