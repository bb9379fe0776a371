// The CPU optimizer loops for any x86-64 CPU, rounding as ATen's DEFAULT kernels do (no fused
// multiply-add). cmake/TrainerTorch.cmake compiles this file with -O3 -ffp-contract=off
// -fno-math-errno.
#define TRAINER_CPU_OPTIM_ISA generic
#define TRAINER_CPU_OPTIM_FMA false
#include "cpu_optimizer_kernels.inc"
