"""``dialeval data``: the known public releases of the benchmark data — list, verify a folder, fetch one.

Only this command layer knows where fetched releases live: ``<user cache>/releases/<name>`` (the cache root of
:func:`dialeval.files.cache.cache_root`, ``$DIALEVAL_CACHE_DIR`` when set). ``--data NAME`` of ``score``,
``validate``, ``grade`` and ``reproduce`` resolves a release name there (:func:`resolve_release`), and
``--data sample:NAME`` dialeval's sample data for benchmark NAME (:func:`resolve_sample`; ``data sample`` copies
one out). Every folder of the installed samples (:func:`dialeval.core.resources.samples_dir`) is a sample.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import click

from dialeval.core.errors import UsageError, did_you_mean
from dialeval.core.termsafe import print_table, safe, table_console
from dialeval.files.write import not_standard_output

MAX_VERIFY_FILES = 100_000
MAX_VERIFY_DEPTH = 6
IGNORED = ("__MACOSX", ".DS_Store", "Thumbs.db")


def releases_root() -> Path:
    """Where ``data fetch`` puts releases by default: ``<user cache>/releases``."""
    from dialeval.files.cache import cache_root

    return cache_root() / "releases"


def resolve_release(name: str, benchmark: str) -> Path | None:
    """The data folder of release ``name`` for ``--data NAME``; None when ``name`` is no known release.

    A known release that is not fetched is a usage error naming the command that fetches it.
    """
    from dialeval.files.fetch import installed, no_archive
    from dialeval.files.releases import registry

    rel = registry().get(name)
    if rel is None:
        return None
    if rel.benchmark != benchmark:
        raise UsageError(f"--data {name} is the {rel.benchmark} release: add --benchmark {rel.benchmark}")
    found = installed(rel, releases_root())
    if found is not None:
        return found
    if not rel.archives:
        raise UsageError(no_archive(rel))
    raise UsageError(f"release {name} is not fetched yet: run `dialeval data fetch {name}`")


SAMPLE_PREFIX = "sample:"
MAX_SAMPLE_FILE_BYTES = 16 * 1024**2
"""Samples are a few kilobytes a file: anything far larger in the samples folder is not one of them."""


def samples() -> dict[str, Path]:
    """Benchmark name -> its sample data folder (every folder of the installed samples is one)."""
    from dialeval.core.resources import samples_dir

    root = samples_dir()
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if p.is_dir() and not p.name.startswith((".", "_"))}


def resolve_sample(spec: str, benchmark: str, flag: str = "--data") -> Path:
    """The folder of ``sample:NAME`` (``sample:`` alone: the benchmark's own); a usage error when there is no
    such sample or it is another benchmark's (``flag``: the option it came from, which the message names)."""
    name = spec[len(SAMPLE_PREFIX):] or benchmark
    found = samples()
    if name not in found:
        raise UsageError(f"no sample data named {name[:60]!r}{did_you_mean(name, found)} (samples: "
                         f"{', '.join(found) or 'none'})")
    if name != benchmark and flag != "--data":  # --challenge: a command of one benchmark, no --benchmark to add
        raise UsageError(f"{flag} {SAMPLE_PREFIX}{name} is the {name} sample; {flag} takes {benchmark} data "
                         f"({flag} {SAMPLE_PREFIX}{benchmark} is its sample)")
    if name != benchmark:
        raise UsageError(f"--data {SAMPLE_PREFIX}{name} is the {name} sample: add --benchmark {name}")
    return found[name]


def sample_info(folder: Path) -> dict:
    """A sample's ``sample.json`` (split to try, example run, a note); {} when it has none or it is unreadable."""
    from dialeval.formats.jsonio import load_json_file

    try:
        info = load_json_file(folder / "sample.json")
    except Exception:  # a sample without its manifest is still data; the test suite requires one
        return {}
    return info if isinstance(info, dict) else {}


@click.group("data")
def data_group():
    """The published releases of the benchmark data: list them, verify a copy, fetch one into the user cache."""


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)


