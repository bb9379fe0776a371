// The declaration files, one per config group (src/options/<group>_section.cpp), and the table
// that gathers them. Read the table through option_table.h; these are what it is made of.
#pragma once

#include <vector>

#include "trainer/options/option.h"

namespace trainer::options {

std::vector<Section> root_sections();       // seed, precision, ckpt_path, ...
std::vector<Section> trainer_sections();    // trainer.*, trainer.grad_scaler.*, trainer.profiler_schedule.*
std::vector<Section> callbacks_sections();  // callbacks.model_checkpoint.*, early_stopping.*, ...
std::vector<Section> logger_sections();     // logger.csv.*, logger.tensorboard.*
std::vector<Section> data_sections();       // data.* for fashion_mnist and synthetic
std::vector<Section> model_sections();      // model.* for mlp, cnn, resnet, torchscript
std::vector<Section> optimizer_sections();  // optimizer.* for adam, adamw, sgd
std::vector<Section> scheduler_sections();  // scheduler.* for none, step, cosine, warmup_cosine, onecycle
std::vector<Section> tuner_sections();      // tuner.*
std::vector<Section> predict_sections();    // predict.*
std::vector<Section> pack_sections();       // pack.*: trainer data pack

}  // namespace trainer::options
