"""BLEU through sacrebleu (imported lazily), with sacrebleu's own signature embedded in ours.

Two AirDialogue settings:

* **self-play** (:func:`selfplay_bleu`): per dialogue, sentence BLEU of the generated dialogue against the
  reference one, each flattened to one string (speaker prefixes removed, turns joined by spaces); the corpus
  number is the mean over dialogues. sacrebleu ``sentence_score`` with its defaults (13a tokenisation,
  exponential smoothing, effective order), ×100 like the toolkit.
* **response generation** (:func:`corpus_bleu`, the toolkit's ``--task infer``): corpus BLEU-4 over one
  hypothesis per target turn.

BLEU-4 (Papineni et al. 2002; sacrebleu ``BLEU``, NLTK ``corpus_bleu`` / ``sentence_bleu``):
BLEU = BP · exp(sum_{n=1..4} ¼ log p_n), with p_n the clipped n-gram precision (matched n-grams, each counted at
most as often as in the reference, over the hypothesis's n-grams) and the brevity penalty BP = min(1, exp(1 - r/c))
(r reference length, c hypothesis length; summed over the corpus for corpus BLEU). Reported ×100.

Differences from the toolkit (its BLEU cannot be reproduced exactly, and was itself changed in mid-2020): the
toolkit splits every turn on ``:`` (so "6:00" becomes "6 00"), tokenises with NLTK and does not smooth; here only
the ``customer:``/``agent:`` prefix is removed and sacrebleu tokenises. The signature field names every option.
"""

from __future__ import annotations

import numpy as np

SPEAKERS = ("customer", "agent")


def strip_speaker(turn: str) -> str:
    """``"agent: 6:00 works"`` -> ``"6:00 works"``: only a leading known speaker prefix is removed."""
    head, sep, rest = turn.partition(":")
    if sep and head.strip().lower() in SPEAKERS:
        return rest.strip()
    return turn.strip()


def dialogue_text(turns: list[str]) -> str:
    return " ".join(strip_speaker(t) for t in turns)


def signature_text(sig) -> str:
    """sacrebleu's signature with ``,`` instead of ``|`` so it nests inside a dialeval signature field."""
    return "sacrebleu," + sig.format().replace("|", ",")


def bleu_class():
    """sacrebleu's BLEU class; without the optional extra, a usage error that says how to install it."""
    try:
        from sacrebleu.metrics import BLEU
    except ImportError:
        from dialeval.core.errors import UsageError

        raise UsageError("BLEU needs sacrebleu: pip install 'dialeval[bleu]'") from None
    return BLEU


def selfplay_bleu(pred_dialogues: list[list[str]], gold_dialogues: list[list[str]]) -> tuple[np.ndarray, str]:
    """(sentence BLEU ×100 per dialogue, embedded signature): per dialogue BLEU-4 of the flattened generated
    dialogue against the reference one (module docstring; sacrebleu ``sentence_score``, the toolkit's selfplay
    ``bleu``). An empty generated dialogue scores 0 (so do all of them when none has a text to compare)."""
    bleu = bleu_class()(effective_order=True)
    out = np.zeros(len(gold_dialogues))
    scored = False
    for i, (p, g) in enumerate(zip(pred_dialogues, gold_dialogues)):
        hyp, ref = dialogue_text(p), dialogue_text(g)
        if hyp and ref:
            out[i] = bleu.sentence_score(hyp, [ref]).score
            scored = True
    if not scored:  # sacrebleu learns the reference count (in its signature) from a first evaluation: one reference
        bleu.sentence_score("-", ["-"])
    return out, signature_text(bleu.get_signature())


def corpus_bleu(hypotheses: list[str], references: list[str], tokenize: str = "13a") -> tuple[float, str]:
    """(corpus BLEU-4 ×100, embedded signature): n-gram counts and lengths summed over all lines before the
    precisions and the brevity penalty are taken (sacrebleu ``corpus_score``, the toolkit's ``--task infer``
    BLEU); ``tokenize="none"`` for pre-tokenised lines (space split)."""
    if len(hypotheses) != len(references):
        raise ValueError("one hypothesis per reference")
    bleu = bleu_class()(tokenize=tokenize)
    score = bleu.corpus_score(list(hypotheses), [list(references)]).score
    return float(score), signature_text(bleu.get_signature())


def infer_items(dialogues: list[list[str]], correct: list[bool] | None = None) -> list[tuple[int, int, str]]:
    """Response-generation items: ``(dialogue index, turn t, target text)`` for every turn t >= 1 of every
    correct dialogue (context = turns before t; both speakers), the toolkit's ``--task infer`` layout."""
    items = []
    for i, d in enumerate(dialogues):
        if correct is not None and not correct[i]:
            continue
        for t in range(1, len(d)):
            items.append((i, t, strip_speaker(d[t])))
    return items
