"""Writes OUT.onnx: t = SequenceInsert(s, x) for a sequence input `s`
whose elements' rank is not declared and a vector `x`; and the npy files
of a sequence holding a scalar and a 2x1 matrix into DIR (0.npy, 1.npy)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

out, seq_dir = sys.argv[1], sys.argv[2]
seq = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
g = helper.make_graph(
    [helper.make_node("SequenceInsert", ["s", "x"], ["t"])], "g",
    [helper.make_value_info("s", seq),
     helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    [helper.make_value_info("t", seq)])
with open(out, "wb") as f:
    f.write(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
            .SerializeToString())
os.makedirs(seq_dir, exist_ok=True)
np.save(os.path.join(seq_dir, "0.npy"), np.array(7, np.float32))
np.save(os.path.join(seq_dir, "1.npy"), np.array([[1], [2]], np.float32))
