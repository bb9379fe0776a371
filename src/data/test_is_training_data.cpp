#include "trainer/data/test_is_training_data.h"

#include "trainer/util/log.h"
#include "trainer/util/same_file.h"

namespace trainer::data {

void warn_if_test_is_training_data(const TestAndTraining& keys, const std::string& test, const std::string& training,
                                   bool checkpoint) {
  if (!same_file(test, training)) return;
  const std::string which = checkpoint ? "the " + keys.file + " the checkpoint was trained on (" + keys.train_key + ")"
                                       : keys.train_key + (keys.train_key.back() == 's' ? "' " : "'s ") + keys.file;
  log::warning(keys.test_key + ": " + test + " is " + which + ", so the test " + keys.items + " are the " + keys.items +
               " trained and validated on: test metrics say how well the model fits them, not how it does on " +
               keys.items + " it has not seen; give " + keys.held_out);
}

}  // namespace trainer::data
