/* Refusal reasons: labels for metrics and WWW-Authenticate values. */
#include "auth/reason.h"

#include "core/mem.h"

#define WWW_INVALID(desc)                                                                          \
    "Bearer realm=\"taugate\", error=\"invalid_token\", error_description=\"" desc "\""

static const struct {
    const char *label;
    const char *www;
} reason_table[TG_AUTH_REASON_COUNT] = {
    [TG_AUTH_OK] = {"ok", "Bearer realm=\"taugate\""},
    [TG_AUTH_MISSING] = {"missing", "Bearer realm=\"taugate\""},
    [TG_AUTH_MALFORMED] = {"malformed", WWW_INVALID("The access token is malformed")},
    [TG_AUTH_TOO_LARGE] = {"too_large", WWW_INVALID("The access token is too large")},
    /* Key and signature problems share one description: telling a caller
     * which of them it got wrong only helps someone probing the verifier. */
    [TG_AUTH_ALG_NOT_ALLOWED] = {"alg_not_allowed",
                                 WWW_INVALID("The access token could not be verified")},
    [TG_AUTH_UNKNOWN_KEY] = {"unknown_key", WWW_INVALID("The access token could not be verified")},
    [TG_AUTH_BAD_SIGNATURE] = {"bad_signature",
                               WWW_INVALID("The access token could not be verified")},
    [TG_AUTH_EXPIRED] = {"expired", WWW_INVALID("The access token has expired")},
    [TG_AUTH_NOT_YET_VALID] = {"not_yet_valid", WWW_INVALID("The access token is not yet valid")},
    [TG_AUTH_WRONG_ISSUER] = {"wrong_issuer",
                              WWW_INVALID("The access token is not valid for this service")},
    [TG_AUTH_WRONG_AUDIENCE] = {"wrong_audience",
                                WWW_INVALID("The access token is not valid for this service")},
    [TG_AUTH_BAD_CLAIMS] = {"bad_claims", WWW_INVALID("The access token lacks required claims")},
    [TG_AUTH_LIFETIME] = {"lifetime",
                          WWW_INVALID("The access token lives longer than this service accepts")},
};

const char *tg_auth_reason_str(tg_auth_reason_e r)
{
    return (unsigned)r < TG_AUTH_REASON_COUNT ? reason_table[r].label : "unknown";
}

const char *tg_auth_www_authenticate(tg_auth_reason_e r)
{
    return (unsigned)r < TG_AUTH_REASON_COUNT ? reason_table[r].www
                                              : WWW_INVALID("The access token is invalid");
}
