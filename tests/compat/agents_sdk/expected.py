"""Agents SDK session tests of SQLiteSession's own internals, which a ForgeSession wrapping it
does not expose (its connections, locks and rollback paths stay the wrapped store's, and are
tested there). The README's Agents SDK section lists the same."""

from __future__ import annotations

PRIVATE = (
    "reaches into SQLiteSession's private connection pool, locks or rollback paths "
    "(_locked_connection, _connections, _connections_lock, _lock), which the wrapper does not "
    "expose: the wrapped store keeps them"
)

EXPECTED: dict[str, str] = {
    name: PRIVATE
    for name in (
        "test_sqlite_session_close_closes_worker_thread_connections",
        "test_sqlite_session_reaps_connections_from_exited_worker_threads",
        "test_sqlite_session_closes_retired_connections_before_the_next_allocation",
        "test_sqlite_session_keeps_connections_of_live_worker_threads",
        "test_sqlite_session_pop_item_skips_corrupt_most_recent",
        "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows",
        "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows",
        "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows",
        "test_sqlite_session_file_lock_is_shared_across_instances",
        "test_sqlite_session_failed_clear_session_rolls_back",
        "test_sqlite_session_failed_pop_item_releases_write_lock",
        "test_sqlite_session_rollback_failure_evicts_connection",
        "test_sqlite_session_close_retries_quarantined_connection",
        "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome",
    )
}
