"""LangChain tests of what ForgeCompactionMiddleware deliberately does differently, and why.

The README's LangChain section lists the same reasons. Everything else in
``test_summarization.py`` passes as it is.
"""

from __future__ import annotations

PRIVATE = "tests SummarizationMiddleware's private methods or attributes, which ours does not have"
SUMMARY_CALL = (
    "tests LangChain's own summary call (its model or summarizer, prompt, retries, trimming, "
    "errors, streaming, summary text): forge-compact's engine writes the summary without "
    "calling the chat model"
)
TOKEN_COUNTER = (
    "LangChain's own approximate counter (per-provider ratios, usage scaling); ours counts "
    "unless token_counter= is given"
)

EXPECTED: dict[str, str] = {
    "test_summarization_middleware_initialization": SUMMARY_CALL,
    "test_summarization_middleware_helper_methods": PRIVATE,
    "test_summarization_middleware_summary_creation": PRIVATE,
    "test_summarization_middleware_retries_transient_failure_in_call": SUMMARY_CALL,
    "test_create_summary_raises_on_failure": PRIVATE,
    "test_acreate_summary_raises_on_failure": PRIVATE,
    "test_create_summary_does_not_retry_non_retryable_errors": SUMMARY_CALL,
    "test_create_summary_recovers_from_context_overflow": PRIVATE,
    "test_acreate_summary_recovers_from_context_overflow": PRIVATE,
    "test_create_summary_raises_on_persistent_context_overflow": PRIVATE,
    "test_summarization_middleware_before_model_raises_on_summary_failure": SUMMARY_CALL,
    "test_summarization_middleware_abefore_model_raises_on_summary_failure": SUMMARY_CALL,
    "test_summarization_middleware_e2e_failure_raises_without_corrupting_history": SUMMARY_CALL,
    "test_summarization_middleware_trim_limit_none_keeps_all_messages": PRIVATE,
    # both pass every check but the last: the summary holds the chat model's own reply
    "test_summarization_middleware_full_workflow": SUMMARY_CALL,
    "test_summarization_middleware_full_workflow_async": SUMMARY_CALL,
    "test_summarization_middleware_profile_edge_cases": PRIVATE,
    "test_summarization_middleware_trim_messages_error_fallback": PRIVATE,
    "test_summarization_middleware_binary_search_edge_cases": PRIVATE,
    "test_summarization_middleware_find_safe_cutoff_point": PRIVATE,
    "test_summarization_middleware_find_safe_cutoff_point_orphan_tool": PRIVATE,
    "test_summarization_cutoff_moves_backward_to_include_ai_message": PRIVATE,
    "test_summarization_middleware_zero_and_negative_target_tokens": PRIVATE,
    "test_summarization_middleware_async_error_handling": PRIVATE,
    "test_summarization_middleware_cutoff_at_boundary": PRIVATE,
    "test_summarization_middleware_fraction_trigger_with_no_profile": PRIVATE,
    "test_summarization_adjust_token_counts": TOKEN_COUNTER,
    "test_summarization_middleware_many_parallel_tool_calls_safety": PRIVATE,
    "test_summarization_before_model_uses_unscaled_tokens_for_cutoff": TOKEN_COUNTER,
    "test_summarization_middleware_find_safe_cutoff_preserves_ai_tool_pair": PRIVATE,
    "test_summarization_middleware_cutoff_at_start_of_tool_sequence": PRIVATE,
    "test_trigger_clauses_are_canonical_representation": PRIVATE,
    "test_trigger_conditions_legacy_tuple_view_remove_in_2_0": PRIVATE,
    "test_compound_trigger_has_no_legacy_tuple_projection": PRIVATE,
    "test_empty_list_trigger_never_summarizes": PRIVATE,
    "test_reported_tokens_satisfy_tokens_within_and_clause": PRIVATE,
    "test_three_metric_and_clause": PRIVATE,
    "test_tokens_and_fraction_and_clause": PRIVATE,
    "test_reported_tokens_trigger_for_aliased_provider": PRIVATE,
    "test_reported_tokens_trigger_for_fraction": PRIVATE,
    "test_summary_call_stays_off_the_messages_stream": SUMMARY_CALL,
    "test_summarizer_replaces_model_call": SUMMARY_CALL,
    "test_summarizer_receives_trimmed_messages": SUMMARY_CALL,
    "test_summarizer_accepts_runnable_and_gets_summary_call_config": SUMMARY_CALL,
    "test_summarizer_async": SUMMARY_CALL,
    "test_summarizer_errors_propagate": SUMMARY_CALL,
    "test_summarizer_empty_history_skips_summarizer": SUMMARY_CALL,
    "test_chat_model_summarizer_uses_summary_prompt": SUMMARY_CALL,
    "test_chat_model_summarizer_async": SUMMARY_CALL,
    "test_chat_model_summarizer_keeps_profile_of_model": SUMMARY_CALL,
    "test_string_summarizer_is_resolved_with_init_chat_model": SUMMARY_CALL,
    "test_chat_model_summarizer_does_not_retry_non_retryable_errors": SUMMARY_CALL,
    "test_chat_model_summarizer_overflow_budget_uses_summarizer_profile": SUMMARY_CALL,
    "test_summarizer_non_str_return_raises_type_error": SUMMARY_CALL,
    "test_summarizer_non_str_return_raises_type_error_async": SUMMARY_CALL,
    "test_sync_summarizer_on_async_path": SUMMARY_CALL,
    "test_async_summarizer_on_sync_path_raises": SUMMARY_CALL,
    "test_create_summary_preserves_image_urls": SUMMARY_CALL,
    "test_create_summary_marks_its_call_internal": SUMMARY_CALL,
}
