// SPDX-License-Identifier: Apache-2.0
// Valid C99 and C++ (shared by the GoogleTest suite and the C consumer).
// Transcribed by hand from ../shared/seeds/002_f7cad2f9a331971b.txt (numpy notebook, 3 tokens, d_model = 4).
// Inputs: `attention_input` (In [203]) and the integer weights Qw, Kw, Vw drawn with np.random.seed(12)
// (In [285]-[287]). Expected: Q, K, V as printed (In [290]-[292]).
// The notebook's final cell (In [301]) is wrong and is NOT a test expectation: scipy's softmax there runs over
// the whole 3x3 matrix, so scores of ~1e4 underflow and two rows print as zeros. Row-wise, the scores
// Q K^T / 2 of each row differ by hundreds, so each row's softmax is one-hot on its largest score and the
// attention output row is the V row of that key; which key that is comes from the printed Q and K
// (see seeds_test.cc), not from the code under test.
#ifndef EDGEATTN_TESTS_DATA_SEED_002_H_
#define EDGEATTN_TESTS_DATA_SEED_002_H_

static const float seed002_attention_input[3][4] = {{2.84147098f, 4.54030231f, 6.0001f, 8.99999999f},
                                                    {8.90929743f, 9.58385316f, 4.0002f, 6.99999998f},
                                                    {12.14112001f, 1.0100075f, 4.0003f, 4.99999996f}};

static const float seed002_qw[4][4] = {{3, 3, 1, 2}, {3, 3, 4, 0}, {1, 4, 1, 2}, {3, 2, 0, 0}};
static const float seed002_kw[4][4] = {{4, 2, 1, 3}, {4, 3, 1, 0}, {2, 2, 0, 4}, {3, 1, 0, 0}};
static const float seed002_vw[4][4] = {{3, 3, 1, 3}, {0, 1, 1, 0}, {4, 0, 4, 1}, {3, 4, 3, 3}};

static const double seed002_q[3][4] = {{55.14541986, 64.14571986, 27.00278021, 17.68314197},
                                       {80.47965171, 85.48025173, 51.24491008, 25.81899485},
                                       {58.4536824, 65.45458244, 20.18145002, 32.28284002}};
static const double seed002_k[3][4] = {{68.52729315, 40.30404888, 7.38177329, 32.52481295},
                                       {102.9730023, 61.57055432, 18.49315059, 42.72869228},
                                       {75.60510991, 40.31286248, 13.15112751, 52.42456002}};
static const double seed002_v[3][4] = {{59.52481294, 49.06471524, 58.38217328, 41.52451294},
                                       {63.72869222, 64.31174536, 55.49395053, 51.72809222},
                                       {67.42455989, 57.43336735, 44.15232738, 55.42365989}};

#endif  // EDGEATTN_TESTS_DATA_SEED_002_H_
