// SPDX-License-Identifier: Apache-2.0
// Valid C99 and C++ (shared by the GoogleTest suite and the C consumer).
// Transcribed by hand from ../shared/seeds/003_7545103c0ae560a8.txt (numpy/scipy notebook, general attention).
// Inputs: the one-hot words (In [4]) and W_Q, W_K, W_V = randint(3, (3, 3)) with numpy seed 42, as listed in
// ../shared/seeds/README.md. Expected: the 4x3 attention output printed by the last cell (In [29]) and the first
// word's weights (In [21]); scale 1/sqrt(3). numpy printed 8 decimals.
#ifndef EDGEATTN_TESTS_DATA_SEED_003_H_
#define EDGEATTN_TESTS_DATA_SEED_003_H_

static const float seed003_words[4][3] = {{1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}};
static const float seed003_wq[3][3] = {{2, 0, 2}, {2, 0, 0}, {2, 1, 2}};
static const float seed003_wk[3][3] = {{2, 2, 2}, {0, 2, 1}, {0, 1, 1}};
static const float seed003_wv[3][3] = {{1, 1, 0}, {0, 1, 1}, {0, 0, 0}};

static const double seed003_first_word_weights[4] = {0.23608986, 0.00738988, 0.74913039, 0.00738988};

static const double seed003_attention[4][3] = {{0.98522025, 1.74174051, 0.75652026},
                                               {0.90965265, 1.40965265, 0.5},
                                               {0.99851226, 1.75849334, 0.75998108},
                                               {0.99560386, 1.90407309, 0.90846923}};

#endif  // EDGEATTN_TESTS_DATA_SEED_003_H_
