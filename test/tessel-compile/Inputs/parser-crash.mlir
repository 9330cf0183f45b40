// Malformed text on which upstream MLIR 22's parser crashes (linalg.transpose
// sets a null permutation after its own error; mlir-opt crashes too). Found
// by test/fuzz/FuzzMlirText.cpp; tessel-compile must report it.
func.func @f(%a: memref<2x3xf32>, %b: memref<3x2xf32>) {
  linalg.transpose ins(%a : memref<2x3xf32>) outs(%b : memref<3x2xf32>) permutation = [1,, 0]
  return
}
