//! The store in a SQL database, SQLite or PostgreSQL: one schema, one set
//! of queries (sqlx's `Any` driver; `$1` parameters read the same in both),
//! migrated by the store when it opens.

use futures::future::BoxFuture;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::{AnyPool, Row};
use toolcall_agent::{Message, PausedTurn};

use crate::record::{self, FORMAT, WRITER};
use crate::store::now_ms;
use crate::{
    Append, Conversation, ConversationInfo, ConversationKey, Frame, Lease, Renewal, SessionStore, StoreError,
};

/// The schema's versions, oldest first: each is applied once, in order,
/// and recorded in `_sqlx_migrations`; a changed one is refused.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "conversations", include_str!("../migrations/0001_conversations.sql")),
    (2, "runs", include_str!("../migrations/0002_runs.sql")),
];

/// How many messages one insert writes (5 parameters each, well under
/// SQLite's 32,766 and PostgreSQL's 65,535).
const ROWS_PER_INSERT: usize = 500;

/// Conversations in a SQL database: [`SqlStore::sqlite`] (one file, the
/// embedded default) or [`SqlStore::postgres`] (for many servers).
///
/// The schema (`tools-session/migrations/`, one text for both) is created
/// or brought up to date when the store opens. An append is one
/// transaction that first moves the conversation's revision on (refused if
/// another append moved it first) and then writes the messages, so a
/// failure leaves the conversation as it was.
///
/// ```
/// use toolcall_agent::Message;
/// use toolcall_session::{Append, ConversationKey, SessionStore, SqlStore};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let store = SqlStore::sqlite(dir.path().join("chats.db")).await.unwrap();
/// let key = ConversationKey::new("alice", "trip");
/// let first = Append::new(0, vec![Message::user("Hi")]);
/// assert_eq!(store.append(&key, first.clone()).await.unwrap(), 1);
/// // A second run that started from the same revision is refused.
/// assert!(store.append(&key, first).await.is_err());
/// assert_eq!(store.load(&key).await.unwrap().unwrap().messages, [Message::user("Hi")]);
/// # });
/// ```
#[derive(Clone, Debug)]
pub struct SqlStore {
    pool: AnyPool,
}

impl SqlStore {
    /// The store in the SQLite file at `path`, created with its schema if
    /// it does not exist, in WAL mode (readers do not wait for a writer).
    ///
    /// # Errors
    ///
    /// [`StoreError::Open`], naming the path: the file cannot be created
    /// or opened, is not a database, or has a schema this version cannot
    /// migrate.
    #[cfg(feature = "sqlite")]
    pub async fn sqlite(path: impl AsRef<std::path::Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let at = path.display().to_string();
        // sqlx reads the path percent-decoded, up to a `?`.
        let escaped = at.replace('%', "%25").replace('?', "%3F").replace('#', "%23");
        let url = format!("sqlite://{escaped}?mode=rwc");
        let open = async {
            let pool = Self::connect(&url).await?;
            sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(pool)
        };
        Self::opened(open.await, at).await
    }

    /// The store in the PostgreSQL database at `url`
    /// (`postgres://user:password@host:port/database`), its schema
    /// migrated when it opens (in a lock, so servers starting together
    /// migrate once).
    ///
    /// # Errors
    ///
    /// [`StoreError::Open`], naming the URL without its password: the
    /// server cannot be reached, refuses the login, or has a schema this
    /// version cannot migrate.
    #[cfg(feature = "postgres")]
    pub async fn postgres(url: &str) -> Result<Self, StoreError> {
        let opened = Self::connect(url).await.map_err(Into::into);
        Self::opened(opened, without_password(url)).await
    }

    async fn connect(url: &str) -> Result<AnyPool, sqlx::Error> {
        sqlx::any::install_default_drivers();
        AnyPoolOptions::new().max_connections(8).connect(url).await
    }

    /// The store on `pool`, once its schema is up to date.
    async fn opened(
        pool: Result<AnyPool, Box<dyn std::error::Error + Send + Sync>>,
        at: String,
    ) -> Result<Self, StoreError> {
        let failed = |source| StoreError::Open { at: at.clone(), source };
        let pool = pool.map_err(failed)?;
        let migrator = Migrator::new(Embedded).await.map_err(|error| failed(Box::new(error)))?;
        migrator.run(&pool).await.map_err(|error| failed(Box::new(error)))?;
        Ok(Self { pool })
    }