def _walk(folder: Path):
    """Regular files under ``folder`` (links, special files, hidden and macOS debris skipped), bounded."""
    count = 0
    stack = [(folder, 0)]
    while stack:
        d, depth = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if e.name.startswith(".") or e.name in IGNORED or e.name.startswith("._"):
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 < MAX_VERIFY_DEPTH:
                    stack.append((Path(e.path), depth + 1))
            elif stat.S_ISREG(st.st_mode):
                count += 1
                if count > MAX_VERIFY_FILES:
                    raise UsageError(f"{folder}: more than {MAX_VERIFY_FILES} files; give the release's own folder")
                yield Path(e.path), st.st_size


def _holds(release, folder: Path) -> tuple[bool, int]:
    """Whether ``folder`` holds files of ``release`` (by name, or its marker), and their total size."""
    names = {f.name for f in release.files}
    size = 0
    found = False
    if not folder.is_dir():
        return False, 0
    for p, n in _walk(folder):
        if p.name in names:
            found = True
            size += n
    if not names and (folder / release.marker).exists():
        found = True
        size = sum(n for _, n in _walk(folder))
    return found, size


@data_group.command("list")
@click.option("--in", "folder", type=click.Path(file_okay=False), default=None,
              help="Also look for each release in this folder (FOLDER/<release name>, or FOLDER itself).")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def list_cmd(folder, as_json):
    """The known releases: benchmark, splits, whether a copy is in the cache (or in --in FOLDER), its size."""
    import json

    from dialeval.files.fetch import installed
    from dialeval.files.releases import registry

    reg = registry()
    root = releases_root()
    rows = []
    for rel in reg.releases.values():
        where, size = None, 0
        cached = installed(rel, root)
        if cached is not None:
            where, size = str(cached), _holds(rel, cached)[1]
        elif folder:
            for cand in (Path(folder) / rel.name, Path(folder)):
                ok, n = _holds(rel, cand)
                if ok:
                    where, size = str(cand), n
                    break
        rows.append({"release": rel.name, "benchmark": rel.benchmark, "title": rel.title, "splits": rel.splits,
                     "files_known": len(rel.files), "archives": [a.url for a in rel.archives],
                     "present": where, "size": size if where else None, "cached": cached is not None})
    if as_json:
        click.echo(json.dumps({"cache": str(root), "releases": rows}, indent=2))
        return 0
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="known releases", title_justify="left")
    for col in ("release", "benchmark", "splits", "files hashed", "present", "size", "source"):
        table.add_column(col, justify="right" if col in ("files hashed", "size") else "left",
                         no_wrap=col in ("release", "benchmark", "size"), overflow="fold")
    for r in rows:
        source = "public archive" if r["archives"] else "organizers only"
        present = ("cache: " if r["cached"] else "") + r["present"] if r["present"] else "-"
        table.add_row(r["release"], r["benchmark"], " ".join(r["splits"]) or "-", str(r["files_known"]),
                      escape(present), _size(r["size"]) if r["size"] is not None else "-", source)
    console = table_console()
    print_table(console, table)
    console.print(f"cache: {escape(str(root))} (dialeval data fetch NAME; dialeval data verify DIR checks content)",
                  soft_wrap=True)
    return 0


@data_group.command("verify")
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the result per file as JSON.")
@click.option("--all", "show_all", is_flag=True,
              help="List every file: unknown ones too (by default only counted); in a sample folder, matching ones too.")
