"""Loading a model the ways researchers keep one, into memory only: the
file is read once and never written, and what the dump runs works on deep
copies of what was loaded, so the checkpoint's buffers never move.

  a whole pickled model    torch.save(model, FILE); its class must be
                           importable (the file's folder and --source
                           folders are put on sys.path)
  a state_dict             torch.save(model.state_dict(), FILE), or a dict
                           holding one under "state_dict",
                           "model_state_dict" or "model"; with --module
                           package.module:Class and the constructor's
                           arguments as JSON
  TorchScript              torch.jit.save: the buffers and settings are
                           read, but a ScriptModule takes no forward hooks,
                           so no layer input can be recorded

A checkpoint whose weights or buffers hold NaN or infinities (training
diverged) is refused by name: every pass, the fixes' scores and the
statistics would be NaN, which diagnose reads as no evidence at all.
"""

import importlib
import json
import os
import sys
import zipfile

import torch


class LoadError(Exception):
    """A message naming the file or option, for an exit status of 2."""


def _is_torchscript(path):
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as z:
        return any(n.split("/", 1)[-1].startswith(("constants.pkl", "code/"))
                   for n in z.namelist())


def _state_dict(obj, path):
    if isinstance(obj, dict):
        for key in ("state_dict", "model_state_dict", "model"):
            if isinstance(obj.get(key), dict):
                return obj[key]
        if all(isinstance(v, torch.Tensor) for v in obj.values()):
            return obj
    raise LoadError("%s: --module needs a state_dict (a dict of tensors, or "
                    "one under 'state_dict', 'model_state_dict' or 'model'); "
                    "this file holds a %s" % (path, type(obj).__name__))


def _class(spec):
    mod_name, sep, cls_name = spec.partition(":")
    if not sep or not mod_name or not cls_name:
        raise LoadError("--module: '%s' is not package.module:Class" % spec)
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise LoadError("--module: cannot import %s (%s); --source DIR puts "
                        "its folder on the path" % (mod_name, e))
    cls = getattr(mod, cls_name, None)
    if cls is None:
        raise LoadError("--module: %s has no %s" % (mod_name, cls_name))
    return cls


def _construct(cls, spec, args_json):
    args, kwargs = [], {}
    if args_json:
        try:
            a = json.loads(args_json)
        except ValueError as e:
            raise LoadError("--module-args: not JSON: %s" % e)
        if isinstance(a, list):
            args = a
        elif isinstance(a, dict):
            kwargs = a
        else:
            raise LoadError("--module-args: a JSON list or object, not %s"
                            % type(a).__name__)
    try:
        return cls(*args, **kwargs)
    except TypeError as e:
        raise LoadError("--module %s: the constructor refused the arguments "
                        "(%s); give them with --module-args" % (spec, e))


def finite(model, path):
    """Refuses a model whose first non-finite parameter or buffer (in
    state_dict order) says training diverged, naming the file and it."""
    for name, t in model.state_dict().items():
        if not (t.is_floating_point() or t.is_complex()):
            continue
        bad = int((~torch.isfinite(t)).sum())
        if bad:
            raise LoadError(
                "%s: %s holds %d non-finite value%s (NaN or infinite) of %d: "
                "training diverged before this checkpoint, so nothing in it "
                "can be diagnosed; dump one saved before the loss went "
                "NaN" % (path, name, bad, "" if bad == 1 else "s",
                         t.numel()))
    return model


def load(path, module=None, module_args=None, source=()):
    """(model, how, notes): how in words, notes the lines the dump states
    (a state_dict's missing buffers above all)."""
    if not os.path.isfile(path):
        raise LoadError("%s: no such file" % path)
    for d in [os.path.dirname(os.path.abspath(path)), os.getcwd()] + \
            list(source):
        if d not in sys.path:
            sys.path.insert(0, d)
    notes = []
    if module:
        cls = _class(module)
        sd = _state_dict(torch.load(path, map_location="cpu"), path)
        model = _construct(cls, module, module_args)
        try:
            res = model.load_state_dict(sd, strict=False)
        except RuntimeError as e:
            raise LoadError("%s: does not fit %s: %s" % (
                path, module, str(e).splitlines()[0]))
        if res.unexpected_keys:
            raise LoadError("%s: keys %s fit no part of %s" % (
                path, ", ".join(res.unexpected_keys[:4]), module))
        if res.missing_keys:
            notes.append("not in the file, left as %s made them: %s" % (
                module, ", ".join(res.missing_keys)))
        return model, "a state_dict into %s" % module, notes
    if _is_torchscript(path):
        return torch.jit.load(path, map_location="cpu"), "TorchScript", notes
    try:
        # A whole pickled model, which PyTorch 2.6 and later refuse to
        # unpickle unless asked: the user names a file they trust.
        try:
            obj = torch.load(path, map_location="cpu", weights_only=False)
        except TypeError:  # a PyTorch before weights_only existed
            obj = torch.load(path, map_location="cpu")
    except AttributeError as e:
        if "__main__" in str(e):
            # Pickled from the training script itself: the class lives in
            # a module no other process can import by that name.
            raise LoadError("%s: the pickle's class was defined in the "
                            "training script itself (%s): save its "
                            "state_dict and give --module module:Class with "
                            "--source, the folder of a module that defines "
                            "it" % (path, e))
        raise LoadError("%s: the pickle names a class that cannot be found "
                        "(%s): give --source DIR, the folder of the module "
                        "that defines it, or save a state_dict and give "
                        "--module package.module:Class" % (path, e))
    except ModuleNotFoundError as e:
        raise LoadError("%s: %s; give --source DIR, the folder of the "
                        "module that defines the model" % (path, e))
    if isinstance(obj, torch.nn.Module):
        return obj, "a whole pickled model", notes
    if isinstance(obj, dict):
        raise LoadError("%s holds a state_dict (a dict of tensors), not a "
                        "model: give --module package.module:Class (and "
                        "--module-args) to build the model it fits" % path)
    raise LoadError("%s holds a %s, not a model" % (path, type(obj).__name__))
