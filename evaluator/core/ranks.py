"""RankTable: the one columnar table every metric, statistic and report is computed from.

One row per scored item (an answer-key entry): which benchmark, split and group (task) it belongs to, its
item id and conversation, how many candidates it had, and where the submission put its gold. Readers (one
per benchmark, :mod:`dialeval.benchmarks`) produce it; metrics, statistics and reports only read it.

Rank columns
    ``gold_rank``: 1-based rank of the best-ranked gold candidate; ``0`` (``NOT_RANKED``) where the
    submission did not rank any gold (a partial top-k ranking without it, or a missing item).
    ``ties``: number of *other* candidates whose score equals the gold's. Rank-based submissions have
    none (0). For score-based submissions the reader applies the tie policy: ``pessimistic`` and
    ``optimistic`` fold the ties into ``gold_rank`` (ties = 0); ``expected`` keeps ``gold_rank`` = s + 1
    (s = candidates strictly above the gold) and ``ties`` = t, and the metrics average over the t + 1
    equally likely positions.

``nested`` holds the same two columns computed among the first N candidates only (Ubuntu's 1-in-N),
keyed by N. ``values`` holds per-item numbers a benchmark computes itself (AirDialogue's state scores,
embedding similarities), keyed by metric name; their corpus value is the mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

NOT_RANKED = 0
"""Value of ``gold_rank`` for a gold candidate that the submission did not rank (a miss at every k)."""

COLUMNS = ("benchmark", "split", "group", "item_id", "conversation_id", "turn", "n_candidates", "gold_rank", "ties")
LAZY = ("benchmark", "split", "group", "item_id", "conversation_id")
"""Object columns that :meth:`RankTable.build` may keep as a recipe (one value, or numbered ids) until read."""


def _filled(n: int, value: object) -> np.ndarray:
    """An object column holding ``value`` n times (``fill`` is ~50x faster than ``np.full`` for objects)."""
    a = np.empty(n, dtype=object)
    a.fill(value)
    return a


class NumberedIds(Sequence):
    """The ids ``<prefix><first>``, ``<prefix><first + 1>``, ... (e.g. ``test:1`` ... ``test:1000000``).

    A read-only sequence of str that makes each id only when it is read: a million-row split's ids cost
    nothing until a consumer (per-item lines, statistics, a DataFrame) asks for them.
    """

    __slots__ = ("prefix", "n", "first")

    def __init__(self, prefix: str, n: int, first: int = 1):
        self.prefix, self.n, self.first = str(prefix), int(n), int(first)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [f"{self.prefix}{x}" for x in range(self.first, self.first + self.n)[i]]
        i = int(i)
        if not -self.n <= i < self.n:
            raise IndexError("id index out of range")
        return f"{self.prefix}{self.first + (i % self.n)}"

    def __iter__(self):
        p = self.prefix
        return (f"{p}{x}" for x in range(self.first, self.first + self.n))

    def __repr__(self) -> str:
        return f"NumberedIds({self.prefix!r}, {self.n}, first={self.first})"

    def array(self, index=None) -> np.ndarray:
        """The ids as an object array (those at ``index``, a mask or positions, when given)."""
        numbers = range(self.first, self.first + self.n)
        if index is not None:
            numbers = (np.arange(self.first, self.first + self.n)[index]).tolist()
        p = self.prefix
        a = np.empty(len(numbers), dtype=object)
        a[:] = [f"{p}{x}" for x in numbers]
        return a


class LineIds(Sequence):
    """The ids ``<prefix><N>`` for the ascending numbers N of ``numbers`` (e.g. ``e1``, ``e3``, ``e4``: an entity
    list's line numbers, blank lines skipped), held as one integer array; each id is made when it is read.

    :meth:`position` finds an id's index by reading its number, and :meth:`columns` is the id -> index mapping
    a scorer looks candidates up in: a dict while the list is short (fast lookups, a few MB), and above
    :data:`DICT_MAX` ids the arithmetic itself, so that two million ids cost 8 bytes each, not some 150.
    """

    DICT_MAX = 1 << 18

    __slots__ = ("prefix", "numbers", "n", "_first", "_contiguous", "_columns")

    def __init__(self, prefix: str, numbers: np.ndarray):
        self.prefix = str(prefix)
        self.numbers = np.asarray(numbers, dtype=np.int64)
        self.n = len(self.numbers)
        self._first = int(self.numbers[0]) if self.n else 0
        self._contiguous = not self.n or int(self.numbers[-1]) - self._first == self.n - 1
        self._columns = None

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [f"{self.prefix}{x}" for x in self.numbers[i].tolist()]
        return f"{self.prefix}{int(self.numbers[i])}"

    def __iter__(self):
        p = self.prefix
        for a in range(0, self.n, 1 << 16):  # a block of Python ints at a time, not the whole list
            yield from (f"{p}{x}" for x in self.numbers[a:a + (1 << 16)].tolist())

    def __contains__(self, cid) -> bool:
        return self.position(cid) is not None

    def __eq__(self, other) -> bool:
        if isinstance(other, LineIds):
            return self.prefix == other.prefix and np.array_equal(self.numbers, other.numbers)
        return isinstance(other, list | tuple) and len(other) == self.n and all(a == b for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self) -> str:
        return f"LineIds({self.prefix!r}, {self.n} ids)"

    def position(self, cid) -> int | None:
        """The index of id ``cid`` (any object), or None when it is not one of these ids."""
        if type(cid) is not str or not cid.startswith(self.prefix):
            return None
        digits = cid[len(self.prefix):]
        # exactly the digits f"{N}" writes: ASCII, no sign, no leading zero, and no more than int64 holds
        if not (0 < len(digits) <= 18 and digits.isascii() and digits.isdigit()) or digits[0] == "0":
            return None
        x = int(digits)
        if self._contiguous:
            j = x - self._first
            return j if 0 <= j < self.n else None
        j = int(np.searchsorted(self.numbers, x))
        return j if j < self.n and self.numbers[j] == x else None

    def columns(self):
        """id -> index (``get``, ``[]``, ``in``, ``len``): a dict up to :data:`DICT_MAX` ids (made once)."""
        if self._columns is None:
            self._columns = {c: j for j, c in enumerate(self)} if self.n <= self.DICT_MAX else _Positions(self)
        return self._columns


class _Positions:
    """:meth:`LineIds.columns` of a long list: the mapping's lookups, answered by :meth:`LineIds.position`."""

    __slots__ = ("ids",)

    def __init__(self, ids: LineIds):
        self.ids = ids

    def get(self, cid, default=None):
        j = self.ids.position(cid)
        return default if j is None else j

    def __getitem__(self, cid) -> int:
        j = self.ids.position(cid)
        if j is None:
            raise KeyError(cid)
        return j

    def __contains__(self, cid) -> bool:
        return self.ids.position(cid) is not None

    def __len__(self) -> int:
        return self.ids.n


class _Const:
    """Recipe of a column holding one value n times."""

    __slots__ = ("value", "n")

    def __init__(self, value: object, n: int):
        self.value, self.n = value, n

    def array(self, index=None) -> np.ndarray:
        return _filled(self.n if index is None else len(np.arange(self.n)[index]), self.value)


_RECIPES = (_Const, NumberedIds)


class _Column:
    """A RankTable column that may be stored as a recipe and becomes an object array when first read.

    Assigning a column (``table.split = ...``) stores exactly what is assigned, as for a plain attribute.
    """

    def __set_name__(self, owner, name: str) -> None:
        self.name, self.slot = name, "_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            raise AttributeError(self.name)  # no class-level default: the dataclass field stays required
        v = obj.__dict__[self.slot]
        if isinstance(v, _RECIPES):
            v = obj.__dict__[self.slot] = v.array()
        return v

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.slot] = value


