"""Ubuntu Dialogue Corpus v2 CSV files (next-utterance classification): reading, and a fixture writer.

Layout (the files the corpus' creation scripts write; comma-separated, minimal quoting, UTF-8):

* ``valid.csv`` / ``test.csv``: header ``Context,Ground Truth Utterance,Distractor_0,...,Distractor_8``;
  one row per context with the true next response and nine distractors sampled at random from the corpus
  (a distractor can have the same text as the ground truth).
* ``train.csv``: header ``Context,Utterance,Label``; label ``1.0`` (the true response) or ``0.0`` (a random
  one), also accepted as ``1`` / ``0``.

Every utterance ends with `` __eou__``; in a context every turn (one or more utterances of one speaker)
also ends with `` __eot__``. Texts are kept exactly as written (no normalisation).

These are organizer files, so a malformed one is a usage error (exit 2) naming ``file:line``; the rows of
a submission are checked elsewhere. Item ids and candidate ids are defined here so the benchmark, the
baselines and the tests agree: item ``<split>:<row>`` (1-based data row, header excluded) and candidates
``gt``, ``d0`` ... ``d8`` in file column order.
"""

from __future__ import annotations

import csv
import io
import random
import re
from dataclasses import dataclass
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.files.read import SNIFF_BYTES, named, open_input, os_error, sniff

N_DISTRACTORS = 9
EVAL_HEADER = ("Context", "Ground Truth Utterance", *(f"Distractor_{i}" for i in range(N_DISTRACTORS)))
TRAIN_HEADER = ("Context", "Utterance", "Label")
CANDIDATE_IDS = ("gt", *(f"d{i}" for i in range(N_DISTRACTORS)))
"""Candidate ids in file column order: the ground truth, then Distractor_0 ... Distractor_8."""
EOU = "__eou__"
EOT = "__eot__"
_LABELS = {"1.0": 1, "0.0": 0, "1": 1, "0": 0}

csv.field_size_limit(1 << 28)  # some real contexts are long; the default 128 KiB limit would refuse them


def item_id(split: str, row: int) -> str:
    """``test:17``: the 17th data row (1-based, header excluded) of ``test.csv``."""
    return f"{split}:{row}"


@dataclass
class EvalFile:
    """A ``valid.csv`` / ``test.csv``: per row the context and its ten candidate texts (gt first)."""

    path: Path
    split: str
    contexts: list[str]
    candidates: list[tuple[str, ...]]  # (ground truth, distractor 0, ..., distractor 8) per row

    def __len__(self) -> int:
        return len(self.contexts)

    def item_ids(self) -> list[str]:
        return [item_id(self.split, i) for i in range(1, len(self) + 1)]


@dataclass
class TrainFile:
    path: Path
    contexts: list[str]
    utterances: list[str]
    labels: list[int]  # 1 = the true response, 0 = a random one


def _rows(path: Path, header: tuple[str, ...]):
    """Yield (first line of the record, fields) of every data row after checking the header.

    Opened through the input layer (a FIFO or a device is refused before it is read; a compressed, UTF-16
    or binary file is named as such) and streamed: memory follows the longest record, not the file.

    A line that is one well-formed record (:func:`_split_line`) is split here, because the csv module builds
    each field in a buffer of 4 bytes per character (a 50 MB context cost 250 MB more than its text); any
    other line starts a record the csv module reads (a quoted field may span lines, a stray quote has its own
    rules), so the fields and line numbers are the csv module's either way.
    """
    with open_input(path, what="a CSV file") as f:
        try:
            bad = sniff(f.file.peek(SNIFF_BYTES)[:SNIFF_BYTES], expect="a UTF-8 CSV file", bom_ok=True)
        except OSError as e:
            raise os_error(f.name, e) from None
        if bad is not None:
            raise named(bad, f.name)  # organizer data: a usage error (exit 2) that says what the file is
        fh = io.TextIOWrapper(f.file, encoding="utf-8", newline="")  # csv needs the line ends inside quotes
        feed = _Feed(fh)
        reader = csv.reader(feed)
        limit = csv.field_size_limit()

        def records():
            """(lines read before the record, fields) per record; a line the csv module needs goes to it."""
            for text in fh:
                before = feed.plain + reader.line_num
                fields = None if len(text) > limit or "\0" in text else _split_line(text)
                if fields is None:
                    feed.first = text
                    fields = next(reader, None)
                    if fields is None:
                        return
                else:
                    feed.plain += 1
                yield before, fields

        rows = records()
        try:
            _, first = next(rows, (0, None))
            if first is None:
                raise UsageError(f"{path}:1: empty file, expected the header {','.join(header)}")
            if first and first[0].startswith("\ufeff"):
                first[0] = first[0][1:]
            if tuple(first) != header:
                raise UsageError(f"{path}:1: header is {_shorten(','.join(first))}, expected {','.join(header)}")
            for before, fields in rows:
                line = before + 1
                if len(fields) != len(header):
                    raise UsageError(f"{path}:{line}: {len(fields)} columns, expected {len(header)} ({','.join(header[:3])},...)")
                yield line, fields
        except csv.Error as e:
            raise UsageError(f"{path}:{feed.plain + reader.line_num}: not a readable CSV row ({e})") from None
        except UnicodeDecodeError as e:
            raise UsageError(f"{path}: not UTF-8 text (byte {e.start})") from None
        except OSError as e:
            raise os_error(f.name, e) from None
        finally:
            fh.detach()  # the input layer closes the file


