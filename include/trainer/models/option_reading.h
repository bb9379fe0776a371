// Reading a model's options from its config section, with errors that point at the key's
// file:line (or override) and say how to fix it. Used by the built-in models' from_config; users'
// factories may use it too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/config/config_view.h"
#include "trainer/models/model.h"
#include "trainer/options/option_reader.h"

namespace trainer::models {

// Where `key` of `view` was set ("configs/model/mlp.yaml:3", "override 'model.x=3'"), falling
// back to the key's full path, or the section's own location when the key is absent.
std::string option_where(const config::ConfigView& view, std::string_view key);

// view[key] as an int >= 1; `fallback` when absent or null.
int64_t read_positive_int(const config::ConfigView& view, std::string_view key, int64_t fallback);
// view[key] as a list of ints >= 1, at least one; `fallback` when absent or null.
std::vector<int64_t> read_positive_int_list(const config::ConfigView& view, std::string_view key,
                                            std::vector<int64_t> fallback);
// view[key] as a dropout probability in [0, 1); `fallback` when absent or null.
double read_dropout(const config::ConfigView& view, std::string_view key, double fallback);

// `num_classes` from the model config when set, which must then agree with the data's.
int64_t read_num_classes(const config::ConfigView& view, const InputSpec& spec);

// `in_channels` from the model config when set, which must then equal sample_shape[0] of an image
// sample shape [C, H, W] (checked too). `model` names the model in messages.
int64_t read_in_channels(const config::ConfigView& view, const InputSpec& spec, const std::string& model);

// The same two, for the built-in models, through their declarations (src/options/model_section.cpp).
int64_t read_num_classes(const options::OptionReader& reader, const InputSpec& spec);
int64_t read_in_channels(const options::OptionReader& reader, const InputSpec& spec, const std::string& model);

}  // namespace trainer::models
