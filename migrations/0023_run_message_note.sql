-- What a run's message is (store/lifecycle.c, store/nodes.c): the words of
-- the observer that saw its state, or a note (a node fault's, engine/
-- node_policy.h) that stays until the state changes. Another look at the
-- same state replaces the observer's words, never a note. Before this
-- column the note was told by its text.
ALTER TABLE runs ADD COLUMN message_is_note boolean NOT NULL DEFAULT false;

UPDATE runs SET message_is_note = true
 WHERE message LIKE 'node\_fault: %' AND state NOT IN ('Succeeded', 'Failed', 'Cancelled');
