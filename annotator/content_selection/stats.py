"""How many box instances gold descriptions mention: per description, per image and over the corpus.

The content-selection study explains where its baselines peak (k of 3 to 4)
by the mean number of unique instances a description mentions (2.89 on its
development set). The same figure, for the images a report scores:

* per description: |G_m|, the number of distinct boxes description m
  mentions (a box named twice counts once);
* per image: the mean of |G_m| over the image's M gold descriptions;
* over the corpus: the mean of |G_m| over every gold description of every
  scored image (each description weighs the same, as in the study), with its
  population standard deviation; beside it the mean of the per-image means
  (each image weighs the same).

With ``empty_descriptions="count"`` (the default of evaluate, equation 1 as
written) every description is in M, one that mentions no box with
|G_m| = 0; with ``drop`` M holds only descriptions that mention a box. How
many descriptions mention no box is reported either way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .data import EvalSet

__all__ = ["MentionStats"]


@dataclass(frozen=True)
class MentionStats:
    """Per scored image: boxes, gold descriptions (M), descriptions without mentions, Σ|G_m|, Σ|G_m|², boxes mentioned."""

    keys: list[str]
    boxes: np.ndarray
    descriptions: np.ndarray
    without_mentions: np.ndarray
    instances: np.ndarray
    instances_sq: np.ndarray
    mentioned: np.ndarray

    @classmethod
    def of(cls, es: EvalSet) -> "MentionStats":
        """The statistics of the images of an evaluation set."""
        boxes = np.fromiter((len(it.boxes) for it in es.items), dtype=np.int64, count=len(es.items))
        return cls([it.key for it in es.items], boxes, es.descriptions, es.without_mentions, es.instances,
                   es.instances_sq, es.mentioned)

    def per_image_mean(self) -> np.ndarray:
        """Mean unique instances per description of each image (Σ|G_m| / M)."""
        return self.instances / np.maximum(self.descriptions, 1)

    def corpus(self) -> dict:
        """Corpus figures: descriptions, without mentions, mean ± sd per description, mean ± sd of image means."""
        n_desc = int(self.descriptions.sum())
        out = {"images": len(self.keys), "descriptions": n_desc,
               "descriptions_without_mentions": int(self.without_mentions.sum()),
               "instances_per_description": None, "instances_per_description_sd": None,
               "image_mean_instances_per_description": None, "image_mean_instances_per_description_sd": None,
               "boxes_per_image": None, "boxes_mentioned_per_image": None}
        if n_desc:
            mean = float(self.instances.sum()) / n_desc
            out["instances_per_description"] = mean
            out["instances_per_description_sd"] = float(np.sqrt(max(float(self.instances_sq.sum()) / n_desc - mean * mean, 0.0)))
        if len(self.keys):
            per = self.per_image_mean()
            out["image_mean_instances_per_description"] = float(per.mean())
            out["image_mean_instances_per_description_sd"] = float(per.std())
            out["boxes_per_image"] = float(self.boxes.mean())
            out["boxes_mentioned_per_image"] = float(self.mentioned.mean())
        return out

    def rows(self) -> list[dict]:
        """One row per scored image: key, boxes, descriptions, descriptions without mentions, mean, boxes mentioned."""
        per = self.per_image_mean()
        return [{"key": key, "boxes": int(self.boxes[j]), "descriptions": int(self.descriptions[j]),
                 "descriptions_without_mentions": int(self.without_mentions[j]),
                 "instances_per_description": float(per[j]), "boxes_mentioned": int(self.mentioned[j])}
                for j, key in enumerate(self.keys)]
