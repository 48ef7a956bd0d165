// Umbrella header for the system's SQLite 3.
#pragma once
#include <sqlite3.h>
