// Allowed: a header beside this file (src/model/kinds/kind.h) is model's own.
#include "kinds/kind.h"
