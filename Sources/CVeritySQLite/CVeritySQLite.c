#include "CVeritySQLite.h"

// The SQLite that SQLiteNIO compiles into the binary names its functions with this prefix.
extern int sqlite_nio_sqlite3_db_config(void *connection, int option, ...);

// From sqlite3.h.
#define SQLITE_DBCONFIG_ENABLE_QPSG 1007

int verity_sqlite_enable_query_planner_stability(void *connection) {
    int enabled = 0;
    return sqlite_nio_sqlite3_db_config(connection, SQLITE_DBCONFIG_ENABLE_QPSG, 1, &enabled);
}
