"""Composable models end to end: compose.route (grouped and dense
lowerings) against numpy and PyTorch, external memory against numpy, and
instance sharing."""
import re

import numpy as np
import pytest
import torch

import tessel
from compose_models import MemoryModel, MoE, dense, torch_moe


def assert_close(got, ref, rtol):
    """|got - ref| <= rtol * max|ref| elementwise (PyTorch-style rtol on the
    output's scale)."""
    ref = np.asarray(ref)
    scale = max(np.abs(ref).max(), 1e-6)
    err = np.abs(np.asarray(got, dtype=np.float64) - ref).max()
    assert err <= rtol * scale, f"max error {err} > {rtol} * {scale}"


@pytest.mark.parametrize("mode", ["grouped", "dense"])
@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("k,renormalize,capacity",
                         [(2, True, None), (1, False, None), (3, True, None),
                          (2, True, 10)])
def test_moe_route_matches_numpy(mode, opt, k, renormalize, capacity):
    m = MoE(tokens=32, d=16, hidden=24, experts=5, k=k,
            renormalize=renormalize, capacity=capacity, seed=k)
    x = np.random.default_rng(7).normal(size=(32, 16)).astype(np.float32)
    compiled = tessel.compile(m.mlir(), opt_level=opt, route_lowering=mode)
    assert_close(compiled(x), m.reference(x), 1e-5)


def test_capacity_drops_assignments():
    """With a capacity below the load, the output differs from the
    unlimited route exactly where the reference drops assignments."""
    capped = MoE(tokens=32, d=16, hidden=24, experts=4, k=2, capacity=8)
    free = MoE(tokens=32, d=16, hidden=24, experts=4, k=2)
    x = np.random.default_rng(3).normal(size=(32, 16)).astype(np.float32)
    ref_capped, ref_free = capped.reference(x), free.reference(x)
    assert np.abs(ref_capped - ref_free).max() > 0.1
    got = tessel.compile(capped.mlir(), route_lowering="grouped")(x)
    assert_close(got, ref_capped, 1e-5)


@pytest.mark.parametrize("tokens,mode", [(64, "grouped"), (64, "dense"),
                                         (1024, "grouped")])
def test_moe_route_matches_pytorch(tokens, mode):
    """The issue's MoE: 8 experts, top-2, d 256, hidden 512."""
    m = MoE(tokens=tokens, d=256, hidden=512, experts=8, k=2, seed=11)
    x = np.random.default_rng(5).normal(size=(tokens, 256)).astype(np.float32)
    with torch.no_grad():
        ref = torch_moe(m)(torch.from_numpy(x)).numpy()
    got = tessel.compile(m.mlir(), route_lowering=mode)(x)
    assert_close(got, ref, 1e-3)


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("slots", [32, 4])
def test_memory_model_matches_numpy(opt, slots):
    """Read at computed locations, content lookup, then an additive write
    (with 4 slots, several rows hit one slot and must all be added)."""
    mm = MemoryModel(rows=8, d=16, slots=slots, width=24)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    mem = rng.normal(size=(slots, 24)).astype(np.float32)
    y, new = tessel.compile(mm.mlir(), opt_level=opt)(x, mem)
    ref_y, ref_new = mm.reference(x, mem)
    assert_close(y, ref_y, 1e-5)
    assert_close(new, ref_new, 1e-5)


MEMORY_OPS = """
func.func @main(%mem: tensor<6x3xf32>, %loc: tensor<5xi32>, %v: tensor<5x3xf32>)
    -> (tensor<5x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>) {
  %r = compose.memory_read %mem[%loc] : tensor<6x3xf32>, tensor<5xi32> -> tensor<5x3xf32>
  %o = compose.memory_write %v into %mem[%loc] : tensor<5x3xf32>, tensor<5xi32> -> tensor<6x3xf32>
  %a = compose.memory_write %v into %mem[%loc] {mode = #compose.write_mode<add>}
      : tensor<5x3xf32>, tensor<5xi32> -> tensor<6x3xf32>
  return %r, %o, %a : tensor<5x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>
}
"""


@pytest.mark.parametrize("opt", [0, 3])
def test_memory_ops_semantics(opt):
    """Out-of-range locations clamp; the last overwrite of a slot wins;
    adds accumulate."""
    rng = np.random.default_rng(4)
    mem = rng.normal(size=(6, 3)).astype(np.float32)
    v = rng.normal(size=(5, 3)).astype(np.float32)
    loc = np.array([2, -7, 2, 40, 5], dtype=np.int32)
    r, o, a = tessel.compile(MEMORY_OPS, opt_level=opt)(mem, loc, v)
    slot = np.clip(loc, 0, 5)
    np.testing.assert_array_equal(r, mem[slot])
    over = mem.copy()
    for i, s in enumerate(slot):
        over[s] = v[i]
    np.testing.assert_array_equal(o, over)
    add = mem.astype(np.float64)
    np.add.at(add, slot, v)
    np.testing.assert_allclose(a, add, rtol=1e-6, atol=1e-6)
    assert o[2].tolist() == v[2].tolist()  # row 2 written twice: the last wins


