#!/usr/bin/env python3
"""Runs ONNX backend test cases (a folder with model.onnx and
test_data_set_*/{input,output}_*.pb) through tessel-compile and tessel-run.

  onnx_case.py CASE_DIR [CASE_DIR...] [--bin build/bin] [--work /tmp/x] [-v]

Prints one line per case: PASS / FAIL(compile|run|mismatch) / TIMEOUT /
CRASH(<signal>) with the reason, and exits non-zero if any case failed.
Tolerance: rtol 1e-3, atol 1e-5 (the ONNX backend test defaults) unless
overridden.

This file is also the library behind conformance.py (run_case, Result): the
case runner is shared so that both tools classify a case the same way.
"""
import argparse
import errno
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-5
COMPILE_TIMEOUT = 60
RUN_TIMEOUT = 60

# Result kinds, in the order they are reported.
PASS = "pass"
COMPILE_FAIL = "compile-fail"
RUN_FAIL = "run-fail"
MISMATCH = "mismatch"
TIMEOUT = "timeout"
CRASH = "crash"
ERROR = "runner-error"   # the runner could not do its job (tool missing, ...)
KINDS = [PASS, COMPILE_FAIL, RUN_FAIL, MISMATCH, TIMEOUT, CRASH, ERROR]

# What LLVM's crash handler and report_fatal_error print; seen with a
# non-zero exit status they mean a crash even if no signal was reported.
CRASH_MARKERS = ("PLEASE submit a bug report", "Stack dump:",
                 "LLVM ERROR:", "Assertion `", "terminate called")


class Result:
    """Outcome of one case. kind is one of KINDS; reason is one line (the
    first error line, the [FAILED] + worst element line, the signal, ...);
    detail keeps a few more lines for humans; stage is 'compile' or 'run'."""

    def __init__(self, kind, reason="", detail="", stage=""):
        self.kind = kind
        self.reason = reason
        self.detail = detail
        self.stage = stage
        self.bound = []  # graph inputs bound at compile time (--bind-input)

    def ok(self):
        return self.kind == PASS

    def to_dict(self):
        return {"kind": self.kind, "reason": self.reason,
                "detail": self.detail, "stage": self.stage,
                "bound": self.bound}

    def legacy_status(self):
        """The status word onnx_case.py has always printed."""
        return {PASS: "PASS", COMPILE_FAIL: "FAIL(compile)",
                RUN_FAIL: "FAIL(run)", MISMATCH: "FAIL(mismatch)",
                TIMEOUT: "TIMEOUT", ERROR: "ERROR"}.get(self.kind) or \
            "CRASH(%s)" % (self.reason.split()[0] if self.reason else "?")


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type == 0:
        raise ValueError("%s is not a TensorProto (sequence/optional/map "
                         "test data is not supported)" % os.path.basename(path))
    if t.data_type == onnx.TensorProto.BFLOAT16:
        # numpy_helper gives the raw bits as uint16; .npy has no bfloat16.
        raise ValueError("%s is bfloat16, which .npy (and so tessel-run "
                         "--input=@) cannot represent" % os.path.basename(path))
    return numpy_helper.to_array(t)


def data_sets(case):
    return sorted((d for d in os.listdir(case) if d.startswith("test_data_set")),
                  key=lambda s: int(s.rsplit("_", 1)[1]) if s.rsplit("_", 1)[1].isdigit() else 0)


def _numbered(d, prefix):
    """input_0.pb, input_1.pb, ... in numeric order."""
    idx = []
    for f in os.listdir(d):
        m = re.fullmatch(prefix + r"_(\d+)\.pb", f)
        if m:
            idx.append(int(m.group(1)))
    return ["%s_%d.pb" % (prefix, i) for i in sorted(idx)]


