"""``tessel.compile``: any supported source to a :class:`CompiledModule`.

Every door ends in the same C++ compiler as ``tessel-compile``: a torch
module is traced to ONNX ops (:mod:`tessel.torch_importer`), an ONNX model
goes through Tessel's ONNX importer, MLIR is parsed; then the model-level
IR is compiled to a shared-library artifact in a temporary folder and
loaded.
"""
import os
import shutil
import tempfile
import warnings

from . import ir, passes
from .errors import CompileError, TorchImportWarning
from .runtime import CompiledModule


def _is_torch_module(obj):
    try:
        import torch
    except ImportError:
        return False
    return isinstance(obj, torch.nn.Module)


def _onnx_input_names(proto):
    inits = {t.name for t in proto.graph.initializer}
    return [i.name for i in proto.graph.input if i.name not in inits]


def _example_shapes(proto, example_inputs):
    """Pins an ONNX model's input shapes to the example inputs' shapes (in
    graph input order)."""
    names = _onnx_input_names(proto)
    if len(example_inputs) != len(names):
        raise CompileError(
            f"{len(example_inputs)} example input(s) given, but the ONNX "
            f"model has {len(names)} input(s): {', '.join(names)}")
    return {n: tuple(getattr(x, "shape", ())) for n, x in
            zip(names, example_inputs)}


def _load_onnx(path):
    import onnx
    return onnx.load(path, load_external_data=False)


def _raised(module, raise_moe):
    """MLIR written densely (by hand or with tessel.builder) is raised like
    an imported graph: tessel-raise-moe (the importers run it themselves)."""
    if raise_moe:
        passes.run(module, "tessel-raise-moe")
    return module