def test_shared_instance_keeps_one_copy_of_weights():
    """Two task heads call one encoder instance: both see the same weights,
    and the compiled module holds them once."""
    rng = np.random.default_rng(9)
    w = rng.normal(size=(1, 8, 8)).astype(np.float32)
    text = f"""
compose.component @encoder(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {{
  %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %w = "tosa.const"() <{{values = {dense(w)} : tensor<1x8x8xf32>}}> : () -> tensor<1x8x8xf32>
  %s3 = tosa.const_shape {{values = dense<[1, -1, 8]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {{values = dense<[-1, 8]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  %x3 = tosa.reshape %x, %s3 : (tensor<?x8xf32>, !tosa.shape<3>) -> tensor<1x?x8xf32>
  %m = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x?x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x?x8xf32>
  %t = tosa.tanh %m : (tensor<1x?x8xf32>) -> tensor<1x?x8xf32>
  %y = tosa.reshape %t, %s2 : (tensor<1x?x8xf32>, !tosa.shape<2>) -> tensor<?x8xf32>
  compose.return %y : tensor<?x8xf32>
}}
compose.instance @shared of @encoder
func.func @main(%a: tensor<4x8xf32>, %b: tensor<6x8xf32>) -> (tensor<4x8xf32>, tensor<6x8xf32>) {{
  %ya = compose.call @shared(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %yb = compose.call @shared(%b) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  return %ya, %yb : tensor<4x8xf32>, tensor<6x8xf32>
}}
"""
    a = rng.normal(size=(4, 8)).astype(np.float32)
    b = rng.normal(size=(6, 8)).astype(np.float32)
    ya, yb = tessel.compile(text)(a, b)
    assert_close(ya, np.tanh(a.astype(np.float64) @ w[0]), 1e-5)
    assert_close(yb, np.tanh(b.astype(np.float64) @ w[0]), 1e-5)
    module = tessel.ir.Module.parse(text)
    lowered = str(tessel.passes.run(
        module, "tessel-model-to-linalg{opt-level=0}"))
    # Two inlined call sites, one weight constant after CSE.
    weights = re.findall(r"arith\.constant dense<[^>]*> : tensor<1x8x8xf32>",
                         lowered)
    assert len(weights) == 1, lowered
    assert lowered.count("math.tanh") == 2, lowered


def test_route_mode_is_checked():
    m = MoE(tokens=8, d=4, hidden=4, experts=2, k=1)
    with pytest.raises(ValueError, match="route_lowering"):
        tessel.compile(m.mlir(), route_lowering="sparse")


def test_route_verifier_errors_surface():
    m = MoE(tokens=8, d=4, hidden=4, experts=2, k=1)
    bad = m.mlir().replace("k = 1 : i64", "k = 3 : i64")
    with pytest.raises(tessel.CompileError, match="exceeds the number of experts"):
        tessel.compile(bad)


