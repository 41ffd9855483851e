"""bndump: what every batch-norm layer of a PyTorch model holds and sees,
written for `bnstudy diagnose DIR` (docs/diagnose.md, "The dump").

load      a model the ways researchers keep one (a whole pickle, a
          state_dict with its class, TorchScript), never moved afterwards
passes    the layers' inputs on training and on evaluation data, taken in
          evaluation mode on a copy, and their fresh statistics
noise     what draws at random before each layer (dropout, as a module
          or a function), measured on a copy under fixed seeds
fixes     the accuracies in both modes and each candidate fix, scored on
          copies of the model
record    BNRecorder, for a training script: every call a layer gets
tsv       the files' common form
"""

from .record import BNRecorder  # noqa: F401
