#ifndef CVERITY_SQLITE_H
#define CVERITY_SQLITE_H

/// Turns on SQLite's query planner stability guarantee for a connection (`SQLITE_DBCONFIG_ENABLE_QPSG`): a statement
/// keeps the plan it was prepared with whatever values are bound, instead of being prepared again for new values.
/// `sqlite3_db_config` is variadic, which Swift cannot call; this is the one call Verity needs. Returns SQLite's
/// result code.
int verity_sqlite_enable_query_planner_stability(void *connection);

#endif