def convert_pb(pb, npy, vtype=None):
    """pb -> npy, reusing npy when it is newer than pb (the cache survives
    between runs when the work folder does). Returns tessel-run's spec of
    the value: "@npy"; for a sequence (vtype, the graph value's TypeProto,
    says which a .pb holds) "@dir" of 0.npy, 1.npy, ...; for an empty
    optional "none"."""
    kind = vtype.WhichOneof("value") if vtype is not None else "tensor_type"
    if kind == "optional_type":
        o = onnx.OptionalProto()
        with open(pb, "rb") as f:
            o.ParseFromString(f.read())
        if o.elem_type == onnx.OptionalProto.UNDEFINED:
            return "none"
        inner = vtype.optional_type.elem_type
        if o.elem_type == onnx.OptionalProto.SEQUENCE:
            return _save_sequence(o.sequence_value, npy)
        return "@" + _save(numpy_helper.to_array(o.tensor_value), npy, pb)
    if kind == "sequence_type":
        q = onnx.SequenceProto()
        with open(pb, "rb") as f:
            q.ParseFromString(f.read())
        return _save_sequence(q, npy)
    try:
        if os.path.getmtime(npy) >= os.path.getmtime(pb):
            return "@" + npy
    except OSError:
        pass
    return "@" + _save(load_pb(pb), npy, pb)


def _save(a, npy, pb):
    os.makedirs(os.path.dirname(npy), exist_ok=True)
    if a.dtype == object:
        raise ValueError("%s holds strings, which tessel-run cannot take"
                         % os.path.basename(pb))
    tmp = "%s.%d.tmp.npy" % (npy[:-4], os.getpid())
    np.save(tmp, a, allow_pickle=False)
    os.replace(tmp, npy)
    return npy


def _save_sequence(q, npy):
    """A SequenceProto of tensors as the directory NPY-without-.npy of
    0.npy, 1.npy, ..."""
    if q.elem_type != onnx.SequenceProto.TENSOR:
        raise ValueError("a sequence of other than tensors")
    d = npy[:-4] + ".seq"
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    for i, t in enumerate(q.tensor_values):
        _save(numpy_helper.to_array(t), os.path.join(d, "%d.npy" % i), d)
    return "@" + d


def value_types(case):
    """The TypeProtos of the model's graph inputs (not initializers) and
    outputs, in the order of input_<i>.pb and output_<i>.pb."""
    m = onnx.load(os.path.join(case, "model.onnx"), load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    return ([i.type for i in m.graph.input if i.name not in inits],
            [o.type for o in m.graph.output])


def signal_name(rc):
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return "signal %d" % -rc


def _lines(text):
    return [l.rstrip() for l in text.strip().splitlines() if l.strip()]


def first_error_line(text, model_path=None):
    """The first 'error:' line (else the first line), without the
    'path/model.onnx:0:0: error: ' location prefix."""
    lines = _lines(text)
    line = next((l for l in lines if "error:" in l), lines[0] if lines else "?")
    return re.sub(r"^.*?\berror:\s*", "", line)


def _limit_preexec(mem_mb):
    # (ASan reserves terabytes of shadow address space: a sanitizer build's
    # tools run without the limit.)
    if not mem_mb or os.environ.get("TESSEL_SANITIZED"):
        return None

    def f():
        import resource
        b = mem_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (b, b))
    return f


class ToolError(Exception):
    pass


def _run(cmd, timeout, mem_mb):
    """subprocess.run that returns (rc, output) with rc None on timeout.
    A tool that cannot be started (being relinked by a concurrent build:
    ETXTBSY / EACCES / ENOENT) is retried for up to 30 s, then ToolError."""
    for attempt in range(31):
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, errors="replace", timeout=timeout,
                               preexec_fn=_limit_preexec(mem_mb))
            return p.returncode, p.stdout
        except subprocess.TimeoutExpired:
            raise
        except OSError as e:
            if attempt == 30 or e.errno not in (errno.ETXTBSY, errno.EACCES,
                                                errno.ENOENT):
                raise ToolError("cannot run %s: %s" % (cmd[0], e))
            time.sleep(1)


