// Refused: a header whose layer cannot be told.
#include "nowhere.h"