def to_module(source, example_inputs=None, *, shapes=None, raise_moe=True,
              torch_exporter="auto"):
    """The model-level :class:`tessel.ir.Module` of ``source`` (what
    :func:`compile` compiles): a torch.nn.Module (with example inputs), an
    ONNX path, bytes or ModelProto, MLIR text or path, or an
    :class:`tessel.ir.Module` (copied)."""
    if isinstance(example_inputs, list):
        example_inputs = tuple(example_inputs)
    elif example_inputs is not None and not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)

    if _is_torch_module(source):
        if example_inputs is None:
            raise TypeError("compiling a torch.nn.Module needs example_inputs, "
                            "e.g. tessel.compile(model, (x,))")
        if shapes:
            raise TypeError("shapes= applies to ONNX models; a torch module "
                            "takes its shapes from example_inputs")
        from .torch_importer import import_module
        proto, note = import_module(source, example_inputs, torch_exporter)
        if note is None:
            return ir.Module.from_onnx(proto, name=type(source).__name__,
                                       raise_moe=raise_moe)
        warnings.warn(note, TorchImportWarning, stacklevel=3)
        try:
            return ir.Module.from_onnx(proto, name=type(source).__name__,
                                       raise_moe=raise_moe)
        except CompileError as e:
            raise CompileError(f"{note}; its ONNX model did not import: {e}") from e

    if isinstance(source, ir.Module):
        _no_shapes(shapes, "an ir.Module")
        return _raised(source.clone(), raise_moe)

    if hasattr(source, "SerializeToString") and hasattr(source, "graph"):
        if shapes is None and example_inputs is not None:
            shapes = _example_shapes(source, example_inputs)
        return ir.Module.from_onnx(source, shapes=shapes,
                                   name=source.graph.name or "<onnx>",
                                   raise_moe=raise_moe)
    if isinstance(source, (bytes, bytearray)):
        return ir.Module.from_onnx(bytes(source), shapes=shapes,
                                   raise_moe=raise_moe)

    if isinstance(source, os.PathLike) or (
            isinstance(source, str) and _looks_like_path(source)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FileNotFoundError(f"no such model file: '{path}'")
        if path.endswith(".onnx"):
            if shapes is None and example_inputs is not None:
                shapes = _example_shapes(_load_onnx(path), example_inputs)
            return ir.Module.from_onnx(path, shapes=shapes,
                                       raise_moe=raise_moe)
        _no_shapes(shapes, "an MLIR model")
        return _raised(ir.Module.load(path), raise_moe)

    if isinstance(source, str):
        _no_shapes(shapes, "an MLIR model")
        return _raised(ir.Module.parse(source), raise_moe)

    raise TypeError(
        "tessel.compile takes a torch.nn.Module, an ONNX path/bytes/ModelProto, "
        f"MLIR text or path, or a tessel.ir.Module, not {type(source).__name__}")


def _looks_like_path(text):
    # MLIR text always has a newline or an operation; a path never has
    # either.
    return "\n" not in text and "{" not in text and "(" not in text


def _no_shapes(shapes, what):
    if shapes:
        raise TypeError(f"shapes= applies to ONNX models, not {what} (MLIR "
                        "carries its shapes in its types)")


def _stacked_calibration(calibration_data):
    """Calibration samples as one stacked [K, *shape] array per model input
    (what tessel-compile --calibration-data takes): a list of samples, each
    an array (one-input models) or a tuple/list of arrays (one per input, in
    order), or, for a one-input model, an array already stacked."""
    import numpy as np
    if hasattr(calibration_data, "shape") and hasattr(calibration_data, "dtype"):
        return [np.ascontiguousarray(_as_numpy(calibration_data))]
    samples = list(calibration_data)
    if not samples:
        raise ValueError("calibration_data is empty")
    rows = [tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in samples]
    n = len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != n:
            raise ValueError(f"calibration sample {i} has {len(r)} array(s), "
                             f"sample 0 has {n}")
    stacked = []
    for j in range(n):
        arrays = [_as_numpy(r[j]) for r in rows]
        shapes = {a.shape for a in arrays}
        dtypes = {a.dtype for a in arrays}
        if len(shapes) != 1 or len(dtypes) != 1:
            raise ValueError(f"calibration samples of input {j} differ in "
                             f"shape or dtype: {sorted(map(str, shapes))} "
                             f"{sorted(map(str, dtypes))}")
        a = np.stack(arrays)
        if not a.dtype.isnative:
            a = a.astype(a.dtype.newbyteorder("="))
        stacked.append(np.ascontiguousarray(a))
    return stacked


def _as_numpy(x):
    import numpy as np
    if hasattr(x, "detach"):                   # a torch tensor
        x = x.detach().cpu().numpy()
    return np.asarray(x)


def compile(source, example_inputs=None, *, opt_level=3, mcpu="native",
            threads=None, shapes=None, function=None,
            route_lowering="grouped", expert_parallel=1,
            expert_placement=None, component=None, raise_moe=True,
            quantize=None, calibration_data=None, calibration_method="minmax",
            calibration_percentile=99.99, quantize_exclude=(),
            quantize_report=None, precision="f32", sparsity="auto",
            sparsity_report=None, target="cpu", cuda_arch="sm_80",
            cuda_binary="auto",
            torch_exporter="auto"):
    """Compiles ``source`` and returns a callable :class:`CompiledModule`.

    source: a ``torch.nn.Module`` (with ``example_inputs``, a tuple of
    tensors/arrays, traced with torch.fx; torch_exporter="auto" falls back
    to ``torch.onnx.export`` where the FX importer cannot take a node,
    with a :class:`tessel.TorchImportWarning`; "fx" or "torch.onnx" use
    one exporter only), an ONNX model (path, bytes or
    ``onnx.ModelProto``; ``example_inputs`` or ``shapes={name: dims}`` pin
    symbolic dimensions), MLIR text or an ``.mlir`` path, or a
    :class:`tessel.ir.Module`.

    opt_level 0-3 and mcpu ("native" or an LLVM CPU name) are
    ``tessel-compile``'s ``-O`` and ``--mcpu``; ``threads`` is the default
    thread count of calls (the runtime's ``num_threads``; 1 if None).
    route_lowering is how ``compose.route`` (mixture of experts) is lowered:
    "grouped" (each expert on just its tokens) or "dense" (the reference).
    expert_parallel=N (N > 1) is ``tessel-compile --expert-parallel=N``:
    each mixture of experts runs across N MPI processes, each holding a
    block of the experts (``expert_placement``: how many each, in rank
    order); run the script under ``mpirun -np N``, every process calling
    the module alike (rank 0's inputs are used; every process gets the
    outputs; docs/scale-out.md).
    component names one ``compose.component`` to compile on its own (it
    becomes the artifact's entry point; separate compilation).
    raise_moe (any source): raise top-k gated mixtures of experts to
    ``compose.route`` (the ``tessel-raise-moe`` pass) so the route lowering
    runs each expert on just its tokens; False keeps the dense graph.
    quantize="int8" (any source) is ``tessel-compile --quantize=int8``:
    static int8, calibrated by running the float model on
    ``calibration_data`` (a list of samples, each an array or a tuple of
    arrays, one per input; or one stacked ``[K, *shape]`` array for a
    one-input model); convolutions and matmuls run on int8 with per-channel
    weights and per-tensor activations. calibration_method ("minmax",
    "percentile" with calibration_percentile, or "entropy"),
    quantize_exclude (node names kept in float) and quantize_report (a
    path for the per-layer JSON report) are the matching
    ``--calibration-method``, ``--quantize-exclude`` and
    ``--quantize-report``. quantize="int8-dynamic" (any
    source) is ``tessel-compile --quantize=int8-dynamic``: matmuls with
    constant weights run on int8, the weights quantized per column at
    compile time, the activations per row at run time; no calibration.
    precision="bf16" is ``tessel-compile --precision=bf16``: f32
    convolutions and matmuls multiply bf16-rounded operands and sum in f32
    (AVX512_BF16's ``vdpbf16ps``); inputs, outputs and everything else stay
    f32. precision="f16" (target="cuda" only) multiplies f16-rounded
    operands on the tensor cores, sums in f32; with target="cuda", "bf16"
    uses the tensor cores too.
    sparsity="auto" (the default) is ``tessel-compile --sparsity=auto``: at
    opt_level 2 and up, matmuls whose constant weights are mostly zeros run
    on the sparse kernel where its cost model predicts a gain ("off": every
    matmul dense); sparsity_report (a path) gets one line per matmul with
    constant weights: shape, zero fraction, best block size, predicted
    speed-up and the choice (``--sparsity-report``).
    target="cuda" is ``tessel-compile --target=cuda``: the kernels run on
    an NVIDIA GPU (PTX for ``cuda_arch`` and newer, in the same artifact);
    calls copy inputs to the device and outputs back. Loading it where
    there is no CUDA driver or device raises :class:`tessel.Error`.
    cuda_binary ("auto", "ptx", "fatbin") is ``--cuda-binary``: "auto"
    embeds a cubin for ``cuda_arch`` next to the PTX where the CUDA
    toolkit (ptxas, fatbinary) is installed, "ptx" the PTX alone.
    Errors raise :class:`tessel.CompileError` carrying the MLIR diagnostics
    (or :class:`tessel.TorchImportError` for an untranslatable torch node).
    """
    if quantize not in (None, "int8", "int8-dynamic"):
        raise ValueError("quantize must be None, 'int8' or 'int8-dynamic', "
                         f"got {quantize!r}")
    calibration = []
    if quantize == "int8":
        if calibration_data is None:
            raise ValueError("quantize='int8' needs calibration_data (samples "
                             "of the model's inputs)")
        calibration = _stacked_calibration(calibration_data)
    elif calibration_data is not None:
        raise ValueError("calibration_data applies with quantize='int8'")
    elif quantize_exclude or quantize_report is not None:
        raise ValueError("quantize_exclude and quantize_report apply with "
                         "quantize='int8'")
    if isinstance(quantize_exclude, str):
        quantize_exclude = [quantize_exclude]
    if sparsity not in ("auto", "off"):
        raise ValueError(f"sparsity must be 'auto' or 'off', got {sparsity!r}")
    if sparsity_report is not None and sparsity == "off":
        raise ValueError("sparsity_report applies with sparsity='auto'")
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target must be 'cpu' or 'cuda', got {target!r}")
    if precision not in ("f32", "bf16", "f16"):
        raise ValueError("precision must be 'f32', 'bf16' or 'f16', got "
                         f"{precision!r}")
    if route_lowering not in ("grouped", "dense"):
        raise ValueError("route_lowering must be 'grouped' or 'dense', got "
                         f"{route_lowering!r}")
    if not isinstance(expert_parallel, int) or expert_parallel < 1:
        raise ValueError("expert_parallel must be an int >= 1, got "
                         f"{expert_parallel!r}")
    if expert_placement is not None and expert_parallel < 2:
        raise ValueError("expert_placement applies with expert_parallel > 1")
    if opt_level not in (0, 1, 2, 3):
        raise ValueError(f"opt_level must be 0, 1, 2 or 3, got {opt_level!r}")
    module = to_module(source, example_inputs, shapes=shapes,
                       raise_moe=raise_moe, torch_exporter=torch_exporter)
    workdir = tempfile.mkdtemp(prefix="tessel-")
    path = os.path.join(workdir, "model.so")
    try:
        module._native.compile(path, opt_level=opt_level, mcpu=mcpu,
                               route_lowering=route_lowering,
                               expert_parallel=expert_parallel,
                               expert_placement=[int(n) for n in
                                                 expert_placement or ()],
                               component=component or "",
                               quantize=quantize or "none",
                               calibration=calibration,
                               calibration_method=calibration_method,
                               calibration_percentile=float(calibration_percentile),
                               quantize_exclude=list(quantize_exclude),
                               quantize_report=os.fspath(quantize_report)
                               if quantize_report is not None else "",
                               precision=precision, sparsity=sparsity,
                               sparsity_report=os.fspath(sparsity_report)
                               if sparsity_report is not None else "",
                               target=target, cuda_arch=cuda_arch,
                               cuda_binary=cuda_binary)
        # The module owns the folder from here on (removed with it).
        return CompiledModule(path, function=function, threads=threads,
                              _keep=workdir)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
