/* SQLite (libsqlite3.so.0), linked on first use instead of at start-up (snoozefuse_lazy_link.h):
 * the store's first database opens it; `status`, `stop`, `snooze`, `add` and `--version` do not
 * (unless an ended nap waits to be written to the history; issue 23). GRDB calls these names; they resolve to the trampolines below, and the library itself
 * is left out of the program's needed libraries (link/libsqlite3.so, a linker script). */
#include <sqlite3.h>
#include "shim.h"

#define SNOOZEFUSE_LAZY_LIBRARY sqlite
#define SNOOZEFUSE_LAZY_SONAME "libsqlite3.so.0"
#define SNOOZEFUSE_LAZY_PACKAGE "libsqlite3-0"

/* Every function of it that GRDB and the store call (`nm -u` of their objects). */
#define SNOOZEFUSE_LAZY_FUNCTIONS(X) \
    X(sqlite3_aggregate_context) \
    X(sqlite3_backup_finish) \
    X(sqlite3_backup_init) \
    X(sqlite3_backup_pagecount) \
    X(sqlite3_backup_remaining) \
    X(sqlite3_backup_step) \
    X(sqlite3_bind_blob) \
    X(sqlite3_bind_double) \
    X(sqlite3_bind_int64) \
    X(sqlite3_bind_null) \
    X(sqlite3_bind_parameter_count) \
    X(sqlite3_bind_parameter_name) \
    X(sqlite3_bind_pointer) \
    X(sqlite3_bind_text) \
    X(sqlite3_busy_handler) \
    X(sqlite3_busy_timeout) \
    X(sqlite3_changes) \
    X(sqlite3_clear_bindings) \
    X(sqlite3_close) \
    X(sqlite3_close_v2) \
    X(sqlite3_column_blob) \
    X(sqlite3_column_bytes) \
    X(sqlite3_column_count) \
    X(sqlite3_column_double) \
    X(sqlite3_column_int64) \
    X(sqlite3_column_name) \
    X(sqlite3_column_text) \
    X(sqlite3_column_type) \
    X(sqlite3_commit_hook) \
    X(sqlite3_config) \
    X(sqlite3_create_collation_v2) \
    X(sqlite3_create_function_v2) \
    X(sqlite3_db_config) \
    X(sqlite3_db_handle) \
    X(sqlite3_db_release_memory) \
    X(sqlite3_errcode) \
    X(sqlite3_errmsg) \
    X(sqlite3_errstr) \
    X(sqlite3_expanded_sql) \
    X(sqlite3_extended_result_codes) \
    X(sqlite3_finalize) \
    X(sqlite3_free) \
    X(sqlite3_get_autocommit) \
    X(sqlite3_interrupt) \
    X(sqlite3_last_insert_rowid) \
    X(sqlite3_libversion_number) \
    X(sqlite3_limit) \
    X(sqlite3_next_stmt) \
    X(sqlite3_open_v2) \
    X(sqlite3_prepare_v2) \
    X(sqlite3_prepare_v3) \
    X(sqlite3_reset) \
    X(sqlite3_result_blob) \
    X(sqlite3_result_double) \
    X(sqlite3_result_error) \
    X(sqlite3_result_error_code) \
    X(sqlite3_result_int64) \
    X(sqlite3_result_null) \
    X(sqlite3_result_text) \
    X(sqlite3_rollback_hook) \
    X(sqlite3_set_authorizer) \
    X(sqlite3_sql) \
    X(sqlite3_step) \
    X(sqlite3_stmt_busy) \
    X(sqlite3_stmt_readonly) \
    X(sqlite3_stricmp) \
    X(sqlite3_total_changes) \
    X(sqlite3_trace_v2) \
    X(sqlite3_update_hook) \
    X(sqlite3_user_data) \
    X(sqlite3_value_blob) \
    X(sqlite3_value_bytes) \
    X(sqlite3_value_double) \
    X(sqlite3_value_int64) \
    X(sqlite3_value_text) \
    X(sqlite3_value_type) \
    X(sqlite3_wal_checkpoint_v2)

#include "snoozefuse_lazy_link.h"
