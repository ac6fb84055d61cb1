-- The large values (tau.yaml text, resolved config, manifests, submitted
-- files, log chunks, evidence records) are compressed with lz4 instead of
-- pglz: several times faster to write and read at a similar ratio, which is
-- what a submission spends most of its database time on. Rows written
-- earlier keep their pglz values; both are read transparently.
ALTER TABLE runs ALTER COLUMN spec_text SET COMPRESSION lz4,
                 ALTER COLUMN resolved SET COMPRESSION lz4,
                 ALTER COLUMN manifests SET COMPRESSION lz4;
ALTER TABLE run_files ALTER COLUMN content SET COMPRESSION lz4;
ALTER TABLE log_chunks ALTER COLUMN content SET COMPRESSION lz4;
ALTER TABLE evidence ALTER COLUMN record SET COMPRESSION lz4,
                     ALTER COLUMN canonical SET COMPRESSION lz4;
