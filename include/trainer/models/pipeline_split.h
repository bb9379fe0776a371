// Where a model's pieces (PipelineUnit) are cut into pipeline stages: at the module names of
// trainer.pipeline.split_points, or balanced by parameter count or by measured time. Torch-free:
// stages are ranges of piece indices, [first[s], first[s+1]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainer::models {

// The first piece of each stage, cutting `sizes` (parameters per piece, or with
// trainer.pipeline.balance=time nanoseconds per piece) into `stages` contiguous runs whose largest
// sum is as small as can be; among equal cuts, earlier stages take as many
// pieces as they can (so a ReLU or dropout stays with the layer before it). Every stage gets at
// least one piece. Throws trainer::Error naming trainer.pipeline.stages when there are fewer
// pieces than stages.
std::vector<size_t> split_by_parameters(const std::vector<int64_t>& sizes, int stages, const std::string& model);

// The first piece of each stage at the named pieces (in order, none the first piece). Throws
// trainer::Error naming trainer.pipeline.split_points and listing the names it may use.
std::vector<size_t> split_at_names(const std::vector<std::string>& names, const std::vector<std::string>& split_points,
                                   const std::string& model);

}  // namespace trainer::models
