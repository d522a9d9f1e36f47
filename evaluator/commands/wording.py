"""Click's own error wording replaced by dialeval's: every usage error is one line ``dialeval: error: ...``.

Click words a bad value its own way ("Invalid value for 'FILE': File 'x' does not exist.", "'x' is not a valid
integer range.", "No such option '--frob'."). :func:`reword` gives each command's parameters types that say
what is wrong as the rest of dialeval does (``x: no such file``, ``--jobs: must be a whole number, got 'x'``,
did-you-mean for a choice; a dialeval usage error, the value named), once when the command is loaded;
:func:`message` words the errors Click raises before any value is converted (an unknown option or command, a
missing argument, an option without its value: these keep the pointer to ``--help``).
"""

from __future__ import annotations

import copy
import os
import re

import click

from dialeval.core.errors import UsageError, did_you_mean
from dialeval.core.termsafe import safe


def _name(param) -> str:
    """How a message names a parameter: an option by its flag (``--jobs``), an argument by its metavar (``FILE``)."""
    if param is None:
        return "value"
    if getattr(param, "param_type_name", "") == "option" and param.opts:
        return max(param.opts, key=len)
    return param.human_readable_name


def _shown(value) -> str:
    return safe(os.fsdecode(value) if isinstance(value, bytes | os.PathLike) else str(value))


class _Path(click.Path):
    """Refusals said as every other dialeval message is ("--out x: is a directory, not a file"), not in Click's
    words ("Invalid value for '--out': File 'x' is a directory.", where "Directory 'x' is a file" left a newcomer
    guessing which was wrong)."""

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            pass
        path = os.fsdecode(value)
        if os.path.islink(path) and not os.path.exists(path):
            why = "is a symbolic link to nothing"
        elif not os.path.lexists(path):
            why = "no such folder" if not self.file_okay else "no such file" if not self.dir_okay else \
                "no such file or folder"
        elif os.path.isdir(path) and not self.dir_okay:
            why = "is a directory, not a file"
        elif not os.path.isdir(path) and not self.file_okay:
            why = "is a file, not a folder"
            if path.endswith(".toml") and ctx is not None and any(p.name == "challenge_file" for p in ctx.command.params):
                why += " (a challenge.toml is given with --challenge-file; --challenge names the data folder)"
        else:
            why = "cannot use it (permission denied)"
        # an argument's value is a file name that says itself; an option's is named with its flag
        named = f"{_name(param)} {safe(path)}" if isinstance(param, click.Option) else safe(path)
        raise UsageError(f"{named}: {why}") from None


class _Choice(click.Choice):
    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            pass
        choices = [str(c) for c in self.choices]
        hint = did_you_mean(str(value), choices)
        raise UsageError(f"{_name(param)}: unknown value {_shown(value)[:60]!r}"
                         f"{hint or ' (one of: ' + ', '.join(choices) + ')'}") from None


def _range(t) -> str:
    """``at least 0``, ``from 1 to 5``, ``more than 0``: the values a range type accepts."""
    if t.min is not None and t.max is not None and not t.min_open and not t.max_open:
        return f"from {t.min} to {t.max}"
    parts = []
    if t.min is not None:
        parts.append(f"{'more than' if t.min_open else 'at least'} {t.min}")
    if t.max is not None:
        parts.append(f"{'less than' if t.max_open else 'at most'} {t.max}")
    return " and ".join(parts)


def _number_convert(base, whole: bool):
    """``convert`` of Click's number type ``base`` in dialeval's wording (whole numbers or any number)."""

    def convert(self, value, param, ctx):
        try:
            return base.convert(self, value, param, ctx)
        except click.BadParameter:
            pass
        try:
            number = (int if whole else float)(value)
        except (TypeError, ValueError):
            raise UsageError(f"{_name(param)}: must be {'a whole number' if whole else 'a number'}, "
                             f"got {_shown(value)[:60]!r}") from None
        raise UsageError(f"{_name(param)}: must be {_range(self)}, got {number}") from None

    return convert


# one class each, not a mixin: a copy of Click's instance takes on the class, which needs the same layout
class _Int(click.types.IntParamType):
    convert = _number_convert(click.types.IntParamType, whole=True)


class _IntRange(click.IntRange):
    convert = _number_convert(click.IntRange, whole=True)


class _Float(click.types.FloatParamType):
    convert = _number_convert(click.types.FloatParamType, whole=False)


class _FloatRange(click.FloatRange):
    convert = _number_convert(click.FloatRange, whole=False)


class Group(click.Group):
    """A sub-command group that names an unknown sub-command the way dialeval names unknown things."""

    def resolve_command(self, ctx, args):
        name = click.utils.make_str(args[0]) if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            known = self.list_commands(ctx)
            raise click.UsageError(f"unknown command {_shown(name)[:60]!r}{did_you_mean(name, known)} "
                                   f"(commands: {', '.join(known)})", ctx)
        return super().resolve_command(ctx, args)


_OWN = {click.Path: _Path, click.Choice: _Choice, click.types.IntParamType: _Int, click.IntRange: _IntRange,
        click.types.FloatParamType: _Float, click.FloatRange: _FloatRange}


def reword(command) -> None:
    """Give ``command``'s parameters (and its sub-commands', a group's) the types above: a copy of each type with
    the same settings, so Click's shared instances (``click.INT``) stay as they are."""
    for param in command.params:
        own = _OWN.get(type(param.type))
        if own is not None:
            param.type = copy.copy(param.type)
            param.type.__class__ = own
    if isinstance(command, click.Group):
        if type(command) is click.Group:
            command.__class__ = Group
        for sub in command.commands.values():
            reword(sub)


def message(e: click.ClickException) -> str:
    """The one-line text of a Click error, in dialeval's wording where Click has its own."""
    ctx = getattr(e, "ctx", None)
    if isinstance(e, click.NoSuchOption):
        flags = [o for p in (ctx.command.params if ctx is not None else []) for o in (*p.opts, *p.secondary_opts)
                 if o.startswith("-")]
        return f"unknown option {_shown(e.option_name)[:60]}{did_you_mean(e.option_name, flags)}"
    if isinstance(e, click.BadOptionUsage):
        if "does not take a value" in e.message:
            return f"{e.option_name} takes no value"
        return f"{e.option_name} needs a value"
    if isinstance(e, click.MissingParameter) and e.param is not None:
        return f"missing {e.param.param_type_name} {_name(e.param)}"
    if isinstance(e, click.BadParameter):  # a type not reworded above (a boolean's): its name, then Click's text
        return f"{_name(e.param)}: {e.message}"
    extra = re.fullmatch(r"Got unexpected extra argument(s?) \((.*)\)", e.format_message())
    if extra:
        return f"unexpected argument{extra.group(1)}: {extra.group(2)}"
    return e.format_message()
