/* A run's states: the one list of them, in lifecycle order, and the one
 * test of whether a state is final. Migration 0001's CHECK on runs.state
 * names the same eight (tests/unit/test_core_run_state.c reads it). */
#ifndef TG_CORE_RUN_STATE_H
#define TG_CORE_RUN_STATE_H

#define TG_RUN_STATE_COUNT 8

/* The states in lifecycle order, NULL-terminated (TG_RUN_STATE_COUNT
 * names, then NULL). */
extern const char *const tg_run_states[TG_RUN_STATE_COUNT + 1];

/* 1 when a run in `state` has ended (Succeeded, Failed, Cancelled): nothing
 * more happens to it but sealing. 0 for any other state and for NULL. */
int tg_run_state_ended(const char *state);

#endif
