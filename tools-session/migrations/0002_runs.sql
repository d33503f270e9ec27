-- The run going in a conversation, and the frames it streamed, for every
-- server that shares the store.
--
-- `run` and `lease_until` (milliseconds since the Unix epoch) are the
-- lease of the run that holds the conversation: while it lasts, only that
-- run appends, so a decision taken through two servers at once runs its
-- calls once. A run renews it as it goes; one whose server died lets it
-- lapse. `stop_asked` is a stop sent to any server, which the run reads
-- when it renews.
ALTER TABLE tools_conversations ADD COLUMN run TEXT;
ALTER TABLE tools_conversations ADD COLUMN lease_until BIGINT;
ALTER TABLE tools_conversations ADD COLUMN stop_asked BIGINT NOT NULL DEFAULT 0;

-- A run's frames (its SSE events as sent; `body` NULL: the end), numbered
-- from 0, so a page that reloads on another server reads the stream again.
-- The next run of the conversation drops them.
CREATE TABLE tools_frames (
    owner TEXT NOT NULL,
    conversation TEXT NOT NULL,
    run TEXT NOT NULL,
    seq BIGINT NOT NULL,
    body TEXT,
    PRIMARY KEY (owner, conversation, run, seq)
);