def verify_cmd(folder, as_json, show_all):
    """Check every file under FOLDER against the published releases: matches, modified or unknown.

    A file is recognised by name and sha256. Exit 0 when nothing is modified, 1 when a file carries a published
    name with other content (numbers on it are not comparable with published ones), 2 on usage errors. A folder
    of dialeval's sample data (it holds sample.json; sample:NAME is the shipped one) is compared with the shipped
    sample instead (exit 0).
    """
    import json

    from dialeval.files.read import file_sha256
    from dialeval.files.releases import registry

    root = Path(folder)
    if not root.exists() and folder.startswith(SAMPLE_PREFIX):  # addressed as --data addresses it
        root = resolve_sample(folder, folder[len(SAMPLE_PREFIX):])
    if not root.is_dir():
        raise UsageError(f"{folder}: {'not a folder' if root.exists() else 'no such folder'}")
    if (root / "sample.json").is_file():  # dialeval's constructed data, whatever release names its files carry
        return _verify_sample(root, as_json, show_all)
    reg = registry()
    checks = []
    files = list(_walk(root))
    if not files and not as_json:  # an empty table and exit 0 would read as "verified"
        raise UsageError(f"{safe(folder)}: holds no regular file to check (links and special files are not followed)")
    for path, _size_bytes in files:
        rel = path.relative_to(root).as_posix()
        unhashed = reg.check(path.name, "")
        if unhashed.status == "unknown":  # a name no release has: nothing to hash
            checks.append((rel, unhashed))
            continue
        checks.append((rel, reg.check(path.name, file_sha256(path, shown=rel))))
    counts = {s: sum(1 for _, c in checks if c.status == s) for s in ("match", "modified", "unknown")}
    row_checks = _row_checks(root, [r for r, _ in checks], reg)
    per_release: dict[str, list[int]] = {}
    for _, c in checks:
        if c.release:
            per_release.setdefault(c.release, [0, 0])[0 if c.status == "match" else 1] += 1
    if checks and counts["unknown"] == len(checks) and not row_checks and not show_all and not as_json:
        # an empty table and exit 0 would read as "verified": say that nothing here is a release file
        raise UsageError(f"{safe(folder)}: none of its {len(checks)} file(s) is a file of a published release (is it "
                         "the data folder? `dialeval data list` shows the releases; --all lists the files)")
    if as_json:
        click.echo(json.dumps({
            "folder": str(root), "counts": counts,
            "files": [{"file": r, "status": c.status, "release": c.release, "split": c.split, "sha256": c.sha256 or None,
                       "published_sha256": c.expected} for r, c in checks],
            "releases": {k: {"match": v[0], "modified": v[1], "published_files": len(reg.releases[k].files)}
                         for k, v in per_release.items() if k in reg.releases},
            "rows": [{"file": r, "release": rel, "rows": n, "published_rows": want} for r, rel, n, want in row_checks],
        }, indent=2))
    else:
        from rich.markup import escape
        from rich.table import Table

        console = table_console()
        table = Table(title=f"{escape(str(root))}", title_justify="left")
        for col in ("file", "status", "release", "split"):
            table.add_column(col, overflow="fold", no_wrap=col != "file")
        styles = {"match": "green", "modified": "bold red", "unknown": "dim"}
        for r, c in checks:
            if c.status == "unknown" and not show_all:
                continue
            status = c.status if c.status != "match" else "matches"
            table.add_row(escape(safe(r)), f"[{styles[c.status]}]{status}[/]", c.release or "-", c.split or "-")
        print_table(console, table)
        for name, (ok, bad) in sorted(per_release.items()):
            total = len(reg.releases[name].files) if name in reg.releases else ok + bad
            verdict = "the published release" if not bad else f"MODIFIED ({bad} file(s) differ)"
            console.print(f"{name}: {ok} of {total} published files present and matching; {verdict}", soft_wrap=True)
        console.print(f"{counts['match']} matching, {counts['modified']} modified, {counts['unknown']} unknown"
                      + ("" if show_all or not counts["unknown"] else " (--all lists them)"), soft_wrap=True)
        for r, rel, n, want in row_checks:  # no sha256 is published for these: the row count is the check
            verdict = "as published" if n == want else f"the published one has {want:,}: not that release"
            console.print(f"{rel}: {escape(safe(r))} has {n:,} data rows, {verdict}", soft_wrap=True)
    for r, c in checks:
        if c.status == "modified":
            click.echo(f"dialeval: warning: {safe(r)} differs from the published {c.release} release: numbers on it "
                       "are not comparable with published ones", err=True)
    for r, rel, n, want in row_checks:
        if n != want:
            click.echo(f"dialeval: warning: {safe(r)} has {n:,} data rows, the published {rel} one {want:,}: numbers "
                       "on it are not comparable with published ones", err=True)
    return 1 if counts["modified"] or any(n != want for _, _, n, want in row_checks) else 0


