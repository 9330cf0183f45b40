"""Expert parallelism across MPI processes (tessel-compile --expert-parallel=N,
docs/scale-out.md): the artifact runs under `mpirun -np N` and must give the
single-process artifact's output (rtol 1e-5) and the float64 numpy
reference's, however the tokens are routed; a wrong process count fails
with a message. Every mpirun has a timeout, so no test can hang."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from compose_models import MoE

BUILD = os.environ.get("TESSEL_BUILD_DIR", os.path.join(
    os.path.dirname(__file__), "..", "..", "build"))
COMPILE = os.path.join(BUILD, "bin", "tessel-compile")
RUN = os.path.join(BUILD, "bin", "tessel-run")
# Root may run mpirun (CI runs as root); more processes than cores yield
# instead of spinning, so four processes on two cores stay quick.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               OMPI_MCA_mpi_yield_when_idle="1")
TIMEOUT = 120


def _sanitizers():
    """The build's TESSEL_SANITIZE (scripts/test_sanitizers.sh), or ""."""
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("TESSEL_SANITIZE:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


PYTHON_ENV = dict(MPI_ENV)
if "address" in _sanitizers():
    # No leak check under mpirun: Open MPI unloads its components at
    # MPI_Finalize, so what they keep to exit is reported from unknown
    # modules that no suppression can name, and the artifact stays loaded
    # to exit (-z nodelete), releasing its buffer cache after the check.
    # ASan's other checks stay on; the single-process tests check leaks.
    MPI_ENV["ASAN_OPTIONS"] = (MPI_ENV.get("ASAN_OPTIONS", "") +
                               ":detect_leaks=0")
    # An instrumented extension needs the runtime first in the interpreter
    # (as the suite's own pytest process has it); the interpreter's own
    # allocations are no concern of this test.
    PYTHON_ENV["LD_PRELOAD"] = subprocess.run(
        ["clang-22", "-print-file-name=libclang_rt.asan-x86_64.so"],
        capture_output=True, text=True).stdout.strip()
    PYTHON_ENV["ASAN_OPTIONS"] = ("detect_leaks=0:abort_on_error=1:"
                                  "allocator_may_return_null=1")

pytestmark = pytest.mark.skipif(
    shutil.which("mpirun") is None,
    reason="needs Open MPI's mpirun (scripts/setup.sh installs it)")


def compile_mlir(tmp_path, text, name, *flags):
    src = tmp_path / f"{name}.mlir"
    src.write_text(text)
    out = tmp_path / f"{name}.so"
    p = subprocess.run([COMPILE, str(src), "-o", str(out), *flags],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    return out


def mpirun(n, *args, env=None):
    return subprocess.run(["mpirun", "-np", str(n), *map(str, args)],
                          capture_output=True, text=True, timeout=TIMEOUT,
                          env=env or MPI_ENV)


def run_single(so, x, tmp_path):
    xin, y = tmp_path / "x.npy", tmp_path / "y_single.npy"
    np.save(xin, x)
    p = subprocess.run([RUN, str(so), f"--input=@{xin}", f"--output=@{y}"],
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    return np.load(y)


def run_parallel(so, n, x, tmp_path):
    xin, y = tmp_path / "x.npy", tmp_path / f"y_ep{n}.npy"
    np.save(xin, x)
    p = mpirun(n, RUN, so, f"--input=@{xin}", f"--output=@{y}")
    assert p.returncode == 0, p.stdout + p.stderr
    return np.load(y)


def check(tmp_path, moe, ranks, *flags, x=None):
    """Compiles `moe` for one process and for `ranks`, runs both on `x` and
    compares them with each other and with numpy."""
    if x is None:
        x = np.random.default_rng(7).normal(size=(moe.T, moe.d)).astype(
            np.float32)
    single = compile_mlir(tmp_path, moe.mlir(), "single")
    ep = compile_mlir(tmp_path, moe.mlir(), f"ep{ranks}",
                      f"--expert-parallel={ranks}", *flags)
    assert f"\nranks {ranks}\n".encode() in ep.read_bytes()
    y1 = run_single(single, x, tmp_path)
    yn = run_parallel(ep, ranks, x, tmp_path)
    np.testing.assert_allclose(yn, y1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(yn, moe.reference(x), rtol=1e-4, atol=1e-5)
    return yn


@pytest.mark.parametrize("k", [1, 2])
def test_two_processes_top_k(tmp_path, k):
    check(tmp_path, MoE(tokens=64, d=16, hidden=32, experts=4, k=k), 2)


def test_four_processes(tmp_path):
    check(tmp_path, MoE(tokens=48, d=8, hidden=16, experts=8, k=2), 4)


def test_uneven_token_shares(tmp_path):
    # 37 tokens on 4 processes: shares of 10, the last one 7 real rows.
    check(tmp_path, MoE(tokens=37, d=8, hidden=16, experts=4, k=2), 4)


def test_a_process_without_tokens(tmp_path):
    # 3 tokens on 4 processes: shares of 1; the fourth holds only padding.
    check(tmp_path, MoE(tokens=3, d=8, hidden=16, experts=4, k=2), 4)


def test_skewed_routing_all_to_one_process(tmp_path):
    # Every token picks experts 0 and 1, which process 0 holds: process 1
    # receives no rows, process 0 all of them.
    moe = MoE(tokens=32, d=8, hidden=16, experts=4, k=2)
    moe.wg[:, :2] = 0.0
    moe.wg[:, 2:] = -50.0
    x = np.abs(np.random.default_rng(3).normal(size=(32, 8))).astype(
        np.float32) + 0.5
    logits = x @ moe.wg
    assert (np.argsort(-logits, axis=1)[:, :2] < 2).all()
    check(tmp_path, moe, 2, x=x)


def test_placement_and_processes_without_experts(tmp_path):
    moe = MoE(tokens=40, d=8, hidden=16, experts=4, k=2)
    check(tmp_path, moe, 2, "--expert-placement=1,3")
    # 2 experts on 4 processes: processes 2 and 3 hold none.
    check(tmp_path, MoE(tokens=24, d=8, hidden=16, experts=2, k=1), 4)
    check(tmp_path, moe, 2, "--expert-placement=0,4")


@pytest.mark.parametrize("ranks,tokens", [(2, 48), (4, 37)])
def test_capacity_drops_in_token_order(tmp_path, ranks, tokens):
    # Each expert takes at most 9 of the assignments, the earliest tokens'
    # first, across the processes' shares as within one process.
    moe = MoE(tokens=tokens, d=8, hidden=16, experts=4, k=2, capacity=9)
    y = check(tmp_path, moe, ranks)
    assert not np.allclose(y, MoE(tokens=tokens, d=8, hidden=16, experts=4,
                                  k=2).reference(np.random.default_rng(
                                      7).normal(size=(tokens, 8)).astype(
                                          np.float32)), atol=1e-3)


def test_benchmark_reports_slowest_process_once(tmp_path):
    moe = MoE(tokens=32, d=8, hidden=16, experts=4, k=2)
    ep = compile_mlir(tmp_path, moe.mlir(), "ep2", "--expert-parallel=2")
    xin = tmp_path / "x.npy"
    np.save(xin, np.ones((32, 8), np.float32))
    p = mpirun(2, RUN, ep, f"--input=@{xin}", "--benchmark=3", "--threads=1")
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("benchmark: function=main iterations=3") == 1
    assert "ranks: 2 MPI processes" in p.stdout


def test_wrong_process_count_fails_with_message(tmp_path):
    moe = MoE(tokens=16, d=8, hidden=16, experts=4, k=2)
    ep = compile_mlir(tmp_path, moe.mlir(), "ep2", "--expert-parallel=2")
    xin = tmp_path / "x.npy"
    np.save(xin, np.ones((16, 8), np.float32))
    message = ("it was compiled for 2 MPI processes (--expert-parallel=2) but "
               "this job has {}: run it with mpirun -np 2")
    p = subprocess.run([RUN, str(ep), f"--input=@{xin}"], capture_output=True,
                       text=True, timeout=TIMEOUT, env=MPI_ENV)
    assert p.returncode != 0
    assert message.format(1) in p.stderr
    p = mpirun(3, RUN, ep, f"--input=@{xin}")
    assert p.returncode != 0
    assert message.format(3) in p.stderr


def test_failing_process_ends_the_job(tmp_path):
    # Rank 0 cannot read its input: it aborts the job instead of leaving
    # rank 1 waiting in the broadcast (the timeout would catch a hang).
    moe = MoE(tokens=16, d=8, hidden=16, experts=4, k=2)
    ep = compile_mlir(tmp_path, moe.mlir(), "ep2", "--expert-parallel=2")
    p = mpirun(2, RUN, ep, f"--input=@{tmp_path / 'missing.npy'}")
    assert p.returncode != 0
    assert "tessel-run: error (rank 0)" in p.stderr
    assert "missing.npy" in p.stderr


def test_bad_options(tmp_path):
    moe = MoE(tokens=16, d=8, hidden=16, experts=4, k=2)
    src = tmp_path / "m.mlir"
    src.write_text(moe.mlir())
    for flags, message in [
            (["--expert-parallel=0"], "--expert-parallel must be at least 1"),
            (["--expert-placement=2,2"],
             "--expert-placement needs --expert-parallel=N with N > 1"),
            (["--expert-parallel=2", "--expert-placement=1,2"],
             "placement places 3 experts, but the route has 4")]:
        p = subprocess.run([COMPILE, str(src), "-o", str(tmp_path / "m.so"),
                            *flags], capture_output=True, text=True,
                           timeout=TIMEOUT)
        assert p.returncode != 0, flags
        assert message in p.stderr, (flags, p.stderr)


def test_onnx_moe_from_pytorch(tmp_path):
    # A MoE written in PyTorch, exported to ONNX, raised to compose.route
    # by the importer and compiled expert-parallel.
    torch = pytest.importorskip("torch")
    from compose_models import torch_moe
    moe = MoE(tokens=32, d=16, hidden=32, experts=4, k=2)
    module = torch_moe(moe)
    x = np.random.default_rng(5).normal(size=(32, 16)).astype(np.float32)
    onnx_path = tmp_path / "moe.onnx"
    torch.onnx.export(module, (torch.from_numpy(x),), str(onnx_path),
                      input_names=["x"], output_names=["y"], opset_version=17)
    ep = tmp_path / "ep2.so"
    p = subprocess.run([COMPILE, str(onnx_path), "-o", str(ep),
                        "--expert-parallel=2"], capture_output=True,
                       text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert b"\nranks 2\n" in ep.read_bytes()
    y = run_parallel(ep, 2, x, tmp_path)
    with torch.no_grad():
        ref = module(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)


def test_python_under_mpirun(tmp_path):
    # The same script on every process: each compiles and calls the module;
    # rank 0's inputs are the ones used (rank 1 passes zeros), every process
    # gets the outputs, and benchmark() counts the slowest process.
    moe = MoE(tokens=24, d=8, hidden=16, experts=4, k=2)
    x = np.random.default_rng(9).normal(size=(24, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    (tmp_path / "model.mlir").write_text(moe.mlir())
    script = tmp_path / "ep.py"
    script.write_text(f"""
import sys
import numpy as np
sys.path.insert(0, {os.path.join(BUILD, "python")!r})
import tessel
m = tessel.compile(open({str(tmp_path / "model.mlir")!r}).read(),
                   expert_parallel=2, expert_placement=[3, 1])
x = np.load({str(tmp_path / "x.npy")!r})
if m.rank != 0:
    x = np.zeros_like(x)
y = m(x)
np.save({str(tmp_path)!r} + f"/y{{m.rank}}.npy", y)
b = m.benchmark(2, x)
print(f"rank {{m.rank}} of {{m.ranks}} median_ms {{b['median_ms']}}")
""")
    p = mpirun(2, sys.executable, script, env=PYTHON_ENV)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "rank 0 of 2" in p.stdout and "rank 1 of 2" in p.stdout
    ref = moe.reference(x)
    for r in (0, 1):
        np.testing.assert_allclose(np.load(tmp_path / f"y{r}.npy"), ref,
                                   rtol=1e-4, atol=1e-5)


def test_python_options():
    tessel = pytest.importorskip("tessel")
    moe = MoE(tokens=8, d=8, hidden=16, experts=2, k=1)
    with pytest.raises(ValueError, match="expert_parallel must be an int"):
        tessel.compile(moe.mlir(), expert_parallel=0)
    with pytest.raises(ValueError, match="expert_placement applies"):
        tessel.compile(moe.mlir(), expert_placement=[1, 1])
    m = tessel.compile(moe.mlir())
    assert (m.ranks, m.rank) == (1, 0)
    m.abort_ranks()  # no effect on a one-process artifact


def test_two_routes_with_a_layer_between(tmp_path):
    # A route, tanh on every process (the model continues replicated after
    # the route's all-gather), then a second route over the same experts.
    from compose_models import _ty, dense
    moe = MoE(tokens=30, d=8, hidden=16, experts=4, k=2)
    T, d, E = moe.T, moe.d, moe.E
    experts = ", ".join(f"@expert{e}" for e in range(E))

    def gate(src, tag):
        return f"""
  %x3{tag} = tosa.reshape {src}, %s3 : ({_ty((T, d))}, !tosa.shape<3>) -> {_ty((1, T, d))}
  %l3{tag} = tosa.matmul %x3{tag}, %wg, %zp, %zp : ({_ty((1, T, d))}, {_ty((1, d, E))}, tensor<1xf32>, tensor<1xf32>) -> {_ty((1, T, E))}
  %l{tag} = tosa.reshape %l3{tag}, %s2 : ({_ty((1, T, E))}, !tosa.shape<2>) -> {_ty((T, E))}
  %p{tag} = tessel.softmax %l{tag} {{axis = -1 : i64}} : {_ty((T, E))}
  %y{tag} = compose.route {src}, %p{tag} {{experts = [{experts}], k = 2 : i64, renormalize}} : ({_ty((T, d))}, {_ty((T, E))}) -> {_ty((T, d))}"""

    text = "".join(moe.expert_mlir(e) for e in range(E)) + f"""
func.func @main(%x: {_ty((T, d))}) -> {_ty((T, d))} {{
  %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %wg = "tosa.const"() <{{values = {dense(moe.wg)} : {_ty((1, d, E))}}}> : () -> {_ty((1, d, E))}
  %s3 = tosa.const_shape {{values = dense<[1, {T}, {d}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {{values = dense<[{T}, {E}]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  {gate("%x", "a")}
  %h = tosa.tanh %ya : ({_ty((T, d))}) -> {_ty((T, d))}
  {gate("%h", "b")}
  return %yb : {_ty((T, d))}
}}
"""
    x = np.random.default_rng(11).normal(size=(T, d)).astype(np.float32)
    single = compile_mlir(tmp_path, text, "single")
    ep = compile_mlir(tmp_path, text, "ep2", "--expert-parallel=2")
    y1 = run_single(single, x, tmp_path)
    y2 = run_parallel(ep, 2, x, tmp_path)
    np.testing.assert_allclose(y2, y1, rtol=1e-5, atol=1e-6)
    ref = moe.reference(np.tanh(moe.reference(x)).astype(np.float32))
    np.testing.assert_allclose(y2, ref, rtol=1e-4, atol=1e-5)


def test_a_call_rejected_on_one_process_fails_on_all(tmp_path):
    # Rank 0 passes an input of the wrong shape: the runtime rejects it
    # there, and the other process, whose call is fine, fails too instead
    # of waiting for rank 0 in the call's collectives.
    moe = MoE(tokens=16, d=8, hidden=16, experts=4, k=2)
    (tmp_path / "model.mlir").write_text(moe.mlir())
    script = tmp_path / "bad.py"
    script.write_text(f"""
import sys
import numpy as np
sys.path.insert(0, {os.path.join(BUILD, "python")!r})
import tessel
m = tessel.compile(open({str(tmp_path / "model.mlir")!r}).read(),
                   expert_parallel=2)
x = np.zeros((15 if m.rank == 0 else 16, 8), np.float32)
try:
    m(x)
except tessel.InvocationError as e:
    print(f"rank {{m.rank}}: {{e}}")
y = m(np.ones((16, 8), np.float32))  # the processes still run together
print(f"rank {{m.rank}} then ran: {{y.shape}}")
""")
    p = mpirun(2, sys.executable, script, env=PYTHON_ENV)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "rank 0: function 'main': input 0 ('input0') has shape [15,8]" in p.stdout
    assert ("rank 1: function 'main': the call was rejected on another MPI "
            "process") in p.stdout
    assert "rank 0 then ran: (16, 8)" in p.stdout
    assert "rank 1 then ran: (16, 8)" in p.stdout
