-- Replicas cache who may do what in a workspace and each workspace's
-- resolution context (store/tenancy_cache.c). Every change to the tables
-- behind those facts tells them on the taugate_tenancy channel, whoever made
-- it (the API of any replica, or an operator with psql); NOTIFY is sent on
-- commit, so a cache never hears of a change that was rolled back.
CREATE FUNCTION taugate_tenancy_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('taugate_tenancy', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;

CREATE TRIGGER workspaces_tenancy_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON workspaces
    FOR EACH STATEMENT EXECUTE FUNCTION taugate_tenancy_changed();
CREATE TRIGGER workspace_members_tenancy_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON workspace_members
    FOR EACH STATEMENT EXECUTE FUNCTION taugate_tenancy_changed();
CREATE TRIGGER compute_profiles_tenancy_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON compute_profiles
    FOR EACH STATEMENT EXECUTE FUNCTION taugate_tenancy_changed();
CREATE TRIGGER local_queues_tenancy_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON local_queues
    FOR EACH STATEMENT EXECUTE FUNCTION taugate_tenancy_changed();
CREATE TRIGGER priority_classes_tenancy_changed
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON priority_classes
    FOR EACH STATEMENT EXECUTE FUNCTION taugate_tenancy_changed();