def _row_checks(root: Path, names: list[str], reg) -> list[tuple[str, str, int, int]]:
    """``(file, release, data rows, published rows)`` for each file whose name a release lists with a row count but
    no sha256 (Ubuntu v2's CSVs: releases.md gives their sizes). A file of another layout is not counted."""
    from dialeval.core.errors import DialevalError
    from dialeval.formats.ubuntu import eval_rows_and_case

    published = {name: (r.name, n) for r in reg.releases.values() if r.benchmark == "ubuntu" for name, n in r.rows}
    out = []
    for rel in names:
        name = rel.rpartition("/")[2]
        if name in published:
            try:
                out.append((rel, published[name][0], eval_rows_and_case(root / rel)[0], published[name][1]))
            except DialevalError:  # not Ubuntu's evaluation CSV layout: another benchmark's file of that name
                continue
    return out


def _verify_sample(root: Path, as_json: bool, show_all: bool = False) -> int:
    """A folder marked by ``sample.json`` (a sample, in place or copied out by ``data sample --out``) is compared
    with the shipped sample it names, file by file: never with a release, whose names its files borrow. A file
    that differs is always listed; ``show_all`` lists the matching ones too."""
    import json

    from dialeval.files.read import file_sha256

    name = str(sample_info(root).get("benchmark", ""))
    shipped = samples().get(name)
    files = [(path.relative_to(root).as_posix(), path) for path, _size_bytes in _walk(root)]
    status = {}
    for rel, path in files:
        twin = shipped / rel if shipped is not None else None
        if twin is None or not twin.is_file():
            status[rel] = "unknown"
        else:
            same = file_sha256(path, shown=rel) == file_sha256(twin, shown=rel)
            status[rel] = "matches" if same else "changed"
    counts = {s: sum(1 for v in status.values() if v == s) for s in ("matches", "changed", "unknown")}
    what = (f"dialeval's {name} sample data (constructed, not a release), compared with the shipped sample"
            if shipped is not None else "marked as dialeval sample data (sample.json) for no known sample")
    if as_json:
        click.echo(json.dumps({"folder": str(root), "sample": name if shipped is not None else None,
                               "counts": counts, "files": [{"file": r, "status": v} for r, v in status.items()]},
                              indent=2))
        return 0
    for rel, v in status.items():
        if show_all or v != "matches":
            click.echo(f"{safe(rel)}: {v}")
    table_console().print(f"{safe(str(root))}: {what}: {counts['matches']} file(s) match, {counts['changed']} "
                          f"changed, {counts['unknown']} not in it", soft_wrap=True, markup=False)
    return 0


@data_group.command("sample")
@click.argument("name", required=False)
@click.option("--out", type=click.Path(file_okay=False), default=None, callback=not_standard_output,
              help="Copy the sample into this new or empty folder (default: ./<name>-sample).")
