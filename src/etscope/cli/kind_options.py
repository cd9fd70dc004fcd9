"""The input-kind options of the commands, made from the registry of input kinds (``formats.kinds``):
``@kind_options("qnn")`` gives the command every kind whose option names it (``--qhas``,
``--qnn-csv``, ``--runtrace``, ...), with the registry's flag, help and repeatability.

A command takes a kind it handles itself by naming the kind's parameter (``qnn_heap``); every other
kind of its options comes in ``given`` (a :class:`Given`: kind name -> path, or paths for a
repeatable kind), which the command hands on to the readers by name (``etscope.inputs``). So a kind
added to the registry reaches the command without an edit here or in the command.

``@side_options("diff")`` gives a command that reads two runs a kind's option once per side
(``--runtrace-base``/``--runtrace-new``; the command names each). The usage errors that list what a
command reads take the flags from here too (``kind_flags``, ``Given.flags``).
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping

import click

from etscope.formats.kinds import options_of, side_flags_of


class Given(Mapping):
    """The input-kind options a command was given and reads by name through the registry: kind
    name -> path (a tuple of paths for a repeatable kind); kinds not given are left out."""

    def __init__(self, values: dict, flags: tuple[str, ...] = ()):
        self._values = {k: v for k, v in values.items() if v not in (None, (), [])}
        self.flags = flags      # the options of the kinds it stands for, given or not (for usage errors)

    def __getitem__(self, name):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def paths(self) -> list:
        """Every file path given (pins ``METHOD:INSTR=FILE`` split): checked before any work."""
        from etscope.inputs import given_paths

        return given_paths(self)


def kind_options(command: str):
    """The click options of the registry's kinds that ``command`` takes; the decorated function
    gets the kinds it names as parameters by name, the others in ``given`` (see the module doc)."""
    kinds = options_of(command)

    def decorate(f):
        params = inspect.signature(f).parameters
        named = {k.name for k in kinds if k.option.param in params}
        rest = [k for k in kinds if k.name not in named]
        if rest and "given" not in params:
            raise TypeError(f"{f.__name__} takes {', '.join(k.option.flag for k in rest)} but neither names them "
                            "nor takes 'given'")

        @functools.wraps(f)
        def command_function(*args, **kwargs):
            values = {k.name: kwargs.pop(k.option.param) for k in kinds}
            kwargs.update({k.option.param: values[k.name] for k in kinds if k.name in named})
            if "given" in params:
                kwargs.update(given=Given({k.name: values[k.name] for k in rest}, tuple(k.option.flag for k in rest)))
            return f(*args, **kwargs)

        for k in reversed(kinds):
            command_function = click.option(k.option.flag, k.option.param, type=str, multiple=k.option.multiple,
                                            help=k.option.help)(command_function)
        return command_function
    return decorate


def kind_flags(command: str) -> tuple[str, ...]:
    """The flags of the registry's kinds ``command`` takes, in registry order (``--qhas``, ...)."""
    return tuple(k.option.flag for k in options_of(command))


def side_options(command: str):
    """The click options of the registry's kinds ``command`` reads once per side of the two runs
    (``formats.kinds.SIDES``): ``--runtrace-base``, ``--runtrace-new``. The decorated function names
    each parameter (what a side's file means there is the command's to say)."""
    flags = side_flags_of(command)

    def decorate(f):
        params = inspect.signature(f).parameters
        missing = [s.flag for s in flags if s.param not in params]
        if missing:
            raise TypeError(f"{f.__name__} takes {', '.join(missing)} but does not name them")
        for s in reversed(flags):
            f = click.option(s.flag, s.param, type=str, multiple=s.kind.option.multiple, help=s.help)(f)
        return f
    return decorate
