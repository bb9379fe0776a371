// The CPUs this process may run on (its affinity mask: taskset, SLURM's cgroup, a local sweep's
// share), not the machine's count: threads sized by std::thread::hardware_concurrency() on a shared
// node oversubscribe the cores the job was given.
#pragma once

#include <vector>

namespace trainer {

// The CPU numbers in this process's affinity mask, ascending; {0} if the mask cannot be read.
std::vector<int> usable_cpus();

// How many CPUs this process may run on, at least 1.
int usable_cores();

}  // namespace trainer
