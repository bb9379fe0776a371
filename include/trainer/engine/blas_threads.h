// OpenBLAS's own thread pool beside ATen's OpenMP pool. Debian's LibTorch 1.13 takes its matrix
// products from OpenBLAS, and Debian's default OpenBLAS (libopenblas0-pthread) runs them on a
// pthread pool of its own. Both pools spin on the same cores after each call, so a matrix product
// and the elementwise operators around it keep taking the cores from each other. Measured on a
// 2-core machine (BENCHMARKS.md "Roofline of the CPU step"): with OpenBLAS on one thread
// the mlp's step went from 5.8 to 3.5 ms and the cnn's from 81 to 62 ms (medians of 6 runs).
#pragma once

#include <string>

namespace trainer::engine {

// Where the loaded OpenBLAS runs its own pthread pool with more than one thread, ATen runs more
// than one intra-op thread, and neither OPENBLAS_NUM_THREADS nor GOTO_NUM_THREADS is set: sets
// OpenBLAS to one thread. Returns what it did for the start-up log line ("" when no OpenBLAS with
// a pool of its own is loaded; an OpenMP build of OpenBLAS shares ATen's pool). The wheel build's
// process holds Debian's OpenBLAS too (OpenCV's), though its matrix products are MKL's.
std::string limit_openblas_pool(int intra_op_threads);

}  // namespace trainer::engine
