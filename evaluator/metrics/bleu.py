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

Differences from the toolkit (whose BLEU was itself changed in mid-2020, so the paper's is neither): the toolkit
splits every turn on ``:`` (so "6:00" becomes "6 00"), tokenises with NLTK and does not smooth; by default here
only the ``customer:``/``agent:`` prefix is removed and sacrebleu tokenises. The signature field names every option.

**The toolkit's BLEU, on request** (``variant="toolkit"``; ``score --bleu-variant toolkit``, ``infer-bleu
--bleu-variant toolkit``): :func:`toolkit_bleu` is the toolkit's own arithmetic (``metrics/bleu.py`` there, the
TensorFlow NMT ``compute_bleu``): clipped n-gram matches and possible n-grams summed over the corpus, a segment
shorter than n adding no possible n-gram; no smoothing, so BLEU is 0 as soon as one order has no match; BP =
exp(1 - r/c) for c <= r with r the reference length. NLTK's own ``corpus_bleu`` is not that arithmetic (a segment
shorter than n adds 1 to that order's denominator, and a zero precision gives a tiny positive number, not 0), so
NLTK serves only the tokenisation, as in the toolkit. Self-play (:func:`selfplay_bleu`): per dialogue, each turn
loses everything before its first ``:`` and its other ``:`` become spaces (:func:`toolkit_turn`), the turns are
joined by spaces and tokenised by ``nltk.word_tokenize`` (which needs NLTK's punkt_tab model), and the dialogue's
BLEU ×100 is averaged over dialogues. Response generation (:func:`corpus_bleu`): lines split on single spaces, one
corpus BLEU ×100. Where the toolkit divides by zero (an empty generated dialogue or reference) the item scores 0.
"""

from __future__ import annotations

import math
from collections import Counter

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


BLEU_VARIANTS = ("sacrebleu", "toolkit")
TOOLKIT_EXTRA = "pip install 'dialeval[toolkit-bleu]'"


def toolkit_turn(turn: str) -> str:
    """The toolkit's speaker removal: ``"agent: 6:00 works"`` -> ``"6 00 works"`` (everything before the first
    ``:`` goes, the other pieces are joined by spaces; a turn without ``:`` becomes empty)."""
    return " ".join(turn.split(":")[1:]).strip()


def nltk_word_tokenize():
    """(``nltk.word_tokenize``, its signature text): the toolkit's tokeniser, checked usable before any work.

    Without NLTK (the optional extra) or without its punkt_tab model (``word_tokenize`` splits sentences with it;
    the model is NLTK data, not part of the package), a usage error says how to get it. The signature carries
    NLTK's version and a hash of the model's files: another model splits sentences otherwise."""
    from dialeval.core.errors import UsageError

    try:
        import nltk
    except ImportError:
        raise UsageError(f"the AirDialogue toolkit's BLEU tokenises with NLTK: {TOOLKIT_EXTRA}") from None
    try:
        model = nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        raise UsageError("the AirDialogue toolkit's BLEU tokenises with nltk.word_tokenize, which needs NLTK's "
                         "punkt_tab model: python -m nltk.downloader punkt_tab (or set NLTK_DATA to where it is)"
                         ) from None
    import hashlib
    from pathlib import Path

    from dialeval.files.read import file_sha256

    files = sorted(p for p in Path(str(model)).iterdir() if p.is_file())
    digest = hashlib.blake2b("".join(f"{p.name}:{file_sha256(p)}" for p in files).encode(), digest_size=4).hexdigest()
    return nltk.word_tokenize, f"nltk:{nltk.__version__},punkt:{digest}"


def _ngrams(tokens: list[str], max_order: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for n in range(1, max_order + 1) for i in range(len(tokens) - n + 1))


def toolkit_bleu(references: list[list[str]], hypotheses: list[list[str]], max_order: int = 4) -> float:
    """Corpus BLEU ×100 of tokenised ``hypotheses`` against one tokenised reference each, by the AirDialogue
    toolkit's arithmetic (module docstring): p_n = sum of clipped matches / sum of max(0, len - n + 1) over the
    segments (0 when that sum is 0); BLEU = BP · exp(¼ Σ log p_n), 0 if any p_n is 0 (no smoothing);
    BP = 1 if c > r else exp(1 - r/c), c and r the summed hypothesis and reference lengths; 0 where c or r is 0
    (the toolkit divides by zero there)."""
    matches = [0] * max_order
    possible = [0] * max_order
    c = r = 0
    for ref, hyp in zip(references, hypotheses, strict=True):
        r += len(ref)
        c += len(hyp)
        for gram, k in (_ngrams(hyp, max_order) & _ngrams(ref, max_order)).items():
            matches[len(gram) - 1] += k
        for n in range(1, max_order + 1):
            possible[n - 1] += max(0, len(hyp) - n + 1)
    if c == 0 or r == 0:
        return 0.0
    precisions = [m / p if p else 0.0 for m, p in zip(matches, possible)]
    if min(precisions) <= 0:
        return 0.0
    bp = 1.0 if c > r else math.exp(1 - r / c)
    return 100 * bp * math.exp(sum(math.log(p) for p in precisions) / max_order)


def toolkit_signature(tokenizer: str) -> str:
    return f"toolkit,tok:{tokenizer},smooth:none"


def selfplay_bleu(pred_dialogues: list[list[str]], gold_dialogues: list[list[str]],
                  variant: str = "sacrebleu") -> tuple[np.ndarray, str]:
    """(sentence BLEU ×100 per dialogue, embedded signature): per dialogue BLEU-4 of the flattened generated
    dialogue against the reference one (module docstring; sacrebleu ``sentence_score``, the toolkit's selfplay
    ``bleu``). An empty generated dialogue scores 0 (so do all of them when none has a text to compare).
    ``variant="toolkit"``: the toolkit's ':' split, NLTK tokens and unsmoothed BLEU (:func:`toolkit_bleu`)."""
    if variant == "toolkit":
        tokenize, nltk_sig = nltk_word_tokenize()

        def tokens(turns: list[str]) -> list[str]:
            return tokenize(" ".join(toolkit_turn(t) for t in turns))

        out = np.array([toolkit_bleu([tokens(g)], [tokens(p)]) for p, g in zip(pred_dialogues, gold_dialogues)],
                       np.float64).reshape(-1)
        return out, toolkit_signature("nltk-word_tokenize," + nltk_sig)
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


def corpus_bleu(hypotheses: list[str], references: list[str], tokenize: str = "13a",
                variant: str = "sacrebleu") -> tuple[float, str]:
    """(corpus BLEU-4 ×100, embedded signature): n-gram counts and lengths summed over all lines before the
    precisions and the brevity penalty are taken (sacrebleu ``corpus_score``, the toolkit's ``--task infer``
    BLEU); ``tokenize="none"`` for pre-tokenised lines (space split). ``variant="toolkit"``: every line split on
    single spaces (``"".split(" ")`` is one empty token, as there) and :func:`toolkit_bleu`."""
    if len(hypotheses) != len(references):
        raise ValueError("one hypothesis per reference")
    if variant == "toolkit":
        score = toolkit_bleu([r.rstrip().split(" ") for r in references], [h.rstrip().split(" ") for h in hypotheses])
        return score, toolkit_signature("space")
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
