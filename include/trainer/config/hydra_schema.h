// Hydra's typed schema for the `hydra` node (HydraConf, hydra/conf/__init__.py of Hydra 1.3): the
// fields a user sets, converted as OmegaConf converts a value assigned to a typed field, and
// refused where OmegaConf refuses it. Without it `hydra.job.chdir=yes` stayed the string 'yes'
// (so the job ran in the launch directory) where Hydra reads true, and `hydra.run.dir=null` was
// accepted where Hydra says the field is not Optional.
#pragma once

#include "trainer/config/node.h"

namespace trainer::config {

// Converts in place, field by field: bool fields take true/false, yes/no, on/off, y/n and ints
// (non-zero is true); str fields take any scalar as Python's str() writes it (1 -> '1'); int
// fields take ints and their decimal text; list and dict of str convert their items; `mode` takes
// RUN or MULTIRUN (or 1, 2). `???`, interpolations and absent fields are left as they are.
// Throws trainer::Error naming the value's origin and the field's type otherwise.
void apply_hydra_schema(Node& hydra);

}  // namespace trainer::config
