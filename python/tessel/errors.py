"""Exceptions raised by the tessel package.

Every error the package raises derives from :class:`tessel.Error`, so a
caller can catch them all; the subclasses say which door failed.
"""


class Error(Exception):
    """Base class of every error raised by tessel."""


class CompileError(Error):
    """Parsing, importing, verifying or compiling a model failed.

    ``diagnostics`` holds the MLIR diagnostics (with their locations) as
    printed; ``str(e)`` starts with a one-line summary followed by them.
    """

    def __init__(self, message, diagnostics=""):
        self.diagnostics = diagnostics
        text = message if not diagnostics else message + "\n" + diagnostics
        super().__init__(text)


class TorchImportError(Error):
    """A torch.fx node (or module) the PyTorch importer cannot translate.

    ``node`` is the FX node's name, ``target`` its target (the aten/torch
    function, method name or submodule path and type) and ``where`` the
    user source line that created it (from the FX stack trace) when known.
    """

    def __init__(self, message, node=None, target=None, where=None):
        self.node = node
        self.target = target
        self.where = where
        super().__init__(message)


class TorchImportWarning(UserWarning):
    """A torch module was not translated by the FX importer but exported by
    ``torch.onnx.export`` instead (``tessel.compile``'s ``torch_exporter=
    "auto"``); the message names the node the FX importer could not take."""


class InvocationError(Error, ValueError):
    """A compiled module was called with the wrong number, dtype or shape of
    inputs (the runtime's message), or running it failed."""
