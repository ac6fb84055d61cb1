#include "core/run_state.h"

#include <string.h>

const char *const tg_run_states[TG_RUN_STATE_COUNT + 1] = {"Accepted", "Queued",     "Admitted",
                                                           "Running",  "Recovering", "Succeeded",
                                                           "Failed",   "Cancelled",  NULL};

int tg_run_state_ended(const char *state)
{
    return state &&
           (!strcmp(state, "Succeeded") || !strcmp(state, "Failed") || !strcmp(state, "Cancelled"));
}
