// Umbrella header: everything a user of the fitspeed library needs.
#ifndef FITSPEED_FITSPEED_H_
#define FITSPEED_FITSPEED_H_

#include "fitspeed/core/error.h"
#include "fitspeed/core/sample.h"
#include "fitspeed/fit/fit.h"
#include "fitspeed/io/input.h"
#include "fitspeed/io/output.h"

#endif  // FITSPEED_FITSPEED_H_