    /// Close the pool's connections (they also close when the store is dropped).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// The migrations, embedded in the binary.
#[derive(Debug)]
struct Embedded;

impl MigrationSource<'static> for Embedded {
    fn resolve(self) -> BoxFuture<'static, Result<Vec<Migration>, sqlx::error::BoxDynError>> {
        Box::pin(async {
            Ok(MIGRATIONS
                .iter()
                .map(|&(version, description, sql)| {
                    Migration::new(version, description.into(), MigrationType::Simple, sql.into(), false)
                })
                .collect())
        })
    }
}

/// A URL as errors may show it: the password replaced.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let Some((credentials, host)) = rest.rsplit_once('@') else { return url.to_owned() };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

fn database(error: sqlx::Error) -> StoreError {
    StoreError::Database(Box::new(error))
}

/// A stored count as an SQL integer (a store never holds 2^63 of anything).
fn int(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

impl SqlStore {
    /// The conversation as of one revision: read, then checked that no
    /// append landed meanwhile (each query sees its own moment), else read
    /// again.
    async fn load_conversation(&self, key: &ConversationKey) -> Result<Option<Conversation>, StoreError> {
        let mut attempts = 0;
        loop {
            let loaded = self.load_once(key).await?;
            let now = self.revision(key).await?;
            attempts += 1;
            if now == loaded.as_ref().map(|conversation| conversation.revision) || attempts == 5 {
                return Ok(loaded);
            }
        }
    }

    async fn revision(&self, key: &ConversationKey) -> Result<Option<u64>, StoreError> {
        let row = sqlx::query("SELECT revision FROM tools_conversations WHERE owner = $1 AND id = $2")
            .bind(&key.owner)
            .bind(&key.id)
            .fetch_optional(&self.pool)
            .await
            .map_err(database)?;
        row.map(|row| row.try_get::<i64, _>(0).map(|revision| u64::try_from(revision).unwrap_or(0)))
            .transpose()
            .map_err(database)
    }

    async fn load_once(&self, key: &ConversationKey) -> Result<Option<Conversation>, StoreError> {
        let head = sqlx::query(
            "SELECT revision, message_count, paused, paused_format, written_by, run, lease_until, stop_asked \
             FROM tools_conversations WHERE owner = $1 AND id = $2",
        )
        .bind(&key.owner)
        .bind(&key.id)
        .fetch_optional(&self.pool)
        .await
        .map_err(database)?;
        let Some(head) = head else { return Ok(None) };
        let revision: i64 = head.try_get(0).map_err(database)?;
        let count: i64 = head.try_get(1).map_err(database)?;
        let paused: Option<String> = head.try_get(2).map_err(database)?;
        let paused_format: Option<i64> = head.try_get(3).map_err(database)?;
        let written_by: String = head.try_get(4).map_err(database)?;
        let run: Option<String> = head.try_get(5).map_err(database)?;
        let until: Option<i64> = head.try_get(6).map_err(database)?;
        let stop_asked = head.try_get::<i64, _>(7).map_err(database)? != 0;
        let lease = run.zip(until).map(|(run, until)| Lease { run, until });
        let rows = sqlx::query(
            "SELECT seq, format, body FROM tools_messages WHERE owner = $1 AND conversation = $2 AND seq < $3 \
             ORDER BY seq",
        )
        .bind(&key.owner)
        .bind(&key.id)
        .bind(count)
        .fetch_all(&self.pool)
        .await
        .map_err(database)?;
        let messages = rows
            .iter()
            .map(|row| read_message(key, row, &written_by))
            .collect::<Result<Vec<Message>, StoreError>>()?;
        let paused = match paused {
            Some(text) => Some(record::read::<PausedTurn>(
                key,
                || "the paused run".to_owned(),
                (paused_format.unwrap_or(FORMAT), &written_by),
                &text,
            )?),
            None => None,
        };
        let revision = u64::try_from(revision).unwrap_or(0);
        Ok(Some(Conversation { revision, messages, paused, lease, stop_asked }))
    }

    async fn append_to(&self, key: &ConversationKey, append: Append) -> Result<u64, StoreError> {
        key.check()?;
        let conflict = || StoreError::Conflict { key: key.clone(), after: append.after };
        let holder = append.hold.run().map(str::to_owned);
        let lease = append.hold.lease().cloned();
        let bodies = append.messages.iter().map(record::write).collect::<Result<Vec<_>, _>>()?;
        let paused = append.paused.as_ref().map(record::write).transpose()?;
        let paused_format = paused.as_ref().map(|_| FORMAT);
        let (now, added) = (now_ms(), int(bodies.len() as u64));
        let mut tx = self.pool.begin().await.map_err(database)?;
        // The revision moves first: the write takes the row (or the new
        // key) before anything else, so a second append waits, then finds
        // the revision moved and is refused.
        // A run's append also checks that no other run holds the
        // conversation, in the same statement: one of two runs that start
        // from the same revision moves it, and the other finds it moved.
        let sql = if append.after == 0 {
            "INSERT INTO tools_conversations (owner, id, revision, message_count, paused, paused_format, \
             written_by, created_at, updated_at, run, lease_until, stop_asked) \
             VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $7, $8, $9, 0) \
             ON CONFLICT (owner, id) DO NOTHING RETURNING message_count"
        } else {
            "UPDATE tools_conversations SET revision = revision + 1, \
             message_count = COALESCE(CAST($11 AS BIGINT), message_count) + $3, \
             paused = $4, paused_format = $5, written_by = $6, updated_at = $7, \
             stop_asked = CASE WHEN run = $8 THEN stop_asked ELSE 0 END, run = $8, lease_until = $9 \
             WHERE owner = $1 AND id = $2 AND revision = $10 \
             AND (run IS NULL OR lease_until <= $7 OR run = $12) RETURNING message_count"
        };
        let mut query = sqlx::query(sql)
            .bind(&key.owner)
            .bind(&key.id)
            .bind(added)
            .bind(paused)
            .bind(paused_format)
            .bind(WRITER)
            .bind(now)
            .bind(lease.as_ref().map(|lease| lease.run.clone()))
            .bind(lease.as_ref().map(|lease| lease.until));
        if append.after != 0 {
            query = query.bind(int(append.after)).bind(append.keep.map(int)).bind(holder);
        }
        let moved = query.fetch_optional(&mut *tx).await;
        let Some(moved) = moved.map_err(database)? else {
            drop(tx);
            return Err(self.refused(key, append.after, conflict()).await);
        };
        let count: i64 = moved.try_get(0).map_err(database)?;
        let first = count - added;
        if append.keep.is_some() {
            sqlx::query("DELETE FROM tools_messages WHERE owner = $1 AND conversation = $2 AND seq >= $3")
                .bind(&key.owner)
                .bind(&key.id)
                .bind(first)
                .execute(&mut *tx)
                .await
                .map_err(database)?;
        }
        for (chunk_index, chunk) in bodies.chunks(ROWS_PER_INSERT).enumerate() {
            let sql = format!(
                "INSERT INTO tools_messages (owner, conversation, seq, format, body) VALUES {}",
                rows_of_five(chunk.len())
            );
            let mut insert = sqlx::query(&sql);
            for (i, body) in chunk.iter().enumerate() {
                let seq = first + int((chunk_index * ROWS_PER_INSERT + i) as u64);
                insert = insert.bind(&key.owner).bind(&key.id).bind(seq).bind(FORMAT).bind(body.as_str());
            }
            insert.execute(&mut *tx).await.map_err(database)?;
        }
        tx.commit().await.map_err(database)?;
        Ok(append.after + 1)
    }

    /// Why an append moved nothing: another run holds the conversation,
    /// or `otherwise` (the revision moved).
    async fn refused(&self, key: &ConversationKey, after: u64, otherwise: StoreError) -> StoreError {
        // The row's revision while a live lease holds it; not its messages.
        let held = sqlx::query(
            "SELECT revision FROM tools_conversations WHERE owner = $1 AND id = $2 AND run IS NOT NULL \
             AND lease_until > $3",
        )
        .bind(&key.owner)
        .bind(&key.id)
        .bind(now_ms())
        .fetch_optional(&self.pool)
        .await;
        match held {
            Ok(Some(row)) if row.try_get::<i64, _>(0).ok() == Some(int(after)) => {
                StoreError::Busy { key: key.clone() }
            }
            _ => otherwise,
        }
    }

    async fn list_of(&self, owner: &str) -> Result<Vec<ConversationInfo>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, revision, message_count, CAST(CASE WHEN paused IS NULL THEN 0 ELSE 1 END AS BIGINT), \
             created_at, updated_at, CAST(CASE WHEN run IS NOT NULL AND lease_until > $2 THEN 1 ELSE 0 END AS \
             BIGINT) FROM tools_conversations WHERE owner = $1 ORDER BY updated_at DESC, id",
        )
        .bind(owner)
        .bind(now_ms())
        .fetch_all(&self.pool)
        .await
        .map_err(database)?;
        rows.iter().map(info).collect::<Result<_, sqlx::Error>>().map_err(database)
    }

    async fn delete_of(&self, key: &ConversationKey) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await.map_err(database)?;
        for sql in [
            "DELETE FROM tools_messages WHERE owner = $1 AND conversation = $2",
            "DELETE FROM tools_frames WHERE owner = $1 AND conversation = $2",
        ] {
            sqlx::query(sql).bind(&key.owner).bind(&key.id).execute(&mut *tx).await.map_err(database)?;
        }
        let deleted = sqlx::query("DELETE FROM tools_conversations WHERE owner = $1 AND id = $2")
            .bind(&key.owner)
            .bind(&key.id)
            .execute(&mut *tx)
            .await
            .map_err(database)?;
        tx.commit().await.map_err(database)?;
        Ok(deleted.rows_affected() > 0)
    }
}

