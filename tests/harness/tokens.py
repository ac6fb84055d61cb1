"""Minting test tokens: HS256 JWTs signed with the secret the test gateway is
configured with (stdlib only)."""
import base64
import hashlib
import hmac
import json
import time

ISSUER = "https://issuer.taugate.test"
AUDIENCE = "taugate"
SECRET = "test-secret-for-taugate-integration-0123456789"
ADMIN_GROUP = "platform-admins"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint(sub, groups=(), ttl=3600, secret=SECRET, alg="HS256", typ="JWT", **claims):
    now = int(time.time())
    # a string is sent as it is (a token that says groups is one string)
    payload = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + ttl,
               "groups": groups if isinstance(groups, str) else list(groups)}
    payload.update(claims)
    header = {"alg": alg, "typ": typ}
    signing = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(payload).encode())}"
    sig = hmac.new(secret.encode(), signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{b64url(sig)}"


def admin_token():
    return mint("platform-admin@example.com", groups=[ADMIN_GROUP])
