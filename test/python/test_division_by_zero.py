"""Integer division and remainder by zero (tessel-check-divisors): the call
fails with a clear error instead of the process dying of SIGFPE; INT_MIN /
-1, which traps too, gives the wrapped results numpy gives; other values
match numpy. Through ONNX (Div, Mod) and an MLIR model (tosa.intdiv)."""
import os
import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel
from conftest import BIN

ONNX = {np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}


def binary(op, dtype, **attrs):
    t = ONNX[dtype]
    g = helper.make_graph([helper.make_node(op, ["a", "b"], ["y"], **attrs)], "d",
                          [helper.make_tensor_value_info("a", t, [4]),
                           helper.make_tensor_value_info("b", t, [4])],
                          [helper.make_tensor_value_info("y", t, [4])])
    return tessel.compile(helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_div_mod_by_zero_fail_the_call(dtype):
    div, mod = binary("Div", dtype), binary("Mod", dtype)
    a = np.array([7, -7, 9, np.iinfo(dtype).min], dtype)
    b = np.array([2, 2, -4, -1], dtype)
    # Division truncates (as ONNX Runtime's); INT_MIN / -1 wraps to INT_MIN
    # (as numpy's does) and its remainder is 0.
    np.testing.assert_array_equal(div(a, b),
                                  np.array([3, -3, -2, np.iinfo(dtype).min], dtype))
    np.testing.assert_array_equal(mod(a, b), np.mod(a, b))
    zero = np.array([1, 0, 1, 1], dtype)
    for f in (div, mod):
        with pytest.raises(tessel.InvocationError, match="division or remainder by zero"):
            f(a, zero)
    # The artifact stays usable after the failed call.
    np.testing.assert_array_equal(mod(a, b), np.mod(a, b))


def test_mlir_intdiv_by_zero_through_tessel_run(tmp_path):
    src = tmp_path / "m.mlir"
    src.write_text("""
func.func @main(%x: tensor<3xi32>, %y: tensor<3xi32>) -> tensor<3xi32> {
  %0 = tosa.intdiv %x, %y : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
""")
    lib = tmp_path / "m.so"
    subprocess.run([os.path.join(BIN, "tessel-compile"), str(src), "-o", str(lib)],
                   check=True)
    run = os.path.join(BIN, "tessel-run")
    ok = subprocess.run([run, str(lib), "--input=3xi32=7 -8 9", "--input=3xi32=2 2 -3",
                         "--output=-"], capture_output=True, text=True)
    assert ok.returncode == 0 and "3 -4 -3" in ok.stdout.replace("[", "").replace("]", ""), ok
    bad = subprocess.run([run, str(lib), "--input=3xi32=7 -8 9", "--input=3xi32=2 0 -3"],
                         capture_output=True, text=True)
    assert bad.returncode == 1, bad
    assert "division or remainder by zero" in bad.stderr, bad.stderr