def _run_timed(cmd, timeout, mem_mb):
    try:
        return _run(cmd, timeout, mem_mb)
    except subprocess.TimeoutExpired as e:
        out = e.stdout or b""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        return None, out


def _crashed(rc, out):
    if rc is not None and rc < 0:
        return signal_name(rc)
    if rc and any(m in out for m in CRASH_MARKERS):
        return "abort (exit %d)" % rc
    return None


def run_case(*args, **kwargs):
    """Compiles CASE/model.onnx once, then runs every test_data_set through
    tessel-run --expected_output. Returns a Result. See _run_case."""
    try:
        return _run_case(*args, **kwargs)
    except ToolError as e:
        return Result(ERROR, str(e))


BIND_HINT = re.compile(r"--bind-input=(\S+?)=@FILE\.npy")
MAX_BINDS = 8


def graph_input_names(case):
    """Names of the model's graph inputs that are not initializers, in the
    order of input_<i>.pb."""
    m = onnx.load(os.path.join(case, "model.onnx"), load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in inits]


def inputs_to_bind(out):
    """The graph inputs tessel-compile names in its --bind-input hint."""
    return BIND_HINT.findall(out)


def _compile(case, bindir, lib, binds, compile_timeout, mem_mb, verbose):
    """tessel-compile with --bind-input for each (name, npy) in binds.
    Returns (Result or None on success, output)."""
    cmd = [os.path.join(bindir, "tessel-compile"),
           os.path.join(case, "model.onnx"), "-o", lib]
    cmd += ["--bind-input=%s=@%s" % (n, f) for n, f in binds]
    if verbose:
        print("$ " + " ".join(cmd), file=sys.stderr)
    rc, out = _run_timed(cmd, compile_timeout, mem_mb)
    if rc is None:
        return Result(TIMEOUT, "tessel-compile timed out after %ds"
                      % compile_timeout, "\n".join(_lines(out)[:5]),
                      "compile"), out
    sig = _crashed(rc, out)
    if sig:
        return Result(CRASH, "%s in tessel-compile: %s"
                      % (sig, first_error_line(out)),
                      "\n".join(_lines(out)[:20]), "compile"), out
    if rc != 0:
        return Result(COMPILE_FAIL, first_error_line(out),
                      "\n".join(_lines(out)[:5]), "compile"), out
    return None, out


