-- The session store's schema, the same text for SQLite and PostgreSQL.
--
-- A conversation is a row keyed by (owner, id); its messages are rows of
-- their own, numbered from 0, never changed once written. `revision`
-- counts the appends: an append names the revision it follows, so two
-- runs on one conversation cannot interleave. `paused` is the turn a run
-- waits in for approval (JSON), written in the same transaction as the
-- messages before it. Records are JSON text, kept as written (the store
-- never queries into them), each with the format it was written in;
-- `written_by` is the tools-session version of the last append.
CREATE TABLE tools_conversations (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    revision BIGINT NOT NULL,
    message_count BIGINT NOT NULL,
    paused TEXT,
    paused_format BIGINT,
    written_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (owner, id)
);

CREATE INDEX tools_conversations_by_update ON tools_conversations (owner, updated_at);

CREATE TABLE tools_messages (
    owner TEXT NOT NULL,
    conversation TEXT NOT NULL,
    seq BIGINT NOT NULL,
    format BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (owner, conversation, seq),
    FOREIGN KEY (owner, conversation) REFERENCES tools_conversations (owner, id) ON DELETE CASCADE
);
