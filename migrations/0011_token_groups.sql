-- What a personal access token's minter held besides direct membership:
-- the groups of the identity token it was minted with, and whether it was a
-- platform admin. At use the token's role is re-derived from its subject and
-- these groups, so removing the membership (of the user or of the group)
-- stops the token; a platform admin's standing is as of mint time, bounded
-- by the token's expiry and its revocation. Tokens minted before this
-- migration carry neither and keep working through direct membership only.
ALTER TABLE api_tokens ADD COLUMN minter_groups text[] NOT NULL DEFAULT '{}',
                       ADD COLUMN minter_admin boolean NOT NULL DEFAULT false;
