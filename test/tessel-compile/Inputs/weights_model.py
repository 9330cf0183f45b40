"""Writes a model whose only work is y = x @ W with a 128x128 non-splat
weight (64 KiB of f32), for checking where weights land in the artifact."""
import numpy as np

n = 128
w = np.arange(n * n, dtype=np.float32).reshape(1, n, n) / (n * n)
rows = ", ".join("[" + ", ".join(f"{v:.9e}" for v in r) + "]" for r in w[0])
print(f"""func.func @main(%x: tensor<1x4x{n}xf32>) -> tensor<1x4x{n}xf32> {{
  %w = "tosa.const"() {{values = dense<[[{rows}]]> : tensor<1x{n}x{n}xf32>}} : () -> tensor<1x{n}x{n}xf32>
  %zp = "tosa.const"() {{values = dense<0.0> : tensor<1xf32>}} : () -> tensor<1xf32>
  %y = tosa.matmul %x, %w, %zp, %zp : (tensor<1x4x{n}xf32>, tensor<1x{n}x{n}xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x{n}xf32>
  return %y : tensor<1x4x{n}xf32>
}}""")