impl SqlStore {
    async fn renew_of(&self, key: &ConversationKey, lease: &Lease) -> Result<Renewal, StoreError> {
        let row = sqlx::query(
            "UPDATE tools_conversations SET lease_until = $4 WHERE owner = $1 AND id = $2 AND run = $3 \
             RETURNING stop_asked",
        )
        .bind(&key.owner)
        .bind(&key.id)
        .bind(&lease.run)
        .bind(lease.until)
        .fetch_optional(&self.pool)
        .await
        .map_err(database)?;
        match row {
            Some(row) => Ok(Renewal::Held { stop: row.try_get::<i64, _>(0).map_err(database)? != 0 }),
            None => Ok(Renewal::Lost),
        }
    }

    async fn stop_of(&self, key: &ConversationKey) -> Result<bool, StoreError> {
        let asked = sqlx::query(
            "UPDATE tools_conversations SET stop_asked = 1 WHERE owner = $1 AND id = $2 AND run IS NOT NULL \
             AND lease_until > $3",
        )
        .bind(&key.owner)
        .bind(&key.id)
        .bind(now_ms())
        .execute(&self.pool)
        .await
        .map_err(database)?;
        Ok(asked.rows_affected() > 0)
    }

    async fn write_frames_of(
        &self,
        key: &ConversationKey,
        run: &str,
        first: u64,
        frames: Vec<Frame>,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.map_err(database)?;
        if first == 0 {
            sqlx::query("DELETE FROM tools_frames WHERE owner = $1 AND conversation = $2 AND run <> $3")
                .bind(&key.owner)
                .bind(&key.id)
                .bind(run)
                .execute(&mut *tx)
                .await
                .map_err(database)?;
        }
        for (chunk_index, chunk) in frames.chunks(ROWS_PER_INSERT).enumerate() {
            // A batch written again (a retry after a lost answer) is kept once.
            let sql = format!(
                "INSERT INTO tools_frames (owner, conversation, run, seq, body) VALUES {} \
                 ON CONFLICT (owner, conversation, run, seq) DO NOTHING",
                rows_of_five(chunk.len())
            );
            let mut insert = sqlx::query(&sql);
            for (i, frame) in chunk.iter().enumerate() {
                let seq = int(first + (chunk_index * ROWS_PER_INSERT + i) as u64);
                let body = match frame {
                    Frame::Data(text) => Some(text.as_str()),
                    Frame::End => None,
                };
                insert = insert.bind(&key.owner).bind(&key.id).bind(run).bind(seq).bind(body);
            }
            insert.execute(&mut *tx).await.map_err(database)?;
        }
        tx.commit().await.map_err(database)
    }