def _run_case(case, bindir, work, rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL,
              verbose=False, npy_dir=None, compile_timeout=COMPILE_TIMEOUT,
              run_timeout=RUN_TIMEOUT, mem_mb=0, keep=False, tag=None):
    """Compiles CASE/model.onnx, then runs every test_data_set through
    tessel-run --expected_output. Returns a Result.

    Many backend cases feed shape operands (Reshape's shape, Slice's starts,
    Resize's scales...) as graph inputs. Tessel compiles static shapes, so
    when tessel-compile asks for such an input with --bind-input, the input
    is bound to each data set's value and the model compiled per data set
    (Result.bound lists them), as a user specializing the model would.

    npy_dir: where the converted .npy files go (reused when up to date);
    default: WORK/<tag>.  tag: a file-name-safe name of the case."""
    case = case.rstrip("/")
    tag = tag or os.path.basename(case)
    os.makedirs(work, exist_ok=True)
    npy_dir = npy_dir or os.path.join(work, tag)
    sets = data_sets(case)

    try:
        in_types, out_types = value_types(case)
    except Exception:
        in_types, out_types = [], []

    def spec_of(s, f):
        """tessel-run's spec of data set s's file f (input_3.pb...)."""
        kind, n = f[:-3].split("_")
        types = in_types if kind == "input" else out_types
        vtype = types[int(n)] if int(n) < len(types) else None
        return convert_pb(os.path.join(case, s, f),
                          os.path.join(npy_dir, s, f[:-3] + ".npy"), vtype)

    def npy_of(s, f):
        spec = spec_of(s, f)
        if not spec.startswith("@") or os.path.isdir(spec[1:]):
            raise ValueError("%s is no tensor, which --bind-input cannot take" % f)
        return spec[1:]

    # Find the inputs that must be bound, using the first data set's values.
    lib = os.path.join(work, tag + ".so")
    bound = []
    names = None
    while True:
        if bound and not sets:
            break
        binds = []
        try:
            for n in bound:
                binds.append((n, npy_of(sets[0], "input_%d.pb" % names.index(n))))
        except Exception as e:
            return Result(RUN_FAIL, "test data: %s" % e, "", "run")
        res, out = _compile(case, bindir, lib, binds, compile_timeout, mem_mb,
                            verbose)
        if res is None:
            break
        if res.kind != COMPILE_FAIL or not sets or len(bound) >= MAX_BINDS:
            return res
        names = names or graph_input_names(case)
        wanted = [n for n in inputs_to_bind(out) if n in names and n not in bound]
        if not wanted:
            return res
        bound.extend(wanted)

    try:
        for si, s in enumerate(sets):
            d = os.path.join(case, s)
            if bound and si > 0:
                # Each data set may carry other values for bound inputs.
                try:
                    binds = [(n, npy_of(s, "input_%d.pb" % names.index(n)))
                             for n in bound]
                except Exception as e:
                    return Result(RUN_FAIL, "test data: %s" % e, "", "run")
                res, _ = _compile(case, bindir, lib, binds, compile_timeout,
                                  mem_mb, verbose)
                if res is not None:
                    return res
            args = [os.path.join(bindir, "tessel-run"), lib]
            try:
                for kind, flag in (("input", "--input"),
                                   ("output", "--expected_output")):
                    for f in _numbered(d, kind):
                        if kind == "input" and bound and \
                                names[int(f[6:-3])] in bound:
                            continue
                        args.append("%s=%s" % (flag, spec_of(s, f)))
            except Exception as e:  # test data numpy/tessel cannot represent
                return Result(RUN_FAIL, "test data: %s" % e, "", "run")
            args += ["--rtol=%g" % rtol, "--atol=%g" % atol]
            if verbose:
                print("$ " + " ".join(args), file=sys.stderr)
            rc, out = _run_timed(args, run_timeout, mem_mb)
            if rc is None:
                return Result(TIMEOUT, "tessel-run timed out after %ds on %s"
                              % (run_timeout, s), "", "run")
            sig = _crashed(rc, out)
            if sig:
                return Result(CRASH, "%s in tessel-run on %s: %s"
                              % (sig, s, first_error_line(out)),
                              "\n".join(_lines(out)[:20]), "run")
            if rc != 0:
                lines = _lines(out)
                failed = [i for i, l in enumerate(lines) if l.startswith("[FAILED]")]
                if failed:
                    i = failed[0]
                    msg = lines[i]
                    if i + 1 < len(lines) and lines[i + 1].lstrip().startswith("worst element"):
                        msg += " | " + lines[i + 1].strip()
                    if len(failed) > 1:
                        msg += " (+%d more outputs)" % (len(failed) - 1)
                    return Result(MISMATCH, msg, "\n".join(lines[:6]), "run")
                return Result(RUN_FAIL, first_error_line(out),
                              "\n".join(lines[:5]), "run")
    finally:
        if not keep:
            try:
                os.remove(lib)
            except OSError:
                pass
    r = Result(PASS)
    r.bound = bound
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--bin", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bin"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--rtol", type=float, default=DEFAULT_RTOL)
    ap.add_argument("--atol", type=float, default=DEFAULT_ATOL)
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="onnx_case_")
    failed = 0
    for c in a.cases:
        r = run_case(c, a.bin, work, a.rtol, a.atol, a.v, keep=True)
        failed += not r.ok()
        bound = f" (bound: {', '.join(r.bound)})" if r.bound else ""
        print(f"{r.legacy_status():15} {os.path.basename(c.rstrip('/'))} {r.reason}{bound}")
    print(f"{len(a.cases) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
