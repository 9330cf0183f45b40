/* SparseLanes.h - the sparse f32 matmul in the lane order
 * (SparseLanesF32.c; TESSEL_KERNEL_LANES in Kernels.td). */
#ifndef TESSEL_KERNELS_SPARSELANES_H
#define TESSEL_KERNELS_SPARSELANES_H

#include <stdint.h>

/* tessel_kernel_sparse_matmul_f32's arguments (R = 1) where the flags say
 * LANES: aborts where the counts do not bear the order out. */
void tk_sparse_lanes(int64_t M, int64_t N, int64_t K, const float *a,
                     int64_t a_sm, int64_t a_sk, const int32_t *ptr,
                     const int32_t *kidx, const float *val, float *c,
                     int64_t c_sm, int64_t c_sn, const float *bias, float lo,
                     float hi, int32_t flags);

#endif