    async fn read_frames_of(
        &self,
        key: &ConversationKey,
        run: &str,
        from: u64,
    ) -> Result<Vec<Frame>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, body FROM tools_frames WHERE owner = $1 AND conversation = $2 AND run = $3 AND seq >= $4 \
             ORDER BY seq LIMIT 1000",
        )
        .bind(&key.owner)
        .bind(&key.id)
        .bind(run)
        .bind(int(from))
        .fetch_all(&self.pool)
        .await
        .map_err(database)?;
        let mut frames = Vec::with_capacity(rows.len());
        // Only the frames that follow on from `from`, none skipped.
        for (expected, row) in (from..).zip(&rows) {
            let seq: i64 = row.try_get(0).map_err(database)?;
            if seq != int(expected) {
                break;
            }
            let body: Option<String> = row.try_get(1).map_err(database)?;
            frames.push(body.map_or(Frame::End, Frame::Data));
        }
        Ok(frames)
    }
}

/// The `VALUES` of an insert of `rows` rows of five parameters each:
/// `($1, $2, $3, $4, $5), ($6, ...)`.
fn rows_of_five(rows: usize) -> String {
    let row = |i: usize| {
        format!("(${}, ${}, ${}, ${}, ${})", i * 5 + 1, i * 5 + 2, i * 5 + 3, i * 5 + 4, i * 5 + 5)
    };
    (0..rows).map(row).collect::<Vec<_>>().join(", ")
}

