"""Writes a two-component model joined by a symbolic interface, for
composition.test: the encoder side (an encoder component and `main`, which
calls the decoder as an external component), decoder sources (original,
retrained, and two with a mismatching interface), an input, numpy
references and composition files.

usage: make_composition.py OUTDIR
"""
import os
import sys

import numpy as np

T, D, V, H = 6, 4, 8, 3


def dense(a):
    return 'dense<"0x' + np.ascontiguousarray(a).tobytes().hex().upper() + '">'


def decoder_interface(v=V, rows=T):
    return (f"(%s: tensor<{rows}x!sym.symbol<{v}>> {{tessel.name = \"ids\"}}) "
            f"-> (tensor<{rows}x{H}xf32> {{tessel.name = \"emb\"}})")


def encoder_side(we):
    return f"""
// The decoder is compiled into another artifact: an import.
compose.component private @decoder(tensor<{T}x!sym.symbol<{V}>> {{tessel.name = "ids"}}) -> (tensor<{T}x{H}xf32> {{tessel.name = "emb"}})
compose.component @encoder(%x: tensor<{T}x{D}xf32>) -> tensor<{T}x!sym.symbol<{V}>> {{
  %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %w = "tosa.const"() <{{values = {dense(we[None])} : tensor<1x{D}x{V}xf32>}}> : () -> tensor<1x{D}x{V}xf32>
  %s3 = tosa.const_shape {{values = dense<[1, {T}, {D}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {{values = dense<[{T}, {V}]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  %x3 = tosa.reshape %x, %s3 : (tensor<{T}x{D}xf32>, !tosa.shape<3>) -> tensor<1x{T}x{D}xf32>
  %l3 = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x{T}x{D}xf32>, tensor<1x{D}x{V}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x{T}x{V}xf32>
  %l = tosa.reshape %l3, %s2 : (tensor<1x{T}x{V}xf32>, !tosa.shape<2>) -> tensor<{T}x{V}xf32>
  %s = sym.argmax %l : tensor<{T}x{V}xf32> -> tensor<{T}x!sym.symbol<{V}>>
  compose.return %s : tensor<{T}x!sym.symbol<{V}>>
}}
func.func @main(%x: tensor<{T}x{D}xf32> {{tessel.name = "x"}}) -> (tensor<{T}x{H}xf32> {{tessel.name = "y"}}) {{
  %s = compose.call @encoder(%x) : (tensor<{T}x{D}xf32>) -> tensor<{T}x!sym.symbol<{V}>>
  %y = compose.call @decoder(%s) : (tensor<{T}x!sym.symbol<{V}>>) -> tensor<{T}x{H}xf32>
  return %y : tensor<{T}x{H}xf32>
}}
"""


def decoder(table, v=V, rows=T):
    return f"""
compose.component @decoder{decoder_interface(v, rows)} {{
  %t = "tosa.const"() <{{values = {dense(table)} : tensor<{v}x{H}xf32>}}> : () -> tensor<{v}x{H}xf32>
  %e = sym.embed %s, %t : tensor<{rows}x!sym.symbol<{v}>>, tensor<{v}x{H}xf32> -> tensor<{rows}x{H}xf32>
  %y = tosa.tanh %e : (tensor<{rows}x{H}xf32>) -> tensor<{rows}x{H}xf32>
  compose.return %y : tensor<{rows}x{H}xf32>
}}
"""


def composition(*lines):
    return "tessel-composition 1\n" + "".join(l + "\n" for l in lines)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(21)
    we = rng.normal(size=(D, V)).astype(np.float32)
    table = rng.normal(size=(V, H)).astype(np.float32)
    retrained = rng.normal(size=(V, H)).astype(np.float32)
    x = rng.normal(size=(T, D)).astype(np.float32)
    ids = np.argmax(x.astype(np.float64) @ we, axis=1)
    files = {
        "encoder_side.mlir": encoder_side(we),
        "decoder.mlir": decoder(table),
        "decoder_retrained.mlir": decoder(retrained),
        "decoder_bad_shape.mlir": decoder(table, rows=T - 1),
        "decoder_bad_vocab.mlir": decoder(
            np.concatenate([table, table[:1]]), v=V + 1),
        "model.composition": composition(
            "# the encoder side calls the decoder through its import table",
            "artifact encoder.so", "artifact decoder.so", "entry main"),
        "missing.composition": composition(
            "artifact encoder.so", "artifact nope.so"),
        "malformed.composition": composition(
            "artifact encoder.so", "artefact decoder.so"),
        "bad_shape.composition": composition(
            "artifact encoder.so", "artifact decoder_bad_shape.so"),
        "bad_vocab.composition": composition(
            "artifact encoder.so", "artifact decoder_bad_vocab.so"),
        "bad_entry.composition": composition(
            "artifact encoder.so", "artifact decoder.so", "entry decode"),
    }
    for name, text in files.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "expected.npy"),
            np.tanh(table[ids]).astype(np.float32))
    np.save(os.path.join(out, "expected_retrained.npy"),
            np.tanh(retrained[ids]).astype(np.float32))
    # The retrained table changes the output for these inputs.
    assert np.abs(np.tanh(table[ids]) - np.tanh(retrained[ids])).max() > 0.1


if __name__ == "__main__":
    main()
