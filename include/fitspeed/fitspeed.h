// Umbrella header: every public header of the fitspeed library, which is what
// `cmake --install` installs (docs/design.md, "Public API").
#ifndef FITSPEED_FITSPEED_H_
#define FITSPEED_FITSPEED_H_

#include "fitspeed/core/comm.h"
#include "fitspeed/core/error.h"
#include "fitspeed/core/output_format.h"
#include "fitspeed/core/precision.h"
#include "fitspeed/core/prediction_interval.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/device/calibration.h"
#include "fitspeed/device/device.h"
#include "fitspeed/device/frameworks.h"
#include "fitspeed/device/intervals.h"
#include "fitspeed/device/step_model.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/io/input.h"
#include "fitspeed/io/output.h"
#include "fitspeed/model/network.h"
#include "fitspeed/model/network_cost.h"
#include "fitspeed/model/network_json.h"
#include "fitspeed/model/report.h"
#include "fitspeed/model/zoo.h"
#include "fitspeed/project/config.h"
#include "fitspeed/project/cost.h"
#include "fitspeed/project/epochs.h"
#include "fitspeed/project/link_logs.h"
#include "fitspeed/project/links.h"
#include "fitspeed/project/model_params.h"
#include "fitspeed/project/plan.h"
#include "fitspeed/project/report.h"
#include "fitspeed/project/scaling.h"
#include "fitspeed/project/whatif.h"
#include "fitspeed/timing/data_parallel.h"
#include "fitspeed/timing/host.h"
#include "fitspeed/timing/sweep.h"

#endif  // FITSPEED_FITSPEED_H_
