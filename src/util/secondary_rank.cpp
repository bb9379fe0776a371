#include "trainer/util/secondary_rank.h"

#include <cstdlib>

namespace trainer {

bool is_secondary_rank() {
  const char* rank = std::getenv("RANK");
  if (rank != nullptr && rank[0] != '\0') return std::atoi(rank) > 0;
  const char* procid = std::getenv("SLURM_PROCID");
  const char* ntasks = std::getenv("SLURM_NTASKS");
  return procid != nullptr && ntasks != nullptr && std::atoi(ntasks) > 1 && std::atoi(procid) > 0;
}

}  // namespace trainer