fn read_message(key: &ConversationKey, row: &AnyRow, written_by: &str) -> Result<Message, StoreError> {
    let seq: i64 = row.try_get(0).map_err(database)?;
    let format: i64 = row.try_get(1).map_err(database)?;
    let body: String = row.try_get(2).map_err(database)?;
    record::read(key, || format!("message {seq}"), (format, written_by), &body)
}

fn info(row: &AnyRow) -> Result<ConversationInfo, sqlx::Error> {
    let count = |index| row.try_get::<i64, _>(index).map(|value| u64::try_from(value).unwrap_or(0));
    Ok(ConversationInfo {
        id: row.try_get(0)?,
        revision: count(1)?,
        messages: count(2)?,
        paused: row.try_get::<i64, _>(3)? != 0,
        created_at: row.try_get(4)?,
        updated_at: row.try_get(5)?,
        running: row.try_get::<i64, _>(6)? != 0,
    })
}

impl SessionStore for SqlStore {
    fn load<'a>(
        &'a self,
        key: &'a ConversationKey,
    ) -> BoxFuture<'a, Result<Option<Conversation>, StoreError>> {
        Box::pin(self.load_conversation(key))
    }

    fn append<'a>(
        &'a self,
        key: &'a ConversationKey,
        append: Append,
    ) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(self.append_to(key, append))
    }

    fn list<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, Result<Vec<ConversationInfo>, StoreError>> {
        Box::pin(self.list_of(owner))
    }

    fn delete<'a>(&'a self, key: &'a ConversationKey) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.delete_of(key))
    }

    fn renew<'a>(
        &'a self,
        key: &'a ConversationKey,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<Renewal, StoreError>> {
        Box::pin(self.renew_of(key, lease))
    }

    fn stop<'a>(&'a self, key: &'a ConversationKey) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.stop_of(key))
    }

    fn write_frames<'a>(
        &'a self,
        key: &'a ConversationKey,
        run: &'a str,
        first: u64,
        frames: Vec<Frame>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.write_frames_of(key, run, first, frames))
    }

    fn read_frames<'a>(
        &'a self,
        key: &'a ConversationKey,
        run: &'a str,
        from: u64,
    ) -> BoxFuture<'a, Result<Vec<Frame>, StoreError>> {
        Box::pin(self.read_frames_of(key, run, from))
    }
}
