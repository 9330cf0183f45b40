"""ONNX models with sequence and optional graph inputs and outputs for the
importer's and tessel-run's tests (generated at test time).

  make_sequence_model.py insert OUT.onnx    t = s.insert(p, x)
  make_sequence_model.py optional OUT.onnx  (has(o), get(o))
  make_sequence_model.py data DIR           DIR/s (a sequence of 2 and 3
                                            floats), DIR/want (with [9 9]
                                            inserted at 1), DIR/x.npy
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

F = TensorProto.FLOAT


def seq(shape):
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, shape))


def save(nodes, inputs, outputs, path):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]),
              path)


kind, out = sys.argv[1], sys.argv[2]
if kind == "insert":
    save([helper.make_node("SequenceInsert", ["s", "x", "p"], ["t"])],
         [helper.make_value_info("s", seq(["N"])),
          helper.make_tensor_value_info("x", F, [2]),
          helper.make_tensor_value_info("p", TensorProto.INT64, [])],
         [helper.make_value_info("t", seq(None))], out)
elif kind == "optional":
    o = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    save([helper.make_node("OptionalHasElement", ["o"], ["has"]),
          helper.make_node("OptionalGetElement", ["o"], ["v"])],
         [helper.make_value_info("o", o)],
         [helper.make_tensor_value_info("has", TensorProto.BOOL, []),
          helper.make_tensor_value_info("v", F, [2])], out)
elif kind == "data":
    a, b, x = (np.array([1, 2], np.float32), np.array([3, 4, 5], np.float32),
               np.array([9, 9], np.float32))
    for name, elems in (("s", [a, b]), ("want", [a, x, b])):
        os.makedirs(os.path.join(out, name), exist_ok=True)
        for i, e in enumerate(elems):
            np.save(os.path.join(out, name, "%d.npy" % i), e)
    np.save(os.path.join(out, "x.npy"), x)
    os.makedirs(os.path.join(out, "gap"), exist_ok=True)
    np.save(os.path.join(out, "gap", "1.npy"), a)
    os.makedirs(os.path.join(out, "twice"), exist_ok=True)
    np.save(os.path.join(out, "twice", "0.npy"), a)
    np.save(os.path.join(out, "twice", "00.npy"), a)
else:
    sys.exit("unknown kind " + kind)
