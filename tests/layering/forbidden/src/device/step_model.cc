// Refused: the runtime device layer includes the evidence layer.
#include "fitspeed/device/step_model.h"
#include "fitspeed/evidence/kernels.h"