_FIELD = re.compile(r'"([^"\0]*(?:""[^"\0]*)*)"|[^",\0]*')
"""One field of a record: quoted (a doubled quote inside stands for one), or plain (no quote, comma or NUL)."""


def _split_line(text: str) -> list[str] | None:
    """The fields of a line holding one whole, well-formed record, as the csv module reads them (default
    dialect); None for anything else: a quote inside a plain field, text after a closing quote, a quoted
    field going on past the line, a NUL."""
    body = text.rstrip("\r\n")  # newline="": a line holds no \r or \n but its one line end
    if not body:
        return []
    if '"' not in body and "\0" not in body:
        return body.split(",")
    fields = []
    pos, end = 0, len(body)
    while True:
        m = _FIELD.match(body, pos)
        quoted = m.group(1)
        fields.append(m.group() if quoted is None else quoted.replace('""', '"'))
        pos = m.end()
        if pos == end:
            return fields
        if body[pos] != ",":
            return None
        pos += 1


class _Feed:
    """The lines the csv module reads: the one a record starts on (``first``), then as many more as it asks for."""

    def __init__(self, lines):
        self.lines = lines
        self.first: str | None = None
        self.plain = 0  # lines split without the csv module (reader.line_num counts the others)

    def __iter__(self):
        return self

    def __next__(self) -> str:
        if self.first is not None:
            text, self.first = self.first, None
            return text
        return next(self.lines)


