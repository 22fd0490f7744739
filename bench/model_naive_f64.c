/* SPDX-License-Identifier: Apache-2.0 */
/* model_naive.c in double precision: the reference of the model rows (bench/model_naive.h). */
#define NAIVE_REAL double
#define NAIVE_NAME(x) naive_llama_f64##x
#define NAIVE_SQRT sqrt
#define NAIVE_EXP exp
#define NAIVE_POW pow
#define NAIVE_COS cos
#define NAIVE_SIN sin
#include "model_naive.c"
