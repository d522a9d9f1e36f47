"""AirDialogue (Wei et al. 2018): the final state an agent submits, scored against the computed ground truth.

Data (:mod:`dialeval.formats.airdialogue`): ``DIR/<split>_data.json`` and ``DIR/<split>_kb.json`` (JSON lines
aligned by line, the release's names). Submission (:mod:`dialeval.formats.airdialogue_predictions`): JSON lines, one
per data line in the same order, ``{"action": {"name": str, "flight": [int], "status": str}}`` with an optional
``"id"`` and an optional ``"dialogue"`` (self-play turns, scored with BLEU when every line has one). Strict (default):
every fault is an error with its line, and the submission is then not scored; lenient (``options["lenient"]``): the
toolkit's numbers on whatever it accepts, each quirk a warning, an ``official-crash`` error where it crashes.
Metrics: :mod:`dialeval.metrics.airdialogue`.

Options (``Request.options``, all in the signature): ``flight_distance`` current|legacy, ``exact_name``
tokens|whole, ``lenient`` bool, ``source`` submission|human (score the data file's own ``action``, the
toolkit's ``--task human``), ``bleu`` auto|yes|no.

Per-item numbers go to ``RankTable.values`` (metrics ``score``, ``exact``, ``name``, ``name-exact``, ``flight``,
``flight-exact``, ``status``, ``bleu``, and with --lenient ``selfplay-mean4``, the toolkit's self-play printout);
``values["gold-status-code"]`` is the index of the gold status in :data:`STATUSES` (-1 for another value), the
report's breakdown by gold status (:meth:`AirDialogue.subsets`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dialeval.benchmarks.base import Benchmark, Evaluation, Option, Request, data_identity
from dialeval.core.errors import UsageError
from dialeval.files import read
from dialeval.formats import airdialogue as fmt
from dialeval.formats import airdialogue_predictions as ap
from dialeval.metrics import airdialogue as adm
from dialeval.metrics import register, value_metric

STATUSES = adm.STATUSES
METRICS = ("score", "exact", "name", "name-exact", "flight", "flight-exact", "status")
EXTRA_METRICS = ("bleu", "selfplay-mean4")
GROUP = "state"
for _name in (*METRICS, *EXTRA_METRICS):
    register(value_metric(_name, adm.METRIC_DESCRIPTIONS[_name]))

BLEU_VARIANTS = ("sacrebleu", "toolkit")  # dialeval.metrics.bleu.BLEU_VARIANTS (kept import-free: the CLI lists it)

def _options(options: dict, declared: tuple[Option, ...]) -> dict:
    """The options given, else their declared defaults, checked here too (a direct ``evaluate`` call skips the
    registry's check)."""
    o = {x.name: x.default for x in declared} | {k: v for k, v in (options or {}).items() if v is not None}
    if o["flight_distance"] not in adm.FLIGHT_DISTANCES:
        raise UsageError(f"--flight-distance must be one of {', '.join(adm.FLIGHT_DISTANCES)}")
    if o["exact_name"] not in adm.EXACT_NAMES:
        raise UsageError(f"--exact-name must be one of {', '.join(adm.EXACT_NAMES)}")
    if o["source"] not in ("submission", "human"):
        raise UsageError("source must be 'submission' or 'human'")
    if o["bleu"] not in ("auto", "yes", "no", True, False):
        raise UsageError("bleu must be auto, yes or no")
    o["bleu"] = {True: "yes", False: "no"}.get(o["bleu"], o["bleu"])
    if o["bleu_variant"] not in BLEU_VARIANTS:
        raise UsageError(f"--bleu-variant must be one of {', '.join(BLEU_VARIANTS)}")
    o["lenient"] = bool(o["lenient"])
    return o


class AirDialogue(Benchmark):
    name = "airdialogue"
    public_data_note = ("the ground truth is computed from the data file's intents and the KB file (and its action "
                        "field is the human agent's), both of which a participant's agent reads")
    title = "AirDialogue flight booking: final-state scores (name, flight, status; scaled and exact totals)"
    one_split = True  # a predictions file answers one split
    split_file = (f"{{split}}{fmt.DATA_SUFFIX}", f"{{split}}{fmt.KB_SUFFIX}")  # a split's data and knowledge base
    embedded_folder = "airdialogue"  # its simulated data in the embedded default challenge
    split_names = ("train", "dev", "test")
    data_name = "AirDialogue"
    split_descriptions = {"train": "training dialogs", "dev": "development dialogs", "test": "test dialogs"}
    group_descriptions = {"state": "the dialog's final state: action, customer name and flight"}
    default_metrics = METRICS
    extra_metrics = EXTRA_METRICS
    submission_formats = ("airdialogue-prediction",)
    submission_suffixes = (".jsonl", ".json")
    problem_codes = {  # this benchmark's own codes (the shared ones: core.problems.CODES)
        "blank-line": "a blank line in a JSON-lines file (one prediction per data line, in order)",
        "line-count": "a JSON-lines submission whose number of lines differs from the split's data lines",
        "unknown-status": "an AirDialogue status outside book, change, cancel, no_flight, no_reservation",
        "id-mismatch": "an optional line id that differs from the line's 0-based position",
        "line-too-long": "a line of a line-oriented submission longer than the documented limit (AirDialogue: 1 MiB)",
    }
    options = (
        Option("lenient", "dstc6, airdialogue: reproduce the official scorer's numbers, listing every quirk "
                          "applied."),
        Option("flight_distance", "airdialogue: flight distance of the toolkit today (current) or of its pre-2020 "
                                  "evaluator (legacy).", kind="choice", choices=adm.FLIGHT_DISTANCES,
               default="current", scoring_only=True),
        Option("exact_name", "airdialogue: exact name credit per first/last-name token (tokens) or whole-name "
                             "equality (whole).", kind="choice", choices=adm.EXACT_NAMES, default="tokens",
               scoring_only=True),
        Option("source", "submission (default) or human: score the data file's own actions.", kind="choice",
               choices=("submission", "human"), default="submission", cli=False),
        Option("bleu", "auto, yes or no: BLEU of the predicted utterances.", kind="text", default="auto", cli=False),
        Option("bleu_variant", "airdialogue: self-play BLEU by sacrebleu (default) or as the toolkit computes it "
                               "(toolkit: turns split on ':', NLTK word tokens, no smoothing; the toolkit-bleu extra).",
               kind="choice", choices=BLEU_VARIANTS, default="sacrebleu", scoring_only=True),
    )

    def splits(self, data: Path) -> list[str]:
        return fmt.available_splits(data)

    def subsets(self, table) -> list:
        """The report's breakdown by the item's gold status (book, change, cancel, no_flight, no_reservation)."""
        code = table.values.get("gold-status-code")
        if code is None:
            return []
        return [(f"status={s}", code == i) for i, s in enumerate(STATUSES)]

    def metrics_for(self, evaluation: Evaluation) -> list[str]:
        t = evaluation.table
        return [*METRICS, *(m for m in EXTRA_METRICS if t is not None and m in t.values)]

    def evaluate(self, request: Request) -> Evaluation:
        o = _options(request.options, self.options)
        if o["bleu_variant"] == "toolkit" and request.scoring:  # NLTK and its model are checked before any work
            from dialeval.metrics.bleu import nltk_word_tokenize

            nltk_word_tokenize()
        (split,) = self.choose_splits(request, self.splits(request.data))
        if request.groups and set(request.groups) != {GROUP}:
            raise UsageError(f"airdialogue has one task, {GROUP!r}")
        data_path, kb_path = fmt.split_paths(request.data, split)
        human, want_bleu = o["source"] == "human", o["bleu"] == "yes"
        fields = {"task": GROUP, "mode": "lenient" if o["lenient"] else "strict", "source": o["source"],
                  "flight-distance": o["flight_distance"], "exact-name": o["exact_name"]}
        # Every file is checked before any is read or hashed: a FIFO or a device is refused at once.
        for path in (data_path, kb_path):
            read.check_regular(path, what="a JSON-lines data file")
        if not human:
            read.check_regular(request.submission, what=ap.PREDICTION_FILE)
        identity = data_identity([data_path, kb_path], request.data)

        # Gold first (one pass), KB only when scoring.
        if human:
            lines = fmt.read_human(data_path)
            gold = ([h.expected_action.name for h in lines], [h.expected_action.flight for h in lines],
                    [h.expected_action.status for h in lines], None)
        else:
            gold = fmt.read_gold(data_path, with_dialogue=want_bleu)
        sub_path = data_path if human else Path(request.submission)
        n_data, file, mask, problems = len(gold[0]), sub_path.name, None, []
        submission = {"path": str(sub_path), "kind": "data-actions" if human else "file",
                      "sha256": read.file_sha256(sub_path), "files": [file]}
        if human:
            preds, problems, mask = ap.read_human_actions(lines, o["lenient"], file)
        elif o["lenient"]:
            preds, problems, n_data = ap.read_lenient(sub_path, n_data, file, want_dialogue=want_bleu)
        else:
            preds = ap.read_strict(sub_path, n_data, file, problems)
        ev = Evaluation(table=None, problems=problems, splits=[split], groups=[GROUP], data=identity,
                        submission=submission, signature_fields=fields)
        if preds is None or not ev.valid or not request.scoring:
            return ev

        # n_data is now the lines scored: --lenient drops those the toolkit's zip() drops
        g_names, g_flights, g_status, g_dialogues = (None if g is None else g[:n_data] for g in gold)
        blocks = ap.resolved_kb_blocks(kb_path, data_path.name, len(gold[0]), g_flights, preds.flights)
        flight, flight_ex = adm.blockwise_flight_scores(blocks, n_data, o["flight_distance"])
        name, name_ex = adm.name_scores(preds.names, g_names, o["exact_name"])
        values = adm.combine(name, name_ex, flight, flight_ex, adm.status_scores(preds.statuses, g_status))
        if mask is not None:  # --lenient human: lines marked correct count 1 without checking
            values = {k: np.where(mask[:n_data], 1.0, v) for k, v in values.items()}
        if o["lenient"]:
            values["selfplay-mean4"] = adm.selfplay_mean4(values)
        values["gold-status-code"] = adm.status_codes(g_status)
        bleu = want_bleu or (o["bleu"] == "auto" and not human and n_data > 0 and None not in preds.dialogues)
        if (request.options or {}).get("bleu_variant") and not bleu:  # given, it would change nothing
            raise UsageError(f"--bleu-variant {o['bleu_variant']} chooses the self-play BLEU, and no BLEU is computed "
                             "here (it needs a \"dialogue\" on every prediction line): leave it out")
        if bleu:
            from dialeval.metrics.bleu import selfplay_bleu

            if g_dialogues is None:
                g_dialogues = fmt.read_gold(data_path, with_dialogue=True)[3][:n_data]
            values["bleu"], fields["bleu"] = selfplay_bleu([d or [] for d in preds.dialogues], g_dialogues,
                                                           variant=o["bleu_variant"])
        from dialeval.core.ranks import RankTable

        ev.table = RankTable.build(benchmark=self.name, split=split, group=GROUP, values=values, n_candidates=1,
                                   item_ids=[str(i) for i in range(n_data)], gold_rank=np.zeros(n_data, np.int32))
        return ev
