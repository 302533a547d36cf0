"""Shared data and slow, obviously-correct reference implementations for the diversity tests."""

from __future__ import annotations

import math

import numpy as np

# Hand-written caption corpora in the style of COCO/Flickr: varied human descriptions and two machine
# systems that reuse a few templates (the typical "sparse" output).
HUMAN_CAPTIONS = [
    "A surfer in a black wetsuit carves across the face of a steep green wave.",
    "Two children build a lopsided sandcastle while their dog digs a hole nearby.",
    "An elderly man feeds pigeons from a paper bag on a park bench in the rain.",
    "A red double-decker bus waits at a crowded stop beside a flower stall.",
    "A toddler in a yellow raincoat stomps through a muddy puddle, laughing.",
    "Three cyclists in matching jerseys climb a winding mountain road at dawn.",
    "A chef sprinkles fresh basil over a blistered pizza straight from the oven.",
    "A giraffe stretches its neck to nibble leaves from the top of an acacia tree.",
    "A woman's laptop balances on her knees as she works on a crowded train.",
    "Fireworks burst over a harbour full of small boats on a summer night.",
    "A tabby cat naps in a shoebox that is clearly two sizes too small.",
    "Snow-covered pines line a frozen lake where people skate in bright scarves.",
    "A street musician plays a battered violin for a handful of passers-by.",
    "An astronaut floats beside the space station with Earth glowing below.",
    "A barista pours a leaf pattern into a cappuccino on a wooden counter.",
    "Kids in team shirts chase a football across a patchy, sunlit field.",
    "An old fishing boat rests on its side in the mud at low tide.",
    "A bride and groom dash through a shower of rice outside a stone chapel.",
    "A mechanic with grease on his cheek inspects the engine of a vintage car.",
    "A golden retriever leaps to catch a frisbee above a sandy beach.",
]

SPARSE_A = [
    "a man riding a wave on top of a surfboard",
    "a group of people standing on a beach",
    "a man sitting on a bench in a park",
    "a red bus parked on the side of a street",
    "a little girl standing in the rain",
    "a group of people riding bikes down a road",
    "a man is making a pizza in a kitchen",
    "a giraffe standing next to a tree",
    "a woman sitting on a train with a laptop",
    "a group of boats in the water at night",
    "a cat laying in a box on the floor",
    "a group of people standing in the snow",
    "a man playing a violin on a street",
    "a man in a space suit in the air",
    "a cup of coffee on a table",
    "a group of people playing a game of soccer",
    "a boat sitting on top of a beach",
    "a man and a woman standing in front of a building",
    "a man working on a car in a garage",
    "a dog jumping in the air to catch a frisbee",
]

SPARSE_B = [
    "a man on a surfboard in the water",
    "a group of people on the beach",
    "a man sitting on a bench",
    "a bus on the street",
    "a child in the rain",
    "people riding bikes on the road",
    "a pizza in a kitchen",
    "a giraffe in the grass",
    "a woman on a train",
    "boats in the water",
    "a cat in a box",
    "people in the snow",
    "a man with a violin",
    "a man in the air",
    "a cup of coffee",
    "people playing soccer",
    "a boat on the beach",
    "a man and a woman",
    "a man with a car",
    "a dog with a frisbee",
]


def zipf_tokens(n: int, vocab: int, seed: int, exponent: float = 1.1) -> list[str]:
    """``n`` tokens drawn from a Zipf-like distribution over ``vocab`` types (seeded)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1) ** exponent
    p /= p.sum()
    return [f"w{i}" for i in rng.choice(vocab, size=n, p=p)]


def uniform_tokens(n: int, vocab: int, seed: int) -> list[str]:
    """``n`` tokens drawn uniformly from ``vocab`` types (seeded)."""
    rng = np.random.default_rng(seed)
    return [f"u{i}" for i in rng.integers(0, vocab, n)]


def naive_mtld(tokens: list[str], threshold: float = 0.72, strict: bool = False, min_len: int = 1,
               last_token_closes: bool = True, no_factor: str = "length", aggregate: str = "ratio") -> float:
    """MTLD straight from the definition (sets and loops; slow but plain)."""
    def one(seq):
        factors = []  # (length, weight)
        start = 0
        for x in range(len(seq)):
            seg = seq[start:x + 1]
            t = len(set(seg)) / len(seg)
            closes = (t < threshold if strict else t <= threshold) and len(seg) >= min_len
            if x == len(seq) - 1 and not last_token_closes:
                factors.append((len(seg), (1 - t) / (1 - threshold)))
            elif closes:
                factors.append((len(seg), 1.0))
                start = x + 1
            elif x == len(seq) - 1:
                factors.append((len(seg), (1 - t) / (1 - threshold)))
        return factors

    fw, bw = one(tokens), one(tokens[::-1])
    n = len(tokens)
    if aggregate == "ratio":
        vals = []
        for fs in (fw, bw):
            total = sum(w for _, w in fs)
            if total == 0:
                vals.append(0.0 if no_factor == "zero" else float(n))
            else:
                vals.append(n / total)
        return (vals[0] + vals[1]) / 2
    lengths = [length / w for length, w in fw + bw if w > 0]
    if not lengths:
        return 0.0 if no_factor == "zero" else float(n)
    return sum(lengths) / len(lengths)


def naive_mattr(tokens: list[str], window: int) -> float:
    """Mean TTR of every window of ``window`` tokens (TTR of all tokens if shorter)."""
    if len(tokens) <= window:
        return len(set(tokens)) / len(tokens)
    vals = [len(set(tokens[i:i + window])) / window for i in range(len(tokens) - window + 1)]
    return sum(vals) / len(vals)


def naive_hdd(tokens: list[str], draws: int = 42) -> float:
    """HD-D with exact binomial coefficients (math.comb)."""
    n = len(tokens)
    total = 0.0
    for t in set(tokens):
        f = tokens.count(t)
        total += (1 - math.comb(n - f, draws) / math.comb(n, draws)) / draws
    return total


def run_cli(store, capsys, *args):
    """(exit code, stdout, stderr) of ``annotator --db <store> ARGS`` run in this process."""
    from annotator.cli import main
    rc = main(["--db", store.url, *args])
    out = capsys.readouterr()
    return rc, out.out, out.err