def sample_cmd(name, out):
    """List dialeval's sample data (small constructed data for every benchmark), or copy sample NAME out.

    Any command's --data sample:NAME uses a sample in place; copy one to look at or change its files.
    """
    found = samples()
    if name is None and out is not None:  # never silently ignored: --out copies one sample, which needs its name
        raise UsageError(f"--out {safe(out)}: name the sample to copy (dialeval data sample NAME --out DIR; samples: "
                         f"{', '.join(found) or 'none'})")
    if name is None:
        for n, folder in found.items():
            info = sample_info(folder)
            click.echo(f"{n:<14} split {info.get('split', '-'):<8} {info.get('note', '')}")
        click.echo(f"({len(found)} samples in {safe(str(next(iter(found.values())).parent)) if found else '-'}; "
                   "use --data sample:NAME, or dialeval data sample NAME to copy one)")
        return 0
    folder = resolve_sample(SAMPLE_PREFIX + name, name)
    dest = Path(out or f"{name}-sample")
    root = Path(os.path.realpath(folder.parent))
    if root == Path(os.path.realpath(dest)) or root in Path(os.path.realpath(dest)).parents:
        raise UsageError(f"--out {safe(str(dest))}: inside dialeval's own samples folder, where a copy would be "
                         "listed as one more sample; give a folder elsewhere")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise UsageError(f"{dest}: exists and is not an empty folder (give --out NEW_FOLDER)")
    _copy_tree(folder, dest)
    info = sample_info(folder)
    click.echo(f"wrote the {name} sample to {safe(str(dest))}")
    if info.get("example_run") and info.get("split"):
        click.echo(f"try: dialeval score {safe(str(dest / info['example_run']))} --benchmark {name} --data "
                   f"{safe(str(dest))} --split {info['split']}")
    return 0


def _copy_tree(src: Path, dest: Path) -> None:
    """Copy a sample folder's regular files (read through the input layer; links and special files are skipped)
    into a private temporary folder beside ``dest`` that is then renamed into place (nothing half-written)."""
    import shutil
    import tempfile

    from dialeval.files.read import read_bytes
    from dialeval.files.write import cannot_create

    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    except OSError as e:
        raise cannot_create(dest, e) from None
    try:
        for path, _ in _walk(src):
            target = tmp / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(read_bytes(path, what="a sample data file", limit=MAX_SAMPLE_FILE_BYTES))
        tmp.chmod(0o777 & ~_umask())
        if dest.exists():
            dest.rmdir()
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class _Bar:
    """A rich progress bar with the interface pooch's downloader drives (``total``, ``update``, ``reset``,
    ``close``)."""

    def __init__(self, name: str):
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                                  TransferSpeedColumn(), TimeRemainingColumn(), transient=False,
                                  console=_stderr_console())
        self._task = self._progress.add_task(name, total=None)
        self._progress.start()
        self._total = 0

    @property
    def total(self):
        return self._total

    @total.setter
    def total(self, value):
        self._total = value or 0
        self._progress.update(self._task, total=value or None)

    def update(self, n):
        self._progress.advance(self._task, n)

    def reset(self):
        self._progress.reset(self._task, total=self._total or None)

    def close(self):
        self._progress.stop()


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


@data_group.command("fetch")
@click.argument("name")
@click.option("--to", "dest", type=click.Path(file_okay=False), default=None, metavar="DEST",
              help="Put the release in DEST/<name> instead of the user cache.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def fetch_cmd(name, dest, quiet):
    """Download release NAME, check its sha256, unpack it safely and place it in the user cache (or --to DEST).

    Prints the data folder to pass as --data (or give --data NAME). A second fetch at the same time waits for
    the first; a fetch that fails or is killed leaves nothing that is used. Timeout: $DIALEVAL_FETCH_TIMEOUT s.
    """
    from dialeval.files.fetch import fetch
    from dialeval.files.releases import registry

    reg = registry()
    rel = reg.get(name)
    if rel is None:
        raise UsageError(f"no release named {name[:60]!r} (known: {', '.join(reg.names())})")
    root = Path(dest) if dest else releases_root()
    # the project's progress convention (core.termsafe): a terminal only, and never with DIALEVAL_NO_PROGRESS or TERM=dumb
    show_bar = not quiet and sys.stderr.isatty() and not os.environ.get("DIALEVAL_NO_PROGRESS") \
        and os.environ.get("TERM") != "dumb"

    def say(text: str) -> None:
        if not quiet:
            click.echo(f"dialeval: {safe(text)}", err=True)

    folder, downloaded = fetch(rel, root, progress=(lambda total, fname: _Bar(fname)) if show_bar else None,
                               say=say)
    if downloaded:
        say(f"{name}: checked and unpacked into {folder}")
    else:
        say(f"{name}: already fetched")
    click.echo(str(folder))
    return 0