def symbolic_pipeline(we, table, decoder_external=False):
    """An encoder that emits discrete symbols (argmax of x We) and a decoder
    that embeds them (table lookup, tanh): two components joined by a
    `!sym.symbol<V>` interface. With `decoder_external`, the decoder is
    declared without a body: the encoder side of a separately compiled
    model, which calls the decoder of another artifact."""
    d, v = we.shape
    h = table.shape[1]
    if decoder_external:
        decoder = (f"compose.component private @decoder("
                   f"tensor<6x!sym.symbol<{v}>>) -> tensor<6x{h}xf32>")
    else:
        decoder = f"""compose.component @decoder(%s: tensor<6x!sym.symbol<{v}>>) -> tensor<6x{h}xf32> {{
  %t = "tosa.const"() <{{values = {dense(table)} : tensor<{v}x{h}xf32>}}> : () -> tensor<{v}x{h}xf32>
  %e = sym.embed %s, %t : tensor<6x!sym.symbol<{v}>>, tensor<{v}x{h}xf32> -> tensor<6x{h}xf32>
  %y = tosa.tanh %e : (tensor<6x{h}xf32>) -> tensor<6x{h}xf32>
  compose.return %y : tensor<6x{h}xf32>
}}"""
    return f"""
compose.component @encoder(%x: tensor<6x{d}xf32>) -> tensor<6x!sym.symbol<{v}>> {{
  %zp = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>
  %w = "tosa.const"() <{{values = {dense(we[None])} : tensor<1x{d}x{v}xf32>}}> : () -> tensor<1x{d}x{v}xf32>
  %s3 = tosa.const_shape {{values = dense<[1, 6, {d}]> : tensor<3xindex>}} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {{values = dense<[6, {v}]> : tensor<2xindex>}} : () -> !tosa.shape<2>
  %x3 = tosa.reshape %x, %s3 : (tensor<6x{d}xf32>, !tosa.shape<3>) -> tensor<1x6x{d}xf32>
  %l3 = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x6x{d}xf32>, tensor<1x{d}x{v}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x{v}xf32>
  %l = tosa.reshape %l3, %s2 : (tensor<1x6x{v}xf32>, !tosa.shape<2>) -> tensor<6x{v}xf32>
  %s = sym.argmax %l : tensor<6x{v}xf32> -> tensor<6x!sym.symbol<{v}>>
  compose.return %s : tensor<6x!sym.symbol<{v}>>
}}
{decoder}
func.func @main(%x: tensor<6x{d}xf32>) -> tensor<6x{h}xf32> {{
  %s = compose.call @encoder(%x) : (tensor<6x{d}xf32>) -> tensor<6x!sym.symbol<{v}>>
  %y = compose.call @decoder(%s) : (tensor<6x!sym.symbol<{v}>>) -> tensor<6x{h}xf32>
  return %y : tensor<6x{h}xf32>
}}
"""


def test_symbolic_interface_separately_compiled_components(tmp_path):
    """The encoder side (encoder + main) and the decoder compile to two
    artifacts; the encoder side calls the decoder through an import (the
    symbols cross as i32 ids of a checked vocabulary), the runtime links
    them at load time, and the result equals the single-graph compilation.
    Recompiling only the decoder with retrained weights changes the output
    to numpy's reference for the new weights, while the encoder side's file
    stays byte for byte the same."""
    rng = np.random.default_rng(8)
    we = rng.normal(size=(5, 12)).astype(np.float32)
    table = rng.normal(size=(12, 4)).astype(np.float32)
    retrained = rng.normal(size=(12, 4)).astype(np.float32)
    x = rng.normal(size=(6, 5)).astype(np.float32)
    ids = np.argmax(x @ we, axis=1)

    whole = tessel.compile(symbolic_pipeline(we, table))(x)
    np.testing.assert_allclose(whole, np.tanh(table[ids]), rtol=1e-6, atol=1e-6)

    encoder_side = tessel.compile(
        symbolic_pipeline(we, table, decoder_external=True))
    encoder_side.save(tmp_path / "encoder.so")
    decoder = tessel.compile(symbolic_pipeline(we, table), component="decoder")
    assert decoder.signature.inputs[0].dtype == np.int32
    assert decoder.signature.inputs[0].vocab == 12
    decoder.save(tmp_path / "decoder.so")
    (tmp_path / "model.composition").write_text(
        "tessel-composition 1\nartifact encoder.so\nartifact decoder.so\n")

    # The encoder side alone cannot run: its import is not linked.
    with pytest.raises(tessel.InvocationError,
                       match="calls import 'decoder', which is not linked"):
        tessel.load(tmp_path / "encoder.so")(x)

    linked = tessel.load_composition(tmp_path / "model.composition")
    assert isinstance(linked, tessel.LinkedModule)
    assert str(linked.signature) == "main(input0: 6x5xf32) -> (output0: 6x4xf32)"
    assert linked.functions == ["main", "decoder"]
    np.testing.assert_array_equal(linked(x), whole)
    listed = tessel.link([tmp_path / "decoder.so", tmp_path / "encoder.so"])
    np.testing.assert_array_equal(listed(x), whole)
    # tessel.load takes a composition file too.
    np.testing.assert_array_equal(
        tessel.load(tmp_path / "model.composition")(x), whole)

    encoder_bytes = (tmp_path / "encoder.so").read_bytes()
    new_decoder = tessel.compile(symbolic_pipeline(we, retrained),
                                 component="decoder")
    # save() renames a new file over the old one, which `linked` still has
    # loaded.
    new_decoder.save(tmp_path / "decoder.so")
    swapped = tessel.load_composition(tmp_path / "model.composition")(x)
    np.testing.assert_allclose(swapped, np.tanh(retrained[ids]), rtol=1e-6,
                               atol=1e-6)
    assert np.abs(swapped - whole).max() > 0.1
    assert (tmp_path / "encoder.so").read_bytes() == encoder_bytes
    # The composition loaded before the swap keeps its decoder.
    np.testing.assert_array_equal(linked(x), whole)


