"""An organizer's ``challenge.toml``: the challenge's pages, phases, quotas and which run of a team counts.

Read through the input layer, parsed with the standard library's ``tomllib``, checked against
``schemas/challenge.schema.json`` (every problem in one line, by JSON pointer) and then for what a schema cannot
say (phases in time order, each ending after it starts). TOML dates become RFC 3339 UTC strings: a bare date
means the day's start for ``start`` and its last second for ``end``; a date-time without an offset is UTC.

"Now" decides whether a hidden test phase has ended. It is never read from the clock where an output must be
byte-identical for tests: :func:`now` takes an explicit value, else ``DIALEVAL_NOW``, else the clock.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.benchmarks.registry import DEFAULT_BENCHMARK
from dialeval.core.errors import UsageError

MAX_BYTES = 1024 * 1024
COUNT_RULES = ("latest", "best-public", "chosen")
DEFAULT_FILE = Path(__file__).resolve().parent / "default-challenge.toml"


@dataclass
class Phase:
    name: str
    start: str
    end: str
    splits: list[str] | None = None  # None: every split
    hidden: bool = False
    description: str = ""

    def holds(self, when: str) -> bool:
        return self.start <= when <= self.end  # RFC 3339 UTC strings of one form order as times


@dataclass
class Contact:
    name: str
    email: str = ""
    url: str = ""
    role: str = ""
    public: bool = False


@dataclass
class Challenge:
    title: str
    overview: str
    source: str  # the file's text, kept with the board in the registry
    board: str | None = None
    benchmark: str = DEFAULT_BENCHMARK
    rules: str = ""
    licence: str = ""
    submit: str = ""
    counts: str = "latest"
    contacts: list[Contact] = field(default_factory=list)
    per_day: int | None = None
    total: int | None = None
    phases: list[Phase] = field(default_factory=list)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()

    def phase_at(self, when: str) -> Phase | None:
        return next((p for p in self.phases if p.holds(when)), None)

    def public_contacts(self) -> list[Contact]:
        return [c for c in self.contacts if c.public]

    def deadlines(self) -> list[tuple[str, str]]:
        """(label, RFC 3339 time) of every phase's end, for the progress chart."""
        return [(f"{p.name} ends", p.end) for p in self.phases]