def _shared(a: np.ndarray) -> np.ndarray:
    """A read-only view: tables that share a column cannot change it under each other."""
    v = a.view()
    v.flags.writeable = False
    return v


@dataclass
class RankTable:
    benchmark: np.ndarray = _Column()  # object (str)
    split: np.ndarray = _Column()  # object (str)
    group: np.ndarray = _Column()  # object (str): the task / file the item belongs to ("1" ... "5" for DSTC6 tasks)
    item_id: np.ndarray = _Column()  # object (str)
    conversation_id: np.ndarray = _Column()  # object (str); the item id itself when the benchmark has no conversations
    turn: np.ndarray  # int16: 1-based position of the item in its conversation, 0 = unknown
    n_candidates: np.ndarray  # int32
    gold_rank: np.ndarray  # int32, 0 = unranked
    ties: np.ndarray  # int32, other candidates tied with the gold (expected tie policy only)
    nested: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.gold_rank.shape[0])

    def _stored(self, column: str):
        """A column as stored: an array, or the recipe of a column not read yet."""
        return self.__dict__["_" + column] if column in LAZY else getattr(self, column)

    @classmethod
    def build(
        cls,
        *,
        benchmark: str,
        split: str,
        group: str,
        item_ids,
        gold_rank,
        n_candidates,
        conversation_ids=None,
        turns=None,
        ties=None,
        nested: dict[int, tuple] | None = None,
        values: dict[str, object] | None = None,
    ) -> RankTable:
        """A table of one (benchmark, split, group): scalars are broadcast, sequences become columns.

        The benchmark, split and group columns, and the id columns when ``item_ids`` is a
        :class:`NumberedIds`, are made when first read.
        """
        n = len(item_ids)
        if isinstance(item_ids, NumberedIds):  # built when first read (each read of the recipe is a new array)
            ids = conv = item_ids
        else:
            ids = np.asarray(item_ids, dtype=object) if n else np.empty(0, dtype=object)
            conv = ids.copy()
        return cls(
            benchmark=_Const(benchmark, n),
            split=_Const(split, n),
            group=_Const(str(group), n),
            item_id=ids,
            conversation_id=conv if conversation_ids is None else np.asarray(conversation_ids, dtype=object),
            turn=np.zeros(n, np.int16) if turns is None else np.asarray(turns, dtype=np.int16),
            n_candidates=np.broadcast_to(np.asarray(n_candidates, dtype=np.int32), (n,)).copy(),
            gold_rank=np.asarray(gold_rank, dtype=np.int32).reshape(n),
            ties=np.zeros(n, np.int32) if ties is None else np.asarray(ties, dtype=np.int32).reshape(n),
            nested={int(k): (np.asarray(r, np.int32), np.asarray(t, np.int32)) for k, (r, t) in (nested or {}).items()},
            values={k: np.asarray(v, dtype=np.float64) for k, v in (values or {}).items()},
        )

    @classmethod
    def empty(cls) -> RankTable:
        e = np.empty(0, dtype=object)
        i32 = np.empty(0, np.int32)
        return cls(e, e.copy(), e.copy(), e.copy(), e.copy(), np.empty(0, np.int16), i32, i32.copy(), i32.copy())

    @classmethod
    def concat(cls, parts: list[RankTable]) -> RankTable:
        parts = [p for p in parts if len(p)] or parts[:1]
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]
        cols = {c: _concat_column([p._stored(c) for p in parts], [len(p) for p in parts]) for c in COLUMNS}
        nested_keys = set.intersection(*(set(p.nested) for p in parts))
        nested = {
            k: (np.concatenate([p.nested[k][0] for p in parts]), np.concatenate([p.nested[k][1] for p in parts]))
            for k in sorted(nested_keys)
        }
        value_keys = set.intersection(*(set(p.values) for p in parts))
        values = {k: np.concatenate([p.values[k] for p in parts]) for k in sorted(value_keys)}
        return cls(**cols, nested=nested, values=values)

    def take(self, mask_or_index) -> RankTable:
        """Rows selected by a boolean mask or an index array (nested and value columns follow).

        A mask selecting every row gives a table over read-only views of this table's columns (no copy).
        """
        sel = mask_or_index
        if isinstance(sel, np.ndarray) and sel.dtype == bool and sel.shape == (len(self),) and sel.all():
            cols = {c: (v if isinstance(v, _RECIPES) else _shared(v)) for c in COLUMNS for v in [self._stored(c)]}
            nested = {k: (_shared(r), _shared(t)) for k, (r, t) in self.nested.items()}
            values = {k: _shared(v) for k, v in self.values.items()}
            return RankTable(**cols, nested=nested, values=values)
        cols = {c: _take_column(self._stored(c), sel) for c in COLUMNS}
        nested = {k: (r[sel], t[sel]) for k, (r, t) in self.nested.items()}
        values = {k: v[sel] for k, v in self.values.items()}
        return RankTable(**cols, nested=nested, values=values)

    def where(self, **equals) -> np.ndarray:
        """Boolean mask of the rows whose columns equal the given values: ``t.where(split="tst1", group="3")``
        is ``(t.split == "tst1") & (t.group == "3")``, without building a column that holds one value."""
        mask = np.ones(len(self), bool)
        for column, value in equals.items():
            v = self._stored(column)
            if isinstance(v, _Const):
                if not v.value == value:
                    mask[:] = False
            else:
                mask &= v == value
        return mask

    def has_conversations(self) -> bool:
        """True when some conversation groups several items (per-dialog accuracy is then informative)."""
        if isinstance(self._stored("conversation_id"), NumberedIds):
            return False  # every item its own conversation
        return bool(len(self)) and len(set(self.conversation_id.tolist())) < len(self)

    def groups(self) -> list[str]:
        """Distinct groups in first-seen order."""
        return self._distinct("group")

    def splits(self) -> list[str]:
        return self._distinct("split")

    def _distinct(self, column: str) -> list:
        v = self._stored(column)
        if isinstance(v, _Const):
            return [v.value] if v.n else []
        return list(dict.fromkeys(getattr(self, column).tolist()))

    def to_dataframe(self):
        """One row per item (pandas). Holds gold ranks, and so reveals the answer key: organizers only."""
        import pandas as pd

        data = {c: getattr(self, c) for c in COLUMNS}
        for k, (r, t) in self.nested.items():
            data[f"gold_rank_in_{k}"] = r
            data[f"ties_in_{k}"] = t
        for k, v in self.values.items():
            data[k] = v
        return pd.DataFrame(data)


def _concat_column(stored: list, lengths: list[int]):
    """One column of :meth:`RankTable.concat`: stays a recipe when every part holds the same single value."""
    first = stored[0]
    if all(isinstance(v, _Const) and type(v.value) is type(first.value) and v.value == first.value for v in stored):
        return _Const(stored[0].value, sum(lengths))
    return np.concatenate([v.array() if isinstance(v, _RECIPES) else v for v in stored])


def _take_column(stored, sel):
    if isinstance(stored, _RECIPES):
        return stored.array(sel)
    return stored[sel]
