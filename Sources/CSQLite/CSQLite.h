// Umbrella header for the system's SQLite 3, and two shims for its variadic
// configuration calls, which Swift cannot call.
#pragma once
#include <sqlite3.h>

/// `sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0)`: no bulk page-cache
/// allocation per connection (about 80 KB, touched when it is set up); pages
/// are allocated as they are used. Process-wide; only before the first open.
static inline int scs_sqlite3_config_no_initial_page_cache(void) {
    return sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
}

/// `sqlite3_db_config(db, SQLITE_DBCONFIG_LOOKASIDE, NULL, 0, 0)`: no lookaside
/// allocator for this connection (about 120 KB, all of it touched when set up).
static inline int scs_sqlite3_disable_lookaside(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_LOOKASIDE, (void *)0, 0, 0);
}