# ---- time -------------------------------------------------------------------------------------------------
def iso(ts: _dt.datetime) -> str:
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=_dt.UTC)
    return ts.astimezone(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def parse_when(text: str, what: str) -> str:
    """An RFC 3339 date-time (or a date: its start) given on the command line, as a UTC string."""
    try:
        return iso(_dt.datetime.fromisoformat(str(text).strip().replace("Z", "+00:00")))
    except ValueError:
        raise UsageError(f"{what}: {str(text)[:40]!r} is not a date-time such as 2017-09-15T12:00:00Z") from None
    except OverflowError:  # 0001-01-01T00:00:00+14:00 is a year before 1 in UTC
        raise UsageError(f"{what}: {str(text)[:40]!r} is out of range in UTC (years 1 to 9999)") from None


def now(value: str | None = None) -> str:
    """"Now" as a UTC string: ``value`` (an option), else ``DIALEVAL_NOW``, else the clock."""
    if value:
        return parse_when(value, "--now")
    env = os.environ.get("DIALEVAL_NOW")
    if env:
        return parse_when(env, "DIALEVAL_NOW")
    return iso(_dt.datetime.now(_dt.UTC))


# ---- reading ------------------------------------------------------------------------------------------------
def load(path: str | Path) -> Challenge:
    """A ``challenge.toml`` file as a :class:`Challenge`, or :class:`UsageError` (exit 2) in one line."""
    from dialeval.core.errors import DialevalError
    from dialeval.files.read import decode_utf8, read_bytes

    path = Path(path)
    try:
        raw = read_bytes(path, what="a challenge.toml file", limit=MAX_BYTES)
        text = decode_utf8(raw, str(path), expect="UTF-8 TOML")
    except UsageError:
        raise
    except DialevalError as e:  # an unreadable organizer file is the environment's fault: exit 2
        raise UsageError(str(e)) from None
    return parse(text, str(path))


def parse(text: str, where: str = "challenge.toml") -> Challenge:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        at = f":{m.group(1)}" if m else ""
        what = re.sub(r"\s*\(at .*?\)\s*$", "", str(e)).rstrip(".") or "syntax error"
        col = f", column {m.group(2)}" if m else ""
        raise UsageError(f"{where}{at}: not valid TOML ({what.lower()}{col})") from None
    except RecursionError:  # tomllib recurses per nesting level: `a = [[[[...` thousands deep
        raise UsageError(f"{where}: nested too deeply (a challenge.toml is tables of plain values)") from None
    try:
        data = _jsonable(data)
    except OverflowError:  # a TOML date-time whose offset takes it past year 1 or 9999 in UTC
        raise UsageError(f"{where}: a date-time is out of range in UTC (years 1 to 9999)") from None
    problems = _schema_problems(data)
    if not problems:
        problems = _order_problems(data.get("phases", []))
    if problems:
        more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        raise UsageError(f"{where}: " + "; ".join(problems[:3]) + more)
    return Challenge(
        title=data["title"], overview=data["overview"], source=text, board=data.get("board"),
        benchmark=data.get("benchmark", DEFAULT_BENCHMARK), rules=data.get("rules", ""), licence=data.get("licence", ""),
        submit=data.get("submit", ""), counts=data.get("counts", "latest"),
        contacts=[Contact(**c) for c in data.get("contacts", [])],
        per_day=data.get("quota", {}).get("per_day"), total=data.get("quota", {}).get("total"),
        phases=[Phase(p["name"], p["start"], p["end"], p.get("splits"), p.get("hidden", False),
                      p.get("description", "")) for p in data.get("phases", [])],
    )


def _jsonable(obj, key: str = ""):
    """TOML's date and time values as the RFC 3339 UTC strings the schema checks."""
    if isinstance(obj, dict):
        return {k: _jsonable(v, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_jsonable(v, key) for v in obj]
    if isinstance(obj, _dt.datetime):
        return iso(obj)
    if isinstance(obj, _dt.date):
        t = _dt.time(23, 59, 59) if key == "end" else _dt.time(0, 0, 0)
        return iso(_dt.datetime.combine(obj, t, _dt.UTC))
    if isinstance(obj, _dt.time):
        return obj.isoformat()  # a time of day alone is no date: the schema refuses it
    return obj


_TYPES = {"string": "text", "integer": "a whole number", "array": "a list", "object": "a table",
          "boolean": "true or false"}


def _schema_problems(data) -> list[str]:
    from dialeval.core.problems import pointer
    from dialeval.core.schemacheck import validator

    out = []
    for e in sorted(validator("challenge").iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        at = pointer(*e.absolute_path) or "/"
        schema = e.schema if isinstance(e.schema, dict) else {}
        v = e.validator
        if v == "required":  # one error per missing key, each listing every required one: say them all once
            missing = [f'"{k}"' for k in e.validator_value if k not in (e.instance or {})] or ['"?"']
            line = f"{at}: {' and '.join(missing)} {'are' if len(missing) > 1 else 'is'} required"
            if line not in out:
                out.append(line)
        elif v == "additionalProperties":
            known = sorted(schema.get("properties", {}))
            extra = sorted(set(e.instance) - set(known))
            out.append(f"{at}: unknown key {extra[0][:40]!r} (known: {', '.join(known)})")
        elif v == "enum":
            out.append(f"{at}: must be one of {', '.join(map(str, e.validator_value))}")
        elif v == "type":
            out.append(f"{at}: must be {_TYPES.get(e.validator_value, e.validator_value)}")
        elif v == "pattern" and at.endswith(("/start", "/end")):
            out.append(f"{at}: must be a date or date-time such as 2017-09-15T00:00:00Z")
        elif v == "pattern":
            out.append(f"{at}: not a valid value here (no control characters; email and url as usual)")
        elif v in ("minimum", "maximum"):
            out.append(f"{at}: must be {'at least' if v == 'minimum' else 'at most'} {e.validator_value}")
        elif v in ("minLength", "minItems"):
            out.append(f"{at}: must not be empty")
        elif v in ("maxLength", "maxItems"):
            out.append(f"{at}: too long (at most {e.validator_value})")
        elif v == "uniqueItems":
            out.append(f"{at}: lists a value twice")
        else:
            out.append(f"{at}: not valid here")
    return out


def _order_problems(phases: list[dict]) -> list[str]:
    out = []
    for i, p in enumerate(phases):
        if p["end"] < p["start"]:
            out.append(f"/phases/{i}: ends ({p['end']}) before it starts ({p['start']})")
        elif p["end"] == p["start"]:
            out.append(f"/phases/{i}: ends when it starts ({p['start']}); give it a later end")
        if i and p["start"] < phases[i - 1]["end"]:
            out.append(f"/phases/{i}: starts ({p['start']}) before phase {phases[i - 1]['name']!r} ends "
                       f"({phases[i - 1]['end']}); phases follow one another")
        elif i and p["start"] == phases[i - 1]["end"]:
            # the usual hand-over on a platform, but an end is the phase's last moment (a bare end date its last
            # second): a run graded at that instant would be in both phases
            later = iso(_dt.datetime.fromisoformat(p["start"].replace("Z", "+00:00")) + _dt.timedelta(seconds=1))
            out.append(f"/phases/{i}: starts when phase {phases[i - 1]['name']!r} ends ({p['start']}), and a "
                       f"phase's end is its last moment (a run graded then would be in both); start it at {later}")
    return out


# ---- what the challenge decides -------------------------------------------------------------------------------
def check_splits(ch: Challenge, known: list[str], where: str = "challenge.toml") -> None:
    """Every split a phase names is one of the data's (a typo would leave a test split public)."""
    for i, p in enumerate(ch.phases):
        for s in p.splits or []:
            if known and s not in known:
                raise UsageError(f"{where}: /phases/{i}/splits: {s[:40]!r} is not a split of the data "
                                 f"(it has: {', '.join(known)})")


def hidden_splits(ch: Challenge | None, at: str, reveal: bool) -> set[str]:
    """The splits a hidden phase keeps off the public site at time ``at``: until its end always, after it until
    ``reveal``. ``reveal`` before a hidden phase has ended is a usage error (nothing would be revealed early)."""
    if ch is None:
        return set()
    out: set[str] = set()
    for p in ch.phases:
        if not p.hidden:
            continue
        if at < p.end:
            if reveal:
                raise UsageError(f"--reveal: phase {p.name!r} ends {p.end} (now {at}); its splits stay hidden "
                                 "until then")
            out.update(p.splits or [])
        elif not reveal:
            out.update(p.splits or [])
    return out


def paragraphs(text: str) -> list[str]:
    """Plain text split at blank lines, each paragraph's lines joined (the pages show text, never markup)."""
    return [" ".join(line.strip() for line in block.splitlines()) for block in re.split(r"\n\s*\n", text or "")
            if block.strip()]


def submit_commands(ch: Challenge, version: str) -> list[str]:
    """The exact commands a team runs before sending a run: the pinned scorer, then the same checks grading makes.

    The scorer is the wheel published beside the instructions (:mod:`dialeval.leaderboard.own_wheel`), never
    ``dialeval==VERSION``: dialeval is not on PyPI, where that name would fetch nothing, or a stranger's package."""
    from dialeval.leaderboard.own_wheel import wheel_name

    return [
        f"pip install ./{wheel_name(version)}",
        "dialeval --version",
        f"dialeval validate RUN --benchmark {ch.benchmark} --data DATA",
    ]
