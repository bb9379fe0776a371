// The CPU optimizer loops for AVX2 + FMA, the instruction set of ATen's AVX2 and AVX-512 kernels,
// which fuse the multiply-adds cpu_optimizer_kernels.h names. cmake/TrainerTorch.cmake compiles
// this file with -mavx2 -mfma -O3 -ffp-contract=off -fno-math-errno.
#define TRAINER_CPU_OPTIM_ISA avx2
#define TRAINER_CPU_OPTIM_FMA true
#include "cpu_optimizer_kernels.inc"
