"""Run pass pipelines by name and list the registered passes.

The same registry and textual pipeline syntax as ``tessel-opt``::

    tessel.passes.run(module, "tessel-model-to-linalg")
    tessel.passes.run(module, "builtin.module(func.func(canonicalize))")
    [p.name for p in tessel.passes.registered() if p.name.startswith("tessel")]
"""
from collections import namedtuple

from . import _tessel

PassInfo = namedtuple("PassInfo", "name description is_pipeline")


def run(module, pipeline):
    """Runs ``pipeline`` on ``module`` (a :class:`tessel.ir.Module`) in
    place and returns it. ``"a,b"`` is short for ``"builtin.module(a,b)"``.
    Raises :class:`tessel.CompileError` for an unknown pass or invalid
    pipeline, and with the diagnostics when a pass fails."""
    native = getattr(module, "_native", None)
    if native is None:
        raise TypeError("passes.run takes a tessel.ir.Module")
    native.run_pipeline(pipeline)
    return module


def registered():
    """Every registered pass and pipeline, sorted by name."""
    return [PassInfo(*p) for p in _tessel.registered_passes()]


def names():
    """The names of :func:`registered`."""
    return [p.name for p in registered()]
