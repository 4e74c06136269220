"""Ridgeline from Python: each command of the ridgeline executable as a function.

    import ridgeline
    report = ridgeline.train(model="llama3-70b", hardware="tpu-v5p", chips=512, fsdp=64, tp=8)

Keyword arguments are the command's flags (``--global-batch-tokens`` is ``global_batch_tokens``;
positionals by their name, e.g. ``validate(file=...)``); a function returns the dictionary the
command's ``--json`` prints. Bad input raises ``ridgeline.InputError`` with the command line's
message; an unknown keyword raises ``TypeError``. Each function's docstring is the command's
``--help``.
"""
import functools
import json

from . import _core

__all__ = ["InputError", "model", "roofline", "collective", "topology", "train", "serve", "search_train", "search_serve",
           "validate", "calibrate"]


class InputError(ValueError):
    """Bad input: a file, a name, a flag or a plan the command refuses (the CLI's exit code 2)."""


def _key(name):
    return name.replace("-", "_")


def _text(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError("%s: expected a number or text, found %s" % (name, type(value).__name__))
    return repr(value) if isinstance(value, float) else str(value)


@functools.lru_cache(maxsize=None)
def _options(path):
    """The command's flags by keyword (asked of the command tree once per command)."""
    return {_key(name): (name, kind, most, repeats) for name, kind, most, repeats in _core.options(list(path))}


def _arguments(function, path, kwargs):
    options = _options(tuple(path))
    unknown = sorted(k for k in kwargs if k not in options)
    if unknown:
        raise TypeError("%s() got unexpected keyword argument%s %s (it takes: %s)" % (
            function, "s" if len(unknown) > 1 else "", ", ".join(unknown), ", ".join(sorted(options))))
    args, positionals = list(path), []
    for key, value in kwargs.items():
        name, kind, most, repeats = options[key]
        flag = "--" + name
        if value is None:
            continue
        if kind in ("flag", "switch"):
            if not isinstance(value, bool):
                raise InputError("%s: expected True or False, found %r" % (key, value))
            if kind == "flag":
                args += [flag] if value else []
            else:
                args += [flag, "on" if value else "off"]
            continue
        if isinstance(value, (list, tuple)):
            items = [_text(key, item) for item in value]
            if repeats:  # a flag given once per value (--set)
                args += [part for item in items for part in (flag, item)]
                continue
            texts = items if most > 1 else [",".join(items)]  # several values, or one comma-separated list
        else:
            texts = [_text(key, value)]
        if kind == "positional":
            positionals += texts
        else:
            args += [flag] + texts
    return args + positionals, options


def _command(function, path):
    def call(**kwargs):
        args, options = _arguments(function, path, kwargs)
        # The JSON document, where the command prints one (calibrate: with validate=True).
        wants_json = "json" in options and "json" not in kwargs and (path != ["calibrate"] or kwargs.get("validate"))
        if wants_json:
            args.append("--json")
        code, out, error = _core.run(args)
        if code == 2:
            raise InputError(error)
        if code != 0:
            raise RuntimeError(error)
        text = out.decode("utf-8")
        return json.loads(text) if wants_json or kwargs.get("json") else text

    call.__name__ = function
    call.__qualname__ = function
    call.__doc__ = _core.help(path)
    return call


model = _command("model", ["model"])
roofline = _command("roofline", ["roofline"])
collective = _command("collective", ["collective"])
topology = _command("topology", ["topology"])
train = _command("train", ["train"])
serve = _command("serve", ["serve"])
search_train = _command("search_train", ["search", "train"])
search_serve = _command("search_serve", ["search", "serve"])
validate = _command("validate", ["validate"])
calibrate = _command("calibrate", ["calibrate"])
