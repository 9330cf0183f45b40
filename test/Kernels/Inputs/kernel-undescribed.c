#include "tessel/Kernels/tessel_kernels.h"
void tessel_kernel_frobnicate_f32(float *out) {}
