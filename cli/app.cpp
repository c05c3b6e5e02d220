#include "cli/app.h"