def test_moe_experts_as_separate_artifacts(tmp_path):
    """The issue's MoE (8 experts, top-2, d 256, hidden 512) with each
    expert compiled to its own artifact: the router calls them through
    imports whose token dimension is named T (artifact ABI v3) and bound at
    each call from the rows routed to the expert. Linked, it matches
    PyTorch; retraining one expert and recompiling only its artifact gives
    PyTorch's output for the new weights, the other files unchanged."""
    m = MoE(tokens=64, d=256, hidden=512, experts=8, k=2, seed=11)
    x = np.random.default_rng(5).normal(size=(64, 256)).astype(np.float32)
    with torch.no_grad():
        ref = torch_moe(m)(torch.from_numpy(x)).numpy()
    tessel.compile(m.mlir(external_experts=True)).save(tmp_path / "router.so")
    paths = [tmp_path / "router.so"]
    for e in range(m.E):
        expert = tessel.compile(m.mlir(), component=f"expert{e}")
        paths.append(tmp_path / f"expert{e}.so")
        expert.save(paths[-1])
    assert expert.signature.inputs[0].shape == ("T", 256)
    assert str(expert.signature) == "expert7(input0: Tx256xf32) -> (output0: Tx256xf32)"
    # An expert alone runs on any number of tokens.
    np.testing.assert_allclose(expert(x[:5]), m.expert_ref(7, x[:5]),
                               rtol=1e-4, atol=1e-4)
    assert expert.random_inputs(dims={"T": 3})[0].shape == (3, 256)
    with pytest.raises(ValueError, match="dynamic dimension 'T'; pass its size"):
        expert.random_inputs()

    linked = tessel.link(paths)
    assert_close(linked(x), ref, 1e-3)
    np.testing.assert_allclose(linked(x), tessel.compile(m.mlir())(x),
                               rtol=1e-5, atol=1e-5)

    before = {p.name: p.read_bytes() for p in paths}
    retrained = MoE(tokens=64, d=256, hidden=512, experts=8, k=2, seed=11)
    rng = np.random.default_rng(99)
    retrained.w1[3] = rng.uniform(-0.06, 0.06, retrained.w1[3].shape).astype(np.float32)
    retrained.w2[3] = rng.uniform(-0.04, 0.04, retrained.w2[3].shape).astype(np.float32)
    tessel.compile(retrained.mlir(), component="expert3").save(tmp_path / "expert3.so")
    with torch.no_grad():
        ref_new = torch_moe(retrained)(torch.from_numpy(x)).numpy()
    swapped = tessel.link(paths)(x)
    assert_close(swapped, ref_new, 1e-3)
    assert np.abs(swapped - ref).max() > 1e-2
    for p in paths:
        assert (p.read_bytes() == before[p.name]) == (p.name != "expert3.so")


def test_link_errors_name_the_import(tmp_path):
    """A decoder whose symbol vocabulary differs (same i32 ids, same shape)
    is rejected at link time, as is a composition without it; a malformed
    composition file names its line."""
    rng = np.random.default_rng(3)
    we = rng.normal(size=(5, 12)).astype(np.float32)
    encoder_side = tessel.compile(
        symbolic_pipeline(we, np.zeros((12, 4), np.float32),
                          decoder_external=True))
    encoder_side.save(tmp_path / "encoder.so")
    we13 = rng.normal(size=(5, 13)).astype(np.float32)
    other = tessel.compile(
        symbolic_pipeline(we13, np.zeros((13, 4), np.float32)),
        component="decoder")
    other.save(tmp_path / "decoder13.so")
    with pytest.raises(tessel.InvocationError,
                       match=r"input 0 differs in symbol vocabulary \(import: "
                             r"input0: i32 \[6\] vocab=12; function: input0: "
                             r"i32 \[6\] vocab=13\)"):
        tessel.link([tmp_path / "encoder.so", tmp_path / "decoder13.so"])
    with pytest.raises(tessel.InvocationError,
                       match="imports 'decoder', which no artifact of the "
                             "composition exports"):
        tessel.link([tmp_path / "encoder.so"])
    bad = tmp_path / "bad.composition"
    bad.write_text("tessel-composition 1\nartifact encoder.so\nlink x\n")
    with pytest.raises(tessel.InvocationError,
                       match="line 3: unknown record 'link'"):
        tessel.load_composition(bad)
    with pytest.raises(FileNotFoundError):
        tessel.link([tmp_path / "nope.so"])
    with pytest.raises(TypeError, match="several artifacts"):
        tessel.link([tmp_path / "decoder13.so"]).save(tmp_path / "x.so")