def _shorten(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def read_eval(path: str | Path, split: str | None = None) -> EvalFile:
    """Read ``valid.csv`` / ``test.csv``; ``split`` defaults to the file's stem."""
    path = Path(path)
    contexts: list[str] = []
    cands: list[tuple[str, ...]] = []
    for _line, f in _rows(path, EVAL_HEADER):
        contexts.append(f[0])
        cands.append(tuple(f[1:]))
    return EvalFile(path, split or path.stem, contexts, cands)


def count_eval_rows(path: str | Path) -> int:
    """Number of data rows of ``valid.csv`` / ``test.csv``, with the same checks as :func:`read_eval`."""
    return eval_rows_and_case(path)[0]


_CAPITAL = re.compile(r"[A-Z]")


def eval_rows_and_case(path: str | Path) -> tuple[int, bool]:
    """(data rows, whether any text holds an ASCII capital letter) of ``valid.csv`` / ``test.csv``.

    Two text versions of v2 circulate: the raw text (ParlAI's packaging) and the creator's tokenized, stemmed and
    lemmatized one, which the stemmer lower-cases: a capital letter says the text is raw; all lower case cannot
    tell the two apart."""
    n, capitals = 0, False
    for _, fields in _rows(Path(path), EVAL_HEADER):
        n += 1
        capitals = capitals or any(map(_CAPITAL.search, fields))
    return n, capitals


def read_train(path: str | Path) -> TrainFile:
    """Read ``train.csv`` (labels ``1.0``/``0.0`` or ``1``/``0``)."""
    path = Path(path)
    out = TrainFile(path, [], [], [])
    for line, f in _rows(path, TRAIN_HEADER):
        label = _LABELS.get(f[2].strip())
        if label is None:
            raise UsageError(f"{path}:{line}: label {_shorten(f[2], 20)} is not 1.0, 0.0, 1 or 0")
        out.contexts.append(f[0])
        out.utterances.append(f[1])
        out.labels.append(label)
    return out


def turns(context: str) -> list[str]:
    """The turns of a context (split on `` __eot__``), each still holding its `` __eou__`` markers."""
    return [t.strip() for t in context.split(EOT) if t.strip()]


# ---- fixture writer -----------------------------------------------------------------------------------

_TOPICS = {
    "wireless": (["wifi", "wireless", "wlan0", "network-manager", "broadcom", "router", "iwconfig", "driver"],
                 ["sudo modprobe -r b43 && sudo modprobe b43", "check rfkill list, the card may be blocked",
                  "try the bcmwl-kernel-source package", "does iwconfig show wlan0 at all?"]),
    "sound": (["sound", "audio", "alsa", "pulseaudio", "speakers", "headphones", "mixer", "volume"],
              ["run alsamixer and unmute the master channel", "killall pulseaudio, it restarts itself",
               "is the right output selected in sound settings?", "try pavucontrol, the output tab"]),
    "grub": (["grub", "boot", "dual boot", "windows", "mbr", "partition", "bootloader", "update-grub"],
             ["boot a live cd and reinstall grub to /dev/sda", "run sudo update-grub after that",
              "is windows on the same disk?", "boot-repair fixes that most of the time"]),
    "packages": (["apt-get", "dpkg", "package", "repository", "ppa", "dependencies", "sources.list", "upgrade"],
                 ["sudo apt-get -f install should fix the broken dependencies", "remove that ppa from sources.list",
                  "run sudo dpkg --configure -a first", "apt-cache policy shows where it comes from"]),
    "nvidia": (["nvidia", "graphics", "driver", "xorg", "resolution", "screen", "compiz", "monitor"],
               ["use the additional drivers tool, not the nvidia installer", "check /var/log/Xorg.0.log for errors",
                "purge nvidia-* and reinstall the recommended driver", "xrandr lists the modes it can use"]),
    "mount": (["usb", "mount", "ntfs", "fstab", "drive", "external disk", "permissions", "uuid"],
              ["add it to /etc/fstab with its uuid", "sudo blkid shows the uuid", "is ntfs-3g installed?",
               "mount it with uid=1000 so you own the files"]),
}
_OPENERS = ["hi all", "hello", "hey guys", "anyone around?", "quick question", "hi, i need some help"]
_ASKS = ["my {a} stopped working after the upgrade", "how do i fix {a} on 14.04", "{a} is broken, any idea why?",
         "i can't get {a} to work with {b}", "is there a way to reset {a}", "why does {a} say \"{b} not found\""]
_REPLIES = ["what does {b} say?", "which version of ubuntu?", "did you try rebooting, then {b}?", "pastebin the output",
            "that is a {a} problem, not {b}", "thanks, that worked", "no luck, same error", "ok, trying now",
            "it says {b} is missing", "yes, {a} and {b}, both"]


def _utterance(rng: random.Random, template: str, words: list[str]) -> str:
    a, b = rng.sample(words, 2)
    return template.format(a=a, b=b)


def _turn(utterances: list[str]) -> str:
    return " ".join(f"{u} {EOU}" for u in utterances)


def _fixture_dialog(rng: random.Random) -> tuple[str, str]:
    """(context, true response) of one synthetic support chat."""
    topic = rng.choice(sorted(_TOPICS))
    words, fixes = _TOPICS[topic]
    n_turns = rng.randint(2, 8)
    parts = []
    for t in range(n_turns):
        if t == 0:
            utts = [rng.choice(_OPENERS), _utterance(rng, rng.choice(_ASKS), words)]
        else:
            utts = [_utterance(rng, rng.choice(_REPLIES), words) for _ in range(rng.randint(1, 2))]
            if rng.random() < 0.3:
                utts.append(rng.choice(fixes))
        parts.append(f"{_turn(utts)} {EOT}")
    reply = [rng.choice(fixes)]
    if rng.random() < 0.4:
        reply.append(_utterance(rng, rng.choice(_REPLIES), words))
    return " ".join(parts), _turn(reply)


def write_fixture(
    out: str | Path, *, seed: int = 0, n_train: int = 200, n_valid: int = 50, n_test: int = 50, same_text_rate: float = 0.05
) -> dict[str, Path]:
    """Write ``train.csv``, ``valid.csv`` and ``test.csv`` in the corpus' exact layout; same seed, same bytes.

    Synthetic Ubuntu support chats on a few topics (the true response is on the context's topic, so a
    lexical baseline beats chance). Distractors are other dialogs' responses; with ``same_text_rate`` a
    distractor repeats the ground truth text, as in the real files. Quoting is the csv module's minimal
    quoting with ``\\r\\n`` line ends (what the corpus' creation scripts wrote).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    paths = {}
    n_pool = max(50, n_train + n_valid + n_test)
    pool = [_fixture_dialog(rng) for _ in range(n_pool)]
    responses = [r for _, r in pool]

    def write(name: str, header, rows) -> None:
        p = out / name
        tmp = p.with_name(f".{name}.tmp")
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, lineterminator="\r\n")
            w.writerow(header)
            w.writerows(rows)
        tmp.replace(p)
        paths[name[:-4]] = p

    train_rows = []
    for i in range(n_train):
        ctx, resp = pool[i % n_pool] if i < n_pool else _fixture_dialog(rng)
        if rng.random() < 0.5:
            train_rows.append((ctx, resp, "1.0"))
        else:
            train_rows.append((ctx, rng.choice(responses), "0.0"))
    write("train.csv", TRAIN_HEADER, train_rows)
    for name, n in (("valid.csv", n_valid), ("test.csv", n_test)):
        rows = []
        for _ in range(n):
            ctx, gt = _fixture_dialog(rng)
            ds = [gt if rng.random() < same_text_rate else rng.choice(responses) for _ in range(N_DISTRACTORS)]
            rows.append((ctx, gt, *ds))
        write(name, EVAL_HEADER, rows)
    return paths
