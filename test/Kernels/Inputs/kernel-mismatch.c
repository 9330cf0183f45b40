#include "tessel/Kernels/tessel_kernels.h"
/* `cols` is int32_t here, int64_t in Kernels.td. */
void tessel_kernel_transpose_f32(int64_t batch, int64_t rows, int32_t cols,
                                 const float *in, float *out) {}
